"""Correction rows for supported frames: the contact-wrench-cone check linearised for method A
(docs/dynamics.md section 5f, "Correction rows on supported frames").

Method A (:mod:`animik.dynamics.correct`) turns seed D's floor checks into linear rows on the
required wrench ``W`` of every frame with a floor contact. On frames where a support off the
floor is active (a seat, grips, a foot rest) the check is the contact-wrench-cone programme of
:mod:`animik.dynamics.cone` instead: its residual ``r(W)`` (L1, body weights) is a convex,
piecewise-linear function of the wrench, zero inside the cone. At the current wrench ``W0``
the programme's equality duals ``y = dr/dw`` (``B^-T c_B`` at the simplex's optimal basis;
HiGHS's marginals in the tests) give its supporting plane,
``r(W) >= r(W0) + y . (w(W) - w(W0))`` for every ``W`` (a subgradient of a convex function),
with equality while the programme's optimal basis stays the same. The row::

    r_s(W0) + y . dw <= 0

asks the linearised residual of a **shrunken** cone (every friction coefficient times
``friction_safety``, every grip bound times ``grip_safety``: a margin, as the floor rows'
``0.9 mu`` and 1 cm) to vanish; frames already inside the shrunken cone get no row (their
``y`` is 0), as the floor rows leave out the edges the ZMP is far from.

The wrench enters through ``w = ((N - c x F) / mg, F / mg)`` (moments about the centre of
mass ``c``, as the programme has them). Along the correction's modes (root slides, trunk lean):

- a root slide moves the body and its contact points together (the floor soles, the body
  points resting on world surfaces, the hands on the grips): ``w`` does not change statically
  (``dN = dr x F`` and ``dc = dr`` cancel), only through the velocities and accelerations;
- a lean mode moves the centre of mass by 1 m along x or y and no contact point: ``dw`` is the
  wrench's change minus ``dc x F``.

Rows that keep the world surfaces' contacts where they are (the root's vertical shift changes
every body point's gap to a seat or foot rest): a body point touching a world surface stays
within 90 % of the tolerance of it, on either side (it neither leaves it nor goes through
it: the check's ``through support``). Which points, and how far, is read from a **reference
clip** (the filter's input, ``ref_q``), not from each round's pose: rows re-taken from every
round pushed each newly touching point down and nothing pulled the body back, a ratchet
(docs/dynamics.md 5f, "The seat rows without the ratchet").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .cone import _programme, cone_residual
from .filter import DynamicsFilter, wrench_batch
from .inverse import GRAVITY

#: scale of a cone row: a residual of 0.01 body weights (a centre of pressure ~1 cm off at full
#: weight) weighs as the floor rows' 1 cm edge violation (0.1)
ROW_SCALE = 10.0
#: the shrunken cone's friction and grip-bound factors (the floor rows: 0.9 mu)
FRICTION_SAFETY = 0.9
GRIP_SAFETY = 0.9
#: m, each contact area's points moved towards its centroid (the floor rows' polygon margin)
MARGIN = 0.01
#: residual (body weights) of the shrunken cone below which a frame gets no row
ROW_TOL = 1e-7
#: the world-surface rows keep a touching body point within ``ROOM`` times the surface's
#: tolerance of it; a point the reference clip had further out keeps its gap, up to ``CAP``
#: times the tolerance (:func:`_surface_rows`)
ROOM = 0.9
CAP = 0.97


def _shrink(pts: np.ndarray, group: np.ndarray, margin: float) -> np.ndarray:
    """Points ``(F, P, 3)`` moved ``margin`` m towards their group's centroid (at most half
    way): each contact area's polygon shrunk, as the floor rows shrink the support polygon."""
    if margin <= 0:
        return pts
    out = np.array(pts)
    for g in np.unique(group):
        sel = group == g
        ctr = pts[:, sel].mean(axis=1, keepdims=True)
        d = ctr - pts[:, sel]
        n = np.linalg.norm(d, axis=2, keepdims=True)
        out[:, sel] += d * np.minimum(margin / np.maximum(n, 1e-12), 0.5)
    return out


def cone_programmes(skel, chk, frames: np.ndarray, friction_safety: float = 1.0,
                    grip_safety: float = 1.0, margin: float = 0.0):
    """The cone programmes of ``frames`` as :func:`animik.dynamics.zmp.evaluate_wrench` builds
    them for ``chk`` (a :class:`~animik.dynamics.clip.ClipFeasibility` with supports): floor
    soles on the floor plane, the supports' pushing points where the body touches them, the
    grips; friction coefficients and grip bounds scaled by the safety factors, each contact
    area's points moved ``margin`` m towards its centroid.

    Returns:
        ``(cols (F, n, 6), ub (F, n), w_ref (F, 6), weight, sf)``: the programmes' columns
        (moments about the centre of mass, body weights), upper bounds, wrenches, the body
        weight (N) and the supports at those frames
        (:class:`~animik.dynamics.supports.SupportFrames`).
    """
    c = chk.check
    cm = chk.contacts
    sf = chk.supports.at(skel, chk.states.q[frames], frames=frames)
    fpts = np.array(chk.points[frames])
    fpts[..., 2] = chk.floor  # the floor contacts on the floor plane, as the check has them
    fon = c.in_contact[frames][:, cm.point_area]
    push_pts = np.concatenate([_shrink(fpts, cm.point_area, margin),
                               _shrink(sf.push_points, sf.push_support, margin)], axis=1)
    push_n = np.concatenate([np.broadcast_to([0.0, 0.0, 1.0], fpts.shape), sf.push_normals],
                            axis=1)
    push_mu = np.concatenate([np.full(fpts.shape[1], chk.mu), sf.push_mu]) * friction_safety
    sup_p = sf.active[:, sf.push_support]
    sup_g = sf.active[:, sf.grip_support]
    push_on = np.concatenate([fon, sup_p & (True if sf.push_touch is None else sf.push_touch)],
                             axis=1)
    grip_on = sup_g & (True if sf.grip_touch is None else sf.grip_touch)
    weight = max(skel.total_mass * float(np.linalg.norm(GRAVITY)), 1e-12)
    cols, ub, w_ref = _programme(c.wrench[frames], c.com[frames], weight, push_pts, push_n,
                                 push_mu, push_on, sf.grip_points, sf.grip_bound * grip_safety,
                                 grip_on)
    return cols, ub, w_ref, weight, sf


def cone_duals(cols: np.ndarray, ub: np.ndarray, w_ref: np.ndarray, chunk: int = 64
               ) -> tuple[np.ndarray, np.ndarray]:
    """Residuals ``(F,)`` and equality duals ``y = dr/dw (F, 6)`` of the cone programmes
    (:mod:`animik.dynamics.cone`), by HiGHS (``scipy.optimize.linprog``, dual simplex, its
    ``eqlin.marginals``), block-diagonal programmes of ``chunk`` frames."""
    from scipy.optimize import linprog

    F = cols.shape[0]
    eye = np.broadcast_to(np.hstack([np.eye(6), -np.eye(6)]).T, (F, 12, 6))
    cols = np.concatenate([cols, eye], axis=1)
    ub = np.concatenate([ub, np.full((F, 12), np.inf)], axis=1)
    n = cols.shape[1]
    cost = np.concatenate([np.zeros(n - 12), np.ones(12)])
    resid, y = np.empty(F), np.empty((F, 6))
    for a in range(0, F, chunk):
        b = min(F, a + chunk)
        m = b - a
        keep = ub[a:b] > 0
        f_idx, c_idx = np.nonzero(keep)
        vals = cols[a:b][f_idx, c_idx]
        rows = (f_idx[:, None] * 6 + np.arange(6)).ravel()
        A = sp.csc_matrix((vals.ravel(), (rows, np.repeat(np.arange(len(f_idx)), 6))),
                          shape=(6 * m, len(f_idx)))
        bounds = np.stack([np.zeros(len(f_idx)), ub[a:b][f_idx, c_idx]], axis=1)
        r = linprog(np.tile(cost, (m, 1))[f_idx, c_idx], A_eq=A, b_eq=w_ref[a:b].ravel(),
                    bounds=bounds, method="highs-ds", options={"presolve": False})
        if r.status != 0:  # cannot happen (the slacks make every programme feasible)
            raise RuntimeError(f"contact-wrench-cone programme failed: {r.message}")
        y[a:b] = np.asarray(r.eqlin.marginals).reshape(m, 6)
        x = r.x
        sl = c_idx >= n - 12
        slack = np.zeros((m, 12))
        slack[f_idx[sl], c_idx[sl] - (n - 12)] = x[sl]
        resid[a:b] = np.abs(slack[:, :6] - slack[:, 6:]).sum(axis=1)
    return resid, y


def cone_duals_fast(cols: np.ndarray, ub: np.ndarray, w_ref: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cone_duals` by the numba simplex (:mod:`._cone_lp`; HiGHS for a programme it
    does not finish). Where the optimum is degenerate the duals may differ from HiGHS's: both
    are subgradients of the residual."""
    from ._cone_lp import cone_duals_batch

    B = cols.shape[0]
    resid, y = np.empty(B), np.empty((B, 6))
    ok = np.ones(B, dtype=bool)
    cone_duals_batch(np.ascontiguousarray(cols), np.ascontiguousarray(ub),
                     np.ascontiguousarray(w_ref), resid, y, ok)
    bad = np.flatnonzero(~ok)
    if len(bad):
        resid[bad], y[bad] = cone_duals(cols[bad], ub[bad], w_ref[bad])
    return resid, y


def cone_rows(filt: DynamicsFilter, chk, E_all: np.ndarray, Aw_all: np.ndarray,
              md: np.ndarray, eps: float = 1e-6,
              friction_safety: float = FRICTION_SAFETY, grip_safety: float = GRIP_SAFETY,
              margin: float = MARGIN, probe: float = 0.03, ref_q: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Method A's rows on the supported frames of ``chk`` (module docstring), on the same
    unknowns as :func:`animik.dynamics.correct._linearise`'s: each row's frame, its
    coefficients ``(r, 3, k)`` on the frame's ``D0, D1, D2`` window weights and the ``k`` modes
    ``E_all (T, n, k)`` (``Aw_all (T, 6, n)`` the frames' wrench matrices, ``md`` the modes'
    DoFs), and ``rows x <= rhs``. ``ref_q (T, n_dof)``: the (check-smoothed) poses of the
    reference clip whose contacts with world surfaces the rows keep (:func:`_surface_rows`;
    ``None``: each round's own, the ratchet).

    Returns:
        ``(frame (r,), coef (r, 3, k), rhs (r,))``; empty when no supported frame is outside
        the shrunken cone and no world contact needs keeping.
    """
    c = chk.check
    k = E_all.shape[2]
    S = c.support_active.shape[1] if c.support_active.ndim == 2 else 0
    empty = (np.zeros(0, np.int64), np.zeros((0, 3, k)), np.zeros(0))
    if not S or chk.supports is None:
        return empty
    sup = np.flatnonzero(c.support_active.any(axis=1))
    if not len(sup):
        return empty
    skel = filt.skel
    cols, ub, w_ref, weight, sf = cone_programmes(skel, chk, sup, friction_safety, grip_safety,
                                                 margin)
    # probes: the wrench itself and the wrench moved by ``probe`` along the directions the
    # modes push it (moment and force, x and y, both ways); each probe outside the shrunken
    # cone gives a face of it near the wrench (a frame inside keeps rows for the faces it
    # could cross, as the floor rows keep the edges within 10 cm). The numba simplex screens
    # them all (most are deep inside) and gives the duals of those outside.
    F0 = len(sup)
    offs = np.vstack([np.zeros((1, 6)), probe * np.vstack([np.eye(6)[i] * sgn
                                                           for i in (0, 1, 3, 4)
                                                           for sgn in (1.0, -1.0)])])
    nP = len(offs)
    wp3 = w_ref[:, None] + offs[None]  # (F0, nP, 6)
    wp = wp3.reshape(F0 * nP, 6)
    rep = np.repeat(np.arange(F0), nP)
    # one screen per probe on the frames' own programmes: the programmes are independent, so
    # this is the batch over ``cols[rep]`` without its copy (F0 nP x 284 x 6 doubles: 0.27 GB
    # and ~0.8 s on louise's 2,185 supported frames, docs/dynamics.md 6j)
    rb = np.empty((F0, nP))
    for p in range(nP):
        rb[:, p] = _screen(cols, ub, wp3[:, p])[1]
    rb = rb.reshape(F0 * nP)
    need = np.flatnonzero(rb > ROW_TOL)
    out_f, out_c, out_r = [empty[0]], [empty[1]], [empty[2]]
    if len(need):
        r_p, y = cone_duals_fast(cols[rep[need]], ub[rep[need]], wp[need])
        off = offs[need % nP]
        uf, inv = np.unique(rep[need], return_inverse=True)  # frames (into sup) with rows
        fr = sup[uf]
        st = chk.states
        qc, vc, ac = st.q[fr], st.qd[fr], st.qdd[fr]
        Ec = E_all[fr]
        F = len(fr)
        Bd = np.zeros((3, F, 6, k))  # d W / d (q, qd, qdd) along the modes, world wrench
        Bd[2] = np.einsum("frn,fnk->frk", Aw_all[fr][:, :, md], Ec[:, md])
        W0, dWv = wrench_batch(filt, qc, vc, ac, Ec[:, :, 3:])
        Bd[1, :, :, 3:] = np.transpose(dWv, (0, 2, 1))
        # static: the slides move body and contacts together (no change of w); the lean
        # modes by forward differences, minus the centre of mass's own move (1 m along x, y)
        Wp = wrench_batch(filt, np.concatenate([qc + eps * Ec[:, :, 3], qc + eps * Ec[:, :, 4]]),
                          np.tile(vc, (2, 1)), np.tile(ac, (2, 1)))[0].reshape(2, F, 6)
        Fw = c.wrench[fr, 3:]
        for j, e in ((3, np.array([1.0, 0.0, 0.0])), (4, np.array([0.0, 1.0, 0.0]))):
            Bd[0, :, :, j] = (Wp[j - 3] - W0) / eps
            Bd[0, :, :3, j] -= np.cross(e, Fw)
        com = c.com[fr][inv]
        yN, yF = y[:, :3], y[:, 3:]
        # r(w0 + dw) >= r_p + y . (dw - off): that lower bound <= 0
        G = ROW_SCALE * np.concatenate([yN, yF - np.cross(yN, com)], axis=1) / weight
        out_f.append(fr[inv])
        out_c.append(np.einsum("ra,drak->rdk", G, Bd[:, inv]))
        out_r.append(ROW_SCALE * (np.einsum("ra,ra->r", y, off) - r_p))
    sf_ref = None
    if ref_q is not None and sf.gap is not None and sf.gap.shape[1]:
        sf_ref = chk.supports.at(skel, np.asarray(ref_q)[sup], frames=sup)
    kf, kc, kr = _surface_rows(chk, sup, sf, k, sf_ref=sf_ref)
    out_f.append(kf)
    out_c.append(kc)
    out_r.append(kr)
    return np.concatenate(out_f), np.concatenate(out_c), np.concatenate(out_r)


def reference_poses(motion, contacts, window: float) -> np.ndarray:
    """``(T, n_dof)``: the poses :func:`animik.dynamics.clip.check_clip` evaluates for
    ``motion`` with ``window`` (s; its Savitzky-Golay fit, the legs' ball joints from the
    rotation; ``contacts`` the clip's contact model), the
    ``ref_q`` of :func:`cone_rows` -- the gaps to the world surfaces are then the check's."""
    from .clip import clip_states
    from .rotation_rates import leg_joints

    skel = motion.skeleton
    return clip_states(skel, motion.q, motion.fps, window=window,
                       near_lock=leg_joints(skel, contacts.point_joint)).q


def _screen(cols, ub, w_ref):
    """Residuals of the programmes by the numba simplex (``cone_residual``'s solver)."""
    from ._cone_lp import cone_lp_batch

    B = cols.shape[0]
    resid, d = np.empty(B), np.empty((B, 6))
    ok = np.ones(B, dtype=bool)
    cone_lp_batch(np.ascontiguousarray(cols), np.ascontiguousarray(ub),
                  np.ascontiguousarray(w_ref), resid, d, ok)
    resid[~ok] = np.inf  # unfinished (none seen): let HiGHS decide
    return ok, resid


def _surface_rows(chk, sup: np.ndarray, sf, k: int, room: float = ROOM, sf_ref=None,
                  cap: float = CAP) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows keeping body points on the world surfaces they rest on (the root's vertical slide,
    mode 2, moves every body point by ``dz``, seen through ``D0``): ``|g + nz dz| <= bound``.

    Without ``sf_ref``: every point touching now, within ``room`` times the tolerance on both
    sides (main before issue 10's eighth round). Re-linearised every round, that pushed each
    newly touching point below 90 % of the tolerance, and nothing pulled the body back: a
    ratchet (louise's ride 2 cm below the input's, docs/dynamics.md 5f).

    With ``sf_ref`` (the supports at the reference clip's poses, :func:`cone_rows`): which
    points are kept on a surface, and how far from it, is the reference's -- the same rows in
    every round and pass, nothing to ratchet. A point touching in the reference stays on its
    side within ``max(room tol, the reference's gap)`` (at most ``cap`` tol: its gap is never
    pushed below the reference's, short of the tolerance's edge); a point touching now but not
    there (the correction brought the body to the surface) only may not go through it
    (``room`` tol), nothing holds it on.
    """
    if sf.gap is None or not sf.gap.shape[1] or chk.supports is None:
        return np.zeros(0, np.int64), np.zeros((0, 3, k)), np.zeros(0)
    sup_of = sf.push_support
    tol = np.array([chk.supports.supports[i].tolerance for i in sup_of])
    nz = np.array([chk.supports.supports[i].normal[2] for i in sup_of])
    g = sf.gap  # (F, P) NaN where no body part rests on it
    act = sf.active[:, sup_of] & np.isfinite(g) & (np.abs(nz)[None] > 1e-6)
    touch = act & sf.push_touch
    if sf_ref is None:
        bound = {1.0: np.where(touch, room * tol, np.nan), -1.0: np.where(touch, room * tol, np.nan)}
    else:
        gr = np.nan_to_num(sf_ref.gap)
        was = act & sf_ref.push_touch & np.isfinite(sf_ref.gap)
        bound = {1.0: np.where(was, np.minimum(np.maximum(room * tol, gr), cap * tol), np.nan),
                 -1.0: np.where(was, np.minimum(np.maximum(room * tol, -gr), cap * tol),
                                np.where(touch, room * tol, np.nan))}
    frames, coefs, rhs = [], [], []
    # above: g + nz dz <= bound (stays on it); through: -(g + nz dz) <= bound
    for sign in (1.0, -1.0):
        b = bound[sign]
        f, p = np.nonzero(np.isfinite(b))
        if not len(f):
            continue
        cf = np.zeros((len(f), 3, k))
        cf[:, 0, 2] = sign * nz[p]
        frames.append(sup[f])
        coefs.append(100.0 * cf)  # as the floor's contact-keeping rows (correct._contact_rows)
        rhs.append(100.0 * (b[f, p] - sign * g[f, p]))
    if not frames:
        return np.zeros(0, np.int64), np.zeros((0, 3, k)), np.zeros(0)
    return np.concatenate(frames), np.concatenate(coefs), np.concatenate(rhs)


__all__ = ["CAP", "FRICTION_SAFETY", "GRIP_SAFETY", "ROOM", "ROW_SCALE", "cone_duals",
           "cone_duals_fast", "cone_programmes", "cone_residual", "cone_rows", "reference_poses"]
