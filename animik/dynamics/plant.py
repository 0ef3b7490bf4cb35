"""Plant the feet of frames the check finds without any contact (docs/dynamics.md section 5d).

Seed D's check needs a contact to accept any floor force; a frame where the body is carried
(the mocap's feet hover above the estimated floor, skate at walking speed, or stand on a
moving treadmill belt) has none, and no wrench correction makes such a frame ballistic. Before
method A's correction (:mod:`animik.dynamics.correct`) such frames get a support:

(a) **which frames**: infeasible frames without a detected contact (check as ``animik
    feasibility`` runs it), widened by ``pad`` seconds;
(a') **start and end transients**: the first or last frames (at most ``transient`` s)
    infeasible without a contact (a calibration pose, retargeting's IK settling) are held at
    the first pose after them (the last before them);
(a2) **a low free foot grounded**: on frames infeasible with a contact whose static centre of
    mass is far outside the contact hull while every stance leg's hip is on a joint limit
    (the hip strategy cannot move the pelvis over the sole), a free foot a few cm above the
    floor whose sole brings the hull to the centre of mass is put on the floor and held still
    (:func:`ground_free_feet`; runs of at least a second);
(b) **which foot**: the contact area that was in contact just before (a stance extended
    through a heel-strike / toe-off the detector missed), else the lowest one, kept while it
    stays within 2 cm of the lowest (hysteresis); every other area within ``near_height`` of
    it (of the floor when it is below the floor) is held too;
(b') **take-offs** (without ``ground_hover``): a held foot leaving a stance fast (its pivot
    faster than ``LEAP_SPEED``, :func:`take_offs`: a leap, a slide away) is not held there --
    the hold (d) would replay its travel slowed and leave the landing stance behind;
(c) **root drift** (a treadmill, a body carried along): where a support's **pivot** (the
    least-moving point of the sole under its fitted rigid 2-D motion,
    :func:`support_motion_2d`) keeps translating -- faster than ``carry_speed`` averaged over
    ``carry_time``, for longer than ``carry_time``, and on ``carry_fraction`` of those frames
    over 0.1 s too (a foot spinning on its toes turns about a point of its sole: pivot
    velocity 0; one quick slide or leap is not sustained) -- the root is shifted by minus
    its horizontal velocity (integrated, smoothed) and lowered by its height above the floor,
    so the support stands still on the floor; the rest of the clip keeps its shape;
(c1) **hovers** (only with ``ground_hover``, the hover passes of
    :func:`animik.dynamics.correct.plant_and_correct`): a run of such frames at least 0.25 s
    long with its support a few cm above the floor has the pelvis lowered by the support's
    height, constant over the run and eased in and out over ``ground_hover`` s, the feet near
    the floor kept where they are; the held foot then catches up with the input's at
    ``hold_speed`` instead of replaying its steps slowed (docs/dynamics.md 5i, "Hovers");
(d) **hold the foot**: the support area's sole points follow the input's foot slowed to
    ``hold_speed`` (so the detector sees a stance) and lowered onto the floor, blended in and
    out over ``blend`` seconds, by a damped Gauss-Newton IK on the leg's DoFs only (root,
    trunk, other limbs untouched) pulled toward the input pose; a stance whose polygon misses
    the ZMP of most of its frames is moved toward it (the support placed where the required
    wrench needs it).

Nothing here checks feasibility: method A runs on the planted clip and the command checks the
written file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..motion import Motion
from . import _support
from ._leg_ik import area_leg, hold_points
from ._runs import dilate, smooth_triangle, true_runs
from .clip import check_clip
from .contacts import ContactModel, contact_model_for_clip
from .free_feet import ground_free_feet
from .hand_over import ease_frames, hold_into_supports
from .opspace import _axes_and_mass
from .smoothness import root_slides
from .supports import SupportSet
from .treadmill import OvergroundResult, to_overground

# m/s: the widening of a held run (below) stops where the foot moves faster than this -- a
# swing, not a stance (a stance foot rolls at < 0.3 m/s; a walk's foot leaves at 1-4 m/s)
SWING_SPEED = 1.0
# m/s: a held foot whose pivot moves faster than this after a stance is taking off (take_offs;
# the raw cmu_daz pirouette's leap: 1.5-5 m/s; a walk's swing 1-4 m/s is not held anyway)
LEAP_SPEED = 2.0


@dataclass
class PlantResult:
    """The planted clip and what was planted.

    Attributes:
        motion: the clip with the supports planted (the input when nothing was needed).
        planted: ``(T, A)`` bool, frames where an area is held as a support.
        root_shift: ``(T, 3)`` m, the translation added to the root (c).
        frames: number of frames that had no contact and were infeasible (a), counted after
            the treadmill conversion (c0).
        frozen: ``(T,)`` bool, transient frames held still (a').
        carried: ``(T,)`` bool, frames whose support is judged carried along (c).
        overground: the treadmill conversion (c0) (``sections`` empty when there was none).
    """

    motion: Motion
    planted: np.ndarray
    root_shift: np.ndarray
    frames: int
    frozen: np.ndarray
    carried: np.ndarray | None = None
    overground: OvergroundResult | None = None


def support_motion_2d(points: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rigid 2-D motion of one contact area's points on the floor, and its pivot.

    Each frame's horizontal motion is fitted as a planar rigid motion (2-D Kabsch between the
    frames before and after, central differences; one-sided at the ends): a turn ``th`` and
    the centroid's displacement, so ``w = th / dt``. Its fixed point ``r`` (``(I - R) r = c1 -
    R c0``; the instantaneous centre as ``dt -> 0``) is where the velocity field
    ``v(p) = w J (p - r)`` (``J`` the quarter turn) vanishes. The **pivot** is the point of
    the area's footprint (the convex hull of its points) nearest to ``r``: ``r`` itself when
    the area turns about a point of its sole (a spin on the toes: pivot velocity 0), else a
    point on the hull's edge, whose velocity ``w J (pivot - r)`` is the least of any point of
    the sole. A support that translates (a treadmill belt) has ``w ~ 0`` and its pivot moves
    with it.

    Args:
        points: ``(T, k, 2+)`` the area's points (world x, y first), m.
        fps: frames per second.

    Returns:
        ``(v_pivot (T, 2) m/s, w (T,) rad/s, pivot (T, 2) m)``.
    """
    X = np.ascontiguousarray(points[..., :2], dtype=float)
    T = X.shape[0]
    v_p = np.zeros((T, 2))
    w = np.zeros(T)
    pivot = X.mean(axis=1) if T else np.zeros((0, 2))
    if T < 2:
        return v_p, w, pivot
    c = X.mean(axis=1)
    i0 = np.r_[0, np.arange(T - 2), T - 2]  # central differences, one-sided at the ends
    i1 = np.r_[1, np.arange(2, T), T - 1]
    dt = (i1 - i0) / fps
    a, b = X[i0] - c[i0, None], X[i1] - c[i1, None]
    cross = (a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]).sum(axis=1)
    dot = (a * b).sum(axis=(1, 2))
    th = np.arctan2(cross, dot)  # the least-squares rotation of the centred points
    w = th / dt
    hull_out = np.empty((X.shape[1], 2))
    near = np.empty(2)
    for t in range(T):
        v_p[t] = (c[i1[t]] - c[i0[t]]) / dt[t]
        if abs(th[t]) < 1e-6:  # no turn: every point moves with the centroid
            continue
        # the fixed point r of the fitted motion p -> R (p - c0) + c1: (I - R) r = c1 - R c0
        co, si = np.cos(th[t]), np.sin(th[t])
        R = np.array([[co, -si], [si, co]])
        r = np.linalg.solve(np.eye(2) - R, c[i1[t]] - R @ c[i0[t]])
        m_ = _support.hull(X[t], hull_out)
        if m_ == 0:
            continue
        _support.signed_distance(hull_out[:m_], m_, r[0], r[1], near)
        pivot[t] = near
        d = near - r
        v_p[t] = w[t] * np.array([-d[1], d[0]])
    return v_p, w, pivot


def take_offs(points: np.ndarray, point_area: np.ndarray, in_contact: np.ndarray,
              planted: np.ndarray, fps: float, speed: float = LEAP_SPEED) -> np.ndarray:
    """Frames where a foot to be held leaves a stance fast: a leap's take-off, a slide away.

    Per area, the frames of ``planted`` where its **pivot** (:func:`support_motion_2d`: a foot
    spinning on its toes keeps it still while its points circle) moves faster than ``speed``
    averaged over 0.1 s, in runs that come after a frame where the area stood (in contact, or
    planted and slow) -- not a clip's first frames, whose foot has no stance before them.

    Args:
        points: ``(T, P, 2+)`` world contact points (x, y first), m.
        point_area: ``(P,)`` area of each point.
        in_contact: ``(T, A)`` bool, the check's contacts. planted: ``(T, A)`` bool, the
            frames the plant step is to hold.
        fps: frames per second. speed: m/s.

    Returns:
        ``(T, A)`` bool.
    """
    T, A = planted.shape
    out = np.zeros((T, A), dtype=bool)
    n = max(1, int(round(0.1 * fps)))
    for a in range(A):
        vp = support_motion_2d(points[:, point_area == a], fps)[0]
        fast = np.hypot(*smooth_triangle(vp, n).T) > speed
        stood = np.flatnonzero(in_contact[:, a] | planted[:, a] & ~fast)
        for s, e in true_runs(fast & planted[:, a]):
            if len(stood) and stood[0] < s:
                out[s:e, a] = True
    return out


def plant_contacts(motion: Motion, contacts: ContactModel | None = None, mu: float = 0.7,
                   window: float = 0.1, pad: float = 0.05, blend: float = 0.1,
                   clearance: float = 0.005, carry_speed: float = 0.3, carry_time: float = 0.5,
                   reference_weight: float = 1e-2, iterations: int = 12, margin: float = 0.02,
                   relocate_fraction: float = 0.2, max_offset: float = 0.25,
                   hold_speed: float = 0.15, transient: float = 0.25,
                   slide_speed: float = 0.2, relocate_min: float = 1.0,
                   carry_fraction: float = 0.8, near_height: float = 0.04,
                   supports: SupportSet | None = None, ground_hover: float = 0.0,
                   hover_min: float = 0.25, hover_height: float = 0.2,
                   take_off_speed: float = LEAP_SPEED, ground_height: float = 0.2,
                   ground_deficit: float = 0.05, ground_gain: float = 0.05,
                   ground_min: float = 1.0, ground_blend: float = 0.3) -> PlantResult:
    """Give every infeasible frame without a contact a planted support (module docstring).

    Args:
        motion: the clip (free root with three slides).
        contacts: contact areas (default :func:`contact_model_for_clip`).
        mu, window: as the check (:func:`check_clip`).
        pad: seconds added around the frames without contact.
        blend: seconds over which a held foot eases in and out.
        clearance: m, the held sole's lowest point above the floor.
        carry_speed, carry_time: m/s and s of a support moving along (c): its pivot's
            velocity averaged over ``carry_time`` above ``carry_speed``, for at least
            ``carry_time``, and its speed (over 0.1 s) above ``carry_speed`` on at least
            ``carry_fraction`` of those frames.
        carry_fraction: see ``carry_speed``.
        near_height: m, an area this close to the support (to the floor when the support is
            below it) is held too (b).
        reference_weight: m^2/rad^2, pull of the leg IK toward the input pose.
        iterations: Gauss-Newton iterations per frame.
        margin: m, how far inside its stance's polygon a moved stance puts the ZMP.
        relocate_fraction: a stance is moved when more than this share of its frames has the
            ZMP outside (or within ``margin`` of the edge).
        max_offset: m, the largest move of a stance.
        slide_speed: m/s, how fast a moved stance may change its offset.
        relocate_min: s, only stances at least this long are moved (standing on a foot, not a
            walking step, whose ZMP rolls over the sole anyway).
        transient: s, the longest start or end transient that is held still (a').
        hold_speed: m/s, a held foot follows the input's foot no faster than this (the
            detector's entry speed is 0.35 m/s).
        supports: contacts off the floor (:mod:`animik.dynamics.supports`), used by the check;
            frames where one is active are never planted on the floor.
        ground_hover: s, (c1) a hover -- a run of frames without contact at least
            ``hover_min`` s long whose support is at most ``hover_height`` above the floor --
            has the pelvis lowered by its support's height over the whole run, eased in and
            out over this many seconds (0: off, the default).
        hover_min, hover_height: see ``ground_hover``.
        take_off_speed: m/s, (b') a held foot leaving a stance faster than this is not held
            (:func:`take_offs`; ``inf``: held, as before the ninth round); off with
            ``ground_hover``, whose hold catches up.
        ground_height, ground_deficit, ground_gain, ground_min: (a2) a free foot whose
            lowest point is at most ``ground_height`` m above the floor is held on it over a
            run of at least ``ground_min`` s of infeasible frames whose static centre of mass
            is more than ``ground_deficit`` m outside the contact hull and ``ground_gain`` m
            nearer inside with that foot's sole added (:func:`ground_free_feet`; 0: off);
            held still over its run where the input's foot came nearest the floor in it,
            eased in and out over ``ground_blend`` s.

    Returns:
        :class:`PlantResult`.
    """
    skel = motion.skeleton
    cm = contacts or contact_model_for_clip(skel, motion.q)
    # (c0) a treadmill (a support carried for seconds at a near-constant velocity): the
    # clip seen from the belt, on the floor (animik.dynamics.treadmill)
    # a raised stance on a support off the floor (louise's mount on the pedal) stays up: the
    # supports are fixed in the world, lowering the body would take it off them (5f)
    sup_on = supports.active(len(motion.q)).any(axis=1) \
        if supports is not None and len(supports) else None
    tm = to_overground(motion, cm, supported=sup_on)
    motion = tm.motion
    chk = check_clip(motion, mu=mu, window=window, contacts=cm, supports=supports)
    T, A = chk.check.in_contact.shape
    ic = chk.check.in_contact
    need = ~chk.feasible & ~ic.any(axis=1)
    n_need = int(need.sum())
    q = np.array(motion.q, dtype=float)
    shift = np.zeros((T, 3))
    planted = np.zeros((T, A), dtype=bool)
    # (a2) a low free foot grounded: frames infeasible with a contact whose static centre of
    # mass is far outside the contact hull but (nearly) inside it with a foot that hovers a few
    # cm up beside the stance (:func:`ground_free_feet`; mocapbank's side squat on body95)
    ground = ground_free_feet(motion, cm, chk, ground_height, ground_deficit, ground_gain,
                              ground_min) if A and ground_min > 0 else np.zeros((T, A), bool)
    if not (n_need or ground.any()) or A == 0:
        return PlantResult(Motion(skel, q, motion.fps, dict(motion.meta)), planted,
                           shift + tm.shift, 0, np.zeros(T, dtype=bool), np.zeros(T, dtype=bool),
                           tm)
    fps = motion.fps
    # (a') a start or end transient (a calibration pose, the retargeting IK settling): the
    # clip's first / last frames infeasible without a contact, at most ``transient`` s, are
    # held at the first / last pose after / before them
    kmax = int(round(transient * fps))
    frozen = np.zeros(T, dtype=bool)
    for s_, e_ in true_runs(need):
        if s_ == 0 and e_ <= kmax and e_ < T:
            q[:e_] = q[e_]
            frozen[:e_] = True
        elif e_ == T and T - s_ <= kmax and s_ > 0:
            q[s_:] = q[s_ - 1]
            frozen[s_:] = True
    if frozen.any():
        chk = check_clip(Motion(skel, q, motion.fps), mu=mu, window=window, contacts=cm,
                         supports=supports)
        ic = chk.check.in_contact
        need = ~chk.feasible & ~ic.any(axis=1)
    need = dilate(need, max(1, int(round(pad * fps)))) & ~ic.any(axis=1)
    need &= ~chk.check.support_active.any(axis=1)  # held by a seat, pedals: not the floor
    pts = cm.points(skel, q)  # (T, P, 3)
    floor = chk.floor
    low = np.stack([pts[:, cm.point_area == a, 2].min(axis=1) for a in range(A)], 1) - floor
    # (b) the supports of each frame in need: the area in contact just before (a stance the
    # detector let go too early), else the lowest; plus every area within ``near_height`` of
    # it (of the floor when it is below the floor)
    sup = -np.ones(T, dtype=np.int64)
    prev = -1
    for t in range(T):
        if ic[t].any():
            prev = int(np.flatnonzero(ic[t])[np.argmin(low[t, ic[t]])])
            continue
        if not need[t]:
            prev = -1
            continue
        best = int(np.argmin(low[t]))
        if prev < 0 or low[t, prev] > low[t, best] + 0.02:
            prev = best
        sup[t] = prev
        # the support is put on the floor (below it: raised to it), so "near" counts from the
        # floor then: a landing foot 1-4 cm up beside a stance foot 4 cm into the floor is
        # held too (within the detector's entry height of the floor)
        planted[t] = low[t] < max(low[t, prev], 0.0) + near_height
    planted |= ground
    # (b') a take-off: without the hover passes' catch-up the held foot replays the input's
    # steps slowed and never catches up, so a foot held through a leap leaves the rest of its
    # stance behind (docs/dynamics.md 5j, "The raw pirouette written"): not held there
    swing = take_offs(pts, cm.point_area, ic, planted, fps, take_off_speed) \
        if ground_hover <= 0 and np.isfinite(take_off_speed) else None
    if swing is not None:
        planted &= ~swing
    # a hold shorter than the check's Savitzky-Golay window is smoothed away by it: widen each
    # held run by the window on both sides, while the foot is low (a stance, not a swing)
    k = int(round(window * fps))
    # low and slow: a flat foot lifting off keeps its toe low while it already swings forward
    # (held there, the leg is stretched back after the body: the Bandai walk's knee 60 deg)
    speed = np.stack([np.hypot(*np.gradient(pts[:, cm.point_area == a, :2].mean(axis=1),
                                            axis=0).T) * fps for a in range(A)], axis=1)
    low_enough = (low < 0.07) & (speed < SWING_SPEED)
    for a in range(A):
        wide = dilate(planted[:, a], k)
        for s_, e_ in true_runs(wide):
            if planted[s_:e_, a].any():
                seg = np.arange(s_, e_)
                core = seg[planted[s_:e_, a]]
                keep = (seg >= core[0]) & (seg <= core[-1]) | low_enough[s_:e_, a]
                if swing is not None:
                    keep &= ~swing[s_:e_, a]
                planted[seg[keep], a] = True
    # frames on supports off the floor are the environment's: no foot is planted there, not
    # by the widening either (a seat or foot rest fixed in the world would lose the body)
    on_sup = chk.check.support_active.any(axis=1)
    # ... except a foot no support carries there (the hand-over: the free foot leaving the floor
    # as the body steps onto a rest is held and eased out over the check's window, as before
    # any support; supports.SupportSet.resting)
    rest = on_sup[:, None] if supports is None or not len(supports) else (
        on_sup[:, None] & supports.resting(skel, cm.point_joint, cm.point_area, T))
    planted[on_sup] = planted[on_sup] & ~rest[on_sup]
    # ... and a foot held up to the supports' first frame is held on into them by the check's
    # window, so its lift-off and ease-out fall where the supports carry (hand_over)
    planted = hold_into_supports(planted, on_sup, np.broadcast_to(rest, (T, A)), k)
    # (c) a support carried along for long: move the root against it
    carried = np.zeros(T, dtype=bool)
    has = sup >= 0
    sv = np.zeros((T, 2))
    sh = np.zeros(T)
    sh[has] = low[np.flatnonzero(has), sup[has]] - clearance
    # a belt carries the whole support one way; a foot spinning on its toes turns about a
    # point of its sole, which stays put while the other points (and their mean) circle:
    # the velocity of the support's pivot (its rigid 2-D motion's least-moving point), not
    # of its points, averaged over ``carry_time``, tells them apart
    for a in np.unique(sup[has]):
        on = sup == a
        sv[on] = support_motion_2d(pts[:, cm.point_area == a], fps)[0][on]
    sva = smooth_triangle(sv, max(1, int(round(carry_time * fps))))
    # ... and sustained: moving at (almost) every moment too (over 0.1 s), not one quick slide,
    # leap or start transient that the long average spreads over a second
    svs = smooth_triangle(sv, max(1, int(round(0.1 * fps))))
    moving = has & (np.hypot(svs[:, 0], svs[:, 1]) > carry_speed)
    fast = moving & (np.hypot(sva[:, 0], sva[:, 1]) > carry_speed)
    for s, e in true_runs(dilate(fast, int(round(0.1 * fps))) & has):
        if e - s >= carry_time * fps and moving[s:e].mean() >= carry_fraction:
            carried[s:e] = True
    if carried.any():
        n = max(1, int(round(0.2 * fps)))
        u = smooth_triangle(np.where(carried[:, None], -sv, 0.0), n)
        shift[:, :2] = np.cumsum(u, axis=0) / fps
        shift[:, 2] = smooth_triangle(np.where(carried, -sh, 0.0), n)
        root = int(np.flatnonzero(skel.parents < 0)[0])
        rd = np.array(list(skel.joint_dofs(root)), dtype=np.int64)
        slides = rd[skel.dof_type[rd] == 1]
        # the slides' world directions (the root's first DoFs: the same in every frame)
        Sr = _axes_and_mass(skel, q[0])[2][slides, 3:]
        q[:, slides] += np.linalg.solve(Sr.T, shift.T).T
        pts = cm.points(skel, q)
    # (c1) a hover (feet a few cm above the floor for a while, the body held up: the check
    # wants a ballistic body there): the pelvis eased down by the support's height over the
    # whole run, so the hold (d) below only bends the legs a little; slow, so the check sees
    # a small vertical acceleration (docs/dynamics.md 5i, "Hovers")
    drop = np.zeros(T)
    if ground_hover > 0:
        drop = hover_drop(need, sup, low - clearance, fps, ground_hover, hover_min,
                          hover_height)
        if drop.any():
            slides = root_slides(skel)
            Sr = _axes_and_mass(skel, q[0])[2][slides, 3:]
            d3 = np.zeros((T, 3))
            d3[:, 2] = -drop
            q[:, slides] += np.linalg.solve(Sr.T, d3.T).T
            shift += d3
    # (d) every stance (detected or planted) of an area, held; a stance whose polygon misses
    # the ZMP of most of its frames is moved toward it (the support where the wrench needs it)
    support = ic | planted
    zmp = chk.check.zmp[:, :2]
    nb = max(1, int(round(blend * fps)))
    nb_ground = max(nb, int(round(ground_blend * fps)))
    weight = np.zeros((T, A))
    target = np.array(pts)  # (T, P, 3)
    near = np.empty(2)
    hull_out = np.empty((cm.point_area.shape[0], 2))
    for a in range(A):
        P_a = np.flatnonzero(cm.point_area == a)
        for s, e in true_runs(support[:, a]):
            need_run = planted[s:e, a].any()
            # (d1) where the ZMP needs the foot: on single-support frames whose ZMP is outside
            # (or within ``margin`` of the edge), the push that puts it ``margin`` inside;
            # smoothed, and sliding no faster than ``slide_speed`` (a stance the detector keeps)
            push = np.zeros((e - s, 2))
            for t in range(s, e):
                if not np.isfinite(zmp[t]).all() or support[t].sum() != 1:
                    continue
                sel = support[t][cm.point_area]
                m_ = _support.hull(np.ascontiguousarray(pts[t, sel, :2]), hull_out)
                d = _support.signed_distance(hull_out[:m_], m_, zmp[t, 0], zmp[t, 1], near)
                if d < margin:
                    v = zmp[t] - near
                    nv = float(np.hypot(*v))
                    push[t - s] = v + (margin * v / nv if nv > 1e-9 else 0.0)
            offset = np.zeros((e - s, 3))
            if e - s >= relocate_min * fps and (push != 0).any(axis=1).mean() > relocate_fraction:
                o = smooth_triangle(push, max(1, int(round(0.3 * fps))))
                nrm = np.hypot(o[:, 0], o[:, 1])
                o *= np.minimum(1.0, max_offset / np.maximum(nrm, 1e-12))[:, None]
                lim = slide_speed / fps
                for t in range(1, e - s):  # rate limit, both ways
                    o[t] = o[t - 1] + np.clip(o[t] - o[t - 1], -lim, lim)
                for t in range(e - s - 2, -1, -1):
                    o[t] = o[t + 1] + np.clip(o[t] - o[t + 1], -lim, lim)
                offset[:, :2] = o
            if not need_run and not offset.any():
                continue
            if need_run:  # the input's foot, slowed to ``hold_speed`` and put on the floor
                Xin = pts[s:e, P_a]
                c_in = Xin.mean(axis=1)
                step = np.diff(c_in[:, :2], axis=0)
                ns = np.hypot(step[:, 0], step[:, 1])
                lim = hold_speed / fps
                step *= np.minimum(1.0, lim / np.maximum(ns, 1e-12))[:, None]
                c = np.repeat(c_in[:1], e - s, 0)
                if ground_hover > 0:  # (c1) the held foot catches up with the input's
                    for t in range(1, e - s):  # at ``hold_speed`` (it does not stay behind)
                        d = c_in[t, :2] - c[t - 1, :2]
                        nd = float(np.hypot(d[0], d[1]))
                        c[t, :2] = c[t - 1, :2] + d * min(1.0, lim / max(nd, 1e-12))
                else:
                    c[1:, :2] += np.cumsum(step, axis=0)
                if ground[s:e, a].any():  # (a2) a grounded free foot: still over its whole
                    # run, where the input's foot came nearest the floor in it (the run's ends
                    # are a stance's: held there, the foot does not slide in the ease)
                    c[:, :2] = c_in[int(np.argmin(Xin[..., 2].min(axis=1))), :2]
                X = Xin - c_in[:, None] + c[:, None]
                X[..., 2] -= X[:, :, 2].min(axis=1, keepdims=True) - floor - clearance
            else:  # the input's own stance, moved
                X = pts[s:e, P_a].copy()
            X += offset[:, None]
            # eased in / out over ``blend`` s; longer where the run ends on supports off the
            # floor (the hand-over's ease-out, hand_over.ease_frames)
            nb_in, nb_out = ease_frames(on_sup, s, e, nb)
            if ground[s:e, a].any():  # (a2) put down and lifted slowly
                nb_in, nb_out = max(nb_in, nb_ground), max(nb_out, nb_ground)
            lo_, hi_ = max(0, s - nb_in), min(T, e + nb_out)
            for t in range(lo_, hi_):
                if s <= t < e:
                    w, Xt = 1.0, X[t - s]
                elif t < s:
                    w, Xt = (t - lo_ + 1) / (s - lo_ + 1), X[0] - pts[s, P_a] + pts[t, P_a]
                else:
                    w, Xt = (hi_ - t) / (hi_ - e + 1), X[-1] - pts[e - 1, P_a] + pts[t, P_a]
                if w > weight[t, a]:
                    weight[t, a] = w
                    target[t, P_a] = (1 - w) * pts[t, P_a] + w * Xt
    if drop.any():
        # the other frames the pelvis was lowered on: a foot on or near the floor stays where
        # it was (the knee bends), a free foot goes down with the pelvis but not through the
        # floor (its lowest point stops ``clearance`` above it)
        for a in range(A):
            P_a = cm.point_area == a
            ts = np.flatnonzero((drop > 0) & (weight[:, a] == 0))
            down = np.minimum(drop[ts], np.maximum(low[ts, a] - clearance, 0.0))
            target[ts[:, None], np.flatnonzero(P_a)[None], 2] -= down[:, None]
            weight[ts, a] = 1.0
    weight[np.broadcast_to(rest, weight.shape)] = 0.0  # nor eased into there
    for a in range(A):
        P_a, joints, dofs = area_leg(skel, cm, a)
        if not len(dofs):
            continue
        ts = np.flatnonzero(weight[:, a] > 0)  # every held frame in one compiled call
        q[ts] = hold_points(skel, q[ts], dofs, joints, cm.point_local[P_a],
                            target[ts][:, P_a], reference_weight, iterations, no_flips=True)
    return PlantResult(Motion(skel, q, fps, dict(motion.meta)), planted, shift + tm.shift,
                       n_need, frozen, carried, tm)



def hover_drop(need: np.ndarray, sup: np.ndarray, height: np.ndarray, fps: float, ease: float,
               min_duration: float = 0.25, max_height: float = 0.2,
               percentile: float = 90.0) -> np.ndarray:
    """How far the pelvis is lowered over each hover (plant step (c1)), per frame.

    A hover is a run of ``need`` frames (no contact, infeasible) at least ``min_duration`` s
    long whose support (``sup``, the area chosen by (b)) is on median at most ``max_height``
    above the floor. Over the run the drop is constant -- the ``percentile`` of the support's
    height there (a leg can bend to reach a floor that came nearer; a straight leg cannot
    reach one that stayed further down) -- so it adds no acceleration inside the run; it eases
    in and out over ``ease`` s before and after (smoothstep: vertical acceleration at most
    ``6 drop / ease^2``). Overlapping ramps take the larger drop.

    Args:
        need: ``(T,)`` bool, frames to plant. sup: ``(T,)`` int, their support area (-1: none).
        height: ``(T, A)`` m, each area's lowest point above where it is to be held.
        fps: frames per second. ease: s. min_duration: s. max_height: m. percentile: of the
            support's height over the run.

    Returns:
        ``(T,)`` m, >= 0.
    """
    T = need.shape[0]
    drop = np.zeros(T)
    n_e = max(1, int(round(ease * fps)))
    t = np.arange(T)
    for s, e in true_runs(need & (sup >= 0)):
        if e - s < min_duration * fps:
            continue
        h = height[np.arange(s, e), sup[s:e]]
        if np.median(h) > max_height:  # a body held up far from the floor: not a hover
            continue
        d = max(float(np.percentile(h, percentile)), 0.0)
        if d <= 0.0:
            continue
        # 1 over the run, a smoothstep to 0 over n_e frames either side
        u = np.clip(np.minimum(t - (s - n_e), (e - 1 + n_e) - t) / n_e, 0.0, 1.0)
        drop = np.maximum(drop, d * u * u * (3.0 - 2.0 * u))
    return drop
