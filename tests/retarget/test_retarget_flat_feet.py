"""Stance soles stay flat where the source's are (the sole-to-sole foot alignment).

The Bandai Namco and Mixamo feet stand flat with their ankle-to-ball bone pitched 40° down;
body95's is pitched 17°. Mapping that bone's direction (as for any joint) stood body95 on its
toes in every stance, heels 10-11 cm up (docs/dynamics.md 5c: method B could not balance on a
toe line). The feet are now aligned at a clip frame where the source foot stands flat
(``animik.retarget.align.flat_foot_frames``).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared
from rt_helpers import heel_lift

from animik.dynamics.contacts import contact_model, contact_model_for_clip
from animik.io.bvh import read_bvh
from animik.kinematics import forward_kinematics
from animik.retarget import retarget
from animik.retarget.align import flat_foot_frames
from animik.semantics.roles import classify_joints

pytestmark = [needs_shared]


@pytest.mark.parametrize("name", ["bandai_namco/dataset-1_walk_normal_001.bvh",
                                  "mixamo_rig/test_freebvh.bvh"])
def test_stance_heels_on_body95_as_in_the_source(name):
    src = read_bvh(SHARED_BVH / name)
    lift_src = heel_lift(src.skeleton, src.q, src.fps, contact_model_for_clip(src.skeleton, src.q))
    out = retarget(src, "body95")
    scale = out.meta["retarget_report"]["scale"]
    lift = heel_lift(out.skeleton, out.q, out.fps, contact_model(out.skeleton))
    # measured: source 0 / 2 cm (Bandai), 1.8 / 1.6 cm (Mixamo); body95 0.5-2.3 cm (10-11 before)
    assert np.all(np.abs(lift - scale * lift_src) < 0.02), (lift, lift_src)
    # the bone-direction alignment kept as an option: it is what stood body95 on its toes
    old = retarget(src, "body95", flat_feet=False)
    assert np.all(heel_lift(old.skeleton, old.q, old.fps, contact_model(old.skeleton)) > 0.08)


def test_flat_foot_frames_are_stance_frames_with_both_joints_down_and_still():
    src = read_bvh(SHARED_BVH / "bandai_namco/dataset-1_walk_normal_001.bvh")
    roles = classify_joints(src.skeleton)
    P = forward_kinematics(src.skeleton, src.q).joint_positions
    frames = flat_foot_frames(src.skeleton, roles, P, src.fps)
    assert set(frames) == {"l", "r"}
    for side, t in frames.items():
        for role in ("foot", "toe"):
            z = P[:, src.skeleton.joint_index(roles.roles[f"{side}_{role}"]), 2]
            assert z[t] <= np.percentile(z, 2) + 0.01
