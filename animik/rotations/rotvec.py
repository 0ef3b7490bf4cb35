"""Rotation vectors (axis * angle, radians; the SO(3) logarithm) and the SO(3) Jacobian."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from .axis_angle import matrix_from_axis_angle
from .matrix import cross_product_matrix
from .quaternion import quat_from_matrix


def rotvec_from_matrix(r: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` to rotation vectors ``(..., 3)``.

    Stable near 0 and pi (goes through the quaternion).
    """
    q = quat_from_matrix(r)
    w = np.clip(q[..., 0], -1.0, 1.0)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1)
    angle = 2.0 * np.arctan2(s, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0 / np.maximum(w, 1e-12))
    return v * scale[..., None]


def matrix_from_rotvec(v: np.ndarray) -> np.ndarray:
    """Rotation vectors ``(..., 3)`` to matrices ``(..., 3, 3)``.

    Raises:
        ShapeError: not ``(..., 3)``.
    """
    v = np.asarray(v, dtype=float)
    if v.ndim < 1 or v.shape[-1] != 3:
        raise ShapeError(f"rotation vectors must have shape (..., 3), got {v.shape}")
    angle = np.linalg.norm(v, axis=-1)
    axis = np.where(angle[..., None] > 1e-15, v / np.maximum(angle, 1e-300)[..., None], [1.0, 0, 0])
    return matrix_from_axis_angle(axis, angle)


def inverse_right_jacobian(v: np.ndarray) -> np.ndarray:
    """Inverse right Jacobian of SO(3) at rotation vectors ``v (..., 3)``: ``(..., 3, 3)``.

    If ``R(t) = R_0 exp(v(t))`` then the body angular velocity is ``J_r(v) v'``, so
    ``v' = J_r(v)⁻¹ ω``.
    """
    th = np.linalg.norm(v, axis=-1)
    k = cross_product_matrix(v)
    small = th < 1e-4
    ths = np.where(small, 1.0, th)
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = 1.0 / ths**2 - (1.0 + np.cos(ths)) / (2.0 * ths * np.sin(ths))
    coef = np.where(small, 1.0 / 12.0 + th**2 / 720.0, coef)
    return np.eye(3) + 0.5 * k + coef[..., None, None] * (k @ k)


__all__ = ["inverse_right_jacobian", "matrix_from_rotvec", "rotvec_from_matrix"]
