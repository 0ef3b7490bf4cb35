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

    Properties :attr:`fk`, :attr:`site_positions`, :attr:`site_rotations`: the frames of the
    skeleton at ``q`` (FIK returns the forward kinematics its loop already evaluated; the
    other solvers compute it on first access).
    """

    q: np.ndarray
    converged: bool
    iterations: int
    error: Mapping[str, float]
    angle_error: Mapping[str, float] = field(default_factory=dict)
    state: Any = None
    reason: str = ""
    solver: str = ""
    _frames: Any = field(default=None, repr=False)  # FKResult at q, if the solver had it
    _skeleton: Any = field(default=None, repr=False)  # to compute it on demand otherwise
    _trunk_joined: bool = field(default=False, repr=False)  # FIK natural posing: stage 2 ran

    @property
    def fk(self):
        """:class:`~animik.kinematics.FKResult` at ``q``: world frames of every joint and every
        site of the skeleton (read-only arrays) — what a caller needs to draw the pose without
        a second FK pass. ``None`` for a result built without a skeleton."""
        if self._frames is None and self._skeleton is not None:
            from ..kinematics import forward_kinematics

            fk = forward_kinematics(self._skeleton, self.q)
            for a in fk:
                a.setflags(write=False)
            object.__setattr__(self, "_frames", fk)
        return self._frames

    @property
    def has_frames(self) -> bool:
        """Whether :attr:`fk` is already there (the solver returned the frames it evaluated at
        ``q``: FIK) rather than computed by a forward-kinematics pass on first access."""
        return self._frames is not None

    @property
    def site_positions(self) -> np.ndarray:
        """``(S, 3)`` world positions of every site of the skeleton at ``q``, m."""
        return self.fk.site_positions

    @property
    def site_rotations(self) -> np.ndarray:
        """``(S, 3, 3)`` world rotations of every site of the skeleton at ``q``."""
        return self.fk.site_rotations

    @property
    def max_error(self) -> float:
        """Largest position error over the targeted sites, m."""
        return max(self.error.values(), default=0.0)
