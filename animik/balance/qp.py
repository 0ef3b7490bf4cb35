"""The QP solvers the MPC can use, behind one call: ``min ½ xᵀQx + pᵀx  s.t.  lo ≤ V x ≤ hi``.

All go through ``qpsolvers`` (one maintained front end for many solvers); the two-sided rows
are passed as ``G = [V; −V]``, ``h = [hi; −lo]``. Which one is fastest here is measured by
``animik bench balance``.
"""

from __future__ import annotations

import warnings

import numpy as np

from .params import BalanceError

SOLVERS: tuple[str, ...] = ("daqp", "proxqp", "quadprog", "osqp")
"""Solvers supported (qpsolvers names); the first installed one is the default."""


def available_solvers() -> list[str]:
    """The supported solvers that are installed, in :data:`SOLVERS` order."""
    try:
        import qpsolvers
    except ImportError:  # pragma: no cover - qpsolvers is a dependency
        return []
    return [s for s in SOLVERS if s in qpsolvers.available_solvers]


def default_solver() -> str:
    names = available_solvers()
    if not names:
        raise BalanceError(f"no QP solver installed: expected one of {list(SOLVERS)} "
                           "(pip install qpsolvers daqp)")
    return names[0]


def check_solver(name: str) -> str:
    names = available_solvers()
    if name not in names:
        raise BalanceError(f"QP solver must be one of the installed {names}, got {name!r}")
    return name


# Tolerances close enough that the solvers agree to ~1e-6 on this problem's scale.
_OPTIONS: dict[str, dict] = {
    "osqp": {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iter": 20000, "polish": True, "verbose": False},
    "proxqp": {"eps_abs": 1e-9, "eps_rel": 0.0},
    "daqp": {},
    "quadprog": {},
}


def solve(q_mat: np.ndarray, p_vec: np.ndarray, v_mat: np.ndarray | None, lo: np.ndarray | None,
          hi: np.ndarray | None, solver: str, initvals: np.ndarray | None = None) -> np.ndarray | None:
    """Solve the QP; ``None`` when the solver reports it infeasible or fails.

    Args:
        q_mat: (n, n) symmetric positive definite.
        p_vec: (n,).
        v_mat: (m, n) constraint rows, or ``None`` for an unconstrained problem.
        lo, hi: (m,) bounds.
        solver: a name from :func:`available_solvers`.
        initvals: (n,) warm start (used by the solvers that accept one: osqp, proxqp).
    """
    import qpsolvers

    g = h = None
    if v_mat is not None and len(v_mat):
        g = np.vstack([v_mat, -v_mat])
        h = np.concatenate([hi, -lo])
    kwargs = dict(_OPTIONS.get(solver, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quadprog/daqp warn that they ignore initvals
        try:
            x = qpsolvers.solve_qp(q_mat, p_vec, g, h, solver=solver,
                                   initvals=initvals if solver in ("osqp", "proxqp") else None,
                                   **kwargs)
        except (ValueError, qpsolvers.SolverError, ArithmeticError):
            return None
    if x is None or not np.all(np.isfinite(x)):
        return None
    if g is not None:  # some solvers return their best iterate on failure: check it
        viol = float(np.max(g @ x - h))
        if viol > 1e-5:
            return None
    return np.asarray(x, float)
