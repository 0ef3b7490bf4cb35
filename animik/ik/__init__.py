"""Inverse kinematics: one API, several solvers.

``solve_ik(skel, q0, targets, solver="fik", **options) -> IKResult``. Solvers live one per
module and share :mod:`animik.ik.problem` (targets → task error and Jacobian). Per-frame use
(dragging, retargeting): ``ik = prepare_ik(skel, q0, targets, **options)`` once, then
``ik.solve(q, targets=..., state=...)`` per frame (:mod:`animik.ik.prepared`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import OptionError, UnknownNameError, names_hint
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


#: solve_ik's natural-posing defaults for FIK (docs/fik.md §12): per-region stiffness
#: (:mod:`animik.semantics.stiffness`: limbs move, the trunk and root join only when needed) and
#: the start pose as the null-space reference (untouched DoFs stay where they were). Pass
#: ``dof_gains=None, reference=None`` for the plain minimum-norm step.
NATURAL_POSING: dict[str, Any] = {"dof_gains": "regions", "reference": "start", "limits": False}
NATURAL_POSING_SOLVERS = ("fik", "fik_fixed")


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
            frame...), see each solver module. FIK's defaults here are natural posing
            (:data:`NATURAL_POSING`); pins are hard (strictly before the targets) unless
            ``hard_pins=False``.

    Returns:
        :class:`IKResult`; ``converged=False`` (never an exception) when targets are unreachable.

    Raises:
        UnknownNameError: unknown solver or site name.
        ShapeError: bad shapes of ``q0`` / targets. ValueRangeError: NaN, a non-rotation.
        OptionError: bad option values, or ``solver``, ``weights``, ``pinned`` or ``tuning`` of
            the wrong kind.
    """
    pinned = _check_arguments(solver, weights, pinned, options)
    if solver in NATURAL_POSING_SOLVERS:
        for key, val in NATURAL_POSING.items():
            options.setdefault(key, val)
    problem = build_problem(skel, q0, targets, weights=weights, pinned=pinned,
                            pin_rotation=bool(options.pop("pin_rotation", False)),
                            tasks=options.pop("tasks", ()), **split_task_args(options))
    return solve_problem(problem, q0, solver, **options)


def _check_arguments(solver: Any, weights: Any, pinned: Any, options: dict[str, Any]) -> tuple:
    """The kinds of solve_ik's arguments (values are checked where they are used): an
    :class:`OptionError` naming the argument, never a TypeError deep inside. Returns ``pinned``
    as a tuple (``None``: no pins, like ``weights=None``)."""
    if not isinstance(solver, str):
        raise OptionError(f"solve_ik: solver must be a solver name {names_hint(SOLVERS)}, got "
                          f"{type(solver).__name__} {solver!r:.60}")
    if weights is not None and not isinstance(weights, Mapping):
        raise OptionError(f"solve_ik: weights must be a mapping {{site: weight}} or None, got "
                          f"{type(weights).__name__} {weights!r:.60}")
    if pinned is None:
        pinned = ()
    if isinstance(pinned, (str, bytes)) or not isinstance(pinned, Iterable):
        raise OptionError(f"solve_ik: pinned must be a list of site names, got "
                          f"{type(pinned).__name__} {pinned!r:.60}")
    pinned = tuple(pinned)
    bad = [p for p in pinned if not isinstance(p, str)]
    if bad:
        raise OptionError(f"solve_ik: pinned must hold site names (str), got {bad[0]!r:.60}")
    tuning = options.get("tuning")
    if isinstance(tuning, (str, os.PathLike)) and not os.path.isfile(tuning):
        raise OptionError(f"solve_ik: tuning must be None, False, a tuning mapping or an existing "
                          f"tuning file; no file {os.fspath(tuning)!r}")
    return pinned


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


__all__ = ["SOLVERS", "NATURAL_POSING", "NATURAL_POSING_SOLVERS",
           "IKProblem", "IKResult", "ProblemWorkspace", "build_problem", "get_solver",
           "prepare_ik", "prepare_problem", "solve_ik", "solve_problem", "split_task_args"]
