"""The trusted per-frame path (prepare_ik): same results as solve_problem, frames in the result,
validation at the boundary only."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import reference_fk

import animik
from animik.errors import OptionError, ShapeError, UnknownNameError, ValueRangeError
from animik.ik import build_problem, prepare_ik, prepare_problem, solve_ik, solve_problem
from animik.ik.problems import circle_tracking, random_reachable

RIGS = ["fig2", "body95", "wheeled20", "biped12"]


@pytest.mark.parametrize("rig", RIGS)
def test_prepared_tracking_equals_solve_problem(rig):
    skel = animik.load_rig(rig)
    case = circle_tracking(skel, frames=25)
    targets0 = {case.site: case.positions[0]}
    problem = build_problem(skel, case.q0, targets0, pinned=case.pinned)
    prep = prepare_ik(skel, case.q0, targets0, pinned=case.pinned)
    assert prep.site_names == problem.site_names
    q_a = q_b = case.q0
    st_a = st_b = None
    pos = np.array(prep.positions)
    for i, tgt in enumerate(case.frames()):
        problem = problem.with_targets(tgt)
        ra = solve_problem(problem, q_a, state=st_a)
        if i % 2:  # both update routes: a dict of targets and the (k, 3) array
            rb = prep.solve(q_b, targets=tgt, state=st_b)
        else:
            pos[0] = tgt[case.site]
            rb = prep.solve(q_b, positions=pos, state=st_b)
        # the same kernel on the same inputs: identical, not merely close
        assert np.array_equal(ra.q, rb.q) and ra.iterations == rb.iterations
        assert ra.error == rb.error and ra.reason == rb.reason
        assert np.array_equal(ra.state.z, rb.state.z)
        q_a, st_a, q_b, st_b = ra.q, ra.state, rb.q, rb.state
    assert np.allclose(prep.positions, pos)


def test_prepared_reference_per_frame_equals_option():
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(3)
    targets, q0, _ = random_reachable(skel, rng, sites=["l_hand", "r_foot"])
    problem = build_problem(skel, q0, targets)
    prep = prepare_problem(problem, reference_gain=0.3)
    q_a = q_b = q0
    st_a = st_b = None
    for _ in range(4):
        ref = np.clip(q0 + rng.normal(0, 0.1, skel.n_dof), skel.lower, skel.upper)
        ra = solve_problem(problem, q_a, reference=ref, reference_gain=0.3, state=st_a,
                           max_iterations=7)
        rb = prep.solve(q_b, reference=ref, state=st_b, max_iterations=7)
        assert np.array_equal(ra.q, rb.q) and ra.iterations == rb.iterations
        q_a, st_a, q_b, st_b = ra.q, ra.state, rb.q, rb.state
    # without a per-call reference the prepared options apply (none here)
    rc = prep.solve(q0)
    rd = solve_problem(problem, q0, reference_gain=0.3)
    assert np.array_equal(rc.q, rd.q)
    # per-DoF reference weights prepared without a reference weight each frame's reference
    w = np.linspace(0.0, 1.0, skel.n_dof)
    prep_w = prepare_problem(problem, reference_gain=0.3, reference_weights=w)
    ref = np.clip(q0 + 0.05, skel.lower, skel.upper)
    ra = prep_w.solve(q0, reference=ref, max_iterations=7)
    rb = solve_problem(problem, q0, reference=ref, reference_gain=0.3, reference_weights=w,
                       max_iterations=7)
    assert np.array_equal(ra.q, rb.q)


@pytest.mark.parametrize("solver", ["fik", "fik_fixed", "dls"])
def test_result_frames_match_independent_fk(solver):
    skel = animik.load_rig("body95")
    targets, q0, _ = random_reachable(skel, np.random.default_rng(5))
    r = solve_ik(skel, q0, targets, solver=solver)
    world, sites = reference_fk(skel, np.asarray(r.q))
    assert np.allclose(r.fk.joint_positions, world[:, :3, 3], atol=1e-12)
    assert np.allclose(r.fk.joint_rotations, world[:, :3, :3], atol=1e-12)
    assert np.allclose(r.site_positions, sites[:, :3, 3], atol=1e-12)
    assert np.allclose(r.site_rotations, sites[:, :3, :3], atol=1e-12)
    assert not r.fk.joint_positions.flags.writeable
    # the errors the solver reports are those of the frames it returns
    for name, err in r.error.items():
        i = skel.site_index(name)
        assert err == pytest.approx(np.linalg.norm(r.site_positions[i] - targets[name]), abs=1e-12)


def test_frames_after_a_rejected_step_are_at_the_returned_pose():
    # unreachable target: steps get undone (trial poses evaluated and dropped) and the best pose
    # is restored; the frames must still be those of result.q
    skel = animik.load_rig("body95")
    q0 = skel.rest_q
    r = solve_ik(skel, q0, {"l_hand": [0.0, 2.0, 1.0]}, pinned=["l_foot", "r_foot"])
    assert not r.converged
    _, sites = reference_fk(skel, np.asarray(r.q))
    assert np.allclose(r.site_positions, sites[:, :3, 3], atol=1e-12)


def test_prepared_validates_at_the_boundary():
    skel = animik.load_rig("fig2")
    targets, q0, _ = random_reachable(skel, np.random.default_rng(1), sites=["l_hand"])
    with pytest.raises(UnknownNameError, match="damping_typo"):
        prepare_ik(skel, q0, targets, damping_typo=1.0)
    with pytest.raises(OptionError, match="damping"):
        prepare_ik(skel, q0, targets, damping=-1.0)
    with pytest.raises(OptionError, match="callback"):
        prepare_ik(skel, q0, targets, callback=lambda *a: None)
    with pytest.raises(UnknownNameError, match="solver"):
        prepare_ik(skel, q0, targets, solver="nope")
    with pytest.raises(OptionError, match="per frame"):
        prepare_ik(skel, q0, targets, state=solve_ik(skel, q0, targets).state)
    prep = prepare_ik(skel, q0, targets)
    with pytest.raises(ShapeError, match="positions"):
        prep.solve(q0, positions=np.zeros((2, 3)))
    with pytest.raises(ValueRangeError, match="NaN"):
        prep.solve(q0, positions=np.full((1, 3), np.nan))
    with pytest.raises(ValueRangeError, match="NaN"):
        prep.solve(np.full(skel.n_dof, np.nan))
    with pytest.raises(ShapeError):
        prep.solve(np.zeros(3))
    with pytest.raises(UnknownNameError, match="r_hand"):
        prep.solve(q0, targets={"r_hand": [0, 0, 1]})
    with pytest.raises(ShapeError, match="reference"):
        prep.solve(q0, reference=np.zeros(2))
    with pytest.raises(OptionError, match="max_iterations"):
        prep.solve(q0, max_iterations=-1)
    other = solve_ik(skel, q0, {"r_hand": targets["l_hand"]})
    with pytest.raises(ShapeError, match="state=None"):
        prep.solve(q0, state=other.state)
    r = prep.solve(q0)
    assert r.converged


def test_prepared_generic_solver_has_the_same_interface():
    skel = animik.load_rig("fig2")
    case = circle_tracking(skel, frames=5)
    prep = prepare_ik(skel, case.q0, {case.site: case.positions[0]}, solver="dls",
                      pinned=case.pinned)
    q = case.q0
    for tgt in case.frames():
        r = prep.solve(q, targets=tgt)
        assert r.solver == "dls" and r.converged
        q = r.q
    pos = np.array(prep.positions)
    pos[0] += 0.01
    r = prep.solve(q, positions=pos)
    assert r.error[case.site] <= 1e-3
