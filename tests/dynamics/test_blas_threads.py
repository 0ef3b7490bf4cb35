"""One BLAS thread for the clip filter (animik.dynamics._blas_threads, docs/dynamics.md 6j):
the BLAS libraries (numpy's and scipy's OpenBLAS) run on one thread inside the filter and get
their counts back afterwards, and the QP's answer does not depend on it where no dot product is
long enough to be split."""

from __future__ import annotations

import numpy as np
import pytest
from test_penalty_qp import _problem

from animik.dynamics import _blas_threads as bt
from animik.dynamics import _penalty_qp
from animik.dynamics._penalty_qp import solve_penalty_qp


def test_single_thread_sets_one_and_restores_the_counts():
    before = bt.blas_threads()
    if not before:
        pytest.skip("no BLAS library loaded")
    with bt.single_thread():
        assert bt.blas_threads() == [1] * len(before)
        with bt.single_thread():  # nested: still one, and the outer block's restore counts
            assert bt.blas_threads() == [1] * len(before)
        assert bt.blas_threads() == [1] * len(before)
    assert bt.blas_threads() == before
    with pytest.raises(RuntimeError), bt.single_thread():
        raise RuntimeError("cancelled")
    assert bt.blas_threads() == before


def test_the_qp_runs_on_one_thread_with_the_same_answer(monkeypatch):
    """``solve_penalty_qp`` factors under one thread; on a clip-sized QP (no vector longer
    than OpenBLAS's 10,000-entry threading threshold) its answer is the same bits as with the
    library's own count."""
    if not bt.blas_threads():
        pytest.skip("no BLAS library loaded")
    seen = []
    factor = _penalty_qp._banded_factor

    def spy(abt):
        seen.append(bt.blas_threads())
        return factor(abt)

    R, G, b = _problem(T=80, k=5, w=7, shift=-0.5, big=30.0)
    monkeypatch.setattr(_penalty_qp, "_banded_factor", spy)
    x1, method, _, ok = solve_penalty_qp(R, G, b, 1e2, newton_steps=0, tol=1e-10)
    assert ok and method == "ipm" and seen and all(set(c) == {1} for c in seen)
    raw = solve_penalty_qp.__wrapped__  # the solver without the thread setting
    x2 = raw(R, G, b, 1e2, newton_steps=0, tol=1e-10)[0]
    assert np.array_equal(x1, x2)
