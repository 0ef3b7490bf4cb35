"""Seed D method A over a whole clip: every frame's nearest valid wrench, reached by one
least-squares correction of the clip, iterated against the independent clip check.

The per-frame filter (:mod:`animik.dynamics.filter`) integrates corrected accelerations and
diverges on real mocap (docs/dynamics.md: the correction feeds back into the joint tracking;
method A has no look-ahead). Here the same steps act on the clip as a whole:

(a) the kinematic reference is the input clip itself (no tracking loop, nothing to diverge);
(b) the wrench of every frame ``W_t = A_w(q_t) qdd_t + b_t`` is evaluated exactly as
    ``animik feasibility`` evaluates the written clip: Savitzky-Golay derivatives of the poses,
    contacts detected on the poses, the floor estimated from them (:func:`check_clip`);
(c) seed D's three checks;
(e) for invalid frames the nearest valid wrench ``W^_t`` (:meth:`DynamicsFilter.nearest_valid`,
    polygon shrunk by ``margin``) and a correction ``dq_t = E_t x_t`` of a few modes per frame
    -- the root's three translations and two upper-body "lean" modes that move the centre of
    mass horizontally by 1 m per unit without moving the feet (mass-weighted least-norm over
    the DoFs of joints that carry no contact area) -- solved for all frames at once::

        min_x  sum_t |S (A_w,t E_t qdd(x)_t + G_t E_t x_t - (W^_t - W_t))|^2
               + w_pos |x|^2 + w_vel |xdot|^2

    with ``qdd(x) = D2 x`` the Savitzky-Golay second-derivative operator of the check itself
    (so the linear model of the re-derived accelerations is exact), ``G_t`` the change of the
    gravity moment with the centre of mass (``m J_c dq x (-g)``, lean modes only: a horizontal
    root shift moves the support polygon with the ZMP) and ``S`` scaling forces by the body
    weight and moments by weight x 10 cm. Rows are kept for every frame that has ever been
    invalid (an active set), the clip is updated, checked again, and the loop repeats.
(f) nothing to integrate: the output poses are the input poses plus the correction.

A horizontal root translation changes the ZMP relative to the feet through its acceleration
only (``-z_c/g`` per m/s^2): millimetres of root motion cancel the acceleration noise of IK or
mocap. A static imbalance (the centre of mass beside the feet for a long time) needs the lean.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.ndimage import uniform_filter1d
from scipy.signal import savgol_filter

from ..motion import Motion
from .clip import ClipFeasibility, check_clip
from .contacts import ContactModel, contact_model_for_clip
from .filter import DynamicsFilter, FilterOptions
from .zmp import FeasibilityError

_ROWS = np.array([0, 1, 3, 4, 5])  # wrench rows the checks use (n_z, the free moment, is free)


@dataclass
class CorrectionResult:
    """The corrected clip and how the iterations went.

    Attributes:
        motion: the corrected clip. check: :func:`check_clip` of it (as the command re-checks).
        history: per iteration ``(infeasible frames, active frames)``.
        seconds: time of the correction (s).
    """

    motion: Motion
    check: ClipFeasibility
    history: list[tuple[int, int]]
    seconds: float


def savgol_operator(T: int, fps: float, window: float, deriv: int, order: int = 3) -> sp.csr_matrix:
    """The ``(T, T)`` sparse matrix of :func:`animik.dynamics.clip.clip_states`'s
    Savitzky-Golay derivative (same window rule, ``mode="interp"``): ``D q == savgol(q)``."""
    n = max(int(round(window * fps)) | 1, order + 2 | 1)
    n = min(n, T if T % 2 else T - 1)
    if n <= order:
        raise FeasibilityError(f"the clip is too short ({T} frames) for the filter")
    blocks = []
    for s in range(0, T, 512):
        e = min(T, s + 512)
        eye = np.zeros((T, e - s))
        eye[np.arange(s, e), np.arange(e - s)] = 1.0
        blocks.append(sp.csc_matrix(savgol_filter(eye, n, order, deriv=deriv, delta=1.0 / fps,
                                                  axis=0, mode="interp")))
    D = sp.hstack(blocks).tocsr()
    D.data[np.abs(D.data) < 1e-12 * np.abs(D.data).max()] = 0.0
    D.eliminate_zeros()
    return D


def _residual(filt: DynamicsFilter, chk: ClipFeasibility, scale: np.ndarray) -> float:
    """The least-squares objective the correction lowers: ``sum |S (W^ - W)|^2`` over the
    frames with a contact (``W^`` the nearest valid wrench, polygon shrunk by the margin)."""
    c = chk.check
    filt.floor = chk.floor
    total = 0.0
    for t in np.flatnonzero(c.in_contact.any(axis=1)):
        W = c.wrench[t]
        filt.terms(chk.states.q[t], chk.states.qd[t])
        W2, changed, _ = filt.nearest_valid(W, filt.polygon(c.in_contact[t]))
        if changed:
            total += float(np.sum((scale * (W2 - W))[_ROWS] ** 2))
    return total


def _modes(filt: DynamicsFilter, root_slides: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Correction modes ``E (n, 5)`` at the state of the last ``filt.terms`` call: the root's
    slides along world x, y, z, and the upper body's least-inertia motions that move the centre
    of mass by (1, 0) and (0, 1) m."""
    n = filt.skel.n_dof
    E = np.zeros((n, 5))
    # Root slides: solve for the combination moving the root along each world axis.
    Sr = filt.S[root_slides, 3:].T  # (3, 3) world directions of the slides
    E[root_slides, :3] = np.linalg.solve(Sr, np.eye(3))
    if len(upper):
        m = filt.skel.total_mass
        Jc = filt.Aw[3:5, upper] / m  # d com_xy / dq (the linear momentum rows)
        A = Jc @ Jc.T  # least joint change for the COM shift (trunk DoFs are alike)
        if np.linalg.cond(A) < 1e8:
            E[upper, 3:] = Jc.T @ np.linalg.inv(A)
    return E


def correct_clip(motion: Motion, options: FilterOptions | None = None,
                 iterations: int = 12, w_pos: float = 1e-3, w_vel: float = 1e-3,
                 mode_window: float = 0.5, max_change: float = 0.3,
                 contacts: ContactModel | None = None) -> CorrectionResult:
    """Method A over a whole clip (module docstring).

    Args:
        motion: input clip (free root with three slides).
        options: ``mu``, ``friction_safety``, ``margin``, ``window`` are used.
        iterations: maximum correction rounds.
        w_pos, w_vel: weights of the correction's size (m^-2) and speed ((m/s)^-2).
        mode_window: the modes are averaged over this time (s).
        max_change: trust region: no DoF may move further than this from the input (rad or
            m); a clip that needs more is reported as not feasible.

    Returns:
        :class:`CorrectionResult` (its ``check`` says whether every frame is feasible).

    Raises:
        FeasibilityError: no free root; too short a clip.
    """
    opt = (options or FilterOptions()).checked()
    t0 = time.perf_counter()
    skel = motion.skeleton
    cm = contacts or contact_model_for_clip(skel, motion.q)
    root = int(np.flatnonzero(skel.parents < 0)[0])
    rd = np.array(list(skel.joint_dofs(root)), dtype=np.int64)
    slides = rd[skel.dof_type[rd] == 1]
    if len(slides) != 3:
        raise FeasibilityError(f"the filter needs a free root with 3 slides; {skel.name!r}'s root "
                               f"{skel.joint_names[root]!r} has {len(slides)}")
    # The lean moves the trunk: DoFs of joints that are not the root, carry no contact point
    # below them, and carry at least a quarter of the body's mass (lumbar and thoracic joints;
    # not the arms, neck or fingers, which would swing to move the centre of mass).
    anc = skel.joint_ancestor_mask  # (J, J): [j, a] a is j or an ancestor of j
    carries = anc[np.unique(cm.point_joint)].any(axis=0)
    below = anc.T.astype(float) @ np.asarray(skel.masses)  # mass of each joint's subtree
    trunk = ~carries & (below >= 0.25 * skel.total_mass)
    trunk[root] = False
    upper = np.flatnonzero(trunk[skel.dof_joint] & (skel.dof_type == 0)).astype(np.int64)
    filt = DynamicsFilter(skel, opt, 0.0, contacts=cm)
    T, n = motion.q.shape
    D0 = savgol_operator(T, motion.fps, opt.window, 0).tocoo()
    D1 = savgol_operator(T, motion.fps, opt.window, 1).tocoo()
    D2 = savgol_operator(T, motion.fps, opt.window, 2).tocoo()
    weight = filt.weight
    scale = np.array([10.0, 10.0, 0.0, 1.0, 1.0, 1.0]) / weight  # N m per 10 cm, N
    q = np.array(motion.q, dtype=float)
    active = np.zeros(T, dtype=bool)
    history: list[tuple[int, int]] = []
    k = 5
    R = w_pos * sp.identity(T * k) + w_vel * sp.kron((D1.T @ D1).tocsr(), sp.identity(k))
    for _ in range(iterations + 1):
        chk = check_clip(Motion(skel, q, motion.fps), mu=opt.mu, window=opt.window, contacts=cm)
        bad = ~chk.feasible
        history.append((int(bad.sum()), int(active.sum())))
        if not bad.any() or len(history) > iterations:
            break
        # Frames without any detected contact would need a ballistic body (zero wrench): no
        # small correction gives that, so they get no rows (they are reported, not fixed).
        active |= bad & chk.check.in_contact.any(axis=1)
        if not active.any():
            break
        st = chk.states
        filt.floor = chk.floor
        idx = np.flatnonzero(active)
        B2 = np.zeros((T, 5, k))  # d W / d qdd along the modes (scaled rows)
        B1 = np.zeros((T, 5, k))  # d W / d qd (velocity products), finite differences
        B0 = np.zeros((T, 5, k))  # d W / d q (gravity moment, A_w(q) qdd), finite differences
        r = np.zeros((T, 5))
        E_all = np.zeros((T, n, k))
        for t in range(T):
            filt.terms(st.q[t], st.qd[t])
            E_all[t] = _modes(filt, slides, upper)
        # The modes follow the pose; with IK jitter they jitter too and their own second
        # derivative (E'' x) would dominate the accelerations: smooth them over ``mode_window``.
        E_all = uniform_filter1d(E_all, max(1, int(round(mode_window * motion.fps))), axis=0,
                                 mode="nearest")
        s = scale[_ROWS]
        h = 1e-6
        for t in idx:
            qt, vt, at = st.q[t], st.qd[t], st.qdd[t]
            E = E_all[t]
            filt.terms(qt, vt)
            W = filt.Aw @ at + filt.bias
            poly = filt.polygon(chk.check.in_contact[t])
            W2, _, _ = filt.nearest_valid(W, poly)
            r[t] = s * (W2 - W)[_ROWS]
            B2[t] = s[:, None] * (filt.Aw @ E)[_ROWS]
            for c in range(k):
                filt.terms(qt, vt + h * E[:, c])
                B1[t, :, c] = s * ((filt.Aw @ at + filt.bias - W) / h)[_ROWS]
                if c < 2:  # a horizontal root shift moves the support polygon with the ZMP
                    continue
                filt.terms(qt + h * E[:, c], vt)
                B0[t, :, c] = s * ((filt.Aw @ at + filt.bias - W) / h)[_ROWS]
        # Sparse system: rows (t, 5), columns (s, k); the check sees SG(q), SG'(q), SG''(q).
        rows, cols, vals = [], [], []
        for D, Bt in ((D0, B0), (D1, B1), (D2, B2)):
            ti, si, d = D.row, D.col, D.data
            keep = active[ti]
            ti, si, d = ti[keep], si[keep], d[keep]
            v = d[:, None, None] * Bt[ti]
            vals.append(v.ravel())
            rows.append((ti[:, None, None] * 5 + np.arange(5)[None, :, None]
                         + np.zeros(v.shape, np.int64)).ravel())
            cols.append((si[:, None, None] * k + np.arange(k)[None, None, :]
                         + np.zeros(v.shape, np.int64)).ravel())
        A = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(T * 5, T * k)).tocsr()
        N = (A.T @ A + R).tocsc()
        x = spla.spsolve(N, A.T @ r.ravel()).reshape(T, k)
        dq = np.einsum("tnk,tk->tn", E_all, x)
        # Backtracking on the violation: the model is linear in the accelerations but the
        # contacts, the floor and the support polygon move with the poses.
        base = _residual(filt, chk, scale)
        for alpha in 0.5 ** np.arange(9):
            trial = q + alpha * dq
            if not np.isfinite(trial).all() or np.abs(trial - motion.q).max() > max_change:
                continue
            c2 = check_clip(Motion(skel, trial, motion.fps), mu=opt.mu, window=opt.window,
                            contacts=cm)
            if _residual(filt, c2, scale) < base:
                q = trial
                break
        else:
            history.append((int(bad.sum()), int(active.sum())))
            break
    return CorrectionResult(Motion(skel, q, motion.fps, dict(motion.meta)), chk, history,
                            time.perf_counter() - t0)
