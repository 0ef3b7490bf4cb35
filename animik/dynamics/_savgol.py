"""Savitzky-Golay derivatives as a banded sparse operator, equal to
``scipy.signal.savgol_filter(..., mode="interp")`` without importing ``scipy.signal``.

Measured: ``scipy.signal`` pulls in ``scipy.stats`` (~1.7-2.7 s of import on the shared
machine), which ``animik feasibility`` and ``animik filter`` paid on every run; and the filter
built its ``(T, T)`` operators by filtering identity blocks. Both are one formula: a polynomial of
degree ``order`` fitted by least squares to the ``n`` samples of a window, its ``deriv``-th
derivative evaluated at a sample. Inside the clip the window is centred on the frame (scipy's
convolution coefficients); in the first / last ``n // 2`` frames it is the first / last full
window (scipy's ``mode="interp"``). Tested against ``scipy.signal.savgol_filter``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy.sparse as sp


def window_frames(T: int, fps: float, window: float, order: int = 3) -> int:
    """The odd number of frames of the window (the rule of :func:`clip_states`): ``window * fps``
    rounded up to odd, at least ``order + 2``, at most the clip's length (odd)."""
    n = max(int(round(window * fps)) | 1, order + 2 | 1)
    return min(n, T if T % 2 else T - 1)


def _fit_rows(n: int, order: int, deriv: int, delta: float) -> np.ndarray:
    """``(n, n)``: row ``i`` maps a window's ``n`` samples to the fitted polynomial's
    ``deriv``-th derivative at sample ``i`` (per unit of ``delta``)."""
    half = n // 2
    x = np.arange(n, dtype=float) - half  # centred: well conditioned
    V = np.vander(x, order + 1, increasing=True)  # (n, order+1)
    pinv = np.linalg.pinv(V)  # least-squares fit: coefficients = pinv @ samples
    Vd = np.zeros_like(V)  # d^deriv/dx^deriv of x^p at each sample
    for p in range(deriv, order + 1):
        Vd[:, p] = math.perm(p, deriv) * x ** (p - deriv)
    return (Vd @ pinv) / delta ** deriv


@functools.lru_cache(maxsize=64)
def savgol_matrix(T: int, n: int, order: int, deriv: int, delta: float) -> sp.csr_matrix:
    """The ``(T, T)`` operator ``D`` with ``D @ q == savgol_filter(q, n, order, deriv, delta,
    axis=0, mode="interp")`` (``n`` odd, ``order < n <= T``).

    Cached (the clip filter's rounds check clips of one length again and again): the matrix
    is shared, so its arrays are read-only."""
    rows = _fit_rows(n, order, deriv, delta)
    half = n // 2
    t = np.arange(T)
    start = np.clip(t - half, 0, T - n)  # the window each frame's value is fitted on
    idx = np.minimum(t - start, n - 1)  # the frame's sample within it
    data = rows[idx]  # (T, n)
    cols = start[:, None] + np.arange(n)[None, :]
    indptr = np.arange(0, T * n + 1, n)
    D = sp.csr_matrix((data.ravel(), cols.ravel(), indptr), shape=(T, T))
    for arr in (D.data, D.indices, D.indptr):
        arr.flags.writeable = False
    return D


def savgol_apply(q: np.ndarray, n: int, order: int, deriv: int, delta: float) -> np.ndarray:
    """``savgol_filter(q, n, order, deriv, delta, axis=0, mode="interp")`` for ``q (T, ...)``."""
    T = q.shape[0]
    D = savgol_matrix(T, n, order, deriv, delta)
    flat = np.asarray(q, dtype=float).reshape(T, -1)
    return np.asarray(D @ flat).reshape(q.shape)
