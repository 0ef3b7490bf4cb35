"""A sequence of warm-started FIK solves in one compiled call (:meth:`PreparedFIK.solve_sequence`).

Frame ``t`` is exactly what :meth:`animik.ik.fik.PreparedFIK.solve` does when called with
``positions=positions[t]``, ``reference=references[t]`` and the previous frame's
``result.state`` (frame 0: no state), then — when the frame ended on its iteration cap, not
converged even to ``catch_tol`` and its targets moved more than ``jump`` since the previous
frame — a second solve from there with ``max(first_iterations − iterations, 1)`` iterations
and the stall test ``(stall_window, stall_rel)``: the same kernel (:func:`fik_loop`) on the
same buffers, in the same order. What it saves is the per-frame Python around the kernel
(buffers, validation, numba dispatch of 25 arguments, the state and result objects): ~60 µs of
a retarget frame's ~150 µs.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._fik_kernels import (
    F_H,
    F_HMAX,
    F_HMIN,
    F_STALLREL,
    I_MAXIT,
    I_PVALID,
    I_REF,
    I_STALLWIN,
    I_WAITNULL,
    I_WARM,
    REASON_MAX_ITERATIONS,
    fik_loop,
)

_JIT = dict(cache=True, nogil=True)

#: ``gain_full`` argument: the gain state carried from frame to frame is the Cholesky factor
#: ``L`` (gain ``"full"``), else the scalar ``scal[0]`` (gain ``"scalar"``; the only two kinds
#: :meth:`PreparedFIK.solve_sequence` takes).


@nb.njit(**_JIT)
def _clip(x, lower, upper, out):
    """``np.minimum(np.maximum(x, lower), upper)`` element by element (numpy's NaN / signed-zero
    choices: the first operand when the comparison holds)."""
    for d in range(x.shape[0]):
        a = x[d] if x[d] >= lower[d] else lower[d]
        out[d] = a if a <= upper[d] else upper[d]


@nb.njit(**_JIT)
def _converged(se, count, tol):
    for i in range(count.shape[0]):
        if count[i] and not se[i, 0] <= tol:
            return False
    return True


@nb.njit(**_JIT)
def _solve(q, lower, upper, v, model, task, struct, bufs, centre, half, ref_q, ref_w, fp0, ip0,
           fixed, gain_full, warm, max_it, stall_win, stall_rel, info, fout, se, frames):
    """One :meth:`PreparedFIK.solve` on the carried buffers; ``warm``: with the state the
    buffers hold (``h`` in ``bufs[7][0]``, gain valid in ``bufs[8][0]``)."""
    z, z_e, bz, L, Pm, scal, p_q, hbuf, valid, blocked = bufs
    fp = fp0.copy()
    ip = ip0.copy()
    ip[I_MAXIT] = max_it
    if stall_win > 0:
        ip[I_STALLWIN] = stall_win
        fp[F_STALLREL] = stall_rel
    ip[I_REF] = 1
    ip[I_WAITNULL] = 1
    if warm:
        ip[I_WARM] = 1
        if not fixed:
            h = hbuf[0]
            h = h if not fp[F_HMIN] > h else fp[F_HMIN]  # Python's max(h, h_min)
            fp[F_H] = h if not fp[F_HMAX] < h else fp[F_HMAX]  # min(., h_max)
        # a fresh solve's zeroed buffers, then the state's gain (factor or scalar, and the
        # pose it was computed at) when it is valid
        Pm[:, :] = 0.0
        if valid[0]:
            ip[I_PVALID] = 1
            if gain_full:
                scal[0] = 0.0
            else:
                L[:, :] = 0.0
        else:
            L[:, :] = 0.0
            scal[0] = 0.0
            p_q[:] = q
    else:
        z[:] = 0.0
        z_e[:] = 0.0
        bz[:] = 0.0
        L[:, :] = 0.0
        Pm[:, :] = 0.0
        scal[0] = 0.0
        p_q[:] = q
        blocked[:] = False
    fik_loop(q, lower, upper, v, model, task, struct, z, z_e, bz, L, Pm, scal, p_q, blocked,
             centre, half, ref_q, ref_w, fp, ip, info, fout, se, frames)
    hbuf[0] = fp[F_H]
    valid[0] = ip[I_PVALID]


@nb.njit(**_JIT)
def fik_sequence(positions, references, perm, lower, upper, v, model, task, struct, bufs,
                 centre, half, ref_w, fp0, ip0, fixed, gain_full, first_iterations, iterations,
                 count, tol, catch_tol, jump, stall_win, stall_rel, frames, q_out, iters_out):
    """Solve every frame of ``positions (T, k, 3)`` / ``references (T, n)`` (problem order;
    ``perm``: internal site ``i`` is problem site ``perm[i]``), warm-started frame to frame.

    ``count (k,)`` bool: the internal sites of the convergence test (``se[i, 0] <= tol``);
    ``bufs``: the carried state ``(z, z_e, bz, L, Pm, scal, p_q, h (1,), valid (1,) int,
    blocked)`` (sized as :func:`animik.ik.fik._execute_stage` sizes them). Writes ``q_out (T, n)``
    and ``iters_out (T,)`` (iterations of the frame, both solves).
    """
    T = positions.shape[0]
    n = lower.shape[0]
    k = perm.shape[0]
    pos = task[0]
    q = np.empty(n)
    ref_q = np.empty(n)
    info = np.zeros(4, dtype=np.int64)
    fout = np.zeros(2)
    se = np.zeros((k, 2))
    for t in range(T):
        for i in range(k):
            for a in range(3):
                pos[i, a] = positions[t, perm[i], a]
        _clip(references[t], lower, upper, ref_q)
        if t == 0:
            _clip(references[t], lower, upper, q)
        else:
            _clip(q_out[t - 1], lower, upper, q)
        _solve(q, lower, upper, v, model, task, struct, bufs, centre, half, ref_q, ref_w, fp0,
               ip0, fixed, gain_full, t > 0, first_iterations if t == 0 else iterations, 0, 0.0,
               info, fout, se, frames)
        its = info[0]
        if t > 0 and info[1] == REASON_MAX_ITERATIONS and not _converged(se, count, tol) \
                and not _converged(se, count, catch_tol):
            moved = 0.0
            for i in range(positions.shape[1]):
                for a in range(3):
                    d = abs(positions[t, i, a] - positions[t - 1, i, a])
                    moved = d if d > moved else moved
            if moved > jump:
                # a jump in the targets (a cut in the source): keep iterating this frame
                _clip(q, lower, upper, q)
                _clip(references[t], lower, upper, ref_q)
                _solve(q, lower, upper, v, model, task, struct, bufs, centre, half, ref_q,
                       ref_w, fp0, ip0, fixed, gain_full, True, max(first_iterations - its, 1),
                       stall_win, stall_rel, info, fout, se, frames)
                its += info[0]
        q_out[t, :] = q
        iters_out[t] = its
