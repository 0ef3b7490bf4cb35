"""Feedback IK (seed A): convergence, limits, warm start, singularities, errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q, random_skeleton

import animik
from animik.errors import OptionError, ShapeError, UnknownNameError, ValueRangeError
from animik.ik import SOLVERS, build_problem, fik, solve_ik, solve_problem
from animik.ik import _fik_kernels as K
from animik.ik.problems import circle_tracking, random_reachable, seed_c_singular
from animik.kinematics import kernel_args, site_poses

RIGS = ["fig2", "body95", "wheeled20", "biped12"]


def _success(skel, r, tol=1e-3) -> bool:
    return bool(r.converged and r.max_error <= tol and skel.within_limits(r.q)
                and np.all(np.isfinite(r.q)))


# ------------------------------------------------------------------ convergence
@pytest.mark.parametrize("rig", RIGS)
def test_converges_from_perturbed_starts(rig):
    skel = animik.load_rig(rig)
    rng = np.random.default_rng(2024)
    ok, its = 0, []
    for _ in range(50):
        targets, q_start, _ = random_reachable(skel, rng)
        r = solve_ik(skel, q_start, targets)
        assert r.solver == "fik"
        assert skel.within_limits(r.q)
        ok += _success(skel, r)
        its.append(r.iterations)
    assert ok >= 48, f"{rig}: {ok}/50 converged"
    assert np.median(its) <= 10  # a handful of iterations, not thousands


@pytest.mark.parametrize("rig", ["fig2", "body95", "biped12"])
def test_fixed_sample_form_converges(rig):
    skel = animik.load_rig(rig)
    rng = np.random.default_rng(7)
    ok = 0
    for _ in range(30):
        targets, q_start, _ = random_reachable(skel, rng)
        prob = build_problem(skel, q_start, targets)
        r = fik.solve_fixed(prob, q_start)
        assert r.solver == "fik_fixed"
        assert skel.within_limits(r.q)
        ok += _success(skel, r)
    assert ok >= 28, f"{rig}: {ok}/30 converged"


def test_fixed_form_registered_as_solver():
    # a regression (the registry entry or its module lost) must fail, not skip
    assert "fik_fixed" in SOLVERS, "solver 'fik_fixed' is not registered"
    skel = animik.load_rig("fig2")
    targets, q_start, _ = random_reachable(skel, np.random.default_rng(1))
    r = solve_ik(skel, q_start, targets, solver="fik_fixed")
    assert r.solver == "fik_fixed" and _success(skel, r)


def test_random_skeletons_position_and_pose_targets(rng):
    ok = total = 0
    for trial in range(12):
        skel = random_skeleton(rng, n_joints=10, n_sites=3)
        q_true = random_q(skel, rng)
        pos, rot = site_poses(skel, q_true)
        targets = {}
        for i, name in enumerate(skel.site_names):
            targets[name] = (pos[i], rot[i]) if (trial + i) % 2 else pos[i]
        q0 = np.clip(q_true + rng.uniform(-0.2, 0.2, skel.n_dof), skel.lower, skel.upper)
        r = solve_ik(skel, q0, targets, weights={skel.site_names[0]: 2.0}, max_iterations=200)
        assert skel.within_limits(r.q) and np.all(np.isfinite(r.q))
        total += 1
        ok += r.converged
    assert ok >= total - 2


def test_pose_targets_weights_and_pins_on_body95():
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(3)
    feet = skel.site_dof_mask[skel.site_index("l_foot")] | skel.site_dof_mask[skel.site_index("r_foot")]
    q_true = np.clip(skel.rest_q + rng.uniform(-0.4, 0.4, skel.n_dof) * ~feet, skel.lower, skel.upper)
    pos, rot = site_poses(skel, q_true)
    q0 = np.clip(q_true + rng.uniform(-0.3, 0.3, skel.n_dof) * ~feet, skel.lower, skel.upper)
    i = skel.site_index("r_hand")
    r = solve_ik(skel, q0, {"r_hand": (pos[i], rot[i]), "head": pos[skel.site_index("head")]},
                 weights={"head": 0.5}, pinned=["l_foot", "r_foot"])
    assert r.converged
    assert r.error["r_hand"] <= 1e-3 and r.angle_error["r_hand"] <= 1e-2
    assert r.error["l_foot"] <= 1e-3 and r.error["r_foot"] <= 1e-3


# ------------------------------------------------------------------ joint limits
def test_limits_respected_even_when_targets_pull_past_them():
    skel = animik.load_rig("body95")
    q0 = np.array(skel.rest_q)
    pos, _ = site_poses(skel, q0)
    # hands pulled through the body and far behind: needs elbows / shoulders past their limits
    targets = {"l_hand": pos[skel.site_index("l_hand")] + [-0.6, -1.2, -0.4],
               "r_hand": pos[skel.site_index("r_hand")] + [-0.6, 1.2, -0.4]}
    seen = []
    r = solve_ik(skel, q0, targets, pinned=["l_foot", "r_foot", "head"],
                 callback=lambda it, q, err: seen.append(q))
    assert seen and all(skel.within_limits(q) for q in seen)
    assert skel.within_limits(r.q)
    assert np.all(np.isfinite(r.q))
    # some DoF ends on a limit: the targets did pull past them
    on_limit = np.isclose(r.q, skel.lower) | np.isclose(r.q, skel.upper)
    assert on_limit.any()


def test_limits_on_random_skeletons_with_tight_ranges(rng):
    for _ in range(6):
        skel = random_skeleton(rng, n_joints=8, n_sites=3, translations=False)
        lo = np.where(np.isfinite(skel.lower), skel.lower * 0.2, -0.3)
        hi = np.where(np.isfinite(skel.upper), skel.upper * 0.2, 0.3)
        skel = skel.replace(lower=lo, upper=hi, rest_q=np.clip(skel.rest_q, lo, hi))
        far = random_q(skel, rng) * 0.0 + rng.uniform(-3, 3, skel.n_dof)
        pos, _ = site_poses(skel, far)  # FK of a pose far outside the limits
        targets = {n: pos[i] for i, n in enumerate(skel.site_names)}
        for solver in (fik.solve, fik.solve_fixed):
            prob = build_problem(skel, skel.rest_q, targets)
            r = solver(prob, skel.rest_q, max_iterations=60)
            assert skel.within_limits(r.q) and np.all(np.isfinite(r.q))


# ------------------------------------------------------------------ warm start
def _track(skel, case, warm: bool, **opts):
    prob = build_problem(skel, case.q0, {case.site: case.positions[0]}, pinned=case.pinned)
    q, state, its, errs = np.array(case.q0), None, [], []
    for tgt in case.frames():
        r = solve_problem(prob.with_targets(tgt), q, "fik", state=state if warm else None, **opts)
        q, state = np.array(r.q), r.state
        its.append(r.iterations)
        errs.append(r.max_error)
        assert skel.within_limits(r.q)
    return np.array(its), np.array(errs)


@pytest.mark.parametrize("rig", ["body95", "fig2"])
def test_warm_start_state_round_trip_tracking(rig):
    skel = animik.load_rig(rig)
    case = circle_tracking(skel, frames=40)
    its_warm, err_warm = _track(skel, case, True, cold_start="zero")
    its_restart, err_restart = _track(skel, case, False, cold_start="zero")
    its_bumpless, err_bumpless = _track(skel, case, False)
    for errs in (err_warm, err_restart, err_bumpless):
        assert np.all(errs <= 1e-3)  # every frame within 1 mm
    # restarting the filter every frame (the source's z(0) = 0) costs an iteration per frame;
    # the passed-back state continues it: fewer iterations from the second frame on
    assert its_warm[1] < its_restart[1]
    assert its_warm[1:].sum() < its_restart[1:].sum()
    # the bumpless restart (the default without a state) is never better than continuing
    assert its_warm[1:].sum() <= its_bumpless[1:].sum()


def test_state_contents_and_reuse():
    skel = animik.load_rig("fig2")
    targets, q0, _ = random_reachable(skel, np.random.default_rng(5))
    prob = build_problem(skel, q0, targets)
    r1 = solve_problem(prob, q0, "fik")
    st = r1.state
    assert isinstance(st, fik.FIKState) and st.form == "fik" and st.m == prob.m
    assert not st.z.flags.writeable
    P = st.P
    assert P.shape == (prob.m, prob.m)
    assert np.allclose(P, P.T) and np.linalg.eigvalsh(P).min() > 0
    # same targets, passed-back state: nothing to do
    r2 = solve_problem(prob, r1.q, "fik", state=st)
    assert r2.converged and r2.iterations == 0


def test_state_of_another_problem_is_rejected():
    skel = animik.load_rig("fig2")
    q0 = np.array(skel.rest_q)
    pos, _ = site_poses(skel, q0)
    r = solve_ik(skel, q0, {"l_hand": pos[1] + 0.05})
    with pytest.raises(ShapeError, match="state=None"):
        solve_ik(skel, q0, {"r_hand": pos[2] + 0.05}, state=r.state)
    with pytest.raises(ShapeError, match="state=None"):
        solve_ik(skel, q0, {"l_hand": pos[1], "r_hand": pos[2]}, state=r.state)
    other = animik.load_rig("biped12")
    with pytest.raises(ShapeError, match="DoFs"):
        solve_ik(other, other.rest_q, {"l_sole": [0, 0.1, 0.1]}, state=r.state)
    with pytest.raises(OptionError, match="FIKState"):
        solve_ik(skel, q0, {"l_hand": pos[1]}, state={"z": [0.0]})
    prob = build_problem(skel, q0, {"l_hand": pos[1] + 0.05})
    rf = fik.solve_fixed(prob, q0)
    with pytest.raises(OptionError, match="fik_fixed"):
        solve_problem(prob, q0, "fik", state=rf.state)


def test_cold_zero_filter_wastes_the_first_iteration():
    # the source's z(0) = 0: the first iteration does not move (dq = V Jᵀ P 0)
    skel = animik.load_rig("fig2")
    targets, q0, _ = random_reachable(skel, np.random.default_rng(11))
    prob = build_problem(skel, q0, targets)
    bumpless = solve_problem(prob, q0, "fik", limits=False)
    zero = solve_problem(prob, q0, "fik", cold_start="zero", limits=False)
    assert bumpless.converged and zero.converged
    assert zero.iterations == bumpless.iterations + 1


# ------------------------------------------------------------------ singularities
@pytest.mark.parametrize("form", ["fik", "fik_fixed"])
def test_seed_c_singular_start(form):
    skel = animik.load_rig("biped12")
    case = seed_c_singular(skel)
    prob = build_problem(skel, case.q_start, case.targets)
    solve = fik.solve if form == "fik" else fik.solve_fixed
    r = solve(prob, case.q_start)
    assert np.all(np.isfinite(r.q)) and skel.within_limits(r.q)
    assert r.converged
    for s in case.targets:
        assert r.error[s] <= 1e-3
        assert r.angle_error[s] <= 1e-2
    _, R = site_poses(skel, r.q)
    for s in case.targets:  # soles parallel to the ground
        assert np.arccos(np.clip(R[skel.site_index(s)][2, 2], -1, 1)) <= 1e-2


def test_stretched_arm_unreachable_best_effort():
    from scipy.optimize import least_squares

    skel = animik.load_rig("body95")
    q0 = np.array(skel.rest_q)  # T-pose: the arms are straight (singular)
    prob = build_problem(skel, q0, {"l_hand": [0.0, 2.0, 1.43]}, pinned=["l_foot", "r_foot"])
    errs = []
    r = solve_problem(prob, q0, "fik", max_iterations=300,
                      callback=lambda it, q, err: errs.append(err))
    assert not r.converged and r.reason in ("stalled", "max_iterations")
    assert np.all(np.isfinite(r.q)) and skel.within_limits(r.q)
    errs = np.array(errs)
    assert np.all(np.isfinite(errs))
    assert np.all(np.diff(errs) <= 1e-12)  # every accepted step lowers the error
    assert errs[-1] < 0.6 * errs[0]
    # independent reference: scipy's bounded least squares on the same weighted error
    ws = prob.workspace()
    lo = np.where(np.isfinite(skel.lower), skel.lower, -1e6)
    hi = np.where(np.isfinite(skel.upper), skel.upper, 1e6)
    ls = least_squares(lambda q: ws.evaluate(np.ascontiguousarray(q), False).e.copy(), q0,
                       jac=lambda q: -ws.evaluate(np.ascontiguousarray(q)).jac.copy(),
                       bounds=(lo, hi), max_nfev=150)
    assert errs[-1] <= np.linalg.norm(ls.fun) + 5e-3


def test_stretched_arms_symmetric_pull_stays_finite():
    skel = animik.load_rig("body95")
    q0 = np.array(skel.rest_q)
    pos, _ = site_poses(skel, q0)
    targets = {"l_hand": pos[skel.site_index("l_hand")] + [0, 1.0, 0],
               "r_hand": pos[skel.site_index("r_hand")] + [0, -1.0, 0]}
    for solver in ("fik",):
        r = solve_ik(skel, q0, targets, solver=solver, pinned=["l_foot", "r_foot"])
        assert not r.converged
        assert np.all(np.isfinite(r.q)) and skel.within_limits(r.q)
        assert r.max_error < 1.0 + 1e-9  # no blow-up: never worse than the start


# ------------------------------------------------------------------ Jacobians
@pytest.mark.parametrize("rows", [3, 6])
def test_task_jacobian_matches_finite_differences(rows, rng):
    for _ in range(4):
        skel = random_skeleton(rng, n_joints=9, n_sites=3)
        q = random_q(skel, rng)
        pos, rot = site_poses(skel, q)
        # position targets anywhere; orientation targets equal to the current orientation
        # (zero rotation error: there the rotation-vector error's derivative is exactly −ω)
        targets = {n: (pos[i] + rng.normal(size=3) * 0.1, rot[i]) if rows == 6 else
                   pos[i] + rng.normal(size=3) * 0.1 for i, n in enumerate(skel.site_names)}
        prob = build_problem(skel, q, targets, weights={skel.site_names[1]: 1.7})
        ws = prob.workspace()
        jac = ws.evaluate(q).jac.copy()
        eps = 1e-6
        fd = np.empty_like(jac)
        for k in range(skel.n_dof):
            qp, qm = q.copy(), q.copy()
            qp[k] += eps
            qm[k] -= eps
            ep = ws.evaluate(qp, False).e.copy()  # the workspace's buffers are overwritten
            em = ws.evaluate(qm, False).e.copy()
            fd[:, k] = -(ep - em) / (2 * eps)
        assert np.allclose(jac, fd, atol=1e-6), np.abs(jac - fd).max()


def test_small_rotation_error_jacobian_close_to_finite_differences(rng):
    skel = random_skeleton(rng, n_joints=9, n_sites=2)
    q = random_q(skel, rng)
    pos, rot = site_poses(skel, q)
    from animik.rotations import rotvec_to_matrix

    targets = {n: (pos[i], rotvec_to_matrix(rng.normal(size=3) * 1e-3) @ rot[i])
               for i, n in enumerate(skel.site_names)}
    ws = build_problem(skel, q, targets).workspace()
    jac = ws.evaluate(q).jac.copy()
    eps = 1e-6
    for k in range(skel.n_dof):
        qp, qm = q.copy(), q.copy()
        qp[k] += eps
        qm[k] -= eps
        ep = ws.evaluate(qp, False).e.copy()
        col = -(ep - ws.evaluate(qm, False).e) / (2 * eps)
        assert np.allclose(jac[:, k], col, atol=5e-3)


@pytest.mark.parametrize("rows,com", [(3, None), (6, None), (3, "xy"), (6, "xyz")])
def test_solver_internal_jacobian_matches_problem_workspace(rows, com, rng):
    """The kernel's own transposed Jacobian (tree-ordered rows) equals ProblemWorkspace's
    (whose site rows come from the kinematics kernels and whose centre-of-mass rows come from
    the task module, both checked against finite differences in tests/ik/test_tasks.py)."""
    for _ in range(5):
        skel = random_skeleton(rng, n_joints=10, n_sites=4)
        q = random_q(skel, rng)
        pos, rot = site_poses(skel, q)
        targets = {n: (pos[i] + 0.1, rot[i]) if (rows == 6 and i % 2 == 0) else pos[i] - 0.1
                   for i, n in enumerate(skel.site_names[:3])}
        extra = {} if com is None else {"com": rng.normal(0, 0.3, len(com))}
        weights = {skel.site_names[2]: 3.0, **({"com": 2.0} if com else {})}
        prob = build_problem(skel, q, targets, weights=weights,
                             pinned=skel.site_names[3:], **extra)
        ws = prob.workspace().evaluate(q)
        lay = fik._problem_arrays(prob)
        a = kernel_args(skel)
        model = (*a[:9], lay.sites, a[9])
        pm = lay.perm
        task = fik._task_arrays(prob, lay)
        nj, n, k, m = skel.n_joints, skel.n_dof, prob.k, prob.m
        ke = k + len(prob.tasks)
        work = (np.empty((nj, 3, 3)), np.empty((nj, 3)), np.empty((n, 3)), np.empty((n, 3)),
                np.empty((k, 3, 3)), np.empty((k, 3)))
        e, jt, se = np.empty(m), np.zeros((n, m)), np.empty((ke, 2))
        K.evaluate(q, model, task, lay.struct, work, e, jt, se)
        assert np.allclose(e, ws.e[lay.row_perm])
        assert np.allclose(jt.T, ws.jac[lay.row_perm])
        assert np.allclose(se[:k], ws.site_error[pm])
        assert np.allclose(se[k:], ws.site_error[k:])
        G = np.empty((m, m))
        v = rng.uniform(0.5, 2.0, n)
        K.gram(jt, v, lay.struct[0], lay.struct[1], G)
        Jw = ws.jac[lay.row_perm]
        assert np.allclose(G, (Jw * v) @ Jw.T)


# ------------------------------------------------------------------ gains and options
def test_gain_variants_converge():
    skel = animik.load_rig("fig2")
    targets, q0, _ = random_reachable(skel, np.random.default_rng(4), sites=["l_hand"])
    prob = build_problem(skel, q0, targets)
    full = solve_problem(prob, q0, "fik")
    assert full.converged
    for opts in ({"gain": "hinf"}, {"gain": "scalar", "gain_scale": 1.0},
                 {"gain": full.state.P}, {"refresh": "auto"}, {"refresh": "once"}):
        r = solve_problem(prob, q0, "fik", **opts)
        assert r.converged, opts
        assert skel.within_limits(r.q)


def test_callback_sees_every_iterate():
    skel = animik.load_rig("fig2")
    targets, q0, _ = random_reachable(skel, np.random.default_rng(9))
    calls = []
    r = solve_ik(skel, q0, targets, callback=lambda it, q, err: calls.append((it, err)))
    plain = solve_ik(skel, q0, targets)
    assert [c[0] for c in calls] == list(range(r.iterations + 1))
    assert r.converged and r.iterations == plain.iterations
    assert np.allclose(r.q, plain.q)


# (options, message, error class: OptionError unless given)
BAD_OPTIONS = [
    ({"A": 1.0}, "A must"), ({"A": float("nan")}, "A must"), ({"A": -5.0}, r"h \* \|A\|"),
    ({"h": 0.0}, "h must"), ({"h": -1}, "h must"), ({"h": float("inf")}, "h must"),
    ({"h_min": 2.0}, "h_min"), ({"damping": 0.0}, "damping"), ({"damping": float("nan")}, "damping"),
    ({"damping_abs": -1.0}, "damping_abs"), ({"tol_position": 0}, "tol_position"),
    ({"tol_rotation": float("nan")}, "tol_rotation"), ({"max_iterations": -1}, "max_iterations"),
    ({"max_iterations": 2.5}, "max_iterations"), ({"stall_window": 0}, "stall_window"),
    ({"gain": "huge"}, "gain must"), ({"gain": np.eye(4)}, "gain matrix", ShapeError),
    ({"gain": -np.eye(3)}, "positive definite", ValueRangeError),
    ({"gain": np.full((3, 3), np.nan)}, "finite", ValueRangeError),
    ({"refresh": "sometimes"}, "refresh"), ({"refresh_ratio": 0.0}, "refresh_ratio"),
    ({"dof_gains": np.ones(3)}, "dof_gains", ShapeError),
    ({"dof_gains": -np.ones(25)}, "non-negative", ValueRangeError),
    ({"dof_gains": np.zeros(25)}, "positive entry", ValueRangeError),
    ({"dof_gains": {"l_knee_flexion": np.nan}}, "dof_gains"),
    ({"max_step": 0}, "max_step"), ({"limits": "yes"}, "limits"), ({"limit_gain": 2.0}, "limit_gain"),
    ({"reference": np.ones(4)}, "reference", ShapeError),
    ({"reference": np.full(25, np.inf)}, "reference", ValueRangeError),
    ({"reference": np.zeros(25), "reference_gain": 0.0}, "reference_gain"),
    ({"reference": np.zeros(25), "reference_gain": float("nan")}, "reference_gain"),
    ({"reference_weights": np.ones(25), "reference": None}, "without a reference"),
    ({"reference": np.zeros(25), "reference_weights": -np.ones(25)}, "reference_weights",
     ValueRangeError),
    ({"null_tol": 0.0}, "null_tol"), ({"cold_start": "hot"}, "cold_start"),
    ({"gain": "hinf", "hinf_w": 0.0}, "hinf_w"), ({"gain": "scalar", "gain_scale": -1}, "gain_scale"),
    ({"step_cut": 1.0}, "step_cut"), ({"callback": 3}, "callback"), ({"tuning": 3.5}, "tuning"),
]


@pytest.mark.parametrize("opts, match, err",
                         [c if len(c) == 3 else (*c, OptionError) for c in BAD_OPTIONS])
def test_bad_option_values_raise_clear_errors(opts, match, err):
    skel = animik.load_rig("fig2")
    q0 = np.array(skel.rest_q)
    with pytest.raises(err, match=match):
        solve_ik(skel, q0, {"l_hand": [0.1, 0.5, 1.2]}, **opts)


def test_unknown_options_and_names():
    skel = animik.load_rig("fig2")
    q0 = np.array(skel.rest_q)
    with pytest.raises(UnknownNameError, match="dampign"):
        solve_ik(skel, q0, {"l_hand": [0.1, 0.5, 1.2]}, dampign=1e-3)
    with pytest.raises(UnknownNameError, match="no_such_dof"):
        solve_ik(skel, q0, {"l_hand": [0.1, 0.5, 1.2]}, dof_gains={"no_such_dof": 1.0})
    prob = build_problem(skel, q0, {"l_hand": [0.1, 0.5, 1.2]})
    with pytest.raises(UnknownNameError, match="fik_fixed"):
        fik.solve_fixed(prob, q0, h=0.5)


def test_no_option_value_produces_nan():
    skel = animik.load_rig("fig2")
    q0 = np.array(skel.rest_q)
    rng = np.random.default_rng(0)
    targets = {"l_hand": [0.3, 0.6, 1.5], "r_foot": [0.2, -0.1, 0.3]}
    for opts in ({"damping": 1e-300}, {"damping": 1e300}, {"damping_abs": 1e300},
                 {"h": 1e-12, "h_min": 1e-12}, {"A": -1e-9}, {"max_step": 1e-300},
                 {"max_step": 1e300}, {"dof_gains": rng.uniform(0, 1e6, 25)},
                 {"gain": "scalar", "gain_scale": 1e300, "max_iterations": 50},
                 {"gain": "hinf", "hinf_s": 1e-300, "max_iterations": 50},
                 {"gain": 1e300 * np.eye(9)}, {"tol_position": 1e-300, "max_iterations": 30}):
        r = solve_ik(skel, q0, {**targets, "head": [0, 0, 2.0]}, **opts)
        assert np.all(np.isfinite(r.q)) and skel.within_limits(r.q), opts
        assert all(np.isfinite(v) for v in r.error.values()), opts
        assert np.all(np.isfinite(r.state.z)), opts
