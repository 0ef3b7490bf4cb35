"""The pose mode's per-frame IK: one warm-started solver call a frame, skipped when there is
nothing to do; the solvers the app offers and its option defaults.

The solver runs on the trusted per-frame path (:func:`animik.ik.prepare_problem`, docs/fik.md
§9): the problem and the solver options are validated and prepared once, again only when the set
of constrained sites, their kind (3 or 6 rows) or weights, the skeleton or the solver settings
change (the Solver panel applies settings live); per frame only the target positions (and the
rotations of oriented targets) go in. The solved pose enters the document through the trusted
path (:meth:`Document.with_pose`: no re-validation of the rest, no copy of what did not change)
together with the solver's own forward kinematics at that pose (``IKResult.fk``), which becomes
the frame's kinematic snapshot: the check "is every constraint met?", the view and picking read
it, and the app runs no forward kinematics of its own on a solved frame.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import numpy as np

from ..ik import NATURAL_POSING, NATURAL_POSING_SOLVERS, SOLVERS, build_problem, prepare_problem
from .edits import USER_ERRORS, describe
from .state import AppState, Effector, IKCache, SolverSettings

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
    if name in NATURAL_POSING_SOLVERS:
        d.update(NATURAL_POSING)
    return d


def solver_options(settings: SolverSettings) -> dict[str, Any]:
    """The keyword options the app passes to the solver: the user's, over the app defaults
    (natural posing for FIK, as :func:`animik.solve_ik`: per-region stiffness, hard pins, the
    drag's start pose as the null-space reference — passed per frame by :func:`step_ik`)."""
    opts = dict(APP_TOLERANCES)
    if settings.name in NATURAL_POSING_SOLVERS:
        opts.update(NATURAL_POSING)
    opts.update(settings.current)
    return opts


def active_targets(state: AppState) -> dict[str, Any]:
    return {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
            for e in state.doc.effectors if e.active}


def step_ik(state: AppState) -> None:
    """Run the solver once for this frame (warm-started), if anything is constrained.

    The prepared solver (:attr:`IKCache.prepared`) is rebuilt only when the skeleton, the set
    of constrained sites, their kind (3 or 6 rows) or weights, or the solver settings change;
    otherwise only this frame's target positions (and oriented targets' rotations) are passed.
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
    key = (id(doc.skeleton), tuple((e.site, e.oriented, e.weight) for e in effs))
    try:
        ik = _prepared(cache, doc, effs, key)
        # the prepared problem's rows are the effectors in this order (build_problem keeps the
        # order of its targets): positions in one array, rotations only for oriented targets
        positions = np.array([e.position for e in effs])
        rotations = {e.site: (e.position, e.rotation) for e in effs if e.rotation is not None}
        # natural posing: while a handle is dragged, the pose at the press is the null-space
        # reference (untouched parts stay where they were for the whole drag)
        reference = None
        if (state.drag is not None and doc.solver.name in NATURAL_POSING_SOLVERS
                and isinstance(ik.options.get("reference"), str)):
            reference = state.drag.start_doc.q
        result = ik.solve(doc.q, positions=positions, targets=rotations or None,
                          state=cache.solver_state, max_iterations=int(doc.solver.iterations),
                          reference=reference)
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
        # The prepared solvers return the forward kinematics at result.q that their last
        # iteration evaluated (FIK: the kernel's own frames; the generic solvers: the frames
        # of their final error evaluation): it becomes the frame's snapshot, so the view,
        # picking and the next frame's constraint check run no FK of their own.
        fk = result.fk
        if not result.has_frames:
            state.stats.fk_passes += 1  # computed on demand: an FK pass the app asked for
        state.adopt_kinematics(state.doc.q, fk)
    if state.drag is None:
        state.history.amend(state.doc)
    state.stats.record(1e3 * result.max_error, result.iterations, ik_ms)


def _prepared(cache: IKCache, doc, effs: list[Effector], key: tuple):
    """The prepared solver for these effectors and settings (re-prepared when they change)."""
    settings = doc.solver
    if (cache.prepared is not None and cache.key == key
            and (cache.settings is settings
                 or (cache.settings is not None and cache.settings.same_as(settings)))):
        cache.settings = settings
        return cache.prepared
    targets = {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
               for e in effs}
    problem = build_problem(doc.skeleton, doc.q, targets, weights={e.site: e.weight for e in effs})
    if list(problem.site_names) != [e.site for e in effs]:  # the row order solve() relies on
        raise RuntimeError(f"IK problem rows {list(problem.site_names)} are not the effectors "
                           f"{[e.site for e in effs]}")
    cache.solver_state = None  # filter states of other rows, or of other settings
    cache.prepared = None
    cache.prepared = prepare_problem(problem, settings.name, **solver_options(settings))
    cache.key, cache.settings = key, settings
    return cache.prepared


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

