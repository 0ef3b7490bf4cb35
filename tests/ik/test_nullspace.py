"""Null-space tasks of feedback IK (eqs 9f–9j): reference poses and joint-limit avoidance."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_skeleton

import animik
from animik.errors import OptionError, ShapeError, UnknownNameError, ValueRangeError
from animik.ik import build_problem, fik, solve_ik, solve_problem
from animik.ik.nullspace import limit_centre_halfwidth, reference_task, rest_reference
from animik.ik.problems import random_reachable
from animik.kinematics import site_poses
from animik.skeleton import Dof, Joint, Site, Skeleton


def _all_sites_pinned(skel, q0, pin_rotation=False):
    return build_problem(skel, q0, {}, pinned=list(skel.site_names), pin_rotation=pin_rotation)


@pytest.mark.parametrize("rig", ["body95", "fig2"])
def test_reference_pulls_redundant_dofs_without_moving_effectors(rig):
    skel = animik.load_rig(rig)
    rng = np.random.default_rng(1)
    q0 = np.clip(skel.rest_q + rng.uniform(-0.4, 0.4, skel.n_dof), skel.lower, skel.upper)
    bq = rest_reference(skel)
    prob = _all_sites_pinned(skel, q0)  # every effector held where it is
    r = solve_problem(prob, q0, "fik", reference=bq, reference_gain=0.5, max_iterations=400)
    assert r.converged
    assert r.max_error <= 1e-3  # the effectors did not move (beyond the tolerance)
    assert skel.within_limits(r.q)
    before = np.linalg.norm(q0 - bq)
    after = np.linalg.norm(np.asarray(r.q) - bq)
    assert after < 0.95 * before  # the redundant DoFs went towards bq
    # converged = the null-space motion died out: as close to bq as the effectors allow
    assert r.reason == "converged"
    # and the motion really is in the null space: the effectors were never pulled along
    p0, _ = site_poses(skel, q0)
    p1, _ = site_poses(skel, r.q)
    assert np.abs(p1 - p0).max() <= 1e-3


def test_reference_with_reachable_target_effector_still_converges():
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(8)
    ok = 0
    closer = 0
    for _ in range(10):
        targets, q_start, _ = random_reachable(skel, rng, sites=["l_hand", "r_hand", "head"])
        bq = np.clip(q_start + rng.uniform(-0.3, 0.3, skel.n_dof), skel.lower, skel.upper)
        # the null-space term itself, without solve_ik's natural-posing gains
        plain = solve_ik(skel, q_start, targets, reference=None, dof_gains=None, limits=True)
        pulled = solve_ik(skel, q_start, targets, reference=bq, reference_gain=0.5,
                          max_iterations=400, dof_gains=None, limits=True)
        ok += pulled.converged and pulled.max_error <= 1e-3 and skel.within_limits(pulled.q)
        closer += np.linalg.norm(pulled.q - bq) < np.linalg.norm(plain.q - bq)
    assert ok == 10
    assert closer >= 9


def test_reference_as_mapping_pulls_only_named_dofs():
    skel = animik.load_rig("body95")
    q0 = np.array(skel.rest_q)
    prob = _all_sites_pinned(skel, q0)
    # a value the user holds: the lumbar rotation (the hands and feet are pinned, the spine
    # can still twist with compensation in the arms)
    name = "lumbar_rotation"
    k = skel.dof_index(name)
    target_val = 0.25
    r = solve_problem(prob, q0, "fik", reference={name: target_val}, reference_gain=0.5,
                      max_iterations=400)
    assert r.converged and r.max_error <= 1e-3
    assert abs(r.q[k] - target_val) < abs(q0[k] - target_val)
    # weights: a zero weight switches the task off for that DoF; the others still pull
    other = "neck_rotation"
    j = skel.dof_index(other)
    r0 = solve_problem(prob, q0, "fik", reference={name: target_val, other: 0.3},
                       reference_weights={name: 0.0, other: 1.0}, max_iterations=400)
    assert r0.max_error <= 1e-3
    assert abs(r0.q[j] - 0.3) < abs(q0[j] - 0.3)
    assert abs(r0.q[k] - target_val) >= abs(r.q[k] - target_val)
    with pytest.raises(ValueRangeError, match="positive weight"):
        solve_problem(prob, q0, "fik", reference={name: target_val},
                      reference_weights={name: 0.0})


def test_limit_avoidance_moves_dofs_off_their_limits_in_the_null_space():
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(4)
    q0 = np.array(skel.rest_q)
    fin = np.isfinite(skel.lower) & np.isfinite(skel.upper)
    centre, half = limit_centre_halfwidth(skel)
    # put a few spine / neck DoFs right next to a limit
    names = ["lumbar_lateral", "neck_rotation", "lower_thorax_flexion"]
    for nm in names:
        k = skel.dof_index(nm)
        assert fin[k]
        q0[k] = skel.upper[k] - 0.01 * half[k]
    prob = _all_sites_pinned(skel, q0)
    r = solve_problem(prob, q0, "fik", limits=True, limit_gain=0.3, limit_margin=0.2,
                      reference=q0, reference_weights=np.zeros(skel.n_dof) + 1e-9,
                      max_iterations=300)
    assert r.max_error <= 1e-3
    moved_in = [abs(r.q[skel.dof_index(nm)] - centre[skel.dof_index(nm)])
                < abs(q0[skel.dof_index(nm)] - centre[skel.dof_index(nm)]) for nm in names]
    assert sum(moved_in) >= 2
    del rng


def test_null_space_in_fixed_form_too():
    skel = animik.load_rig("fig2")
    rng = np.random.default_rng(2)
    q0 = np.clip(skel.rest_q + rng.uniform(-0.4, 0.4, skel.n_dof), skel.lower, skel.upper)
    prob = build_problem(skel, q0, {}, pinned=["l_hand", "r_hand", "l_foot", "r_foot"])
    bq = rest_reference(skel)
    r = fik.solve_fixed(prob, q0, reference=bq, reference_gain=0.5, max_iterations=600)
    assert r.max_error <= 1e-3
    assert np.linalg.norm(r.q - bq) < np.linalg.norm(q0 - bq)


def test_limit_centre_halfwidth_free_and_one_sided():
    skel = Skeleton.from_joints("s", [
        Joint("a", None, (0, 0, 0), [Dof("free", "rx"), Dof("one", "ry", lower=0.0),
                                     Dof("both", "rz", -0.5, 1.5)]),
    ], [Site("s", "a", (0.1, 0, 0))])
    c, h = limit_centre_halfwidth(skel)
    assert np.allclose(c, [0.0, 0.0, 0.5]) and np.allclose(h, [0.0, 0.0, 1.0])


def test_reference_task_validation_and_clipping(rng):
    skel = random_skeleton(rng, n_joints=5, n_sites=2)
    n = skel.n_dof
    bq, w = reference_task(skel, np.full(n, 100.0), 0.5, None)
    assert np.all(bq <= skel.upper) and np.allclose(w, 0.5)  # clipped into the limits
    assert reference_task(skel, None, 0.5, None) == (None, None)
    with pytest.raises(ShapeError, match="reference must have shape"):
        reference_task(skel, np.zeros(n + 1), 0.5, None)
    with pytest.raises(ValueRangeError, match="NaN"):
        reference_task(skel, np.full(n, np.nan), 0.5, None)
    with pytest.raises(UnknownNameError, match="unknown DoF"):
        reference_task(skel, {"nope": 0.0}, 0.5, None)
    with pytest.raises(OptionError, match="reference_gain"):
        reference_task(skel, np.zeros(n), 1.5, None)
    with pytest.raises(ValueRangeError, match="positive weight"):
        reference_task(skel, np.zeros(n), 0.5, np.zeros(n))
