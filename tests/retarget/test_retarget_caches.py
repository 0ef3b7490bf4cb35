"""Per-target values a batch computes once (issue 14, throughput): the solve skeleton with the
added effector sites is shared by the clips retargeted onto one target, and a clip solved on the
shared one equals the same clip solved on a fresh copy of the target."""

from __future__ import annotations

import numpy as np
from rt_helpers import humanoid, smooth_motion

from animik.retarget import Retargeter
from animik.skeleton import Skeleton

_NAMES = {s: s for s in ("root", "hips", "spine", "chest", "neck", "head", "l_upper_arm",
                         "l_forearm", "l_hand", "r_upper_arm", "r_forearm", "r_hand", "l_thigh",
                         "l_shin", "l_foot", "r_thigh", "r_shin", "r_foot")}


def test_clips_on_one_target_share_the_solve_skeleton_and_solve_the_same():
    src = humanoid(_NAMES, "source")
    target = humanoid(_NAMES, "target")  # no sites: the retargeter adds hand/foot/head sites
    a = Retargeter(smooth_motion(src, frames=12, seed=1), target)
    b = Retargeter(smooth_motion(src, frames=12, seed=2), target)
    assert a.solve_skeleton is not target  # sites were added
    assert b.solve_skeleton is a.solve_skeleton
    fresh = Skeleton.from_joints(target.name, *target.to_joints(), meta=dict(target.meta))
    c = Retargeter(smooth_motion(src, frames=12, seed=2), fresh)
    assert c.solve_skeleton is not b.solve_skeleton
    assert c.solve_skeleton.site_names == b.solve_skeleton.site_names
    qb, qc = b.run().motion.q, c.run().motion.q
    np.testing.assert_array_equal(qb, qc)  # same arithmetic on equal skeletons
