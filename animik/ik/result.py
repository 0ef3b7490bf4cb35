"""The result of an IK solve."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class IKResult:
    """Outcome of :func:`animik.solve_ik`. Not converging is a result, not an exception.

    Attributes:
        q: ``(n_dof,)`` final pose, always within the joint limits.
        converged: every targeted site within tolerance.
        iterations: iterations used.
        error: ``{site: position error (m)}`` for every targeted or pinned site.
        angle_error: ``{site: orientation error (rad)}`` for sites with a rotation target.
        state: solver state to pass back on the next frame (FIK filter states ``z``, ``bz``);
            ``None`` for stateless solvers.
        reason: why the solver stopped: ``"converged"``, ``"stalled"``, ``"max_iterations"``.
        solver: solver name.
    """

    q: np.ndarray
    converged: bool
    iterations: int
    error: Mapping[str, float]
    angle_error: Mapping[str, float] = field(default_factory=dict)
    state: Any = None
    reason: str = ""
    solver: str = ""

    @property
    def max_error(self) -> float:
        """Largest position error over the targeted sites, m."""
        return max(self.error.values(), default=0.0)
