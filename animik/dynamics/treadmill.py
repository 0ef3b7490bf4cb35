"""A treadmill capture turned into overground walking (docs/dynamics.md section 5e).

A capture on a treadmill has the stance foot riding the belt (1-2 m/s) and the body staying
in place, often on a raised deck: the check (one floor plane, a contact only for a foot that
is low and slow) finds no contact there, and no wrench correction helps. The physics: a belt
running at constant velocity is an inertial frame, so the same motion seen from the belt is
a valid overground walk with the *same accelerations*. Here:

(a) **the surface**: per frame, the lowest sole point above the floor; the larger of its
    minima over the ``surface_window`` before and after the frame (longer than a flight
    phase, so a swing does not count; a step up is followed at once) is the height of what
    the feet stand on (0 on the floor, the deck's height on a raised treadmill);
(a') **raised stances**: a surface higher than ``raise_min`` (above the detector's release
    height) for ``raise_time`` or longer while the support is not carried along (standing on
    a deck, a step, a pedal) is brought to the floor as well;
(b) **the belt**: the horizontal velocity of the lowest foot standing on that surface
    (within ``stance_band`` of it), interpolated over frames without one, a running median over
    ``median_time`` (heel strikes and toe-offs roll the sole) then averaged over
    ``belt_smooth`` seconds (twice, a triangle): near constant, so the root gains almost no
    acceleration; a **belt section** is where its speed exceeds ``carry_speed`` for at least
    ``min_time`` seconds with a foot on the surface in at least ``min_support`` of its frames
    and the check's detector finding a contact on at most ``max_detected`` of them (a belt
    moves the stance foot faster than a contact may slide; a spin on the toes or a slide is
    not a belt, nor are feet that touch their lowest point once a turn: pedalling a
    stationary bike, the shared louise.bvh, section 5e);
(c) **overground**: the root moves by minus the belt's integrated velocity (the body walks
    forward instead of the belt moving back) and is lowered by the surface height (the deck
    brought to the floor; the step up onto it becomes a smoothed step on level ground). The
    belt's residual changes in speed (a few tenths of a m/s over a step) remain on the stance
    foot; the plant step holds it (:func:`animik.dynamics.plant.plant_contacts` (d)).

Only clips with a belt section or a raised stance are changed. Nothing here decides
feasibility: the command checks the written file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..motion import Motion
from ._runs import true_runs
from .clip import detect_clip_contacts
from .contacts import ContactModel, contact_model_for_clip
from .opspace import _axes_and_mass


@dataclass
class OvergroundResult:
    """A clip with its treadmill sections turned into overground walking.

    Attributes:
        motion: the converted clip (the input itself when no belt was found).
        shift: ``(T, 3)`` m, the translation added to the root.
        belt: ``(T, 2)`` m/s, the belt velocity taken out (0 outside belt sections).
        surface: ``(T,)`` m, the height the root is lowered by: the surface the feet stand on,
            over belt sections and raised stances.
        sections: ``[start, end)`` frame ranges of the belt sections.
        raised: ``[start, end)`` frame ranges of raised stances (a').
    """

    motion: Motion
    shift: np.ndarray
    belt: np.ndarray
    surface: np.ndarray
    sections: list[tuple[int, int]]
    raised: list[tuple[int, int]]


def _smooth(a: np.ndarray, n: int) -> np.ndarray:
    """Centred moving average over ``n`` samples (edges repeated), twice (a triangle); for an
    even ``n`` the two passes lean half a sample opposite ways (no net delay: the belt's
    integral must not lag)."""
    if n <= 1:
        return a
    for lo in (n // 2, n - 1 - n // 2):
        hi = n - 1 - lo
        pad = np.concatenate([np.repeat(a[:1], lo, 0), a, np.repeat(a[-1:], hi, 0)])
        c = np.concatenate([np.zeros((1,) + a.shape[1:]), np.cumsum(pad, axis=0)])
        a = (c[n:] - c[:-n]) / n
    return a


def _running(a: np.ndarray, n: int, how, lo: int | None = None) -> np.ndarray:
    """Running ``how`` (``np.min``, ``np.median``) over ``n`` samples along axis 0, the window
    ``[t - lo, t - lo + n)`` (centred by default; edges repeated)."""
    if n <= 1:
        return a.copy()
    lo = n // 2 if lo is None else lo
    hi = n - 1 - lo
    pad = np.concatenate([np.repeat(a[:1], lo, 0), a, np.repeat(a[-1:], hi, 0)])
    win = np.lib.stride_tricks.sliding_window_view(pad, n, axis=0)  # (T, ..., n)
    return how(win, axis=-1)


def belt_and_surface(motion: Motion, contacts: ContactModel | None = None,
                     floor: float | None = None, surface_window: float = 1.0,
                     surface_smooth: float = 0.5,
                     stance_band: float = 0.03, median_time: float = 0.3,
                     belt_smooth: float = 1.0, carry_speed: float = 0.3,
                     min_time: float = 2.0, min_support: float = 0.6,
                     raise_min: float = 0.1, raise_time: float = 0.5,
                     max_detected: float = 0.5, supported: np.ndarray | None = None):
    """Detect a moving support (module docstring (a), (b)).

    Args:
        motion: the clip.
        contacts: contact areas (default :func:`contact_model_for_clip`).
        floor: m, the floor height (default: estimated as the check does).
        surface_window: s, the windows of the lowest sole's minima that give the surface.
        surface_smooth: s, the surface's moving average (twice): no jump in the root height.
        stance_band: m, a foot within this of the surface stands on it.
        median_time, belt_smooth: s, the belt velocity's running median and average.
        carry_speed, min_time: m/s and s, a belt section is faster than this for this long.
        min_support: a belt section has a foot on the surface in at least this share of its
            frames.
        max_detected: a belt section has a contact detected by the check on at most this
            share of its frames.
        raise_min, raise_time: m and s, a raised stance is a surface higher than this for
            this long.
        supported: ``(T,)`` bool, frames carried by supports off the floor
            (:mod:`animik.dynamics.supports`): a raised stance touching them stands on the
            environment (a pedal while mounting a bike) and is not lowered -- lowering it would
            move the body off those supports (docs/dynamics.md 5f).

    Returns:
        ``(belt (T, 2) m/s, surface (T,) m, sections [(start, end)], raised [(start, end)],
        floor m)``; ``belt`` is zero outside the belt sections, ``surface`` (the height the
        body is lowered by) outside the belt sections and raised stances.
    """
    skel, fps = motion.skeleton, motion.fps
    cm = contacts or contact_model_for_clip(skel, motion.q)
    q = np.asarray(motion.q, dtype=float)
    T, A = q.shape[0], cm.n_areas
    flags, floor = detect_clip_contacts(skel, q, fps, floor, cm)
    pts = cm.points(skel, q)
    low = np.stack([pts[:, cm.point_area == a, 2].min(axis=1) for a in range(A)], 1) - floor
    mid = np.stack([pts[:, cm.point_area == a, :2].mean(axis=1) for a in range(A)], 1)
    vel = np.gradient(mid, 1.0 / fps, axis=0) if T > 1 else np.zeros_like(mid)
    n_s = max(1, int(round(surface_window * fps)))
    lowest = low.min(axis=1)
    # the larger of the minima over the window before and the window after: a swing or a
    # flight shorter than the window is ignored (both windows hold a stance), a step up or
    # down is followed at once (one window lies wholly on the new level)
    surf_raw = np.maximum(np.maximum(_running(lowest, n_s, np.min, 0),
                                     _running(lowest, n_s, np.min, n_s - 1)), 0.0)
    on = low < surf_raw[:, None] + stance_band  # (T, A)
    has = on.any(axis=1)
    # the support's velocity: the lowest foot on the surface (the stance foot; a swing foot
    # skims the surface only for moments, which the running median removes)
    sup = np.argmin(np.where(on, low, np.inf), axis=1)
    vs = np.full((T, 2), np.nan)
    vs[has] = vel[np.flatnonzero(has), sup[has]]
    belt = np.zeros((T, 2))
    sections: list[tuple[int, int]] = []
    raised: list[tuple[int, int]] = []

    def stances(fast: np.ndarray) -> list[tuple[int, int]]:
        """(a') raised stances: the surface above ``raise_min`` (higher than the detector lets
        a contact be) for at least ``raise_time``, the support not carried along (a fast
        support is a belt, or a pedal: section 5e)."""
        return [(s, e) for s, e in true_runs((surf_raw > raise_min) & ~fast)
                if e - s >= raise_time * fps
                and (supported is None or not supported[max(0, s - 1):e + 1].any())]

    def lowered() -> np.ndarray:
        # the surface itself over the runs widened by the average's width: the average then
        # eases the body down and up while the feet leave or join the surface, not before
        ns = max(1, int(round(surface_smooth * fps)))
        lift = np.zeros(T, dtype=bool)
        for s, e in raised + sections:
            lift[max(0, s - ns):e + ns] = True
        return _smooth(np.where(lift, surf_raw, 0.0), ns)

    if has.sum() < 2:
        raised = stances(np.zeros(T, dtype=bool))
        return belt, lowered(), sections, raised, float(floor)
    idx = np.arange(T)
    for c in range(2):  # frames without a foot on the surface: interpolated
        vs[:, c] = np.interp(idx, idx[has], vs[has, c])
    vm = _running(vs, max(1, int(round(median_time * fps))), np.median)
    vb = _smooth(vm, max(1, int(round(belt_smooth * fps))))
    fast = np.hypot(vb[:, 0], vb[:, 1]) > carry_speed
    # a stance stays "still" until the support itself moves (the median alone: the belt's
    # average reaches a second ahead)
    raised = stances(np.hypot(vm[:, 0], vm[:, 1]) > carry_speed)
    # a belt carries the body only while a foot stands on it: walking keeps a foot on the
    # surface all the time, running ~70 %; feet touching the surface for a moment once a turn
    # (pedalling: the crank's bottom, a third of the time) are not carried by it; and a
    # belt moves the stance foot faster than the check's detector accepts a contact: a
    # section where it finds stances on most frames is walking on the floor
    stance = flags.any(axis=1)
    sections = [(s, e) for s, e in true_runs(fast)
                if e - s >= min_time * fps and has[s:e].mean() >= min_support
                and stance[s:e].mean() <= max_detected]
    if not sections:
        return belt, lowered(), sections, raised, float(floor)
    # the belt over its sections widened by the average's reach (its whole estimate: where
    # the belt starts, the average spreads it over that reach, and cutting there would lose
    # part of its travel), eased out beyond that (no jump in the root's velocity)
    nb = max(1, int(round(belt_smooth * fps)))
    inside = np.zeros(T, dtype=bool)
    for s, e in sections:
        inside[max(0, s - 2 * nb):e + 2 * nb] = True
    gate = _smooth(inside.astype(float), max(1, nb // 2))
    belt = vb * np.maximum(gate, inside)[:, None]
    return belt, lowered(), sections, raised, float(floor)


def to_overground(motion: Motion, contacts: ContactModel | None = None,
                  **kwargs) -> OvergroundResult:
    """Turn the clip's belt sections into overground walking (module docstring (c)).

    Args:
        motion: the clip (a free root with three slides).
        contacts: contact areas (default :func:`contact_model_for_clip`).
        **kwargs: passed to :func:`belt_and_surface`.

    Returns:
        :class:`OvergroundResult`; ``motion`` is the input clip when there is no belt section.
    """
    skel, fps = motion.skeleton, motion.fps
    cm = contacts or contact_model_for_clip(skel, motion.q)
    belt, surface, sections, raised, _floor = belt_and_surface(motion, cm, **kwargs)
    T = motion.q.shape[0]
    shift = np.zeros((T, 3))
    if not sections and not raised:
        return OvergroundResult(motion, shift, belt, surface, sections, raised)
    # trapezoidal integral: the root's velocity gains -belt, its acceleration -d(belt)/dt
    shift[1:, :2] = -np.cumsum(0.5 * (belt[1:] + belt[:-1]), axis=0) / fps
    shift[:, 2] = -surface
    q = np.array(motion.q, dtype=float)
    root = int(np.flatnonzero(skel.parents < 0)[0])
    rd = np.array(list(skel.joint_dofs(root)), dtype=np.int64)
    slides = rd[skel.dof_type[rd] == 1]
    Sr = _axes_and_mass(skel, q[0])[2][slides, 3:]  # the slides' world directions
    q[:, slides] += np.linalg.solve(Sr.T, shift.T).T
    return OvergroundResult(Motion(skel, q, fps, dict(motion.meta)), shift, belt, surface,
                            sections, raised)
