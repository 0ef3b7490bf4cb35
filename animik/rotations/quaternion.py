"""Unit quaternions, scalar first (``wxyz``); ``xyzw`` (glTF, scipy) only through the named
conversions :func:`xyzw_from_wxyz` / :func:`wxyz_from_xyzw` at an IO boundary."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, ValueRangeError


def check_quat(q: object, name: str = "quaternion") -> np.ndarray:
    """``q`` as unit quaternions ``wxyz`` ``(..., 4)`` (normalised), or a clear error.

    Raises:
        ShapeError: not numbers of shape ``(..., 4)``.
        ValueRangeError: NaN / infinite entries, or a zero quaternion (no rotation to normalise).
    """
    try:
        a = np.asarray(q, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be an array of numbers of shape (..., 4), got {q!r}") from None
    if a.ndim < 1 or a.shape[-1] != 4:
        raise ShapeError(f"{name} must have shape (..., 4) (w, x, y, z), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueRangeError(f"{name} contains NaN or infinite values")
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    if np.any(n < 1e-12):
        raise ValueRangeError(f"{name} has zero length: a rotation needs a non-zero quaternion")
    return a / n


def matrix_from_quat(q: np.ndarray) -> np.ndarray:
    """Quaternions ``wxyz`` ``(..., 4)`` (normalised here) to matrices ``(..., 3, 3)``.

    Raises:
        ShapeError, ValueRangeError: see :func:`check_quat` (a zero quaternion used to give NaN).
    """
    q = check_quat(q)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1 - 2 * (y * y + z * z)
    out[..., 0, 1] = 2 * (x * y - w * z)
    out[..., 0, 2] = 2 * (x * z + w * y)
    out[..., 1, 0] = 2 * (x * y + w * z)
    out[..., 1, 1] = 1 - 2 * (x * x + z * z)
    out[..., 1, 2] = 2 * (y * z - w * x)
    out[..., 2, 0] = 2 * (x * z - w * y)
    out[..., 2, 1] = 2 * (y * z + w * x)
    out[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def quat_from_matrix(r: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` to unit quaternions ``wxyz`` ``(..., 4)``, w >= 0.

    Shepperd's method: divide by the largest of the four candidate components, so the result
    keeps full precision near the identity and near half turns.

    Raises:
        ShapeError: not ``(..., 3, 3)``.
    """
    r = np.asarray(r, dtype=float)
    if r.ndim < 2 or r.shape[-2:] != (3, 3):
        raise ShapeError(f"rotation must have shape (..., 3, 3), got {r.shape}")
    m = r.reshape(-1, 3, 3)
    tr = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    cand = np.stack([tr, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], axis=-1)
    best = np.argmax(cand, axis=-1)
    q = np.empty((m.shape[0], 4))
    for case in range(4):
        sel = best == case
        if not np.any(sel):
            continue
        a = m[sel]
        if case == 0:
            s = 2.0 * np.sqrt(1.0 + cand[sel, 0])
            q[sel] = np.stack([0.25 * s, (a[:, 2, 1] - a[:, 1, 2]) / s,
                               (a[:, 0, 2] - a[:, 2, 0]) / s, (a[:, 1, 0] - a[:, 0, 1]) / s], -1)
        else:
            i = case - 1
            j, k = (i + 1) % 3, (i + 2) % 3
            s = 2.0 * np.sqrt(np.maximum(1.0 + a[:, i, i] - a[:, j, j] - a[:, k, k], 1e-300))
            out = np.empty((a.shape[0], 4))
            out[:, 0] = (a[:, k, j] - a[:, j, k]) / s
            out[:, 1 + i] = 0.25 * s
            out[:, 1 + j] = (a[:, j, i] + a[:, i, j]) / s
            out[:, 1 + k] = (a[:, k, i] + a[:, i, k]) / s
            q[sel] = out
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q.reshape(r.shape[:-2] + (4,))


def xyzw_from_wxyz(q: np.ndarray) -> np.ndarray:
    """Scalar-last quaternions (glTF, scipy) from scalar-first ones; ``(..., 4)``."""
    q = np.asarray(q, dtype=float)
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def wxyz_from_xyzw(q: np.ndarray) -> np.ndarray:
    """Scalar-first quaternions from scalar-last ones (glTF, scipy); ``(..., 4)``."""
    q = np.asarray(q, dtype=float)
    return np.concatenate([q[..., 3:], q[..., :3]], axis=-1)


def continuous_quats(q: np.ndarray) -> np.ndarray:
    """Quaternions ``(T, 4)`` (any component order) with signs flipped so that consecutive ones
    are in the same hemisphere (``q`` and ``-q`` are the same rotation; animation samplers
    interpolate componentwise and would take the long way round)."""
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[0] < 2:
        return q
    flip = np.einsum("ti,ti->t", q[1:], q[:-1]) < 0
    sign = np.cumprod(np.concatenate([[1.0], np.where(flip, -1.0, 1.0)]))
    return q * sign[:, None]


def quat_slerp(a: np.ndarray, b: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions ``(T, 4)`` at fractions ``u (T,)``,
    the short way (any component order, as long as ``a`` and ``b`` share it)."""
    dot = np.einsum("ti,ti->t", a, b)
    b = np.where(dot[:, None] < 0, -b, b)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    small = theta < 1e-8
    s = np.where(small, 1.0, np.sin(theta))
    wa = np.where(small, 1.0 - u, np.sin((1.0 - u) * theta) / s)
    wb = np.where(small, u, np.sin(u * theta) / s)
    out = wa[:, None] * a + wb[:, None] * b
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


__all__ = ["check_quat", "continuous_quats", "matrix_from_quat", "quat_from_matrix", "quat_slerp",
           "wxyz_from_xyzw", "xyzw_from_wxyz"]
