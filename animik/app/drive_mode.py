"""Drive mode: the user drives ``wheeled20``'s base; seed E's balance MPC keeps it upright.

While ``state.drive`` is a :class:`DriveSession` (:func:`enter` / :func:`leave`, Tools › Drive,
or a scene with ``[drive]``-style name, see :func:`wants_drive`), :func:`update` runs before
the app's IK each frame:

* the velocity reference comes from the keys held — arrows / WASD: forward/back and left/right
  in the robot's frame, Shift: twice the speed, Q / E: yaw rate — or from a goal on the floor
  (Ctrl + left click or drag on the floor sets it; the reference then points at it, slowing
  down on arrival); a key press cancels the goal;
* the MPC (:class:`animik.balance.BalanceMPC`, daqp, warm started) runs once per period ``T``
  (100 ms) on the measured state of the plant; between two cycles the state shown is the exact
  constant-jerk interpolation of the current period, so the motion is smooth at any frame rate;
* what plays the robot: the two-mass plant (exact integration of the commanded jerks). The
  rig is posed from it: the base DoFs from ``b`` and the yaw, and the leg's knee pitch and hip
  roll by a small Newton solve so that the true upper-body CoM of the rig (from its link
  masses, arms included) sits over ``c`` — the lean the MPC asked for;
* the user's IK targets (hands, head) ride with the base, and the app's IK still runs on them,
  so the arms and head can be dragged while it drives (the MPC owns the base and leg DoFs);
* ``b``, ``c``, the CoP and the support octagon are drawn on the floor (:func:`decorate_view`),
  ζ and the CoP margin go to the Drive panel's live plot;
* Record keys the pose every period into a new clip ("drive", "drive 2", ...), exported like any
  other clip (File › Export clip…).

Numpy only (no GL); the panel is :mod:`animik.app.ui.drive_panel`.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..balance import BalanceMPC, RobotModel, Weights
from ..balance.cop import cop, octagon_apothem, octagon_vertices, support_margin, zeta
from ..balance.horizon import advance
from ..kinematics import forward_kinematics
from . import keys as K
from .state import AppState

HISTORY = 300  # MPC cycles kept for the live plot (30 s)
LEAN_DOFS = ("knee_pitch", "hip_roll")  # the leg DoFs that move c relative to b
BASE_DOFS = ("base_x", "base_y", "base_yaw")
DRIVE_KEYS = {K.UP_ARROW, K.DOWN_ARROW, K.LEFT_ARROW, K.RIGHT_ARROW, K.W, K.A, K.S, K.D, K.Q, K.E}
MAX_YAW_RATE = 1.0  # rad/s
GOAL_TOLERANCE = 0.03  # m


@dataclass
class DriveSession:
    """The drive mode's state (view state: not part of the document, not undone)."""

    model: RobotModel
    mpc: BalanceMPC
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
    upper_joints: np.ndarray | None = None
    lean: np.ndarray = field(default_factory=lambda: np.zeros(2))
    last_status: str = "optimal"
    last_ms: float = 0.0
    infeasible_cycles: int = 0
    cycles: int = 0
    t_hist: deque = field(default_factory=lambda: deque(maxlen=HISTORY))
    zeta_hist: deque = field(default_factory=lambda: deque(maxlen=HISTORY))
    margin_hist: deque = field(default_factory=lambda: deque(maxlen=HISTORY))
    recording: bool = False
    record_q: list = field(default_factory=list)
    record_t: list = field(default_factory=list)
    keys_override: set | None = None  # tests: keys held without a keyboard
    follow: bool = True  # the camera follows the base

    # ----------------------------------------------------------------- current values
    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """``(body, base)`` (2, 3) now: the exact constant-jerk interpolation of the period."""
        return (advance(self.body, self.body_jerk, self.phase),
                advance(self.base, self.base_jerk, self.phase))

    def cop(self) -> np.ndarray:
        body, base = self.current()
        return cop(self.model, base[:, 0], base[:, 2], body[:, 0], body[:, 2])


def balance_model(skeleton) -> RobotModel:
    """The rig's balance model (:class:`animik.balance.BalanceError` if it has no data)."""
    return RobotModel.from_rig(skeleton)


def can_drive(state: AppState) -> bool:
    meta = state.skeleton.meta
    return "support_radius" in meta and all(d in state.skeleton.dof_names for d in BASE_DOFS)


def wants_drive(state: AppState) -> bool:
    """A scene named ``... drive ...`` on a rig with balance data opens in drive mode."""
    return can_drive(state) and "drive" in (state.doc.name or "").lower()


def enter(state: AppState, weights: Weights | None = None) -> bool:
    """Start driving from the current pose; False (with a message) if the rig cannot."""
    from ..errors import AnimikError

    skel = state.skeleton
    try:
        model = balance_model(skel)
        if not all(d in skel.dof_names for d in BASE_DOFS + LEAN_DOFS):
            raise AnimikError(f"rig {skel.name!r} lacks the DoFs {BASE_DOFS + LEAN_DOFS} drive "
                              "mode poses")
        mpc = BalanceMPC(model, weights or Weights(velocity=100.0, position=1.0, robustness=10.0,
                                                   jerk=1e-4))
    except AnimikError as e:
        state.error(f"Drive: {e}")
        return False
    q = state.doc.q
    ix = [skel.dof_names.index(d) for d in BASE_DOFS]
    start = np.array([q[ix[0]], q[ix[1]]])
    states = np.zeros((2, 3))
    states[:, 0] = start
    sess = DriveSession(model, mpc, states.copy(), states.copy(), yaw=float(q[ix[2]]))
    sess.pos_ref = start.copy()
    base_joint = skel.dof_joint[ix[0]]
    sess.upper_joints = np.array([j for j in range(skel.n_joints) if j != base_joint])
    # the rig's upper-body CoM offset at the current lean: the MPC's c starts there
    sess.lean = np.array([q[skel.dof_names.index(d)] for d in LEAN_DOFS])
    off = _upper_com(state, q)[:2] - start
    c = states.copy()
    c[:, 0] = start + off
    # start c over b (the MPC's resting state) unless the pose already leans within k_xy
    if np.all(np.abs(off) <= model.body_offset):
        sess.body = c
    state.drive = sess
    # Hold the base site with a 6-D pin (moved with the base every frame): the app's IK then
    # reaches for the hands and head with the arms and neck instead of the base DoFs the MPC owns.
    if "base" in skel.site_names:
        from .state import PINNED

        i = skel.site_index("base")
        fk = state.fk
        e = state.doc.effector("base").replace(mode=PINNED, position=fk.site_positions[i].copy(),
                                               rotation=fk.site_rotations[i].copy())
        state.doc = state.doc.with_effector(e)
    state.info("Drive: arrows / WASD move, Q / E turn, Shift faster, Ctrl+click the floor for a "
               "goal")
    return True


def leave(state: AppState) -> None:
    sess = state.drive
    if sess is not None and sess.recording:
        stop_recording(state)
    state.drive = None


# ====================================================================== per frame
def held(state: AppState) -> set:
    sess = state.drive
    return sess.keys_override if sess.keys_override is not None else state.keys_down


def velocity_command(state: AppState) -> tuple[np.ndarray, float]:
    """World velocity (2,) m/s and yaw rate rad/s from the keys held or the goal."""
    sess = state.drive
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
    sess = state.drive
    dt = float(min(max(dt, 0.0), 0.1))
    vel, yaw_rate = velocity_command(state)
    T = sess.mpc.horizon.period
    if sess.cycles == 0 and sess.phase == 0.0:
        _cycle(sess, vel)
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
        if sess.recording:
            sess.record_t.append(sess.clock - sess.phase)
            sess.record_q.append(None)  # filled by the pose below (the last one of this frame)
    _pose(state)
    if sess.recording and sess.record_q and sess.record_q[-1] is None:
        sess.record_q[-1] = np.array(state.doc.q)


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
    p = cop(sess.model, sess.base[:, 0], sess.base[:, 2], sess.body[:, 0], sess.body[:, 2])
    sess.t_hist.append(sess.clock)
    sess.zeta_hist.append(float(zeta(sess.model, p, sess.base[:, 0], sess.body[:, 0],
                                     sess.mpc.weights.zeta_f)))
    sess.margin_hist.append(float(octagon_apothem(sess.model.support_radius)
                                  - np.max(_octagon_distance(p - sess.base[:, 0]))))


def _octagon_distance(d: np.ndarray) -> np.ndarray:
    from ..balance.cop import octagon_normals

    return octagon_normals() @ d


def octagon_margin(sess: DriveSession) -> float:
    """Distance (m) from the CoP now to the octagon's nearest side (> 0 inside)."""
    body, base = sess.current()
    p = sess.cop()
    return float(octagon_apothem(sess.model.support_radius) - np.max(_octagon_distance(p - base[:, 0])))


def support_margin_now(sess: DriveSession) -> float:
    """Distance (m) from the CoP now to the wheel triangle's nearest edge (> 0 inside)."""
    _, base = sess.current()
    return float(support_margin(sess.model, sess.cop(), base[:, 0], sess.yaw))


def _upper_com(state: AppState, q: np.ndarray) -> np.ndarray:
    """World CoM (3,) of every link but the base, from the rig's masses."""
    skel = state.skeleton
    sess = state.drive
    js = sess.upper_joints if sess is not None and sess.upper_joints is not None else \
        np.arange(1, skel.n_joints)
    fk = forward_kinematics(skel, q)
    pts = fk.joint_positions[js] + np.einsum("jab,jb->ja", fk.joint_rotations[js], skel.coms[js])
    m = skel.masses[js]
    return (m[:, None] * pts).sum(0) / m.sum()


def _pose(state: AppState) -> None:
    """Pose the rig from the plant: base DoFs from b and the yaw, lean so the CoM is over c;
    move the user's targets with the base; run the app's IK on them; keep the MPC's DoFs."""
    from .actions import step_ik

    sess = state.drive
    skel = state.skeleton
    body, base = sess.current()
    q = np.array(state.doc.q)
    ib = [skel.dof_names.index(d) for d in BASE_DOFS]
    il = [skel.dof_names.index(d) for d in LEAN_DOFS]
    old = (q[ib[0]], q[ib[1]], q[ib[2]])
    q[ib[0]], q[ib[1]], q[ib[2]] = base[0, 0], base[1, 0], sess.yaw
    # lean: Newton on (knee_pitch, hip_roll) so the rig's upper-body CoM is over c
    want = body[:, 0]
    lo = skel.lower[il]
    hi = skel.upper[il]
    for _ in range(3):
        q[il] = sess.lean
        got = _upper_com(state, q)[:2]
        err = want - got
        if np.linalg.norm(err) < 2e-4:
            break
        jac = np.empty((2, 2))
        for k in range(2):
            qq = q.copy()
            qq[il[k]] += 1e-4
            jac[:, k] = (_upper_com(state, qq)[:2] - got) / 1e-4
        try:
            step = np.linalg.lstsq(jac, err, rcond=1e-6)[0]
        except np.linalg.LinAlgError:
            break
        sess.lean = np.clip(sess.lean + step, lo, hi)
    q[il] = sess.lean
    _carry_targets(state, old, (q[ib[0]], q[ib[1]], q[ib[2]]))
    if sess.follow:  # the camera follows the base
        state.camera.target[:2] += np.array([q[ib[0]] - old[0], q[ib[1]] - old[1]])
    q.setflags(write=False)
    state.doc = state.doc.replace(q=q)
    state.version += 1
    step_ik(state)
    q2 = np.array(state.doc.q)
    q2[ib] = q[ib]
    q2[il] = q[il]
    q2.setflags(write=False)
    state.doc = state.doc.replace(q=q2)


def _carry_targets(state: AppState, old, new) -> None:
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
    sess = state.drive
    sess.recording = True
    sess.record_q, sess.record_t = [np.array(state.doc.q)], [sess.clock]


def stop_recording(state: AppState) -> bool:
    """Turn the recorded poses into a new clip (one key per MPC period); one undo step."""
    from ..anim import add_key, new_clip
    from . import actions
    from .timeline import unique_name

    sess = state.drive
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
    actions.set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips), time=0.0))
    actions.commit(state, f"record drive clip {clip.name!r}")
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


def set_goal(state: AppState, point) -> None:
    sess = state.drive
    sess.goal = np.asarray(point, float)[:2].copy()


# ====================================================================== drawing
def decorate_view(state: AppState, geom):
    """Add the octagon (about b), b, c, the CoP and the goal to the view's overlay."""
    from .geometry import cylinder_instances, sphere_instances

    sess = state.drive
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
    import dataclasses

    return dataclasses.replace(
        geom, overlay_spheres=np.concatenate([geom.overlay_spheres, *sph]).astype(np.float32),
        overlay_cylinders=np.concatenate([geom.overlay_cylinders, *cyl]).astype(np.float32))
