"""A robot model's own ``qpos`` from animik's DoF vector ``q``, and back.

A skeleton read from URDF / MJCF (:mod:`animik.io.robot_model`) has one DoF per hinge / slide
joint, three (intrinsic Z-Y-X angles) per ball joint and six (translation, then Z-Y-X angles)
per free joint. The model's ``qpos`` has the joints in the file's order with a ball joint as a
unit quaternion ``wxyz`` and a free joint as position + quaternion ``wxyz`` — MuJoCo's layout
(``nq = 7 + hinges`` for a floating humanoid). Skeletons that were not read from a robot file
(built-in rigs, BVH) have ``qpos == q``: the layout of animik's own MJCF export.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..rotations import euler_from_matrix, matrix_from_euler, matrix_from_quat, quat_from_matrix
from ..skeleton import Skeleton

__all__ = ["qpos_from_q", "q_from_qpos", "qpos_layout", "qpos_names"]


def qpos_layout(skel: Skeleton) -> tuple[tuple[str, str, int], ...]:
    """``(joint name, kind, first DoF)`` per model joint in qpos order (kind ``hinge``,
    ``slide``, ``ball`` or ``free``); one entry per DoF for skeletons not read from a robot."""
    layout = skel.meta.get("qpos_layout")
    if layout:
        return tuple((str(a), str(b), int(c)) for a, b, c in layout)
    return tuple((nm, "slide" if skel.dof_type[k] else "hinge", k)
                 for k, nm in enumerate(skel.dof_names))


def _nq(layout) -> int:
    return sum(7 if kind == "free" else 4 if kind == "ball" else 1 for _, kind, _ in layout)


def qpos_names(skel: Skeleton) -> tuple[str, ...]:
    """A name per qpos entry: hinges by their joint name, ``<free>_x _y _z _qw _qx _qy _qz``,
    ``<ball>_qw _qx _qy _qz``."""
    out: list[str] = []
    for name, kind, _ in qpos_layout(skel):
        if kind == "free":
            out += [f"{name}_{s}" for s in ("x", "y", "z", "qw", "qx", "qy", "qz")]
        elif kind == "ball":
            out += [f"{name}_{s}" for s in ("qw", "qx", "qy", "qz")]
        else:
            out.append(name)
    return tuple(out)


def qpos_from_q(skel: Skeleton, q: Any) -> np.ndarray:
    """The model's ``qpos`` ``(..., nq)`` of DoF vectors ``q`` ``(..., n_dof)``.

    Raises:
        ShapeError: ``q`` does not end in ``n_dof``.
    """
    q = np.asarray(q, dtype=float)
    if q.ndim < 1 or q.shape[-1] != skel.n_dof:
        raise ShapeError(f"q must have shape (..., {skel.n_dof}) for skeleton {skel.name!r}, "
                         f"got {q.shape}")
    layout = qpos_layout(skel)
    out = np.empty(q.shape[:-1] + (_nq(layout),))
    i = 0
    for _, kind, k in layout:
        if kind == "free":
            out[..., i:i + 3] = q[..., k:k + 3]
            out[..., i + 3:i + 7] = quat_from_matrix(matrix_from_euler(q[..., k + 3:k + 6], "zyx"))
            i += 7
        elif kind == "ball":
            out[..., i:i + 4] = quat_from_matrix(matrix_from_euler(q[..., k:k + 3], "zyx"))
            i += 4
        else:
            out[..., i] = q[..., k]
            i += 1
    return out


def q_from_qpos(skel: Skeleton, qpos: Any) -> np.ndarray:
    """DoF vectors ``q`` ``(..., n_dof)`` of model ``qpos`` ``(..., nq)`` (quaternions are
    normalised; Euler angles have the middle angle in ``[-pi/2, pi/2]``).

    Raises:
        ShapeError: ``qpos`` does not end in the model's ``nq``.
    """
    qpos = np.asarray(qpos, dtype=float)
    layout = qpos_layout(skel)
    nq = _nq(layout)
    if qpos.ndim < 1 or qpos.shape[-1] != nq:
        raise ShapeError(f"qpos must have shape (..., {nq}) for skeleton {skel.name!r}, "
                         f"got {qpos.shape}")
    out = np.empty(qpos.shape[:-1] + (skel.n_dof,))
    i = 0
    for _, kind, k in layout:
        if kind == "free":
            out[..., k:k + 3] = qpos[..., i:i + 3]
            out[..., k + 3:k + 6] = euler_from_matrix(matrix_from_quat(qpos[..., i + 3:i + 7]),
                                                      "zyx")
            i += 7
        elif kind == "ball":
            out[..., k:k + 3] = euler_from_matrix(matrix_from_quat(qpos[..., i:i + 4]), "zyx")
            i += 4
        else:
            out[..., k] = qpos[..., i]
            i += 1
    return out
