"""Numba kernel: the contact-wrench-cone programmes' residuals and equality duals
(:mod:`animik.dynamics.cone_rows`), by :mod:`animik.dynamics._cone_lp`'s simplex.

At the optimal basis ``B`` of ``min 1^T (s+ + s-)`` s.t. ``G lambda + s+ - s- = w`` the duals
are ``y = B^-T c_B`` (``c_B`` = 1 for a basic slack, 0 for a basic contact weight): the
gradient ``dr/dw`` of the residual while that basis stays optimal (a subgradient at a kink).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._cone_lp import _basis_system, _solve_frame


@nb.njit(cache=True, nogil=True)
def cone_duals_batch(cols, ub, w, resid, y, ok):
    """Every frame's residual ``resid (B,)`` and duals ``y (B, 6)``; ``ok (B,)`` False where
    the simplex did not finish (the caller re-solves those by HiGHS)."""
    B, n = cols.shape[0], cols.shape[1]
    N = n + 12
    basis = np.empty(6, np.int64)
    at_up = np.zeros(N, np.bool_)
    is_basic = np.empty(N, np.int64)
    binv = np.empty((6, 6))
    xb = np.empty(6)
    a = np.empty(6)
    alpha = np.empty(6)
    yy = np.empty(6)
    bm = np.empty((6, 6))
    rhs = np.empty(6)
    cb = np.empty(6)
    for b in range(B):
        it = _solve_frame(b, cols, ub, w, basis, at_up, is_basic, binv, xb, a, alpha, yy)
        if it < 0:
            ok[b] = False
            resid[b] = np.nan
            for k in range(6):
                y[b, k] = np.nan
            continue
        ok[b] = True
        _basis_system(b, n, cols, ub, w, basis, at_up, is_basic, a, bm, rhs)
        for i in range(6):
            cb[i] = 1.0 if basis[i] >= n else 0.0
        x = np.linalg.solve(bm, rhs)
        tot = 0.0
        for i in range(6):
            if basis[i] >= n and x[i] > 0.0:
                tot += x[i]
        resid[b] = tot
        yv = np.linalg.solve(bm.T.copy(), cb)
        for k in range(6):
            y[b, k] = yv[k]
