"""The hip strategy: the pelvis moved horizontally over the support, the feet held where they are
(docs/dynamics.md section 5i).

Method A's correction (:mod:`animik.dynamics.correct`) moves the centre of mass with a root
slide (which carries the feet along: the support polygon moves with it) and a trunk lean
(the lumbar and thoracic joints; within its 0.3 rad trust region a few cm at most). Neither
brings a centre of mass that is itself 10-30 cm outside a one-toe support back over it (the
pirouette retargeted onto body95: 242 of its 252 infeasible contact frames). What a dancer or
an animator does is move the hips: the pelvis, and the upper body with it, slides over the
supporting foot while the legs bend to keep the feet where they are. Here:

(a) **the deficit** per frame: the static centre of mass (:func:`animik.dynamics.inverse.com`,
    the pure weight) against the convex hull of the contact areas the check detects
    (:func:`check_clip`'s flags, kept fixed), on frames the check finds infeasible with a
    contact: the horizontal push that puts it ``margin`` inside the hull (zero where it is
    already ``margin`` inside, on frames without a contact and on feasible frames);
(b) **the offset**: the push smoothed in time (a centred moving average over ``smooth`` s,
    twice: a triangle, so the offset's acceleration is bounded by ``push / smooth^2``),
    capped at ``max_offset`` and rate-limited to ``max_speed`` (both ways), added to the
    pelvis's horizontal slides;
(c) **the feet**: each contact area's sole points stay at their input positions on the
    frames where the area is in contact or within the detector's release height of the
    floor, and move with the pelvis where it is free (a dancer's raised leg goes with the
    hips), blended over ``blend`` s; the leg's DoFs (the area's ancestors below the root)
    re-solve them by the plant step's batched damped Gauss-Newton
    (:func:`animik.dynamics._leg_ik.hold_points`), pulled toward the input's leg angles;
(d) **iterated**: the legs' mass moves less than the pelvis, so the centre of mass moves by a
    fraction of the offset; (a)-(c) are repeated on the shifted clip (``iterations`` times),
    each adding its smoothed push to the offset;
(e) **reach**: where a held sole point ends further than ``reach_tol`` from its target (a
    straight stance leg, a foot the plant step put lower), the offset is scaled back there
    (0.7 per try) until the leg can follow.

Nothing here decides feasibility: it moves the static balance where the check says the
wrench cannot be carried; method A then corrects the dynamic remainder and the command checks
the written file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..motion import Motion
from . import _support
from ._leg_ik import area_leg, hold_points
from ._runs import dilate, smooth_triangle
from .clip import ClipFeasibility, check_clip
from .contacts import ContactModel, contact_model_for_clip
from .inverse import com
from .opspace import _axes_and_mass
from .smoothness import root_slides
from .supports import SupportSet


@dataclass
class HipShiftResult:
    """The clip with the hips moved, and by how much.

    Attributes:
        motion: the shifted clip (the input object itself when nothing was moved).
        offset: ``(T, 2)`` m, the pelvis's horizontal offset (world x, y).
        frames: number of frames whose static centre of mass needed a push (a), before.
        com_margin_before: ``(T,)`` m, signed distance of the static COM inside the hull of
            the contact areas (NaN without a contact), input.
        com_margin_after: the same, output.
        foot_error: m, the largest distance of a sole point of an area in contact from its
            input position.
    """

    motion: Motion
    offset: np.ndarray
    frames: int
    com_margin_before: np.ndarray
    com_margin_after: np.ndarray
    foot_error: float


def com_margin(motion: Motion, contacts: ContactModel, in_contact: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signed distance of the static centre of mass inside the support hull, per frame.

    Args:
        motion: the clip. contacts: its contact areas. in_contact: ``(T, A)`` bool.

    Returns:
        ``(margin (T,) m (NaN without contact), toward (T, 2), com (T, 2) m)``: ``toward`` is
        the hull's nearest point when the centre of mass is outside, the mean of the hull's
        vertices when it is inside (the way further in).
    """
    skel = motion.skeleton
    c = com(skel, motion.q)[:, :2]
    pts = np.ascontiguousarray(contacts.points(skel, motion.q))
    T, P = pts.shape[:2]
    poly = np.empty((T, P, 2))
    nv = np.zeros(T, dtype=np.int64)
    margin, nearest = np.empty(T), np.empty((T, 2))
    _support.margins_batch(pts, contacts.point_area, np.ascontiguousarray(in_contact, dtype=bool),
                           np.ascontiguousarray(c[:, 0]), np.ascontiguousarray(c[:, 1]), poly,
                           nv, margin, nearest)
    inside = np.flatnonzero(np.isfinite(margin) & (margin >= 0))
    for t in inside:
        nearest[t] = poly[t, :nv[t]].mean(axis=0)
    return margin, nearest, c


def _push(margin: np.ndarray, toward: np.ndarray, c: np.ndarray, want: float,
          active: np.ndarray) -> np.ndarray:
    """The horizontal move ``(T, 2)`` that puts ``c`` ``want`` inside the hull (0 elsewhere):
    outside, to the nearest hull point and ``want`` beyond; inside, toward the hull's middle
    by the missing margin (at most to the middle)."""
    push = np.zeros_like(c)
    ok = active & np.isfinite(margin) & (margin < want)
    v = toward[ok] - c[ok]
    n = np.hypot(v[:, 0], v[:, 1])
    good = n > 1e-9
    u = np.zeros_like(v)
    u[good] = v[good] / n[good, None]
    size = want - margin[ok]
    size = np.where(margin[ok] >= 0, np.minimum(size, n), size)
    push[ok] = u * size[:, None]
    return push


def _held_error(pts: np.ndarray, pts0: np.ndarray, held: np.ndarray, offset: np.ndarray,
                point_area: np.ndarray) -> np.ndarray:
    """Per frame the largest distance ``(T,)`` of a sole point from its target (c)."""
    T = pts.shape[0]
    d3 = np.zeros((T, 3))
    d3[:, :2] = offset
    X = pts0 + (1.0 - held[:, point_area])[..., None] * d3[:, None]
    return np.linalg.norm(pts - X, axis=-1).max(axis=1)


def _rate_limit(o: np.ndarray, lim: float) -> np.ndarray:
    """``o (T, 2)`` changed by at most ``lim`` per frame, forward then backward."""
    o = np.array(o, dtype=float)
    _rate_limit_kernel(o, float(lim))
    return o


@nb.njit(cache=True, nogil=True)
def _rate_limit_kernel(o, lim):
    """In place: each step clipped to ``[-lim, lim]``, forward then backward (the same
    arithmetic as ``np.clip`` per element: one difference, one clip, one sum)."""
    T, d = o.shape
    for t in range(1, T):
        for i in range(d):
            o[t, i] = o[t - 1, i] + min(max(o[t, i] - o[t - 1, i], -lim), lim)
    for t in range(T - 2, -1, -1):
        for i in range(d):
            o[t, i] = o[t + 1, i] + min(max(o[t, i] - o[t + 1, i], -lim), lim)


def _cap(o: np.ndarray, max_offset: float, base: np.ndarray | None = None) -> np.ndarray:
    """``o (T, 2)`` such that ``|base + o| <= max_offset`` (``base`` 0 when ``None``)."""
    b = np.zeros_like(o) if base is None else base
    tot = b + o
    nrm = np.hypot(tot[:, 0], tot[:, 1])
    return tot * np.minimum(1.0, max_offset / np.maximum(nrm, 1e-12))[:, None] - b


def apply_hip_offset(motion: Motion, contacts: ContactModel, offset: np.ndarray,
                     held: np.ndarray, reference_weight: float = 1e-4, iterations: int = 20,
                     previous: tuple[np.ndarray, Motion] | None = None) -> Motion:
    """The pelvis slid by ``offset`` with each area's sole points held (c).

    Args:
        motion: the clip. contacts: its contact areas.
        offset: ``(T, 2)`` m, horizontal pelvis offset.
        held: ``(T, A)`` in [0, 1]: 1 keeps the area's points at their input positions, 0 moves
            them with the pelvis.
        reference_weight: m^2/rad^2, pull of the leg IK toward the input's leg angles.
        iterations: Gauss-Newton iterations per frame.
        previous: ``(offset, shifted clip)`` of an earlier call with the same ``motion``,
            ``held`` and settings: frames whose offset is bit-equal to that call's are copied
            from it (each frame's leg IK depends on its own frame only, so the result is
            bit-identical to solving them again); only the changed frames are solved.

    Returns:
        The shifted clip.
    """
    skel = motion.skeleton
    q0 = np.array(motion.q, dtype=float)
    T = q0.shape[0]
    slides = root_slides(skel)
    Sr = _axes_and_mass(skel, q0[0])[2][slides, 3:]  # the slides' world directions
    d3 = np.zeros((T, 3))
    d3[:, :2] = offset
    q = q0.copy()
    q[:, slides] += np.linalg.solve(Sr.T, d3.T).T
    moved = np.abs(offset).max(axis=1) > 0
    if previous is not None:  # unchanged frames: the earlier call's poses, bit for bit
        same = (offset == previous[0]).all(axis=1) & moved
        q[same] = previous[1].q[same]
        moved &= ~same
    moved = np.flatnonzero(moved)
    if not len(moved):
        return Motion(skel, q, motion.fps, dict(motion.meta))
    pts = contacts.points(skel, q0)
    for a in range(contacts.n_areas):
        P_a, joints, dofs = area_leg(skel, contacts, a)
        if not len(dofs):
            continue
        X = pts[moved][:, P_a] + ((1.0 - held[moved, a])[:, None] * d3[moved])[:, None]
        q[moved] = hold_points(skel, q[moved], dofs, joints, contacts.point_local[P_a], X,
                               reference_weight, iterations, tol=1e-5)
    return Motion(skel, q, motion.fps, dict(motion.meta))


def hip_shift(motion: Motion, contacts: ContactModel | None = None, mu: float = 0.7,
              window: float = 0.1, margin: float = 0.03, smooth: float = 0.3,
              max_offset: float = 0.3, max_speed: float = 0.5, blend: float = 0.1,
              iterations: int = 4, reach_tol: float = 2e-3, reach_steps: int = 6,
              release_height: float = 0.07, supports: SupportSet | None = None,
              check: ClipFeasibility | None = None,
              base: np.ndarray | None = None) -> HipShiftResult:
    """Move the pelvis so that the static centre of mass is over the support (module docstring).

    Args:
        motion: the clip (free root with three slides).
        contacts: contact areas (default :func:`contact_model_for_clip`).
        mu, window: as the check (:func:`check_clip`).
        margin: m, how far inside the hull the centre of mass is put.
        smooth: s, the push's moving average (applied twice).
        max_offset: m, the largest pelvis offset. max_speed: m/s, its largest rate.
        blend: s, a foot's hold eases in and out over this.
        iterations: pushes (a)-(c) added up.
        reach_tol, reach_steps: m, a held sole point further than this from its target marks
            the frame out of the leg's reach; the offset is scaled back there (by 0.7, at most
            ``reach_steps`` times per push).
        release_height: m, a foot this close to the floor is held even where the check finds
            no contact (the detector's release height).
        supports: supports off the floor: frames where one is active are not pushed.
        check: the check of ``motion`` if already computed.
        base: ``(T, 2)`` m, how far the pelvis already is from the clip it came from (earlier
            passes' offsets and corrections): ``max_offset`` bounds ``base + offset``, so
            repeated passes do not add up (an offset beyond it is pulled back toward it).

    Returns:
        :class:`HipShiftResult`.
    """
    skel = motion.skeleton
    cm = contacts or contact_model_for_clip(skel, motion.q)
    chk = check or check_clip(motion, mu=mu, window=window, contacts=cm, supports=supports)
    ic = chk.check.in_contact
    T = motion.n_frames
    active = ~chk.feasible & ic.any(axis=1) & ~chk.check.support_active.any(axis=1)
    m0, near, c = com_margin(motion, cm, ic)
    push = _push(m0, near, c, margin, active)
    n_push = int((push != 0).any(axis=1).sum())
    if not n_push:
        return HipShiftResult(motion, np.zeros((T, 2)), 0, m0, m0, 0.0)
    fps = motion.fps
    n_s = max(1, int(round(smooth * fps)))
    n_b = max(1, int(round(blend * fps)))
    # a foot in contact, or low enough that the detector may take it (a planted foot the
    # detector still misses), stays put; moving it would make it skate out of contact
    pts0 = cm.points(skel, motion.q)
    low = np.stack([pts0[:, cm.point_area == a, 2].min(axis=1)
                    for a in range(cm.n_areas)], axis=1) - chk.floor
    stay = ic | (low < release_height)
    held = np.clip(smooth_triangle(stay.astype(float), n_b) * 2.0, 0.0, 1.0)
    held[stay] = 1.0
    offset = np.zeros((T, 2))
    reach = np.ones(T)  # the share of the offset the held legs can follow, per frame
    cur = motion
    last = None  # (offset, clip) of the last leg solve: its unchanged frames are reused
    for _ in range(iterations):
        offset = offset + smooth_triangle(push, n_s)
        for _ in range(reach_steps):
            o = offset * smooth_triangle(reach[:, None], n_s)
            o = _cap(o, max_offset, base)
            o = _rate_limit(o, max_speed / fps)
            cur = apply_hip_offset(motion, cm, o, held, previous=last)
            # the sole points of the frames the solve changed (the others' are the last ones)
            if last is None:
                pts = cm.points(skel, cur.q)
            else:
                new = np.flatnonzero((o != last[0]).any(axis=1))
                pts = pts.copy()
                pts[new] = cm.points(skel, cur.q[new])
            last = (o, cur)
            # (e) a leg cannot follow a pelvis moved beyond its reach (a straight stance leg,
            # a foot the plant step put 10 cm lower): the offset is scaled back there
            err = _held_error(pts, pts0, held, o, cm.point_area)
            far = err > reach_tol
            if not far.any():
                break
            reach[dilate(far, n_b)] *= 0.7
        offset = o
        m1, near, c = com_margin(cur, cm, ic)
        push = _push(m1, near, c, margin, active)
        if not push.any():
            break
    pts1 = cm.points(skel, cur.q)
    stance = ic[:, cm.point_area]
    err = float(np.linalg.norm(pts1 - pts0, axis=-1)[stance].max()) if stance.any() else 0.0
    m1 = com_margin(cur, cm, ic)[0]
    return HipShiftResult(cur, offset, n_push, m0, m1, err)

