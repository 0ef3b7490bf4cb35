"""Intrinsic Euler angles (radians) in any Tait–Bryan order, as BVH channels compose them, and
URDF roll-pitch-yaw."""

from __future__ import annotations

import numpy as np

from ..errors import OptionError, ShapeError
from .axis_angle import AXES, matrix_from_principal_axis


def check_euler_order(order: object) -> str:
    """A Tait–Bryan order, lower case: a permutation of ``"xyz"`` (e.g. ``"zxy"``).

    Raises:
        OptionError: anything else (repeated axes, other letters, not a string).
    """
    if not isinstance(order, str) or len(order) != 3 or set(order.lower()) != set("xyz"):
        raise OptionError(f"Euler order must be a permutation of 'xyz' (e.g. 'zxy'), got {order!r}")
    return order.lower()


def matrix_from_euler(angles: np.ndarray, order: str) -> np.ndarray:
    """Intrinsic Euler angles to matrices.

    ``order='zxy'`` means ``R = Rz(a0) @ Rx(a1) @ Ry(a2)`` (rotate about z first in the parent
    frame, then about the new x, then the new y). Any sequence of axis letters is accepted
    (one or two angles, or proper Euler orders such as ``"zxz"``).

    Args:
        angles: radians, shape ``(..., len(order))``.
        order: string of axis letters, e.g. ``"zxy"``.

    Returns:
        shape ``(..., 3, 3)``.

    Raises:
        OptionError: a letter other than x, y, z. ShapeError: ``angles`` does not end in
        ``len(order)``.
    """
    angles = np.asarray(angles, dtype=float)
    if angles.ndim < 1 or angles.shape[-1] != len(order):
        raise ShapeError(f"angles must have shape (..., {len(order)}) for order {order!r}, "
                         f"got {angles.shape}")
    r = np.broadcast_to(np.eye(3), angles.shape[:-1] + (3, 3)).copy()
    for i, ax in enumerate(order.lower()):
        r = r @ matrix_from_principal_axis(ax, angles[..., i])
    return r


def euler_from_matrix(r: np.ndarray, order: str) -> np.ndarray:
    """Inverse of :func:`matrix_from_euler` for a three-letter Tait–Bryan order.

    Returns angles with the middle angle in ``[-pi/2, pi/2]``; shape ``(..., 3)``. At gimbal
    lock the first angle takes the whole rotation about the locked axis.

    Raises:
        OptionError: ``order`` is not a permutation of ``"xyz"``. ShapeError: not ``(..., 3, 3)``.
    """
    order = check_euler_order(order)
    r = np.asarray(r, dtype=float)
    if r.ndim < 2 or r.shape[-2:] != (3, 3):
        raise ShapeError(f"rotation must have shape (..., 3, 3), got {r.shape}")
    i, j, k = (AXES[a] for a in order)
    # parity of the permutation (i, j, k)
    sign = 1.0 if (j - i) % 3 == 1 else -1.0
    # atan2 with hypot keeps full precision near gimbal lock, where arcsin loses half the digits.
    b = np.arctan2(sign * r[..., i, k], np.hypot(r[..., i, i], r[..., i, j]))
    a = np.arctan2(-sign * r[..., j, k], r[..., k, k])
    c = np.arctan2(-sign * r[..., i, j], r[..., i, i])
    # Gimbal lock: put everything into the first angle.
    lock = np.hypot(r[..., i, i], r[..., i, j]) < 1e-12
    if np.any(lock):
        a = np.where(lock, np.arctan2(sign * r[..., k, j], r[..., j, j]), a)
        c = np.where(lock, 0.0, c)
    return np.stack([a, b, c], axis=-1)


def rpy_from_matrix(r: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw (``R = Rz(yaw) Ry(pitch) Rx(roll)``) of matrices ``(..., 3, 3)``.

    Returns ``(..., 3)`` as ``(roll, pitch, yaw)``.
    """
    zyx = euler_from_matrix(r, "zyx")
    return zyx[..., ::-1]


__all__ = ["check_euler_order", "euler_from_matrix", "matrix_from_euler", "rpy_from_matrix"]
