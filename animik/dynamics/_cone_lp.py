"""Numba kernel of the contact-wrench-cone check: a bounded-variable primal simplex for many
small L1 programmes at once (docs/dynamics.md section 5f).

Per frame ``b`` the programme is ``min 1^T (s+ + s-)`` subject to ``G lambda + s+ - s- = w``,
``0 <= lambda <= u``, ``s+, s- >= 0``, with 6 rows (moment about the COM, force; body weights)
and the columns ``G`` of the active contacts (friction-pyramid edges, ``u = inf``; grip axes,
``u = bound``). Six rows make the basis a 6 x 6 matrix: the revised simplex keeps its inverse
explicitly (a Gauss-Jordan pivot per step, 36 multiply-adds), prices every column with the
duals ``y = c_B^T B^-1`` (Dantzig's rule; Bland's after a run of degenerate steps, which
cannot cycle) and ratio-tests with the variables' upper bounds (a grip axis may flip to its
bound without entering the basis). The slack basis (``s+_i`` or ``s-_i`` by the sign of
``w_i``) is feasible, so there is no phase 1; the objective is bounded below by 0, so there is
no unbounded ray. At the optimum the basic values are recomputed from a fresh solve with the
final basis (no drift from the product updates): the residual is the exact value of a vertex,
as HiGHS's (equal to ~1e-15 on louise.bvh's frames and random programmes, tests). The same
solve gives the equality duals at the optimal basis (:func:`cone_duals_batch`, for
:mod:`animik.dynamics.cone_rows`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = dict(cache=True, nogil=True)
#: reduced costs and pivots below this are zero (the data are O(1): body weights and metres)
_TOL = 1e-11
#: degenerate steps in a row after which Bland's rule takes over (guaranteed termination)
_BLAND_AFTER = 30
#: iterations after which a frame is reported as not solved (the caller re-solves it in HiGHS)
_MAX_ITER = 2000


@nb.njit(**_JIT)
def _column(j, n, cols, b, out):
    """Column ``j`` of ``[G, I, -I]`` of frame ``b`` into ``out (6,)``."""
    if j < n:
        for k in range(6):
            out[k] = cols[b, j, k]
    else:
        for k in range(6):
            out[k] = 0.0
        if j < n + 6:
            out[j - n] = 1.0
        else:
            out[j - n - 6] = -1.0


@nb.njit(**_JIT)
def _solve_frame(b, cols, ub, w, basis, at_up, is_basic, binv, xb, a, alpha, y):
    """One frame's programme; on return ``basis``/``at_up`` hold the optimal vertex's basis and
    bound states. Returns the number of iterations, or -1 when it did not finish."""
    n = cols.shape[1]
    N = n + 12
    for j in range(N):
        at_up[j] = False
        is_basic[j] = -1
    for i in range(6):
        for k in range(6):
            binv[i, k] = 0.0
        if w[b, i] >= 0.0:
            basis[i] = n + i
            binv[i, i] = 1.0
            xb[i] = w[b, i]
        else:
            basis[i] = n + 6 + i
            binv[i, i] = -1.0
            xb[i] = -w[b, i]
        is_basic[basis[i]] = i
    degenerate = 0
    bland = False
    for it in range(_MAX_ITER):
        # duals y = c_B^T B^-1 (the cost is 1 on the slacks, 0 on the contact columns)
        for k in range(6):
            s = 0.0
            for i in range(6):
                if basis[i] >= n:
                    s += binv[i, k]
            y[k] = s
        # pricing
        q = -1
        best = 0.0
        for j in range(N):
            if is_basic[j] >= 0:
                continue
            if j < n:
                u = ub[b, j]
                if u <= 0.0:
                    continue  # an inactive contact: its column is fixed at 0
                d = 0.0
                for k in range(6):
                    d -= y[k] * cols[b, j, k]
            elif j < n + 6:
                d = 1.0 - y[j - n]
            else:
                d = 1.0 + y[j - n - 6]
            if at_up[j]:
                score = d
            else:
                score = -d
            if score > _TOL:
                if bland:
                    q = j
                    break
                if score > best:
                    best = score
                    q = j
        if q < 0:
            return it
        sgn = -1.0 if at_up[q] else 1.0
        _column(q, n, cols, b, a)
        for i in range(6):
            s = 0.0
            for k in range(6):
                s += binv[i, k] * a[k]
            alpha[i] = s
        # ratio test: x_B(t) = x_B - t sgn alpha
        uq = ub[b, q] if q < n else np.inf
        t = uq
        r = -1
        r_piv = 0.0
        for i in range(6):
            dlt = sgn * alpha[i]
            jb = basis[i]
            if dlt > _TOL:
                lim = xb[i] / dlt
            elif dlt < -_TOL:
                ubb = ub[b, jb] if jb < n else np.inf
                if ubb == np.inf:
                    continue
                lim = (ubb - xb[i]) / -dlt
            else:
                continue
            if lim < 0.0:
                lim = 0.0
            if lim < t - 1e-15:
                take = True
            elif lim <= t + 1e-15:  # a tie: Bland's smallest index, else the larger pivot
                if r < 0:
                    take = True
                elif bland:
                    take = jb < basis[r]
                else:
                    take = abs(dlt) > r_piv
            else:
                take = False
            if take:
                t, r, r_piv = min(t, lim), i, abs(dlt)
        if t == np.inf:
            return -1  # an unbounded ray: impossible with a cost >= 0 (numerical trouble)
        if t <= 1e-14:
            degenerate += 1
            if degenerate > _BLAND_AFTER:
                bland = True
        else:
            degenerate = 0
        for i in range(6):
            xb[i] -= t * sgn * alpha[i]
        if r < 0:  # the entering variable reaches its own bound first: a bound flip
            at_up[q] = not at_up[q]
            continue
        leave = basis[r]
        ubl = ub[b, leave] if leave < n else np.inf
        at_up[leave] = sgn * alpha[r] < 0.0 and ubl < np.inf
        is_basic[leave] = -1
        xb[r] = (uq - t) if at_up[q] else t
        at_up[q] = False
        basis[r] = q
        is_basic[q] = r
        piv = alpha[r]
        for k in range(6):
            binv[r, k] /= piv
        for i in range(6):
            if i != r:
                f = alpha[i]
                if f != 0.0:
                    for k in range(6):
                        binv[i, k] -= f * binv[r, k]
    return -1


@nb.njit(**_JIT)
def _basis_system(b, n, cols, ub, w, basis, at_up, is_basic, a, bm, rhs):
    """The optimal vertex of programme ``b`` afresh: ``bm x_B = rhs`` with ``bm (6, 6)`` the
    basic columns and ``rhs (6,)`` = w - the columns at their upper bounds (written in place;
    ``a (6,)`` scratch)."""
    for k in range(6):
        rhs[k] = w[b, k]
    for j in range(n):
        if at_up[j] and is_basic[j] < 0:
            for k in range(6):
                rhs[k] -= ub[b, j] * cols[b, j, k]
    for i in range(6):
        _column(basis[i], n, cols, b, a)
        for k in range(6):
            bm[k, i] = a[k]


@nb.njit(**_JIT)
def _cone_batch(cols, ub, w, resid, slack, y, ok, want_slack, want_duals):
    """Every frame's programme by the simplex; at its optimal basis the residual ``resid``,
    when ``want_slack`` the slack ``s+ - s-`` into ``slack``, when ``want_duals`` the equality
    duals ``y = B^-T c_B`` into ``y`` (``c_B`` = 1 for a basic slack, 0 for a basic contact
    weight: the gradient ``dr/dw`` while that basis stays optimal, a subgradient at a kink).
    Frames the simplex did not finish get ``ok`` False and NaN."""
    B, n = cols.shape[0], cols.shape[1]
    N = n + 12
    basis = np.empty(6, np.int64)
    at_up = np.zeros(N, np.bool_)
    is_basic = np.empty(N, np.int64)
    binv = np.empty((6, 6))
    xb = np.empty(6)
    a = np.empty(6)
    alpha = np.empty(6)
    yy = np.empty(6)
    bm = np.empty((6, 6))
    rhs = np.empty(6)
    cb = np.empty(6)
    for b in range(B):
        it = _solve_frame(b, cols, ub, w, basis, at_up, is_basic, binv, xb, a, alpha, yy)
        if it < 0:
            ok[b] = False
            resid[b] = np.nan
            for k in range(6):
                if want_slack:
                    slack[b, k] = np.nan
                if want_duals:
                    y[b, k] = np.nan
            continue
        ok[b] = True
        _basis_system(b, n, cols, ub, w, basis, at_up, is_basic, a, bm, rhs)
        x = np.linalg.solve(bm, rhs)
        tot = 0.0
        if want_slack:
            for k in range(6):
                slack[b, k] = 0.0
        for i in range(6):
            jb = basis[i]
            if jb >= n:
                v = x[i] if x[i] > 0.0 else 0.0
                tot += v
                if want_slack:
                    if jb < n + 6:
                        slack[b, jb - n] += v
                    else:
                        slack[b, jb - n - 6] -= v
        resid[b] = tot
        if want_duals:
            for i in range(6):
                cb[i] = 1.0 if basis[i] >= n else 0.0
            yv = np.linalg.solve(bm.T.copy(), cb)
            for k in range(6):
                y[b, k] = yv[k]


@nb.njit(**_JIT)
def cone_lp_batch(cols, ub, w, resid, slack, ok):
    """Solve every frame's programme (module docstring).

    Args:
        cols: ``(B, n, 6)`` contact columns (moment about the reference point, force).
        ub: ``(B, n)`` upper bounds (``inf``: a pushing edge; ``0``: inactive, left out).
        w: ``(B, 6)`` the required wrenches.
        resid: ``(B,)`` out, the optimum ``1^T (s+ + s-)``.
        slack: ``(B, 6)`` out, ``s+ - s-`` at the optimum (what no contact can give).
        ok: ``(B,)`` out, False where the simplex did not finish (re-solve elsewhere).
    """
    _cone_batch(cols, ub, w, resid, slack, np.empty((0, 6)), ok, True, False)


@nb.njit(**_JIT)
def cone_duals_batch(cols, ub, w, resid, y, ok):
    """Every frame's residual ``resid (B,)`` and equality duals ``y (B, 6)`` (the residual's
    gradient in the wrench, :mod:`animik.dynamics.cone_rows`); ``ok (B,)`` False where the
    simplex did not finish (the caller re-solves those by HiGHS)."""
    _cone_batch(cols, ub, w, resid, np.empty((0, 6)), y, ok, False, True)


@nb.njit(**_JIT)
def _put_column(cols, ub, b, j, rx, ry, rz, gx, gy, gz, u):
    """Column ``j`` of programme ``b``: the wrench ``(r x g, g)`` of a force ``g`` at ``r``
    (from the moment reference), with upper bound ``u``."""
    cols[b, j, 0] = ry * gz - rz * gy
    cols[b, j, 1] = rz * gx - rx * gz
    cols[b, j, 2] = rx * gy - ry * gx
    cols[b, j, 3] = gx
    cols[b, j, 4] = gy
    cols[b, j, 5] = gz
    ub[b, j] = u


@nb.njit(**_JIT)
def build_columns(push_points, push_normals, push_mu, push_on, grip_points, grip_bound, grip_on,
                  ref, dirs, cols, ub):
    """The programmes' columns, as :func:`animik.dynamics.cone._programme` builds them in numpy
    (same order and formulas; a loop instead of ``(B, n, 3)`` temporaries).

    Args:
        push_points, push_normals: ``(B, P, 3)``; push_mu: ``(B, P)``; push_on: ``(B, P)``.
        grip_points: ``(B, H, 3)``; grip_bound: ``(B, H)`` body weights; grip_on: ``(B, H)``.
        ref: ``(B, 3)`` moment reference. dirs: ``(E, 2)`` the pyramid's edge directions.
        cols: ``(B, E P + 6 H, 6)`` out. ub: ``(B, E P + 6 H)`` out.
    """
    B, P, H, E = push_points.shape[0], push_points.shape[1], grip_points.shape[1], dirs.shape[0]
    for b in range(B):
        for p in range(P):
            nx, ny, nz = push_normals[b, p, 0], push_normals[b, p, 1], push_normals[b, p, 2]
            # tangent_basis: t1 = n x a (a = e_y if |n_x| > 0.9 else e_x), t2 = n x t1
            if abs(nx) > 0.9:
                t1x, t1y, t1z = -nz, 0.0, nx
            else:
                t1x, t1y, t1z = 0.0, nz, -ny
            s = np.sqrt(t1x * t1x + t1y * t1y + t1z * t1z)
            t1x, t1y, t1z = t1x / s, t1y / s, t1z / s
            t2x, t2y, t2z = ny * t1z - nz * t1y, nz * t1x - nx * t1z, nx * t1y - ny * t1x
            rx = push_points[b, p, 0] - ref[b, 0]
            ry = push_points[b, p, 1] - ref[b, 1]
            rz = push_points[b, p, 2] - ref[b, 2]
            mu = push_mu[b, p]
            u = np.inf if push_on[b, p] else 0.0
            for e in range(E):
                c, sn = mu * dirs[e, 0], mu * dirs[e, 1]
                gx = nx + c * t1x + sn * t2x
                gy = ny + c * t1y + sn * t2y
                gz = nz + c * t1z + sn * t2z
                j = p * E + e
                _put_column(cols, ub, b, j, rx, ry, rz, gx, gy, gz, u)
        for h in range(H):
            rx = grip_points[b, h, 0] - ref[b, 0]
            ry = grip_points[b, h, 1] - ref[b, 1]
            rz = grip_points[b, h, 2] - ref[b, 2]
            u = grip_bound[b, h] if grip_on[b, h] else 0.0
            for k in range(6):
                sg = 1.0 if k < 3 else -1.0
                ax = k % 3
                gx = sg if ax == 0 else 0.0
                gy = sg if ax == 1 else 0.0
                gz = sg if ax == 2 else 0.0
                j = P * E + h * 6 + k
                _put_column(cols, ub, b, j, rx, ry, rz, gx, gy, gz, u)
