"""Seed D method B tracking method A's clip (docs/dynamics.md 5c, "Method B tracking method
A's clip (issue 10, ninth round)").

Method B on the *input* (:mod:`animik.dynamics.method_b`) has no feasible floor wrench to
follow: its balance law invents one and the walks fall. Here method B simulates on **method
A's planted, corrected clip** (:func:`animik.dynamics.correct.plant_and_correct`), feasible at
every frame by the same check, so a feasible contact wrench ``W*`` exists at every frame:

1. ``W*`` is the check's wrench of A's clip (inverse dynamics of its Savitzky-Golay states),
   shared among the contact points of A's supporting areas (on the floor plane, where the
   check puts the support polygon) as pushing, friction-bounded point forces ``f*`` plus the
   free vertical moment the check allows (:func:`distribute_wrench`).
2. Contact forces are springs and dampers about A's contact points with ``f*`` fed forward,
   ``f = f* + K (x* − x) + D (ẋ* − ẋ)``. ``K`` and ``D`` are operational-space: with ``Λ⁻¹``
   the inverse inertia of the stacked contact points (the joints held at their references,
   the body answering through its floating base, :func:`animik.dynamics.method_b.
   base_inverse_inertia`), ``K = ω² Λ`` and ``D = 2 ζ ω Λ`` on its rigid-body modes, so that
   every mode of the body on its springs is a critically damped oscillator at ``ω``. The
   springs' wrench is then made physical: the nearest wrench of pushing, friction-bounded
   forces at the points (:func:`distribute_wrench` again; clipping each point alone let the
   pulling points' share go and threw the body up).
3. The joint accelerations are the kinematic references (they land on A's Savitzky-Golay
   poses at the next frame); the six base rows ``A_w q̈ + b = W_C`` give the base's
   acceleration (method B (a)-(b): the body answers the springs' wrench through its floating
   base); semi-implicit Euler **at the frame rate**: the written clip's second difference at
   frame ``t`` is exactly ``h² q̈_t``, whose base part comes from a feasible wrench, and the
   check's Savitzky-Golay acceleration is a positive combination of those second differences
   (the 5-frame cubic one: ``(2 Δ²_{t-1} + 3 Δ²_t + 2 Δ²_{t+1}) / 7``), so the check sees an
   average of feasible wrenches where the supports do not change.

The written clip is checked as ``animik feasibility`` checks it and written only if every
frame passes. A body that falls (a supporting point ``max_deviation`` from A's) stops the
simulation: :class:`~animik.dynamics.filter.FilterDivergedError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.optimize as so

from ..motion import Motion
from .clip import check_clip
from .contacts import ContactModel, contact_model_for_clip
from .correct import CorrectionResult, plant_and_correct
from .filter import DynamicsFilter, FilterDivergedError, FilterOptions
from .inverse import GRAVITY
from .method_b import base_inverse_inertia
from .progress import Progress, scaled
from .zmp import FeasibilityError

# moments in the distribution's least squares are divided by this lever (m): rows in N
_LEVER = 0.1


@dataclass(frozen=True)
class TrackOptions:
    """Settings of method B tracking method A's clip.

    Attributes:
        contact_hz: natural frequency of the contact springs' rigid-body modes (Hz), capped
            by ``stability``.
        damping_ratio: ``ζ`` of the springs' modes (1: critical).
        stability: ``ω h`` is kept at or below this (``h`` the frame time: semi-implicit
            Euler at the frame rate).
        ridge: relative ridge of the reference force distribution (spreads ``f*``).
        max_deviation: the simulation stops (the body fell) when a supporting contact point
            is further than this from A's (m).
    """

    contact_hz: float = 2.4
    damping_ratio: float = 1.0
    stability: float = 0.5
    ridge: float = 1e-2
    max_deviation: float = 0.05

    def checked(self) -> TrackOptions:
        for name in ("contact_hz", "damping_ratio", "stability", "max_deviation"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise FeasibilityError(f"{name} must be a positive number, got {v!r}")
        if not (np.isfinite(self.ridge) and self.ridge >= 0):
            raise FeasibilityError(f"ridge must be >= 0, got {self.ridge!r}")
        return self


class ReferenceInfeasibleError(FilterDivergedError):
    """Method A's clip, which method B tracks, is not feasible at every frame."""


@dataclass
class TrackResult:
    """Method B's result and what it tracked.

    Attributes:
        result: :class:`CorrectionResult` of the simulated clip (``check``: the written clip's
            check, ``input_check``: the input's).
        reference: method A's :class:`CorrectionResult` (the tracked clip).
        residual: ``(T,)`` the part of A's wrench the point forces cannot carry, relative to
            the weight (0 where it lies in the points' friction pyramids).
        max_point_deviation: largest distance of a supporting contact point from A's (m).
        projection: ``(T,)`` the part of the springs' wrench the points could not push,
            relative to the weight (moments over 0.1 m).
    """

    result: CorrectionResult
    reference: CorrectionResult
    residual: np.ndarray
    max_point_deviation: float
    projection: np.ndarray


def _cone_generators(mu: float, n: int = 8) -> np.ndarray:
    """``(n, 3)`` edges of an ``n``-sided friction pyramid inscribed in the cone ``mu``."""
    a = 2.0 * np.pi * np.arange(n) / n
    return np.stack([mu * np.cos(a), mu * np.sin(a), np.ones(n)], axis=1)


def distribute_wrench(W: np.ndarray, x: np.ndarray, mu: float, ridge: float = 1e-2,
                      lever: float = _LEVER) -> tuple[np.ndarray, float, float]:
    """Point forces ``(k, 3)`` at ``x (k, 3)`` and a free vertical moment whose wrench (moment
    about the world origin, force) is nearest ``W (6,)``: each force a non-negative sum of the
    edges of an eight-sided friction pyramid inscribed in ``mu`` (pushing, within friction),
    the free moment unbounded (as the check has it: ``torsion_radius`` infinite), with a
    relative ``ridge`` that spreads the force over the points. Moments are divided by
    ``lever`` (m) in the least squares.

    Returns:
        ``(f, free moment (N m), residual)``, the residual the norm of the wrench error (N,
        moments divided by ``lever``).
    """
    k = len(x)
    if k == 0:
        return np.zeros((0, 3)), 0.0, float(np.linalg.norm(W[3:]))
    gen = _cone_generators(mu)
    o = x.mean(axis=0)  # moments about the points' centre: well scaled far from the origin
    r = x - o
    G = np.empty((6, k, len(gen)))  # columns: point p, edge e -> (r_p × g_e / lever, g_e)
    G[:3] = np.cross(r[:, None, :], gen[None, :, :]).transpose(2, 0, 1) / lever
    G[3:] = np.broadcast_to(gen.T[:, None, :], (3, k, len(gen)))
    free = np.zeros((6, 2))
    free[2] = (1.0 / lever, -1.0 / lever)  # ± the free vertical moment
    G = np.hstack([G.reshape(6, -1), free])
    b = np.concatenate([(W[:3] - np.cross(o, W[3:])) / lever, W[3:]])
    if ridge > 0:
        A = np.vstack([G, ridge * np.eye(G.shape[1])])
        rhs = np.concatenate([b, np.zeros(G.shape[1])])
    else:
        A, rhs = G, b
    lam, _ = so.nnls(A, rhs, maxiter=50 * A.shape[1])
    f = lam[:-2].reshape(k, len(gen)) @ gen
    return f, float(lam[-2] - lam[-1]), float(np.linalg.norm(G @ lam - b))


def point_wrench(x: np.ndarray, f: np.ndarray, mz: float = 0.0) -> np.ndarray:
    """Wrench ``(6,)`` (moment about the world origin, force) of forces ``f`` at ``x`` and a
    free vertical moment ``mz``."""
    return np.concatenate([np.cross(x, f).sum(axis=0) + [0.0, 0.0, mz], f.sum(axis=0)])


def spring_wrench(filt: DynamicsFilter, cm: ContactModel, q: np.ndarray, act: np.ndarray,
                  base: np.ndarray, x_ref: np.ndarray, xd_ref: np.ndarray, f_ref: np.ndarray, mz_ref: float,
                  omega: float, zeta: float, mu: float, floor: float
                  ) -> tuple[np.ndarray, float, float]:
    """The contact springs' wrench on the body at pose ``q`` (after ``filt.terms(q, v)``):
    ``f = f_ref + K (x_ref − x) + D (ẋ_ref − ẋ)`` at the contact points ``act`` with
    ``K = ω² Λ``, ``D = 2 ζ ω Λ`` on the rigid-body modes of the stacked points' ``Λ⁻¹``
    (:func:`animik.dynamics.method_b.base_inverse_inertia`), made physical (the nearest
    wrench of pushing forces within ``mu`` on the floor plane, with the free vertical moment
    ``mz_ref``).

    Returns:
        ``(W (6,), largest point deviation (m), the wrench part that could not be pushed)``.
    """
    pj = cm.point_joint[act]
    x = filt.pw[pj] + np.einsum("pab,pb->pa", filt.Rw[pj], cm.point_local[act])
    xd = filt.V[pj, 3:] + np.cross(filt.V[pj, :3], x)
    e = x_ref - x
    Li = base_inverse_inertia(filt, q, pj, x, base)
    lam, U = np.linalg.eigh(0.5 * (Li + Li.T))
    keep = lam > 1e-9 * max(float(lam[-1]), 1e-300)
    Lam = (U[:, keep] / lam[keep]) @ U[:, keep].T
    fb = Lam @ (omega * omega * e.ravel() + 2.0 * zeta * omega * (xd_ref - xd).ravel())
    xf = x.copy()  # the forces act on the floor plane, where the check's polygon is
    xf[:, 2] = floor
    f, mz, cut = distribute_wrench(point_wrench(xf, f_ref + fb.reshape(-1, 3), mz_ref), xf, mu,
                                   0.0)
    return point_wrench(xf, f, mz), float(np.linalg.norm(e, axis=1).max()), cut


def _unwrap(skel, q: np.ndarray) -> np.ndarray:
    rot = skel.dof_type == 0
    out = q.copy()
    if len(q) > 1:
        out[:, rot] = np.unwrap(q[:, rot], axis=0)
    return out


def track_clip(motion: Motion, reference: CorrectionResult, options: FilterOptions | None = None,
               track: TrackOptions = TrackOptions(), contacts: ContactModel | None = None
               ) -> TrackResult:
    """Method B on ``reference`` (method A's feasible clip of ``motion``): module docstring.

    Raises:
        ReferenceInfeasibleError: the reference has infeasible frames; FeasibilityError: bad
        options or no free root; FilterDivergedError: a supporting contact point left A's by
        ``max_deviation`` (the body fell).
    """
    opt = (options or FilterOptions()).checked()
    tr = track.checked()
    t0 = time.perf_counter()
    skel = motion.skeleton
    cm = contacts or reference.check.contacts
    chk = reference.check
    bad = int((~chk.feasible).sum())
    if bad:
        raise ReferenceInfeasibleError(
            f"method B tracks method A's planted clip, which leaves {bad} of "
            f"{len(chk.feasible)} frames infeasible: no feasible contact wrench to track")
    root = int(np.flatnonzero(skel.parents < 0)[0])
    base = np.array(list(skel.joint_dofs(root)), dtype=np.int64)
    if len(base) != 6:
        raise FeasibilityError(f"method B needs a free-floating root (6 DoFs); {skel.name!r}'s "
                               f"root {skel.joint_names[root]!r} has {len(base)}")
    joints = np.setdiff1d(np.arange(skel.n_dof), base)
    h = 1.0 / float(motion.fps)
    st = chk.states  # A's Savitzky-Golay states, as the check has them
    T, n = st.q.shape
    flags = chk.check.in_contact  # (T, A): the supports the check found on A's clip
    mu, floor = opt.mu, chk.floor
    weight = skel.total_mass * float(np.linalg.norm(GRAVITY))
    # 1. A's wrench shared among its supporting points, on the floor plane
    xs = cm.points(skel, st.q)  # (T, P, 3) the springs' anchors: A's points
    xf_ref = xs.copy()
    xf_ref[..., 2] = floor
    P = xs.shape[1]
    fstar = np.zeros((T, P, 3))
    mzstar = np.zeros(T)
    resid = np.zeros(T)
    for t in range(T):
        on = np.flatnonzero(flags[t][cm.point_area])
        if len(on):
            fstar[t, on], mzstar[t], r = distribute_wrench(chk.check.wrench[t], xf_ref[t, on],
                                                           mu, tr.ridge)
            resid[t] = r / weight
    # the references' velocities half a frame back: semi-implicit Euler's velocity before
    # the step at t is (q_t - q_{t-1}) / h
    vh = np.empty_like(st.q)
    vh[1:] = (st.q[1:] - st.q[:-1]) / h
    vh[0] = st.qd[0] - 0.5 * h * st.qdd[0]
    filt = DynamicsFilter(skel, opt, floor, contacts=cm)
    pj_all = cm.point_joint
    xsd = np.empty_like(xs)
    for t in range(T):
        filt.terms(st.q[t], vh[t])
        xsd[t] = filt.V[pj_all, 3:] + np.cross(filt.V[pj_all, :3], xs[t])
    ws = min(2.0 * np.pi * tr.contact_hz, tr.stability / h)
    q, v = st.q[0].copy(), vh[0].copy()
    out = np.empty((T, n))
    out[0] = q
    max_dev = 0.0
    proj = np.zeros(T)
    for t in range(T - 1):
        filt.terms(q, v)
        W = np.zeros(6)
        act = np.flatnonzero(flags[t][cm.point_area])
        if len(act):
            W, dev, proj[t] = spring_wrench(filt, cm, q, act, base, xs[t, act], xsd[t, act],
                                            fstar[t, act], mzstar[t], ws, tr.damping_ratio,
                                            mu, floor)
            proj[t] /= weight
            max_dev = max(max_dev, dev)
            if not dev < tr.max_deviation:
                raise FilterDivergedError(
                    f"method B (tracking method A's clip) fell at frame {t} of {T}: a contact "
                    f"point is {dev * 100:.3g} cm from A's (limit {tr.max_deviation * 100:.3g} "
                    "cm); the springs cannot hold the body on A's support (docs/dynamics.md 5c)")
        # the joints land on A's next pose; the base answers the springs' wrench
        qdd = (st.q[t + 1] - q) / (h * h) - v / h
        if len(act):
            # the free vertical moment (unbounded, as the check has it) keeps the base's yaw
            # on A's: it is the one the joints' accelerations and A's next pose ask for, about
            # the supporting points' centre (without it the walks' pelvis yaw rate swung by
            # 0.3-1 rad/s from frame to frame: the arms' and swing leg's reaction)
            Wq = filt.Aw @ qdd + filt.bias
            o = np.array([*xs[t, act, :2].mean(axis=0), floor])
            W = W.copy()
            W[2] += (Wq[2] - np.cross(o, Wq[3:])[2]) - (W[2] - np.cross(o, W[3:])[2])
        qdd[base] = np.linalg.solve(filt.Aw[:, base],
                                    W - filt.bias - filt.Aw[:, joints] @ qdd[joints])
        v = v + h * qdd
        q = q + h * v
        if not np.isfinite(q).all():
            raise FilterDivergedError(f"method B (tracking method A's clip) diverged at frame "
                                      f"{t} of {T}: the state is not finite")
        out[t + 1] = q
    # a clip holds its joints within the rig's limits: A's smoothed poses, which the joints land
    # on, overshoot a limit A's pose sits on by up to ~0.01 deg (the bow's clavicle); the check
    # below judges the clamped clip
    out[:, joints] = np.clip(out[:, joints], skel.lower[joints], skel.upper[joints])
    result = Motion(skel, out, motion.fps, dict(motion.meta))
    seconds = time.perf_counter() - t0
    check = check_clip(result, mu=opt.mu, window=opt.window, contacts=cm)
    first = reference.input_check
    hist = [(int((~c.feasible).sum()), int(c.check.in_contact.any(axis=1).sum()))
            for c in (first, check)]
    return TrackResult(CorrectionResult(result, check, hist, seconds, first), reference, resid,
                       max_dev, proj)


def method_b_tracking(motion: Motion, options: FilterOptions | None = None,
                      track: TrackOptions = TrackOptions(),
                      progress: Progress | None = None) -> TrackResult:
    """Method A's planted clip (:func:`animik.dynamics.correct.plant_and_correct`), then
    method B tracking it (:func:`track_clip`).

    Raises:
        ReferenceInfeasibleError: method A leaves infeasible frames; FilterDivergedError: the
        simulated body fell; as :func:`track_clip` otherwise.
    """
    opt = (options or FilterOptions()).checked()
    cm = contact_model_for_clip(motion.skeleton, motion.q)
    ref, _ = plant_and_correct(motion, opt, contacts=cm,
                               progress=scaled(progress, 0.0, 0.9, "method A: "))
    out = track_clip(motion, ref, opt, track, cm)
    if progress is not None:
        progress(1.0, "method B simulated")
    return out
