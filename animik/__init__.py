"""animik: pose and animate articulated characters with variable-step feedback IK.

The numeric core (this package minus :mod:`animik.app`) never imports pyglet, moderngl or
imgui_bundle.
"""

from __future__ import annotations

from .errors import (
    AnimikError,
    BVHParseError,
    FileFormatError,
    RigNotFoundError,
    ShapeError,
    SkeletonError,
    UnknownNameError,
)
from .ik import IKResult, solve_ik
from .io.bvh import read_bvh, write_bvh
from .io.mjcf import mjcf_string, write_mjcf
from .io.scene import Scene, load_scene, save_scene
from .io.urdf import urdf_string, write_urdf
from .kinematics import (
    FKResult,
    Kinematics,
    forward_kinematics,
    joint_positions,
    site_jacobian,
    site_jacobians,
    site_poses,
    site_positions,
    stacked_jacobian,
)
from .motion import Motion
from .retarget import retarget
from .rigs import list_rigs, load_rig
from .skeleton import Dof, Joint, Site, Skeleton

__version__ = "0.1.0"

__all__ = [
    "AnimikError", "BVHParseError", "FileFormatError", "RigNotFoundError", "ShapeError",
    "SkeletonError", "UnknownNameError", "read_bvh", "write_bvh", "write_mjcf", "write_urdf",
    "mjcf_string", "urdf_string",
    "FKResult", "Kinematics", "forward_kinematics", "joint_positions", "site_jacobian",
    "site_jacobians", "site_poses", "site_positions", "stacked_jacobian", "Motion",
    "list_rigs", "load_rig", "Dof", "Joint", "Site", "Skeleton", "__version__", "IKResult",
    "solve_ik", "Scene", "load_scene", "save_scene", "retarget",
]
