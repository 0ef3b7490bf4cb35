"""Per-frame masks and signals: runs of True, dilation, a triangle smoothing (planting,
treadmills, off-floor stretches, the hip strategy)."""

from __future__ import annotations

import numpy as np


def true_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[(start, end)]`` (end exclusive) of the runs of True in a bool ``(T,)`` array."""
    d = np.diff(np.concatenate([[0], np.asarray(mask).astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(), strict=True))


def dilate(mask: np.ndarray, n: int) -> np.ndarray:
    """``mask (T,)`` widened by ``n`` frames on each side."""
    out = mask.copy()
    for s in range(1, n + 1):
        out[s:] |= mask[:-s]
        out[:-s] |= mask[s:]
    return out


def smooth_triangle(a: np.ndarray, n: int) -> np.ndarray:
    """Centred moving average over ``n`` samples (edges repeated), twice (a triangle)."""
    if n <= 1:
        return a
    for _ in range(2):
        lo, hi = n // 2, n - 1 - n // 2
        pad = np.concatenate([np.repeat(a[:1], lo, 0), a, np.repeat(a[-1:], hi, 0)])
        c = np.concatenate([np.zeros((1,) + a.shape[1:]), np.cumsum(pad, axis=0)])
        a = (c[n:] - c[:-n]) / n
    return a
