"""Joint-limit avoidance task: ``centre − q`` on the DoFs in the outer margin of their range.

FIK runs it as a null-space term (``limits=True``, ``limit_gain``, ``limit_margin``): the pull
towards the centre of the range is active in the outer ``margin`` fraction of each half-range
with a quadratic ramp (``margin >= 1``: the source's centring everywhere). The hard clamp
(every iterate projected into the limits) is separate and always on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...skeleton import Skeleton
from ..nullspace import limit_centre_halfwidth
from .base import Task, TaskFrames


@dataclass(frozen=True, eq=False)
class JointLimitTask(Task):
    """Limit avoidance. ``centre``, ``half``: ``(n,)`` range centre and half-width (0: no finite
    range); ``margin``; ``gain`` (1/iteration). Rows: every DoF with a finite range.

    The current value is the ramped excursion ``φ(q) = act(q) · (q − centre)`` (zero inside
    the free band), the target 0: the error ``act · (centre − q)`` is what FIK's null-space
    term moves by (``dq0 = gain · error``), and the Jacobian is ``dφ/dq`` (diagonal, with the
    ramp's own derivative)."""

    centre: np.ndarray
    half: np.ndarray
    margin: float = 0.1
    gain: float = 0.1
    name: str = "limits"
    kind: str = "null"

    @property
    def dofs(self) -> np.ndarray:
        return np.flatnonzero(self.half > 0)

    @property
    def rows(self) -> int:  # type: ignore[override]
        return int(self.dofs.size)

    def activation(self, q: np.ndarray) -> np.ndarray:
        """``(rows,)`` in [0, 1]: how strongly each DoF is pulled (the kernel's ramp)."""
        d = self.dofs
        a = np.abs(q[d] - self.centre[d]) / self.half[d]
        if self.margin >= 1.0:
            return np.ones_like(a)
        act = np.clip((a - (1.0 - self.margin)) / self.margin, 0.0, 1.0)
        return act * act

    weight: float = 1.0

    def compute_error(self, frames: TaskFrames) -> np.ndarray:
        d = self.dofs
        return self.activation(frames.q) * (self.centre[d] - frames.q[d])

    def compute_jacobian(self, frames: TaskFrames) -> np.ndarray:
        d = self.dofs
        q = frames.q
        x = q[d] - self.centre[d]
        act = self.activation(q)
        if self.margin >= 1.0:
            dact = np.zeros_like(x)
        else:
            a = np.abs(x) / self.half[d]
            u = (a - (1.0 - self.margin)) / self.margin
            inside = (u > 0.0) & (u < 1.0)
            # act = u² on the ramp: d act/dq = 2 u · sign(x) / (margin · half)
            dact = np.where(inside, 2.0 * u * np.sign(x) / (self.margin * self.half[d]), 0.0)
        jac = np.zeros((d.size, frames.skeleton.n_dof))
        jac[np.arange(d.size), d] = act + x * dact
        return jac


def for_skeleton(skel: Skeleton, margin: float = 0.1, gain: float = 0.1) -> JointLimitTask:
    """The limit task of a skeleton's ranges."""
    centre, half = limit_centre_halfwidth(skel)
    return JointLimitTask(centre, half, float(margin), float(gain))
