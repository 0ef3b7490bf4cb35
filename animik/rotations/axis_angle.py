"""Rotations about an axis by an angle (radians): general axes, one fixed axis, principal axes."""

from __future__ import annotations

import numpy as np

from ..errors import OptionError, ShapeError

#: Index of each principal axis letter.
AXES = {"x": 0, "y": 1, "z": 2}


def check_axis_letter(axis: object) -> int:
    """Index ``0, 1, 2`` of a principal axis ``"x" "y" "z"`` (any case).

    Raises:
        OptionError: anything else.
    """
    if not isinstance(axis, str) or axis.lower() not in AXES:
        raise OptionError(f"axis must be one of 'x', 'y', 'z', got {axis!r}")
    return AXES[axis.lower()]


def matrix_from_axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues' formula for unit axes (not checked: the fast path).

    Args:
        axis: unit axes, shape ``(..., 3)``.
        angle: angles in radians, shape ``(...)`` broadcastable with ``axis[..., 0]``.

    Returns:
        Rotation matrices, shape ``(..., 3, 3)``.

    Raises:
        ShapeError: ``axis`` does not end in 3, or the shapes do not broadcast.
    """
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)
    if axis.ndim < 1 or axis.shape[-1] != 3:
        raise ShapeError(f"axis must have shape (..., 3), got {axis.shape}")
    try:
        shape = np.broadcast_shapes(axis.shape[:-1], angle.shape)
    except ValueError:
        raise ShapeError(f"axis {axis.shape} and angle {angle.shape} do not broadcast") from None
    axis = np.broadcast_to(axis, shape + (3,))
    angle = np.broadcast_to(angle, shape)
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    out = np.empty(shape + (3, 3))
    out[..., 0, 0] = t * x * x + c
    out[..., 0, 1] = t * x * y - s * z
    out[..., 0, 2] = t * x * z + s * y
    out[..., 1, 0] = t * x * y + s * z
    out[..., 1, 1] = t * y * y + c
    out[..., 1, 2] = t * y * z - s * x
    out[..., 2, 0] = t * x * z - s * y
    out[..., 2, 1] = t * y * z + s * x
    out[..., 2, 2] = t * z * z + c
    return out


def matrix_from_fixed_axis(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotations about ONE unit axis ``(3,)`` by angles ``(...)``: ``(..., 3, 3)``.

    Rodrigues' formula with the axis-dependent parts computed once: the hot path of the joint
    decompositions (:mod:`animik.joints`); :func:`matrix_from_axis_angle` broadcasts axes.
    """
    c = np.cos(angle)[..., None, None]
    s = np.sin(angle)[..., None, None]
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    uu = np.outer(axis, axis)
    return uu + c * (np.eye(3) - uu) + s * k


def matrix_from_principal_axis(axis: str, angle: np.ndarray) -> np.ndarray:
    """Rotation about a principal axis ``'x'``, ``'y'`` or ``'z'``; shape ``(..., 3, 3)``.

    Raises:
        OptionError: ``axis`` is not one of the three letters.
    """
    e = np.zeros(3)
    e[check_axis_letter(axis)] = 1.0
    return matrix_from_axis_angle(e, angle)


def matrix_from_axis_chain(axes: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """``rot(axes[0], angles[..., 0]) @ rot(axes[1], angles[..., 1]) @ ...``.

    Args:
        axes: ``(k, 3)`` unit axes.
        angles: ``(..., k)`` radians.

    Returns:
        ``(..., 3, 3)``.
    """
    angles = np.asarray(angles, dtype=float)
    out = np.broadcast_to(np.eye(3), angles.shape[:-1] + (3, 3)).copy()
    for i in range(axes.shape[0]):
        out = out @ matrix_from_axis_angle(axes[i], angles[..., i])
    return out


__all__ = ["AXES", "check_axis_letter", "matrix_from_axis_angle", "matrix_from_axis_chain",
           "matrix_from_fixed_axis", "matrix_from_principal_axis"]
