"""Seed D method B over a whole clip: contact springs and dampers, the operational-space
inverse inertia, and the joint-acceleration references solved together, then integrated.

Reconstruction (the seed's formulas were images; docs/dynamics.md section 5c):

(a) ``Λ_i⁻¹`` maps a contact force to the acceleration of a contact point. With the joint
    accelerations ``q̈_j`` given (they are what the references ask for), the body answers a
    contact force as one rigid body through its floating base: the base rows of the equations
    of motion ``M_bb q̈_b + M_bj q̈_j + c_b = J_bᵀ f_C`` give
    ``q̈_b = -M_bb⁻¹ (M_bj q̈_j + c_b) + M_bb⁻¹ J_bᵀ f_C``;
(b) hence ``r̈_i = Φ_i q̈_j + φ_i + Λ_i⁻¹ f_C`` with ``Φ_i = J_ij - J_ib M_bb⁻¹ M_bj``,
    ``φ_i = J̇_i q̇ - J_ib M_bb⁻¹ c_b`` and ``Λ_i⁻¹ = J_ib M_bb⁻¹ J_ibᵀ``;
(c) contact forces from springs and dampers at the contact points: normal
    ``f_n = k_S d + k_D u`` (penetration ``d``, its rate ``u``; never pulling), tangential a
    spring to the point where it touched down plus a damper, clipped to
    ``friction_safety * mu * f_n``; summed to ``f_C``;
(d) the pinned links (the support soles of the input) get reference accelerations
    ``r̈_i,ref = k_p (x* - x) - k_d ẋ``; with the balance law
    (:mod:`animik.dynamics.sole_balance`, the default) ``x*`` is where the sole must be for
    its springs to give a capture-point law's wrench -- the only way the motion can move the
    centre of pressure, since the base rows fix the momentum rate to the springs' wrench;
    without it (``SoleBalanceOptions(enabled=False)``) the soles are pinned where they land;
    with the step-aware law (``step``, the default) the goal may run to the input's next
    footprints, the weight leaves a sole before the input lifts it, and the feet the input
    has off the floor track its feet in task space (:func:`_swing_rows`), released into the
    balance law's sole pins at touch-down;
(e) solved together with the joint references ``q̈_ref`` (the input clip, PD-tracked): a
    least-squares problem in ``q̈`` with the six base rows (a)-(c) as equalities -- these rows
    are exactly the ``A_w q̈ + b = W_C`` of method A with ``W_C`` the springs' wrench, so the
    same Cholesky/KKT closed form (:func:`animik.dynamics.filter._constrain`) serves;
(f) semi-implicit Euler with substeps (the springs are stiff), after a settling phase (the
    first frame held, not written) in which the springs take the weight.

Because the floor wrench is by construction a sum of pushing, friction-bounded point forces,
every integrator state is feasible; whether the written clip is (Savitzky-Golay derivatives,
contacts detected afresh) is what the command checks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.linalg as sla

from ..kinematics import forward_kinematics
from ..motion import Motion
from . import _support
from .clip import check_clip, clip_states, detect_clip_contacts
from .contacts import contact_model_for_clip
from .correct import CorrectionResult
from .filter import (
    DynamicsFilter,
    FilterDivergedError,
    FilterOptions,
    Pin,
    _constrain,
    _rotvec,
    _support_gaps,
    momentum_of,
)
from .inverse import momentum, rnea
from .sole_balance import (
    SoleBalanceOptions,
    desired_force,
    small_rotation,
    sole_displacements,
    sole_stiffness,
)
from .zmp import FeasibilityError


@dataclass(frozen=True)
class SpringOptions:
    """Contact springs of method B (c).

    Attributes:
        static_sink: penetration (m) at which the springs of all points carry the body's weight
            (sets ``k_S`` per point from the mass and the number of points).
        damping_ratio: ``k_D`` as a fraction of critical damping of the body on its springs.
        substeps: integration substeps per frame.
        w_pin: weight of the pinned links' acceleration rows against the joint references.
        w_base: weight of the root's reference acceleration (the root is a dragged link of
            the clip); small: the base rows fix the root's acceleration, so tracking it hard
            only whips the joints (measured: 1, 10, 100 all worse on the lumbar sway).
        max_deviation: the simulation stops (diverged) when a DoF is further than this from
            the input (rad or m): the body has fallen.
        settle: the first frame is held still on the springs for this long (s) before the
            clip starts: the body settles onto them (without it the first frames fall the
            static sink freely and the check sees a pulling floor there).
    """

    static_sink: float = 0.001
    damping_ratio: float = 1.0
    substeps: int = 16
    w_pin: float = 0.01
    w_base: float = 0.01
    max_deviation: float = 3.0
    settle: float = 0.5


def _check(o: SpringOptions) -> SpringOptions:
    for name in ("static_sink", "damping_ratio", "w_pin", "w_base", "max_deviation"):
        v = getattr(o, name)
        if not (np.isfinite(v) and v > 0):
            raise FeasibilityError(f"{name} must be a positive number, got {v!r}")
    if not (np.isfinite(o.settle) and o.settle >= 0):
        raise FeasibilityError(f"settle must be >= 0 s, got {o.settle!r}")
    if int(o.substeps) < 1:
        raise FeasibilityError(f"substeps must be >= 1, got {o.substeps!r}")
    return o


def base_inverse_inertia(filt: DynamicsFilter, q: np.ndarray, joints, points,
                         base: np.ndarray) -> np.ndarray:
    """Method B (a): ``Λ⁻¹ = J_b M_bb⁻¹ J_bᵀ`` ``(3k, 3k)`` of points fixed to joints with the
    joint accelerations given (the body answers as one rigid body through its ``base`` DoFs).
    ``points`` ``(k, 3)`` are world positions."""
    M = filt.mass_matrix(q).copy()
    rows = [((filt.S[:, 3:] + np.cross(filt.S[:, :3], x)).T * filt.chain[j])[:, base]
            for j, x in zip(joints, points, strict=True)]
    Jb = np.vstack(rows)
    return Jb @ np.linalg.solve(M[np.ix_(base, base)], Jb.T)


def _balance_pins(filt: DynamicsFilter, bal: SoleBalanceOptions, support: np.ndarray,
                  x: np.ndarray, W: np.ndarray, q: np.ndarray,
                  v: np.ndarray, c_ref: np.ndarray, cd_ref: np.ndarray, cdd_ref: np.ndarray,
                  k_s: float, mass: float, g: float, stay: np.ndarray | None = None,
                  landing: np.ndarray | None = None, settling: bool = False,
                  track: bool = False) -> tuple[dict[int, Pin], np.ndarray]:
    """The sole pins of the balance law (after ``filt.terms``): the support areas' joints
    moved so that their springs give the capture-point law's force (module sole_balance).

    Step-aware (``stay``, ``landing`` given): the centre of pressure is kept on the ``stay``
    areas (those the input keeps down over the next ``lift_lead``) and the goal is clamped
    into the hull of the support and the ``landing`` points ``(k, 2)`` (the input's next
    footprints)."""
    if not support.any():
        return {}, W
    cm = filt.contacts
    # the points the springs can push through soon -- while the input has a foot off the floor
    # (a walk's single support: its lifted heel counted, the law asked for a centre of
    # pressure the springs could not give); with every foot down all points count (the
    # retargeted sway fell at frame 61 with reach on its double support)
    reach = bal.reach if not support.all() else np.inf
    near = x[:, 2] - filt.floor < reach

    def hull(areas: np.ndarray) -> np.ndarray:
        on = areas[cm.point_area]
        pts = x[on & near, :2] if (on & near).any() else x[on, :2]
        out = np.empty((len(pts), 2))
        return out[:_support.hull(np.ascontiguousarray(pts), out)]

    poly = hull(support)
    goal = None
    if stay is not None:
        if stay.any() and not (stay == support).all():
            poly = hull(stay)
        pts = np.vstack([filt.polygon(support), landing]) if len(landing) else filt.polygon(support)
        out = np.empty((len(pts), 2))
        goal = out[:_support.hull(np.ascontiguousarray(pts), out)]
    c, cd = momentum_of(filt, q, v)
    if settling and track:
        # the settle is not written and its wrench is the law's, not the springs': the COM is
        # brought onto the input's (ramped) path, so that the clip starts with the input's COM
        # state -- a walk's first frame moves at ~1 m/s, which one stance sole cannot give
        # the body within the ramp (measured: the capture point 25 cm behind the input's)
        wz = 2.0 * np.pi * bal.com_z_hz
        cdd = cdd_ref + wz * wz * (c_ref - c) + 2.0 * wz * (cd_ref - cd)
        F = mass * (cdd + np.array([0.0, 0.0, g]))
        F[2] = max(F[2], 0.1 * mass * g)
        p = c[:2] - F[:2] * (c[2] - filt.floor) / F[2]
    else:
        F, p = desired_force(c, cd, c_ref, cd_ref, cdd_ref, poly, filt.floor, g, mass, bal,
                             goal, clamp=not (settling and bal.settle_free))
    on = support[cm.point_area]
    sel = np.flatnonzero(on & near if (on & near).any() else on)
    areas = np.flatnonzero(support)
    joints = filt.area_joint[areas]
    sole = np.searchsorted(areas, cm.point_area[sel])
    # All moments about o, the wanted centre of pressure on the floor: about the world origin
    # (a walk 4 m from it) the yaw row mixed in 4 m × (the force error) and the solve twisted
    # the soles against their tangential springs (measured: the spine spun off, 3 rad).
    o = np.array([p[0], p[1], filt.floor])
    K = sole_stiffness(x[sel] - o, sole, filt.pw[joints] - o, k_s, bal.length)
    Wo = np.concatenate([W[:3] - np.cross(o, W[3:]), W[3:]])
    Wd_o = np.concatenate([[0.0, 0.0, Wo[2]], F])  # the force through p; the free (yaw)
    if not bal.vertical and not (settling and track):  # moment is left to the
        # tangential springs; the
        # vertical force too while within vertical_band of the COM height law's: an unloaded
        # stance sole (the springs give nothing) is asked down, an overloaded one up
        Wd_o[5] = float(np.clip(Wo[5], (1.0 - bal.vertical_band) * F[2],
                                (1.0 + bal.vertical_band) * F[2]))
    dl = sole_displacements(K, Wd_o - Wo, bal.length, bal.ridge)
    Wd = np.concatenate([Wd_o[:3] + np.cross(o, Wd_o[3:]), Wd_o[3:]])
    for i in range(len(areas)):  # no sole point moves more than max_step
        r = x[sel[sole == i]] - filt.pw[joints[i]]
        step = np.linalg.norm(dl[i, :3] + np.cross(dl[i, 3:], r), axis=1).max(initial=0.0)
        if step > bal.max_step:
            dl[i] *= bal.max_step / step
    return {int(a): Pin(int(j), filt.pw[j] + d[:3], small_rotation(d[3:]) @ filt.Rw[j])
            for a, j, d in zip(areas, joints, dl, strict=True)}, Wd


def _swing_rows(filt: DynamicsFilter, j: int, x_ref: np.ndarray, R_ref: np.ndarray,
                v_ref: np.ndarray, a_ref: np.ndarray, hz: float,
                max_accel: tuple[float, float] = (np.inf, np.inf),
                gap: float = np.inf, land_accel: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Task-space rows of a swing foot (after ``filt.terms``): joint ``j`` tracks the input's
    pose ``x_ref, R_ref`` with its velocity and acceleration fed forward, PD at ``hz``
    (critically damped). Returns ``(J (6, n), r̈_ref − J̇ q̇ (6,))``."""
    p, Sv, Sw, vp, w, ap, alpha = filt.link_motion(j)
    wn = 2.0 * np.pi * hz
    kp, kd = wn * wn, 2.0 * wn
    ref_v = a_ref + kp * (x_ref - p) + kd * (v_ref - vp) - ap
    ref_w = kp * _rotvec(R_ref @ filt.Rw[j].T) - kd * w - alpha
    # a foot far from its target (the body lagging the input) asks no more than max_accel:
    # the base rows put the reaction of a foot's acceleration into the cheapest joints (the
    # spine), which whipped at the first step (measured, the Bandai walk)
    for r, lim in ((ref_v, max_accel[0]), (ref_w, max_accel[1])):
        nr = float(np.linalg.norm(r))
        if nr > lim:
            r *= lim / nr
    # a descending foot ``gap`` (m) above its clearance brakes so as to stop there: the input's
    # swing feet land at up to 1 m/s and the clipped PD overshot into the springs (measured:
    # a toe 1.1 cm deep at the settle's end, 1.7-2 g, the body thrown off the floor)
    vz = float(vp[2])
    if land_accel > 0.0 and gap < 0.0:
        # a lifting foot still in the floor (the input's toe-off pitches the toe below it):
        # its lowest point is lifted out and its rotation let go until it clears -- tracked,
        # the toe was driven into the springs (measured: 3,162 N under a swing foot, the body
        # thrown into the air)
        ref_v[2] = max(ref_v[2], kp * (-gap) - kd * vz - ap[2])
        return np.vstack([Sv, 0.1 * Sw]), np.concatenate([ref_v, 0.1 * ref_w])
    if land_accel > 0.0 and vz < 0.0:
        need = vz * vz / (2.0 * max(gap, 1e-3)) - ap[2]
        if vz * vz > 2.0 * land_accel * max(gap, 0.0):
            ref_v[2] = max(ref_v[2], need)
    return np.vstack([Sv, Sw]), np.concatenate([ref_v, ref_w])


def _leg_row(filt: DynamicsFilter, j: int, root: int, h_ref: float, hd_ref: float,
             hz: float) -> tuple[np.ndarray, float]:
    """The vertical row of a stance leg (after ``filt.terms``): the height of joint ``j`` over
    the root joint, ``h = z_j − z_root``, tracks the input's ``h_ref`` (velocity ``hd_ref``),
    PD at ``hz``. Returns ``(J (n,), ḧ_ref − J̇ q̇)``."""
    _, Sv, _, vp, _, ap, _ = filt.link_motion(j)
    _, Sr, _, vr, _, ar, _ = filt.link_motion(root)
    wn = 2.0 * np.pi * hz
    h = filt.pw[j, 2] - filt.pw[root, 2]
    hd = vp[2] - vr[2]
    ref = wn * wn * (h_ref - h) + 2.0 * wn * (hd_ref - hd) - (ap[2] - ar[2])
    return Sv[2] - Sr[2], float(ref)


def _schedule(rflags: np.ndarray) -> np.ndarray:
    """``(T, A)``: the first frame ``>= t`` at which area ``a`` is in contact (-1: never)."""
    nxt = np.full(rflags.shape[1], -1, dtype=np.int64)
    out = np.empty(rflags.shape, dtype=np.int64)
    for t in range(len(rflags) - 1, -1, -1):
        nxt[rflags[t]] = t
        out[t] = nxt
    return out


def method_b_clip(motion: Motion, options: FilterOptions | None = None,
                  springs: SpringOptions = SpringOptions(),
                  balance: SoleBalanceOptions | None = None,
                  trace: Callable[[dict[str, Any]], None] | None = None) -> CorrectionResult:
    """Method B over a whole clip (module docstring): simulate, then check the written poses.

    Args:
        motion: input clip (free-floating root). options: ``mu``, ``friction_safety``,
            ``track_hz``, ``pin_hz``, ``w_root``, ``window``, ``max_accel`` are used.
        springs: :class:`SpringOptions`.
        balance: :class:`animik.dynamics.sole_balance.SoleBalanceOptions` (the balance law acting
            on the sole pins' references; ``enabled=False``: the soles pinned where they land).
        trace: called after every simulated frame (settling frames too, ``frame < 0``) with
            ``{"frame", "q", "v", "W"}`` (the springs' wrench about the origin, ``(N, F)``),
            ``"support"`` (the input's contact flags), ``"load"`` (each contact area's spring
            normal force, N), with the step-aware law ``"dxi"`` (the stepping rule's offset,
            m) and, with the balance law, ``"Wd"`` (its wanted wrench): for diagnosing a fall
            (docs/dynamics.md 5c).

    Returns:
        :class:`CorrectionResult` (``check`` is :func:`check_clip` of the output with contacts
        and floor detected afresh, as ``animik feasibility`` does).

    Raises:
        FeasibilityError: bad options, no free root; ContactGeometryError: no contact geometry;
        FilterDivergedError: the simulated body left the input by ``max_deviation`` (fell).
    """
    opt = (options or FilterOptions()).checked()
    sp_ = _check(springs)
    bal = (balance or SoleBalanceOptions()).checked()
    t0 = time.perf_counter()
    skel = motion.skeleton
    root = int(np.flatnonzero(skel.parents < 0)[0])
    base = np.array(list(skel.joint_dofs(root)), dtype=np.int64)
    if len(base) != 6:
        raise FeasibilityError(f"method B needs a free-floating root (6 DoFs); {skel.name!r}'s "
                               f"root {skel.joint_names[root]!r} has {len(base)}")
    cm = contact_model_for_clip(skel, motion.q)
    ref = clip_states(skel, motion.q, motion.fps, window=opt.window)
    flags, floor = detect_clip_contacts(skel, ref.q, motion.fps, None, cm)
    flags = _support_gaps(skel, ref.q, flags, floor, opt.flight_height, cm)
    if bal.enabled:  # the sole pins realise the balance law's wrench at sole_hz
        opt = replace(opt, pin_hz=bal.sole_hz)
    filt = DynamicsFilter(skel, opt, floor, contacts=cm)
    T, n = ref.q.shape
    P = len(cm.point_joint)
    mass, g = skel.total_mass, float(np.linalg.norm(filt.g))
    k_s = mass * g / (sp_.static_sink * P)  # all points together carry the weight at the sink
    k_d = sp_.damping_ratio * 2.0 * np.sqrt(k_s * mass / P)
    mu_s = opt.friction_safety * opt.mu
    dt = 1.0 / motion.fps / sp_.substeps
    wn = 2.0 * np.pi * opt.track_hz
    kp, kd = wn * wn, 2.0 * wn
    # The root is a dragged link of the clip (d): its reference acceleration is weighted
    # w_base; reached only through the joints, since the base rows (a) fix the root's own.
    wq = np.full(n, opt.w_joint)
    wq[base] = sp_.w_base
    H = np.diag(wq)
    # The settling frames: the first pose, still, then ramped smoothly (smoothstep over the
    # last ramp seconds) into the input's first velocity, so that the clip starts in motion.
    R = int(round(sp_.settle * motion.fps))
    tr = min(sp_.settle, 0.4)
    u = np.clip((np.arange(-R, 0) / motion.fps + tr) / tr, 0.0, 1.0)[:, None] if R else np.zeros((0, 1))
    rq = np.concatenate([ref.q[:1] - ref.qd[:1] * tr * (0.5 - u ** 3 + 0.5 * u ** 4), ref.q])
    rqd = np.concatenate([ref.qd[:1] * (3 * u ** 2 - 2 * u ** 3), ref.qd])
    rqdd = np.concatenate([ref.qd[:1] * (6 * u - 6 * u ** 2) / tr, ref.qdd])
    rflags = np.concatenate([np.repeat(flags[:1], R, 0), flags])
    q, v = rq[0].copy(), rqd[0].copy()
    # Start on the springs: the lowest sole point sunk by the static sink (a body dropped onto
    # them from zero depth would start with a free fall and a bounce).
    filt.terms(q, v)
    zs = filt.pw[cm.point_joint, 2] + np.einsum("pb,pb->p", filt.Rw[cm.point_joint, 2],
                                                 cm.point_local)
    lift = float(zs.min()) - floor + sp_.static_sink
    # the root's translation DoF that moves up: among the translations only (a rotation's
    # linear part p × w is large far from the origin -- a walk 4 m away picked a rotation
    # and the body started 4 cm above its springs, in free fall)
    trans = base[(filt.S[base, :3] == 0).all(axis=1)]
    if len(trans):
        kz = trans[int(np.argmax(np.abs(filt.S[trans, 5])))]
        if abs(filt.S[kz, 5]) > 0.5:
            q[kz] -= lift / filt.S[kz, 5]
    out = np.empty((T, n))
    anchor = np.full((P, 3), np.nan)  # (c) tangential spring anchors
    pins: dict[int, Pin] = {}
    if bal.enabled:
        mref = momentum(skel, rq, rqd)
        com_ref, comd_ref = mref.com, mref.com_velocity
        cdd_ref = rnea(skel, rq, rqd, rqdd).wrench[:, 3:] / mass + filt.g
        w_pin = bal.w_sole
        z_off = 0.0
        # the settle tracks the input's COM path only for a clip that starts in motion (a
        # walk); standing and the sway start near rest and settle as before (tracked, the
        # sway was no longer simulated feasible)
        track = bal.settle_track and float(np.hypot(*comd_ref[R, :2])) >= bal.settle_speed
    else:
        w_pin = sp_.w_pin
    step = bal.enabled and bal.step
    if step:  # the input's contact schedule: where its feet go and when they land / lift
        ref_pts = cm.points(skel, rq)
        fk = forward_kinematics(skel, rq)
        sw_p = fk.joint_positions[:, filt.area_joint].copy()
        # a swing foot never aims into the floor: the input's swing feet scrape it (a foot
        # tracked there hits the springs at swing speed -- measured: 2.6 mg, the body bounced)
        low = np.stack([ref_pts[:, cm.point_area == a, 2].min(axis=1)
                        for a in range(cm.n_areas)], axis=1)
        sw_p[..., 2] += np.maximum(floor + bal.clearance - low, 0.0)
        ref_pts = ref_pts[..., :2]
        sw_R = fk.joint_rotations[:, filt.area_joint]
        leg_z = (fk.joint_positions[:, filt.area_joint, 2]
                 - fk.joint_positions[:, root, 2][:, None])
        leg_vz = np.gradient(leg_z, 1.0 / motion.fps, axis=0)
        sw_v = np.gradient(sw_p, 1.0 / motion.fps, axis=0)
        sw_a = np.gradient(sw_v, 1.0 / motion.fps, axis=0)
        next_on = _schedule(rflags)
        last_on = len(rflags) - 1 - _schedule(rflags[::-1])[::-1]  # last frame <= t in contact
        last_on[last_on >= len(rflags)] = -1
        n_prev = int(round(bal.preview * motion.fps))
        n_lift = int(round(bal.lift_lead * motion.fps))
    hold = step and bal.leg_hold > 0
    stay = landing = None
    for t in range(R + T):
        if t >= R:
            out[t - R] = q
        if step:
            sup = rflags[t]
            stay = sup & rflags[t:t + n_lift + 1].all(axis=0)
            soon = np.flatnonzero(~sup & (next_on[t] >= 0) & (next_on[t] - t <= n_prev))
            landing = (np.vstack([ref_pts[next_on[t, a], cm.point_area == a] for a in soon])
                       if len(soon) else np.zeros((0, 2)))
        for sub in range(sp_.substeps):
            filt.terms(q, v)
            # (d) pinned links: the input's contact feet, where they land
            for a in range(cm.n_areas if not bal.enabled else 0):
                if rflags[t, a] and a not in pins:
                    j = int(filt.area_joint[a])
                    pins[a] = Pin(j, filt.pw[j].copy(), filt.Rw[j].copy())
                elif not rflags[t, a]:
                    pins.pop(a, None)
            # (c) spring-damper contact forces at the points
            pj = cm.point_joint
            x = filt.pw[pj] + np.einsum("pab,pb->pa", filt.Rw[pj], cm.point_local)
            w = filt.V[pj, :3]
            xd = filt.V[pj, 3:] + np.cross(w, x)
            d = floor - x[:, 2]
            touching = d > 0
            anchor[~touching] = np.nan
            new = touching & np.isnan(anchor[:, 0])
            anchor[new] = x[new]
            f = np.zeros((P, 3))
            fn = np.maximum(k_s * d - k_d * xd[:, 2], 0.0) * touching
            ft = -k_s * (x[:, :2] - anchor[:, :2]) - k_d * xd[:, :2]
            ft[~touching] = 0.0
            nt = np.linalg.norm(ft, axis=1)
            lim = mu_s * fn
            over = nt > lim
            ft[over] *= (lim[over] / np.maximum(nt[over], 1e-300))[:, None]
            # a slipping point drags its anchor along (Coulomb sliding)
            anchor[over, :2] = x[over, :2] + ft[over] / k_s
            f[:, :2], f[:, 2] = ft, fn
            W = np.concatenate([np.cross(x, f).sum(axis=0), f.sum(axis=0)])
            if bal.enabled:  # (d) the balance law sets the sole pins (sole_balance 1-3)
                if t < R:  # settling: the COM height is whatever the springs give (the input's
                    # soles need not lie flat on the floor), tracked from the clip's start on
                    if not track or (t == 0 and sub == 0):  # tracked: the
                        # height the body starts at (lowered onto its springs) is held
                        z_off = momentum_of(filt, q, v)[0][2] - com_ref[t, 2]
                cr = com_ref[t] + np.array([0.0, 0.0, z_off])
                # the springs' elastic part: the sole PD then sets the wrench's response
                # (the dampers would add a lag k_D / k_S to the loop)
                fe = np.zeros((P, 3))
                fe[:, 2] = k_s * d * touching
                fe[touching, :2] = -k_s * (x[touching, :2] - anchor[touching, :2])
                We = np.concatenate([np.cross(x, fe).sum(axis=0), fe.sum(axis=0)])
                pins, Wd = _balance_pins(filt, bal, rflags[t], x, We, q, v, cr, comd_ref[t],
                                         cdd_ref[t], k_s, mass, g, stay, landing, t < R,
                                         track)
                if t < R:  # settling (not written): the body is held by the law's wrench
                    # while the soles come flat and their springs take it over
                    W = Wd + (W - We)
            # (e) joint references, PD-tracked, clipped; pins as weighted rows
            qdd_ref = rqdd[t] + kp * (rq[t] - q) + kd * (rqd[t] - v)
            np.clip(qdd_ref, -opt.max_accel, opt.max_accel, out=qdd_ref)
            Hs = H.copy()
            gs = H @ qdd_ref
            if hold:  # stance soles their springs do not load
                load = np.bincount(cm.point_area, fn, minlength=cm.n_areas)
                slack = rflags[t] & (load < bal.leg_hold * mass * g)
            for a, pin in pins.items():
                Jp, r, _ = filt.pin_rows(pin)
                if hold and slack[a]:
                    # the stance leg's vertical loop: an unloaded stance sole keeps the input's
                    # leg height under the root (it falls with the body and lands) instead of
                    # its world pin, whose damping of the sole's absolute velocity held it up
                    # while the body fell freely (docs/dynamics.md 5c)
                    Jp, r = Jp.copy(), r.copy()
                    Jp[2], r[2] = _leg_row(filt, pin.joint, root, leg_z[t, a], leg_vz[t, a],
                                           bal.sole_hz)
                Hs += w_pin * (Jp.T @ Jp)
                gs += w_pin * (Jp.T @ r)
            if step:  # the swing feet land where the input lands them, moved by the
                # capture point's offset from the input's (the stepping rule)
                dxi = np.zeros(3)
                if bal.step_gain > 0 and (~rflags[t]).any():
                    c_, cd_ = momentum_of(filt, q, v)
                    w0 = np.sqrt(g / max(c_[2] - floor, 0.05))
                    dxi[:2] = bal.step_gain * ((c_[:2] - com_ref[t, :2])
                                               + (cd_[:2] - comd_ref[t, :2]) / w0)
                    nd = float(np.linalg.norm(dxi))
                    if nd > bal.step_max:
                        dxi *= bal.step_max / nd
                for a in np.flatnonzero(~rflags[t]):
                    gap = float(x[cm.point_area == a, 2].min()) - floor - bal.clearance
                    # the offset grows over the swing (lifted at last_on, landing at
                    # next_on): applied at once it dragged a lifting toe through the floor
                    t0a, t1a = last_on[t, a], next_on[t, a]
                    ph = ((t + sub / sp_.substeps - t0a) / max(t1a - t0a, 1)
                          if t0a >= 0 and t1a >= 0 else 1.0)
                    ph = min(max(ph, 0.0), 1.0)
                    Js, rs = _swing_rows(filt, int(filt.area_joint[a]),
                                         sw_p[t, a] + dxi * ph * ph * (3.0 - 2.0 * ph),
                                         sw_R[t, a],
                                         sw_v[t, a], sw_a[t, a], bal.swing_hz,
                                         (bal.swing_accel, 10.0 * bal.swing_accel),
                                         gap, bal.land_accel)
                    Hs += bal.w_swing * (Js.T @ Js)
                    gs += bal.w_swing * (Js.T @ rs)
            cf = sla.cho_factor(Hs, lower=True, check_finite=False)
            qdd = sla.cho_solve(cf, gs, check_finite=False)
            qdd = _constrain(cf, qdd, filt.Aw, W - filt.bias)  # (a)-(b): base rows with f_C
            v = v + dt * qdd  # (f) semi-implicit Euler
            q = q + dt * v
            dev = np.abs(q - rq[t]).max()
            if not (np.isfinite(qdd).all() and dev < sp_.max_deviation):
                worst = skel.dof_names[int(np.argmax(np.abs(q - rq[t])))]
                raise FilterDivergedError(
                    f"method B diverged at frame {max(t - R, 0)} of {T}"
                    f"{' (while settling)' if t < R else ''}: the simulated body is "
                    f"{dev:.3g} (rad or m) away from the input at {worst!r} (limit max_deviation = "
                    f"{sp_.max_deviation}); the springs cannot hold it (docs/dynamics.md 5c)")
        if trace is not None:
            trace({"frame": t - R, "q": q.copy(), "v": v.copy(), "W": W.copy(),
                   "dxi": dxi.copy() if step else None,
                   "load": np.bincount(cm.point_area, fn, minlength=cm.n_areas),
                   "support": rflags[t].copy(), "Wd": Wd.copy() if bal.enabled else None})
    result = Motion(skel, out, motion.fps, dict(motion.meta))
    seconds = time.perf_counter() - t0
    chk = check_clip(result, mu=opt.mu, window=opt.window, contacts=cm)
    first = check_clip(motion, mu=opt.mu, window=opt.window, contacts=cm)
    hist = [(int((~c.feasible).sum()), int(c.check.in_contact.any(axis=1).sum()))
            for c in (first, chk)]
    return CorrectionResult(result, chk, hist, seconds, first)
