"""Stretches of a clip where the body is held up by something that is not the floor.

A body whose centre of mass stays still needs a support under it; with no contact area near
the floor for a second or more, that support is not the floor (a seat, a bike's saddle and
pedals, a rail): no floor contact, no correction of the motion and no flight phase can make
those frames feasible, since the check (seed D) knows only the floor. ``animik filter`` refuses
such a clip up front with the frames named instead of inventing a support (optitrack
louise.bvh pedals a stationary bike for 20 s: the centre of mass still within 1-2 cm, both
feet 0.2-0.5 m up); ``animik feasibility`` names them in its summary.
"""

from __future__ import annotations

import numpy as np

from ..motion import Motion
from ._runs import true_runs
from .clip import detect_clip_contacts
from .contacts import ContactModel, contact_model_for_clip
from .inverse import com


def held_off_floor(motion: Motion, contacts: ContactModel | None = None,
                   floor: float | None = None, height: float = 0.10, still: float = 0.03,
                   window: float = 1.0, min_time: float = 1.0) -> list[tuple[int, int]]:
    """Frame ranges where the body is held still with no contact area near the floor.

    Args:
        motion: the clip.
        contacts: contact areas (default: :func:`contact_model_for_clip`, as the check).
        floor: m, the floor height (default: estimated as the check estimates it).
        height: m, every area's lowest point is at least this far above the floor.
        still: m, the centre of mass's standard deviation over ``window`` s (each axis) stays
            below this: the body is held, not jumping or falling.
        window: s, the window of that standard deviation (centred).
        min_time: s, the shortest stretch reported.

    Returns:
        ``[(start, end)]`` frame ranges (end exclusive), empty when the floor carries the body.
    """
    skel, q, fps = motion.skeleton, motion.q, float(motion.fps)
    T = len(q)
    n = max(2, int(round(window * fps)))
    if T < max(n, int(np.ceil(min_time * fps))):
        return []
    cm = contacts or contact_model_for_clip(skel, q)
    if floor is None:
        floor = detect_clip_contacts(skel, q, fps, contacts=cm)[1]
    pts = cm.points(skel, q)
    low = np.min(np.stack([pts[:, cm.point_area == a, 2].min(axis=1)
                           for a in range(cm.n_areas)], axis=1), axis=1) - floor
    c = com(skel, q)
    # centred running standard deviation of the COM, per axis, by cumulative sums
    k0 = np.clip(np.arange(T) - n // 2, 0, T - n)
    s1 = np.concatenate([np.zeros((1, 3)), np.cumsum(c, axis=0)])
    s2 = np.concatenate([np.zeros((1, 3)), np.cumsum(c * c, axis=0)])
    mean = (s1[k0 + n] - s1[k0]) / n
    var = np.maximum((s2[k0 + n] - s2[k0]) / n - mean * mean, 0.0)
    held = (low >= height) & (np.sqrt(var).max(axis=1) < still)
    return [(a, b) for a, b in true_runs(held) if b - a >= min_time * fps]


__all__ = ["held_off_floor"]
