"""Baseline IK solvers: dls, pinv, jt, jt_speculative (seed B), approx_inverse (seed C).

Convergence is asserted as a success rate on seeded random reachable problems of every built-in
rig (never a time). Success is checked with FK here, not taken from the solver's own report.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_skeleton

import animik
from animik.errors import OptionError, ShapeError, UnknownNameError, ValueRangeError
from animik.ik import SOLVERS, build_problem, get_solver, solve_ik, solve_problem
from animik.ik import speculative as spec_mod
from animik.ik.approx_inverse import approx_inverse_step, knee_like_dofs
from animik.ik.problems import random_reachable, seed_c_singular
from animik.kinematics import forward_kinematics, site_poses, site_positions

BASELINES = ["dls", "pinv", "jt", "jt_speculative", "approx_inverse"]
RIGS = ["fig2", "body95", "wheeled20", "biped12"]
FIRST_ORDER = {"jt", "jt_speculative", "approx_inverse"}
# The first-order methods converge linearly; with body95's ten fingertips (levers of a few cm
# next to 1.7 m of body) the all-effector problem is too ill-conditioned for them to reach 1 mm
# within their iteration caps (see `animik bench ik`), so they are tested on its five main
# effectors there.
BODY95_MAIN = ["head", "l_hand", "r_hand", "l_foot", "r_foot"]
N_PROBLEMS = 8


def _rig(name):
    return animik.load_rig(name)


def _max_error(skel, q, targets):
    pos = site_positions(skel, q)
    return max(float(np.linalg.norm(pos[skel.site_index(s)] - p)) for s, p in targets.items())


def test_registered():
    for name in BASELINES:
        assert name in SOLVERS
        assert callable(get_solver(name))


@pytest.mark.parametrize("solver", BASELINES)
@pytest.mark.parametrize("rig", RIGS)
def test_converges_on_reachable_problems(rig, solver):
    skel = _rig(rig)
    sites = BODY95_MAIN if (rig == "body95" and solver in FIRST_ORDER) else None
    rng = np.random.default_rng(2024)
    ok = 0
    for _ in range(N_PROBLEMS):
        targets, q_start, _ = random_reachable(skel, rng, sites=sites)
        r = solve_ik(skel, q_start, targets, solver=solver)
        assert np.all(np.isfinite(r.q))
        assert skel.within_limits(r.q), "q left the joint limits"
        err = _max_error(skel, r.q, targets)
        assert r.converged == (err <= 1e-3 + 1e-12)
        assert r.solver == solver
        ok += err <= 1e-3
    # dls / pinv solve every problem; the first-order methods nearly all (robust rate).
    need = N_PROBLEMS if solver in ("dls", "pinv") else N_PROBLEMS - 2
    assert ok >= need, f"{solver} on {rig}: {ok}/{N_PROBLEMS} converged"


@pytest.mark.parametrize("solver", BASELINES)
def test_general_skeletons(solver):
    """Random trees: general axes, translations, rest rotations, sites with rotations."""
    ok = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        skel = random_skeleton(rng, n_joints=10, n_sites=3)
        targets, q_start, _ = random_reachable(skel, rng)
        r = solve_ik(skel, q_start, targets, solver=solver, max_iterations=20000,
                     stall_window=500)
        assert skel.within_limits(r.q) and np.all(np.isfinite(r.q))
        ok += r.converged
    assert ok >= 5


@pytest.mark.parametrize("solver", BASELINES)
def test_pose_targets_and_pins(solver):
    """Position + orientation targets with a pinned site (fig2: hand pose, feet pinned)."""
    skel = _rig("fig2")
    rng = np.random.default_rng(7)
    q_true = np.array(skel.rest_q)
    limb = [skel.dof_index(n) for n in ("r_shoulder_horizontal_flexion", "r_shoulder_abduction",
                                        "r_shoulder_rotation", "r_elbow_flexion")]
    q_true[limb] = [0.6, -0.3, 0.2, 1.2]
    pos, rot = site_poses(skel, q_true)
    i = skel.site_index("r_hand")
    q0 = np.array(skel.rest_q)
    q0[limb] += rng.uniform(-0.2, 0.2, 4)
    q0 = np.clip(q0, skel.lower, skel.upper)
    targets = {"r_hand": (pos[i], rot[i])}
    # Pins weigh PIN_WEIGHT (10) by default; the first-order transpose methods converge at a
    # rate set by the weighted conditioning, so they get unit weights here.
    weights = {"l_foot": 1.0, "r_foot": 1.0} if solver in ("jt", "jt_speculative") else None
    r = solve_ik(skel, q0, targets, solver=solver, pinned=["l_foot", "r_foot"], weights=weights,
                 max_iterations=20000, stall_window=500)
    assert r.converged, (r.reason, r.error, r.angle_error)
    assert r.angle_error["r_hand"] <= 1e-2
    p1 = site_positions(skel, r.q)
    p0 = site_positions(skel, q0)
    for s in ("l_foot", "r_foot"):
        assert np.linalg.norm(p1[skel.site_index(s)] - p0[skel.site_index(s)]) <= 1e-3


@pytest.mark.parametrize("solver", BASELINES)
def test_limits_respected_when_target_needs_more(solver):
    """The target needs the elbow past its limit: q stays inside, best effort, no exception."""
    skel = _rig("fig2")
    k = skel.dof_index("r_elbow_flexion")
    q = np.array(skel.rest_q)
    q_bad = q.copy()
    q_bad[k] = -0.8  # hyper-extended elbow: outside [0, 2.62]
    # FK of a pose outside the limits (the kernels do not check limits).
    target = forward_kinematics(skel, q_bad).site_positions[skel.site_index("r_hand")]
    start = q.copy()
    start[k] = 0.3
    seen = []
    r = solve_ik(skel, start, {"r_hand": target}, solver=solver, pinned=["l_hand", "head"],
                 max_iterations=300, callback=lambda it, qq, e: seen.append(qq))
    assert all(skel.within_limits(x) for x in seen), "an iterate left the joint limits"
    assert skel.within_limits(r.q)
    # a start outside the limits is clipped, never returned as is
    start_out = q.copy()
    start_out[k] = 5.0
    r2 = solve_ik(skel, start_out, {"r_hand": target}, solver=solver, max_iterations=5)
    assert skel.within_limits(r2.q)


def _stretched_cases():
    """(rig, q0, targets): singular starts (seed C's straight legs, straight T-pose arms)."""
    biped = _rig("biped12")
    case = seed_c_singular(biped)
    fig2 = _rig("fig2")
    pos = site_positions(fig2, fig2.rest_q)
    hand = pos[fig2.site_index("r_hand")]
    along = hand + np.array([0.0, -1.0, 0.0])  # further out along the straight arm: unreachable
    behind = hand + np.array([-0.3, 0.2, 0.0])  # needs the straight elbow to bend
    return [
        ("biped12", case.q_start, case.targets),
        ("fig2", fig2.rest_q, {"r_hand": along}),
        ("fig2", fig2.rest_q, {"r_hand": behind}),
        ("fig2", fig2.rest_q, {"r_hand": hand + np.array([0.0, 0.0, -1e-3])}),
    ]


@pytest.mark.parametrize("solver", BASELINES)
def test_no_nan_at_singular_poses(solver):
    for rig, q0, targets in _stretched_cases():
        skel = _rig(rig)
        steps = []
        prev = [np.array(q0)]

        def cb(it, q, e, steps=steps, prev=prev):
            assert np.all(np.isfinite(q)) and np.isfinite(e)
            steps.append(float(np.max(np.abs(q - prev[0]))))
            prev[0] = q

        r = solve_ik(skel, q0, targets, solver=solver, max_iterations=200, callback=cb)
        assert np.all(np.isfinite(r.q)), (rig, solver)
        assert skel.within_limits(r.q)
        assert all(np.isfinite(v) for v in r.error.values())
        # bounded steps at the singularity (no solver moves a DoF by more than its step cap)
        assert max(steps) <= 0.5 + 1e-9, (rig, solver, max(steps))


@pytest.mark.parametrize("solver", BASELINES)
def test_unreachable_is_best_effort(solver):
    skel = _rig("fig2")
    hand = site_positions(skel, skel.rest_q)[skel.site_index("r_hand")]
    far = hand + np.array([0.0, -2.0, 0.0])
    start = np.array(skel.rest_q)
    start[skel.dof_index("r_elbow_flexion")] = 1.0
    before = _max_error(skel, start, {"r_hand": far})
    r = solve_ik(skel, start, {"r_hand": far}, solver=solver, pinned=["l_foot", "r_foot"],
                 max_iterations=500)
    assert not r.converged and r.reason in ("stalled", "max_iterations")
    assert r.error["r_hand"] < before
    assert skel.within_limits(r.q)


# ------------------------------------------------------------------------------------ seed C
def _sole_tilt(skel, q):
    _, rot = site_poses(skel, q)
    return [float(np.arccos(np.clip(rot[skel.site_index(s), 2, 2], -1.0, 1.0)))
            for s in ("l_sole", "r_sole")]


def test_seed_c_compensated_reaches_targets_with_parallel_soles():
    skel = _rig("biped12")
    case = seed_c_singular(skel)
    # the start is the singular pose: the soles' vertical Jacobian rows vanish
    jac = animik.site_jacobians(skel, case.q_start, ["l_sole", "r_sole"])
    assert np.allclose(jac[:, 2, :], 0.0, atol=1e-12)
    r = solve_ik(skel, case.q_start, case.targets, solver="approx_inverse", max_iterations=100)
    assert r.converged, (r.reason, r.error)
    assert max(r.error.values()) <= 1e-3
    assert max(_sole_tilt(skel, r.q)) <= 1e-2  # soles parallel to the ground
    assert r.iterations < 100
    # the knees are bent off the singular configuration
    assert r.q[skel.dof_index("l_knee_pitch")] > 0.2 and r.q[skel.dof_index("r_knee_pitch")] > 0.2


def test_seed_c_uncompensated_stays_stuck_near_the_singularity():
    """Plain eq 10 (compensate=False): the straight knees never get bent enough; the solver stalls
    with the feet centimetres short (it does not blow up: floors of 1e-300 only)."""
    skel = _rig("biped12")
    case = seed_c_singular(skel)
    r = solve_ik(skel, case.q_start, case.targets, solver="approx_inverse", compensate=False,
                 max_iterations=100)
    assert not r.converged
    assert max(r.error.values()) > 0.01
    assert np.all(np.isfinite(r.q)) and skel.within_limits(r.q)
    knees = r.q[[skel.dof_index("l_knee_pitch"), skel.dof_index("r_knee_pitch")]]
    comp = solve_ik(skel, case.q_start, case.targets, solver="approx_inverse")
    assert np.all(knees < 0.5 * comp.q[[skel.dof_index("l_knee_pitch"),
                                       skel.dof_index("r_knee_pitch")]])


def test_approx_inverse_eq10_is_non_expanding():
    """Schur bound: the linearised eq-10 update never overshoots (eigenvalues of J A in [0, 1])."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        jac = rng.normal(size=(9, 14)) * rng.uniform(0.01, 3.0, size=(1, 14))
        m = np.column_stack([jac @ approx_inverse_step(jac, e, None) for e in np.eye(9)])
        ev = np.linalg.eigvals(m)
        assert np.all(ev.real > -1e-9) and np.all(ev.real < 1 + 1e-9)
        assert np.allclose(ev.imag, 0.0, atol=1e-9)


def test_approx_inverse_zero_row_gives_no_nan():
    jac = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    for floor in (None, 1e-2):
        dq = approx_inverse_step(jac, np.array([0.1, 0.2]), floor)
        assert np.all(np.isfinite(dq))


def test_knee_like_dofs_of_the_rigs():
    biped = _rig("biped12")
    names = {biped.dof_names[k] for k in np.flatnonzero(knee_like_dofs(biped))}
    assert names == {"l_knee_pitch", "r_knee_pitch"}
    fig2 = _rig("fig2")
    names = {fig2.dof_names[k] for k in np.flatnonzero(knee_like_dofs(fig2))}
    assert {"l_knee_flexion", "r_knee_flexion", "l_elbow_flexion", "r_elbow_flexion"} == names


def test_approx_inverse_compensate_dofs_option():
    skel = _rig("biped12")
    case = seed_c_singular(skel)
    r = solve_ik(skel, case.q_start, case.targets, solver="approx_inverse",
                 compensate_dofs=["l_knee_pitch", "r_knee_pitch"], max_iterations=100)
    assert r.converged
    with pytest.raises(UnknownNameError, match="nope"):
        solve_ik(skel, case.q_start, case.targets, solver="approx_inverse",
                 compensate_dofs=["nope"])
    with pytest.raises(OptionError, match="compensate_dofs"):
        solve_ik(skel, case.q_start, case.targets, solver="approx_inverse",
                 compensate_dofs="knees")


# ------------------------------------------------------------------------------------ seed B
def test_speculative_one_batched_fk_per_iteration(monkeypatch):
    skel = _rig("fig2")
    targets, q_start, _ = random_reachable(skel, np.random.default_rng(5))
    calls = []
    real = spec_mod.forward_kinematics

    def counting(sk, q):
        calls.append(np.shape(q))
        return real(sk, q)

    monkeypatch.setattr(spec_mod, "forward_kinematics", counting)
    errors = []
    r = solve_ik(skel, q_start, targets, solver="jt_speculative", candidates=6,
                 callback=lambda it, q, e: errors.append(e), max_iterations=300)
    assert len(calls) == r.iterations  # exactly one FK call per iteration...
    assert all(c == (6, skel.n_dof) for c in calls)  # ...over the K candidate poses
    assert all(b <= a + 1e-15 for a, b in zip(errors, errors[1:], strict=False)), \
        "the error must never increase"
    assert errors[-1] < errors[0]


@pytest.mark.parametrize("ladder", ["geometric", "linear"])
def test_speculative_ladders(ladder):
    skel = _rig("biped12")
    rng = np.random.default_rng(11)
    ok = 0
    for _ in range(5):
        targets, q_start, _ = random_reachable(skel, rng)
        ok += solve_ik(skel, q_start, targets, solver="jt_speculative", ladder=ladder).converged
    assert ok >= 4


def test_speculative_candidates_match_single_fk():
    """The batched error equals the workspace error of each candidate pose."""
    skel = _rig("biped12")
    case = seed_c_singular(skel)
    problem = build_problem(skel, case.q_start, case.targets)
    rng = np.random.default_rng(0)
    qs = np.clip(rng.normal(size=(5, skel.n_dof)) * 0.3, skel.lower, skel.upper)
    fk = forward_kinematics(skel, qs)
    batched = spec_mod.batched_error_sq(problem, fk.site_positions, fk.site_rotations)
    ws = problem.workspace()
    for q, b in zip(qs, batched, strict=True):
        ws.evaluate(np.ascontiguousarray(q), jacobian=False)
        assert b == pytest.approx(float(ws.e @ ws.e), rel=1e-10, abs=1e-14)


# ------------------------------------------------------------------------------------ steps
@pytest.mark.parametrize("solver", BASELINES)
@pytest.mark.parametrize("rig", ["fig2", "biped12"])
def test_first_step_descends_along_predicted_direction(rig, solver):
    """One iteration: the Jacobian prediction of the step matches finite differences, the step
    is a descent direction of ½‖e‖², and the error actually decreases."""
    skel = _rig(rig)
    targets, q_start, _ = random_reachable(skel, np.random.default_rng(42))
    problem = build_problem(skel, q_start, targets)
    r = solve_problem(problem, q_start, solver, max_iterations=1)
    assert r.iterations == 1
    q0 = np.ascontiguousarray(q_start)
    dq = r.q - q0
    assert np.linalg.norm(dq) > 0
    ws = problem.workspace()
    ws.evaluate(q0)
    e0, jac = ws.e.copy(), ws.jac.copy()
    h = 1e-6
    ws.evaluate(np.ascontiguousarray(q0 + h * dq), jacobian=False)
    fd = (ws.e - e0) / h  # d e / d h along the step; e = target - current
    np.testing.assert_allclose(fd, -jac @ dq, rtol=1e-4, atol=1e-6 * np.linalg.norm(jac @ dq))
    slope = -float(e0 @ (jac @ dq))  # d(½‖e‖²)/dh at h = 0
    assert slope < 0
    ws.evaluate(np.ascontiguousarray(r.q), jacobian=False)
    assert np.linalg.norm(ws.e) < np.linalg.norm(e0)


# ------------------------------------------------------------------------------------ errors
def test_unknown_solver_lists_the_solvers():
    skel = _rig("fig2")
    with pytest.raises(UnknownNameError, match="jt_speculative"):
        solve_ik(skel, skel.rest_q, {"r_hand": [0.0, -0.5, 1.4]}, solver="newton")


@pytest.mark.parametrize("solver, option, value, match", [
    ("dls", "tol_position", -1.0, "tol_position"),
    ("dls", "tol_rotation", float("nan"), "tol_rotation"),
    ("dls", "max_iterations", 2.5, "max_iterations"),
    ("dls", "max_iterations", -1, "max_iterations"),
    ("dls", "max_iterations", True, "max_iterations"),
    ("dls", "damping", 0.0, "damping"),
    ("dls", "adaptive", "fast", "adaptive"),
    ("dls", "stall_window", 0, "stall_window"),
    ("pinv", "rcond", 1.5, "rcond"),
    ("pinv", "max_step", "big", "max_step"),
    ("jt", "max_step", -0.1, "max_step"),
    ("jt_speculative", "candidates", 0, "candidates"),
    ("jt_speculative", "ladder", "random", "ladder"),
    ("approx_inverse", "gain", 2.0, "gain"),
    ("approx_inverse", "compensate", "yes", "compensate"),
    ("approx_inverse", "floor", 0.0, "floor"),
    ("approx_inverse", "callback", 3, "callback"),
])
def test_bad_option_values(solver, option, value, match):
    skel = _rig("fig2")
    with pytest.raises(OptionError, match=match):
        solve_ik(skel, skel.rest_q, {"r_hand": [0.0, -0.5, 1.4]}, solver=solver,
                 **{option: value})


@pytest.mark.parametrize("solver", BASELINES)
def test_unknown_option_lists_the_options(solver):
    skel = _rig("fig2")
    with pytest.raises(UnknownNameError, match="tol_position") as info:
        solve_ik(skel, skel.rest_q, {"r_hand": [0.0, -0.5, 1.4]}, solver=solver, tolerance=1)
    assert "'tolerance'" in str(info.value)


def test_bad_q0_is_a_shape_error():
    skel = _rig("fig2")
    with pytest.raises(ShapeError, match="q0"):
        solve_ik(skel, np.zeros(3), {"r_hand": [0.0, -0.5, 1.4]}, solver="dls")
    q = np.array(skel.rest_q)
    q[0] = np.nan
    with pytest.raises(ValueRangeError, match="NaN"):  # the shape is right, a value is not
        solve_ik(skel, q, {"r_hand": [0.0, -0.5, 1.4]}, solver="pinv")


# ------------------------------------------------------------------------------------ dls
@pytest.mark.parametrize("adaptive", ["none", "lm", "manipulability"])
def test_dls_damping_variants(adaptive):
    skel = _rig("body95")
    rng = np.random.default_rng(9)
    ok = 0
    for _ in range(4):
        targets, q_start, _ = random_reachable(skel, rng)
        r = solve_ik(skel, q_start, targets, solver="dls", adaptive=adaptive)
        ok += r.converged
        assert r.state["damping"] > 0
    assert ok == 4


def test_dls_warm_start_state_round_trip():
    skel = _rig("fig2")
    targets, q_start, _ = random_reachable(skel, np.random.default_rng(1))
    r1 = solve_ik(skel, q_start, targets, solver="dls")
    r2 = solve_ik(skel, r1.q, targets, solver="dls", state=r1.state)
    assert r2.converged and r2.iterations == 0
    # a bogus state is ignored, not trusted
    r3 = solve_ik(skel, q_start, targets, solver="dls", state={"damping": -3.0})
    assert r3.converged


@pytest.mark.parametrize("solver", BASELINES)
def test_zero_iterations_returns_start(solver):
    skel = _rig("fig2")
    targets, q_start, _ = random_reachable(skel, np.random.default_rng(4))
    r = solve_ik(skel, q_start, targets, solver=solver, max_iterations=0)
    assert r.iterations == 0 and r.reason == "max_iterations"
    np.testing.assert_array_equal(r.q, np.clip(q_start, skel.lower, skel.upper))
    assert not r.q.flags.writeable


@pytest.mark.parametrize("m, n", [(6, 10), (12, 8), (45, 95)])
def test_dls_and_pinv_steps_match_the_textbook_formulas(m, n):
    from animik.ik.dls import dls_step
    from animik.ik.pinv import pinv_step

    rng = np.random.default_rng(m * n)
    jac = rng.normal(size=(m, n))
    e = rng.normal(size=m)
    lam = 0.1
    ref = jac.T @ np.linalg.solve(jac @ jac.T + lam**2 * np.eye(m), e)
    np.testing.assert_allclose(dls_step(jac, e, lam), ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(pinv_step(jac, e, 1e-12, 1e-12), np.linalg.pinv(jac) @ e,
                               rtol=1e-8, atol=1e-10)
    # a singular Jacobian: DLS stays bounded by |e| / (2 lambda); pinv drops the null direction
    jac[0] = 0.0
    assert np.linalg.norm(dls_step(jac, e, lam)) <= np.linalg.norm(e) / (2 * lam) + 1e-9
    assert np.all(np.isfinite(pinv_step(jac, e, 1e-4, 1e-6)))
