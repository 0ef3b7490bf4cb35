"""Toe-less source feet stand flat on body95 where the source's stand flat.

louise, mocapbank and the cmu_daz pirouette have no toe joint: their foot ends in an End Site
(the tip of the foot). Before, such a foot had no bone to align and kept its rest relation to
the shin, and body95 stood on its toes in stance (louise's heels 11 cm up, mocapbank's 4-7 cm;
the pirouette, on its toes, never stands flat for 0.1 s and is left as it was). Now the tip
stands in for the ball (sole-to-sole alignment at a flat frame,
``animik.retarget.align.flat_foot_frames``) and a soft ball site is held on the ground in
contact (``animik.retarget.retarget.ball_target``).

The source's heel height is estimated from its foot bone and end site: a sole derived
(``animik.dynamics.contacts.derive_soles``, world up) at the frame where that foot stands
flat -- ankle and tip both down and still -- with its heel corners 0.25 x the ankle-to-tip
length behind the ankle, at the tip's height, riding on the foot joint.
"""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, needs_shared
from rt_helpers import heel_lift

from animik.dynamics.contacts import ContactModel, contact_model, derive_soles
from animik.io.bvh import read_bvh
from animik.kinematics import forward_kinematics
from animik.retarget import Retargeter
from animik.semantics.contacts import FootState
from animik.semantics.roles import classify_joints


def _flat_frame(skel, roles, fk, fps, side: str) -> int:
    """A frame where the toe-less foot stands flat, written here independently of the
    retargeter: its ankle and its end site both within 1 cm of their own 2nd-percentile
    heights and slower than 0.2 m/s; of those, the one with the median ankle-to-tip pitch."""
    f = skel.joint_index(roles.roles[f"{side}_foot"])
    tip = fk.site_positions[:, skel.site_joint == f].mean(axis=1)
    ok = np.ones(len(tip), dtype=bool)
    for p in (fk.joint_positions[:, f], tip):
        speed = np.linalg.norm(np.gradient(p[:, :2], 1.0 / fps, axis=0), axis=1)
        ok &= (p[:, 2] <= np.percentile(p[:, 2], 2) + 0.01) & (speed < 0.2)
    frames = np.flatnonzero(ok)
    assert len(frames) >= 0.1 * fps
    d = tip[frames] - fk.joint_positions[frames, f]
    pitch = np.arctan2(d[:, 2], np.linalg.norm(d[:, :2], axis=1))
    return int(frames[np.argsort(pitch)[len(frames) // 2]])


def _flat_frame_soles(skel, q, fps) -> ContactModel:
    """The source's soles, each derived at the frame where that foot stands flat."""
    fk = forward_kinematics(skel, q)
    roles = classify_joints(skel)
    names, area, joint, local = [], [], [], []
    for side in ("l", "r"):
        names.append(f"{side}_foot")
        t = _flat_frame(skel, roles, fk, fps, side)
        for j, pts in derive_soles(skel, pose=q[t])[f"{side}_foot"]:
            for p in pts:
                area.append(len(names) - 1)
                joint.append(j)
                local.append(p)
    return ContactModel(tuple(names), np.array(area), np.array(joint), np.array(local, float),
                        "flat frames")


@needs_shared
def test_stance_heels_of_a_toeless_clip_on_body95_as_in_the_source():
    src = read_bvh(SHARED_BVH / "optitrack_adelaide/louise.bvh")
    lift_src = heel_lift(src.skeleton, src.q, src.fps,
                          _flat_frame_soles(src.skeleton, src.q, src.fps))
    res = Retargeter(src, "body95").run()
    out = res.motion
    lift = heel_lift(out.skeleton, out.q, out.fps, contact_model(out.skeleton))
    # measured: source 0.3 / 0.0 cm, body95 0.1 / 0.6 (main: 11.0 cm, and the right foot
    # never detected in contact)
    assert np.all(np.abs(lift - res.report.scale * lift_src) < 0.02), (lift, lift_src)
    # the hard effectors still meet their targets (the balls are soft)
    rep = res.report
    assert rep.hand_foot_mean_error_cm < 0.05 and rep.limit_violations == 0


@needs_shared
def test_toeless_feet_get_flat_frames_and_ball_sites_toed_feet_do_not():
    from animik.retarget.align import flat_foot_frames, foot_tip_sites
    from animik.retarget.retarget import BALL_SITE

    src = read_bvh(SHARED_BVH / "mocapbank/test_mocapbank.bvh")
    roles = classify_joints(src.skeleton)
    fk = forward_kinematics(src.skeleton, src.q)
    frames = flat_foot_frames(src.skeleton, roles, fk.joint_positions, src.fps,
                              S_clip=fk.site_positions)
    assert set(frames) == {"l", "r"}
    for side, t in frames.items():
        a = fk.joint_positions[:, src.skeleton.joint_index(roles.roles[f"{side}_foot"])]
        tip = fk.site_positions[:, foot_tip_sites(src.skeleton, roles, side)].mean(axis=1)
        for p in (a, tip):  # both down
            assert p[t, 2] <= np.percentile(p[:, 2], 2) + 0.01
    rt = Retargeter(src, "body95")
    assert rt.alignment.tip_soles == ("l", "r")
    assert {BALL_SITE.format(s) for s in "lr"} <= set(rt.effector_sites)
    # without the site positions a toe-less foot has no flat frame (nothing to measure)
    assert flat_foot_frames(src.skeleton, roles, fk.joint_positions, src.fps) == {}
    for other in ("bandai_namco/dataset-1_walk_normal_001.bvh", "cmu_daz/pirouette.bvh"):
        # toes: the bone's own alignment; the pirouette: never flat and still for 0.1 s
        rt = Retargeter(read_bvh(SHARED_BVH / other), "body95")
        assert rt.alignment.tip_soles == () and not any("ball" in s for s in rt.effector_sites)


@needs_shared
def test_toeless_run_equals_step_by_step():
    """The ball targets depend on no solved pose: run()'s compiled sequence and step()
    frame by frame give the same poses."""
    src = read_bvh(SHARED_BVH / "mocapbank/test_mocapbank.bvh")
    rt = Retargeter(src, "body95")
    q = rt.run().motion.q
    state = None
    for t in range(0, 120):
        qt, state = rt.step(t, state=state)
        np.testing.assert_array_equal(qt, q[t])
    assert len(state.feet) == len(state.contact) == 4  # two feet, two balls


def test_ball_target_is_rigid_on_the_foot_on_the_ground_in_contact_and_never_below():
    from animik.retarget.retarget import ball_target

    foot = np.array([0.3, 0.1, 0.0])
    v = np.array([0.12, 0.05, 0.04])  # toes up (heel strike)
    d = np.linalg.norm(v)
    # not in contact: the source's vector
    tg, st = ball_target(False, foot, v, 0.0, FootState(), 3, 3)
    np.testing.assert_allclose(tg, foot + v)
    # in contact: eased down over n_in frames, then on the ground, always at the rigid distance
    zs = []
    for _ in range(5):
        tg, st = ball_target(True, foot, v, 0.0, st, 3, 3)
        zs.append(tg[2])
        assert np.isclose(np.linalg.norm(tg - foot), d)
        # the heading is kept
        h = (tg - foot)[:2]
        assert np.isclose(h[0] * v[1] - h[1] * v[0], 0.0, atol=1e-12) and h @ v[:2] > 0
    assert np.all(np.diff(zs) <= 1e-12) and zs[0] > 0.0 and zs[-1] == 0.0
    # heel off: the foot site lifted 3 cm, the ball stays on the ground
    tg, st = ball_target(True, foot + [0, 0, 0.03], v, 0.0, st, 3, 3)
    assert np.isclose(tg[2], 0.0)
    # the ankle at its limit: not below the reference's reachable offset
    tg, _ = ball_target(True, foot, v, 0.0, st, 3, 3, floor=0.02)
    assert np.isclose(tg[2] - foot[2], 0.02)
    # a free foot asking for the toes below the ground: clamped onto it
    tg, _ = ball_target(False, foot, np.array([0.12, 0.0, -0.05]), 0.0, FootState(), 3, 3)
    assert np.isclose(tg[2], 0.0) and np.isclose(np.linalg.norm(tg - foot), 0.13)
