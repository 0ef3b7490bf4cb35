"""The contact-wrench-cone check's batched simplex (animik/dynamics/_cone_lp.py) against HiGHS
(``scipy.optimize.linprog``, the independent reference): the same L1 residual to 1e-9 and the
same feasible / infeasible verdict on random programmes, degenerate ones and the programmes of
a real clip (louise.bvh on its inferred supports). docs/dynamics.md section 5f."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared

import animik
import animik.dynamics.cone as cone_mod
from animik.dynamics.clip import check_clip
from animik.dynamics.cone import cone_residual, cone_residual_highs
from animik.dynamics.offfloor import infer_supports
from animik.dynamics.zmp import CONE_TOL


def _random_programmes(rng, B, P, H, feasible_share=0.5, coplanar=False):
    """Random contacts (points within 1 m of the COM, normals scattered about up,
    mu 0.2-1.2, random activity) and wrenches: about ``feasible_share`` of them a random
    non-negative combination of the active generators (in the cone), the others random."""
    com = rng.normal(size=(B, 3)) * 0.5
    pts = com[:, None] + rng.uniform(-1, 1, size=(B, P, 3))
    if coplanar:
        pts[..., 2] = 0.0
        nrm = np.broadcast_to([0.0, 0.0, 1.0], (B, P, 3)).copy()
    else:
        nrm = rng.normal(size=(B, P, 3)) * 0.5 + [0.0, 0.0, 1.0]
        nrm /= np.linalg.norm(nrm, axis=-1, keepdims=True)
    mu = rng.uniform(0.2, 1.2, size=(B, P))
    on = rng.random((B, P)) < 0.7
    gp = com[:, None] + rng.uniform(-1, 1, size=(B, H, 3))
    gb = rng.uniform(0.05, 0.8, size=H) * 600.0
    gon = rng.random((B, H)) < 0.7
    weight = 600.0
    # wrench: a combination of the generators (moment about the world origin), or random
    cols, ub, _ = cone_mod._programme(np.zeros((B, 6)), com, weight, pts, nrm, mu, on, gp, gb,
                                      gon)
    lam = rng.exponential(size=ub.shape) * (rng.random(ub.shape) < 0.3)
    lam = np.minimum(lam, np.where(np.isfinite(ub), ub, np.inf))
    lam[ub <= 0] = 0.0
    w_com = np.einsum("bn,bnk->bk", lam, cols) * weight  # about the COM, N
    rand = rng.normal(size=(B, 6)) * weight * rng.uniform(0.01, 2, size=(B, 1))
    use = (rng.random(B) < feasible_share)[:, None]
    w_com = np.where(use, w_com, rand)
    w = np.concatenate([w_com[:, :3] + np.cross(com, w_com[:, 3:]), w_com[:, 3:]], axis=1)
    return w, com, weight, pts, nrm, mu, on, gp, gb, gon


def _agree(args):
    r, ax = cone_residual(*args)
    r_ref, ax_ref = cone_residual_highs(*args)
    np.testing.assert_allclose(r, r_ref, atol=1e-9, rtol=0)
    assert np.array_equal(r > CONE_TOL, r_ref > CONE_TOL)
    # the axis is the largest unmet component: unique unless the optimum is (a degenerate LP)
    return r, ax, r_ref, ax_ref


@pytest.mark.parametrize("P,H,coplanar", [(4, 0, True), (8, 2, False), (16, 0, False),
                                          (0, 3, False), (12, 2, True), (24, 4, False)])
def test_simplex_equals_highs_on_random_programmes(P, H, coplanar):
    rng = np.random.default_rng(P * 10 + H)
    args = _random_programmes(rng, 1500, P, H, coplanar=coplanar)
    r, ax, r_ref, ax_ref = _agree(args)
    feas = r_ref <= CONE_TOL
    assert feas.sum() >= 50 and (~feas).sum() >= 50  # both verdicts exercised
    assert (ax[feas] == -1).all() and (ax[~feas] >= 0).all()
    assert (ax == ax_ref).mean() > 0.99


def test_simplex_equals_highs_on_degenerate_programmes():
    """Zero wrenches, wrenches of one generator, repeated points, all contacts inactive,
    zero-bound grips and a wrench exactly on a face of the cone."""
    rng = np.random.default_rng(7)
    B, P, H = 400, 8, 2
    w, com, weight, pts, nrm, mu, on, gp, gb, gon = _random_programmes(rng, B, P, H)
    pts[:, 4:] = pts[:, :4]  # each point twice
    nrm[:, 4:] = nrm[:, :4]
    w[:50] = 0.0
    on[50:100] = False
    gon[50:100] = False
    gb = gb.copy()
    gb[1] = 0.0
    cols, ub, _ = cone_mod._programme(np.zeros((B, 6)), com, weight, pts, nrm, mu, on, gp, gb,
                                      gon)
    k = np.argmax(ub[100:200] > 0, axis=1)  # one active generator, scaled
    wc = cols[np.arange(100, 200), k] * weight * 0.7
    w[100:200] = np.concatenate([wc[:, :3] + np.cross(com[100:200], wc[:, 3:]), wc[:, 3:]], 1)
    r, ax, r_ref, _ = _agree((w, com, weight, pts, nrm, mu, on, gp, gb, gon))
    assert (r[:50] == 0).all() and (ax[:50] == -1).all()
    assert (r[100:200] <= 1e-12).all()


@needs_shared
def test_simplex_equals_highs_on_louise():
    """Every programme the check of raw louise.bvh on its inferred supports solves (2,139
    frames: floor soles, seat, two holds, two pedals): same residuals and verdicts."""
    m = animik.read_bvh(SHARED_BVH / "optitrack_adelaide" / "louise.bvh")
    calls = []
    orig = cone_mod.cone_residual

    def spy(*a, **k):
        calls.append(a)
        return orig(*a, **k)

    cone_mod.cone_residual = spy
    try:
        res = check_clip(m, supports=infer_supports(m))
    finally:
        cone_mod.cone_residual = orig
    args, = calls
    assert len(args[0]) == res.check.support_active.any(axis=1).sum() > 2000
    r, ax, r_ref, ax_ref = _agree(args)
    assert 0 < (r > CONE_TOL).sum() < 20
    bad = r_ref > 1e-9
    assert np.array_equal(ax[bad], ax_ref[bad])


def test_frames_the_simplex_does_not_finish_are_solved_by_highs(monkeypatch):
    """The fallback path: frames reported unfinished (``ok`` False, NaN) get HiGHS's values."""
    import animik.dynamics._cone_lp as lp

    real = lp.cone_lp_batch

    def unfinished(cols, ub, w, resid, slack, ok):
        real(cols, ub, w, resid, slack, ok)
        ok[::3] = False
        resid[::3] = np.nan
        slack[::3] = np.nan

    monkeypatch.setattr(lp, "cone_lp_batch", unfinished)
    args = _random_programmes(np.random.default_rng(11), 300, 8, 2)
    r, ax = cone_residual(*args)
    r_ref, ax_ref = cone_residual_highs(*args)
    assert np.isfinite(r).all()
    np.testing.assert_allclose(r, r_ref, atol=1e-9, rtol=0)
    assert np.array_equal(ax[::3], ax_ref[::3])
