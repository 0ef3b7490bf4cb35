"""Contact-wrench-cone check: can contacts at arbitrary points, with arbitrary normals, supply a
required wrench? (docs/dynamics.md section 5f.)

The ZMP check (:mod:`animik.dynamics.zmp`) needs every contact on one floor plane. Contacts off
the floor (a seat, pedals, hand holds) are checked instead by asking whether the required
wrench ``W = (N, F)`` is a combination of what the contacts can push or pull:

- a **pushing** contact point ``p`` with unit normal ``n`` and friction ``mu``: the friction
  pyramid's 8 edges ``g_k = n + mu (cos(k pi/4) t1 + sin(k pi/4) t2)`` (inscribed in the cone
  ``|f_t| <= mu f_n``), each with a weight ``lambda >= 0``, giving the wrench
  ``(p x g_k, g_k)``;
- a **grip** point: the six world axes ``+-e`` with weights ``0 <= lambda <= bound`` (N): the
  force may push or pull, each world component at most ``bound``.

Per frame this is a small linear programme with slacks, ``min 1^T (s+ + s-)`` subject to
``G lambda + s+ - s- = W`` (moments about the centre of mass, everything in body weights);
its optimum is 0 exactly when the wrench is in the cone. The residual (L1, in body weights)
is the margin reported; its largest component says which direction of force or moment the
contacts cannot give. Each frame's programme is solved by a bounded-variable primal simplex in
numba (:mod:`animik.dynamics._cone_lp`, all frames in one compiled loop: ~86,000 frames/s CPU
on louise.bvh's 2,130 supported frames); :func:`cone_residual_highs` solves the same
programmes by HiGHS (``scipy.optimize.linprog``, block-diagonal, dual simplex without presolve:
~2,500-3,000 frames/s), the tests' independent reference (same residuals to ~1e-15) and the
fallback for a frame the simplex does not finish.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

N_EDGES = 8
AXES = ("moment x", "moment y", "moment z", "force x", "force y", "force z")
_DIRS = np.stack([np.cos(np.arange(N_EDGES) * 2 * np.pi / N_EDGES),
                  np.sin(np.arange(N_EDGES) * 2 * np.pi / N_EDGES)], axis=1)
_GRIP = np.vstack([np.eye(3), -np.eye(3)])  # (6, 3)


def tangent_basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents ``(..., 3)`` orthogonal to unit normals ``n (..., 3)`` and to each other."""
    a = np.zeros_like(n)
    use_y = np.abs(n[..., 0]) > 0.9
    a[..., 0] = ~use_y
    a[..., 1] = use_y
    t1 = np.cross(n, a)
    t1 /= np.linalg.norm(t1, axis=-1, keepdims=True)
    return t1, np.cross(n, t1)


def pyramid_edges(n: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Friction-pyramid edges ``(..., 8, 3)`` for unit normals ``(..., 3)`` and ``mu (...)``."""
    t1, t2 = tangent_basis(n)
    mu = np.asarray(mu, dtype=float)[..., None, None]
    return n[..., None, :] + mu * (_DIRS[:, 0, None] * t1[..., None, :]
                                   + _DIRS[:, 1, None] * t2[..., None, :])


def _programme(wrench, ref, weight, push_points, push_normals, push_mu, push_on, grip_points,
               grip_bound, grip_on):
    """The programmes' data: columns ``(B, n, 6)`` (pyramid edges, then grip axes; moments
    about ``ref``, body weights), upper bounds ``(B, n)`` (0 = inactive) and wrenches
    ``(B, 6)``."""
    B = wrench.shape[0]
    P, H = push_points.shape[1], grip_points.shape[1]
    w = np.asarray(wrench, dtype=float) / weight
    ref = np.asarray(ref, dtype=float)
    w_ref = np.concatenate([w[:, :3] - np.cross(ref, w[:, 3:]), w[:, 3:]], axis=1)
    mu = np.broadcast_to(np.asarray(push_mu, dtype=float), (B, P))
    g = pyramid_edges(np.asarray(push_normals, float), mu).reshape(B, P * N_EDGES, 3)
    rp = np.repeat(np.asarray(push_points, float) - ref[:, None], N_EDGES, axis=1)
    cols_push = np.concatenate([np.cross(rp, g), g], axis=2)  # (B, 8P, 6)
    gg = np.broadcast_to(_GRIP, (B, H, 6, 3)).reshape(B, H * 6, 3)
    rg = np.repeat(np.asarray(grip_points, float) - ref[:, None], 6, axis=1)
    cols_grip = np.concatenate([np.cross(rg, gg), gg], axis=2)  # (B, 6H, 6)
    cols = np.concatenate([cols_push, cols_grip], axis=1)
    ub = np.concatenate([np.where(np.repeat(push_on, N_EDGES, axis=1), np.inf, 0.0),
                         np.where(np.repeat(grip_on, 6, axis=1),
                                  np.repeat(np.broadcast_to(np.asarray(grip_bound, float)
                                                            / weight, (B, H)), 6, 1),
                                  0.0)], axis=1)
    return cols, ub, w_ref


def _axis(d: np.ndarray, resid: np.ndarray) -> np.ndarray:
    """Index into :data:`AXES` of the largest component of the unmet part ``d (B, 6)``."""
    return np.where(resid > 1e-9, np.argmax(np.abs(d), axis=1), -1).astype(np.int64)


def cone_residual(wrench: np.ndarray, ref: np.ndarray, weight: float,
                  push_points: np.ndarray, push_normals: np.ndarray, push_mu: np.ndarray,
                  push_on: np.ndarray, grip_points: np.ndarray, grip_bound: np.ndarray,
                  grip_on: np.ndarray, chunk: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """Distance of required wrenches from the contacts' wrench cone, per frame.

    Solved frame by frame by a bounded-variable primal simplex in numba
    (:mod:`animik.dynamics._cone_lp`; the HiGHS programme of :func:`cone_residual_highs` gives
    the same residuals to ~1e-15, ~40x slower); a frame the simplex does not finish (none
    seen) is re-solved by HiGHS.

    Args:
        wrench: ``(B, 6)`` required external wrench (moment about the world origin N m, force N).
        ref: ``(B, 3)`` m, the point moments are taken about in the programme (the COM: keeps
            the rows scaled alike).
        weight: N, the body weight (the programme runs in body weights, the residual is in them).
        push_points, push_normals: ``(B, P, 3)`` pushing contact points and unit normals.
        push_mu: ``(P,)`` or ``(B, P)`` friction coefficients (> 0).
        push_on: ``(B, P)`` bool, the point is in contact.
        grip_points: ``(B, H, 3)`` grip points. grip_bound: ``(H,)`` N, bound per world axis.
        grip_on: ``(B, H)`` bool.
        chunk: frames per HiGHS programme (the fallback only).

    Returns:
        ``(residual (B,), axis (B,))``: the L1 norm of the wrench part no contact force can give
        (body weights; 0 = feasible), and the index into :data:`AXES` of its largest component
        (-1 when the residual is below 1e-9).
    """
    from ._cone_lp import build_columns, cone_lp_batch

    B = wrench.shape[0]
    P, H = push_points.shape[1], grip_points.shape[1]
    w = np.asarray(wrench, dtype=float) / weight
    ref = np.ascontiguousarray(ref, dtype=float)
    w_ref = np.ascontiguousarray(np.concatenate([w[:, :3] - np.cross(ref, w[:, 3:]), w[:, 3:]],
                                                axis=1))
    n = N_EDGES * P + 6 * H
    cols, ub = np.empty((B, n, 6)), np.empty((B, n))
    f64 = lambda a, shape: np.ascontiguousarray(np.broadcast_to(  # noqa: E731
        np.asarray(a, dtype=float), shape))
    build_columns(f64(push_points, (B, P, 3)), f64(push_normals, (B, P, 3)),
                  f64(push_mu, (B, P)), np.ascontiguousarray(push_on, dtype=bool),
                  f64(grip_points, (B, H, 3)), f64(np.asarray(grip_bound, float) / weight, (B, H)),
                  np.ascontiguousarray(grip_on, dtype=bool), ref, _DIRS, cols, ub)
    resid, d = np.empty(B), np.empty((B, 6))
    ok = np.ones(B, dtype=bool)
    cone_lp_batch(cols, ub, w_ref, resid, d, ok)
    bad = np.flatnonzero(~ok)
    if len(bad):
        resid[bad], d[bad] = _highs(cols[bad], ub[bad], w_ref[bad], chunk)
    return resid, _axis(d, resid)


def cone_residual_highs(wrench: np.ndarray, ref: np.ndarray, weight: float,
                        push_points: np.ndarray, push_normals: np.ndarray, push_mu: np.ndarray,
                        push_on: np.ndarray, grip_points: np.ndarray, grip_bound: np.ndarray,
                        grip_on: np.ndarray, chunk: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cone_residual` by HiGHS (``scipy.optimize.linprog``): block-diagonal programmes of
    ``chunk`` frames, dual simplex without presolve. The independent reference of the tests
    and the fallback of :func:`cone_residual`; same arguments and results."""
    cols, ub, w_ref = _programme(wrench, ref, weight, push_points, push_normals, push_mu,
                                 push_on, grip_points, grip_bound, grip_on)
    resid, d = _highs(cols, ub, w_ref, chunk)
    return resid, _axis(d, resid)


def _highs(cols: np.ndarray, ub: np.ndarray, w_ref: np.ndarray,
           chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """The programmes by HiGHS: residuals ``(B,)`` and unmet parts ``s+ - s-`` ``(B, 6)``."""
    from scipy.optimize import linprog  # ~0.3 s import

    B = cols.shape[0]
    eye = np.broadcast_to(np.hstack([np.eye(6), -np.eye(6)]).T, (B, 12, 6))
    cols = np.concatenate([cols, eye], axis=1)  # (B, n, 6) with the slacks
    ub = np.concatenate([ub, np.full((B, 12), np.inf)], axis=1)
    n = cols.shape[1]
    cost = np.concatenate([np.zeros(n - 12), np.ones(12)])
    resid = np.empty(B)
    dd = np.empty((B, 6))
    for a in range(0, B, chunk):
        b = min(B, a + chunk)
        m = b - a
        keep = ub[a:b] > 0  # columns that can be non-zero (inactive contacts drop out)
        f_idx, c_idx = np.nonzero(keep)
        vals = cols[a:b][f_idx, c_idx]  # (k, 6)
        col_id = np.arange(len(f_idx))
        rows = (f_idx[:, None] * 6 + np.arange(6)).ravel()
        A = sp.csc_matrix((vals.ravel(), (rows, np.repeat(col_id, 6))), shape=(6 * m, len(f_idx)))
        bounds = np.stack([np.zeros(len(f_idx)), ub[a:b][f_idx, c_idx]], axis=1)
        r = linprog(np.tile(cost, (m, 1))[f_idx, c_idx], A_eq=A, b_eq=w_ref[a:b].ravel(),
                    bounds=bounds, method="highs-ds", options={"presolve": False})
        if r.status != 0:  # cannot happen (the slacks make every programme feasible)
            raise RuntimeError(f"contact-wrench-cone programme failed: {r.message}")
        x = r.x
        slack = np.zeros((m, 12))
        sl = c_idx >= n - 12
        slack[f_idx[sl], c_idx[sl] - (n - 12)] = x[sl]
        d = slack[:, :6] - slack[:, 6:]
        dd[a:b] = d
        resid[a:b] = np.abs(d).sum(axis=1)
    return resid, dd


__all__ = ["AXES", "N_EDGES", "cone_residual", "cone_residual_highs", "pyramid_edges",
           "tangent_basis"]
