"""Rigid-body dynamics on animik skeletons (numeric core, no GL): inverse dynamics, mass matrix,
centre of mass and momentum, contacts, zero-moment point and seed D's feasibility checks."""

from .clip import ClipFeasibility, ClipStates, check_clip, clip_states, detect_clip_contacts
from .contacts import ContactGeometryError, ContactModel, contact_model
from .correct import CorrectionResult, correct_clip
from .inverse import (
    GRAVITY,
    InverseDynamics,
    Momentum,
    bias_forces,
    centroidal_momentum,
    com,
    com_velocity,
    inverse_dynamics,
    mass_matrix,
    momentum,
    rnea,
)
from .model import with_model_of
from .opspace import inverse_inertia, point_jacobian
from .zmp import ContactCheck, FeasibilityError, check_contacts, support_polygon, zmp

__all__ = [
    "ClipFeasibility", "ClipStates", "ContactCheck", "ContactGeometryError", "ContactModel",
    "FeasibilityError", "check_clip", "check_contacts", "clip_states", "contact_model",
    "detect_clip_contacts", "support_polygon", "zmp",
    "GRAVITY", "InverseDynamics", "Momentum", "bias_forces", "centroidal_momentum", "com",
    "com_velocity", "inverse_dynamics", "mass_matrix", "momentum", "rnea",
    "CorrectionResult", "correct_clip", "inverse_inertia", "point_jacobian", "with_model_of",
]
