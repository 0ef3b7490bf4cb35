"""Batched rotation helpers, one representation per module (after pytransform3d's rotations/).

* :mod:`.matrix` — rotation matrices: :func:`check_matrix`, :func:`cross_product_matrix`.
* :mod:`.axis_angle` — axis + angle: general, one fixed axis (hot path), principal axes, chains.
* :mod:`.quaternion` — unit quaternions ``wxyz``; ``xyzw`` only through named conversions.
* :mod:`.rotvec` — rotation vectors (SO(3) log / exp) and the SO(3) right Jacobian.
* :mod:`.euler` — intrinsic Euler angles (BVH channel orders) and URDF roll-pitch-yaw.

Conventions: matrices act on column vectors (``v_world = world_from_local @ v_local``);
names say what they return from what (``matrix_from_quat``); every function accepts leading
batch dimensions. ``check_*`` functions validate user input and raise :class:`ShapeError` for a
wrong shape, :class:`ValueRangeError` for NaN, zero quaternions or non-rotations and
:class:`OptionError` for a bad axis letter or Euler order (all :class:`~animik.AnimikError`);
the other functions are the fast paths and check only what would otherwise give silent NaN or a
bare NumPy error.

The names of the single-module version stay importable (``quat_to_matrix`` is
:func:`matrix_from_quat`, ``matrix_to_euler`` is :func:`euler_from_matrix`, ...).
"""

from __future__ import annotations

from .axis_angle import (
    AXES,
    check_axis_letter,
    matrix_from_axis_angle,
    matrix_from_axis_chain,
    matrix_from_fixed_axis,
    matrix_from_principal_axis,
)
from .euler import check_euler_order, euler_from_matrix, matrix_from_euler, rpy_from_matrix
from .matrix import check_matrix, cross_product_matrix
from .quaternion import (
    check_quat,
    continuous_quats,
    matrix_from_quat,
    quat_from_matrix,
    quat_slerp,
    wxyz_from_xyzw,
    xyzw_from_wxyz,
)
from .rotvec import inverse_right_jacobian, matrix_from_rotvec, rotvec_from_matrix

# The names of animik <= 0.1's rotations.py (source_to_target), kept for existing code.
axis_angle_to_matrix = matrix_from_axis_angle
axis_matrix = matrix_from_principal_axis
euler_to_matrix = matrix_from_euler
matrix_to_euler = euler_from_matrix
matrix_to_quat = quat_from_matrix
quat_to_matrix = matrix_from_quat
matrix_to_rotvec = rotvec_from_matrix
rotvec_to_matrix = matrix_from_rotvec

__all__ = [
    "AXES", "check_axis_letter", "check_euler_order", "check_matrix", "check_quat",
    "continuous_quats", "cross_product_matrix", "euler_from_matrix", "inverse_right_jacobian",
    "matrix_from_axis_angle", "matrix_from_axis_chain", "matrix_from_euler",
    "matrix_from_fixed_axis", "matrix_from_principal_axis", "matrix_from_quat",
    "matrix_from_rotvec", "quat_from_matrix", "quat_slerp", "rotvec_from_matrix",
    "rpy_from_matrix", "wxyz_from_xyzw", "xyzw_from_wxyz",
    # legacy names
    "axis_angle_to_matrix", "axis_matrix", "euler_to_matrix", "matrix_to_euler",
    "matrix_to_quat", "matrix_to_rotvec", "quat_to_matrix", "rotvec_to_matrix",
]
