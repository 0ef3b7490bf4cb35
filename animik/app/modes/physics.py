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
from ...dynamics.clip import check_clip
from ...dynamics.contacts import ContactGeometryError
from ...dynamics.correct import plant_and_correct
from ...dynamics.filter import FilterOptions
from ...dynamics.interactive import BalanceFilter, BalanceOptions, BalanceStep, track_target
from ...dynamics.offfloor import resolve_supports
from ...ik import prepare_ik
from ...ik.fik import PreparedFIK
from ...ik.prepared import PreparedSolver
from ...kinematics import forward_kinematics
from ...motion import Motion
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
PIN_WEIGHT = 10.0  # pins "hard-ish": the correction must not slide the feet
# the corrective solve's null-space pull toward the constant-velocity prediction: the
# redundant DoFs keep their motion instead of whipping (least acceleration)
REFERENCE_GAIN = 0.3
COM_WEIGHT = 3.0  # below the pins: an unreachable COM target must not pull the feet
# the dragged targets' tracker in the corrective solve: critically damped at this rate (1/s)
# with the acceleration bounded (m/s²) — an arm whipped harder moves the ZMP off the feet
TRACK_OMEGA = 10.0
TRACK_ACCEL = 4.0


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
    """

    options: BalanceOptions = field(default_factory=BalanceOptions)
    filter: BalanceFilter | None = None
    solver: PreparedFIK | PreparedSolver | None = None
    solver_key: tuple = ()
    last: BalanceStep | None = None
    corrected: int = 0
    infeasible: int = 0
    steps: int = 0
    filter_ms: float = 0.0
    frame_time: float | None = None
    error: str = ""
    marks_clip: tuple[Clip, float, float] | None = None
    marks: np.ndarray | None = None


def session(state: AppState) -> PhysicsUI:
    ui = state.mode_ui.get(NAME)
    if not isinstance(ui, PhysicsUI):
        ui = PhysicsUI()
        state.mode_ui[NAME] = ui
    return ui


def _solve_com(state: AppState, ui: PhysicsUI):
    """``solve(c, start) -> q``: the active effectors (pins weighted ``PIN_WEIGHT``) plus the COM
    task at ``c``, the app's solver and options with the posture pull aimed at ``start`` (the
    constant-velocity prediction) instead of the scene's posture (a null-space term that
    switches on when the tasks converge: a jerk the COM task cannot see)."""
    doc = state.doc
    effs = [e for e in doc.effectors if e.active]
    targets = {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
               for e in effs}
    weights = {e.site: e.weight * (PIN_WEIGHT if e.mode == PINNED else 1.0) for e in effs}
    key = (id(doc.skeleton), doc.solver.name, id(doc.solver),
           tuple((e.site, e.oriented, e.weight, e.mode) for e in effs))

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

    def solve(c: np.ndarray, start: np.ndarray) -> np.ndarray:
        if ui.solver is None or ui.solver_key != key:
            opts = {k: v for k, v in solver_options(doc.solver).items()
                    if k not in ("reference", "reference_gain")}
            opts["tol_position"] = min(float(opts.get("tol_position", 1e-4)), 1e-5)
            if doc.solver.name in ("fik", "fik_fixed"):
                opts["reference_gain"] = REFERENCE_GAIN
            ui.solver = prepare_ik(doc.skeleton, start, targets, doc.solver.name,
                                   weights={**weights, "com": COM_WEIGHT}, com=tuple(c), **opts)
            ui.solver_key = key
        ref = {"reference": start} if doc.solver.name in ("fik", "fik_fixed") else {}
        return ui.solver.solve(start, targets={**tracked, "com": c},
                               max_iterations=max(int(doc.solver.iterations), 50), **ref).q

    return solve


def _hold_pins_on_root_drag(state: AppState) -> bool:
    """While the pelvis is dragged by its gizmo arrows, keep the pinned effectors where they
    were at the press (the pose mode's DoF edit carries every effector the root moves along,
    which would slide the feet with the pelvis): the pelvis moves, the feet stay, the IK bends
    the legs and the filter keeps it feasible. True during such a drag."""
    d = state.drag
    if d is None or d.kind != "root":
        return False
    pins = {e.site: e for e in d.start_doc.effectors if e.mode == PINNED}
    effs = tuple(pins[e.site] if e.mode == PINNED and e.site in pins else e
                 for e in state.doc.effectors)
    if any(a is not b for a, b in zip(effs, state.doc.effectors, strict=True)):
        state.doc = state.doc.replace(effectors=effs)
    return True


class PhysicsMode(Mode):
    """Seed D's physics mode (``Document.mode`` is :class:`PhysicsData`)."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Physics"

    def update(self, state: AppState, dt: float) -> None:
        ui = session(state)
        if ui.filter is None or ui.filter.skeleton is not state.skeleton:
            ui.filter, ui.solver, ui.error = None, None, ""
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
        root_drag = _hold_pins_on_root_drag(state)
        before = state.doc.q
        playing = state.playing
        if playing:
            timeline.advance(state, dt)
        elif root_drag and filt.history:
            pass  # the pelvis dragged by its arrows: the reference moves, the pose did not jump
        elif not filt.history or not np.array_equal(before, filt.history[-1]):
            filt.reset(before)  # the pose jumped (undo, a slider, a clip frame): start at rest
        step_ik(state)  # (a) the kinematic reference
        q_ref = np.array(state.doc.q, dtype=float)
        h = filt.history
        if len(h) >= 2 and np.array_equal(q_ref, h[-1]) and np.array_equal(h[-1], h[-2]):
            return  # at rest and nothing moved: nothing to check
        # Velocities and accelerations are backward differences over frames: with the window's
        # irregular frame times (llvmpipe: 15-40 ms) one h for both intervals turns a jitter of
        # dt into a jump of the implied velocity and capture point. The filter and the overlay
        # both use a smoothed frame time instead (a time constant of ~10 frames).
        ui.frame_time = dt if ui.frame_time is None else 0.9 * ui.frame_time + 0.1 * dt
        physics_of(state).frame_time = ui.frame_time
        t0 = time.perf_counter()
        try:
            st = filt.step(q_ref, ui.frame_time, _solve_com(state, ui))  # (b) check, (c) correct
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
            if state.drag is None and not playing:
                state.history.amend(state.doc)

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
        # holds and pedals where the body is held still with no foot near the floor)
        sup = resolve_supports("auto", m, mu=pv.mu)
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
    call), never written."""
    from ...anim import clip_from_poses
    from ...anim.feasible import feasible_clip_poses

    clip = state.doc.current_clip
    if clip is None or clip.is_empty:
        state.error("Make feasible: no clip with keys")
        return None
    options = session(state).options
    mu = physics_of(state).mu
    name = unique_name(state, f"{clip.name} feasible")

    def work(progress=None):
        m = clip.to_motion()
        skel, fps = m.skeleton, clip.fps
        t0 = time.perf_counter()
        say = progress or (lambda *_: None)
        # 1. the physics mode's law over the clip: the feet held, the COM moved (keyed poses)
        res = feasible_clip_poses(skel, m.q, fps, options,
                                  progress=lambda done, total: say(0.6 * done / total))
        q, chk = res.q, check_clip(Motion(skel, res.q, fps), mu=mu)
        # 2. judged as `animik feasibility` judges a clip; what still fails goes through
        # `animik filter --plant`'s method A, from that result and from the input (walks,
        # whose feet the law above cannot hold), the best kept
        opts = FilterOptions(mu=mu)
        for k, start in enumerate((Motion(skel, q, fps), m)):
            if chk.feasible.all():
                break
            say(0.6 + 0.2 * k, "method A")
            r = plant_and_correct(start, opts)[0]
            if (~r.check.feasible).sum() < (~chk.feasible).sum():
                q, chk = r.motion.q, r.check
        before = check_clip(m, mu=mu).feasible
        say(1.0)
        new = clip_from_poses(skel, np.arange(len(q)) / fps, q, name=name, fps=fps,
                              interpolation="linear")
        counts = (int(chk.feasible.sum()), int(before.sum()), len(q))
        return clip, new.replace(fixed_length=clip.fixed_length), counts, \
            time.perf_counter() - t0

    return work


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
    worker thread with a progress bar and Cancel while the window keeps drawing; the new clip
    is added on the UI thread when it is done. Returns the task, or None (nothing to do, or
    another task is running)."""
    if busy(state):
        return None
    work = _feasible_work(state)
    if work is None:
        return None
    clip = state.doc.current_clip
    return state.editing.tasks.start(f"Make {clip.name} feasible", work,
                                     lambda out: _add_feasible(state, out),
                                     lambda e: state.error(f"Make feasible: {describe(e)}"))


__all__ = ["PhysicsData", "PhysicsMode", "PhysicsUI", "enter", "infeasible_frames", "leave",
           "make_feasible", "make_feasible_async", "session"]
