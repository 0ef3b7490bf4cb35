"""animik: pose and animate articulated characters with variable-step feedback IK.

The numeric core (this package minus :mod:`animik.app`) never imports pyglet, moderngl or
imgui_bundle.
"""

from __future__ import annotations

from ._version import __version__
from .character import Character, Material, SkinnedMesh
from .errors import (
    AnimikError,
    BVHParseError,
    FileFormatError,
    OptionError,
    RigNotFoundError,
    ShapeError,
    SkeletonError,
    UnknownNameError,
    ValueRangeError,
)
from .ik import IKResult, solve_ik
from .io.bvh import read_bvh, write_bvh
from .io.mjcf import mjcf_string, write_mjcf
from .io.robot_qpos import q_from_qpos, qpos_from_q
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
from .rigs import (
    RigSource,
    list_rigs,
    load_character,
    load_rig,
    register_rig_reader,
    resolve_rig,
)
from .scene import Scene, load_scene, save_scene
from .skeleton import Dof, Joint, Site, Skeleton

__all__ = [
    "AnimikError", "BVHParseError", "FileFormatError", "OptionError", "ValueRangeError",
    "RigNotFoundError", "ShapeError", "SkeletonError", "UnknownNameError",
    "read_bvh", "write_bvh", "write_mjcf", "write_urdf", "mjcf_string", "urdf_string",
    "FKResult", "Kinematics", "forward_kinematics", "joint_positions", "site_jacobian",
    "site_jacobians", "site_poses", "site_positions", "stacked_jacobian", "Motion",
    "list_rigs", "load_rig", "load_character", "Character", "SkinnedMesh", "Material",
    "resolve_rig", "register_rig_reader", "RigSource",
    "Dof", "Joint", "Site", "Skeleton", "__version__", "IKResult",
    "solve_ik", "Scene", "load_scene", "save_scene", "retarget", "qpos_from_q", "q_from_qpos",
]
