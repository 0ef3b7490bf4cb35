"""Retargeting: rest-pose alignment, self-retarget, limits, the per-frame API, BVH output."""

from __future__ import annotations

import json

import numpy as np
import pytest
from rt_helpers import CONVENTIONS, arm_rotation, humanoid, smooth_motion

import animik
from animik.errors import OptionError, UnknownNameError
from animik.io.bvh_compat import bvh_compatible, write_bvh_compatible
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.retarget import RetargetEdits, Retargeter, retarget
from animik.rotations import matrix_to_euler


def _apose_twin(names, motion_t: Motion, deg: float) -> Motion:
    """The same physical motion on a skeleton whose rest pose has the arms ``deg`` down."""
    skel_a = humanoid(names, "apose", rest_arms_deg=deg)
    skel_t = motion_t.skeleton
    fk = forward_kinematics(skel_t, motion_t.q)
    W = np.array(fk.joint_rotations)  # identity rest rotations: world = delta from rest
    slot_of = {v: k for k, v in names.items()}
    for j, nm in enumerate(skel_t.joint_names):
        slot = slot_of[nm]
        if slot[2:] in ("upper_arm", "forearm", "hand", "metacarpal", "thumb1", "index1", "index2",
                        "middle1"):
            W[:, j] = W[:, j] @ arm_rotation(slot[0], deg).T
    q = np.array(motion_t.q)
    for j in range(skel_a.n_joints):
        p = skel_a.parents[j]
        L = W[:, j] if p < 0 else np.swapaxes(W[:, p], -1, -2) @ W[:, j]
        ks = [k for k in skel_a.joint_dofs(j) if skel_a.dof_type[k] == 0]
        q[:, ks] = matrix_to_euler(L, "zxy")
    twin = Motion(skel_a, q, motion_t.fps)
    # the twin really is the same motion: every joint in the same place
    assert np.allclose(forward_kinematics(skel_a, q).joint_positions, fk.joint_positions, atol=1e-9)
    return twin


@pytest.mark.parametrize("rig", ["body95", "fig2"])
def test_a_pose_and_t_pose_sources_give_the_same_result(rig):
    names = CONVENTIONS["mixamo"]
    src_t = smooth_motion(humanoid(names, "tpose"), frames=30, amplitude=0.4, seed=1)
    src_a = _apose_twin(names, src_t, 40.0)
    out_t = retarget(src_t, rig, contacts=False)
    out_a = retarget(src_a, rig, contacts=False)
    target = animik.load_rig(rig)
    pt = forward_kinematics(target, out_t.q).site_positions
    pa = forward_kinematics(target, out_a.q).site_positions
    assert np.abs(pt - pa).max() < 2e-3
    assert np.abs(out_t.q - out_a.q).max() < 2e-2


def test_self_retarget_reproduces_the_motion():
    body = animik.load_rig("body95")
    src = smooth_motion(body, frames=40, amplitude=0.3, seed=2)
    # ground="rest": the vertical offset from the rest poses (0 here), not from the clip's feet
    res = Retargeter(src, body, contacts=False, ground="rest").run()
    assert res.report.scale == pytest.approx(1.0)
    assert all(np.allclose(c, np.eye(3), atol=1e-12) for c in
               Retargeter(src, body, contacts=False).alignment.C)
    a = forward_kinematics(body, res.motion.q)
    b = forward_kinematics(body, src.q)
    sites = [body.site_index(n) for n in ("head", "l_hand", "r_hand")]
    assert np.abs(a.site_positions[:, sites] - b.site_positions[:, sites]).max() < 2e-3
    # fingers follow through the null space only (a few mm behind); feet may be lifted to the
    # floor where the random motion dips below it
    assert np.abs(a.site_positions - b.site_positions).max() < 1e-2
    # near a joint limit FIK's limit-avoidance term pulls a few degrees inwards
    assert np.abs(res.motion.q - src.q).max() < 0.1
    assert np.median(np.abs(res.motion.q - src.q)) < 5e-3


@pytest.mark.parametrize("rig", ["body95", "fig2", "biped12"])
def test_limits_never_violated_on_wild_input(rig):
    src = smooth_motion(humanoid(CONVENTIONS["cmu"], "cmu"), frames=25, amplitude=2.5, seed=3)
    res = Retargeter(src, rig, iterations=3).run()
    target = animik.load_rig(rig)
    q = res.motion.q
    assert np.all(np.isfinite(q))
    assert np.all(q >= target.lower) and np.all(q <= target.upper)
    assert res.report.limit_violations == 0 and res.report.finite
    json.dumps(res.report.to_dict())


def test_step_api_frame_and_pose():
    src = smooth_motion(humanoid(CONVENTIONS["bandai"], "bandai"), frames=20, seed=4)
    rt = Retargeter(src, "fig2")
    q0, st = rt.step(0)
    assert st.frame == 0 and st.q is not None and q0.shape == (rt.target.n_dof,)
    q1, st1 = rt.step(1, state=st)
    # a pose input (no clip context) solves the same frame close to the clip's answer
    rt_pose = Retargeter(src.skeleton, "fig2", fps=src.fps, ground=rt.clip["dz"][0])
    qp, sp = rt_pose.step(src.q[0])
    assert sp.frame == -1
    fk = forward_kinematics(rt.target, np.stack([q0, qp]))
    assert np.abs(fk.site_positions[0] - fk.site_positions[1]).max() < 0.02
    # edits: move the left hand 5 cm up, override a reference value, force a contact off
    edits = RetargetEdits(offsets={"l_hand": (0.0, 0.0, 0.03)},
                          reference={"neck_rotation": 0.3}, contacts={"l_foot": False})
    qe, se = rt.step(1, state=st, edits=edits)
    i = rt.effector_sites.index("l_hand")
    assert se.targets[i][2] == pytest.approx(st1.targets[i][2] + 0.03)
    assert not se.contact[0]
    k = rt.solve_skeleton.site_index("l_hand")
    hand = forward_kinematics(rt.solve_skeleton, np.stack([qe, q1])).site_positions[:, k]
    assert hand[0, 2] - hand[1, 2] > 0.02  # the edit moved the hand up
    with pytest.raises(UnknownNameError, match="not an effector"):
        rt.step(1, state=st, edits=RetargetEdits(offsets={"nope": (0, 0, 0)}))
    with pytest.raises(OptionError, match="out of range"):
        rt.step(99)
    with pytest.raises(OptionError, match="needs a Retargeter built from a Motion"):
        rt_pose.step(0)


def test_options_are_validated():
    src = smooth_motion(humanoid(CONVENTIONS["cmu"], "cmu"), frames=5)
    with pytest.raises(UnknownNameError, match="unknown retarget option"):
        Retargeter(src, "fig2", iterationz=3)
    with pytest.raises(OptionError, match="iterations"):
        Retargeter(src, "fig2", iterations=0)
    with pytest.raises(UnknownNameError, match="weight role"):
        Retargeter(src, "fig2", weights={"tail": 1.0})
    with pytest.raises(OptionError, match="Motion"):
        retarget(src.skeleton, "fig2")
    with pytest.raises(UnknownNameError, match="contact option"):
        Retargeter(src, "fig2", contact={"hight": 0.1})


def test_report_fields_and_meta():
    src = smooth_motion(humanoid(CONVENTIONS["daz"], "daz"), frames=15, seed=5)
    out = retarget(src, "body95")
    rep = out.meta["retarget_report"]
    assert rep["frames"] == 15 and rep["target"] == "body95"
    assert {e["role"] for e in rep["effectors"]} == {"l_hand", "r_hand", "l_foot", "r_foot",
                                                      "head", "root"}
    assert rep["limit_violations"] == 0 and "goals" in rep
    assert "lower_thorax" in rep["mapping"]["unmapped_target"]


def test_bvh_target_gets_effector_sites(tmp_path):
    """Retarget onto a skeleton read from BVH (no named effector sites): sites are added."""
    from animik.io.bvh import read_bvh

    tgt_motion = smooth_motion(humanoid(CONVENTIONS["cmu"], "cmu"), frames=3)
    path = tmp_path / "target.bvh"
    write_bvh_compatible(tgt_motion, path, unit_scale="cm")
    target = read_bvh(path).skeleton
    src = smooth_motion(humanoid(CONVENTIONS["mixamo"], "mixamo"), frames=20, seed=6)
    res = Retargeter(src, target).run()
    assert set(res.report.mapping["effectors"]) == set()  # BVH end sites are not effectors
    roles = {e.role for e in res.report.effectors}
    assert {"l_hand", "r_hand", "l_foot", "r_foot", "head", "root"} <= roles
    assert res.motion.skeleton is target
    assert res.report.hand_foot_mean_error_cm < 1.0


@pytest.mark.parametrize("rig", ["body95", "fig2", "biped12"])
def test_bvh_output_round_trip(tmp_path, rig):
    from animik.io.bvh import read_bvh

    src = smooth_motion(humanoid(CONVENTIONS["mixamo"], "mixamo"), frames=10, seed=7)
    out = retarget(src, rig)
    _, layout = write_bvh_compatible(out, tmp_path / "o.bvh", unit_scale="cm")
    # body95's thumbs (rest rotation below the root) become Z X Y channels; the rest is as is
    assert layout == ("rewritten" if rig == "body95" else "dofs")
    back = read_bvh(tmp_path / "o.bvh", unit="cm")
    idx = [back.skeleton.joint_index(n) for n in out.skeleton.joint_names]
    a = forward_kinematics(out.skeleton, out.q).joint_positions
    b = forward_kinematics(back.skeleton, back.q).joint_positions[:, idx]
    assert np.abs(a - b).max() < 1e-6


def test_bvh_compatible_bakes_when_rewriting_joints_is_not_enough(tmp_path):
    """A translation after a rotation in one joint: no per-joint rewrite helps, so every joint
    is baked into world-parallel Z X Y channels, with the same world poses."""
    from animik.io.bvh import read_bvh
    from animik.motion import Motion
    from animik.skeleton import Dof, Joint, Site, Skeleton

    joints = [Joint("root", None, (0.0, 0.0, 1.0), [Dof("root_tx", "tx"), Dof("root_ty", "ty"),
                                                    Dof("root_rz", "rz")]),
              Joint("arm", "root", (0.3, 0.0, 0.0), [Dof("arm_rx", "rx"), Dof("arm_tx", "tx")]),
              Joint("hand", "arm", (0.2, 0.0, 0.0), [Dof("hand_ry", "ry")])]
    skel = Skeleton.from_joints("slider", joints, [Site("tip", "hand", (0.1, 0.0, 0.0))])
    rng = np.random.default_rng(3)
    m = Motion(skel, rng.uniform(-0.5, 0.5, size=(6, skel.n_dof)), 30.0)
    baked, layout = bvh_compatible(m)
    assert layout == "baked" and baked.skeleton.joint_names == skel.joint_names
    a = forward_kinematics(skel, m.q)
    b = forward_kinematics(baked.skeleton, baked.q)
    assert np.allclose(a.joint_positions, b.joint_positions, atol=1e-12)
    assert np.allclose(a.site_positions, b.site_positions, atol=1e-12)
    path, layout = write_bvh_compatible(m, tmp_path / "s.bvh", unit_scale="cm")
    back = read_bvh(path, unit="cm")
    c = forward_kinematics(back.skeleton, back.q)
    idx = [back.skeleton.joint_index(n) for n in skel.joint_names]
    assert layout == "baked" and np.abs(c.joint_positions[:, idx] - a.joint_positions).max() < 1e-6


def test_bvh_compatible_leaves_writable_motions_alone():
    body = animik.load_rig("fig2")
    m = smooth_motion(body, frames=4, seed=8)
    assert bvh_compatible(m) == (m, "dofs")
