"""Batched rotation helpers.

Conventions: rotation matrices act on column vectors (``v_world = world_from_local @ v_local``);
quaternions are scalar-first ``wxyz``; rotation vectors are axis * angle (radians). Every
function accepts leading batch dimensions.
"""

from __future__ import annotations

import numpy as np

_AXES = {"x": 0, "y": 1, "z": 2}


def axis_angle_to_matrix(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues' formula.

    Args:
        axis: unit axes, shape ``(..., 3)``.
        angle: angles in radians, shape ``(...)`` broadcastable with ``axis[..., 0]``.

    Returns:
        Rotation matrices, shape ``(..., 3, 3)``.
    """
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)
    shape = np.broadcast_shapes(axis.shape[:-1], angle.shape)
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


def axis_matrix(axis: str, angle: np.ndarray) -> np.ndarray:
    """Rotation about a principal axis ``'x'``, ``'y'`` or ``'z'``; shape ``(..., 3, 3)``."""
    e = np.zeros(3)
    e[_AXES[axis]] = 1.0
    return axis_angle_to_matrix(e, angle)


def euler_to_matrix(angles: np.ndarray, order: str) -> np.ndarray:
    """Intrinsic Euler angles to matrices, as BVH channels compose them.

    ``order='zxy'`` means ``R = Rz(a0) @ Rx(a1) @ Ry(a2)`` (rotate about z first in the parent
    frame, then about the new x, then the new y).

    Args:
        angles: radians, shape ``(..., len(order))``.
        order: string of axis letters, e.g. ``"zxy"``.

    Returns:
        shape ``(..., 3, 3)``.
    """
    angles = np.asarray(angles, dtype=float)
    r = np.broadcast_to(np.eye(3), angles.shape[:-1] + (3, 3)).copy()
    for i, ax in enumerate(order.lower()):
        r = r @ axis_matrix(ax, angles[..., i])
    return r


def matrix_to_euler(r: np.ndarray, order: str) -> np.ndarray:
    """Inverse of :func:`euler_to_matrix` for a three-letter Tait–Bryan order.

    Returns angles with the middle angle in ``[-pi/2, pi/2]``; shape ``(..., 3)``.
    """
    order = order.lower()
    if len(order) != 3 or len(set(order)) != 3:
        raise ValueError(f"order must be a permutation of 'xyz', got {order!r}")
    r = np.asarray(r, dtype=float)
    i, j, k = (_AXES[a] for a in order)
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


def matrix_to_quat(r: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` to unit quaternions ``wxyz`` ``(..., 4)``, w >= 0.

    Shepperd's method: divide by the largest of the four candidate components, so the result
    keeps full precision near the identity and near half turns.
    """
    r = np.asarray(r, dtype=float)
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


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Quaternions ``wxyz`` ``(..., 4)`` (normalised here) to matrices ``(..., 3, 3)``."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
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


def matrix_to_rotvec(r: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` to rotation vectors (axis * angle) ``(..., 3)``.

    Stable near 0 and pi (goes through the quaternion).
    """
    q = matrix_to_quat(r)
    w = np.clip(q[..., 0], -1.0, 1.0)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1)
    angle = 2.0 * np.arctan2(s, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0 / np.maximum(w, 1e-12))
    return v * scale[..., None]


def rotvec_to_matrix(v: np.ndarray) -> np.ndarray:
    """Rotation vectors ``(..., 3)`` to matrices ``(..., 3, 3)``."""
    v = np.asarray(v, dtype=float)
    angle = np.linalg.norm(v, axis=-1)
    axis = np.where(angle[..., None] > 1e-15, v / np.maximum(angle, 1e-300)[..., None], [1.0, 0, 0])
    return axis_angle_to_matrix(axis, angle)


def rpy_from_matrix(r: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw (``R = Rz(yaw) Ry(pitch) Rx(roll)``) of matrices ``(..., 3, 3)``.

    Returns ``(..., 3)`` as ``(roll, pitch, yaw)``.
    """
    zyx = matrix_to_euler(r, "zyx")
    return zyx[..., ::-1]
