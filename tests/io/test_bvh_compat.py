"""BVH export of skeletons BVH cannot hold as they are (body95's thumbs: rest rotations below the
root; general DoF axes): :func:`animik.io.bvh_compat.bvh_compatible` rewrites those joints as Z X Y
rotation channels with the same world motion."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q, random_skeleton

from animik import anim
from animik.io.bvh import read_bvh
from animik.io.bvh_compat import bvh_compatible
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rigs import load_rig
from animik.skeleton import Skeleton


def _body95_clip(rng):
    skel = load_rig("body95")
    clip = anim.new_clip(skel, "three", fps=30, length=2.0, interpolation="smooth")
    for t in (0.0, 1.0, 2.0):
        clip = anim.add_key(clip, t, skel.clip_to_limits(skel.rest_q + rng.normal(size=skel.n_dof) * 0.4))
    return clip


def test_body95_exports_to_bvh_with_the_same_world_motion(tmp_path, rng):
    clip = _body95_clip(rng)
    want = clip.to_motion()
    back = read_bvh(anim.export_clip(clip, tmp_path / "b.bvh"))
    assert back.n_frames == want.n_frames and abs(back.fps - 30.0) < 1e-9
    a = forward_kinematics(want.skeleton, want.q)
    b = forward_kinematics(back.skeleton, back.q)
    assert back.skeleton.joint_names == want.skeleton.joint_names
    np.testing.assert_allclose(b.joint_positions, a.joint_positions, atol=1e-9)
    # the thumbs were rewritten as three rotation channels, the other joints kept theirs
    assert [n for n in back.skeleton.dof_names if n.startswith("l_thumb_cmc")] == \
        ["l_thumb_cmc_rz", "l_thumb_cmc_rx", "l_thumb_cmc_ry"]
    # the default form (issue 14) gives every rotating joint 3 rotation channels, the root 6
    n_rot = [sum(back.skeleton.dof_type[k] == 0 for k in back.skeleton.joint_dofs(j))
             for j in range(back.skeleton.n_joints)]
    assert set(n_rot) <= {0, 3} and len(back.skeleton.joint_dofs(0)) == 6
    compact = read_bvh(anim.export_clip(clip, tmp_path / "c.bvh", channels="compact"))
    assert compact.skeleton.n_dof == want.skeleton.n_dof + 2
    c = forward_kinematics(compact.skeleton, compact.q)
    np.testing.assert_allclose(c.joint_positions, a.joint_positions, atol=1e-9)
    # the thumb tips (End Sites) move as the original sites
    tip = want.skeleton.site_index("l_thumb_tip")
    end = back.skeleton.site_index("l_thumb_ip_end")
    np.testing.assert_allclose(b.site_positions[:, end], a.site_positions[:, tip], atol=1e-9)


def test_bvh_compatible_keeps_world_frames_and_leaves_bvh_skeletons_alone(rng):
    skel = load_rig("fig2")
    m = Motion(skel, np.tile(skel.rest_q, (3, 1)), 30.0)
    assert bvh_compatible(m)[0] is m
    for seed in range(6):
        r = np.random.default_rng(seed)
        sk = random_skeleton(r, n_joints=10, n_sites=4, translations=False)
        mo = Motion(sk, random_q(sk, r, (5,)), 24.0)
        out, layout = bvh_compatible(mo)
        assert layout in ("dofs", "rewritten")  # rotations only: rewriting joints suffices
        a = forward_kinematics(sk, mo.q)
        b = forward_kinematics(out.skeleton, out.q)
        np.testing.assert_allclose(b.joint_positions, a.joint_positions, atol=1e-9)
        np.testing.assert_allclose(b.joint_rotations, a.joint_rotations, atol=1e-9)
        np.testing.assert_allclose(b.site_positions, a.site_positions, atol=1e-9)
        assert out.fps == mo.fps and out.skeleton.joint_names == sk.joint_names


@pytest.mark.parametrize("seed", [1, 2])
def test_random_skeletons_with_rest_rotations_export_to_bvh(tmp_path, seed):
    r = np.random.default_rng(seed)
    sk = random_skeleton(r, n_joints=8, n_sites=3, translations=False)
    q = random_q(sk, r, (4,))
    clip = anim.clip_from_poses(sk, np.arange(4) / 10.0, q, fps=10.0)
    want = clip.to_motion()
    back = read_bvh(anim.export_clip(clip, tmp_path / "r.bvh"), unit="cm")  # small figure
    np.testing.assert_allclose(forward_kinematics(back.skeleton, back.q).joint_positions,
                               forward_kinematics(sk, want.q).joint_positions, atol=1e-9)


def test_the_rewrite_plan_is_kept_per_skeleton_and_gives_the_same_file(rng):
    """A batch writes many clips on one target: the second clip reuses the first one's rewritten
    skeleton (cached per skeleton) and its file is byte for byte the file of a fresh skeleton."""
    from animik.io.bvh_compat import dumps_bvh_compatible

    skel = load_rig("body95")
    q1 = np.stack([skel.clip_to_limits(skel.rest_q + rng.normal(size=skel.n_dof) * 0.4)
                   for _ in range(5)])
    q2 = np.stack([skel.clip_to_limits(skel.rest_q + rng.normal(size=skel.n_dof) * 0.4)
                   for _ in range(7)])
    a, layout_a = bvh_compatible(Motion(skel, q1, 30.0))
    b, layout_b = bvh_compatible(Motion(skel, q2, 30.0))
    assert layout_a == layout_b == "rewritten"
    assert b.skeleton is a.skeleton  # the plan was reused
    fresh = Skeleton.from_joints(skel.name, *skel.to_joints(), meta=dict(skel.meta))
    want, _ = dumps_bvh_compatible(Motion(fresh, q2, 30.0))
    got, _ = dumps_bvh_compatible(Motion(skel, q2, 30.0))
    assert got == want
    fa = forward_kinematics(skel, q2)
    fb = forward_kinematics(b.skeleton, b.q)
    np.testing.assert_allclose(fb.joint_positions, fa.joint_positions, atol=1e-9)
    np.testing.assert_allclose(fb.site_positions, fa.site_positions, atol=1e-9)
