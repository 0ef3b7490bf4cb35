"""The clip filter's per-frame kernels on both cores (docs/dynamics.md 6i): the frames split
into one chunk per numba thread give the serial kernels' values bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import animik
from animik.dynamics import _kernels as K
from animik.dynamics.filter import DynamicsFilter, FilterOptions, terms_batch, wrench_batch


@pytest.mark.parametrize("chunks", [1, 2, 3, 7])
def test_parallel_kernels_equal_the_serial_ones(chunks):
    skel = animik.load_rig("body95")
    filt = DynamicsFilter(skel, FilterOptions().checked(), 0.0)
    rng = np.random.default_rng(chunks)
    N, n = 101, skel.n_dof
    q = skel.rest_q + 0.3 * rng.normal(size=(N, n))
    qd, qdd = rng.normal(size=(N, n)), rng.normal(size=(N, n))
    E = rng.normal(size=(N, n, 2))
    par, off, rr, ds, dt, dax, m, c, ine = filt._args
    W0, Aw0, S0 = terms_batch(filt, q[:10], qd[:10], qdd[:10], full=True)  # serial (N < 64)
    outs = []
    for kern in ("serial", "par"):
        W, Aw, S = np.empty((N, 6)), np.empty((N, 6, n)), np.empty((N, n, 6))
        Wp, dW = np.empty((N, 6)), np.empty((N, 2, 6))
        a1 = (q, qd, qdd, filt.g, par, off, rr, ds, dt, dax, filt._dof_joint, m, c, ine, W, Aw, S)
        a2 = (q, qd, qdd, E, filt.g, par, off, rr, ds, dt, dax, m, c, ine, Wp, dW)
        if kern == "serial":
            K.filter_terms_batch(*a1)
            K.wrench_batch(*a2)
        else:
            K.filter_terms_batch_par(*a1, chunks)
            K.wrench_batch_par(*a2, chunks)
        outs.append((W, Aw, S, Wp, dW))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(outs[0][1][:10], Aw0)
    # without the wrench matrix (Aw with 0 rows): W only
    W2 = np.empty((N, 6))
    K.filter_terms_batch_par(q, qd, qdd, filt.g, par, off, rr, ds, dt, dax, filt._dof_joint, m,
                             c, ine, W2, np.empty((0, 6, n)), np.empty((0, n, 6)), chunks)
    np.testing.assert_array_equal(W2, outs[0][0])


def test_batch_wrappers_use_the_threads_on_long_batches_with_the_same_values(monkeypatch):
    import numba

    from animik.dynamics import filter as F

    assert not F._parallel(10_000)  # off by default (docs/dynamics.md 6i)
    monkeypatch.setattr(F, "PARALLEL", True)

    skel = animik.load_rig("body95")
    filt = DynamicsFilter(skel, FilterOptions().checked(), 0.0)
    rng = np.random.default_rng(5)
    N, n = 150, skel.n_dof
    q = skel.rest_q + 0.3 * rng.normal(size=(N, n))
    qd, qdd = rng.normal(size=(N, n)), rng.normal(size=(N, n))
    E = rng.normal(size=(N, n, 2))
    assert F._parallel(N) == (numba.get_num_threads() > 1)
    got = terms_batch(filt, q, qd, qdd, full=True) + wrench_batch(filt, q, qd, qdd, E)
    one = [terms_batch(filt, q[i:i + 1], qd[i:i + 1], qdd[i:i + 1], full=True)
           + wrench_batch(filt, q[i:i + 1], qd[i:i + 1], qdd[i:i + 1], E[i:i + 1])
           for i in range(N)]
    for j, a in enumerate(got):
        np.testing.assert_array_equal(a, np.concatenate([o[j] for o in one]))


def test_bench_threads_option_is_checked(capsys):
    import numba

    from animik.cli import main

    top = numba.config.NUMBA_NUM_THREADS
    assert main(["bench", "dynamics", "--threads", str(top + 1), "--no-peers"]) == 2
    assert f"--threads must be 1..{top}" in capsys.readouterr().err
    assert main(["bench", "dynamics", "--threads", "0"]) == 2
