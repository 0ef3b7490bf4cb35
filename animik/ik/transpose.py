"""Jacobian-transpose IK (Wolovich & Elliott 1984; step size after Buss 2004).

Each iteration moves along the gradient direction ``v = Jᵀ e`` of ``½‖e‖²``:

    dq = α Jᵀ e,     α = ⟨e, J Jᵀ e⟩ / ⟨J Jᵀ e, J Jᵀ e⟩ = ‖v‖² / ‖J v‖²

the step that minimises the *linearised* error ``‖e − α J v‖`` along ``v`` (Buss, "Introduction
to inverse kinematics with Jacobian transpose, pseudoinverse and damped least squares methods",
§5). No matrix is factorised: one matrix–vector product each way. Convergence is linear and slow
on ill-conditioned problems (many effectors, long chains); :mod:`animik.ik.speculative` picks α
from several candidates instead.

Guards: when ``‖J v‖`` vanishes (singular pose with the error in the null space of Jᵀ) α is
set to 0 and the solver stalls instead of dividing by zero; the step is bounded by
``max_step`` per DoF. Joint limits: DoFs on a limit that ``v`` pushes outward are removed from
``v`` (projected gradient) before α is computed; the pose is then clipped into the limits.
"""

from __future__ import annotations

import numpy as np

from ._baseline import blocked_dofs, bound_step, parse_options, start
from .common import check_positive, make_result
from .problem import IKProblem
from .result import IKResult

NAME = "jt"

DEFAULTS = {
    "max_iterations": 5000,
    "stall_window": 50,
    "max_step": 0.2,  # rad or m per DoF per iteration
}


def transpose_direction(jac: np.ndarray, e: np.ndarray, q: np.ndarray, lower: np.ndarray,
                        upper: np.ndarray) -> tuple[np.ndarray, float]:
    """Projected gradient ``v = Jᵀe`` (blocked DoFs zeroed) and Buss's optimal step ``α*``.

    Returns:
        ``(v (n,), α*)``; ``α* = 0`` when ``‖J v‖`` is (numerically) zero.
    """
    v = jac.T @ e
    v[blocked_dofs(q, v, lower, upper)] = 0.0
    jv = jac @ v
    den = float(jv @ jv)
    num = float(v @ v)
    if not (den > 1e-300 and np.isfinite(den) and np.isfinite(num)):
        return v, 0.0
    return v, num / den


def solve(problem: IKProblem, q0: np.ndarray, **options) -> IKResult:
    """Jacobian-transpose IK with Buss's optimal step.

    Args:
        problem: the targets.
        q0: start pose ``(n_dof,)`` (clipped into the limits).
        **options: ``tol_position`` (m), ``tol_rotation`` (rad), ``max_iterations`` (5000),
            ``max_step`` (rad or m per DoF per iteration, 0.2), ``stall_window`` (50), ``stall_rel``,
            ``state`` (ignored: stateless), ``callback``.

    Raises:
        UnknownNameError: unknown option. OptionError: bad option value. ShapeError,
            ValueRangeError: bad ``q0``.
    """
    o = parse_options(NAME, options, DEFAULTS)
    max_step = check_positive("max_step", o["max_step"])
    q, ws, loop, lo, hi = start(problem, q0, o)
    it = 0
    while (reason := loop.check(it, ws, q)) is None:
        it += 1
        v, alpha = transpose_direction(ws.jac, ws.e, q, lo, hi)
        dq = bound_step(alpha * v, max_step)
        q = np.clip(q + dq, lo, hi)
        ws.evaluate(q)
    return make_result(problem, ws, q, it, reason, NAME, evaluate=False)
