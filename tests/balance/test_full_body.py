"""The full-body plant: wheeled20 posed from the two-mass state, its CoP by inverse dynamics."""

from dataclasses import replace

import numpy as np
import pytest
from balance_helpers import model  # noqa: F401

import animik
from animik.balance import BalanceError
from animik.balance.experiments import EXPERIMENTS, run
from animik.balance.full_body import FullBody
from animik.kinematics import forward_kinematics


@pytest.fixture(scope="module")
def rig():
    return animik.load_rig("wheeled20")


def _whole_com(skel, q):
    fk = forward_kinematics(skel, q)
    pts = fk.joint_positions + np.einsum("jab,jb->ja", fk.joint_rotations, skel.coms)
    return (skel.masses[:, None] * pts).sum(0) / skel.masses.sum()


def test_pose_puts_the_upper_body_com_over_c_and_the_base_on_b(rig):
    fb = FullBody(rig)
    b, c = np.array([0.3, -0.2]), np.array([0.34, -0.17])
    q = fb.pose(b, c, 0.4)
    names = rig.dof_names
    assert q[names.index("base_x")] == 0.3 and q[names.index("base_yaw")] == 0.4
    np.testing.assert_allclose(fb.upper_com(q)[:2], c, atol=1e-10)
    assert fb.residual < 1e-10
    # the hip roll's limit caps the sideways lean: c 9 cm to the side is not reached, and says so
    fb.pose(np.zeros(2), np.array([0.0, 0.09]), 0.0)
    assert fb.residual > 0.01


def test_static_cop_is_the_whole_body_com(rig):
    fb = FullBody(rig)
    body, base = np.zeros((2, 3)), np.zeros((2, 3))
    body[:, 0] = (0.04, -0.02)
    p, q = fb.cop(body, base, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(p, _whole_com(rig, q)[:2], atol=1e-9)


def test_rigid_translation_cop_is_com_minus_height_times_acceleration(rig):
    """c = b, both accelerating by a: the rig translates rigidly, so the CoP is exactly
    com_xy - z_com a / g (no rotation; the two-mass model's lever is its own (m_c h + m_b l)/m)."""
    fb = FullBody(rig)
    a = np.array([1.2, -0.7])
    st = np.zeros((2, 3))
    st[:, 1] = (0.5, 0.1)
    st[:, 2] = a
    p, q = fb.cop(st.copy(), st.copy(), np.zeros(2), np.zeros(2))
    com = _whole_com(rig, q)
    np.testing.assert_allclose(p, com[:2] - com[2] * a / 9.81, atol=2e-6)


def test_ik_pose_reaches_c_where_the_leg_cannot(rig):
    fb = FullBody(rig, method="ik")
    q = fb.pose(np.zeros(2), np.array([0.0, 0.09]), 0.0)
    assert fb.residual < 1e-5
    assert q[rig.dof_names.index("base_y")] == 0.0


def test_bad_input(rig, model):  # noqa: F811
    with pytest.raises(BalanceError, match="method"):
        FullBody(rig, method="newton")
    with pytest.raises(BalanceError, match="lacks the DoFs"):
        FullBody(animik.load_rig("body95"))
    with pytest.raises(BalanceError, match="plant"):
        run(EXPERIMENTS[1], model, plant="three-mass")
    with pytest.raises(BalanceError, match="skeleton"):
        run(EXPERIMENTS[1], model, plant="full-body")


def test_experiment_on_the_full_body_differs_from_the_model_but_keeps_the_cop_inside(rig, model):  # noqa: F811
    exp = replace(EXPERIMENTS[1], duration=6.0)  # through the corner at 5 s
    r = run(exp, model, plant="full-body", skeleton=rig)
    m = r.metrics
    assert m["plant"] == "full-body (leg)"
    assert m["cop_outside_samples"] == 0 and m["com_unreached_samples"] == 0
    assert 0.005 < m["cop_model_gap_max_m"] < 0.05
    s = r.series
    assert np.allclose(s["cop_model"], run(exp, model).series["cop"])
