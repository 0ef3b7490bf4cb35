"""Damped least squares IK (Nakamura & Hanafusa 1986; Wampler 1986).

Each iteration takes the damped least-squares step

    dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e        (m ≤ n; for m > n the identical dq = (JᵀJ + λ²I)⁻¹ Jᵀ e)

solved by a Cholesky factorisation of the smaller Gram matrix (never an explicit inverse).
``e`` is the weighted task error and ``J`` the weighted task Jacobian of
:class:`~animik.ik.problem.ProblemWorkspace`. The step is bounded by ``‖e‖ / (2λ)`` in norm, so
it stays finite at a singularity; a ``max_step`` bound caps it in any case.

The damping λ (units of the task rows, m) is chosen by ``adaptive``:

* ``"none"``: λ = ``damping`` throughout (the textbook fixed-damping method).
* ``"lm"`` (default): a Levenberg–Marquardt schedule. A step that lowers ``‖e‖`` is accepted
  and λ halves (down to ``damping_min``: near Gauss–Newton, fast final convergence); a step that
  raises it is rejected and λ is multiplied by 4 (up to ``damping_max``: short, safe steps
  near singularities or far from the solution). λ is returned in ``IKResult.state`` so that the
  next frame starts where this one ended (pass ``state=result.state``).
* ``"manipulability"``: Nakamura–Hanafusa's singularity-robust inverse,
  ``λ = damping · (1 − w / w0)²`` for ``w < w0`` else ``damping_min``, with the manipulability
  measure ``w`` taken as the geometric mean of the singular values of J,
  ``w = det(G)^(1 / 2r)`` (G the r×r Gram matrix, r = min(m, n)) — the original
  ``sqrt(det(J Jᵀ))`` normalised so that one threshold ``w0`` (m / rad) fits any number of task
  rows. Every step is taken (no rejection).

Joint limits: DoFs on a limit that the step pushes outward are blocked (their column zeroed,
step recomputed), then the pose is clipped into the limits.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotrs

from ..errors import OptionError
from ._baseline import bound_step, check_choice, parse_options, solve_with_clamping, start
from .common import check_positive, make_result
from .problem import IKProblem
from .result import IKResult

NAME = "dls"

DEFAULTS = {
    "max_iterations": 200,
    "damping": 0.05,  # λ, m (fixed value, start value of "lm", λ0 of "manipulability")
    "adaptive": "lm",  # "none" | "lm" | "manipulability"
    "damping_min": 1e-4,  # m
    "damping_max": 10.0,  # m
    "manipulability_threshold": 0.1,  # w0, m/rad (geometric mean of singular values)
    "max_step": 0.5,  # rad or m, largest change of one DoF per iteration
}


def dls_step(jac: np.ndarray, e: np.ndarray, lam: float) -> np.ndarray:
    """``Jᵀ (J Jᵀ + λ² I)⁻¹ e`` via Cholesky of the smaller Gram matrix.

    Args:
        jac: ``(m, n)`` task Jacobian.
        e: ``(m,)`` task error.
        lam: damping λ (> 0 keeps the Gram matrix positive definite even when J is singular).

    Returns:
        ``(n,)`` joint step.
    """
    m, n = jac.shape
    lam2 = lam * lam
    if m <= n:
        g = jac @ jac.T
        rhs = e
    else:
        g = jac.T @ jac
        rhs = jac.T @ e
    # A floor relative to the Gram scale keeps Cholesky defined for λ -> 0 at a singularity.
    lam2 = max(lam2, 1e-12 * (float(np.trace(g)) / max(len(g), 1) + 1.0))
    g.flat[:: len(g) + 1] += lam2
    # LAPACK Cholesky factor + solve, called directly (the scipy.linalg wrappers cost more than
    # the factorisation at these sizes).
    c, info = dpotrf(g, lower=1, clean=0, overwrite_a=1)
    if info != 0:  # not positive definite: only with non-finite input; take no step
        return np.zeros(n)
    sol, info = dpotrs(c, rhs, lower=1)
    if info != 0 or not np.all(np.isfinite(sol)):
        return np.zeros(n)
    return jac.T @ sol if m <= n else sol


def manipulability(jac: np.ndarray) -> float:
    """Geometric mean of the singular values of ``jac`` (0 at a singularity)."""
    m, n = jac.shape
    g = jac @ jac.T if m <= n else jac.T @ jac
    sign, logdet = np.linalg.slogdet(g)
    if sign <= 0 or not np.isfinite(logdet):
        return 0.0
    return float(np.exp(logdet / (2 * len(g))))


def solve(problem: IKProblem, q0: np.ndarray, **options) -> IKResult:
    """Damped least squares IK.

    Args:
        problem: the targets (:func:`animik.ik.build_problem`).
        q0: start pose ``(n_dof,)`` (clipped into the limits).
        **options: ``tol_position`` (m, 1e-3), ``tol_rotation`` (rad, 1e-2), ``max_iterations``
            (200), ``damping`` (λ, m, 0.05), ``adaptive`` (``"lm"``, ``"none"``,
            ``"manipulability"``), ``damping_min`` / ``damping_max`` (m), ``manipulability_threshold``
            (w0, m/rad), ``max_step`` (rad or m per DoF per iteration), ``stall_window``,
            ``stall_rel``, ``state`` (λ from the previous frame's result), ``callback``.

    Returns:
        :class:`IKResult` with ``state = {"damping": λ}``.

    Raises:
        UnknownNameError: unknown option. OptionError: bad option value. ShapeError,
            ValueRangeError: bad ``q0``.
    """
    o = parse_options(NAME, options, DEFAULTS)
    lam0 = check_positive("damping", o["damping"])
    lam_min = check_positive("damping_min", o["damping_min"])
    lam_max = check_positive("damping_max", o["damping_max"])
    if lam_min > lam_max:
        raise OptionError(f"damping_min ({lam_min}) must not exceed damping_max ({lam_max})")
    w0 = check_positive("manipulability_threshold", o["manipulability_threshold"])
    max_step = check_positive("max_step", o["max_step"])
    mode = check_choice("adaptive", o["adaptive"], ("none", "lm", "manipulability"))
    lam = lam0
    state = o["state"]
    if mode == "lm" and isinstance(state, dict) and "damping" in state:
        s = float(state["damping"])
        if np.isfinite(s) and s > 0:
            lam = min(max(s, lam_min), lam_max)

    q, ws, loop, lo, hi = start(problem, q0, o)
    err = float(np.linalg.norm(ws.e))
    e_old, jac_old, se_old = ws.e.copy(), ws.jac.copy(), ws.site_error.copy()
    q_new = np.empty_like(q)
    it = 0
    while True:
        reason = loop.check(it, ws, q)
        if reason is not None:
            break
        it += 1
        if mode == "manipulability":
            w = manipulability(ws.jac)
            lam = lam0 * (1.0 - w / w0) ** 2 if w < w0 else lam_min
            lam = max(lam, lam_min)
        e = ws.e
        dq = solve_with_clamping(lambda jb, e=e, lam=lam: dls_step(jb, e, lam), ws.jac, q, lo, hi)
        bound_step(dq, max_step)
        np.clip(q + dq, lo, hi, out=q_new)
        if mode != "lm":
            q, q_new = q_new, q
            ws.evaluate(q)
            continue
        np.copyto(e_old, ws.e)
        np.copyto(jac_old, ws.jac)
        np.copyto(se_old, ws.site_error)
        ws.evaluate(q_new)
        err_new = float(np.linalg.norm(ws.e))
        if err_new < err:  # accept: trust the linear model more
            q, q_new = q_new, q
            err = err_new
            lam = max(lam * 0.5, lam_min)
        else:  # reject: restore the evaluation at q, damp more
            np.copyto(ws.e, e_old)
            np.copyto(ws.jac, jac_old)
            np.copyto(ws.site_error, se_old)
            if lam >= lam_max:  # cannot damp more: no progress possible from here
                reason = "stalled"
                break
            lam = min(lam * 4.0, lam_max)
    return make_result(problem, ws, q, it, reason, NAME, state={"damping": lam}, evaluate=False)
