"""Horizon relations, CoP formula, ζ and the support polygon against independent computations."""

import numpy as np
import pytest
from balance_helpers import model  # noqa: F401 (fixture)

import animik
from animik.balance import BalanceError, Horizon, RobotModel, Weights, cop, step_matrices, zeta
from animik.balance.cop import octagon_apothem, octagon_normals, support_margin, support_polygon
from animik.balance.params import check_horizon


def test_horizon_matrices_match_step_by_step_integration():
    rng = np.random.default_rng(0)
    hz = Horizon.build(0.1, 20)
    a, b = step_matrices(0.1)
    for _ in range(5):
        s0 = rng.normal(size=3)
        u = rng.normal(size=20) * 5
        s = s0.copy()
        stepped = []
        for k in range(20):
            s = a @ s + b * u[k]
            stepped.append(s.copy())
        np.testing.assert_allclose(hz.predict(s0, u), np.array(stepped), atol=1e-12)


def test_horizon_matrices_are_lower_triangular_and_exact_for_constant_jerk():
    hz = Horizon.build(0.05, 12)
    for m in (hz.pos_u, hz.vel_u, hz.acc_u):
        assert np.allclose(np.triu(m, 1), 0.0)
    # Constant jerk j from rest: x(t) = j t³/6 exactly (the piecewise-cubic is the true motion).
    t = 0.05 * np.arange(1, 13)
    out = hz.predict(np.zeros(3), np.full(12, 2.0))
    np.testing.assert_allclose(out[:, 0], 2.0 * t ** 3 / 6, rtol=1e-12)
    np.testing.assert_allclose(out[:, 1], 2.0 * t ** 2 / 2, rtol=1e-12)
    np.testing.assert_allclose(out[:, 2], 2.0 * t, rtol=1e-12)


def _cop_by_moments(model, b, bdd, c, cdd):
    """The point on z = 0 about which the gravity + inertia forces of the masses have no
    horizontal moment (Newton-Euler of point masses), found by a linear solve."""
    g = np.array([0.0, 0.0, -model.gravity])
    masses = [(model.base_mass, np.r_[b, model.base_height], np.r_[bdd, 0.0]),
              (model.body_mass, np.r_[c, model.body_height], np.r_[cdd, 0.0])]

    def moment(p):
        pt = np.r_[p, 0.0]
        return sum(np.cross(r - pt, m * (g - a)) for m, r, a in masses)[:2]

    m0 = moment(np.zeros(2))
    jac = np.stack([moment(e) - m0 for e in np.eye(2)], axis=1)  # moment is affine in p
    return np.linalg.solve(jac, -m0)


def test_cop_formula_matches_moment_balance(model):
    rng = np.random.default_rng(1)
    for _ in range(10):
        b, bdd, c, cdd = rng.normal(size=(4, 2))
        np.testing.assert_allclose(cop(model, b, bdd, c, cdd), _cop_by_moments(model, b, bdd, c, cdd),
                                   atol=1e-12)
    # static: the CoP is the CoM projection
    b, c = np.array([0.1, 0.2]), np.array([0.15, 0.1])
    com = (model.base_mass * b + model.body_mass * c) / model.total_mass
    np.testing.assert_allclose(cop(model, b, np.zeros(2), c, np.zeros(2)), com)


def test_octagon_is_inscribed_in_the_circle():
    n = octagon_normals()
    apo = octagon_apothem(1.0)
    ang = np.arange(8) * np.pi / 4
    vertices = np.stack([np.cos(ang), np.sin(ang)], 1)
    # every vertex on the circle lies on two half-plane boundaries and inside all others
    d = vertices @ n.T
    assert np.all(d <= apo + 1e-12)
    assert np.all(np.sum(np.isclose(d, apo), axis=1) == 2)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0)


def test_support_polygon_margin(model):
    poly = support_polygon(model, np.zeros(2))
    assert poly.shape == (3, 2)
    # the inscribed circle of the wheel triangle is the rig's support radius
    assert support_margin(model, np.zeros(2), np.zeros(2)) == pytest.approx(model.support_radius, abs=1e-5)
    assert support_margin(model, np.array([0.5, 0.0]), np.zeros(2)) < 0
    # moving the base moves the polygon
    assert support_margin(model, np.array([1.0, 1.0]), np.array([1.0, 1.0])) > 0.1
    # a yaw of 180 deg puts the rear wheel in front
    assert support_margin(model, np.array([0.2, 0.0]), np.zeros(2), np.pi) > 0
    assert support_margin(model, np.array([0.2, 0.0]), np.zeros(2), 0.0) < 0


def test_zeta_normalised(model):
    b = np.zeros(2)
    p = np.array([model.support_radius, 0.0])
    c = np.array([0.0, model.body_offset])
    assert zeta(model, p, b, c, 0.5) == pytest.approx(1.0)
    assert zeta(model, b, b, b, 0.3) == pytest.approx(0.0)


def test_bad_input_names_the_value(model):
    with pytest.raises(BalanceError, match="alpha3"):
        Weights(robustness=-1.0)
    with pytest.raises(BalanceError, match="N"):
        check_horizon(0.1, 0)
    with pytest.raises(BalanceError, match="T"):
        Horizon.build(0.0, 20)
    with pytest.raises(BalanceError, match="T"):
        Horizon.build(-0.1, 20)
    with pytest.raises(BalanceError, match="no balance data"):
        RobotModel.from_rig(animik.load_rig("fig2"))
    with pytest.raises(BalanceError, match="zeta_f"):
        Weights(zeta_f=1.5)
    with pytest.raises(BalanceError, match="support_radius"):
        model.replace(support_radius=0.0)
    assert isinstance(BalanceError("x"), animik.AnimikError)
