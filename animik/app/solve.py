"""The pose mode's per-frame IK: one warm-started solver call a frame, skipped when there is
nothing to do; the solvers the app offers and its option defaults.

The problem is rebuilt only when the set of constrained sites, their kind (3 or 6 rows) or
weights change; otherwise only the target poses are updated (``IKProblem.with_targets``). The
solved pose enters the document through the trusted path (:meth:`Document.with_pose`: no
re-validation of the rest, no copy of what did not change), and the check "is every
constraint met?" reads the frame's kinematic snapshot (``state.fk``), the same forward
kinematics the view and picking use.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import numpy as np

from ..ik import SOLVERS, build_problem, solve_problem
from ..kinematics import FKResult
from .edits import USER_ERRORS, describe
from .state import AppState, Effector, SolverSettings

# The app solves tighter than the library default (1 mm): a dragged hand sits on its handle.
APP_TOLERANCES = {"tol_position": 1e-4, "tol_rotation": 1e-3}  # m, rad


def available_solvers() -> list[str]:
    """Solver names whose module imports (FIK first)."""
    out = []
    for name, mod in SOLVERS.items():
        try:
            importlib.import_module(mod)
        except Exception:  # a solver module that does not import is left out, not fatal
            continue
        out.append(name)
    return out


def default_solver() -> str:
    names = available_solvers()
    return "fik" if "fik" in names else ("dls" if "dls" in names else names[0])


def solver_defaults(name: str) -> dict[str, Any]:
    """The solver module's documented option defaults (``DEFAULTS``), without ``state``/``callback``."""
    try:
        mod = importlib.import_module(SOLVERS[name])
    except Exception:  # unknown or broken solver module: no options to show
        return {}
    d = dict(getattr(mod, "DEFAULTS", {}))
    for k in ("state", "callback", "max_iterations"):
        d.pop(k, None)
    d.update({k: v for k, v in APP_TOLERANCES.items() if k in d})
    return d


def solver_options(settings: SolverSettings) -> dict[str, Any]:
    """The keyword options the app passes to the solver: the user's, over the app defaults."""
    opts = dict(APP_TOLERANCES)
    opts.update(settings.current)
    return opts


def active_targets(state: AppState) -> dict[str, Any]:
    return {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
            for e in state.doc.effectors if e.active}


def step_ik(state: AppState) -> None:
    """Run the solver once for this frame (warm-started), if anything is constrained.

    The problem is rebuilt only when the set of constrained sites, their kind (3 or 6 rows) or
    weights change; otherwise only the target poses are updated (``IKProblem.with_targets``).
    The FIK filter states come back in ``result.state`` and go into the next frame's call.
    """
    doc = state.doc
    cache = state.ik
    effs = [e for e in doc.effectors if e.active]
    if not effs or not state.live_ik:
        cache.converged = True
        state.stats.record(0.0, 0, 0.0)
        return
    if cache.failed:
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    if cache.converged and cache.solved_version == state.version:
        # nothing moved since the last converged solve: no work, flat plot
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    if constraints_met(state, effs):
        # Nothing to do: solving anyway would let the null-space terms (limit avoidance,
        # reference pull) drift a pose the user just set, undid or opened.
        cache.converged = True
        cache.solved_version = state.version
        state.stats.record(_max_error_mm(state, effs), 0, 0.0)
        return
    t0 = time.perf_counter()
    targets = {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
               for e in effs}
    key = (id(doc.skeleton), tuple((e.site, e.oriented, e.weight) for e in effs))
    try:
        if cache.key != key or cache.problem is None:
            cache.problem = build_problem(doc.skeleton, doc.q, targets,
                                          weights={e.site: e.weight for e in effs})
            cache.key = key
            cache.solver_state = None
        else:
            cache.problem = cache.problem.with_targets(targets)
        opts = solver_options(doc.solver)
        result = solve_problem(cache.problem, doc.q, doc.solver.name,
                               max_iterations=int(doc.solver.iterations),
                               state=cache.solver_state, **opts)
    except Exception as e:  # a solver bug must not take the user's scene down with it
        if not isinstance(e, USER_ERRORS):
            import traceback

            traceback.print_exc()
        cache.failed = f"IK solver {doc.solver.name!r} failed: {describe(e)}"
        state.error(cache.failed + " (change the solver settings to retry)")
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    ik_ms = 1e3 * (time.perf_counter() - t0)
    cache.solver_state = result.state
    cache.last_result = result
    cache.converged = bool(result.converged) or result.iterations == 0
    cache.solved_version = state.version
    if not np.array_equal(result.q, doc.q):
        state.doc = doc.with_pose(result.q)
        # A solver that returns the forward kinematics it evaluated at result.q (IKResult.fk,
        # FIK's trusted path) saves the frame its one FK pass: the view, picking and the next
        # frame's constraint check read this snapshot.
        fk = getattr(result, "fk", None)
        if isinstance(fk, FKResult):
            state.adopt_kinematics(state.doc.q, fk)
    if state.drag is None:
        state.history.amend(state.doc)
    state.stats.record(1e3 * result.max_error, result.iterations, ik_ms)


def constraints_met(state: AppState, effs: list[Effector]) -> bool:
    """Every constrained effector within the solver's tolerance of its target."""
    opts = solver_options(state.doc.solver)
    tol_p = float(opts["tol_position"])
    tol_r = float(opts["tol_rotation"])
    fk = state.fk
    skel = state.skeleton
    for e in effs:
        i = skel.site_index(e.site)
        if np.linalg.norm(fk.site_positions[i] - e.position) > tol_p:
            return False
        if e.rotation is not None:
            r = fk.site_rotations[i].T @ e.rotation
            if np.arccos(np.clip(0.5 * (np.trace(r) - 1.0), -1.0, 1.0)) > tol_r:
                return False
    return True


def _max_error_mm(state: AppState, effs: list[Effector]) -> float:
    fk = state.fk
    skel = state.skeleton
    return 1e3 * max((float(np.linalg.norm(fk.site_positions[skel.site_index(e.site)] - e.position))
                      for e in effs), default=0.0)

