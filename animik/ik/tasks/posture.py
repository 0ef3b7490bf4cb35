"""Posture (reference pose) task: ``bq − q`` on the DoFs with a positive weight.

FIK runs it as a null-space term (seed A eqs 9f–9j, :mod:`animik.ik.nullspace`): joint motion
``gain · weight · (bq − q)`` with the effector part removed, never at the expense of the
effectors. ``solve_ik(..., reference=bq, reference_gain=..., reference_weights=...)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...skeleton import Skeleton
from ..nullspace import reference_task
from .base import Task, TaskFrames


@dataclass(frozen=True, eq=False)
class PostureTask(Task):
    """Reference pose ``bq`` ``(n,)`` with per-DoF weights ``(n,)`` (rows: DoFs with weight > 0).

    ``gain_weights`` is FIK's ``gain · weight`` per DoF (1/iteration), the lowering the kernel
    takes (``ref_w``).
    """

    reference: np.ndarray
    gain_weights: np.ndarray
    name: str = "posture"
    kind: str = "null"
    weight: float = 1.0

    @property
    def dofs(self) -> np.ndarray:
        return np.flatnonzero(self.gain_weights > 0)

    @property
    def rows(self) -> int:  # type: ignore[override]
        return int(self.dofs.size)

    def compute_error(self, frames: TaskFrames) -> np.ndarray:
        d = self.dofs
        return self.reference[d] - frames.q[d]

    def compute_jacobian(self, frames: TaskFrames) -> np.ndarray:
        return np.eye(frames.skeleton.n_dof)[self.dofs]


def from_options(skel: Skeleton, reference, gain, weights) -> PostureTask | None:
    """The validated task of FIK's ``reference`` / ``reference_gain`` / ``reference_weights``
    options (None without a reference; errors name the option)."""
    bq, gw = reference_task(skel, reference, gain, weights)
    return None if bq is None else PostureTask(bq, gw)
