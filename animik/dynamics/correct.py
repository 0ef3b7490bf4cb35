"""Seed D method A over a whole clip: seed D's three checks on every frame's wrench, made to
hold by a sequential sparse QP on a small correction of the clip, iterated against the
independent clip check (docs/dynamics.md section 5).

The per-frame filter (:mod:`animik.dynamics.filter`) integrates corrected accelerations and
diverges on real mocap (the correction feeds back into the joint tracking; method A has no
look-ahead). Here the same steps act on the clip as a whole:

(a) the kinematic reference is the input clip itself (no tracking loop, nothing to diverge);
(b) the wrench of every frame ``W_t = A_w(q_t) qdd_t + b_t`` is evaluated exactly as
    ``animik feasibility`` evaluates the written clip: Savitzky-Golay derivatives of the poses,
    contacts detected on the poses, the floor estimated from them (:func:`check_clip`);
(c) seed D's three checks as linear inequalities on ``W`` for every frame with a contact:
    each support-polygon edge shrunk by ``margin`` (``a . p <= c`` multiplied by ``F_z > 0``:
    ``a_x (h F_x - N_y) + a_y (N_x + h F_y) <= c F_z``), an octagonal friction pyramid inside
    ``friction_safety * mu``, ``F_z >= 0.1 m g``;
(e) a correction ``dq_t = E_t x_t`` of five modes per frame -- the root's three translations
    and two trunk "lean" modes that move the centre of mass horizontally by 1 m per unit
    without moving the feet -- with ``W`` linearised along them (``A_w E`` for the
    accelerations, finite differences of the wrench pass for the velocities and poses) and the
    accelerations the check will see written ``D2 x`` with ``D2`` the check's own
    Savitzky-Golay operator (:func:`savgol_operator`), so the model of the re-derived
    accelerations is exact. One sparse QP over all frames (:mod:`._penalty_qp`: banded
    Cholesky factors, the exact minimiser)::

        min  1/2 x'(w_pos I + w_vel D1'D1 + w_smooth (I - D0)'(I - D0) + w_ra S2'S2 P) x
             + rho/2 |s|^2
        s.t. G (W + dW/dx x) <= s,  s >= 0        (slacks: always solvable)

    (the ``w_smooth`` term weighs the part of ``x`` the check's Savitzky-Golay fit removes, which
    its derivatives cannot see -- a zig-zag -- and an animator sees as shaking; docs/dynamics.md
    5h; ``w_ra`` = :data:`W_ROOT_ACC` weighs the root slides' (``P``) plain second differences
    ``S2`` in the same rounds: a one-frame pop of the pelvis)

    plus rows that keep the check's contact detection where it is (the root shift moves the
    feet), and rows that keep the trunk's DoFs within the rig's joint limits
    (:func:`.limits.limit_rows`; added to the QP where its answer violates them, docs 8). The
    clip is updated, checked again, and the QP repeated; the best round is kept.
(f) nothing to integrate: the output poses are the input poses plus the correction;
(g) after the first round, a round whose infeasible frames, widened by :data:`WINDOW` each way,
    cover at most :data:`WINDOW_SHARE` of the clip is *windowed*: the same QP with the
    correction zero outside those stretches (their poses kept bit for bit, boundary values of
    the smoothness terms), linearised and solved on them only (docs/dynamics.md 6i).

Frames without any detected contact get no rows: the check then wants a ballistic body, which
no small correction gives; they are reported.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..kinematics import forward_kinematics
from ..motion import Motion
from ..semantics.contacts import ContactParams
from . import _support
from ._blas_threads import one_blas_thread
from ._penalty_qp import FrameRows, solve_penalty_qp
from ._savgol import savgol_matrix, window_frames
from .clip import ClipFeasibility, check_clip
from .cone_rows import cone_rows, reference_poses
from .contacts import ContactModel, contact_model_for_clip
from .filter import DynamicsFilter, FilterOptions, _area_skate, terms_batch, wrench_batch
from .limits import keep_within, limit_excess, limit_rows
from .opspace import _axes_and_mass
from .progress import Progress, geometric, scaled
from .smoothness import correction_jitter, root_slides, trunk_dofs
from .supports import SupportSet
from .zmp import FeasibilityError


@dataclass
class CorrectionResult:
    """The corrected clip and how the iterations went.

    Attributes:
        motion: the corrected clip. check: :func:`check_clip` of it (as the command re-checks).
        history: per round ``(infeasible frames, frames with a contact)``.
        input_check: :func:`check_clip` of the input.
        seconds: time of the correction (s).
    """

    motion: Motion
    check: ClipFeasibility
    history: list[tuple[int, int]]
    seconds: float
    input_check: ClipFeasibility

    def report(self, inp: Motion) -> dict:
        """JSON-ready summary: infeasible frames before / after (with the frames carried by
        nothing -- no floor contact detected, no support active -- which no small correction
        can make ballistic), RMS joint change,
        root shift, effector drift per site, foot skate per contact area, the correction's
        jitter (:func:`animik.dynamics.smoothness.correction_jitter`, against ``inp``), frames/s."""
        skel = inp.skeleton
        out = self.motion
        root = int(np.flatnonzero(skel.parents < 0)[0])
        rot = skel.dof_type == 0
        rot[list(skel.joint_dofs(root))] = False
        dq = out.q - inp.q
        fk_in, fk_out = forward_kinematics(skel, inp.q), forward_kinematics(skel, out.q)
        drift = {}
        for i, name in enumerate(skel.site_names):
            d = np.linalg.norm(fk_out.site_positions[:, i] - fk_in.site_positions[:, i], axis=1)
            drift[name] = {"mean_cm": round(float(d.mean()) * 100, 3),
                           "max_cm": round(float(d.max()) * 100, 3)}
        root_d = np.linalg.norm(fk_out.joint_positions[:, root] - fk_in.joint_positions[:, root],
                                axis=1)
        cm = self.check.contacts
        sk_in = _area_skate(skel, inp.q, self.input_check.check.in_contact, cm)
        sk_out = _area_skate(skel, out.q, self.check.check.in_contact, cm)
        bad = ~self.check.feasible
        T = out.n_frames
        # carried by nothing: no floor contact detected and no support off the floor active
        held = self.check.check.in_contact.any(1) | self.check.check.support_active.any(1)
        return {
            "frames": T, "fps": out.fps,
            "infeasible_frames_input": int((~self.input_check.feasible).sum()),
            "infeasible_frames": int(bad.sum()),
            "infeasible_without_contact": int((bad & ~held).sum()),
            "infeasible_list": [int(i) for i in np.flatnonzero(bad)],
            "rounds": [h[0] for h in self.history],
            "rms_joint_change_deg": round(float(np.degrees(np.sqrt(np.mean(dq[:, rot] ** 2))))
                                          if rot.any() else 0.0, 4),
            "max_joint_change_deg": round(float(np.degrees(np.abs(dq[:, rot]).max()))
                                          if rot.any() else 0.0, 4),
            "root_shift_cm": {"mean": round(float(root_d.mean()) * 100, 3),
                              "max": round(float(root_d.max()) * 100, 3)},
            "effector_drift": drift,
            "foot_skate_cm": {a: {"input": round(float(sk_in[i]) * 100, 3),
                                  "output": round(float(sk_out[i]) * 100, 3)}
                              for i, a in enumerate(cm.names)},
            # second difference of (output - input): what the check's derivatives do not see
            "jitter": correction_jitter(skel, inp.q, out.q, trunk_dofs(skel, cm)),
            # the QP keeps the trunk's limits and the plant passes' leg IK the legs' (docs 8)
            "joint_limits": {"input": limit_excess(skel, inp.q), "output": limit_excess(skel, out.q)},
            "filter_seconds": round(self.seconds, 4),
            "filter_frames_per_second": round(T / max(self.seconds, 1e-9), 1),
        }


def savgol_operator(T: int, fps: float, window: float, deriv: int, order: int = 3) -> sp.csr_matrix:
    """The ``(T, T)`` sparse matrix of :func:`animik.dynamics.clip.clip_states`'s
    Savitzky-Golay derivative (same window rule, ``mode="interp"``): ``D q == savgol(q)``."""
    n = window_frames(T, fps, window, order)
    if n <= order:
        raise FeasibilityError(f"the clip is too short ({T} frames) for the filter")
    return savgol_matrix(T, n, order, deriv, 1.0 / fps)


def _modes_batch(Aw: np.ndarray, S: np.ndarray, root_slides: np.ndarray, upper: np.ndarray,
                 mass: float) -> np.ndarray:
    """Correction modes ``E (T, n, 5)`` of every frame from its wrench matrix ``Aw (T, 6, n)``
    and DoF axes ``S (T, n, 6)``: the root's slides along world x, y, z, and the upper body's
    least-norm motions that move the centre of mass by (1, 0) and (0, 1) m."""
    T, _, n = Aw.shape
    E = np.zeros((T, n, 5))
    Sr = np.transpose(S[:, root_slides, 3:], (0, 2, 1))  # (T, 3, 3) world directions
    E[:, root_slides, :3] = np.linalg.inv(Sr)
    if len(upper):
        Jc = Aw[:, 3:5][:, :, upper] / mass  # (T, 2, u) d com_xy / dq
        A = Jc @ np.transpose(Jc, (0, 2, 1))  # (T, 2, 2), symmetric positive semidefinite
        # its condition number and inverse in closed form (a batched SVD and LAPACK inverse of
        # 2 x 2 matrices cost ~3 ms a round on 344 frames)
        a, b, d = A[:, 0, 0], A[:, 0, 1], A[:, 1, 1]
        half = np.sqrt(0.25 * (a - d) ** 2 + b * b)
        lo, hi = 0.5 * (a + d) - half, 0.5 * (a + d) + half
        ok = lo > hi * 1e-8  # cond(A) < 1e8
        if ok.any():
            det = (a * d - b * b)[ok]
            inv = np.stack([np.stack([d[ok], -b[ok]], -1), np.stack([-b[ok], a[ok]], -1)],
                           -2) / det[:, None, None]
            lean = np.transpose(Jc[ok], (0, 2, 1)) @ inv  # (T', u, 2)
            rows = np.flatnonzero(ok)
            E[rows[:, None], np.asarray(upper)[None, :], 3:] = lean
    return E


# Plant passes with the hip strategy (docs/dynamics.md 5i): they do not lower the infeasible
# count monotonically (the pirouette: 256, 462, 354, 72, 487), so all run and the best is kept.
HIP_PASSES = 5

# s: the hip passes lower the pelvis over a hover (feet a few cm above the floor, no flight)
# eased in and out over this (plant_contacts' ground_hover; docs/dynamics.md 5i, "Hovers").
HOVER_EASE = 0.5

# Weight (m^-2, as w_pos) of a round's correction's part the check's Savitzky-Golay fit removes:
# 1e3 brings the SFU walk's root jitter from 8.8 to 0.8 mm RMS (docs/dynamics.md 5h); 1e4 leaves
# 02_01 three frames short.
W_SMOOTH = 1e3

# Weight (m^-2, as w_pos) of the root slides' plain second differences |x_{t+1} - 2 x_t +
# x_{t-1}|^2 in the smooth rounds (docs/dynamics.md 9, ninth round): the Savitzky-Golay term
# above leaves the root one-frame pops where a limit row stops the trunk's lean (02_01 at the
# capture's glitch, frame 279: a 5.5 cm pelvis_tx pop; root jitter 8.6 -> 1.3 mm RMS with it,
# the nine body95 retargets all still written and within the limits; 1e4 gave the same). Only
# on skeletons whose trunk has joint limits (the raw BVH clips: none, and no rows).
W_ROOT_ACC = 1e3

# Step (m of root or of centre of mass) of the forward differences of d W / d q along the modes;
# a module constant so the round-off study of docs/dynamics.md 6e can vary it (as _QP_TOL).
_FD_EPS = 1e-6
# The QP solver's interior-point tolerance (:func:`solve_penalty_qp`; section 6c). 1e-10 since
# section 6f: with the centrality correctors it still takes fewer steps than the plain
# interior point at 1e-8 (198 against 235 on the SFU walk's, 02_01's and Mixamo's QPs), and its
# answers sit closer to the exact minimiser; mocapbank's --plant route follows the QP's last
# digits (section 6e), and at 1e-10 it takes main's 1e-8 route (one pass, trunk jitter 0.42 deg).
_QP_TOL = 1e-10


# Weight of the joint-limit rows (:func:`.limits.limit_rows`, in rad), as the contact-keeping
# rows' x 100: a limit row's slack costs as much as a wrench row's 100 x larger.
LIMIT_ROW_SCALE = 100.0
# Solves of a round's QP at most while its answer violates limit rows it does not carry yet.
LIMIT_SOLVES = 4


# Windowed rounds (docs/dynamics.md 6i): after a clip's first round, a round whose infeasible
# frames widened by WINDOW seconds each way cover at most WINDOW_SHARE of the clip moves only
# those frames (the others fixed, entering the QP's smoothness terms as boundary values), so it
# costs O(window) instead of O(clip). 0 turns it off (every round on the whole clip).
WINDOW = 1.0
WINDOW_SHARE = 0.5


@dataclass
class _Setup:
    """What every round of :func:`correct_clip` shares: the filter, the modes' DoFs, the
    check's Savitzky-Golay operators, the QP's ``R`` and the pyramid."""

    filt: DynamicsFilter
    slides: np.ndarray
    upper: np.ndarray
    ops: tuple
    R: sp.csc_matrix
    mu_in: float
    dirs: np.ndarray
    ref_q: np.ndarray | None = None  # the reference clip's smoothed poses (.cone_rows)

    @classmethod
    def build(cls, motion: Motion, opt: FilterOptions, cm: ContactModel, w_pos: float,
              w_vel: float, w_smooth: float = 0.0) -> _Setup:
        skel = motion.skeleton
        root = int(np.flatnonzero(skel.parents < 0)[0])
        slides = root_slides(skel)
        if len(slides) != 3:
            raise FeasibilityError(f"the filter needs a free root with 3 slides; {skel.name!r}'s "
                                   f"root {skel.joint_names[root]!r} has {len(slides)}")
        T = motion.n_frames
        ops = tuple(savgol_operator(T, motion.fps, opt.window, d) for d in range(3))
        k = 5
        # the lean moves the trunk (lumbar and thoracic joints; not the arms, neck or fingers,
        # which would swing to move the COM)
        trunk = trunk_dofs(skel, cm)
        R = (w_pos * sp.identity(T * k)
             + w_vel * sp.kron((ops[1].T @ ops[1]).tocsr(), sp.identity(k)))
        if w_smooth > 0:
            # the part of x the check's Savitzky-Golay fit removes (a zig-zag is in the null
            # space of its derivative D1, so w_vel does not see it): same band as D1'D1
            H = (sp.identity(T) - ops[0]).tocsr()
            R = R + w_smooth * sp.kron((H.T @ H).tocsr(), sp.identity(k))
            limited = np.isfinite(skel.lower[trunk]).any() or np.isfinite(skel.upper[trunk]).any()
            if T > 2 and limited:
                # the root slides' one-frame pops where a limit row stops the lean: plain second
                # differences (a skeleton without limits gets no limit rows and no such pops;
                # on the raw clips the term cost the Bandai bow and walk their written files)
                S2 = sp.diags([1.0, -2.0, 1.0], [0, 1, 2], shape=(T - 2, T))
                R = R + W_ROOT_ACC * sp.kron((S2.T @ S2).tocsr(), sp.diags([1.0, 1, 1, 0, 0]))
        R = R.tocsc()
        dirs = np.stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4)], 1)
        return cls(DynamicsFilter(skel, opt, 0.0, contacts=cm), slides, trunk,
                   ops, R, opt.friction_safety * opt.mu * np.cos(np.pi / 8), dirs)

    def step(self, chk: ClipFeasibility, q: np.ndarray, motion: Motion, mode_window: float,
             rho: float, newton_steps: int = 6, movable: np.ndarray | None = None
             ) -> tuple[np.ndarray, bool, str]:
        """One round (:func:`_qp_step`) from ``q``, ``chk`` its check. A QP whose Newton
        matrix is not positive definite (rows of a degenerate linearisation: NaN or huge
        coefficients) ends the rounds like a QP without a solution: the best round so far is
        the result, reported with its infeasible frames (never a traceback)."""
        try:
            return _qp_step(self.filt, chk, q, motion, self.slides, self.upper, self.ops,
                            self.R, self.mu_in, self.dirs, self.filt.weight, mode_window, rho,
                            newton_steps, movable, self.ref_q)
        except np.linalg.LinAlgError:
            return q, False, "failed"


def _better(a: CorrectionResult, b: CorrectionResult) -> CorrectionResult:
    """The result with fewer infeasible frames (``a`` on a tie)."""
    return b if (~b.check.feasible).sum() < (~a.check.feasible).sum() else a


@one_blas_thread
def correct_clip(motion: Motion, options: FilterOptions | None = None,
                 iterations: int = 30, w_pos: float = 1.0, w_vel: float = 0.1,
                 mode_window: float = 0.5, max_change: float = 0.3, rho: float = 1e2,
                 contacts: ContactModel | None = None, patience: int = 4,
                 w_smooth: float = W_SMOOTH,
                 supports: SupportSet | None = None,
                 progress: Progress | None = None, window: float | None = None
                 ) -> CorrectionResult:
    """Method A over a whole clip (module docstring).

    Args:
        motion: input clip (free root with three slides).
        options: ``mu``, ``friction_safety``, ``margin``, ``window`` are used.
        iterations: maximum correction rounds (they also stop after ``patience`` rounds
            without a new best).
        w_pos, w_vel: weights of the correction's size (m^-2) and speed ((m/s)^-2).
        mode_window: the modes are averaged over this time (s).
        max_change: trust region: no DoF may move further than this from the input (rad or
            m); a clip that needs more is reported as not feasible.
        w_smooth: weight (m^-2) of each round's correction's part that the check's
            Savitzky-Golay fit removes, ``|(I - D0) x|^2`` (docs/dynamics.md 5h): the check
            cannot see it, an animator sees it as shaking. When the rounds with it leave
            infeasible frames, they are run again without it and the better result (fewer
            infeasible frames; the smooth one on a tie) is kept.
        supports: supports off the floor (:mod:`.supports`); their frames are checked by the
            contact-wrench cone and get no correction rows.
        progress: ``progress(fraction, message)`` at every round (:mod:`.progress`; the
            frames still infeasible); an exception it raises (a cancel) stops the work.
        window: s; after the first round, a round whose infeasible frames widened by this
            each way cover at most :data:`WINDOW_SHARE` of the clip moves only those frames
            (docs/dynamics.md 6i); ``None``: :data:`WINDOW`; 0: every round on the whole clip.

    Returns:
        :class:`CorrectionResult` (its ``check`` says whether every frame is feasible).

    Raises:
        FeasibilityError: no free root; too short a clip.
    """
    t0 = time.perf_counter()
    args = (motion, options, iterations, w_pos, w_vel, mode_window, max_change, rho, contacts,
            patience)
    split = 0.6 if w_smooth > 0 else 1.0
    res = _rounds(*args, w_smooth, supports=supports, progress=scaled(progress, 0.0, split),
                  window=window)
    if w_smooth > 0 and not res.check.feasible.all():
        res = _better(res, _rounds(*args, 0.0, supports=supports,
                                   progress=scaled(progress, split, 1.0, "no smoothing, "),
                                   window=window))
    if progress is not None:
        progress(1.0, f"{int((~res.check.feasible).sum())} of {motion.n_frames} frames infeasible")
    res.seconds = time.perf_counter() - t0
    return res


def _rounds(motion: Motion, options: FilterOptions | None, iterations: int, w_pos: float,
            w_vel: float, mode_window: float, max_change: float, rho: float,
            contacts: ContactModel | None, patience: int, w_smooth: float,
            supports: SupportSet | None = None, progress: Progress | None = None,
            window: float | None = None, reference: Motion | None = None
            ) -> CorrectionResult:
    """:func:`correct_clip`'s rounds with one smoothness weight (``window``: see there).
    ``reference``: the clip whose contacts with world surfaces the rows keep
    (:mod:`.cone_rows`; default ``motion``; the plant passes give the filter's input, so that
    the passes do not add up)."""
    window = WINDOW if window is None else window
    opt = (options or FilterOptions()).checked()
    t0 = time.perf_counter()
    skel = motion.skeleton
    cm = contacts or contact_model_for_clip(skel, motion.q)
    su = _Setup.build(motion, opt, cm, w_pos, w_vel, w_smooth)
    if supports is not None and len(supports):
        su.ref_q = reference_poses(motion if reference is None else reference, cm, opt.window)
    T = motion.n_frames
    q = np.array(motion.q, dtype=float)
    history: list[tuple[int, int]] = []
    best = (T + 1, q)
    first: ClipFeasibility | None = None
    since_best = 0  # rounds since the best one: the rounds still converge slowly (mocapbank)
    newton_steps = 6  # finite Newton steps before the interior point (see below)
    n_w = int(np.diff(su.ops[0].indptr[:2])[0])  # the check window's frames
    movable = None
    chk = None
    for _ in range(iterations + 1):
        # after a windowed round only the frames near its stretches changed: the check takes
        # the others from the last one (bit for bit the full check, docs/dynamics.md 6j)
        chk = check_clip(Motion(skel, q, motion.fps), mu=opt.mu, window=opt.window, contacts=cm,
                         supports=supports, previous=None if movable is None else chk,
                         keep_fk=window > 0)
        bad = ~chk.feasible
        if progress is not None:  # rounds until they stop are not known: 1 - 0.8^round
            progress(geometric(len(history), 0.8)[0],
                     f"round {len(history) + 1}: {int(bad.sum())} of {T} frames infeasible")
        first = first or chk
        history.append((int(bad.sum()), int(chk.check.in_contact.any(axis=1).sum())))
        if bad.sum() < best[0]:
            best = (int(bad.sum()), q, chk)
            since_best = 0
        else:
            since_best += 1
        held = chk.check.in_contact.any(axis=1) | chk.check.support_active.any(axis=1)
        if not (bad & held).any() or len(history) > iterations or since_best >= patience:
            break  # frames carried by nothing have no rows: nothing more to do
        movable = None
        if window > 0 and len(history) > 1:  # windowed rounds (docs/dynamics.md 6i)
            mov = movable_frames(bad & held, int(round(window * motion.fps)), n_w)
            movable = mov if mov.sum() <= WINDOW_SHARE * T else None
        q2, ok, method = su.step(chk, q, motion, mode_window, rho, newton_steps, movable)
        # A QP that needed the interior point (heavy rows hovering at their bounds) is followed
        # by QPs of the same kind (the rows are the same kinds): the next rounds go straight to
        # the interior point, whose answer does not depend on the Newton steps it would skip.
        newton_steps = 0 if method == "ipm" else newton_steps
        if not ok:
            break
        # Trust region: halve the step until no DoF is further than max_change from the input.
        for _ in range(6):
            if np.abs(q2 - motion.q).max() <= max_change:
                break
            q2 = 0.5 * (q + q2)
        else:
            break
        q = q2
    _, q, chk = best
    return CorrectionResult(Motion(skel, q, motion.fps, dict(motion.meta)),
                            chk._replace(fk=None), history, time.perf_counter() - t0,
                            first._replace(fk=None))


def _moving_average(a: np.ndarray, n: int) -> np.ndarray:
    """Centred moving average over ``n`` samples along axis 0, edges repeated."""
    if n <= 1:
        return a
    lo, hi = n // 2, n - 1 - n // 2
    pad = np.concatenate([np.repeat(a[:1], lo, 0), a, np.repeat(a[-1:], hi, 0)])
    c = np.cumsum(pad, axis=0)
    c = np.concatenate([np.zeros((1,) + a.shape[1:]), c])
    return (c[n:] - c[:-n]) / n


def _windows(D: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """A Savitzky-Golay operator (:func:`savgol_operator`, ``n`` entries a row, on consecutive
    frames) as each frame's first window frame ``(T,)`` and its window weights ``(T, n)``."""
    T = D.shape[0]
    n = D.nnz // T
    if n * T != D.nnz or (np.diff(D.indices.reshape(T, n), axis=1) != 1).any():
        # savgol_matrix stores every weight, zeros included
        raise ValueError("a Savitzky-Golay operator with n consecutive entries a row expected")
    return D.indices[::n].astype(np.int64), D.data.reshape(T, n)


def _contact_rows(filt: DynamicsFilter, chk: ClipFeasibility, fps: float, k: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows that keep the check's contact detection where it is: the root shift moves the
    feet, so on every contact frame the area's lowest point must stay below the release height
    and its horizontal speed (along its current direction) below the release speed; on the
    first frame of a contact, below the entry thresholds (with 10 % room).

    Returns:
        ``(frame, coef, rhs)``: each row's frame ``(r,)`` and its coefficients ``(r, 3, k)`` on
        the frame's ``D0, D1, D2`` window weights and the modes (a :class:`FrameRows`), and
        ``rows x <= rhs``.
    """
    c = chk.check
    cm = chk.contacts
    pts = cm.points(filt.skel, chk.states.q) if chk.points is None else chk.points
    low = np.stack([pts[:, cm.point_area == a, 2].min(axis=1) for a in range(cm.n_areas)], 1)
    low -= chk.floor
    mid = np.stack([pts[:, cm.point_area == a].mean(axis=1) for a in range(cm.n_areas)], 1)
    vel = np.gradient(mid[..., :2], 1.0 / fps, axis=0)  # (T, A, 2) as the detector sees it
    P = ContactParams()
    start = c.in_contact & ~np.vstack([np.zeros((1, cm.n_areas), bool), c.in_contact[:-1]])
    t, a = np.nonzero(c.in_contact)
    first = start[t, a]
    h_lim = 0.9 * np.where(first, P.height, P.release_height)
    v_lim = 0.9 * np.where(first, P.speed, P.release_speed)
    # height: low + dz <= h_lim  (dz = the root's vertical shift, mode 2, as D0 sees it)
    height = np.zeros((len(t), 3, k))
    height[:, 0, 2] = 1.0
    # speed: u . (v + dv) <= v_lim, dv = the root's velocity (only when it is near the limit)
    v = vel[t, a]
    speed = np.hypot(v[:, 0], v[:, 1])
    fast = speed > 0.5 * v_lim
    u = v[fast] / speed[fast, None]
    moving = np.zeros((int(fast.sum()), 3, k))
    moving[:, 1, :2] = u  # through D1
    frame = np.concatenate([t, t[fast]])
    coef = np.concatenate([height, moving])
    rhs = np.concatenate([h_lim - low[t, a], v_lim[fast] - speed[fast]])
    return frame, coef, rhs


def _check_rows(filt: DynamicsFilter, active: np.ndarray, pts: np.ndarray, mu_in: float,
                dirs: np.ndarray, h_floor: float, weight: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed D's three checks as rows ``G W <= lim`` of every frame, batched: the support
    polygon's edges shrunk by the margin, the octagonal friction pyramid, the push row.

    Args:
        active: ``(F, A)`` areas in contact. pts: ``(F, P, 3)`` world contact points.

    Returns:
        ``G (F, P + 9, 6)``, ``lim (F, P + 9)`` (``inf`` on padding rows) and ``ok (F,)``: the
        frames whose polygon has an area (a point or a segment has no ZMP margin to reach:
        reported, not fixed).
    """
    Fn, P = pts.shape[:2]
    poly = np.zeros((Fn, P, 2))
    nv = np.zeros(Fn, dtype=np.int64)
    nan = np.full(Fn, np.nan)  # no ZMP: the kernel only builds the hulls
    _support.margins_batch(np.ascontiguousarray(pts), filt.contacts.point_area,
                           np.ascontiguousarray(active), nan, nan, poly, nv, np.empty(Fn),
                           np.empty((Fn, 2)))
    ok = nv >= 3
    j = np.arange(P)[None, :]
    valid = j < nv[:, None]
    nxt = np.where(j + 1 < nv[:, None], j + 1, 0)
    e = np.take_along_axis(poly, nxt[:, :, None], axis=1) - poly  # edges (counter-clockwise)
    L = np.hypot(e[..., 0], e[..., 1])
    edge = valid & (L >= 1e-9)
    a = np.stack([e[..., 1], -e[..., 0]], axis=-1) / np.where(edge, L, 1.0)[..., None]
    c_e = np.einsum("fja,fja->fj", a, poly)  # a . p <= c_e inside
    cen = (poly * valid[..., None]).sum(axis=1) / np.maximum(nv, 1)[:, None]
    # distance of the vertices' centroid (inside: the hull is convex) to the boundary
    dc = np.where(edge, c_e - np.einsum("fja,fa->fj", a, cen), np.inf).min(axis=1)
    m = np.minimum(filt.opt.margin, 0.5 * np.maximum(dc, 0.0))
    cc = c_e - m[:, None]
    G = np.zeros((Fn, P + len(dirs) + 1, 6))
    lim = np.full((Fn, P + len(dirs) + 1), np.inf)  # padded rows are 0 <= +inf
    # a . p <= cc with p_x f_z = h f_x - n_y, p_y f_z = n_x + h f_y  (f_z > 0)
    G[:, :P] = np.stack([a[..., 1], -a[..., 0], np.zeros_like(cc), a[..., 0] * h_floor,
                         a[..., 1] * h_floor, -cc], axis=-1) / 0.1
    G[:, :P] *= edge[..., None]
    lim[:, :P][edge] = 0.0
    # the octagonal friction pyramid and the push row (the same for every frame)
    G[:, P:-1, 3:5] = dirs
    G[:, P:-1, 5] = -mu_in
    G[:, -1, 5] = -1.0  # push: -f_z <= -0.1 mg (rows scaled by the weight)
    lim[:, P:-1] = 0.0
    lim[:, -1] = -0.1
    return G / weight, lim, ok


def _seen(movable: np.ndarray, lo: np.ndarray, n_w: int) -> np.ndarray:
    """``(T,)`` the frames whose check window (first frame ``lo (T,)``, ``n_w`` frames) holds
    a frame of ``movable (T,)``: the frames whose derivatives a correction on ``movable`` can
    change."""
    cs = np.concatenate([[0], np.cumsum(movable)])
    return cs[np.minimum(lo + n_w, len(movable))] > cs[lo]


def movable_frames(bad: np.ndarray, margin: int, n_w: int) -> np.ndarray:
    """The frames a windowed round may move (docs/dynamics.md 6i): every ``bad`` frame
    ``(T,)`` widened by ``margin`` frames each way, gaps shorter than the check window ``n_w``
    filled, so a check window meets at most one stretch and every stretch is at least
    ``n_w`` frames long (``margin >= n_w``)."""
    T = len(bad)
    margin = max(int(margin), n_w)
    d = np.zeros(T + 1, dtype=np.int64)
    t = np.flatnonzero(bad)
    np.add.at(d, np.maximum(t - margin, 0), 1)
    np.add.at(d, np.minimum(t + margin + 1, T), -1)
    mov = np.cumsum(d)[:T] > 0
    # fill gaps shorter than n_w (between two stretches, not at the clip's ends)
    idx = np.flatnonzero(mov)
    if len(idx):
        gaps = np.flatnonzero(np.diff(idx) > 1)
        for g in gaps:
            if idx[g + 1] - idx[g] - 1 < n_w:
                mov[idx[g] + 1:idx[g + 1]] = True
    return mov


def _clip_windows(lo: np.ndarray, wts: np.ndarray, movable: np.ndarray, frames: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The check windows of ``frames`` restricted to the ``movable`` frames (the others are
    fixed: their weights dropped), each shifted inside its stretch of movable frames so it
    stays ``n_w`` consecutive unknowns (:func:`movable_frames` makes every stretch that long
    and lets a window meet one stretch only).

    Args:
        lo: ``(T,)`` each frame's first window frame. wts: ``(T, D, n_w)`` its weights.
        movable: ``(T,)`` bool. frames: the frames to restrict (each window meets
            ``movable``).

    Returns:
        ``(lo, wts)`` copies with those frames' windows restricted.
    """
    lo, wts = lo.copy(), wts.copy()
    T = len(movable)
    n_w = wts.shape[2]
    # each movable frame's stretch [a, b]
    idx = np.flatnonzero(movable)
    brk = np.flatnonzero(np.diff(idx) > 1)
    starts = np.concatenate([[idx[0]], idx[brk + 1]])
    ends = np.concatenate([idx[brk], [idx[-1]]])
    nxt = np.full(T + 1, T, dtype=np.int64)  # the first movable frame at or after t
    nxt[idx] = idx
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    s = lo[frames]
    m0 = nxt[s]
    seg = np.searchsorted(starts, m0, side="right") - 1
    a, b = starts[seg], ends[seg]
    s2 = np.minimum(np.maximum(s, a), b - n_w + 1)
    j = np.arange(n_w)
    src = j[None, :] + (s2 - s)[:, None]
    ok = (src >= 0) & (src < n_w)
    w = np.take_along_axis(wts[frames], np.clip(src, 0, n_w - 1)[:, None, :], axis=2)
    wts[frames] = np.where(ok[:, None, :], w, 0.0)
    lo[frames] = s2
    return lo, wts


def _linearise(filt, chk, motion, slides, upper, ops, mu_in, dirs, weight, mode_window,
               movable=None, ref_q=None):
    """The rows of one sequential-QP round: the wrench of every contact frame, linearised in
    the modes, made to satisfy seed D's three checks as linear inequalities (support polygon
    edges shrunk by the margin, an octagonal friction pyramid inside ``friction_safety * mu``,
    a pushing normal force), and the rows that keep the check's contact detection.

    Returns:
        ``None`` when no frame has a polygon with an area, else ``(E_all, lo_frame, wts,
        frame_all, coef_all, rhs)``: the modes ``(T, n, 5)`` and the rows ``rows x <= rhs``
        kept factored (a :class:`FrameRows`: each frame's first window unknown ``lo_frame
        (T,)``, its ``D0, D1, D2`` window weights ``wts (T, 3, n_w)``, each row's frame and its
        coefficients ``(r, 3, 5)`` on the weights and the modes).
    """
    D0, D1, D2 = ops
    st = chk.states
    c = chk.check
    T = st.q.shape[0]
    k = 5
    filt.floor = chk.floor
    h_floor = chk.floor
    win = [_windows(D) for D in (D0, D1, D2)]
    n_w = win[0][1].shape[1]
    contact_mask = c.in_contact.any(axis=1) & ~c.support_active.any(axis=1)
    n_ma = max(1, int(round(mode_window * motion.fps)))
    md = np.concatenate([slides, upper])
    if movable is None:
        seen = None
        # Every frame's wrench matrix and DoF axes in one numba call (the modes follow the pose).
        W_all, Aw_all, S_all = terms_batch(filt, st.q, st.qd, st.qdd, full=True)
        E_all = _modes_batch(Aw_all, S_all, slides, upper, filt.skel.total_mass)
    else:
        # A windowed round (docs/dynamics.md 6i): rows only on the frames whose check window
        # meets a movable frame, the modes only where those rows and the moving average
        # below need them.
        seen = _seen(movable, win[0][0], n_w)
        contact_mask &= seen
        ext = np.convolve(seen, np.ones(2 * n_ma + 1), mode="same") > 0
        sub = np.flatnonzero(ext)
        _, Aw_s, S_s = terms_batch(filt, st.q[sub], st.qd[sub], st.qdd[sub], full=True)
        n = st.q.shape[1]
        Aw_all, S_all, E_all = np.zeros((T, 6, n)), np.zeros((T, n, 6)), np.zeros((T, n, k))
        Aw_all[sub], S_all[sub] = Aw_s, S_s
        E_all[sub] = _modes_batch(Aw_s, S_s, slides, upper, filt.skel.total_mass)
    # The modes follow the pose; with IK jitter they jitter too and their own second
    # derivative (E'' x) would dominate the accelerations: smooth them over ``mode_window``.
    # (E is zero outside the root's slides and the trunk's DoFs: only those columns)
    E_all[:, md] = _moving_average(E_all[:, md], n_ma)
    contact = np.flatnonzero(contact_mask)
    Bd = np.zeros((3, T, 6, k))  # d W / d (q, qd, qdd) along the modes
    eps = _FD_EPS
    # d W / d qdd is exact (A_w E); d W / d qd of the lean modes exact too (forward mode through
    # the wrench pass, :func:`wrench_batch`); d W / d q (modes 2..4: a horizontal root shift
    # moves the support polygon with the ZMP): the vertical slide exact, the lean modes by
    # forward differences, all perturbed states of all contact frames in one batch of
    # wrench-only passes.
    F = len(contact)
    Ec = E_all[contact]  # (F, n, k)
    qc, vc, ac = st.q[contact], st.qd[contact], st.qdd[contact]
    Bd[2, contact] = np.einsum("frn,fnk->frk", Aw_all[contact][:, :, md], Ec[:, md])
    # d W / d qd of the root's slides (modes 0..2) is zero: a uniform world velocity of every
    # body changes no force (Galilean invariance, tested). W0 from the same pass as the
    # perturbed states (not W_all's A_w qdd + bias: another rounding of the same sum).
    W0, dWv = wrench_batch(filt, qc, vc, ac, Ec[:, :, 3:])
    Bd[1, contact, :, 3:] = np.transpose(dWv, (0, 2, 1))
    # The root's vertical slide (mode 2) moves every body by the same world vector delta: the
    # force stays, its moment about the origin gains delta x F -- exact, no forward difference
    # (tested against one). The lean modes (3, 4) by forward differences.
    delta = np.einsum("fsa,fs->fa", S_all[contact][:, slides, 3:], Ec[:, slides, 2])
    Bd[0, contact, :3, 2] = np.cross(delta, W0[:, 3:])
    pert = [qc + eps * Ec[:, :, j] for j in range(3, k)]
    Wp = wrench_batch(filt, np.concatenate(pert), np.tile(vc, (len(pert), 1)),
                      np.tile(ac, (len(pert), 1)))[0]
    Wp = Wp.reshape(len(pert), F, 6)
    for j in range(3, k):
        Bd[0, contact, :, j] = (Wp[j - 3] - W0) / eps
    pts = filt.contacts.points(filt.skel, qc) if chk.points is None else chk.points[contact]
    G, lim, ok = _check_rows(filt, c.in_contact[contact], pts, mu_in, dirs, h_floor, weight)
    # supported frames: the contact-wrench cone linearised (.cone_rows; none without supports)
    if seen is None:
        srows = (cone_rows(filt, chk, E_all, Aw_all, md, ref_q=ref_q)
                 if c.support_active.any() else None)
    else:  # a windowed round: the supported frames the window's correction can change
        sa = c.support_active & seen[:, None]
        srows = (cone_rows(filt, chk._replace(check=c._replace(support_active=sa)), E_all,
                           Aw_all, md, ref_q=ref_q) if sa.any() else None)
        if srows is not None:
            keep_s = seen[srows[0]]
            srows = tuple(a[keep_s] for a in srows)
    if not ok.any() and (srows is None or not len(srows[0])):
        return None
    G, lim = G[ok], lim[ok]
    G_frame = contact[ok]
    F, rmax = G.shape[:2]
    frames = np.asarray(G_frame)
    rhs = (lim - np.einsum("fra,fa->fr", G, c.wrench[frames])).ravel()
    # Row (f, r) over the unknowns (s, j) of frame f's window: sum_d D_d[f, s] (G_f B_d,f)[r, j]
    # -- kept factored (a FrameRows: the frame's window weights of D_d, the row's coefficients
    # G_f B_d,f), the accelerations the check will see being D2 x.
    wts = np.stack([w[1] for w in win], axis=1)  # (T, 3, n_w); the windows start alike
    lo = win[0][0]
    coef = np.stack([np.einsum("fra,fak->frk", G, Bd[d, frames]) for d in range(3)], axis=2)
    coef = coef.reshape(F * rmax, 3, k)
    row_frame = np.repeat(frames, rmax)
    # Only rows that can become active within this round's step: ZMP within ~10 cm of an
    # edge (or beyond), friction above half the pyramid, a weak push (value = G W - lim, in
    # weights, 10 cm for the edges); the rest cannot be reached by a small correction and
    # would only slow the solver down.
    keep = np.flatnonzero(np.isfinite(rhs) & (-rhs > -1.0))
    kframe, kcoef, krhs = _contact_rows(filt, chk, motion.fps, k)
    if seen is not None:  # the contact-keeping rows of the frames the window can change
        ks = seen[kframe]
        kframe, kcoef, krhs = kframe[ks], kcoef[ks], krhs[ks]
    # Losing a contact makes a frame unfixable (no rows in flight): these rows x 100, so their
    # slacks cost 10^4 x more than the wrench rows' (the penalty is quadratic).
    frame_all = np.concatenate([row_frame[keep], kframe])
    coef_all = np.concatenate([coef[keep], 100.0 * kcoef])
    rhs = np.concatenate([rhs[keep], 100.0 * krhs])
    if srows is not None and len(srows[0]):
        frame_all = np.concatenate([frame_all, srows[0]])
        coef_all = np.concatenate([coef_all, srows[1]])
        rhs = np.concatenate([rhs, srows[2]])
    if seen is not None:
        # every row's window on movable unknowns only (the fixed frames' weights dropped)
        lo, wts = _clip_windows(lo, wts, movable, np.unique(frame_all))
    return E_all, lo * k, wts, frame_all, coef_all, rhs


def _qp_step(filt, chk, q, motion, slides, upper, ops, R, mu_in, dirs, weight, mode_window, rho,
             newton_steps=6, movable=None, ref_q=None):
    """One sequential-QP round (:func:`_linearise`), with slacks so the QP always has a
    solution. ``newton_steps``: the QP solver's finite Newton steps before its interior point
    (0: the interior point at once). ``movable``: ``(T,)`` the frames the round may move
    (:func:`movable_frames`; the others keep ``q`` bit for bit), ``None``: all. Returns ``(q,
    solved, the solver's method)``."""
    lin = _linearise(filt, chk, motion, slides, upper, ops, mu_in, dirs, weight, mode_window,
                     movable, ref_q)
    if lin is None:
        return q, False, "none"
    E_all, lo_frame, wts, frame_all, coef_all, rhs = lin
    T, k = q.shape[0], 5
    n_w = wts.shape[2]
    # Frames far from every row (long flights, clips without detected contact) only carry
    # R's pull towards zero: solve on the frames within two windows of a row's window (all
    # frames when every frame has a contact, the clips that pass: then nothing changes).
    near = np.zeros(T + 1, dtype=np.int64)
    first = lo_frame[frame_all] // k  # each row's first window frame
    np.add.at(near, np.maximum(first - 2 * n_w, 0), 1)
    np.add.at(near, np.minimum(first + 3 * n_w, T), -1)
    used = np.cumsum(near)[:T] > 0
    if movable is not None:
        used &= movable
    frames_used = np.flatnonzero(used)
    if movable is not None and not len(frames_used):
        return q, False, "none"
    # the trunk's joint limits on the frames the QP moves (docs/dynamics.md 8, "Joint limits in
    # the correction QP"): rows on x_t itself, through a fourth window weight (1 at frame t)
    subset = movable is not None or len(frames_used) < 0.9 * T
    lf, lcoef, lrhs = limit_rows(filt.skel, q, E_all, upper,
                                 frames_used if subset else np.arange(T))
    if len(lf):
        lo_t = lo_frame // k
        if movable is not None:  # their windows on movable unknowns only, as the others'
            lo_t, wts = _clip_windows(lo_t, wts, movable, np.unique(lf))
        # a row's window inside the solved frames (the clip below holds the few others)
        cs = np.concatenate([[0], np.cumsum(used if subset else np.ones(T, bool))])
        inside = ((cs[np.minimum(lo_t[lf] + n_w, T)] - cs[lo_t[lf]] == n_w) & (lf >= lo_t[lf])
                  & (lf < lo_t[lf] + n_w))
        lf, lcoef, lrhs = lf[inside], lcoef[inside], lrhs[inside]
        ident = np.zeros((T, 1, n_w))
        ident[lf, 0, lf - lo_t[lf]] = 1.0
        wts = np.concatenate([wts, ident], axis=1)
        lo_frame = lo_t * k
        coef_all = np.concatenate([coef_all, np.zeros((len(coef_all), 1, k))], axis=1)
    if subset:
        pos = -np.ones(T, dtype=np.int64)
        pos[frames_used] = np.arange(len(frames_used))
        cols = (frames_used[:, None] * k + np.arange(k)[None, :]).ravel()
    # Constraint generation: the QP without limit rows first, then again with the rows its
    # answer violates added (those already violated at x = 0 included), until none is (at most
    # LIMIT_SOLVES solves): rows at a limit that no answer reaches would only slow the solver.
    on = np.zeros(len(lf), dtype=bool)
    for _ in range(LIMIT_SOLVES):
        fr = np.concatenate([frame_all, lf[on]])
        lim_c = np.zeros((int(on.sum()), 4, k))
        lim_c[:, 3] = LIMIT_ROW_SCALE * lcoef[on]
        cf = np.concatenate([coef_all, lim_c]) if len(lf) else coef_all
        b = np.concatenate([rhs, LIMIT_ROW_SCALE * lrhs[on]])
        if subset:
            # a row's window lies inside the kept frames: its columns stay consecutive
            rows = FrameRows(pos[lo_frame // k] * k, wts, fr, cf, len(cols))
            xs, method, _, _ = solve_penalty_qp(R[cols][:, cols], rows, b, rho,
                                                newton_steps=newton_steps, tol=_QP_TOL)
            x = np.zeros(T * k)
            x[cols] = xs
        else:
            x, method, _, _ = solve_penalty_qp(R, FrameRows(lo_frame, wts, fr, cf, T * k), b,
                                               rho, newton_steps=newton_steps, tol=_QP_TOL)
        if not len(lf) or not np.isfinite(x).all():
            break
        viol = ~on & (np.einsum("rk,rk->r", lcoef, x.reshape(T, k)[lf]) > lrhs)
        if not viol.any():
            break
        on |= viol
    if not np.isfinite(x).all():
        return q, False, method
    x = x.reshape(T, k)
    if movable is not None:  # the fixed frames keep q bit for bit
        q2 = q.copy()
        q2[frames_used] += np.einsum("tnk,tk->tn", E_all[frames_used], x[frames_used])
    else:
        q2 = q + np.einsum("tnk,tk->tn", E_all, x)
    # the penalty leaves a limit row's slack (<= 0.001 deg on the retargets), and a frame without
    # rows may still move a little: the trunk DoFs are kept within their limits (or where they
    # were, when already beyond; the fixed frames stay bit for bit)
    return keep_within(filt.skel, q, q2, upper), True, method


@one_blas_thread
def plant_and_correct(motion: Motion, options: FilterOptions | None = None, passes: int = 8,
                      contacts: ContactModel | None = None, w_smooth: float = W_SMOOTH,
                      supports: SupportSet | None = None, progress: Progress | None = None):
    """:func:`animik.dynamics.plant.plant_contacts` then :func:`correct_clip`, repeated on the
    corrected clip (at most ``passes`` times, while the infeasible frames decrease) while any
    frame stays infeasible (the correction's root shift can lift a held foot again; a fresh
    correction from the last one reaches further than its trust region). The best pass (fewest
    infeasible frames) is kept. The passes run with the smoothness weight ``w_smooth``
    (:func:`correct_clip`); when they leave infeasible frames the fallback tiers run: the hip
    strategy (:mod:`animik.dynamics.hip_shift`: each planted clip's pelvis moved over its
    support, the feet held) and the hovers grounded slowly with the hip offset bounded against
    the input (docs/dynamics.md 5i, "Hovers"), then without the smoothness weight; the best
    result is kept (fewest infeasible frames, the earlier tier on a tie).

    The tiers' passes are scheduled (:func:`_run_tiers`, docs/dynamics.md 6h): the plain tier's
    first :data:`PLAIN_FIRST` passes run alone, then the hip, hover and plain tiers take turns,
    a tier whose last pass did not lower its own best waiting while another still does, and the
    first pass that leaves no infeasible frame ends the filter. Each tier's passes are the
    ones it runs alone (a tier starts from ``motion`` and depends on nothing another tier
    does), so a clip one tier makes feasible gets that tier's result without the passes of the
    tiers that cannot. ``progress(fraction, message)``
    (:mod:`.progress`) is called at every pass and round (an exception it raises stops the
    work).

    Returns:
        ``(CorrectionResult, [PlantResult per pass])``; the result's ``input_check`` is the
        check of ``motion`` (the report compares with the input clip).
    """
    opt = (options or FilterOptions()).checked()
    cm = contacts or contact_model_for_clip(motion.skeleton, motion.q)
    t0 = time.perf_counter()
    first = check_clip(motion, mu=opt.mu, window=opt.window, contacts=cm, supports=supports)
    cache: dict = {}
    main = scaled(progress, 0.0, 0.85)
    tiers = [_Tier(motion, opt, passes, cm, w_smooth, supports, cache=cache),
             _Tier(motion, opt, HIP_PASSES, cm, w_smooth, supports, hip=True, cache=cache),
             _Tier(motion, opt, HIP_PASSES, cm, w_smooth, supports, hip=True, hover=True,
                   cache=cache)]
    best, plants = _run_tiers(tiers, main)
    if w_smooth > 0 and not best.check.feasible.all():
        other = _plant_passes(motion, opt, passes, cm, 0.0, supports, cache=cache,
                              progress=scaled(progress, 0.85, 1.0, "no smoothing, "))
        if _better(best, other[0]) is other[0]:
            best, plants = other
    if progress is not None:
        progress(1.0, f"{int((~best.check.feasible).sum())} of {motion.n_frames} frames "
                      "infeasible")
    best.input_check = first
    best.seconds = time.perf_counter() - t0
    return best, plants


# The plain tier's passes that run before any fallback tier: every body95 retarget the plain
# passes make feasible needs at most two (the second re-plants the feet the first correction
# lifted, docs/dynamics.md 5d), so those clips never start a fallback pass.
PLAIN_FIRST = 2


def _run_tiers(tiers: list[_Tier], progress: Progress | None = None):
    """The passes of ``tiers`` (in priority order) interleaved until one leaves no infeasible
    frame or all are done (docs/dynamics.md 6h).

    ``tiers[0]`` runs its first :data:`PLAIN_FIRST` passes alone; then the tiers take turns
    (one pass each, in order, starting with ``tiers[1]``), skipping a tier whose last pass did
    not lower its own best while another tier's did (it runs again when none does). A tier's
    passes do not depend on the others, so each ends where it would alone; a tier that
    reaches 0 infeasible frames wins. When none does, every tier has run all its passes and
    the result is the one with the fewest infeasible frames, the earlier tier on a tie (a
    tier's earlier pass within it).

    ``progress``: reported at every pass and round, pass ``n`` (over all tiers) on the share
    :func:`.progress.geometric` gives it (how many passes run is not known in advance).

    Returns:
        ``(CorrectionResult, [PlantResult per pass of the winning tier])``.
    """
    n = 0
    lead = tiers[0]
    while not lead.done and lead.k < PLAIN_FIRST:
        lead.step(_pass_progress(progress, n, lead))
        n += 1
    turn = 1  # the plain tier has had its passes: the fallback tiers go first
    while not any(t.solved for t in tiers):
        live = [t for t in tiers if not t.done]
        if not live:
            break
        keen = [t for t in live if t.improving] or live
        # the next tier in turn after the last one that ran, among the keen ones
        order = sorted(keen, key=lambda t: (tiers.index(t) - turn) % len(tiers))
        nxt = order[0]
        nxt.step(_pass_progress(progress, n, nxt))
        n += 1
        turn = tiers.index(nxt) + 1
    best = None
    for t in tiers:
        if t.best is not None and (best is None or _better(best.best, t.best) is t.best):
            best = t
    return best.best, best.plants


def _pass_progress(progress: Progress | None, n: int, tier: _Tier) -> Progress | None:
    """``progress`` for the ``n``-th pass overall, ``tier``'s next one (its messages say the
    tier and the pass)."""
    if progress is None:
        return None
    lo, hi = geometric(n)
    prefix = f"{tier.label}pass {tier.k + 1}, "
    progress(lo, f"{prefix.rstrip(', ')}: planting the contacts")
    return scaled(progress, lo, hi, prefix)


class _Tier:
    """One tier of :func:`plant_and_correct`'s passes, run one pass at a time (:meth:`step`).

    ``hip``: the planted clip's pelvis moved over the support first (:mod:`.hip_shift`);
    ``hover`` (with ``hip``): the plant step grounds hovers slowly (``ground_hover``), the
    pelvis's offset is bounded against ``motion`` across passes, the start transient held each
    pass. ``cache``: plant steps shared between tiers (the first pass of the plain, hip and
    no-smoothness tiers plants the same input the same way).
    """

    def __init__(self, motion: Motion, opt: FilterOptions, passes: int, cm: ContactModel,
                 w_smooth: float, supports: SupportSet | None = None, hip: bool = False,
                 hover: bool = False, cache: dict | None = None):
        self.motion, self.opt, self.passes, self.cm = motion, opt, passes, cm
        self.w_smooth, self.supports, self.hip, self.hover = w_smooth, supports, hip, hover
        self.cache = {} if cache is None else cache
        self.cur, self.best, self.plants = motion, None, []
        self.k = 0
        self.done = False
        self.improving = True  # the last pass lowered this tier's best (or none ran yet)
        self.label = "hovers, " if hover else "hip strategy, " if hip else ""

    @property
    def solved(self) -> bool:
        return self.best is not None and bool(self.best.check.feasible.all())

    def _plant(self):
        from .plant import plant_contacts

        opt, k, hover = self.opt, self.k, self.hover
        # the start / end transient is held once, on the input; a later pass holds the feet of
        # frames the correction left without contact (freezing the corrected clip's first
        # frames again adds a kink the check reads as a pull: 02_01, 2 -> 8 frames)
        kw = dict(mu=opt.mu, window=opt.window, supports=self.supports,
                  **({} if k == 0 or hover else {"transient": 0.0}),
                  **({"ground_hover": HOVER_EASE} if hover else {}))
        if k == 0:  # the input planted: the same for every tier with the same settings
            key = ("first", hover)
            if key not in self.cache:
                self.cache[key] = plant_contacts(self.cur, self.cm, **kw)
            return replace(self.cache[key])  # a copy: the hip tiers replace its motion
        return plant_contacts(self.cur, self.cm, **kw)

    def step(self, progress: Progress | None = None) -> None:
        """One pass: plant, (hip shift), correction rounds; updates the tier's best.
        ``progress``: the pass's reports (its rounds)."""
        from .hip_shift import hip_shift

        opt, cm, supports = self.opt, self.cm, self.supports
        pl = self._plant()
        self.k += 1
        self.plants.append(pl)
        if self.hip:  # with hover: the offset bounded against the input, not added up
            base = _root_xy(pl.motion) - _root_xy(self.motion) if self.hover else None
            pl.motion = hip_shift(pl.motion, cm, opt.mu, opt.window, supports=supports,
                                  base=base).motion
        res = _rounds(pl.motion, opt, 30, 1.0, 0.1, 0.5, 0.3, 1e2, cm, 4, self.w_smooth,
                      supports=supports, progress=progress, reference=self.motion)
        bad = ~res.check.feasible
        self.done = self.k >= self.passes
        if self.best is not None and bad.sum() >= (~self.best.check.feasible).sum():
            self.improving = False
            if self.hip:  # the hip passes do not converge monotonically: go on, keep the best
                self.cur = res.motion
            else:
                self.done = True  # no progress: another pass would start from a worse clip
            return
        self.improving = True
        self.best = res
        if not bad.any():
            self.done = True
        self.cur = res.motion  # again from here: re-planted if needed, a fresh correction


def _plant_passes(motion: Motion, opt: FilterOptions, passes: int, cm: ContactModel,
                  w_smooth: float, supports: SupportSet | None = None, hip: bool = False,
                  hover: bool = False, cache: dict | None = None,
                  progress: Progress | None = None):
    """One tier's passes run alone (:class:`_Tier`): ``(best CorrectionResult, plants)``;
    ``progress`` at every pass and round."""
    tier = _Tier(motion, opt, passes, cm, w_smooth, supports, hip=hip, hover=hover, cache=cache)
    while not tier.done:
        tier.step(_pass_progress(progress, tier.k, tier))
    return tier.best, tier.plants


def _root_xy(motion: Motion) -> np.ndarray:
    """``(T, 2)`` m, the root's horizontal slides (world x, y)."""
    sl = root_slides(motion.skeleton)
    Sr = _axes_and_mass(motion.skeleton, motion.q[0])[2][sl, 3:]
    return (motion.q[:, sl] @ Sr)[:, :2]
