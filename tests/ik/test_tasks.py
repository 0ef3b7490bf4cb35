"""IK tasks (animik.ik.tasks): every task's Jacobian against finite differences, the centre of
mass against MuJoCo, and the centre-of-mass task solved with pins."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q, random_skeleton

import animik
from animik.errors import OptionError, ShapeError, UnknownNameError, ValueRangeError
from animik.ik import build_problem, prepare_ik, solve_ik
from animik.ik.tasks import TaskFrames, keyword_modules
from animik.ik.tasks.com import ComTask
from animik.ik.tasks.limits import for_skeleton
from animik.ik.tasks.orientation import SitePoseTask
from animik.ik.tasks.pin import pin
from animik.ik.tasks.position import SitePositionTask
from animik.ik.tasks.posture import PostureTask
from animik.kinematics import com_jacobian, com_position, forward_kinematics, site_poses

H = 1e-6


def _fd_current(task, skel, q):
    """``d current / dq`` by central differences of the error at a target equal to the
    current value at ``q`` (then ``d error / dq = −d current / dq`` exactly, also for the
    rotation-vector rows)."""
    n = skel.n_dof
    cols = []
    for d in range(n):
        dq = np.zeros(n)
        dq[d] = H
        ep = task.compute_error(TaskFrames.at(skel, q + dq))
        em = task.compute_error(TaskFrames.at(skel, q - dq))
        cols.append(-(ep - em) / (2 * H))
    return np.stack(cols, axis=1)


def _skeletons(rng):
    return [animik.load_rig("body95"), animik.load_rig("wheeled20"),
            random_skeleton(rng, n_joints=12, n_sites=3)]


def test_site_tasks_jacobians_match_finite_differences(rng):
    for skel in _skeletons(rng):
        q = random_q(skel, rng)
        fr = TaskFrames.at(skel, q)
        pos, rot = site_poses(skel, q)
        for s in range(skel.n_sites):
            for task in (SitePositionTask(skel.site_names[s], s, pos[s]),
                         SitePoseTask(skel.site_names[s], s, pos[s], rot[s]),
                         pin(fr, skel.site_names[s]), pin(fr, skel.site_names[s], rotation=True)):
                assert np.allclose(task.compute_error(fr), 0, atol=1e-9)
                J = task.compute_jacobian(fr)
                assert J.shape == (task.rows, skel.n_dof)
                assert np.allclose(J, _fd_current(task, skel, q), atol=1e-6), task


@pytest.mark.parametrize("axes", [(0, 1), (0, 1, 2)])
def test_com_task_jacobian_matches_finite_differences(axes, rng):
    for skel in _skeletons(rng):
        q = random_q(skel, rng)
        c = com_position(skel, q)
        task = ComTask(c + rng.normal(0, 0.1, 3), axes)
        fr = TaskFrames.at(skel, q)
        J = task.compute_jacobian(fr)
        # the error is linear in the COM, so finite differences at any target are exact
        n = skel.n_dof
        fd = np.stack([-(task.compute_error(TaskFrames.at(skel, q + H * np.eye(n)[d]))
                         - task.compute_error(TaskFrames.at(skel, q - H * np.eye(n)[d]))) / (2 * H)
                       for d in range(n)], axis=1)
        assert np.allclose(J, fd, atol=1e-6)
        assert np.allclose(J, com_jacobian(skel, q)[list(axes)], atol=1e-12)


def test_posture_and_limit_tasks_jacobians_match_finite_differences(rng):
    for skel in _skeletons(rng):
        n = skel.n_dof
        w = rng.uniform(0, 1, n) * (rng.uniform(size=n) > 0.3)
        posture = PostureTask(random_q(skel, rng), w)
        limits = for_skeleton(skel, margin=0.4)
        for _ in range(3):
            # poses near the limits, so the limit task's ramp is active on many DoFs
            lo, hi = skel.lower, skel.upper
            fin = np.isfinite(lo) & np.isfinite(hi)
            q = random_q(skel, rng)
            q[fin] = lo[fin] + (hi[fin] - lo[fin]) * rng.choice([0.04, 0.15, 0.5, 0.85, 0.96],
                                                                fin.sum())
            fr = TaskFrames.at(skel, q)
            for task in (posture, limits):
                fd = np.stack([(task.compute_error(TaskFrames.at(skel, q + H * np.eye(n)[d]))
                                - task.compute_error(TaskFrames.at(skel, q - H * np.eye(n)[d])))
                               / (2 * H) for d in range(n)], axis=1)
                assert np.allclose(task.compute_jacobian(fr), -fd, atol=1e-5), task.name
        assert limits.rows > 0 and np.any(limits.compute_error(fr) != 0)


def test_fik_kernel_com_block_jacobian_matches_finite_differences(rng):
    """FIK's compiled loop evaluates the CoM rows itself (the point block): its transposed
    Jacobian equals central differences of its own error, and no row outside a DoF's run of
    rows depends on that DoF (the sparse products would drop it)."""
    from animik.ik import _fik_kernels as K
    from animik.ik import fik

    skel = animik.load_rig("body95")
    q0 = np.clip(np.array(skel.rest_q) + rng.normal(0.0, 0.2, skel.n_dof), skel.lower, skel.upper)
    hand = forward_kinematics(skel, q0).site_positions[skel.site_index("l_hand")]
    c = com_position(skel, q0)
    prob = build_problem(skel, q0, {"l_hand": hand + [0.0, 0.1, 0.1]}, pinned=["l_foot", "r_foot"],
                         com=(c[0] + 0.05, c[1], c[2] - 0.02), weights={"com": 2.0})
    s = fik._setup(prob, fik.resolve_options(prob, {}), K.FORM_VARIABLE)
    ctx = fik._context(prob, s, K.FORM_VARIABLE)
    task = fik._task_arrays(prob, ctx.lay)
    n, m, k, nj = ctx.n, ctx.m, ctx.k, skel.n_joints

    def evaluate(q):
        work = (np.empty((nj, 3, 3)), np.empty((nj, 3)), np.empty((n, 3)), np.empty((n, 3)),
                np.empty((k, 3, 3)), np.empty((k, 3)))
        e, jt, se = np.zeros(m), np.zeros((n, m)), np.zeros((k + 1, 2))
        K.evaluate(q, ctx.model, task, ctx.struct, work, e, jt, se)
        return e, jt

    _, jt = evaluate(q0)
    h = 1e-6
    fd = np.empty((n, m))
    for d in range(n):
        dq = np.zeros(n)
        dq[d] = h
        fd[d] = -(evaluate(q0 + dq)[0] - evaluate(q0 - dq)[0]) / (2 * h)  # e = w (target - value)
    ms = m - 3
    assert np.abs(fd[:, ms:]).max() > 0.1  # the CoM rows are exercised (weight 2)
    np.testing.assert_allclose(jt[:, ms:], fd[:, ms:], atol=1e-7)
    np.testing.assert_allclose(jt[:, :ms], fd[:, :ms], atol=1e-7)
    r0, r1 = ctx.struct[0], ctx.struct[1]
    for d in range(n):
        outside = np.ones(m, dtype=bool)
        outside[r0[d]:r1[d]] = False
        assert np.abs(fd[d, outside]).max(initial=0.0) < 1e-8


def test_com_matches_mujoco(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    from animik.io.mjcf import mjcf_mass_properties, write_mjcf

    skel = animik.load_rig("body95")
    masses, _ = mjcf_mass_properties(skel)
    assert np.array_equal(masses, skel.masses)  # no floored massless body on this rig
    model = mujoco.MjModel.from_xml_path(str(write_mjcf(skel, tmp_path / "m.xml")))
    data = mujoco.MjData(model)
    qadr = np.array([model.joint(n).qposadr[0] for n in skel.dof_names])
    dadr = np.array([model.joint(n).dofadr[0] for n in skel.dof_names])
    rng = np.random.default_rng(0)
    for q in [skel.rest_q, *random_q(skel, rng, (3,))]:
        data.qpos[:] = 0.0
        data.qpos[qadr] = q
        mujoco.mj_forward(model, data)
        assert np.allclose(com_position(skel, q), data.subtree_com[0], atol=1e-9)
        jacp = np.zeros((3, model.nv))
        mujoco.mj_jacSubtreeCom(model, data, jacp, 0)
        assert np.allclose(com_jacobian(skel, q), jacp[:, dadr], atol=1e-9)


def test_com_position_is_the_mass_weighted_segment_com(rng):
    skel = random_skeleton(rng, n_joints=9, n_sites=2)
    q = random_q(skel, rng, (4,))
    fk = forward_kinematics(skel, q)
    seg = fk.joint_positions + np.einsum("bjac,jc->bja", fk.joint_rotations, skel.coms)
    ref = (skel.masses[None, :, None] * seg).sum(1) / skel.masses.sum()
    assert com_position(skel, q).shape == (4, 3)
    assert np.allclose(com_position(skel, q), ref, atol=1e-12)


# ------------------------------------------------------------------ solving with a COM task
@pytest.mark.parametrize("solver", ["fik", "fik_fixed", "dls", "pinv"])
@pytest.mark.parametrize("axes", ["xy", "xyz"])
def test_com_forward_with_feet_pinned(solver, axes):
    """body95, feet pinned, centre of mass 5 cm forward (+x, toes point along +x)."""
    skel = animik.load_rig("body95")
    q0 = skel.rest_q
    c0 = com_position(skel, q0)
    goal = c0 + [0.05, 0.0, -0.03 if axes == "xyz" else 0.0]
    com = goal[:2] if axes == "xy" else goal
    feet0 = forward_kinematics(skel, q0).site_positions[[skel.site_index("l_foot"),
                                                          skel.site_index("r_foot")]]
    r = solve_ik(skel, q0, {}, solver=solver, pinned=["l_foot", "r_foot"], com=com)
    assert r.converged, (r.reason, r.error)
    c = com_position(skel, r.q)
    k = len(com)
    assert np.linalg.norm(c[:k] - goal[:k]) <= 1e-3
    assert r.error["com"] == pytest.approx(np.linalg.norm(c[:k] - goal[:k]), abs=1e-9)
    feet = r.fk.site_positions[[skel.site_index("l_foot"), skel.site_index("r_foot")]]
    assert np.abs(feet - feet0).max() <= 1e-3
    assert skel.within_limits(r.q)


def test_com_with_a_hand_target_and_weights():
    skel = animik.load_rig("body95")
    q0 = skel.rest_q
    c0 = com_position(skel, q0)
    hand = forward_kinematics(skel, q0).site_positions[skel.site_index("r_hand")]
    r = solve_ik(skel, q0, {"r_hand": hand + [0.15, 0.0, 0.1]}, pinned=["l_foot", "r_foot"],
                 com=c0[:2] + [0.02, 0.0], weights={"com": 5.0}, max_iterations=300)
    assert r.converged
    assert np.linalg.norm(com_position(skel, r.q)[:2] - (c0[:2] + [0.02, 0.0])) <= 1e-3
    p = build_problem(skel, q0, {}, com=c0[:2], weights={"com": 5.0})
    assert p.tasks[0].weight == 5.0 and p.m == 2 and p.item_names == ("com",)


def test_prepared_com_target_per_frame_matches_solve_ik():
    skel = animik.load_rig("body95")
    q0 = skel.rest_q
    c0 = com_position(skel, q0)
    ik = prepare_ik(skel, q0, {}, pinned=["l_foot", "r_foot"], com=c0[:2])
    q, st = q0, None
    for t in range(6):
        goal = c0[:2] + [0.01 * t, 0.005 * t]
        r = ik.solve(q, targets={"com": goal}, state=st)
        ref = solve_ik(skel, q, {}, pinned=["l_foot", "r_foot"], com=goal, state=st) \
            if st is None else None
        if ref is not None:
            assert np.array_equal(ref.q, r.q)
        assert r.converged and np.linalg.norm(com_position(skel, r.q)[:2] - goal) <= 1e-3
        q, st = r.q, r.state
    with pytest.raises(OptionError, match="axes"):
        ik.solve(q, targets={"com": c0})
    generic = prepare_ik(skel, q0, {}, solver="dls", pinned=["l_foot", "r_foot"], com=c0[:2])
    r = generic.solve(q0, targets={"com": c0[:2] + [0.03, 0.0]})
    assert r.converged and r.error["com"] <= 1e-3


def test_task_keywords_and_errors():
    assert "com" in keyword_modules()
    skel = animik.load_rig("fig2")
    q0 = skel.rest_q
    with pytest.raises(ShapeError, match="com"):
        solve_ik(skel, q0, {}, com=(1.0,))
    with pytest.raises(ValueRangeError, match="NaN"):
        solve_ik(skel, q0, {}, com=(np.nan, 0.0))
    with pytest.raises(OptionError, match="weight of 'com'"):
        solve_ik(skel, q0, {}, com=(0.0, 0.0), weights={"com": -1})
    with pytest.raises(UnknownNameError, match="task keyword"):
        build_problem(skel, q0, {}, comm=(0.0, 0.0))
    with pytest.raises(OptionError, match="no block in FIK"):
        solve_ik(skel, q0, {}, tasks=[PostureTask(q0, np.ones(skel.n_dof))])
    # a generic task runs on the generic solvers
    r = solve_ik(skel, q0, {}, solver="dls", tasks=[PostureTask(q0 + 0.01, np.ones(skel.n_dof))])
    assert r.converged and np.allclose(r.q, np.clip(q0 + 0.01, skel.lower, skel.upper), atol=1e-3)
