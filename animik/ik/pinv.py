"""Moore–Penrose pseudo-inverse IK (Newton–Raphson on the task error).

Each iteration takes ``dq = J⁺ e`` with ``J⁺`` from a thin SVD ``J = U diag(s) Vᵀ``:

    dq = Σ_{s_i > cutoff} v_i (u_iᵀ e) / s_i,     cutoff = max(rcond · s_max, min_singular)

Singular values under the cutoff are dropped (truncated SVD), so directions that the pose can
barely move along do not produce huge steps; even so, just above the cutoff ``1 / s_i`` is large
near a singularity, so the step is scaled (direction kept) to at most ``max_step`` per DoF. That
bound is what keeps the plain pseudo-inverse from exploding near singular poses; it also makes
the method converge from far away (a damped Newton step).

Joint limits: DoFs on a limit that the step pushes outward are blocked (column zeroed, step
recomputed), then the pose is clipped into the limits.
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionError
from ._baseline import bound_step, parse_options, solve_with_clamping, start
from .common import check_positive, make_result
from .problem import IKProblem
from .result import IKResult

NAME = "pinv"

DEFAULTS = {
    "max_iterations": 200,
    "rcond": 1e-4,  # singular values below rcond * s_max are dropped
    "min_singular": 1e-6,  # absolute floor of the cutoff (m/rad)
    "max_step": 0.2,  # rad or m per DoF per iteration
}


def pinv_step(jac: np.ndarray, e: np.ndarray, rcond: float, min_singular: float) -> np.ndarray:
    """Truncated-SVD pseudo-inverse step ``J⁺ e`` ``(n,)``."""
    if not jac.size:
        return np.zeros(jac.shape[1])
    try:
        u, s, vt = np.linalg.svd(jac, full_matrices=False)
    except np.linalg.LinAlgError:  # only with non-finite input: take no step
        return np.zeros(jac.shape[1])
    cutoff = max(rcond * (s[0] if s.size else 0.0), min_singular)
    keep = s > cutoff
    if not keep.any():
        return np.zeros(jac.shape[1])
    coef = (u[:, keep].T @ e) / s[keep]
    return vt[keep].T @ coef


def solve(problem: IKProblem, q0: np.ndarray, **options) -> IKResult:
    """Pseudo-inverse IK.

    Args:
        problem: the targets.
        q0: start pose ``(n_dof,)`` (clipped into the limits).
        **options: ``tol_position`` (m), ``tol_rotation`` (rad), ``max_iterations`` (200),
            ``rcond`` (relative singular-value cutoff, 1e-4), ``min_singular`` (absolute cutoff),
            ``max_step`` (rad or m per DoF per iteration, 0.2), ``stall_window``, ``stall_rel``,
            ``state`` (ignored: stateless), ``callback``.

    Raises:
        UnknownNameError: unknown option. OptionError: bad option value. ShapeError,
            ValueRangeError: bad ``q0``.
    """
    o = parse_options(NAME, options, DEFAULTS)
    rcond = check_positive("rcond", o["rcond"], allow_zero=True)
    if rcond >= 1.0:
        raise OptionError(f"rcond must be in [0, 1), got {o['rcond']!r}")
    min_sv = check_positive("min_singular", o["min_singular"])
    max_step = check_positive("max_step", o["max_step"])
    q, ws, loop, lo, hi = start(problem, q0, o)
    it = 0
    while (reason := loop.check(it, ws, q)) is None:
        it += 1
        e = ws.e
        dq = solve_with_clamping(lambda jb, e=e: pinv_step(jb, e, rcond, min_sv), ws.jac, q, lo, hi)
        bound_step(dq, max_step)
        q = np.clip(q + dq, lo, hi)
        ws.evaluate(q)
    return make_result(problem, ws, q, it, reason, NAME, evaluate=False)
