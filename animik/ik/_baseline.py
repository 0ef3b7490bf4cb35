"""Pieces shared by the baseline solvers (dls, pinv, jt, jt_speculative, approx_inverse).

Option parsing with clear errors, the limit handling every baseline uses, and a bounded step.
Kept private: the public contract is each solver module's ``solve(problem, q0, **options)``.

Joint limits: every iterate is clipped into ``[lower, upper]``. Before that, DoFs that sit on a
limit and whose step pushes further out are *blocked* (their Jacobian column is zeroed and the
step recomputed) — Buss's "clamping" — so the other DoFs take over the motion instead of the
solver wasting its step on a DoF that clipping would undo.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import OptionError, UnknownNameError, names_hint
from .common import (
    DEFAULT_TOL_POSITION,
    DEFAULT_TOL_ROTATION,
    StallDetector,
    check_count,
    check_positive,
    check_q0,
)

# Options every baseline accepts (solver modules add their own).
COMMON_DEFAULTS: dict[str, Any] = {
    "tol_position": DEFAULT_TOL_POSITION,  # m
    "tol_rotation": DEFAULT_TOL_ROTATION,  # rad
    "stall_window": 20,  # iterations without relative improvement stall_rel -> "stalled"
    "stall_rel": 1e-4,
    "state": None,  # value returned in IKResult.state on the previous frame (warm start)
    "callback": None,  # callback(iteration, q (n,), error_norm) after every iteration and at 0
}

_LIMIT_EPS = 1e-12


def parse_options(solver: str, options: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict:
    """Merge ``options`` over ``defaults`` and validate the common ones.

    Raises:
        UnknownNameError: an option the solver does not know (valid names listed).
        OptionError: a bad value (the message names the option).
    """
    allowed = {**COMMON_DEFAULTS, **defaults}
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise UnknownNameError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"for solver {solver!r}; its options are {names_hint(sorted(allowed), limit=40)}")
    out = {**allowed, **options}
    out["tol_position"] = check_positive("tol_position", out["tol_position"])
    out["tol_rotation"] = check_positive("tol_rotation", out["tol_rotation"])
    out["max_iterations"] = check_count("max_iterations", out["max_iterations"])
    out["stall_window"] = check_count("stall_window", out["stall_window"], minimum=1)
    out["stall_rel"] = check_positive("stall_rel", out["stall_rel"], allow_zero=True)
    cb = out["callback"]
    if cb is not None and not callable(cb):
        raise OptionError(f"callback must be callable or None, got {type(cb).__name__}")
    return out


def check_range(name: str, value: Any, lo: float, hi: float, lo_open: bool = True,
                hi_open: bool = False) -> float:
    """A finite float option in ``(lo, hi]`` (openness configurable)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a number, got {value!r}") from None
    ok = np.isfinite(v) and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
    if not ok:
        lb = "(" if lo_open else "["
        rb = ")" if hi_open else "]"
        raise OptionError(f"{name} must be in {lb}{lo}, {hi}{rb}, got {value!r}")
    return v


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise OptionError(f"{name} must be one of {list(choices)}, got {value!r}")
    return str(value)


def blocked_dofs(q: np.ndarray, dq: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Bool ``(n,)``: DoFs on a limit whose step ``dq`` points out of the range."""
    return ((q <= lower + _LIMIT_EPS) & (dq < 0.0)) | ((q >= upper - _LIMIT_EPS) & (dq > 0.0))


def bound_step(dq: np.ndarray, max_step: float) -> np.ndarray:
    """Scale ``dq`` (in place, direction kept) so that ``max |dq| <= max_step`` (rad or m)."""
    s = float(np.max(np.abs(dq))) if dq.size else 0.0
    if not np.isfinite(s):  # never propagate NaN / inf: no step at all
        dq[:] = 0.0
    elif s > max_step:
        dq *= max_step / s
    return dq


def solve_with_clamping(step: Callable[[np.ndarray], np.ndarray], jac: np.ndarray,
                        q: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                        passes: int = 3) -> np.ndarray:
    """``step(J)`` recomputed with the columns of blocked DoFs zeroed (at most ``passes`` times).

    Args:
        step: maps a Jacobian ``(m, n)`` to a joint step ``(n,)``.
        jac: the task Jacobian (not modified).
        q: current pose ``(n,)``.
    """
    dq = step(jac)
    blocked = blocked_dofs(q, dq, lower, upper)
    if not blocked.any():
        return dq
    jb = jac.copy()
    for _ in range(passes):
        jb[:, blocked] = 0.0
        dq = step(jb)
        dq[blocked] = 0.0
        more = blocked_dofs(q, dq, lower, upper) & ~blocked
        if not more.any():
            break
        blocked |= more
    return dq


class Loop:
    """Iteration bookkeeping shared by the baselines: stop rules, stall detection, callback."""

    def __init__(self, opts: Mapping[str, Any]):
        self.tol_p = opts["tol_position"]
        self.tol_r = opts["tol_rotation"]
        self.max_it = opts["max_iterations"]
        self.stall = StallDetector(opts["stall_window"], opts["stall_rel"])
        self.callback = opts["callback"]

    def check(self, it: int, ws, q: np.ndarray) -> str | None:
        """Stop reason at iteration ``it`` (``ws`` evaluated at ``q``), or ``None`` to go on."""
        err = float(np.linalg.norm(ws.e))
        if self.callback is not None:
            self.callback(it, q.copy(), err)
        if ws.converged(self.tol_p, self.tol_r):
            return "converged"
        if it >= self.max_it:
            return "max_iterations"
        if self.stall.update(it, err):
            return "stalled"
        return None


def start(problem, q0: np.ndarray, opts: Mapping[str, Any]):
    """Common set-up of a baseline solve.

    Returns:
        ``(q, ws, loop, lower, upper)``: the validated start pose clipped into the limits, a
        :class:`~animik.ik.problem.ProblemWorkspace` already evaluated at it, the
        :class:`Loop` bookkeeping and the skeleton's limits.
    """
    q = check_q0(problem, q0)
    ws = problem.workspace()
    ws.evaluate(q)
    return q, ws, Loop(opts), problem.skeleton.lower, problem.skeleton.upper
