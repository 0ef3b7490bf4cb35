"""The trusted per-frame path: validate a problem and its options once, then solve per frame.

``prepare_ik(skel, q0, targets, ...)`` validates everything :func:`animik.solve_ik` validates
and returns an object whose ``solve(q, targets=..., positions=..., reference=..., state=...)``
re-checks only what a frame changes (shapes and finiteness). For ``solver="fik"`` /
``"fik_fixed"`` this is :class:`animik.ik.fik.PreparedFIK` (no option re-validation, no problem
rebuilding, the kernel's layout built once); for the other solvers a thin wrapper over
:func:`animik.ik.solve_problem` with the same interface.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import OptionError, ShapeError, ValueRangeError
from ..skeleton import Skeleton
from .problem import IKProblem, build_problem
from .result import IKResult


class PreparedSolver:
    """:func:`prepare_ik` for solvers without a compiled per-frame path (same interface as
    :class:`animik.ik.fik.PreparedFIK`; every call goes through :func:`solve_problem`)."""

    def __init__(self, problem: IKProblem, solver: str, options: Mapping[str, Any]):
        from . import get_solver

        self._solve = get_solver(solver)
        self.problem = problem
        self.site_names = problem.site_names
        self._options = dict(options)
        if self._options.pop("state", None) is not None:
            raise OptionError("state is per frame: pass it to solve(q, state=...), not to "
                             "prepare_ik")

    @property
    def positions(self) -> np.ndarray:
        return self.problem.positions

    @property
    def options(self) -> dict[str, Any]:
        return dict(self._options)

    def solve(self, q: np.ndarray, *, targets: Mapping[str, Any] | None = None,
              positions: np.ndarray | None = None, reference: np.ndarray | None = None,
              state: Any = None, max_iterations: int | None = None,
              stall_window: int | None = None, stall_rel: float | None = None) -> IKResult:
        """See :meth:`animik.ik.fik.PreparedFIK.solve`."""
        import dataclasses

        p = self.problem
        if positions is not None:
            pos = np.array(positions, dtype=float)
            if pos.shape != (p.k, 3):
                raise ShapeError(f"positions must have shape ({p.k}, 3), got {pos.shape}")
            if not np.all(np.isfinite(pos)):
                raise ValueRangeError("positions contain NaN or infinite values")
            p = dataclasses.replace(p, positions=pos)
        if targets is not None:
            p = p.with_targets(targets)
        self.problem = p
        opts = dict(self._options)
        for key, val in (("reference", reference), ("max_iterations", max_iterations),
                         ("stall_window", stall_window), ("stall_rel", stall_rel)):
            if val is not None:
                opts[key] = val
        if state is not None:
            opts["state"] = state
        return self._solve(p, np.asarray(q, dtype=float), **opts)


def prepare_ik(
    skel: Skeleton,
    q0: np.ndarray,
    targets: Mapping[str, Any],
    solver: str = "fik",
    *,
    weights: Mapping[str, float] | None = None,
    pinned: Iterable[str] = (),
    pin_rotation: bool = False,
    **options: Any,
):
    """Validate a problem and solver options once for per-frame solves.

    Args:
        skel, q0, targets, solver, weights, pinned, pin_rotation: as :func:`animik.solve_ik`
            (pinned sites hold their pose at ``q0``; ``targets`` give the sites and the
            initial target poses); task keywords (``com=...``) and ``tasks=`` too.
        **options: solver options (validated now; a bad one raises here, not per frame).

    Returns:
        :class:`animik.ik.fik.PreparedFIK` (``"fik"``, ``"fik_fixed"``) or
        :class:`PreparedSolver`; call ``.solve(q, targets=..., state=...)`` per frame.

    Raises:
        UnknownNameError, OptionError, ShapeError, ValueRangeError: as :func:`animik.solve_ik`.
    """
    from . import split_task_args

    problem = build_problem(skel, q0, targets, weights=weights, pinned=pinned,
                            pin_rotation=pin_rotation, tasks=options.pop("tasks", ()),
                            **split_task_args(options))
    return prepare_problem(problem, solver, **options)


def prepare_problem(problem: IKProblem, solver: str = "fik", **options: Any):
    """:func:`prepare_ik` on a prebuilt :class:`IKProblem`."""
    from . import get_solver

    get_solver(solver)  # unknown names raise UnknownNameError listing the solvers
    if solver == "fik":
        from .fik import prepare

        return prepare(problem, **options)
    if solver == "fik_fixed":
        from .fik import prepare_fixed

        return prepare_fixed(problem, **options)
    return PreparedSolver(problem, solver, options)
