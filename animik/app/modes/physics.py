"""Physics mode: seed D's interactive use — drag a hand or the pelvis with the feet pinned and
the motion stays dynamically feasible.

Each frame: the pose mode's step (playback of the current clip if playing, then the live IK
with the user's pins and drags) gives the **kinematic reference**; the
:class:`~animik.dynamics.interactive.BalanceFilter` checks it with full inverse dynamics (ZMP in
the support polygon, friction, pulling) and its capture point, and when it fails **corrects**
it: a second IK solve from the constant-velocity prediction with the same pins and drags plus
the centre-of-mass task at the capture-point target (docs/dynamics.md, "interactive use").

Also here: :func:`make_feasible` (the current clip through the same filter, added as a new
clip) and :func:`infeasible_frames` (the timeline's red marks). No GL.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...anim.clip import Clip
from ...anim.feasible import FeasibleClipResult, clip_supports, feasible_clip
from ...anim.serialize import SUPPORTS_META
from ...dynamics.clip import check_clip
from ...dynamics.contacts import ContactGeometryError
from ...dynamics.interactive import BalanceFilter, BalanceOptions, BalanceStep, track_target
from ...dynamics.inverse import com
from ...ik import NATURAL_POSING_SOLVERS, prepare_ik
from ...ik.fik import PreparedFIK
from ...ik.options import per_dof
from ...ik.prepared import PreparedSolver
from ...kinematics import forward_kinematics
from ...semantics.stiffness import posing_gains
from .. import timeline
from ..document import ModeData
from ..edits import USER_ERRORS, commit, describe, set_doc
from ..physics import physics_of
from ..solve import solver_options, step_ik
from ..state import PINNED, AppState
from ..timeline.background import busy
from ..timeline.marks import unique_name
from ..ui_state import ModeUI
from .base import Mode
from .pose import timeline_keys

NAME = "physics"
#: ``Clip.meta`` key of the supports a clip was made feasible with (JSON, or ``"floor"``)
PIN_WEIGHT = 10.0  # pins "hard-ish": the correction must not slide the feet
# the corrective solve's null-space pull toward the constant-velocity prediction: the
# redundant DoFs keep their motion instead of whipping (least acceleration)
REFERENCE_GAIN = 0.3
COM_WEIGHT = 3.0  # below the pins: an unreachable COM target must not pull the feet
# the dragged targets' tracker in the corrective solve: critically damped at this rate (1/s)
# with the acceleration bounded (m/s²) — an arm whipped harder moves the ZMP off the feet
TRACK_OMEGA = 10.0
TRACK_ACCEL = 4.0
# a DoF dragged by its gizmo (the root's arrows, a joint's rings) follows the gizmo's value
# through the same tracker, its acceleration bounded in m/s² (the root's translations) or
# rad/s² (rotations), and is held at the tracked value in both solves of the frame
DOF_ACCEL_LINEAR = TRACK_ACCEL
DOF_ACCEL_ANGULAR = 12.0
# after the release the DoF goes on tracking until it is this close to the gizmo's value
# and this slow per frame (m or rad)
DOF_REACHED = 1e-4
# a pin the held reference solve misses by more than this (m) frees the dragged DoF
PIN_SLACK = 2e-4
# a correction with the dragged DoF held that misses its COM target by more than this (m)
# stops the DoF where it is (the balance limit)
COM_SLACK = 3e-3


@dataclass(frozen=True, eq=False)
class PhysicsData(ModeData):
    """Physics mode's undoable data (none beyond being in the mode)."""

    name: ClassVar[str] = NAME


@dataclass
class PhysicsUI(ModeUI):
    """Physics mode's session (view state, not undone): the filter, the corrective solver, the
    last step's numbers and the timeline's infeasible-frame marks.

    Attributes:
        options: the filter's :class:`BalanceOptions`.
        last: the last :class:`BalanceStep` (None before the first).
        corrected / infeasible / steps: frames the filter corrected / whose output still
            failed the check / filtered frames, since entering.
        filter_ms: the last frame's filter time (check + correction), ms.
        frame_time: the smoothed frame time the filter (and the overlay) differentiate with, s.
        marks_clip, marks: ``(clip, mu, contact height)`` the marks were computed for and
            the clip's ``(T,)`` infeasible flags.
        dof_goal: ``(dof, value)`` a gizmo drag asked for (kept after the release until the
            tracked DoF reaches it), or None.
        solvers: the prepared solves by purpose (``"com"``: the correction, ``"held"``: the
            reference with a gizmo's DoF held), each ``(key, solver)``.
    """

    options: BalanceOptions = field(default_factory=BalanceOptions)
    filter: BalanceFilter | None = None
    last: BalanceStep | None = None
    corrected: int = 0
    infeasible: int = 0
    steps: int = 0
    filter_ms: float = 0.0
    frame_time: float | None = None
    error: str = ""
    marks_clip: tuple[Clip, float, float] | None = None
    marks: np.ndarray | None = None
    dof_goal: tuple[int, float] | None = None
    solvers: dict = field(default_factory=dict)


def session(state: AppState) -> PhysicsUI:
    ui = state.mode_ui.get(NAME)
    if not isinstance(ui, PhysicsUI):
        ui = PhysicsUI()
        state.mode_ui[NAME] = ui
    return ui


def _held_gains(skel, opts: dict, k: int) -> np.ndarray:
    """FIK's per-DoF gains ``(n_dof,)`` of ``opts`` (``dof_gains``: None, ``"regions"``, an
    array or a mapping) with DoF ``k`` zeroed: the solve cannot move it."""
    g = opts.get("dof_gains")
    if g is None:
        v = np.ones(skel.n_dof)
    elif isinstance(g, str):
        v = np.array(posing_gains(skel))  # "regions" (the solver validated the name)
    else:
        v = np.array(per_dof(skel, "dof_gains", g, 1.0, positive=True, allow_zero=True)[0])
    v[k] = 0.0
    return v


def _prepared(state: AppState, ui: PhysicsUI, purpose: str, start: np.ndarray,
              held: int | None, com: np.ndarray | None) -> PreparedFIK | PreparedSolver:
    """The physics mode's own prepared solve of the active effectors (pins weighted
    ``PIN_WEIGHT``; with ``com``: plus the COM task, weight ``COM_WEIGHT``), the app's solver
    and options with the posture pull per call; DoF ``held`` (FIK only) cannot move. Rebuilt
    when the effectors, the solver settings or the held DoF change."""
    doc = state.doc
    effs = [e for e in doc.effectors if e.active]
    key = (id(doc.skeleton), doc.solver.name, id(doc.solver), held,
           tuple((e.site, e.oriented, e.weight, e.mode) for e in effs),
           id(state.drag) if held is not None else None)
    got = ui.solvers.get(purpose)
    if got is not None and got[0] == key:
        return got[1]
    targets = {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
               for e in effs}
    weights = {e.site: e.weight * (PIN_WEIGHT if e.mode == PINNED else 1.0) for e in effs}
    opts = {k: v for k, v in solver_options(doc.solver).items()
            if k not in ("reference", "reference_gain")}
    opts["tol_position"] = min(float(opts.get("tol_position", 1e-4)), 1e-5)
    if doc.solver.name in NATURAL_POSING_SOLVERS:
        opts["reference_gain"] = REFERENCE_GAIN
        if held is not None:
            opts["dof_gains"] = _held_gains(doc.skeleton, opts, held)
    pinned = ()
    if com is not None:
        weights["com"] = COM_WEIGHT
        opts["com"] = tuple(com)
    if held is not None:
        # the dragged DoF held, the COM target (or the DoF itself) would pull weighted pins
        # off and pivot the soles about them (their contact points 2-7 cm a frame): the pins
        # are hard here and hold their orientation at the start (FIK's pinned rows)
        pinned = tuple(e.site for e in effs if e.mode == PINNED)
        targets = {s: t for s, t in targets.items() if s not in pinned}
        weights = {s: w for s, w in weights.items() if s not in pinned}
    ui.solvers.pop(purpose, None)
    if pinned:  # held where the last output has them (on their pins): pinned rows hold q0's
        start = ui.filter.history[-1]
    solver = prepare_ik(doc.skeleton, start, targets, doc.solver.name, weights=weights,
                        pinned=pinned, pin_rotation=bool(pinned), **opts)
    ui.solvers[purpose] = (key, solver)
    return solver


def _holds(state: AppState, held: int | None) -> bool:
    """A gizmo's DoF can be held (the FIK solvers' per-DoF gains; other solvers move it)."""
    return held is not None and state.doc.solver.name in NATURAL_POSING_SOLVERS


def _targets(state: AppState) -> dict:
    return {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
            for e in state.doc.effectors if e.active}


def _held_reference(state: AppState, ui: PhysicsUI, k: int, q: np.ndarray) -> np.ndarray:
    """(a) The kinematic reference of a gizmo-drag frame: the pins and targets solved from
    ``q`` (the last output with DoF ``k`` at its tracked value) with DoF ``k`` held — the
    pose mode's IK would give the pinned feet the dragged DoF back (the legs are what bends).
    Where the legs cannot reach the pins with the DoF there (a pelvis dragged past the legs'
    reach), the reference is the last output: the DoF goes only as far as the pins allow (a
    pin is hard, as in the pose mode)."""
    if not any(e.active for e in state.doc.effectors):
        return q
    targets = _targets(state)
    iters = max(int(state.doc.solver.iterations), 50)
    pins = {e.site for e in state.doc.effectors if e.mode == PINNED}
    res = _prepared(state, ui, "held", q, k, None).solve(
        q, targets={s: t for s, t in targets.items() if s not in pins} or None,
        max_iterations=iters, reference=q)
    skel = state.skeleton
    pins = [(skel.site_index(e.site), e.position) for e in state.doc.effectors
            if e.mode == PINNED]
    if pins and max(float(np.linalg.norm(res.site_positions[i] - p)) for i, p in pins) \
            > PIN_SLACK:
        # the DoF stops where it was, and the gizmo's value is taken back to there (else
        # the tracker pushes again next frame: a stop-go whose accelerations fail the check)
        last = np.array(ui.filter.history[-1], dtype=float)
        _stop_goal(state, ui, k, float(last[k]))
        return last
    return np.array(res.q, dtype=float)


def _stop_goal(state: AppState, ui: PhysicsUI, k: int, value: float) -> None:
    """Take the gizmo's value of DoF ``k`` back to ``value`` (the DoF can go no further: the
    pins or the balance); the drag moves it again from there when the mouse moves on."""
    ui.dof_goal = (k, value)
    if state.drag is not None:
        state.drag.goal = value


def _solve_com(state: AppState, ui: PhysicsUI, held: tuple[int, float] | None = None):
    """``solve(c, start) -> q``: the active effectors (pins weighted ``PIN_WEIGHT``) plus the COM
    task at ``c``, the app's solver and options with the posture pull aimed at ``start`` (the
    constant-velocity prediction) instead of the scene's posture (a null-space term that
    switches on when the tasks converge: a jerk the COM task cannot see). With ``held = (k,
    value)`` (a gizmo drag, FIK) DoF ``k`` is held at ``value``: the correction moves the rest
    of the body, not the DoF the user drags."""
    doc = state.doc
    effs = [e for e in doc.effectors if e.active]
    targets = _targets(state)
    dragged = [(e.site, doc.skeleton.site_index(e.site)) for e in effs if e.mode != PINNED]
    hist = ui.filter.history if ui.filter is not None else ()
    h = ui.filter.frame_time(ui.frame_time) if ui.filter and ui.frame_time else 1.0 / 60.0
    tracked = dict(targets)
    if dragged and len(hist) == 2:
        # the dragged targets of the corrective solve follow the user's through a critically
        # damped tracker with bounded acceleration (track_target), from where the last two
        # output poses had the site: a jumping mouse must not whip the arm
        fk1, fk2 = (forward_kinematics(doc.skeleton, q).site_positions for q in hist[::-1])
        for site, i in dragged:
            t = targets[site]
            pos = np.asarray(t[0] if isinstance(t, tuple) else t, float)
            p = track_target(fk1[i], fk2[i], pos, h, TRACK_OMEGA, TRACK_ACCEL)
            tracked[site] = (p, t[1]) if isinstance(t, tuple) else p
    k = held[0] if _holds(state, held[0] if held else None) else None
    pins = {e.site for e in effs if e.mode == PINNED}

    def solve(c: np.ndarray, start: np.ndarray) -> np.ndarray:
        if k is not None:
            start = np.array(start, dtype=float)
            start[k] = held[1]
        solver = _prepared(state, ui, "com", start, k, c)
        ref = {"reference": start} if doc.solver.name in NATURAL_POSING_SOLVERS else {}
        iters = max(int(doc.solver.iterations), 50)
        if k is None:
            return solver.solve(start, targets={**tracked, "com": c}, max_iterations=iters,
                                **ref).q
        # the pins are the solver's own (hard, held at the press)
        tr = {s: t for s, t in tracked.items() if s not in pins}
        q = np.asarray(solver.solve(start, targets={**tr, "com": c}, max_iterations=iters,
                                    **ref).q, dtype=float)
        if np.linalg.norm(com(doc.skeleton, q) - c) > COM_SLACK:
            # the body cannot balance with the DoF there (a pelvis past the feet, the trunk
            # leaned back as far as it goes): the gizmo's value is taken back to where the
            # DoF is, so the tracker brakes it (bounded acceleration) instead of pushing on
            _stop_goal(state, ui, k, float(hist[-1][k]))
        return q

    return solve


def _gizmo_goal(state: AppState, ui: PhysicsUI) -> tuple[int, float] | None:
    """``(dof, value)`` the gizmo asks for: during a gizmo drag (the root's arrows, a joint's
    rings) its last value, after the release the same until the DoF reaches it (cleared by
    :meth:`PhysicsMode.update`). During the drag the pinned effectors stay where they were at
    the press (the pose mode's DoF edit carries the effectors the DoF moves along, which
    would slide the feet with the pelvis): the DoF moves, the feet stay, the legs bend."""
    d = state.drag
    if d is not None and d.kind in ("root", "dof"):
        pins = {e.site: e for e in d.start_doc.effectors if e.mode == PINNED}
        effs = tuple(pins[e.site] if e.mode == PINNED and e.site in pins else e
                     for e in state.doc.effectors)
        if any(a is not b for a, b in zip(effs, state.doc.effectors, strict=True)):
            state.doc = state.doc.replace(effectors=effs)
        if d.goal is not None:
            ui.dof_goal = (int(d.axis), float(d.goal))
    return ui.dof_goal


class PhysicsMode(Mode):
    """Seed D's physics mode (``Document.mode`` is :class:`PhysicsData`)."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Physics"

    def update(self, state: AppState, dt: float) -> None:
        ui = session(state)
        if ui.filter is None or ui.filter.skeleton is not state.skeleton:
            ui.filter, ui.error = None, ""
            ui.solvers.clear()
            try:
                ui.filter = BalanceFilter(state.skeleton, ui.options)
            except ContactGeometryError as e:
                ui.error = f"Physics mode needs contact geometry: {e}"
                state.error(ui.error)
        if ui.error:  # no filter (no contact geometry, a solver error): the pose mode's frame
            if state.playing:
                timeline.advance(state, dt)
            step_ik(state)
            return
        filt = ui.filter
        goal = _gizmo_goal(state, ui)
        before = state.doc.q
        playing = state.playing
        d = state.drag
        if playing:
            ui.dof_goal = goal = None
            timeline.advance(state, dt)
        elif goal is not None and d is not None and len(filt.history) == 2:
            pass  # a gizmo drag: its DoF is tracked from the last output, the pose did not jump
        elif not filt.history or not np.array_equal(before, filt.history[-1]):
            # the pose jumped (undo, a slider, a clip frame, Esc): start at rest
            ui.dof_goal = goal = None
            filt.reset(before)
        # Velocities and accelerations are backward differences over frames: with the window's
        # irregular frame times (llvmpipe: 15-40 ms) one h for both intervals turns a jitter of
        # dt into a jump of the implied velocity and capture point. The filter and the overlay
        # both use a smoothed frame time instead (a time constant of ~10 frames).
        ui.frame_time = dt if ui.frame_time is None else 0.9 * ui.frame_time + 0.1 * dt
        held = None
        if goal is not None:
            # (a) with a gizmo drag: its DoF follows the gizmo through the tracker (as a
            # dragged handle follows the mouse), the rest solved with that DoF held
            k, value = goal
            held = (k, self._track_dof(state, ui, k, value))
            q0 = np.array(filt.history[-1], dtype=float)
            q0[k] = held[1]
            try:
                q_ref = _held_reference(state, ui, k, q0) if _holds(state, k) else None
            except USER_ERRORS as e:
                ui.error = f"Physics mode stopped: {describe(e)}"
                state.error(ui.error)
                return
            if q_ref is not None:
                held = (k, float(q_ref[k]))  # where the pins let it go
            state.doc = state.doc.with_pose(q0 if q_ref is None else q_ref)
            state.ik.solved_version = -1
            if q_ref is None:  # a solver without per-DoF gains: the pose mode's IK
                step_ik(state)
        else:
            step_ik(state)  # (a) the kinematic reference
        q_ref = np.array(state.doc.q, dtype=float)
        h = filt.history
        if len(h) >= 2 and np.array_equal(q_ref, h[-1]) and np.array_equal(h[-1], h[-2]):
            self._goal_reached(state, ui)
            return  # at rest and nothing moved: nothing to check
        physics_of(state).frame_time = ui.frame_time
        t0 = time.perf_counter()
        try:  # (b) check, (c) correct
            snap = filt.snapshot()
            st = filt.step(q_ref, ui.frame_time, _solve_com(state, ui, held))
            if held is not None and not st.feasible:
                # the held DoF is the user's wish, feasibility is the mode's promise: at the
                # balance limit (met a frame before the solve's COM slack stops the gizmo) the
                # frame is corrected again with the DoF free, and the gizmo stops there
                filt.restore(snap)
                st = filt.step(q_ref, ui.frame_time, _solve_com(state, ui, None))
                _stop_goal(state, ui, held[0], float(st.q[held[0]]))
        except USER_ERRORS as e:
            ui.error = f"Physics mode stopped: {describe(e)}"
            state.error(ui.error)
            return
        ui.filter_ms = 1e3 * (time.perf_counter() - t0)
        ui.last = st
        ui.steps += 1
        ui.corrected += int(st.corrected)
        ui.infeasible += int(not st.feasible)
        if st.corrected:
            state.doc = state.doc.with_pose(st.q)
            state.ik.solved_version = -1  # the next frame's IK starts from the corrected pose
        if (st.corrected or held is not None) and state.drag is None and not playing:
            state.history.amend(state.doc)  # the settling belongs to the edit
        self._goal_reached(state, ui)

    @staticmethod
    def _track_dof(state: AppState, ui: PhysicsUI, k: int, value: float) -> float:
        """This frame's value of gizmo DoF ``k``: :func:`track_target` of ``value`` from the
        last two outputs (critically damped, bounded acceleration), within the limits."""
        skel = state.skeleton
        q1, q2 = ui.filter.history[-1], ui.filter.history[-2]
        h = ui.filter.frame_time(ui.frame_time)
        accel = DOF_ACCEL_LINEAR if int(skel.dof_type[k]) == 1 else DOF_ACCEL_ANGULAR
        r = track_target(q1[k:k + 1], q2[k:k + 1], np.array([value]), h, TRACK_OMEGA, accel)
        return float(np.clip(r[0], skel.lower[k], skel.upper[k]))

    @staticmethod
    def _goal_reached(state: AppState, ui: PhysicsUI) -> None:
        """After the release, stop tracking the gizmo's value once the DoF is on it and still."""
        if ui.dof_goal is None or state.drag is not None:
            return
        k, value = ui.dof_goal
        h = ui.filter.history
        skel = state.skeleton
        goal = float(np.clip(value, skel.lower[k], skel.upper[k]))
        if len(h) == 2 and abs(h[-1][k] - goal) <= DOF_REACHED \
                and abs(h[-1][k] - h[-2][k]) <= DOF_REACHED:
            ui.dof_goal = None

    def on_key_press(self, state: AppState, symbol: int, modifiers: int) -> bool:
        return timeline_keys(state, symbol, modifiers)


def enter(state: AppState) -> None:
    """Enter physics mode (an undo step); the physics overlay is switched on."""
    if isinstance(state.doc.mode, PhysicsData):
        return
    ui = session(state)
    ui.error = ""
    ui.filter = None
    ui.corrected = ui.infeasible = ui.steps = 0
    ui.frame_time = None
    ui.dof_goal = None
    ui.show = True
    physics_of(state).show = True
    set_doc(state, state.doc.replace(mode=PhysicsData()))
    commit(state, "physics mode")
    state.info("Physics mode: drags and playback stay dynamically feasible (seed D)")


def leave(state: AppState) -> None:
    if not isinstance(state.doc.mode, PhysicsData):
        return
    set_doc(state, state.doc.replace(mode=None))
    commit(state, "leave physics mode")


def infeasible_frames(state: AppState) -> np.ndarray | None:
    """``(T,)`` bool: frames of the current clip that fail seed D's checks as ``animik
    feasibility`` checks a clip (:func:`animik.dynamics.check_clip`: Savitzky-Golay derivatives,
    contacts detected, floor estimated, supports off the floor inferred as ``--supports auto``
    infers them), so a clip ``animik filter`` wrote shows no mark; cached per clip. None
    without a clip or contact geometry, or for a clip too short."""
    clip = state.doc.current_clip
    if clip is None or clip.is_empty:
        return None
    ui = session(state)
    pv = physics_of(state)
    key = (clip, pv.mu)
    if ui.marks_clip == key:
        return ui.marks
    ui.marks_clip = key
    ui.marks = None
    pv.supports = None
    try:
        m = clip.to_motion()
        # the check of `animik feasibility` and `animik filter` (--supports auto: a seat,
        # holds and pedals where the body is held still with no foot near the floor; a clip
        # Make feasible wrote: the supports it was corrected with, as `animik feasibility`
        # reads the OUT.supports.json `animik filter` writes)
        sup = clip_supports(clip, m, pv.mu)
        res = check_clip(m, mu=pv.mu, supports=sup)
        ui.marks = ~res.feasible
        pv.supports, pv.supports_fps = sup, float(m.fps)  # the overlay marks them
    except (ContactGeometryError, *USER_ERRORS):
        ui.marks = None
    return ui.marks


def _feasible_work(state: AppState):
    """The work of Make feasible for the current clip, run on any thread: returns
    ``work(progress) -> (source clip, new clip, (feasible, input feasible, frames), seconds)``,
    or None after reporting why there is nothing to do. The document is only read here (at the
    call), never written. :func:`make_feasible_async` runs the same job
    (:func:`animik.anim.feasible.feasible_clip`) in a worker process instead."""
    job = _feasible_job(state)
    if job is None:
        return None
    clip, args, name = job

    def work(progress=None):
        return _assembled(clip, name, feasible_clip(*args, progress=progress))

    return work


def _feasible_job(state: AppState):
    """``(clip, args of feasible_clip, new clip's name)`` for the current clip, or None after
    reporting why there is nothing to do."""
    clip = state.doc.current_clip
    if clip is None or clip.is_empty:
        state.error("Make feasible: no clip with keys")
        return None
    args = (clip, session(state).options, physics_of(state).mu)
    return clip, args, unique_name(state, f"{clip.name} feasible")


def _assembled(clip: Clip, name: str, res: FeasibleClipResult):
    """The worker's plain result as ``(source, new clip, counts, seconds)``; the new clip is
    built here, on the caller's skeleton."""
    return (clip, res.clip(clip, name), (res.feasible, res.input_feasible, res.frames),
            res.seconds)


def _add_feasible(state: AppState, out) -> bool:
    """On the UI thread: insert the new clip after its source (the user's clip is kept) as one
    undo step; dropped with a message if the document's rig changed meanwhile."""
    clip, new, counts, secs = out
    doc = state.doc
    if new.skeleton is not doc.skeleton:
        state.error("Make feasible: dropped, the document's rig changed meanwhile")
        return False
    idx = next((i for i, c in enumerate(doc.clips) if c is clip), len(doc.clips) - 1)
    new = new.replace(name=unique_name(state, new.name))
    clips = list(doc.clips)
    clips.insert(idx + 1, new)
    set_doc(state, doc.replace(clips=tuple(clips), clip=idx + 1))
    commit(state, f"make {clip.name} feasible")
    ok, before, T = counts
    state.info(f"Clip {new.name!r}: {ok}/{T} frames feasible (input {before}), {secs:.1f} s")
    return True


def make_feasible(state: AppState) -> bool:
    """Run the current clip through seed D's filter on this thread and add the result as a new
    clip (the user's clip is kept); an undo step. Scripts and tests; the app's button runs
    :func:`make_feasible_async`."""
    work = _feasible_work(state)
    if work is None:
        return False
    try:
        out = work()
    except (ContactGeometryError, *USER_ERRORS) as e:
        state.error(f"Make feasible: {describe(e)}")
        return False
    return _add_feasible(state, out)


def make_feasible_async(state: AppState):
    """Make feasible as a background task (:mod:`animik.app.tasks`): the filter runs in a
    worker **process** (:func:`animik.anim.feasible.feasible_clip`; a thread held the
    interpreter and slowed the window's drawing), its progress shown in the task bar, Cancel
    ending the process at once; the new clip is added on the UI thread when it is done, an
    error in the worker shown as a message. Returns the task, or None (nothing to do, or
    another task is running)."""
    if busy(state):
        return None
    job = _feasible_job(state)
    if job is None:
        return None
    clip, args, name = job
    return state.editing.tasks.start_process(
        f"Make {clip.name} feasible", feasible_clip, args,
        lambda res: _add_feasible(state, _assembled(clip, name, res)),
        lambda e: state.error(f"Make feasible: {describe(e)}"))


__all__ = ["SUPPORTS_META", "PhysicsData", "PhysicsMode", "PhysicsUI", "clip_supports", "enter",
           "infeasible_frames", "leave",
           "make_feasible", "make_feasible_async", "session"]
