"""Rigid-body dynamics on animik skeletons (numeric core, no GL): inverse dynamics, mass matrix,
centre of mass and momentum, contacts, zero-moment point and seed D's feasibility checks."""

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

__all__ = [
    "GRAVITY", "InverseDynamics", "Momentum", "bias_forces", "centroidal_momentum", "com",
    "com_velocity", "inverse_dynamics", "mass_matrix", "momentum", "rnea",
]
