"""The MPC's QP: its solution satisfies R1–R3 when re-simulated, solvers agree, bad input."""

import numpy as np
import pytest
from balance_helpers import model  # noqa: F401 (fixture)

from animik.balance import BalanceError, BalanceMPC, Horizon, Weights, cop
from animik.balance.cop import octagon_apothem, octagon_normals
from animik.balance.experiments import CornerReference
from animik.balance.qp import available_solvers


def _problem(speed=0.8):
    ref = CornerReference(speed, turn_time=1.0)
    t = 0.1 * np.arange(1, 21) + 0.5
    body = np.array([[0.0, 0.3, 0.0], [0.0, 0.0, 0.0]])
    base = np.array([[0.0, 0.35, 0.2], [0.0, 0.0, 0.0]])
    return body, base, ref.velocity(t), ref.position(t) + [0.02, 0.0]


def _resimulate(model, res, body, base):
    hz = Horizon.build(0.1, 20)
    c = np.stack([hz.predict(body[a], res.body_jerk[:, a]) for a in (0, 1)], axis=1)  # (N, 2, 3)
    b = np.stack([hz.predict(base[a], res.base_jerk[:, a]) for a in (0, 1)], axis=1)
    p = cop(model, b[..., 0], b[..., 2], c[..., 0], c[..., 2])
    return b, c, p


@pytest.mark.parametrize("one_mass", [False, True])
def test_solution_satisfies_the_constraints(model, one_mass):
    body, base = _problem()[:2]
    if one_mass:
        body = base.copy()
    mpc = BalanceMPC(model, Weights(robustness=10.0), one_mass=one_mass)
    res = mpc.solve(body, base, *_problem()[2:])
    assert res.feasible and res.status == "optimal"
    b, c, p = _resimulate(model, res, body, base)
    tol = 1e-6
    assert np.all(np.abs(b[..., 1]) <= model.max_speed + tol)          # R2 speed
    assert np.all(np.abs(b[..., 2]) <= model.max_acceleration + tol)   # R2 acceleration
    if one_mass:
        np.testing.assert_allclose(res.body_jerk, res.base_jerk)
        # the one-mass model's own CoP (all mass at the base height) is in its octagon
        p = b[..., 0] - model.base_height / model.gravity * b[..., 2]
    else:
        assert np.all(np.abs(c[..., 0] - b[..., 0]) <= model.body_offset + tol)  # R3
    d = (p - b[..., 0]) @ octagon_normals().T                            # R1, all 8 half-planes
    assert np.all(d <= octagon_apothem(model.support_radius) + tol)


def test_some_constraint_is_active_at_a_hard_corner(model):
    """A fast corner pushes the plan onto its bounds: the constraints are doing something."""
    body, base = _problem()[:2]
    mpc = BalanceMPC(model, Weights(robustness=0.0))
    ref = CornerReference(1.4, turn_time=0.3)
    t = 0.1 * np.arange(1, 21)
    res = mpc.solve(body, base, ref.velocity(t), ref.position(t))
    lo, hi = mpc.bounds(np.concatenate([body.ravel(), base.ravel()]))
    vx = mpc.v_mat @ res.x
    assert np.any(np.isclose(vx, hi, atol=1e-6) | np.isclose(vx, lo, atol=1e-6))


def test_solvers_agree(model):
    """Same optimum from every solver: objective to 1e-7 (relative), planned paths to 10 µm and
    jerks to 1e-5 (relative); osqp (first-order ADMM) only to 0.5 mm on the paths."""
    names = available_solvers()
    assert len(set(names) - {"qpsolvers-daqp"}) >= 3, names  # three different solvers at least
    body, base, vref, pref = _problem()
    out = {}
    for name in names:
        mpc = BalanceMPC(model, solver=name, warm_start=False)
        res = mpc.solve(body, base, vref, pref)
        assert res.feasible, name
        state = np.concatenate([body.ravel(), base.ravel()])
        obj = 0.5 * res.x @ mpc.q_mat @ res.x + mpc.linear_term(state, vref, pref) @ res.x
        b, c, _ = _resimulate(model, res, body, base)
        out[name] = (obj, b[..., 0], c[..., 0], res.x)
    obj0, b0, c0, x0 = out[names[0]]
    for name, (obj, b, c, x) in out.items():
        assert abs(obj - obj0) <= 1e-7 * abs(obj0), name
        tol = 5e-4 if name == "osqp" else 1e-5
        np.testing.assert_allclose(b, b0, atol=tol, err_msg=name)
        np.testing.assert_allclose(c, c0, atol=tol, err_msg=name)
        if name != "osqp":
            np.testing.assert_allclose(x, x0, atol=1e-5 * np.abs(x0).max(), err_msg=name)


def test_warm_start_gives_the_same_optimum(model):
    body, base, vref, pref = _problem()
    state = np.concatenate([body.ravel(), base.ravel()])
    for name in ("osqp", "proxqp"):
        if name not in available_solvers():
            continue
        cold_mpc = BalanceMPC(model, solver=name, warm_start=False)
        cold = cold_mpc.solve(body, base, vref, pref)
        warm_mpc = BalanceMPC(model, solver=name, warm_start=True)
        warm_mpc.solve(body, base, vref * 0.9, pref)  # a different previous cycle
        warm = warm_mpc.solve(body, base, vref, pref)
        p = cold_mpc.linear_term(state, vref, pref)
        obj = [0.5 * x @ cold_mpc.q_mat @ x + p @ x for x in (cold.x, warm.x)]
        assert abs(obj[1] - obj[0]) <= 1e-7 * abs(obj[0]), name


def test_infeasible_gives_best_effort_flagged(model):
    mpc = BalanceMPC(model)
    body = np.array([[0.6, 0.0, 0.0], [0.0, 0.0, 0.0]])  # body 0.6 m off the base: R1, R3 infeasible
    base = np.zeros((2, 3))
    res = mpc.solve(body, base, np.zeros((20, 2)), np.zeros((20, 2)))
    assert not res.feasible and res.status.startswith("relaxed")
    assert np.all(np.isfinite(res.x))
    # a base already far beyond its speed limit: even R2 alone is infeasible at the first sample
    base = np.array([[0.0, 5.0, 0.0], [0.0, 0.0, 0.0]])
    res = mpc.solve(base.copy(), base, np.full((20, 2), 3.0), np.zeros((20, 2)))
    assert not res.feasible and "every constraint" in res.status
    assert any("speed limit" in n for n in res.notes)


def test_bad_arguments(model):
    with pytest.raises(BalanceError, match="N"):
        BalanceMPC(model, steps=0)
    with pytest.raises(BalanceError, match="T"):
        BalanceMPC(model, period=-0.1)
    with pytest.raises(BalanceError, match="solver"):
        BalanceMPC(model, solver="nope")
    mpc = BalanceMPC(model)
    with pytest.raises(BalanceError, match="vel_ref"):
        mpc.solve(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((19, 2)), np.zeros((20, 2)))
    with pytest.raises(BalanceError, match="base"):
        mpc.solve(np.zeros((2, 3)), np.full((2, 3), np.nan), np.zeros((20, 2)), np.zeros((20, 2)))
