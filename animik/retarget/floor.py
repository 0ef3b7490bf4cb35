"""Keep every sole point of a retargeted clip above the floor.

Retargeting holds one site per foot on the floor (``l_foot`` / ``r_foot``). A robot's rigid foot
pivoting with a human foot's toe-off or heel strike would then push its heel or toe into the
floor. :func:`lift_above_floor` raises the root, frame by frame, by exactly the depth of the
lowest sole point below ``floor`` (frames with every point above the floor are unchanged), so
that no foot is ever below the floor; the price is that the planted foot rises by the same
amount in those frames.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..kinematics import site_positions
from ..motion import Motion
from ..skeleton import TRANSLATION, Skeleton

#: Sites checked by default: the robot sole's heel and toe (centre line and edges, see
#: :mod:`animik.semantics.robot_sites`) and the foot sites.
SOLE_SITES = ("l_sole_back", "l_sole_front", "r_sole_back", "r_sole_front", "l_foot", "r_foot",
              *(f"{s}_sole_{e}_{w}" for s in ("l", "r") for e in ("back", "front")
                for w in ("inner", "outer")))


def root_height_dof(skel: Skeleton) -> int | None:
    """The DoF that translates the whole skeleton along world z (a root slide along z before
    any rotation, under an identity rest rotation), or None."""
    if np.max(np.abs(skel.rest_rotations[0] - np.eye(3))) > 1e-12:
        return None
    for k in skel.joint_dofs(0):
        if skel.dof_type[k] != TRANSLATION:
            return None
        if np.allclose(skel.dof_axis[k], [0.0, 0.0, 1.0], atol=1e-12):
            return int(k)
    return None


def lift_above_floor(motion: Motion, sites: Sequence[str] = SOLE_SITES, floor: float = 0.0
                     ) -> tuple[Motion, float]:
    """``motion`` with the root raised wherever a sole point is below ``floor``.

    Args:
        motion: the clip.
        sites: site names checked (missing ones are skipped).
        floor: floor height, m.

    Returns:
        ``(motion, largest lift in m)``; the same motion when nothing is below the floor, the
        skeleton has none of the sites, or no root height DoF.
    """
    skel = motion.skeleton
    idx = [skel.site_index(s) for s in sites if s in skel.site_names]
    k = root_height_dof(skel)
    if not idx or k is None:
        return motion, 0.0
    q = np.array(motion.q, dtype=float)
    depth = floor - site_positions(skel, q)[:, idx, 2].min(axis=1)
    lift = np.maximum(depth, 0.0)
    if not np.any(lift > 0.0):
        return motion, 0.0
    q[:, k] += lift
    q[:, k] = np.minimum(q[:, k], skel.upper[k])
    return motion.replace(q=q), float(lift.max())
