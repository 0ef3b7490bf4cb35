"""Operational-space inverse inertia (seed D method B (a)): ``Λ⁻¹ = J M⁻¹ Jᵀ``.

``Λ_i⁻¹`` maps a force applied at a point of link ``i`` to the acceleration it causes there
(``r̈_i = r̈_i0 + Λ_i⁻¹ f``); for several contact points the blocks between them couple the
points. ``M`` comes from the composite rigid body algorithm (:func:`animik.dynamics.mass_matrix`)
and is factored once (Cholesky); ``J`` is the world-axes Jacobian of the points, read off the
DoFs' spatial axes (revolute axis ``w`` through ``p``: ``S = (w, p × w)``, the velocity of a
point ``x`` of the child is ``S_lin + w × x``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from ..errors import ShapeError
from ..skeleton import Skeleton
from . import _kernels as K
from .inverse import model_args


def _axes_and_mass(skel: Skeleton, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                            np.ndarray]:
    n, J = skel.n_dof, skel.n_joints
    Rw, pw, S = np.empty((J, 3, 3)), np.empty((J, 3)), np.empty((n, 6))
    IC, M = np.empty((J, 6, 6)), np.empty((n, n))
    par, off, rr, ds, dt, dax, m, c, ine = model_args(skel)
    K.crba_one(np.ascontiguousarray(q, dtype=float), par, off, rr, ds, dt, dax,
               np.ascontiguousarray(skel.dof_joint, dtype=np.int64), m, c, ine, Rw, pw, S, IC, M)
    return Rw, pw, S, M


def point_jacobian(skel: Skeleton, q: Any, joints: Any, points: Any = None,
                   angular: bool = False) -> np.ndarray:
    """World-axes Jacobian ``(3 k, n)`` (``(6 k, n)`` with ``angular``: linear rows first) of
    ``k`` points fixed to joints.

    Args:
        q: ``(n_dof,)`` pose. joints: ``(k,)`` joint indices or names.
        points: ``(k, 3)`` m in each joint's frame (default: the joint origins).
        angular: also the links' angular-velocity rows.

    Raises:
        ShapeError: bad shapes; UnknownNameError: unknown joint name.
    """
    q, js, pts = _checked(skel, q, joints, points, "point_jacobian")
    Rw, pw, S, _ = _axes_and_mass(skel, q)
    return _jacobian(skel, Rw, pw, S, js, pts, angular)


def _checked(skel: Skeleton, q: Any, joints: Any, points: Any, what: str):
    """``(q (n_dof,), joint indices, points (k, 3))`` validated for :func:`point_jacobian` /
    :func:`inverse_inertia` (``what`` names the caller in messages)."""
    q = skel.check_q(q)
    if q.ndim != 1:
        raise ShapeError(f"{what} takes one pose (n_dof,), got shape {q.shape}")
    js = [skel.joint_index(j) if isinstance(j, str) else int(j) for j in np.atleast_1d(joints)]
    pts = np.zeros((len(js), 3)) if points is None else np.asarray(points, dtype=float)
    if pts.shape != (len(js), 3) or not np.isfinite(pts).all():
        raise ShapeError(f"points must be ({len(js)}, 3) finite metres, got shape {pts.shape}")
    return q, js, pts


def _jacobian(skel, Rw, pw, S, js, pts, angular) -> np.ndarray:
    chain = skel.joint_ancestor_mask[:, skel.dof_joint]  # (J, n): DoF k moves joint j
    rows = []
    for j, x in zip(js, pts, strict=True):
        xw = pw[j] + Rw[j] @ x
        lin = (S[:, 3:] + np.cross(S[:, :3], xw)).T * chain[j]
        rows.append(lin)
        if angular:
            rows.append(S[:, :3].T * chain[j])
    return np.vstack(rows)


def inverse_inertia(skel: Skeleton, q: Any, joints: Any, points: Any = None,
                    angular: bool = False) -> np.ndarray:
    """Operational-space inverse inertia ``Λ⁻¹ = J M⁻¹ Jᵀ`` ``(3 k, 3 k)`` (or ``6 k``) of points
    fixed to links (see :func:`point_jacobian`), m/s² per N.

    ``M`` is factored by Cholesky; a skeleton with massless moving DoFs has a singular ``M``
    and raises ``numpy.linalg.LinAlgError`` (give such segments a mass).
    """
    q, js, pts = _checked(skel, q, joints, points, "inverse_inertia")
    Rw, pw, S, M = _axes_and_mass(skel, q)
    Jp = _jacobian(skel, Rw, pw, S, js, pts, angular)
    cf = sla.cho_factor(M, lower=True)
    return Jp @ sla.cho_solve(cf, Jp.T)
