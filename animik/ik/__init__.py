"""Inverse kinematics: one API, several solvers.

``solve_ik(skel, q0, targets, solver="fik", **options) -> IKResult``. Solvers live one per
module and share :mod:`animik.ik.problem` (targets → task error and Jacobian). Per-frame use
(dragging, retargeting): ``ik = prepare_ik(skel, q0, targets, **options)`` once, then
``ik.solve(q, targets=..., state=...)`` per frame (:mod:`animik.ik.prepared`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import UnknownNameError, names_hint
from ..skeleton import Skeleton
from .prepared import prepare_ik, prepare_problem
from .problem import IKProblem, ProblemWorkspace, build_problem
from .result import IKResult

# name -> module holding ``solve(problem, q0, **options) -> IKResult``
SOLVERS: dict[str, str] = {
    "fik": "animik.ik.fik",
    "fik_fixed": "animik.ik.fik_fixed",
    "dls": "animik.ik.dls",
    "pinv": "animik.ik.pinv",
    "jt": "animik.ik.transpose",
    "jt_speculative": "animik.ik.speculative",
    "approx_inverse": "animik.ik.approx_inverse",
}


def solve_ik(
    skel: Skeleton,
    q0: np.ndarray,
    targets: Mapping[str, Any],
    solver: str = "fik",
    *,
    weights: Mapping[str, float] | None = None,
    pinned: Iterable[str] = (),
    **options: Any,
) -> IKResult:
    """Solve inverse kinematics for effector targets.

    Args:
        skel: the skeleton.
        q0: start pose ``(n_dof,)``.
        targets: ``{site: position (3,)}`` or ``{site: (position (3,), rotation (3, 3))}``.
        solver: one of :data:`SOLVERS` (default ``"fik"``, variable-step feedback IK).
        weights: ``{site: weight}``.
        pinned: sites held at their pose in ``q0``.
        **options: task keywords of :mod:`animik.ik.tasks` — ``com=(x, y)`` / ``(x, y, z)``:
            the whole-body centre of mass (``skel.masses``, ``skel.coms``) to that point, its
            ground projection for 2 numbers (weight ``weights["com"]``, result
            ``error["com"]``); ``tasks=[Task, ...]``; ``pin_rotation``; and solver options
            (tolerances, iteration cap, gains, null-space terms, ``state`` from the previous
            frame...), see each solver module.

    Returns:
        :class:`IKResult`; ``converged=False`` (never an exception) when targets are unreachable.

    Raises:
        UnknownNameError: unknown solver or site name.
        ShapeError: bad shapes of ``q0`` / targets. ValueRangeError: NaN, a non-rotation.
        OptionError: bad option values or argument types.
    """
    problem = build_problem(skel, q0, targets, weights=weights, pinned=pinned,
                            pin_rotation=bool(options.pop("pin_rotation", False)),
                            tasks=options.pop("tasks", ()), **split_task_args(options))
    return solve_problem(problem, q0, solver, **options)


def split_task_args(options: dict[str, Any]) -> dict[str, Any]:
    """Remove and return the task keywords (``com=...``, :mod:`animik.ik.tasks`) of ``options``."""
    if not options:
        return {}
    from .tasks import keyword_modules

    kws = keyword_modules()
    return {k: options.pop(k) for k in [k for k in options if k in kws]}


def solve_problem(problem: IKProblem, q0: np.ndarray, solver: str = "fik", **options: Any) -> IKResult:
    """:func:`solve_ik` on a prebuilt :class:`IKProblem` (skip re-validating targets per frame)."""
    return get_solver(solver)(problem, np.asarray(q0, dtype=float), **options)


def get_solver(name: str):
    """The ``solve`` function of a solver by name."""
    try:
        module = SOLVERS[name]
    except KeyError:
        raise UnknownNameError(f"unknown solver {name!r}; solvers are {names_hint(SOLVERS)}") from None
    return importlib.import_module(module).solve


__all__ = ["SOLVERS", "IKProblem", "IKResult", "ProblemWorkspace", "build_problem", "get_solver",
           "prepare_ik", "prepare_problem", "solve_ik", "solve_problem", "split_task_args"]
