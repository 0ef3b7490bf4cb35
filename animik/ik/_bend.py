"""Bending a straight limb off its limit before natural posing's limbs-only stage.

A limb that rests straight on a joint limit (fig2's elbow at 0 in the T-pose, a straight knee)
is singular along its own length: every DoF of the limb moves the end site across the limb
line, none along it, so a target nearer the limb's root than the limb is long has no
first-order solution with the limb alone. The damped step then creeps (each step bends the
elbow a few milliradians) and the limbs-only stage of :func:`animik.ik.fik._execute` runs out
of iterations, handing the motion to the trunk — what natural posing is there to avoid.

The fix is a line search along the one feasible direction out of the singularity: the DoF on
its limit, moved into its range, to the smallest bend whose anchor-to-site distance matches
the anchor-to-target distance (the anchor: the limb's first joint, which the limbs-only stage
does not move). The limb's other DoFs then aim it in a few regular steps.
"""

from __future__ import annotations

import numpy as np

from ..kinematics import forward_kinematics
from ..skeleton import Skeleton

#: A DoF this close to a limit (rad) rests on it.
ON_LIMIT = 1e-6
#: Bends tried along a DoF's range (the chosen one is refined linearly between two of them).
BEND_SAMPLES = 24


def limb_chains(skel: Skeleton, sites: np.ndarray, v_limbs: np.ndarray) -> list[np.ndarray]:
    """The rotational limb DoFs (``v_limbs > 0``) that move each site, ``(k,)`` list of
    index arrays in ancestor-first order."""
    rot = np.asarray(skel.dof_type) == 0
    mask = skel.site_dof_mask[np.asarray(sites)] & (np.asarray(v_limbs) > 0) & rot
    return [np.flatnonzero(m) for m in mask]


def bend_straight_limbs(skel: Skeleton, q: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                        chains: list[np.ndarray], sites: np.ndarray, targets: np.ndarray,
                        active: np.ndarray, tol: float) -> np.ndarray | None:
    """A copy of ``q`` with each active site's straight limb bent to its target's distance.

    Args:
        skel: the skeleton.
        q: ``(n,)`` pose, within limits (rad / m).
        lower, upper: ``(n,)`` joint limits.
        chains: per site, its limb DoFs (:func:`limb_chains`), ancestors first.
        sites: ``(k,)`` site indices.
        targets: ``(k, 3)`` target positions, m.
        active: ``(k,)`` bool, the sites to consider (targets, not pins).
        tol: m; a site already within this of its target, or a limb short enough, is left.

    Returns:
        The bent pose, or None when no limb needed it (the usual case: no FK is run unless a
        targeted limb has a DoF on a limit).
    """
    cands = []
    for i in np.flatnonzero(active):
        ch = chains[i]
        if ch.size < 2:
            continue
        qc = q[ch]
        on = (qc <= lower[ch] + ON_LIMIT) | (qc >= upper[ch] - ON_LIMIT)
        # the anchor joint's own DoFs swing the limb about the anchor, never bend it
        on &= skel.dof_joint[ch] != skel.dof_joint[ch[0]]
        if on.any():
            cands.append((i, ch, ch[on]))
    if not cands:
        return None
    fk = forward_kinematics(skel, q)
    out = None
    for i, ch, dofs in cands:
        anchor = fk.joint_positions[skel.dof_joint[ch[0]]]
        site = int(sites[i])
        here = fk.site_positions[site]
        want = float(np.linalg.norm(targets[i] - anchor))
        if np.linalg.norm(here - targets[i]) <= tol \
                or np.linalg.norm(here - anchor) - want <= tol:
            continue
        best = None  # (|bend|, dof, value)
        for j in dofs:
            at_lower = q[j] <= lower[j] + ON_LIMIT
            span = (upper[j] - lower[j]) * (1.0 if at_lower else -1.0)
            t = np.linspace(0.0, 1.0, BEND_SAMPLES + 1)
            qs = np.repeat(q[None], t.size, axis=0)
            qs[:, j] = q[j] + t * span
            d = np.linalg.norm(forward_kinematics(skel, qs).site_positions[:, site] - anchor,
                               axis=1)
            below = np.flatnonzero(d <= want)
            if below.size == 0:  # the bend cannot shorten the limb that much: its shortest
                kk = int(np.argmin(d))
                if d[kk] >= d[0] - tol:
                    continue  # this DoF does not shorten the limb at all
                value = qs[kk, j]
            else:
                kk = int(below[0])
                # linear refinement between the last sample above and the first below
                w = (d[kk - 1] - want) / max(d[kk - 1] - d[kk], 1e-12)
                value = qs[kk - 1, j] + w * (qs[kk, j] - qs[kk - 1, j])
            if best is None or abs(value - q[j]) < best[0]:
                best = (abs(value - q[j]), j, value)
        if best is not None:
            if out is None:
                out = q.copy()
            out[best[1]] = min(max(best[2], lower[best[1]]), upper[best[1]])
    return out
