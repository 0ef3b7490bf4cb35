"""Pieces every IK solver shares: options, stopping rules and the result."""

from __future__ import annotations

import numpy as np

from ..errors import OptionError, ShapeError
from .problem import IKProblem, ProblemWorkspace
from .result import IKResult

DEFAULT_TOL_POSITION = 1e-3  # m
DEFAULT_TOL_ROTATION = 1e-2  # rad


def check_q0(problem: IKProblem, q0: np.ndarray) -> np.ndarray:
    """Validated, limit-clipped, contiguous copy of the start pose."""
    skel = problem.skeleton
    q = skel.check_q(q0, "q0")
    if q.ndim != 1:
        raise ShapeError(f"q0 must have shape ({skel.n_dof},), got {q.shape}")
    return np.ascontiguousarray(np.clip(q, skel.lower, skel.upper))


def check_positive(name: str, value: float, allow_zero: bool = False) -> float:
    """A finite positive (or non-negative) scalar option, else an OptionError naming it."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise OptionError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value!r}")
    return v


def check_count(name: str, value, minimum: int = 0) -> int:
    """An integer option ``>= minimum`` (bools and floats with a fraction rejected)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating)) \
            or (isinstance(value, (float, np.floating)) and not float(value).is_integer()):
        raise OptionError(f"{name} must be an integer >= {minimum}, got {value!r}")
    v = int(value)
    if v < minimum:
        raise OptionError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return v


class StallDetector:
    """Stops a solver whose error has not improved by ``rel`` over ``window`` iterations."""

    def __init__(self, window: int = 20, rel: float = 1e-4):
        self.window = int(window)
        self.rel = float(rel)
        self.best = np.inf
        self.best_at = 0

    def update(self, it: int, err: float) -> bool:
        """Record the error at iteration ``it``; True when stalled."""
        if err < self.best * (1.0 - self.rel):
            self.best = err
            self.best_at = it
            return False
        return it - self.best_at >= self.window


def make_result(problem: IKProblem, ws: ProblemWorkspace, q: np.ndarray, iterations: int,
                reason: str, solver: str, state=None, evaluate: bool = True) -> IKResult:
    """Build the :class:`IKResult` (re-evaluating the error at ``q`` unless told it is current)."""
    if evaluate:
        ws.evaluate(q, jacobian=False)
    se = ws.site_error
    names = problem.item_names
    err = {n: float(se[i, 0]) for i, n in enumerate(names)}
    ang = {n: float(se[i, 1]) for i, n in enumerate(problem.site_names) if problem.rows[i] == 6}
    q_out = np.array(q, dtype=float)
    q_out.setflags(write=False)
    return IKResult(q=q_out, converged=reason == "converged", iterations=int(iterations),
                    error=err, angle_error=ang, state=state, reason=reason, solver=solver,
                    _skeleton=problem.skeleton)
