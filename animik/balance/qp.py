"""The QP solvers the MPC can use, behind one call: ``min ½ xᵀQx + pᵀx  s.t.  lo ≤ V x ≤ hi``.

* ``daqp``: called through its own API, which takes the two-sided rows as they are and warm
  starts from the previous cycle's multipliers (its active set).
* ``quadprog``, ``proxqp``, ``osqp``, ``qpsolvers-daqp``: through ``qpsolvers`` (one maintained
  front end for many solvers), the two-sided rows passed as ``G = [V; −V]``, ``h = [hi; −lo]``;
  ``osqp`` and ``proxqp`` warm start from the previous solution (``initvals``).

Which one is fastest here is measured by ``animik bench balance``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import daqp
import numpy as np

from .params import BalanceError

SOLVERS: tuple[str, ...] = ("daqp", "quadprog", "proxqp", "osqp", "qpsolvers-daqp")
"""Supported solvers; the first installed one is the default (fastest in the bench)."""

_QPSOLVERS_NAME = {"quadprog": "quadprog", "proxqp": "proxqp", "osqp": "osqp",
                   "qpsolvers-daqp": "daqp"}
_WARM_PRIMAL = {"osqp", "proxqp"}


@dataclass
class QPSolution:
    """``x`` (n,) and, when the solver gives them, the multipliers ``lam`` (m,) of the rows."""

    x: np.ndarray
    lam: np.ndarray | None = None


def available_solvers() -> list[str]:
    """The supported solvers that are installed, in :data:`SOLVERS` order."""
    names = ["daqp"]  # a dependency, imported above
    try:
        import qpsolvers  # lazy: it imports every backend it finds (~1 s); bench / non-default only
    except ImportError:  # pragma: no cover - qpsolvers is a dependency
        return names
    for name in SOLVERS[1:]:
        if _QPSOLVERS_NAME[name] in qpsolvers.available_solvers:
            names.append(name)
    return names


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


# Tolerances close enough that the solvers agree on this problem's scale (tests/balance).
_OPTIONS: dict[str, dict] = {
    # polish=False: osqp prints "Polishing not needed" on stdout whatever verbose says.
    "osqp": {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iter": 4000, "polish": False, "verbose": False},
    "proxqp": {"eps_abs": 1e-9, "eps_rel": 0.0},
}


def solve(q_mat: np.ndarray, p_vec: np.ndarray, v_mat: np.ndarray | None, lo: np.ndarray | None,
          hi: np.ndarray | None, solver: str, warm: QPSolution | None = None) -> QPSolution | None:
    """Solve the QP; ``None`` when the solver reports it infeasible or fails.

    Args:
        q_mat: (n, n) symmetric positive definite.
        p_vec: (n,).
        v_mat: (m, n) constraint rows, or ``None`` for an unconstrained problem.
        lo, hi: (m,) bounds.
        solver: a name from :func:`available_solvers`.
        warm: a guess (the previous cycle's solution, shifted): its ``lam`` warm starts daqp,
            its ``x`` osqp and proxqp; the other solvers start cold.
    """
    if v_mat is None or not len(v_mat):
        v_mat, lo, hi = np.zeros((0, len(p_vec))), np.zeros(0), np.zeros(0)
    if solver == "daqp":
        return _solve_daqp(q_mat, p_vec, v_mat, lo, hi, warm)
    import qpsolvers  # lazy, see available_solvers

    g = np.vstack([v_mat, -v_mat]) if len(v_mat) else None
    h = np.concatenate([hi, -lo]) if len(v_mat) else None
    kwargs = dict(_OPTIONS.get(solver, {}))
    init = warm.x if (warm is not None and solver in _WARM_PRIMAL) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            x = qpsolvers.solve_qp(q_mat, p_vec, g, h, solver=_QPSOLVERS_NAME[solver],
                                   initvals=init, **kwargs)
        except (ValueError, qpsolvers.SolverError, ArithmeticError):
            return None
    if x is None or not np.all(np.isfinite(x)):
        return None
    if g is not None and float(np.max(g @ x - h)) > 1e-5:  # a best iterate returned on failure
        return None
    return QPSolution(np.asarray(x, float))


def _solve_daqp(q_mat, p_vec, v_mat, lo, hi, warm) -> QPSolution | None:
    m = len(v_mat)
    sense = np.zeros(m, dtype=np.int32)
    kwargs = {}
    if warm is not None and warm.lam is not None and len(warm.lam) == m:
        kwargs["dual_start"] = np.ascontiguousarray(warm.lam, float)
    x, _, flag, info = daqp.solve(np.ascontiguousarray(q_mat), np.ascontiguousarray(p_vec),
                                  np.ascontiguousarray(v_mat), np.ascontiguousarray(hi),
                                  np.ascontiguousarray(lo), sense, **kwargs)
    if flag < 1 or not np.all(np.isfinite(x)):
        return None
    return QPSolution(np.asarray(x, float), np.asarray(info["lam"], float))
