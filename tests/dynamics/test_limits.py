"""`animik.dynamics.limits.limit_excess`: where a clip leaves the rig's joint limits."""

from __future__ import annotations

import numpy as np

import animik
from animik.dynamics.limits import limit_excess
from animik.io.bvh import loads_bvh
from animik.io.bvh_compat import dumps_bvh_compatible


def test_rest_pose_is_within_limits():
    skel = animik.load_rig("body95")
    r = limit_excess(skel, np.tile(skel.rest_q, (5, 1)))
    assert r == {"frames_outside": 0, "max_excess_deg": 0.0, "max_excess_cm": 0.0, "dof": None}


def test_a_knee_past_its_limit_is_named_with_its_excess():
    skel = animik.load_rig("body95")
    k = skel.dof_index("r_knee_flexion")
    q = np.tile(skel.rest_q, (6, 1))
    q[2:4, k] = skel.upper[k] + np.radians(7.5)
    q[4, k] = skel.lower[k] - np.radians(2.0)
    r = limit_excess(skel, q)
    assert r["frames_outside"] == 3 and r["dof"] == "r_knee_flexion"
    assert abs(r["max_excess_deg"] - 7.5) < 1e-3


def test_a_bvh_skeleton_has_no_limits_to_leave():
    skel = animik.load_rig("body95")
    q = np.tile(skel.rest_q, (3, 1))
    q[:, skel.dof_index("r_knee_flexion")] = 3.0  # past body95's limit
    back = loads_bvh(dumps_bvh_compatible(animik.Motion(skel, q, 30.0))[0])
    assert not np.isfinite(back.skeleton.lower).any()
    assert limit_excess(back.skeleton, back.q)["frames_outside"] == 0
