"""Drive mode: the user drives ``wheeled20``'s base; seed E's balance MPC keeps it upright.

While ``Document.mode`` is a :class:`DriveData` (:func:`enter` / :func:`leave`, each one undo
step; Tools › Drive, or a scene whose name contains "drive", see :func:`wants_drive`),
:class:`DriveMode` is the app's mode and its update (:func:`update`) runs each frame:

* the velocity reference comes from the keys held — arrows / WASD: forward/back and left/right
  in the robot's frame, Shift: twice the speed, Q / E: yaw rate — or from a goal on the floor
  (Ctrl + left click or drag on the floor sets it; the reference then points at it, slowing
  down on arrival); a key press cancels the goal;
* the MPC (:class:`animik.balance.BalanceMPC`, daqp, warm started) runs once per period ``T``
  (100 ms) on the measured state of the plant; between two cycles the state shown is the exact
  constant-jerk interpolation of the current period, so the motion is smooth at any frame rate;
* what plays the robot: the two-mass plant (exact integration of the commanded jerks) with the
  full rig posed from it (:class:`animik.balance.full_body.FullBody`): the base DoFs from
  ``b`` and the yaw, the leg's knee pitch and hip roll so that the true upper-body CoM of the
  rig (from its link masses, arms as the user posed them) sits over ``c`` — the lean the MPC
  asked for. The CoP drawn and reported is the full body's, from inverse dynamics
  (:func:`animik.dynamics.zmp`) along the plant's motion; the model's is kept for comparison;
* the user's IK targets (hands, head) ride with the base, and the app's IK still runs on them,
  so the arms and head can be dragged while it drives (the MPC owns the base and leg DoFs);
* ``b``, ``c``, the CoP and the support octagon are drawn on the floor (:func:`decorate_view`),
  ζ and the CoP margin go to the Drive panel's live plot;
* Record keys the pose every period into a new clip ("drive", "drive 2", ...), exported like any
  other clip (File › Export clip…).

Numpy only (no GL); the panel is :mod:`animik.app.ui.drive_panel`. The session (the MPC, the
plant's state, the live numbers) is view state: the undoable :class:`DriveData` holds it by
identity, as retarget mode's ``RetargetLink`` holds its session, so undo and redo switch in and
out of drive mode without restarting the drive.
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...anim import add_key, new_clip
from ...balance import BalanceMPC, RobotModel, Weights
from ...balance.cop import (
    cop,
    octagon_apothem,
    octagon_normals,
    octagon_vertices,
    support_margin,
    zeta,
)
from ...balance.full_body import BASE_DOFS, LEAN_DOFS, FullBody
from ...balance.horizon import advance
from ...errors import AnimikError
from ...skeleton import Skeleton
from .. import keys as K
from ..document import ModeData
from ..edits import cancel_drag, commit, set_doc
from ..instances import ViewGeometry, cylinder_instances, sphere_instances
from ..solve import step_ik
from ..state import PINNED, AppState
from ..timeline.marks import unique_name
from .base import Mode

NAME = "drive"  # the mode's registry name

HISTORY = 300  # MPC cycles kept for the live plot (30 s)
DRIVE_KEYS = {K.UP_ARROW, K.DOWN_ARROW, K.LEFT_ARROW, K.RIGHT_ARROW, K.W, K.A, K.S, K.D, K.Q, K.E}
MAX_YAW_RATE = 1.0  # rad/s
GOAL_TOLERANCE = 0.03  # m


@dataclass
class DriveSession:
    """The drive mode's state (view state: not part of the document, not undone)."""

    model: RobotModel
    mpc: BalanceMPC
    full_body: FullBody
    body: np.ndarray  # (2, 3) c at the start of the current period
    base: np.ndarray  # (2, 3) b at the start of the current period
    body_jerk: np.ndarray = field(default_factory=lambda: np.zeros(2))
    base_jerk: np.ndarray = field(default_factory=lambda: np.zeros(2))
    yaw: float = 0.0
    yaw_rate: float = 0.0
    phase: float = 0.0  # s since the current period started
    clock: float = 0.0  # s driven
    speed: float = 0.5  # m/s of a held key (Shift: x2), at most the rig's limit
    goal: np.ndarray | None = None
    pos_ref: np.ndarray | None = None  # (2,) integrated reference position
    full_cop: np.ndarray | None = None  # (2,) the full body's CoP at the pose shown
    last_status: str = "optimal"
    last_ms: float = 0.0
    infeasible_cycles: int = 0
    cycles: int = 0
    t_hist: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY))
    zeta_hist: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY))
    margin_hist: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY))
    recording: bool = False
    record_q: list[np.ndarray | None] = field(default_factory=list)
    record_t: list[float] = field(default_factory=list)
    keys_override: set[int] | None = None  # tests: keys held without a keyboard
    follow: bool = True  # the camera follows the base

    # ----------------------------------------------------------------- current values
    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """``(body, base)`` (2, 3) now: the exact constant-jerk interpolation of the period."""
        return (advance(self.body, self.body_jerk, self.phase),
                advance(self.base, self.base_jerk, self.phase))

    def model_cop(self) -> np.ndarray:
        """The two-mass model's CoP (2,) now."""
        body, base = self.current()
        return cop(self.model, base[:, 0], base[:, 2], body[:, 0], body[:, 2])

    def cop(self) -> np.ndarray:
        """The CoP (2,) now: the full body's at the pose shown (the model's before the first
        pose)."""
        return self.model_cop() if self.full_cop is None else self.full_cop


@dataclass(frozen=True, eq=False)
class DriveData(ModeData):
    """Drive mode's undoable data (``Document.mode``): the session, held by identity.

    Attributes:
        session: the drive (MPC, plant state, live numbers; view state, not undone).
    """

    name: ClassVar[str] = NAME
    session: DriveSession


def current(state: AppState) -> DriveSession | None:
    """The drive session when the document is in drive mode, else None."""
    data = state.doc.mode
    return data.session if isinstance(data, DriveData) else None


def balance_model(skeleton: Skeleton) -> RobotModel:
    """The rig's balance model (:class:`animik.balance.BalanceError` if it has no data)."""
    return RobotModel.from_rig(skeleton)


def can_drive(state: AppState) -> bool:
    meta = state.skeleton.meta
    return "support_radius" in meta and all(d in state.skeleton.dof_names for d in BASE_DOFS)


def wants_drive(state: AppState) -> bool:
    """A scene named ``... drive ...`` on a rig with balance data opens in drive mode."""
    return can_drive(state) and "drive" in (state.doc.name or "").lower()


def enter(state: AppState, weights: Weights | None = None) -> bool:
    """Start driving from the current pose (one undo step); False (with a message) if the rig
    cannot."""
    skel = state.skeleton
    try:
        model = balance_model(skel)
        if not all(d in skel.dof_names for d in BASE_DOFS + LEAN_DOFS):
            raise AnimikError(f"rig {skel.name!r} lacks the DoFs {BASE_DOFS + LEAN_DOFS} drive "
                              "mode poses")
        mpc = BalanceMPC(model, weights or Weights(velocity=100.0, position=1.0, robustness=10.0,
                                                   jerk=1e-4))
        full_body = FullBody(skel, state.doc.q)
    except AnimikError as e:
        state.error(f"Drive: {e}")
        return False
    q = state.doc.q
    ix = [skel.dof_names.index(d) for d in BASE_DOFS]
    start = np.array([q[ix[0]], q[ix[1]]])
    states = np.zeros((2, 3))
    states[:, 0] = start
    sess = DriveSession(model, mpc, full_body, states.copy(), states.copy(), yaw=float(q[ix[2]]))
    sess.pos_ref = start.copy()
    # the rig's upper-body CoM offset at the current lean: the MPC's c starts there
    off = full_body.upper_com(np.array(q))[:2] - start
    c = states.copy()
    c[:, 0] = start + off
    # start c over b (the MPC's resting state) unless the pose already leans within k_xy
    if np.all(np.abs(off) <= model.body_offset):
        sess.body = c
    doc = state.doc
    # Hold the base site with a 6-D pin (moved with the base every frame): the app's IK then
    # reaches for the hands and head with the arms and neck instead of the base DoFs the MPC owns.
    if "base" in skel.site_names:
        i = skel.site_index("base")
        fk = state.fk
        e = doc.effector("base").replace(mode=PINNED, position=fk.site_positions[i].copy(),
                                         rotation=fk.site_rotations[i].copy())
        doc = doc.with_effector(e)
    cancel_drag(state)
    state.playing = False  # the timeline's playback: the drive moves the pose
    set_doc(state, doc.replace(mode=DriveData(sess)))
    commit(state, "drive")
    state.info("Drive: arrows / WASD move, Q / E turn, Shift faster, Ctrl+click the floor for a "
               "goal")
    return True


def leave(state: AppState) -> bool:
    """Leave drive mode (one undo step; a recording in progress becomes its clip first). The
    rig keeps its pose where it stopped."""
    sess = current(state)
    if sess is None:
        return False
    if sess.recording:
        stop_recording(state)
    cancel_drag(state)
    set_doc(state, state.doc.replace(mode=None))
    state.ik.solver_state = None
    commit(state, "leave drive mode")
    state.info("Left drive mode")
    return True


# ====================================================================== per frame
def held(state: AppState) -> set[int]:
    sess = current(state)
    return sess.keys_override if sess.keys_override is not None else state.keys_down


def velocity_command(state: AppState) -> tuple[np.ndarray, float]:
    """World velocity (2,) m/s and yaw rate rad/s from the keys held or the goal."""
    sess = current(state)
    keys = held(state)
    fwd = float(K.UP_ARROW in keys or K.W in keys) - float(K.DOWN_ARROW in keys or K.S in keys)
    left = float(K.LEFT_ARROW in keys or K.A in keys) - float(K.RIGHT_ARROW in keys or K.D in keys)
    turn = float(K.Q in keys) - float(K.E in keys)
    fast = K.LSHIFT in keys or K.RSHIFT in keys
    speed = min(sess.speed * (2.0 if fast else 1.0), sess.model.max_speed)
    if fwd or left or turn:
        sess.goal = None
        d = np.array([fwd, left])
        n = np.linalg.norm(d)
        local = speed * d / n if n > 0 else np.zeros(2)
        cy, sy = math.cos(sess.yaw), math.sin(sess.yaw)
        return np.array([cy * local[0] - sy * local[1], sy * local[0] + cy * local[1]]), \
            turn * MAX_YAW_RATE
    if sess.goal is not None:
        _, base = sess.current()
        err = sess.goal - base[:, 0]
        dist = float(np.linalg.norm(err))
        if dist < GOAL_TOLERANCE:
            sess.goal = None
            return np.zeros(2), 0.0
        # slow down on arrival: v = min(speed, sqrt(2 a d)) with half the acceleration limit
        v = min(speed, math.sqrt(sess.model.max_acceleration * dist))
        return v * err / dist, 0.0
    return np.zeros(2), 0.0


def update(state: AppState, dt: float) -> None:
    """Advance the drive by ``dt`` seconds (MPC cycles as due), pose the rig, run the IK."""
    sess = current(state)
    if sess is None:
        return
    dt = float(min(max(dt, 0.0), 0.1))
    vel, yaw_rate = velocity_command(state)
    T = sess.mpc.horizon.period
    cycled = False
    if sess.cycles == 0 and sess.phase == 0.0:
        _cycle(sess, vel)
        cycled = True
    sess.phase += dt
    sess.clock += dt
    sess.yaw += yaw_rate * dt
    sess.yaw_rate = yaw_rate
    while sess.phase >= T - 1e-12:
        # end of the period: the plant state becomes the measurement of the next cycle
        sess.body = advance(sess.body, sess.body_jerk, T)
        sess.base = advance(sess.base, sess.base_jerk, T)
        sess.phase -= T
        _cycle(sess, vel)
        cycled = True
        if sess.recording:
            sess.record_t.append(sess.clock - sess.phase)
            sess.record_q.append(None)  # filled by the pose below (the last one of this frame)
    _pose(state)
    if sess.recording and sess.record_q and sess.record_q[-1] is None:
        sess.record_q[-1] = np.array(state.doc.q)
    if cycled:  # the live plot: one point per MPC cycle, of the full body's CoP
        body, base = sess.current()
        p = sess.cop()
        sess.t_hist.append(sess.clock)
        sess.zeta_hist.append(float(zeta(sess.model, p, base[:, 0], body[:, 0],
                                         sess.mpc.weights.zeta_f)))
        sess.margin_hist.append(octagon_margin(sess))


def _cycle(sess: DriveSession, vel: np.ndarray) -> None:
    T, n = sess.mpc.horizon.period, sess.mpc.horizon.steps
    t_k = T * np.arange(1, n + 1)[:, None]
    base_now = sess.base[:, 0]
    # position reference: integrate the command from where the base is (a key drive has no
    # absolute path to come back to; a goal is reached through the velocity reference)
    sess.pos_ref = base_now.copy()
    vel_ref = np.tile(vel, (n, 1))
    pos_ref = sess.pos_ref + t_k * vel
    res = sess.mpc.solve(sess.body, sess.base, vel_ref, pos_ref)
    sess.body_jerk, sess.base_jerk = res.body_jerk[0].copy(), res.base_jerk[0].copy()
    sess.last_status, sess.last_ms = res.status, res.solve_ms
    sess.cycles += 1
    sess.infeasible_cycles += not res.feasible


def _octagon_distance(d: np.ndarray) -> np.ndarray:
    return octagon_normals() @ d


def octagon_margin(sess: DriveSession, p: np.ndarray | None = None) -> float:
    """Distance (m) from the CoP now (or ``p`` (2,)) to the octagon's nearest side (> 0
    inside)."""
    body, base = sess.current()
    p = sess.cop() if p is None else p
    return float(octagon_apothem(sess.model.support_radius) - np.max(_octagon_distance(p - base[:, 0])))


def support_margin_now(sess: DriveSession) -> float:
    """Distance (m) from the CoP now to the wheel triangle's nearest edge (> 0 inside)."""
    _, base = sess.current()
    return float(support_margin(sess.model, sess.cop(), base[:, 0], sess.yaw))


def _pose(state: AppState) -> None:
    """Pose the rig from the plant (base DoFs from b and the yaw, the leg so that the upper-body
    CoM is over c: :class:`FullBody`) and take its full-body CoP; move the user's targets with
    the base; run the app's IK on them; keep the MPC's DoFs."""
    sess = current(state)
    skel = state.skeleton
    body, base = sess.current()
    ib = [skel.dof_names.index(d) for d in BASE_DOFS]
    il = [skel.dof_names.index(d) for d in LEAN_DOFS]
    old = tuple(float(v) for v in state.doc.q[ib])
    p, q = sess.full_body.cop(body, base, sess.body_jerk, sess.base_jerk, sess.yaw, sess.yaw_rate,
                              np.array(state.doc.q))
    sess.full_cop = p
    _carry_targets(state, old, (float(q[ib[0]]), float(q[ib[1]]), float(q[ib[2]])))
    if sess.follow:  # the camera follows the base
        state.camera.target[:2] += np.array([q[ib[0]] - old[0], q[ib[1]] - old[1]])
    state.doc = state.doc.with_pose(q)
    state.version += 1
    step_ik(state)
    q2 = np.array(state.doc.q)
    q2[ib] = q[ib]
    q2[il] = q[il]
    state.doc = state.doc.with_pose(q2)


def _carry_targets(state: AppState, old: tuple[float, float, float],
                   new: tuple[float, float, float]) -> None:
    """Move every active target rigidly with the base (x, y, yaw) from ``old`` to ``new``; a drag
    in progress moves with it (its plane point), so a hand dragged while driving stays with the
    robot (the camera follows the base too)."""
    if np.allclose(old, new):
        return
    d_yaw = new[2] - old[2]
    c, s = math.cos(d_yaw), math.sin(d_yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    o_old = np.array([old[0], old[1], 0.0])
    o_new = np.array([new[0], new[1], 0.0])
    doc = state.doc
    effs = []
    changed = False
    for e in doc.effectors:
        if e.active:
            pos = o_new + rot @ (np.asarray(e.position) - o_old)
            r = None if e.rotation is None else rot @ np.asarray(e.rotation)
            e = e.replace(position=pos, rotation=r)
            changed = True
        effs.append(e)
    if changed:
        state.doc = doc.replace(effectors=tuple(effs))
    d = state.drag
    if d is not None:
        d.start_position = o_new + rot @ (np.asarray(d.start_position) - o_old)
        if d.start_rotation is not None:
            d.start_rotation = rot @ np.asarray(d.start_rotation)


# ====================================================================== recording
def start_recording(state: AppState) -> None:
    """Key the pose every MPC period from now on (:func:`stop_recording` makes the clip)."""
    sess = current(state)
    sess.recording = True
    sess.record_q, sess.record_t = [np.array(state.doc.q)], [sess.clock]


def stop_recording(state: AppState) -> bool:
    """Turn the recorded poses into a new clip (one key per MPC period); one undo step."""
    sess = current(state)
    sess.recording = False
    pairs = [(t, q) for t, q in zip(sess.record_t, sess.record_q, strict=True) if q is not None]
    if len(pairs) < 2:
        state.error("Drive: nothing recorded (drive for at least one MPC period)")
        return False
    t0 = pairs[0][0]
    clip = new_clip(state.skeleton, name=unique_name(state, "drive"), fps=30.0,
                    interpolation="linear")
    for t, q in pairs:
        clip = add_key(clip, round(t - t0, 6), q)
    doc = state.doc
    set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips), time=0.0))
    commit(state, f"record drive clip {clip.name!r}")
    state.info(f"Drive: recorded clip {clip.name!r} ({len(pairs)} keys, {pairs[-1][0] - t0:.1f} s)")
    return True


# ====================================================================== input
def on_key_press(state: AppState, symbol: int, modifiers: int) -> bool:
    """Drive keys are held, not pressed: consume them so they do not orbit the camera or play."""
    if symbol in (K.LSHIFT, K.RSHIFT):  # held for speed; the viewport may use it too
        state.keys_down.add(symbol)
        return False
    if symbol in DRIVE_KEYS and not (modifiers & (K.MOD_CTRL | K.MOD_COMMAND)):
        state.keys_down.add(symbol)
        return True
    return False


def set_goal(state: AppState, point: np.ndarray) -> None:
    """Drive to ``point`` (3,) or (2,) on the floor (a drive key cancels it)."""
    sess = current(state)
    sess.goal = np.asarray(point, float)[:2].copy()


# ====================================================================== drawing
def decorate_view(state: AppState, geom: ViewGeometry) -> ViewGeometry:
    """Add the octagon (about b), b, c, the CoP and the goal to the view's overlay."""
    sess = current(state)
    if sess is None:
        return geom
    body, base = sess.current()
    b = base[:, 0]
    p = sess.cop()
    z = 0.004
    verts = octagon_vertices(b, sess.model.support_radius)
    a3 = np.c_[verts, np.full(8, z)]
    margin = octagon_margin(sess)
    col = (0.2, 0.85, 0.3, 0.95) if margin > 0.02 else (0.95, 0.75, 0.1, 0.95) if margin > 0 \
        else (0.95, 0.15, 0.1, 0.95)
    cyl = [cylinder_instances(a3, np.roll(a3, -1, axis=0), 0.004, col)]
    c3 = np.array([body[0, 0], body[1, 0], sess.model.body_height])
    cyl.append(cylinder_instances(np.array([[c3[0], c3[1], z]]), c3[None], 0.003,
                                  (0.2, 0.6, 0.95, 0.7)))
    pts = [np.array([b[0], b[1], z]), np.array([c3[0], c3[1], z]), c3, np.r_[p, z]]
    cols = [(0.25, 0.45, 0.95, 1.0), (0.2, 0.75, 0.95, 1.0), (0.2, 0.75, 0.95, 1.0),
            (0.95, 0.15, 0.15, 1.0)]
    radii = [0.016, 0.012, 0.025, 0.022]  # the CoP largest: it shows when it sits on b
    sph = [sphere_instances(np.array([pt]), r, c) for pt, r, c in zip(pts, radii, cols, strict=True)]
    if sess.goal is not None:
        g = np.r_[sess.goal, z]
        sph.append(sphere_instances(g[None], 0.03, (0.95, 0.55, 0.1, 1.0)))
        cyl.append(cylinder_instances(g[None], (g + [0, 0, 0.25])[None], 0.006, (0.95, 0.55, 0.1, 1.0)))
    return dataclasses.replace(
        geom, overlay_spheres=np.concatenate([geom.overlay_spheres, *sph]).astype(np.float32),
        overlay_cylinders=np.concatenate([geom.overlay_cylinders, *cyl]).astype(np.float32))


def floor_point(state: AppState, px: float, py: float) -> np.ndarray | None:
    """Where the mouse ray through view pixel ``(px, py)`` meets the floor ``z = 0`` (3,), or
    None when it points away from it."""
    origin, direction = state.camera.ray(px, py)
    if abs(direction[2]) < 1e-9:
        return None
    t = -origin[2] / direction[2]
    return None if t <= 0 else origin + t * direction


# ====================================================================== the mode
class DriveMode(Mode):
    """Seed E's balance MPC drives the wheeled robot (``Document.mode`` is a
    :class:`DriveData`)."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Drive"

    def update(self, state: AppState, dt: float) -> None:
        update(state, dt)

    def decorate_view(self, state: AppState, geom: ViewGeometry) -> ViewGeometry:
        return decorate_view(state, geom)

    def view_key(self, state: AppState) -> tuple:
        sess = current(state)
        if sess is None:
            return ()
        goal = None if sess.goal is None else tuple(sess.goal)
        return (sess.cycles, sess.phase, sess.yaw, goal)

    def on_key_press(self, state: AppState, symbol: int, modifiers: int) -> bool:
        return on_key_press(state, symbol, modifiers)

    def on_mouse_press(self, state: AppState, px: float, py: float, button: int,
                       modifiers: int) -> bool:
        """Ctrl + left click on the floor: the goal the base drives to (the drag moves it)."""
        if button != K.LEFT or not modifiers & (K.MOD_CTRL | K.MOD_COMMAND):
            return False
        self.on_mouse_drag(state, px, py, modifiers)
        return True

    def on_mouse_drag(self, state: AppState, px: float, py: float, modifiers: int) -> None:
        hit = floor_point(state, px, py)
        if hit is not None and current(state) is not None:
            set_goal(state, hit)

    def open_with(self, state: AppState) -> bool:
        """A scene named "... drive ..." on a rig with balance data opens in drive mode."""
        return wants_drive(state) and enter(state)


__all__ = ["NAME", "DriveData", "DriveMode", "DriveSession", "current", "enter", "leave",
           "octagon_margin", "set_goal", "start_recording", "stop_recording", "support_margin_now",
           "update"]
