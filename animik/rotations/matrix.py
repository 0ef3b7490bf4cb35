"""Rotation matrices ``(..., 3, 3)``: validation, the nearest rotation, cross-product matrices.

A rotation matrix acts on column vectors: ``v_world = world_from_local @ v_local``.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, ValueRangeError


def check_matrix(r: object, name: str = "rotation", tolerance: float = 1e-6) -> np.ndarray:
    """``r`` as a float array of rotation matrices, or a clear error.

    Args:
        r: ``(..., 3, 3)`` array-like.
        name: the argument's name, for the message.
        tolerance: largest allowed ``|Rᵀ R - I|`` entry.

    Returns:
        ``(..., 3, 3)`` float64 array (a copy only when conversion needs one).

    Raises:
        ShapeError: not numbers of shape ``(..., 3, 3)``.
        ValueRangeError: NaN / infinite entries, not orthonormal, or a reflection (det -1).
    """
    try:
        a = np.asarray(r, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be an array of numbers of shape (..., 3, 3), got {r!r}") from None
    if a.ndim < 2 or a.shape[-2:] != (3, 3):
        raise ShapeError(f"{name} must have shape (..., 3, 3), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueRangeError(f"{name} contains NaN or infinite values")
    err = np.abs(np.swapaxes(a, -1, -2) @ a - np.eye(3)).max(initial=0.0)
    if err > tolerance:
        raise ValueRangeError(f"{name} is not orthonormal: |RᵀR - I| = {err:.3g} > {tolerance:g}")
    if a.size and np.min(np.linalg.det(a)) < 0:
        raise ValueRangeError(f"{name} is a reflection (determinant -1), not a rotation")
    return a


def cross_product_matrix(v: np.ndarray) -> np.ndarray:
    """``[v]×`` of vectors ``(..., 3)``: ``(..., 3, 3)`` with ``[v]× w = v × w``."""
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1] = -v[..., 2]
    out[..., 0, 2] = v[..., 1]
    out[..., 1, 0] = v[..., 2]
    out[..., 1, 2] = -v[..., 0]
    out[..., 2, 0] = -v[..., 1]
    out[..., 2, 1] = v[..., 0]
    return out


__all__ = ["check_matrix", "cross_product_matrix"]
