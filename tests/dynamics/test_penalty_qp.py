"""The clip filter's direct QP solver (finite Newton / interior point on banded Cholesky
factors) against OSQP at a tight tolerance and against brute force."""

import numpy as np
import osqp
import pytest
import scipy.sparse as sp
from conftest import needs_shared

from animik.dynamics._penalty_qp import (
    BandRows,
    FrameRows,
    _banded_lower,
    _line_search,
    solve_penalty_qp,
)


def _problem(T=60, k=3, w=5, rows_per_frame=6, seed=0, shift=0.0, big=1.0):
    """A QP with the filter's structure: unknowns frame by frame, ``R`` coupling the frames of
    two windows, each row of ``G`` on one window's columns."""
    rng = np.random.default_rng(seed)
    N = T * k
    D = sp.diags([np.full(T - 1, 1.0), np.full(T - 1, -1.0)], [0, 1], shape=(T - 1, T))
    R = (sp.identity(N) + 0.1 * sp.kron((D.T @ D), sp.identity(k))).tocsr()
    rows, cols, vals, b = [], [], [], []
    r = 0
    for t in range(T):
        lo = min(t, T - w) * k
        for _ in range(rows_per_frame):
            g = rng.normal(size=w * k) * (big if rng.uniform() < 0.2 else 1.0)
            rows += [r] * len(g)
            cols += list(range(lo, lo + len(g)))
            vals += list(g)
            b.append(rng.normal() + shift)
            r += 1
    G = sp.csr_matrix((vals, (rows, cols)), shape=(r, N))
    return R, G, np.array(b)


def _osqp(R, G, b, rho):
    """The slack form solved by OSQP (eps 1e-9): ``min 1/2 x'Rx + rho/2 |s|^2, Gx - s <= b,
    s >= 0``."""
    N, m = R.shape[0], G.shape[0]
    P = sp.block_diag([R, rho * sp.identity(m)], format="csc")
    A = sp.vstack([sp.hstack([G, -sp.identity(m)]),
                   sp.hstack([sp.csc_matrix((m, N)), sp.identity(m)])], format="csc")
    lo = np.concatenate([np.full(m, -np.inf), np.zeros(m)])
    hi = np.concatenate([b, np.full(m, np.inf)])
    prob = osqp.OSQP()
    prob.setup(P, np.zeros(N + m), A, lo, hi, verbose=False, eps_abs=1e-10, eps_rel=1e-10,
               max_iter=400000, polishing=True)
    return prob.solve(raise_error=True).x[:N]


def _f(R, G, b, rho, x):
    v = np.maximum(G @ x - b, 0.0)
    return 0.5 * x @ (R @ x) + 0.5 * rho * v @ v


@pytest.mark.parametrize("newton_steps", [50, 0])
@pytest.mark.parametrize("case", [dict(seed=0), dict(seed=1, shift=-1.0),
                                  dict(seed=2, shift=-2.0, big=30.0)])
def test_solution_equals_osqp(case, newton_steps):
    R, G, b = _problem(**case)
    rho = 100.0
    x, method, steps, ok = solve_penalty_qp(R, G, b, rho, align=3, newton_steps=newton_steps,
                                            tol=1e-10)
    assert ok
    if newton_steps == 0:
        assert method == "ipm"
    xo = _osqp(R, G, b, rho)
    assert _f(R, G, b, rho, x) <= _f(R, G, b, rho, xo) * (1 + 1e-7) + 1e-12
    np.testing.assert_allclose(x, xo, atol=2e-5 * max(1.0, np.abs(xo).max()))
    # the default tolerance (the filter's): the same minimum to 1e-6
    x6 = solve_penalty_qp(R, G, b, rho, align=3, newton_steps=newton_steps)[0]
    assert _f(R, G, b, rho, x6) <= _f(R, G, b, rho, xo) * (1 + 1e-6) + 1e-12


def test_gram_band_equals_sparse_product():
    R, G, b = _problem(seed=3)
    theta = np.random.default_rng(0).uniform(size=G.shape[0])
    theta[::3] = 0.0
    blocks = BandRows.from_sparse(G, R.shape[0], align=3)
    assert abs(blocks.csr - G).max() == 0
    u = blocks.L + 2
    ref = _banded_lower(G.T @ sp.diags(theta) @ G, u)
    np.testing.assert_allclose(blocks.gram_banded(theta, u), ref, atol=1e-12 * np.abs(ref).max())
    # the operators the solver uses: G x, G' y and the rows' squared norms
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=G.shape[1]), rng.normal(size=G.shape[0])
    np.testing.assert_allclose(blocks @ x, G @ x, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(blocks.T @ y, G.T @ y, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(blocks.sq_norms(), np.asarray(G.multiply(G).sum(axis=1)).ravel(),
                               rtol=1e-13)


def test_line_search_is_the_minimum_along_the_direction():
    R, G, b = _problem(seed=4, T=20)
    rho = 50.0
    rng = np.random.default_rng(1)
    x, d = rng.normal(size=R.shape[0]), rng.normal(size=R.shape[0])
    t = _line_search(R @ x, R @ d, d, G @ x - b, G @ d, rho)
    ts = np.linspace(0.0, 1.0, 20001)
    fs = [_f(R, G, b, rho, x + s * d) for s in ts]
    assert abs(t - ts[int(np.argmin(fs))]) <= 1e-4
    assert _f(R, G, b, rho, x + t * d) <= min(fs) + 1e-9 * abs(min(fs))


def _frame_problem(T=40, k=5, nw=7, D=3, seed=4):
    """Rows with the clip filter's factored structure (window weights x mode coefficients),
    rows of a frame in no particular order, some frames without rows."""
    rng = np.random.default_rng(seed)
    lo = np.minimum(np.maximum(np.arange(T) - nw // 2, 0), T - nw) * k
    wts = rng.normal(size=(T, D, nw))
    frames = np.concatenate([rng.integers(0, T, size=5 * T), [0, T - 1]])
    frames = frames[(frames % 7) != 3]
    coef = rng.normal(size=(len(frames), D, k))
    coef[::4, 1:] = 0.0  # rows of one derivative only, as the contact-keeping rows are
    return FrameRows(lo, wts, frames, coef, T * k)


def test_frame_rows_equal_their_dense_spans():
    G = _frame_problem()
    B = G.band_rows()
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=G.n), rng.normal(size=G.m)
    theta = rng.uniform(size=G.m)
    theta[::5] = 0.0
    np.testing.assert_allclose(G @ x, B @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(G.T @ y, B.T @ y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(G.sq_norms(), B.sq_norms(), rtol=1e-12)
    u = G.L + 3
    ref = B.gram_banded(theta, u)
    np.testing.assert_allclose(G.gram_banded(theta, u), ref, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("shift", [0.0, -1.5])
def test_solver_on_frame_rows_equals_dense_rows(shift):
    """The factored rows give the same minimiser as the dense spans (interior point and
    Newton) to 1e-8, and an objective no higher than OSQP's at eps 1e-10."""
    G = _frame_problem(seed=5)
    T, k = G.n // G.k, G.k
    D = sp.diags([np.full(T - 1, 1.0), np.full(T - 1, -1.0)], [0, 1], shape=(T - 1, T))
    R = (sp.identity(G.n) + 0.1 * sp.kron(D.T @ D, sp.identity(k))).tocsr()
    b = np.random.default_rng(6).normal(size=G.m) + shift
    rho = 100.0
    xo = _osqp(R, G.csr, b, rho)
    for steps in (0, 50):
        xf, _, _, okf = solve_penalty_qp(R, G, b, rho, newton_steps=steps)
        xb, _, _, okb = solve_penalty_qp(R, G.band_rows(), b, rho, newton_steps=steps)
        assert okf and okb
        assert np.abs(xf - xb).max() < 1e-8 * max(1.0, np.abs(xb).max())
        assert np.abs(xf - xo).max() < 1e-5 * max(1.0, np.abs(xo).max())
        assert _f(R, G.csr, b, rho, xf) <= _f(R, G.csr, b, rho, xo) * (1 + 1e-9) + 1e-12


def _real_qp(frames=120):
    """The first round's QP of ``animik filter`` on the shared SFU walk's first ``frames``
    frames (raw skeleton, masses from its bones): the filter's own rows and ``R``."""
    from conftest import SHARED_BVH

    from animik.dynamics.clip import check_clip
    from animik.dynamics.contacts import contact_model_for_clip
    from animik.dynamics.correct import W_SMOOTH, _linearise, _Setup
    from animik.dynamics.filter import FilterOptions
    from animik.io.bvh import read_bvh
    from animik.motion import Motion

    src = read_bvh(str(SHARED_BVH / "sfu" / "0005_Walking001.bvh"))
    motion = Motion(src.skeleton, src.q[:frames], src.fps)
    opt = FilterOptions().checked()
    cm = contact_model_for_clip(motion.skeleton, motion.q)
    su = _Setup.build(motion, opt, cm, 1.0, 0.1, W_SMOOTH)
    chk = check_clip(motion, mu=opt.mu, window=opt.window, contacts=cm)
    lin = _linearise(su.filt, chk, motion, su.slides, su.upper, su.ops, su.mu_in, su.dirs,
                     su.filt.weight, 0.5)
    _, lo_frame, wts, frame_all, coef_all, rhs = lin
    return su.R, FrameRows(lo_frame, wts, frame_all, coef_all, frames * 5), rhs


@needs_shared
def test_solver_on_the_filters_real_rows_equals_osqp_and_the_plain_interior_point():
    """On the filter's real QP (the SFU walk's first round: heavy contact-keeping rows, wrench
    rows of every contact frame), the interior point with Gondzio's correctors gives the
    minimiser of the plain Mehrotra interior point (main's solver before docs/dynamics.md 6f)
    and of OSQP at eps 1e-10 (an independent ADMM code), in fewer steps."""
    R, G, b = _real_qp()
    rho = 100.0
    xo = _osqp(R, G.csr, b, rho)
    fo = _f(R, G.csr, b, rho, xo)
    x_new, m_new, s_new, ok_new = solve_penalty_qp(R, G, b, rho, newton_steps=0, tol=1e-10)
    x_old, m_old, s_old, ok_old = solve_penalty_qp(R, G, b, rho, newton_steps=0, tol=1e-8,
                                                   correctors=0, start_dual=0.1)
    assert ok_new and ok_old and m_new == m_old == "ipm"
    scale = max(1.0, np.abs(xo).max())
    assert np.abs(x_new - x_old).max() < 1e-6 * scale
    assert np.abs(x_new - xo).max() < 1e-5 * scale
    # OSQP's polished answer may violate its constraints by ~1e-10: its f is no bound to 1e-9
    assert _f(R, G.csr, b, rho, x_new) <= fo * (1 + 1e-8)
    # the same minimiser by the finite Newton path where it settles (the default entry)
    x_def = solve_penalty_qp(R, G, b, rho, tol=1e-10)[0]
    assert np.abs(x_def - x_new).max() < 1e-6 * scale
    s_old10 = solve_penalty_qp(R, G, b, rho, newton_steps=0, tol=1e-10, correctors=0,
                               start_dual=0.1)[2]
    assert s_new < s_old10  # fewer factorisations at the same tolerance
