"""Plant step (a2): a low free foot put on the floor where a limited body cannot balance on
one foot (docs/dynamics.md 5i, "The stance foot for the limited body"); used by
:func:`animik.dynamics.plant.plant_contacts`."""

from __future__ import annotations

import numpy as np

from ..motion import Motion
from ._leg_ik import area_leg
from ._runs import true_runs
from .contacts import ContactModel
from .hip_shift import com_margin


def ground_free_feet(motion: Motion, cm: ContactModel, chk, height: float = 0.2,
                     deficit: float = 0.05, gain: float = 0.05,
                     min_duration: float = 1.0, at_limit: float = np.radians(2.0)
                     ) -> np.ndarray:
    """The frames on which a low free foot is to be put on the floor (plant step (a2)).

    A limited body standing on one foot with its static centre of mass far outside that sole
    cannot bring it over by its legs (mocapbank's side squat on body95: the stance leg on its
    hip flexion, hip rotation and ankle limits, the centre of mass 15-19 cm outside the sole,
    the other foot 11 cm above the floor beside it; docs/dynamics.md 5i, "The stance foot for
    the limited body"). The free foot is then put down: per frame infeasible with a contact,
    an area not in contact whose lowest point is at most ``height`` above the floor is grounded
    where the static centre of mass is more than ``deficit`` outside the hull of the contacts
    and the hull with that area's sole added holds it ``gain`` nearer inside (or inside).
    Only frames where the hip of every leg in contact has a DoF within ``at_limit`` of a
    joint limit (the hip strategy cannot move the pelvis over that sole) and runs at least
    ``min_duration`` long count (a standing pose, not a walk's swing).

    Args:
        motion: the clip. cm: its contact areas. chk: its check (:func:`check_clip`).
        height, deficit, gain: m. min_duration: s. at_limit: rad.

    Returns:
        ``(T, A)`` bool.
    """
    ic = chk.check.in_contact
    T, A = ic.shape
    out = np.zeros((T, A), dtype=bool)
    cand = ~chk.feasible & ic.any(axis=1) & ~chk.check.support_active.any(axis=1)
    if not cand.any():
        return out
    mg, _, _ = com_margin(motion, cm, ic)
    cand &= np.isfinite(mg) & (mg < -deficit)
    if not cand.any():
        return out
    # ... and only where every stance leg's hip is on one of its joint limits: the hip strategy
    # moves the pelvis over the sole by that hip, so there it cannot (the pirouette's stance
    # hip is free and its hip passes balance it, docs/dynamics.md 5i; without finite limits,
    # a BVH skeleton, never)
    skel = motion.skeleton
    q = np.asarray(motion.q, dtype=float)
    for a in range(A):
        hd = hip_dofs(skel, cm, a)
        gap = np.minimum(q[:, hd] - skel.lower[hd], skel.upper[hd] - q[:, hd])
        cand &= ~ic[:, a] | (gap <= at_limit).any(axis=1)
    pts = cm.points(skel, q)
    n_min = int(round(min_duration * motion.fps))
    for a in range(A):
        low = pts[:, cm.point_area == a, 2].min(axis=1) - chk.floor
        c_a = cand & ~ic[:, a] & (low < height)
        if not c_a.any():
            continue
        with_a = ic.copy()
        with_a[:, a] = True
        mg_a, _, _ = com_margin(motion, cm, with_a)
        c_a &= mg_a > np.minimum(mg + gain, 0.0)
        for s, e in true_runs(c_a):
            if e - s >= n_min:
                out[s:e, a] = True
    return out


def hip_dofs(skel, cm: ContactModel, a: int) -> np.ndarray:
    """The DoFs of contact area ``a``'s hip: its leg's (:func:`area_leg`) topmost joint, the
    one whose parent is not in the leg."""
    dofs = area_leg(skel, cm, a)[2]
    js = np.unique(skel.dof_joint[dofs])
    top = [j for j in js if skel.parents[j] not in js]
    return dofs[np.isin(skel.dof_joint[dofs], top)]


__all__ = ["ground_free_feet", "hip_dofs"]
