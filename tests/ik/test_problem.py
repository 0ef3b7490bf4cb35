"""The shared IK problem generators (animik.ik.problems)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_skeleton, reference_fk

import animik
from animik.errors import OptionError, UnknownNameError
from animik.ik.problems import (
    circle_tracking,
    hand_site,
    limb_dofs,
    random_reachable,
    sample_q,
    seed_c_singular,
)
from animik.kinematics import forward_kinematics, site_poses, site_positions

RIGS = ["fig2", "body95", "wheeled20", "biped12"]


@pytest.mark.parametrize("rig", RIGS)
def test_random_reachable(rig):
    skel = animik.load_rig(rig)
    rng = np.random.default_rng(0)
    for _ in range(5):
        targets, q_start, q_true = random_reachable(skel, rng)
        assert list(targets) == list(skel.site_names)  # all effectors by default
        assert skel.within_limits(q_true) and skel.within_limits(q_start)
        d = np.abs(q_start - q_true)
        rot = skel.dof_type == 0
        assert np.all(d[rot] <= 0.3 + 1e-12) and np.all(d[~rot] <= 0.03 + 1e-12)
        ref = reference_fk(skel, q_true)[1][:, :3, 3]
        for name, p in targets.items():
            np.testing.assert_allclose(p, ref[skel.site_index(name)], atol=1e-12)
        assert max(np.linalg.norm(site_positions(skel, q_start)[skel.site_index(s)] - p)
                   for s, p in targets.items()) > 1e-3  # not solved already


def test_random_reachable_is_seeded_and_takes_sites():
    skel = animik.load_rig("fig2")
    a = random_reachable(skel, np.random.default_rng(3), sites=["l_hand", "head"])
    b = random_reachable(skel, np.random.default_rng(3), sites=["l_hand", "head"])
    assert list(a.targets) == ["l_hand", "head"]
    np.testing.assert_array_equal(a.q_start, b.q_start)
    np.testing.assert_array_equal(a.targets["head"], b.targets["head"])
    with pytest.raises(UnknownNameError, match="l_hand"):
        random_reachable(skel, np.random.default_rng(3), sites=["left_hand"])


def test_sample_q_handles_free_and_one_sided_limits():
    skel = random_skeleton(np.random.default_rng(1))
    lo = np.array(skel.lower)
    lo[-1] = 0.5
    hi = np.array(skel.upper)
    hi[-1] = np.inf
    skel2 = skel.replace(lower=lo, upper=hi, rest_q=np.clip(skel.rest_q, lo, hi))
    q = sample_q(skel2, np.random.default_rng(0), (200,))
    assert q.shape == (200, skel2.n_dof) and np.all(np.isfinite(q))
    assert np.all(skel2.within_limits(q))
    assert q[:, -1].min() >= 0.5


@pytest.mark.parametrize("rig", RIGS)
def test_circle_tracking(rig):
    skel = animik.load_rig(rig)
    case = circle_tracking(skel)
    assert case.n_frames == 76  # one turn: 2 pi 0.2 m / 1 m/s at 60 fps
    assert case.site == hand_site(skel)
    assert case.site not in case.pinned
    assert skel.within_limits(case.q0)
    np.testing.assert_allclose(case.center,
                               site_positions(skel, case.q0)[skel.site_index(case.site)])
    r = np.linalg.norm(case.positions - case.center, axis=1)
    np.testing.assert_allclose(r, 0.2, atol=1e-12)
    step = np.linalg.norm(np.diff(case.positions, axis=0), axis=1)
    np.testing.assert_allclose(step, 2 * 0.2 * np.sin(1.0 / 60 / 0.2 / 2), rtol=1e-9)  # 1 m/s
    e1, e2 = case.axes
    assert abs(e1 @ e2) < 1e-12 and e1[2] == pytest.approx(0.0, abs=1e-12) and e2[2] >= 0
    # every circle point is equally far from the limb root (the plane faces the shoulder)
    limb = np.flatnonzero(limb_dofs(skel, case.site, case.pinned))
    root = forward_kinematics(skel, case.q0).joint_positions[skel.dof_joint[limb[0]]]
    dist = np.linalg.norm(case.positions - root, axis=1)
    assert np.ptp(dist) < 1e-9
    frames = list(case.frames())
    assert len(frames) == 76 and set(frames[0]) == {case.site}


def test_circle_tracking_pins_other_effectors_not_own_fingers():
    skel = animik.load_rig("body95")
    case = circle_tracking(skel)
    assert case.site == "r_hand"
    assert "l_hand" in case.pinned and "l_index_tip" in case.pinned
    assert not any(s.startswith("r_") and s.endswith("_tip") for s in case.pinned)


def test_circle_tracking_options_and_errors():
    skel = animik.load_rig("fig2")
    case = circle_tracking(skel, site="l_hand", radius=0.1, speed=0.5, fps=30, frames=10,
                           q0=skel.rest_q, pinned=["l_foot"])
    assert case.pinned == ("l_foot",) and case.n_frames == 10
    np.testing.assert_array_equal(case.q0, skel.rest_q)
    with pytest.raises(OptionError, match="radius"):
        circle_tracking(skel, radius=0.0)
    with pytest.raises(OptionError, match="frames"):
        circle_tracking(skel, frames=0)
    with pytest.raises(UnknownNameError):
        circle_tracking(skel, site="tail")


def test_hand_site():
    assert hand_site(animik.load_rig("fig2")) == "r_hand"
    assert hand_site(animik.load_rig("biped12")) == "l_sole"  # no hand: the first site


def test_seed_c_singular():
    skel = animik.load_rig("biped12")
    case = seed_c_singular(skel)
    np.testing.assert_array_equal(case.q_start, 0.0)  # legs straight
    (pl, rl), (pr, rr) = case.targets["l_sole"], case.targets["r_sole"]
    np.testing.assert_allclose(pl, [-0.25, 0.35, 0.0])
    np.testing.assert_allclose(pr, [0.25, -0.35, 0.0])
    np.testing.assert_array_equal(rl, np.eye(3))
    np.testing.assert_array_equal(rr, np.eye(3))
    # each foot moves outward (Y is the character's left): the legs do not cross
    pos, _ = site_poses(skel, case.q_start)
    assert pos[skel.site_index("l_sole"), 1] > 0 and pl[1] > pos[skel.site_index("l_sole"), 1]
    assert pr[1] < pos[skel.site_index("r_sole"), 1]
    # reachable: each target within the leg's reach of its hip
    jp = forward_kinematics(skel, case.q_start).joint_positions
    for side, p in (("l", pl), ("r", pr)):
        hip = jp[skel.joint_index(f"{side}_hip")]
        sole = pos[skel.site_index(f"{side}_sole")]
        assert np.linalg.norm(p - hip) < np.linalg.norm(sole - hip)


def test_seed_c_needs_soles():
    with pytest.raises(UnknownNameError, match="l_sole"):
        seed_c_singular(animik.load_rig("fig2"))


def test_top_level_solve_ik_api():
    import animik

    skel = animik.load_rig("fig2")
    target = animik.site_positions(skel, skel.rest_q)[skel.site_index("l_hand")] + [0.05, 0.0, -0.1]
    res = animik.solve_ik(skel, skel.rest_q, {"l_hand": target}, pinned=["l_foot", "r_foot"])
    assert isinstance(res, animik.IKResult)
    assert res.converged and res.error["l_hand"] < 1e-3
    assert skel.within_limits(res.q)


def test_pins_hold_when_a_target_is_out_of_reach():
    """Pins outrank targets by default: an unreachable reach does not drag pinned feet along."""
    import animik
    from animik.ik.problem import PIN_WEIGHT

    skel = animik.load_rig("body95")
    pins = ["l_foot", "r_foot"]
    res = animik.solve_ik(skel, skel.rest_q, {"l_hand": [3.0, 3.0, 3.0]}, pinned=pins)
    unit = animik.solve_ik(skel, skel.rest_q, {"l_hand": [3.0, 3.0, 3.0]}, pinned=pins,
                           weights={p: 1.0 for p in pins})
    assert not res.converged and not unit.converged and PIN_WEIGHT > 1
    assert skel.within_limits(res.q)
    # hard pins (the default): strictly before the reach, whatever their weight
    for p in pins:
        assert res.error[p] < 1e-6 and unit.error[p] < 1e-6, (res.error, unit.error)
    # the old compromise (weighted least squares) moves them; the weight limits the damage
    soft = animik.solve_ik(skel, skel.rest_q, {"l_hand": [3.0, 3.0, 3.0]}, pinned=pins,
                           hard_pins=False)
    soft_unit = animik.solve_ik(skel, skel.rest_q, {"l_hand": [3.0, 3.0, 3.0]}, pinned=pins,
                                weights={p: 1.0 for p in pins}, hard_pins=False)
    for p in pins:
        assert soft.error[p] < 0.05 and soft.error[p] < 0.2 * soft_unit.error[p]
