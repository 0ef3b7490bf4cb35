"""Numba kernels of the feedback IK solver (seed A): the whole iteration loop in one call.

Kept apart from :mod:`animik.ik.fik` (the validated public API) so that the kernels take only
plain arrays. One call of :func:`fik_loop` runs up to ``max_iterations`` FIK iterations —
forward kinematics, task error, Jacobian, gain refresh, filter update, null-space terms, joint
limits — without returning to Python. Equation numbers are those of docs/SEEDS.md (seed A);
the design is explained in docs/fik.md.

Task-space products exploit the tree structure: a DoF moves only the sites in its joint's
subtree, and the solver orders the task rows depth-first (:func:`animik.ik.fik._problem_arrays`),
so the rows DoF ``d`` moves are one contiguous run ``r0[d]:r1[d]``. The Jacobian is stored
transposed (``jt (n, m)``) and ``J x``, ``Jᵀ t`` and ``J V Jᵀ`` loop over those runs only
(body95 with 15 position targets: 1 125 of 4 275 entries, 16 105 of 96 187 multiply-adds).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._kernels import fk_one, point_sums, sites_one
from ._kernels import task_error

_JIT = dict(cache=True, nogil=True)
# Hot loops: reassociation (vectorised reductions) and FMA contraction only; NaN/inf semantics
# are kept, so the finiteness checks below stay valid. Loops run from 0 over slices: a loop
# starting at a non-zero index is not vectorised by numba (negative-index wraparound checks).
_FAST = dict(cache=True, nogil=True, fastmath={"reassoc", "contract"})

# reason codes returned in info[1]
REASON_CONVERGED = 0
REASON_MAX_ITERATIONS = 1
REASON_STALLED = 2
REASONS = ("converged", "max_iterations", "stalled")

# gain modes (ip[I_GAIN])
GAIN_FULL = 0  # P = (J V Jᵀ + μ I)⁻¹, kept as its Cholesky factor
GAIN_SCALAR = 1  # P = c / trace(J V Jᵀ) · I  (seed A's constant-gain choice, rescaled)
GAIN_CONSTANT = 3  # P given by the caller (or the H∞ gain of eq 13 at the start pose)

# refresh policies (ip[I_REFRESH])
REFRESH_AUTO = 0
REFRESH_ALWAYS = 1
REFRESH_ONCE = 2

# float parameters (fp)
F_A, F_H, F_HMIN, F_HMAX, F_GROW, F_CUT, F_MUREL, F_MUABS = 0, 1, 2, 3, 4, 5, 6, 7
F_RRATIO, F_RDQ, F_TOLP, F_TOLR, F_STALLREL, F_MAXSTEP = 8, 9, 10, 11, 12, 13
F_ANULL, F_HNULL, F_NULLTOL, F_REJECT, F_PSCALE = 14, 15, 16, 17, 18
F_LIMGAIN, F_LIMMARGIN = 23, 24
F_MUFAC, F_MUFACMAX, F_NULLMAX, F_NULLSCALE = 25, 26, 27, 28
N_FP = 29
# int parameters (ip)
(I_MAXIT, I_STALLWIN, I_FORM, I_GAIN, I_REFRESH, I_PVALID, I_LIMNULL, I_REF, I_WAITNULL,
 I_WARM, I_COLD, I_FRESH) = range(12)
N_IP = 12
FORM_VARIABLE = 0  # eqs 9d–9e
FORM_FIXED = 1  # eqs 9a–9c

_LIMIT_EPS = 1e-12


@nb.njit(**_JIT)
def evaluate(q, model, task, struct, work, e, jt, se):
    """FK + task error ``e (m,)`` + transposed task Jacobian ``jt (n, m)`` + site errors.

    Task rows are in the solver's internal order (sites sorted depth-first, see
    :func:`animik.ik.fik._problem_arrays`), so the rows DoF ``d`` moves are the contiguous run
    ``r0[d]:r1[d]``; only that run of ``jt[d]`` is written (the rest stays zero). Columns follow
    seed C's geometric Jacobian: revolute ``[w × (p_site − p_dof); w]``, prismatic ``[w; 0]``,
    the angular rows only for 6-row (pose) targets; each row is scaled by its site weight.
    ``se (k, 2)`` receives the position (m) and angle (rad) error of every targeted site.
    """
    par, off, rr, ds, dt, dax, sj, so, sr, sel, mask = model
    ref_p, ref_R, rows, weights, rstart, xb = task[:6]
    r0, r1, site_of_row, rs1 = struct
    Rw, pw, wax, wpt, sR, sp = work
    fk_one(q, par, off, rr, ds, dt, dax, Rw, pw, wax, wpt)
    sites_one(Rw, pw, sj, so, sr, sel, sR, sp)
    task_error(sp, sR, ref_p, ref_R, rows, weights, e, se)
    n = jt.shape[0]
    if xb[0][0] > 0:
        _point_tasks(Rw, pw, par, dt, wax, wpt, xb, e, jt, se)
    for d in range(n):
        a = r0[d]
        b = rs1[d]  # the site rows end here; point-task rows (if any) follow to r1[d]
        if a >= b:
            continue
        w0, w1, w2 = wax[d, 0], wax[d, 1], wax[d, 2]
        rev = dt[d] == 0
        px, py, pz = wpt[d, 0], wpt[d, 1], wpt[d, 2]
        row = jt[d]
        r = a
        while r < b:
            i = site_of_row[r]
            wt = weights[i]
            if rev:
                dx = sp[i, 0] - px
                dy = sp[i, 1] - py
                dz = sp[i, 2] - pz
                row[r] = wt * (w1 * dz - w2 * dy)
                row[r + 1] = wt * (w2 * dx - w0 * dz)
                row[r + 2] = wt * (w0 * dy - w1 * dx)
                if rows[i] == 6:
                    row[r + 3] = wt * w0
                    row[r + 4] = wt * w1
                    row[r + 5] = wt * w2
            else:
                row[r] = wt * w0
                row[r + 1] = wt * w1
                row[r + 2] = wt * w2
                if rows[i] == 6:
                    row[r + 3] = 0.0
                    row[r + 4] = 0.0
                    row[r + 5] = 0.0
            r += rows[i]


@nb.njit(**_JIT)
def _point_tasks(Rw, pw, par, dt, wax, wpt, xb, e, jt, se):
    """Rows of the point-combination tasks (the centre of mass), after the site rows.

    ``xb = (xi, xf)`` packs the block in two arrays (one cheap argument for the dispatcher):
    ``xi = [T, P, mx, pt_joint (P), pt_start (T+1), row_task (mx), row_axis (mx),
    dof_joint (n)]``, ``xf = [pt_off (3P), pt_coef (P), row_w (mx), row_target (mx)]``. Task
    ``t`` is ``Σ coef · x_p`` over points ``pt_start[t]:pt_start[t+1]``; its rows (one per
    axis) are ``w (target − value[axis])``, its Jacobian columns the rigid motion of each
    DoF's subtree (:func:`animik._kernels.point_sums`). Dense: every DoF's run extends over
    these rows. ``se[k + t, 0]`` gets the task's unweighted error norm.
    """
    xi, xf = xb
    T = xi[0]
    P = xi[1]
    o = 3
    pt_joint = xi[o:o + P]
    o += P
    pt_start = xi[o:o + T + 1]
    o += T + 1
    row_task = xi[o:o + xi[2]]
    o += xi[2]
    row_axis = xi[o:o + xi[2]]
    o += xi[2]
    dof_joint = xi[o:]
    pt_off = xf[:3 * P].reshape((P, 3))
    pt_coef = xf[3 * P:4 * P]
    row_w = xf[4 * P:4 * P + xi[2]]
    row_target = xf[4 * P + xi[2]:4 * P + 2 * xi[2]]
    T = pt_start.shape[0] - 1
    mx = row_task.shape[0]
    ms = e.shape[0] - mx
    ks = se.shape[0] - T
    n = jt.shape[0]
    J = par.shape[0]
    S = np.empty((J, 3))
    A = np.empty(J)
    xv = np.empty(3)
    r = 0
    for t in range(T):
        a0 = pt_start[t]
        b0 = pt_start[t + 1]
        point_sums(Rw, pw, par, pt_joint[a0:b0], pt_off[a0:b0], pt_coef[a0:b0], S, A, xv)
        ss = 0.0
        while r < mx and row_task[r] == t:
            ax = row_axis[r]
            wt = row_w[r]
            err = row_target[r] - xv[ax]
            e[ms + r] = wt * err
            ss += err * err
            for d in range(n):
                j = dof_joint[d]
                a = A[j]
                w0, w1, w2 = wax[d, 0], wax[d, 1], wax[d, 2]
                if dt[d] == 0:
                    vx = S[j, 0] - a * wpt[d, 0]
                    vy = S[j, 1] - a * wpt[d, 1]
                    vz = S[j, 2] - a * wpt[d, 2]
                    if ax == 0:
                        val = w1 * vz - w2 * vy
                    elif ax == 1:
                        val = w2 * vx - w0 * vz
                    else:
                        val = w0 * vy - w1 * vx
                else:
                    val = a * (w0 if ax == 0 else (w1 if ax == 1 else w2))
                jt[d, ms + r] = wt * val
            r += 1
        se[ks + t, 0] = np.sqrt(ss)
        se[ks + t, 1] = 0.0


@nb.njit(**_FAST)
def jac_mul(jt, x, r0, r1, out):
    """``out = J x`` (m,) from the transposed Jacobian, over each DoF's run of rows."""
    out[:] = 0.0
    for d in range(jt.shape[0]):
        xd = x[d]
        if xd == 0.0 or r0[d] == r1[d]:
            continue
        row = jt[d, r0[d]:r1[d]]
        o = out[r0[d]:r1[d]]
        for r in range(row.shape[0]):
            o[r] += row[r] * xd


@nb.njit(**_FAST)
def jac_t_mul(jt, t, r0, r1, out):
    """``out = Jᵀ t`` (n,) from the transposed Jacobian, over each DoF's run of rows."""
    for d in range(jt.shape[0]):
        row = jt[d, r0[d]:r1[d]]
        tt = t[r0[d]:r1[d]]
        acc = 0.0
        for r in range(row.shape[0]):
            acc += row[r] * tt[r]
        out[d] = acc


@nb.njit(**_FAST)
def gram(jt, v, r0, r1, G):
    """``G = J diag(v) Jᵀ = Σ_d v_d J[:, d] J[:, d]ᵀ`` (m × m, both triangles).

    Each DoF adds a rank-one term on its run of rows only (the rows of the sites in its
    subtree), so the cost is ``Σ_d (run length)² / 2`` instead of ``m² n / 2`` — on body95
    with 15 position targets about 6x fewer operations, in contiguous (vectorised) loops.
    """
    m = G.shape[0]
    G[:, :] = 0.0
    for d in range(jt.shape[0]):
        vd = v[d]
        a0 = r0[d]
        b1 = r1[d]
        if vd == 0.0 or a0 == b1:
            continue
        for a in range(a0, b1):
            ca = jt[d, a] * vd
            if ca == 0.0:
                continue
            x = jt[d, a:b1]
            g = G[a, a:b1]
            for b in range(x.shape[0]):
                g[b] += ca * x[b]
    for a in range(m):
        for b in range(a + 1, m):
            G[b, a] = G[a, b]


@nb.njit(**_FAST)
def cholesky_inplace(G):
    """Lower Cholesky factor of the SPD matrix ``G`` written over its lower triangle.

    Returns False (and leaves ``G`` partly overwritten) if a pivot is not positive.
    """
    m = G.shape[0]
    for j in range(m):
        gj = G[j, :j]
        s = G[j, j]
        for c in range(j):
            s -= gj[c] * gj[c]
        if not (s > 0.0):
            return False
        d = np.sqrt(s)
        G[j, j] = d
        inv = 1.0 / d
        for i in range(j + 1, m):
            gi = G[i, :j]
            s2 = G[i, j]
            for c in range(j):
                s2 -= gi[c] * gj[c]
            G[i, j] = s2 * inv
    return True


@nb.njit(**_JIT)
def chol_rank1(L, x, start, sign):
    """Rank-one update (``sign = 1``) or downdate (``-1``) of a lower Cholesky factor in place:
    ``L Lᵀ ± x xᵀ``, with ``x`` zero before row ``start``; ``x`` is destroyed. O(m²).

    Returns False when a downdate would lose positive definiteness (``L`` is then invalid).
    """
    m = L.shape[0]
    for k in range(start, m):
        lkk = L[k, k]
        xk = x[k]
        r2 = lkk * lkk + sign * xk * xk
        if not (r2 > 1e-300):
            return False
        r = np.sqrt(r2)
        c = r / lkk
        sn = xk / lkk
        L[k, k] = r
        for i in range(k + 1, m):
            lik = (L[i, k] + sign * sn * x[i]) / c
            L[i, k] = lik
            x[i] = c * x[i] - sn * lik
    return True


@nb.njit(**_FAST)
def chol_solve(L, b, out):
    """``out = (L Lᵀ)⁻¹ b`` with the lower factor ``L`` (its upper triangle is ignored)."""
    m = L.shape[0]
    for i in range(m):
        li = L[i, :i]
        oo = out[:i]
        s = b[i]
        for c in range(i):
            s -= li[c] * oo[c]
        out[i] = s / L[i, i]
    # back substitution with Lᵀ: column-oriented (axpy on the rows above)
    for i in range(m - 1, -1, -1):
        x = out[i] / L[i, i]
        out[i] = x
        li = L[i, :i]
        oo = out[:i]
        for c in range(i):
            oo[c] -= li[c] * x


@nb.njit(**_JIT)
def _refresh(gain, jt, veff, r0, r1, fp, L, Pm, scal, hard):
    """Recompute the gain P at the current Jacobian. Returns False if it failed (non-finite).

    ``hard`` ``(m,)``: 0 for an ordinary task row; ``f > 0`` for a row of a hard constraint
    (a pin): its damping is ``f`` times the base μ and does not grow with the
    Levenberg–Marquardt factor, so the damped step ``V Jᵀ (J V Jᵀ + M)⁻¹ z`` meets those rows
    (to first order) whatever the other rows ask — it minimises ``‖dq‖²_V⁻¹ + ‖e − J dq‖²_M⁻¹``
    and ``M → 0`` on the pin rows makes them equality constraints.
    """
    if gain == GAIN_CONSTANT:
        return True
    if gain == GAIN_SCALAR:
        # seed A step 3 with the dimensionally consistent scaling: P = c / trace(J V Jᵀ)
        tr = 0.0
        for d in range(jt.shape[0]):
            row = jt[d, r0[d]:r1[d]]
            acc = 0.0
            for r in range(row.shape[0]):
                acc += row[r] * row[r]
            tr += veff[d] * acc
        if not np.isfinite(tr):
            return False
        scal[0] = fp[F_PSCALE] / max(tr, 1e-300)
        return True
    m = L.shape[0]
    gram(jt, veff, r0, r1, L)
    tr = 0.0
    for i in range(m):
        tr += L[i, i]
    if not np.isfinite(tr):
        return False
    # GAIN_FULL: P = (J V Jᵀ + μ I)⁻¹, μ relative to the mean diagonal (units of the task rows²)
    base = fp[F_MUREL] * tr / max(m, 1) + fp[F_MUABS]
    if not (base > 0.0):
        base = 1e-12
    boost = 1.0
    for i in range(m):
        L[i, i] += base * (hard[i] if hard[i] > 0.0 else fp[F_MUFAC])
    ok = cholesky_inplace(L)
    while not ok:  # only when rounding defeats μ: damp more
        gram(jt, veff, r0, r1, L)
        boost *= 10.0
        for i in range(m):
            L[i, i] += boost * base * (hard[i] if hard[i] > 0.0 else fp[F_MUFAC])
        ok = cholesky_inplace(L)
        if boost > 1e300:
            return False
    return True


@nb.njit(**_JIT)
def apply_p(gain, L, Pm, scal, x, out):
    """``out = P x`` for the current gain representation."""
    m = x.shape[0]
    if gain == GAIN_FULL:
        chol_solve(L, x, out)
    elif gain == GAIN_SCALAR:
        s = scal[0]
        for i in range(m):
            out[i] = s * x[i]
    else:
        for i in range(m):
            acc = 0.0
            for j in range(m):
                acc += Pm[i, j] * x[j]
            out[i] = acc


@nb.njit(**_JIT)
def _norm(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return np.sqrt(s)


@nb.njit(**_JIT)
def _converged(se, tol_p, tol_r):
    for i in range(se.shape[0]):
        if se[i, 0] > tol_p or se[i, 1] > tol_r:
            return False
    return True


@nb.njit(**_JIT)
def _limit_and_reference(q, veff, lim_centre, lim_half, ref_q, ref_w, lim_null, use_ref,
                         lim_gain, margin, dq0):
    """Null-space joint motion ``dq0 = gain · (bq − q)`` summed over the tasks; True if any
    entry is non-zero."""
    n = q.shape[0]
    active = False
    for d in range(n):
        g0 = 0.0
        if use_ref:
            g0 += ref_w[d] * (ref_q[d] - q[d])
        if lim_null and lim_half[d] > 0.0:
            # limit avoidance: bq = centre of the range, active in the outer `margin` part of
            # each half-range (smoothly, quadratic ramp); margin >= 1: always active (the seed)
            a = abs(q[d] - lim_centre[d]) / lim_half[d]
            act = 1.0
            if margin < 1.0:
                act = (a - (1.0 - margin)) / margin
                act = 0.0 if act < 0.0 else (1.0 if act > 1.0 else act)
                act = act * act
            g0 += lim_gain * act * (lim_centre[d] - q[d])
        dq0[d] = 0.0 if veff[d] == 0.0 else g0
        if dq0[d] != 0.0:
            active = True
    return active


@nb.njit(**_JIT)
def fik_loop(q, lower, upper, v, model, task, struct, z, z_e, bz, L, Pm, scal, p_q, blocked,
             lim_centre, lim_half, ref_q, ref_w, fp, ip, info, fout, se_out, frames_out):
    """Run FIK iterations from ``q`` (updated in place) until converged, stalled or capped.

    Args:
        q: ``(n,)`` pose, within limits on entry; the final pose on exit (always within limits).
        lower, upper: ``(n,)`` limits (±inf allowed).
        v: ``(n,)`` per-DoF gains V (>= 0).
        model: kinematic model arrays, ``task``: target arrays (see :func:`evaluate`).
        struct: ``(r0 (n,), r1 (n,), site_of_row (ms,), rs1 (n,))``: DoF ``d`` moves the task
            rows ``r0[d]:r1[d]`` (internal row order, see :func:`evaluate`), of which the site
            rows ``r0[d]:rs1[d]``; point-task rows (the centre of mass) are the last ``m − ms``
            and every DoF's run extends over them.
        z: ``(m,)`` filter state of the effector task (in/out).
        z_e: ``(m,)`` the measured error ``z`` last saw (in/out); used when ``ip[I_WARM]``.
        bz: ``(m,)`` filter state of the null-space task (in/out).
        L: ``(m, m)`` Cholesky factor of ``J V Jᵀ + μI`` (GAIN_FULL), in/out.
        Pm: ``(m, m)`` explicit gain (GAIN_CONSTANT), in.
        scal: ``(1,)`` scalar gain (GAIN_SCALAR), in/out.
        p_q: ``(n,)`` pose at which the gain was last computed (in/out).
        blocked: ``(n,)`` bool, DoFs held at a limit (V zeroed), in/out.
        lim_centre, lim_half: ``(n,)`` centre and half-width of finite ranges (half 0: no term).
        ref_q, ref_w: ``(n,)`` reference pose bq and per-DoF gain·weight of the reference task.
        fp, ip: float / int parameters (indices F_* / I_*); ``ip[I_PVALID]`` and ``fp[F_H]``
            are updated (gain valid flag, adapted step h).
        info: ``(4,)`` int64 out: iterations, reason code, gain refreshes, rejected steps.
        fout: ``(2,)`` out: final weighted error norm, final null-space motion (rad; -1 if
            unknown).
        se_out: ``(k, 2)`` out: position (m) and angle (rad) error of every site at the final q.
        frames_out: ``(Rw (J, 3, 3), pw (J, 3), sR (S, 3, 3), sp (S, 3), all_sites (S,))`` out:
            world frames of every joint and of the sites ``all_sites`` at the final q (the FK
            the loop already did, so a caller that draws the pose need not run FK again).
    """
    par = model[0]
    sel = model[9]
    hard = task[6]
    r0 = struct[0]
    r1 = struct[1]
    n = q.shape[0]
    k = sel.shape[0]
    m = z.shape[0]
    nj = par.shape[0]
    # double-buffered like (e, jt, se) when the caller wants the final frames: after an
    # accepted step `work` holds the frames at q (otherwise one buffer: evaluate overwrites all
    # of it before reading)
    work = (np.empty((nj, 3, 3)), np.empty((nj, 3)), np.empty((n, 3)), np.empty((n, 3)),
            np.empty((k, 3, 3)), np.empty((k, 3)))
    work2 = work
    if frames_out[0].shape[0] == nj:
        work2 = (np.empty((nj, 3, 3)), np.empty((nj, 3)), np.empty((n, 3)), np.empty((n, 3)),
                 np.empty((k, 3, 3)), np.empty((k, 3)))
    # double buffers: (e, jt, se) at the current pose and at the trial pose
    ke = se_out.shape[0]  # k sites, then the point tasks
    e = np.empty(m)
    jt = np.zeros((n, m))
    se = np.empty((ke, 2))
    e2 = np.empty(m)
    jt2 = np.zeros((n, m))
    se2 = np.empty((ke, 2))
    q2 = np.empty(n)
    q_best = q.copy()
    veff = np.empty(n)
    for d in range(n):
        veff[d] = 0.0 if blocked[d] else v[d]

    bznew = np.empty(m)
    t = np.empty(m)
    u = np.empty(n)
    dq0 = np.zeros(n)
    bdq = np.zeros(n)
    w = np.empty(m)
    y = np.empty(m)
    dqt = np.empty(n)
    xbuf = np.empty(m)
    changed_dofs = np.empty(n, dtype=np.int64)
    # loop-carried scalars live in fp / ip so that a run split into several calls (the
    # callback path) behaves exactly like one call
    null_scale = fp[F_NULLSCALE]

    A = fp[F_A]
    h = fp[F_H]
    h_min = fp[F_HMIN]
    h_max = fp[F_HMAX]
    tol_p = fp[F_TOLP]
    tol_r = fp[F_TOLR]
    max_step = fp[F_MAXSTEP]
    a_null = fp[F_ANULL]
    h_null = fp[F_HNULL]
    null_tol = fp[F_NULLTOL]
    max_it = ip[I_MAXIT]
    window = ip[I_STALLWIN]
    stall_rel = fp[F_STALLREL]
    variable = ip[I_FORM] == FORM_VARIABLE
    gain = ip[I_GAIN]
    refresh = ip[I_REFRESH]
    lim_null = ip[I_LIMNULL] != 0 and fp[F_LIMGAIN] > 0.0
    use_ref = ip[I_REF] != 0
    has_null = lim_null or use_ref
    wait_null = ip[I_WAITNULL] != 0 and has_null
    # null_tol bounds the remaining distance to the null-space optimum, about the null-space
    # motion divided by the task's gain (the motion is gain × distance)
    gmax = 0.0
    if use_ref:
        for d in range(n):
            if ref_w[d] > gmax:
                gmax = ref_w[d]
    if lim_null and fp[F_LIMGAIN] > gmax:
        gmax = fp[F_LIMGAIN]
    null_tol = null_tol * (gmax if gmax > 0.0 else 1.0)

    evaluate(q, model, task, struct, work, e, jt, se)
    err = _norm(e)
    # ---- filter start. Warm: the change of the measured error since the state was saved
    # (the frame's target displacement, 9e's h·dxd, plus any change of pose) is fed in exactly
    # as within a frame. Cold: "bumpless" — the filter starts at its equilibrium for the
    # current error (variable form: z = e / |A|; fixed form: z = e so the first sample moves);
    # ip[I_COLD] == 1 starts at z = 0 as the source does (its first iteration does not move).
    if ip[I_WARM] != 0:
        for i in range(m):
            z[i] += e[i] - z_e[i]
    elif ip[I_COLD] == 0:
        c = 1.0 / abs(A) if (variable and A != 0.0) else 1.0
        for i in range(m):
            z[i] = c * e[i]
            bz[i] = 0.0
    else:
        for i in range(m):
            z[i] = 0.0
            bz[i] = 0.0

    best_err = err
    best_at = 0
    best_null = np.inf
    best_null_at = 0
    q_best_err = err
    null_motion = np.inf if wait_null else 0.0
    # p_valid False = "recompute P before the next step" (also carried in the solver state)
    p_valid = ip[I_PVALID] != 0 and refresh != REFRESH_ONCE
    if refresh == REFRESH_AUTO and p_valid:
        dmax = 0.0
        for d in range(n):
            dmax = max(dmax, abs(q[d] - p_q[d]))
        if dmax > fp[F_RDQ]:
            p_valid = False
    if gain == GAIN_CONSTANT:
        p_valid = True
    it = 0
    n_ref = 0
    n_rej = 0
    reason = REASON_MAX_ITERATIONS
    fresh = ip[I_FRESH] != 0 and p_valid
    while True:
        conv = _converged(se, tol_p, tol_r)
        if conv and (not wait_null or null_motion <= null_tol):
            reason = REASON_CONVERGED
            break
        if it >= max_it:
            reason = REASON_CONVERGED if conv else REASON_MAX_ITERATIONS
            break
        # stall detection (relative improvement over a window): on the effector error, or on
        # the null-space motion once the effectors are converged
        if not conv:
            if err < best_err * (1.0 - stall_rel):
                best_err = err
                best_at = it
            elif it - best_at >= window:
                reason = REASON_STALLED
                break
        elif wait_null:
            if null_motion < best_null * (1.0 - stall_rel):
                best_null = null_motion
                best_null_at = it
            elif it - best_null_at >= window:
                reason = REASON_CONVERGED
                break

        if (not p_valid or refresh == REFRESH_ALWAYS) and gain != GAIN_CONSTANT:
            if not _refresh(gain, jt, veff, r0, r1, fp, L, Pm, scal, hard):
                reason = REASON_STALLED
                break
            for d in range(n):
                p_q[d] = q[d]
            n_ref += 1
            p_valid = True
            fresh = True

        # ---- the feedback law, with joint-limit blocking (V of a DoF on a limit zeroed)
        for sweep in range(4):
            # 9d: dq = V Jᵀ P z   (9c for the fixed form: dq(t) = Jᵀ P z(t−1), V = I)
            apply_p(gain, L, Pm, scal, z, t)
            jac_t_mul(jt, t, r0, r1, u)
            null_motion = 0.0
            active = False
            if has_null:
                active = _limit_and_reference(q, veff, lim_centre, lim_half, ref_q, ref_w,
                                              lim_null, use_ref, fp[F_LIMGAIN],
                                              fp[F_LIMMARGIN], dq0)
                if not active:
                    # dq0 = 0: 9j with J dq0 = 0 takes bz to (I − J V Jᵀ P) bz ≈ 0 in one
                    # step (exactly 0 for P = (J V Jᵀ)⁻¹); the products are skipped
                    bznew[:] = 0.0
            if active:
                # Null-space tasks (eqs 9f–9j), the bz update taken before its use so that
                # bdq matches this iteration's dq0: bz ← (1 + h A) bz + h (J dq0 − J bdq(bz)),
                # bdq = V Jᵀ P bz; the step gets dq0 − bdq, which moves no effector.
                jac_mul(jt, dq0, r0, r1, w)
                apply_p(gain, L, Pm, scal, bz, t)
                jac_t_mul(jt, t, r0, r1, bdq)
                for d in range(n):
                    bdq[d] *= veff[d]
                jac_mul(jt, bdq, r0, r1, y)
                for i in range(m):
                    bznew[i] = (1.0 + h_null * a_null) * bz[i] + h_null * (w[i] - y[i])
                apply_p(gain, L, Pm, scal, bznew, t)
                jac_t_mul(jt, t, r0, r1, bdq)
                for d in range(n):
                    bdq[d] *= veff[d]
                    nm = abs(dq0[d] - bdq[d])
                    if nm > null_motion:
                        null_motion = nm
                # the null-space step is a secondary task: bounded (its second-order leak
                # into the effectors grows with its square) and shortened first when a step
                # raises the effector error
                ns = null_scale
                if null_motion * ns > fp[F_NULLMAX]:
                    ns = fp[F_NULLMAX] / null_motion
                for d in range(n):
                    dqt[d] = veff[d] * u[d] + ns * (dq0[d] - bdq[d])
            else:
                for d in range(n):
                    dqt[d] = veff[d] * u[d]
            # a DoF on a limit that the step pushes further out is blocked (its V zeroed) and
            # the gain recomputed; a blocked DoF whose unconstrained step points back inside
            # is released (first sweep only, so the active set cannot cycle)
            n_changed = 0
            for d in range(n):
                at_lo = q[d] <= lower[d] + _LIMIT_EPS
                at_hi = q[d] >= upper[d] - _LIMIT_EPS
                if blocked[d]:
                    if sweep == 0:
                        g = v[d] * u[d]
                        if not ((at_lo and g < 0.0) or (at_hi and g > 0.0)):
                            blocked[d] = False
                            veff[d] = v[d]
                            changed_dofs[n_changed] = d
                            n_changed += 1
                elif (at_lo and dqt[d] < 0.0) or (at_hi and dqt[d] > 0.0):
                    blocked[d] = True
                    veff[d] = 0.0
                    changed_dofs[n_changed] = -d - 1
                    n_changed += 1
            if n_changed == 0 or sweep == 3:
                break
            if gain == GAIN_FULL:
                # P = (J V Jᵀ + μI)⁻¹ follows V by rank-one updates of its factor:
                # ± v_d J[:, d] J[:, d]ᵀ per released / blocked DoF (O(m²) each)
                ok = True
                for c in range(n_changed):
                    dd = changed_dofs[c]
                    sign = 1.0
                    if dd < 0:
                        dd = -dd - 1
                        sign = -1.0
                    if r0[dd] == r1[dd] or v[dd] == 0.0:
                        continue
                    xbuf[:] = 0.0
                    sq = np.sqrt(v[dd])
                    for r in range(r0[dd], r1[dd]):
                        xbuf[r] = sq * jt[dd, r]
                    if not chol_rank1(L, xbuf, r0[dd], sign):
                        ok = False
                        break
                if not ok:
                    if not _refresh(gain, jt, veff, r0, r1, fp, L, Pm, scal, hard):
                        break
                    for d in range(n):
                        p_q[d] = q[d]
                    n_ref += 1
                    fresh = True
            elif gain != GAIN_CONSTANT:
                if not _refresh(gain, jt, veff, r0, r1, fp, L, Pm, scal, hard):
                    break
                for d in range(n):
                    p_q[d] = q[d]
                n_ref += 1
                fresh = True

        # Euler step of length h (variable form); bounded per DoF, never non-finite
        hs = h if variable else 1.0
        smax = 0.0
        for d in range(n):
            a = abs(dqt[d])
            if not (a < np.inf):
                smax = np.inf
                break
            if a > smax:
                smax = a
        if not (smax < np.inf):
            reason = REASON_STALLED
            break
        scale = hs if hs * smax <= max_step else max_step / smax
        for d in range(n):
            x = q[d] + scale * dqt[d]
            if x < lower[d]:
                x = lower[d]
            elif x > upper[d]:
                x = upper[d]
            q2[d] = x
        evaluate(q2, model, task, struct, work2, e2, jt2, se2)
        err_new = _norm(e2)
        it += 1
        if not (err_new < np.inf):
            err_new = np.inf
        # a step that leaves every site within tolerance is never undone (null-space motion
        # may perturb converged effectors slightly; the next step corrects it)
        grew = err_new > err * (1.0 + fp[F_REJECT]) + 0.1 * tol_p \
            and not _converged(se2, tol_p, tol_r)
        if (variable and grew and not (fresh and h <= h_min)) or not (err_new < np.inf):
            # variable step: a step that raised the error is undone and h is cut (or a stale
            # gain recomputed first); a non-finite pose is never accepted in either form
            n_rej += 1
            if not (err_new < np.inf) and not variable:
                reason = REASON_STALLED
                break
            if active and null_scale > 1.0 / 16.0:
                null_scale *= 0.5  # first shorten the secondary (null-space) motion
            elif not fresh and gain != GAIN_CONSTANT:
                p_valid = False  # then recompute a stale gain
            elif gain == GAIN_FULL and fp[F_MUFAC] < fp[F_MUFACMAX]:
                # Levenberg–Marquardt globalisation: more damping turns the step from the
                # Gauss–Newton direction towards the gradient Jᵀ e (large residuals,
                # unreachable targets); the factor relaxes again after accepted steps
                fp[F_MUFAC] = min(fp[F_MUFAC] * 10.0, fp[F_MUFACMAX])
                p_valid = False
            else:
                h = max(h * fp[F_CUT], h_min)
            fresh = False
            continue
        if variable:
            # 9e: z ← z + h (A z − J dq) + h dxd, with dxd = e (the remaining displacement)
            # and the linearised achieved displacement h J dq replaced by the measured change
            # of error: z ← (1 + hA) z + h e_old + (e_new − e_old)
            for i in range(m):
                z[i] = (1.0 + h * A) * z[i] + h * e[i] + (e2[i] - e[i])
        else:
            # 9b: z(t) = A z(t−1) + e(t), e(t) measured before this sample's step
            for i in range(m):
                z[i] = A * z[i] + e[i]
        if has_null:
            bz[:] = bznew
        # accept: swap the buffers
        q[:] = q2
        e, e2 = e2, e
        jt, jt2 = jt2, jt
        se, se2 = se2, se
        work, work2 = work2, work
        ratio = err_new / err if err > 0.0 else 0.0
        # auto refresh: J has changed noticeably (a joint moved more than refresh_dq since P
        # was computed) or the contraction of the error is poor for the step taken
        if refresh == REFRESH_AUTO:
            if ratio > fp[F_RRATIO] + (1.0 - hs):
                p_valid = False
            else:
                dmax = 0.0
                for d in range(n):
                    dd = abs(q[d] - p_q[d])
                    if dd > dmax:
                        dmax = dd
                if dmax > fp[F_RDQ]:
                    p_valid = False
        if not grew:
            null_scale = min(null_scale * 2.0, 1.0)
            if variable:
                h = min(h * fp[F_GROW], h_max)
            if fp[F_MUFAC] > 1.0:
                fp[F_MUFAC] = max(fp[F_MUFAC] * 0.1, 1.0)
                p_valid = False
        elif gain == GAIN_FULL and fp[F_MUFAC] < fp[F_MUFACMAX]:
            # fixed form: the sample is kept (a robot cannot undo it), the next is damped more
            fp[F_MUFAC] = min(fp[F_MUFAC] * 10.0, fp[F_MUFACMAX])
            p_valid = False
        err = err_new
        fresh = False
        if err < q_best_err:
            q_best_err = err
            q_best[:] = q

    if reason != REASON_CONVERGED and q_best_err < err:
        # not converged: return the best pose seen (the fixed form takes every step)
        q[:] = q_best
        evaluate(q, model, task, struct, work, e, jt, se)
        err = _norm(e)
    z_e[:] = e
    se_out[:, :] = se
    Rw_o, pw_o, sR_o, sp_o, all_sel = frames_out
    if Rw_o.shape[0] == nj:
        Rw_o[:, :, :] = work[0]
        pw_o[:, :] = work[1]
        sites_one(work[0], work[1], model[6], model[7], model[8], all_sel, sR_o, sp_o)
    info[0] = it
    info[1] = reason
    info[2] = n_ref
    info[3] = n_rej
    ip[I_PVALID] = 1 if p_valid else 0
    ip[I_FRESH] = 1 if fresh else 0
    fp[F_NULLSCALE] = null_scale
    fp[F_H] = h
    fout[0] = err
    fout[1] = null_motion if null_motion < np.inf else -1.0
