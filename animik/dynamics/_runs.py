"""Runs of True in a per-frame mask (planting, treadmills, off-floor stretches)."""

from __future__ import annotations

import numpy as np


def true_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[(start, end)]`` (end exclusive) of the runs of True in a bool ``(T,)`` array."""
    d = np.diff(np.concatenate([[0], np.asarray(mask).astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(), strict=True))
