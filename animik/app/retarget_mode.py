"""Retarget mode: a BVH motion retargeted onto a rig live, every frame, with edits layered on it.

Entering retarget mode (:func:`enter`, one undo step) replaces the document by one on the
target rig whose ``retarget`` field is a :class:`RetargetLink`. While it is set,
:func:`update` runs instead of the app's IK: it advances the playhead and solves the current
frame with :meth:`animik.retarget.Retargeter.step` (FIK with the source pose as the null-space
reference), the :class:`~animik.retarget.RetargetState` carried from frame to frame. The
effector handles of the target stay the app's own (drag, P to pin, the Effectors panel); in
retarget mode they mean:

* **free** — the effector follows the retargeted motion;
* **dragged** — an *offset on the retargeted motion* (``RetargetEdits.offsets``): each mouse
  move puts the handle under the cursor (the offset is the handle minus where the retarget
  puts the effector on the frame shown); while the mouse is still and the clip plays, the
  handle rides along with the motion. On release the offset is kept ("Keep drag edits": the
  effector stays a target that moves with the motion), cleared (free again), or, with "Pin on
  release", the effector is pinned where it is;
* **pinned** — held at its world position (a ``RetargetEdits.targets`` edit); P pins from the
  current frame on;
* **target** without an offset (set from a menu) — a world target like a pin.

Each edit holds on a frame range (``RetargetLink.ranges``, default the whole clip) and blends
in before it and out after it over :data:`BLEND_S`.

Only the retargeter's effector sites (hands, feet, head) can be edited; the other handles
(body95's fingertips) are hidden in this mode. Edits are part of the document (undoable); the
playhead, play / pause and the live quality numbers are view state (:class:`RetargetSession`).

:func:`bake` runs every frame with the current edits and adds the result to the document: a
keyframe clip (one key per frame) in ``Document.clips`` when the document has clips, and the
:class:`~animik.motion.Motion` itself (``RetargetLink.baked``) that :func:`export_bvh` writes
and that becomes the document's motion when leaving the mode without clips support.

No GL here (numpy only): the panel is :mod:`animik.app.ui.retarget_panel`; the source skeleton
is drawn by adding instances to the view geometry (:func:`decorate_view`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..kinematics import forward_kinematics
from ..motion import Motion
from .state import FREE, PINNED, TARGET, AppState, Document, Drag, SolverSettings

#: Playback advances of at most this many frames are solved frame by frame (so playing gives
#: exactly the sequence of :meth:`Retargeter.run`); a longer jump (a scrub, the loop back to
#: frame 0) cold-starts the solve at the new frame.
MAX_CATCHUP = 12
#: Longest frame time taken into account by the playback clock, s (a stall does not jump).
MAX_DT = 0.1
SOURCE_BONE = (0.30, 0.58, 0.95)
SOURCE_JOINT = (0.55, 0.78, 1.00)
SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0)
#: An edit with a frame range blends in before it and out after it over this long, s.
BLEND_S = 0.2


# ====================================================================== panel choices
@dataclass
class RetargetUI:
    """The Retarget panel's choices (``AppState.retarget_ui``; not undone).

    Attributes:
        show: the panel is open.
        source_path: the BVH to retarget ("" : the document's own BVH).
        target: built-in rig name, or ``"file"`` to use ``target_file``.
        target_file: a rig (``.toml``) or BVH path for the target.
        mapping_path: an optional mapping file (TOML / JSON).
        keep_edits: a released drag stays as an offset on the motion (else it is cleared).
        export_path: where "Export retargeted BVH" writes ("" : next to the source).
        focus: bring the panel to the front on the next frame.
        rects: ``{name: (x0, y0, x1, y1)}`` window pixels of the panel's main widgets as last
            drawn (``"tools"``, ``"menu_retarget"``, ``"retarget"``, ``"play"``, ``"bake"``):
            tests click them.
    """

    show: bool = False
    source_path: str = ""
    target: str = "body95"
    target_file: str = ""
    mapping_path: str = ""
    keep_edits: bool = True
    export_path: str = ""
    focus: bool = False
    rects: dict = field(default_factory=dict)


def ui_of(state: AppState) -> RetargetUI:
    if state.retarget_ui is None:
        state.retarget_ui = RetargetUI()
    return state.retarget_ui


def open_panel(state: AppState) -> None:
    """Tools › Retarget…: show the panel, with the document's BVH as the source."""
    ui = ui_of(state)
    ui.show = True
    ui.focus = True
    if not ui.source_path:
        ui.source_path = default_source_path(state)


def default_source_path(state: AppState) -> str:
    link = current(state)
    if link is not None:
        return link.session.source_path
    if state.doc.motion is not None and str(state.doc.rig).lower().endswith(".bvh"):
        return str(state.doc.rig)
    return ""


# ====================================================================== live statistics
class LiveStats:
    """Running quality numbers of the frames solved since the last reset (the panel's table)."""

    def __init__(self, sites: tuple[str, ...]):
        self.sites = sites
        k = len(sites)
        self.now_mm = np.zeros(k)
        self.sum_mm = np.zeros(k)
        self.max_mm = np.zeros(k)
        self.frames = 0
        self.iterations = 0
        self.not_converged = 0
        self.limit_violations = 0
        self.step_ms = 0.0
        self.last_iterations = 0
        self.contact: np.ndarray = np.zeros(0, bool)
        self.crouch = 0.0

    def reset(self) -> None:
        self.__init__(self.sites)

    def record(self, err_mm: np.ndarray, iterations: int, converged: bool, violations: int,
               step_ms: float, contact: np.ndarray, crouch: float) -> None:
        self.now_mm = err_mm
        self.sum_mm = self.sum_mm + err_mm
        self.max_mm = np.maximum(self.max_mm, err_mm)
        self.frames += 1
        self.iterations += int(iterations)
        self.last_iterations = int(iterations)
        self.not_converged += 0 if converged else 1
        self.limit_violations += int(violations)
        self.step_ms = step_ms
        self.contact = contact
        self.crouch = crouch

    @property
    def mean_mm(self) -> np.ndarray:
        return self.sum_mm / max(self.frames, 1)


# ====================================================================== the session
class RetargetSession:
    """One retarget setup: the prepared :class:`~animik.retarget.Retargeter` and the source,
    shared (by identity) by every document of the session, plus the playback (view state).

    Args:
        motion: the source motion.
        target: built-in rig name or a rig / BVH path.
        mapping: mapping file path (or anything :class:`Retargeter` accepts), or None.
        source_path: where the source came from (shown, and the default export folder).

    Raises:
        AnimikError, OSError: the target or mapping cannot be loaded, or the skeletons cannot be
            mapped (the message says why).
    """

    def __init__(self, motion: Motion, target: str, mapping: Any = None, source_path: str = ""):
        from ..retarget import Retargeter

        self.rt = Retargeter(motion, target, mapping)
        rt = self.rt
        self.motion = motion
        self.target_spec = str(target)
        self.mapping_path = "" if mapping is None else str(mapping)
        self.source_path = str(source_path)
        self.source_name = Path(source_path).stem if source_path else motion.skeleton.name
        self.n_frames = rt.n_frames
        self.fps = float(motion.fps)
        tgt = rt.target
        #: the effectors the user may edit: the retargeter's sites that the target rig has
        self.editable = tuple(s for s in rt.effector_sites if s in tgt.site_names)
        self.shown_sites = tuple(s for s, r in zip(rt.effector_sites, rt.effector_roles,
                                                   strict=True) if r != "root")
        self._eff_k = {s: i for i, s in enumerate(rt.effector_sites)}
        self._solve_idx = np.array([rt.solve_skeleton.site_index(s) for s in self.shown_sites])
        self._shown_k = np.array([self._eff_k[s] for s in self.shown_sites], dtype=np.int64)
        self.roles = dict(zip(rt.effector_sites, rt.effector_roles, strict=True))
        # playback (view state: not undone)
        self.playing = False
        self.speed = 1.0
        self.loop = True
        self.follow = True
        self.clock = 0.0  # frames
        self.frame = 0  # the frame solved
        self.seek_to: int | None = None
        self.state = None  # RetargetState of `frame`
        self.input_state = None  # the state `frame` was solved from (None: cold start)
        self.solved_key: Any = None
        self.stats = LiveStats(self.shown_sites)
        self.follow_mid: np.ndarray | None = None
        self.error: str = ""
        #: per editable site, its retargeted target without edits on the solved frame (None:
        #: unknown, the site had a world target)
        self.bases: dict[str, np.ndarray | None] = {}
        # the drag in progress: its id, its offset on the motion, the handle position shown
        self.drag_id: int | None = None
        self.drag_offset: np.ndarray | None = None
        self.drag_shown: np.ndarray | None = None
        # the source drawn beside the target
        src = motion.skeleton
        fk = forward_kinematics(src, motion.q)
        #: the source's joint and site positions in every frame ((T, J, 3), (T, S, 3)), m
        self.src_joints = np.asarray(fk.joint_positions)
        self.src_sites = np.asarray(fk.site_positions)
        self._source_setup()

    # ---------------------------------------------------------------- source drawing
    def _source_setup(self) -> None:
        rt, src = self.rt, self.motion.skeleton
        al = rt.alignment
        self.src_hips = int(al.hips_s)
        self.tgt_hips = int(al.hips_t)
        P = self.src_joints
        roles = rt.mapping.source_roles
        left = None
        for a, b in (("l_thigh", "r_thigh"), ("l_upper_arm", "r_upper_arm"),
                     ("l_clavicle", "r_clavicle")):
            ja, jb = roles.get(a), roles.get(b)
            if ja is not None and jb is not None:
                d = P[0, src.joint_index(ja)] - P[0, src.joint_index(jb)]
                d[2] = 0.0
                if np.linalg.norm(d) > 1e-6:
                    left = d / np.linalg.norm(d)
                    break
        if left is None:
            left = np.array([0.0, 1.0, 0.0])
        #: the joints drawn: the hips and below (not a static root joint above them)
        self.body = np.flatnonzero(src.joint_ancestor_mask[:, self.src_hips])
        h_src = float(np.ptp(P[0, self.body], axis=0).max()) if len(self.body) > 1 else 1.0
        tfk = forward_kinematics(rt.target, rt.target.rest_q)
        h_tgt = float(np.ptp(tfk.joint_positions, axis=0).max()) if rt.target.n_joints > 1 else 1.0
        #: world offset of the source from the target: to the character's right, ~1 m
        self.side = -left * max(1.0, 0.6 * max(h_src, h_tgt))
        self.facing = np.cross(left, [0.0, 0.0, 1.0])  # the character's forward at frame 0
        self.src_height = max(h_src, 1e-3)
        self.dz = np.asarray(rt.clip["dz"], float)
        self.scale = float(al.scale)
        # bones of the body: parent -> child, and joint -> end site for leaf joints
        par = src.parents
        in_body = np.zeros(src.n_joints, bool)
        in_body[self.body] = True
        child = np.array([j for j in self.body if par[j] >= 0 and in_body[par[j]]], dtype=np.int64)
        has_child = np.zeros(src.n_joints, bool)
        has_child[par[child]] = True
        sites = np.array([i for i, j in enumerate(src.site_joint)
                          if in_body[j] and not has_child[j]
                          and np.linalg.norm(src.site_offsets[i]) > 1e-6], dtype=np.int64)
        self._bones = (par[child], child, sites)
        self.src_joint_r = float(np.clip(0.014 * self.src_height, 0.004, 0.05))
        self.src_bone_r = 0.6 * self.src_joint_r

    def source_points(self, frame: int, target_hips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World ``(joints (J, 3), sites (S, 3))`` of the source at ``frame`` as drawn: beside
        the target (its hips horizontally where the target's hips are, plus :attr:`side`), its
        floor on the ground (z = 0)."""
        P = self.src_joints[frame]
        S = self.src_sites[frame]
        shift = np.empty(3)
        shift[:2] = target_hips[:2] - P[self.src_hips, :2] + self.side[:2]
        shift[2] = self.dz[frame] / self.scale
        return P + shift, S + shift

    # ---------------------------------------------------------------- solving
    def solve_input(self):
        """The state to re-solve the current frame from: the frame's own input state with the
        latest pose and FIK state (a warm start), or, for a cold-started frame, the latest
        solve with fresh feet (as a cold start has)."""
        cur = self.state
        if cur is None:
            return None
        if self.input_state is not None:
            return dataclasses.replace(self.input_state, q=cur.q, fik=cur.fik)
        from ..semantics.contacts import FootState

        return dataclasses.replace(cur, frame=-1, feet=tuple(FootState() for _ in cur.feet),
                                   crouch=0.0)

    def errors_mm(self, q: np.ndarray, st) -> np.ndarray:
        """Distance of each shown effector to its target this frame, mm."""
        fk = forward_kinematics(self.rt.solve_skeleton, q)
        ach = fk.site_positions[self._solve_idx]
        return 1e3 * np.linalg.norm(ach - np.asarray(st.targets)[self._shown_k], axis=1)

    def target_of(self, st, site: str) -> np.ndarray:
        return np.array(st.targets[self._eff_k[site]])


@dataclass(frozen=True, eq=False)
class RetargetLink:
    """The retarget part of a :class:`~animik.app.state.Document` (immutable, undoable).

    Attributes:
        session: the :class:`RetargetSession` (shared by identity).
        offsets: ``{site: (3,)}`` kept drag edits, m: added to the retargeted target of that
            effector (while the effector is a target).
        ranges: ``{site: (first, last)}`` frames where the site's edit (pin, offset, target)
            holds fully; it blends in and out over :data:`BLEND_S` outside them. A site
            without an entry: the whole clip.
        baked: the last baked motion (on the target rig), or None.
        baked_key: the edits it was baked with.
        report: the :class:`~animik.retarget.RetargetReport` of the bake, or None.
    """

    session: RetargetSession
    offsets: Mapping[str, np.ndarray] = field(default_factory=dict)
    ranges: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    baked: Motion | None = None
    baked_key: Any = None
    report: Any = None

    def __post_init__(self) -> None:
        offs = {}
        for k, v in dict(self.offsets).items():
            a = np.array(v, dtype=float)
            a.setflags(write=False)
            offs[k] = a
        object.__setattr__(self, "offsets", MappingProxyType(offs))
        object.__setattr__(self, "ranges", MappingProxyType(
            {k: (int(a), int(b)) for k, (a, b) in dict(self.ranges).items()}))

    def range_of(self, site: str) -> tuple[int, int]:
        return self.ranges.get(site, (0, self.session.n_frames - 1))

    def replace(self, **kw: Any) -> RetargetLink:
        return dataclasses.replace(self, **kw)


def current(state: AppState) -> RetargetLink | None:
    """The document's :class:`RetargetLink` (None: not in retarget mode)."""
    return getattr(state.doc, "retarget", None)


def active(state: AppState) -> bool:
    return current(state) is not None


# ====================================================================== enter / leave
def _errors():
    from .actions import USER_ERRORS

    return USER_ERRORS


def _describe(e: BaseException) -> str:
    from .actions import _describe as d

    return d(e)


def enter(state: AppState, source: str | Path | Motion | None = None, target: str = "body95",
          mapping: str | Path | None = None, play: bool = True) -> bool:
    """Retarget a BVH onto ``target`` and switch to retarget mode (one undo step).

    Args:
        source: a ``.bvh`` path or a motion; None: the document's BVH (or the current
            session's source, to retarget it onto another rig).
        target: built-in rig name, or a rig ``.toml`` / ``.bvh`` path.
        mapping: optional mapping file.
        play: start playing.

    Returns:
        True when entered; on error a banner says why and nothing changes.
    """
    from . import actions

    link = current(state)
    src_path = ""
    try:
        if isinstance(source, Motion):
            motion = source
            src_path = str(motion.meta.get("source", ""))
        elif source is None or str(source) == "" or (
                link is not None and str(source) == link.session.source_path):
            if link is not None:
                motion, src_path = link.session.motion, link.session.source_path
            elif state.doc.motion is not None:
                motion, src_path = state.doc.motion, str(state.doc.rig)
            else:
                raise ValueError("no BVH is open: open one (File › Open…) or give a .bvh file")
        elif (state.doc.motion is not None and link is None
              and Path(str(source)).expanduser() == Path(str(state.doc.rig)).expanduser()):
            motion, src_path = state.doc.motion, str(state.doc.rig)
        else:
            from ..io.bvh import read_bvh

            path = Path(str(source)).expanduser()
            if path.suffix.lower() != ".bvh":
                raise ValueError(f"the source must be a .bvh file, got {str(path)!r}")
            motion, src_path = read_bvh(path), str(path)
        if motion.n_frames == 0:
            raise ValueError("the motion has no frames")
        mapping_arg = None if mapping is None or str(mapping) == "" else str(Path(str(mapping))
                                                                                .expanduser())
        sess = RetargetSession(motion, str(target), mapping_arg, src_path)
        q0, st0 = sess.rt.step(0)
    except _errors() as e:
        name = Path(src_path).name if src_path else (Path(str(source)).name if source else "the BVH")
        state.error(f"Cannot retarget {name} onto {target}: {_describe(e)}")
        return False
    sess.state, sess.input_state, sess.frame, sess.solved_key = st0, None, 0, ()
    sess.bases = {s: sess.target_of(st0, s) for s in sess.editable}
    sess.playing = bool(play)
    tgt = sess.rt.target
    doc = Document.new(tgt, str(target), q0, name=f"{sess.source_name} on {tgt.name}",
                       solver=SolverSettings(actions.default_solver(), 20, {}),
                       retarget=RetargetLink(sess))
    actions.cancel_drag(state)
    if getattr(state, "playing", False):
        state.playing = False  # the timeline's playback: retarget mode has its own transport
    actions.set_doc(state, doc)
    actions.commit(state, f"retarget onto {tgt.name}")
    state.selected_site = state.hover_site = None
    state.selected_joint = state.hover_joint = None
    _record(state, sess, st0, 0.0)
    frame_both(state, face=True)
    state.camera.set_home()
    ui = ui_of(state)
    ui.source_path, ui.export_path, ui.show = src_path, "", True
    state.info(f"Retargeting {Path(src_path).name if src_path else sess.source_name} onto "
               f"{tgt.name}: {sess.n_frames} frames at {sess.fps:g} fps")
    return True


def leave(state: AppState) -> bool:
    """Leave retarget mode (one undo step): the target rig stays with its current pose, its
    pins and targets; a baked motion becomes the document's clip."""
    from . import actions

    link = current(state)
    if link is None:
        return False
    actions.cancel_drag(state)
    kw: dict[str, Any] = {"retarget": None}
    if link.baked is not None and not hasattr(state.doc, "clips"):
        kw["motion"] = link.baked
        kw["frame"] = link.session.frame
    actions.set_doc(state, state.doc.replace(**kw))
    state.ik.solver_state = None
    actions.commit(state, "leave retarget mode")
    state.info("Left retarget mode")
    return True


def frame_both(state: AppState, face: bool = False) -> None:
    """Frame the camera on the target and the source beside it (``face``: look at them from
    the front, a little from the source's side, the source on the left)."""
    link = current(state)
    if link is None:
        return
    sess = link.session
    fk = state.fk
    pj, _ = sess.source_points(sess.frame, fk.joint_positions[sess.tgt_hips])
    pts = np.concatenate([fk.joint_positions, fk.site_positions, pj[sess.body]])
    cam = state.camera
    if face:
        cam.yaw = float(np.arctan2(sess.facing[1], sess.facing[0])) - 0.25
        cam.pitch = 0.2
    cam.frame(pts, margin=1.15)
    sess.follow_mid = None


# ====================================================================== transport
def set_playing(state: AppState, on: bool) -> None:
    link = current(state)
    if link is None:
        return
    sess = link.session
    if on and sess.frame >= sess.n_frames - 1 and not sess.loop:
        sess.seek_to = 0
        sess.clock = 0.0
    sess.playing = bool(on)


def seek(state: AppState, frame: int) -> None:
    """Go to ``frame`` (solved on the next update; the clip keeps playing if it was)."""
    link = current(state)
    if link is None:
        return
    sess = link.session
    f = int(np.clip(frame, 0, sess.n_frames - 1))
    sess.seek_to = f
    sess.clock = float(f)


def step_frames(state: AppState, n: int) -> None:
    link = current(state)
    if link is not None:
        seek(state, link.session.frame + n)


def on_key_press(state: AppState, symbol: int, modifiers: int) -> bool:
    """Keys of retarget mode (before the viewport's): Space play / pause, ``,`` ``.`` (or
    ``[`` ``]``) previous / next frame (Shift: 10 frames), P pin the selected (or hovered)
    hand / foot / head from this frame on, or free it. Returns True when used."""
    from . import keys as K

    link = current(state)
    if link is None or modifiers & (K.MOD_CTRL | K.MOD_COMMAND | K.MOD_ALT):
        return False
    if symbol == K.SPACE:
        set_playing(state, not link.session.playing)
        return True
    site = state.selected_site or state.hover_site
    if symbol == K.P and site in link.session.editable and state.drag is None:
        pin(state, site)
        return True
    step = {K.COMMA: -1, K.BRACKETLEFT: -1, K.PERIOD: 1, K.BRACKETRIGHT: 1}.get(symbol)
    if step is not None and state.drag is None:
        link.session.playing = False
        step_frames(state, 10 * step if modifiers & K.MOD_SHIFT else step)
        return True
    return False


# ====================================================================== edits
def _drag_site(state: AppState, link: RetargetLink) -> str | None:
    """The site being dragged as an offset on the motion (not a pin), or None."""
    d = state.drag
    if d is None or d.kind != "move" or d.site not in link.session.editable:
        return None
    e = state.doc.effector(d.site)
    return d.site if e.active and e.mode != PINNED else None


def _spec(state: AppState, link: RetargetLink, exclude: str | None = None,
          dragging: bool = True) -> tuple[list, tuple]:
    """The edits the document stands for, frame-independent: ``([(site, kind, value, first,
    last)], key)``. ``kind`` is ``"o"`` (an offset on the motion: kept drag edits and the drag
    in progress) or ``"t"`` (a world target: pins, targets without an offset)."""
    sess = link.session
    drag_site = _drag_site(state, link) if dragging else None
    items, key = [], []
    whole = (0, sess.n_frames - 1)
    for e in state.doc.effectors:
        if not e.active or e.site == exclude or e.site not in sess.editable:
            continue
        if e.site == drag_site and sess.drag_offset is not None:
            item = (e.site, "o", np.asarray(sess.drag_offset), *whole)  # the drag: every frame
        elif e.mode == TARGET and e.site in link.offsets:
            item = (e.site, "o", np.asarray(link.offsets[e.site]), *link.range_of(e.site))
        else:
            item = (e.site, "t", np.asarray(e.position), *link.range_of(e.site))
        items.append(item)
        key.append((*item[:2], item[2].tobytes(), *item[3:]))
    return items, tuple(key)


def blend_weight(frame: int, first: int, last: int, n_blend: int) -> float:
    """1 within ``[first, last]``, easing to 0 over ``n_blend`` frames outside (smoothstep)."""
    if first <= frame <= last:
        return 1.0
    d = first - frame if frame < first else frame - last
    if d > n_blend:
        return 0.0
    w = 1.0 - d / (n_blend + 1.0)
    return w * w * (3.0 - 2.0 * w)


def _edits_at(sess: RetargetSession, items: list, frame: int, state_in):
    """:class:`RetargetEdits` of ``items`` (:func:`_spec`) on ``frame`` (solved from
    ``state_in``). A world target being blended in or out is taken between the site's
    retargeted target on this frame and the edit: a solve of the frame without edits gives it
    (the effector targets do not depend on the edits), on blend frames only."""
    from ..retarget import RetargetEdits

    n_blend = max(int(round(BLEND_S * sess.fps)), 1)
    targets, offsets = {}, {}
    probe = None
    for site, kind, value, first, last in items:
        w = blend_weight(frame, first, last, n_blend)
        if w <= 0.0:
            continue
        if kind == "o":
            offsets[site] = w * value
        elif w >= 1.0:
            targets[site] = value
        else:
            if probe is None:
                probe = sess.rt.step(frame, state=state_in)[1]
            base = sess.target_of(probe, site)
            targets[site] = base + w * (value - base)
    return RetargetEdits(targets=targets, offsets=offsets)


def _bases(sess: RetargetSession, st, edits) -> dict[str, np.ndarray | None]:
    """Per editable site, its target without edits on the frame ``st`` solved (None when it
    had a world target there)."""
    return {s: (sess.target_of(st, s) - edits.offsets[s] if s in edits.offsets
                else None if s in edits.targets else sess.target_of(st, s))
            for s in sess.editable}


def edits_of(state: AppState):
    """The :class:`~animik.retarget.RetargetEdits` of the current document on the current
    frame (the drag in progress included)."""
    link = current(state)
    if link is None:
        return None
    items, _ = _spec(state, link)
    return _edits_at(link.session, items, link.session.frame, link.session.solve_input())


def base_target(state: AppState, site: str) -> np.ndarray:
    """Where the retarget (with the other edits, without this site's) puts ``site`` on the
    current frame, world m."""
    link = current(state)
    sess = link.session
    items, _ = _spec(state, link, exclude=site)
    edits = _edits_at(sess, items, sess.frame, sess.solve_input())
    _, st = sess.rt.step(sess.frame, state=sess.solve_input(), edits=edits)
    return sess.target_of(st, site)


def set_range(state: AppState, site: str, first: int, last: int, commit: bool = True) -> None:
    """Frames where ``site``'s edit holds (blending in / out outside them); undoable."""
    from . import actions

    link = current(state)
    if link is None:
        return
    n = link.session.n_frames
    first = int(np.clip(first, 0, n - 1))
    last = int(np.clip(last, first, n - 1))
    if link.range_of(site) == (first, last):
        return
    ranges = dict(link.ranges)
    ranges[site] = (first, last)
    actions.set_doc(state, state.doc.replace(retarget=link.replace(ranges=ranges)))
    if commit:
        actions.commit(state, f"range {site}")


def pin(state: AppState, site: str) -> None:
    """P in retarget mode: pin ``site`` where it is from the current frame to the end of the
    clip, or free a pinned site (one undo step)."""
    from . import actions

    link = current(state)
    if link is None or site not in link.session.editable:
        return
    e = state.doc.effector(site)
    offsets, ranges = dict(link.offsets), dict(link.ranges)
    offsets.pop(site, None)
    if e.mode == PINNED:
        e = e.replace(mode=FREE, rotation=None)
        ranges.pop(site, None)
        label = f"unpin {site}"
    else:
        i = state.skeleton.site_index(site)
        e = e.replace(mode=PINNED, position=state.fk.site_positions[i], rotation=None)
        ranges[site] = (link.session.frame, link.session.n_frames - 1)
        label = f"pin {site}"
    actions.set_doc(state, state.doc.with_effector(e).replace(
        retarget=link.replace(offsets=offsets, ranges=ranges)))
    actions.commit(state, label)


def _sync_drag(state: AppState, link: RetargetLink) -> None:
    """Turn the controller's drag into an offset on the motion.

    The controller puts the dragged handle where the cursor is (a world point); that point
    minus the site's retargeted target on the frame shown is the offset. Between mouse events
    the offset stays, so while the clip plays the handle rides along with the motion (and the
    drag plane with it, see :func:`_write_pose`); each mouse move puts it under the cursor.
    """
    sess = link.session
    d = state.drag
    if d is None or d.kind != "move":
        sess.drag_id = sess.drag_offset = sess.drag_shown = None
        return
    if sess.drag_id != id(d):
        sess.drag_id, sess.drag_offset, sess.drag_shown = id(d), None, None
    site = _drag_site(state, link)
    if site is None:
        return
    p = np.asarray(state.doc.effector(site).position)
    if sess.drag_shown is not None and np.array_equal(p, sess.drag_shown):
        return  # no mouse event since the last frame
    base = sess.bases.get(site)
    if base is None:
        base = base_target(state, site)
    sess.drag_offset = p - base
    sess.drag_shown = p.copy()


def end_drag(state: AppState, drag: Drag) -> None:
    """A handle drag ended in retarget mode (called before the drag is committed): the edit is
    kept as an offset on the motion, cleared, or pinned (see the module docstring)."""
    from . import actions

    link = current(state)
    if link is None or drag.kind != "move":
        return
    sess = link.session
    site = drag.site
    e = state.doc.effector(site)
    offsets, ranges = dict(link.offsets), dict(link.ranges)
    if site not in sess.editable:
        e = e.replace(mode=FREE)
        offsets.pop(site, None)
    elif e.mode == PINNED:
        offsets.pop(site, None)  # a pin dragged elsewhere: held there
    elif state.pin_on_release and drag.start_doc.effector(site).mode == FREE:
        e = e.replace(mode=PINNED)  # pinned where the handle is now, from this frame on
        offsets.pop(site, None)
        ranges[site] = (sess.frame, sess.n_frames - 1)
    elif ui_of(state).keep_edits:
        off = sess.drag_offset if sess.drag_id == id(drag) else None
        offsets[site] = off if off is not None else np.asarray(e.position) - base_target(state, site)
        e = e.replace(mode=TARGET)
    else:
        e = e.replace(mode=FREE)
        offsets.pop(site, None)
    e = e.replace(rotation=None)
    actions.set_doc(state, state.doc.with_effector(e).replace(
        retarget=link.replace(offsets=offsets, ranges=ranges)))


def clear_edit(state: AppState, site: str) -> None:
    """Free one effector (its pin or offset goes; one undo step)."""
    from . import actions

    link = current(state)
    if link is None:
        return
    offsets, ranges = dict(link.offsets), dict(link.ranges)
    offsets.pop(site, None)
    ranges.pop(site, None)
    e = state.doc.effector(site).replace(mode=FREE, rotation=None)
    actions.set_doc(state, state.doc.with_effector(e).replace(
        retarget=link.replace(offsets=offsets, ranges=ranges)))
    actions.commit(state, f"clear edit {site}")


def clear_edits(state: AppState) -> None:
    """Free every effector: the pure retargeted motion again (one undo step)."""
    from . import actions

    link = current(state)
    if link is None:
        return
    effs = tuple(e.replace(mode=FREE, rotation=None) for e in state.doc.effectors)
    actions.set_doc(state, state.doc.replace(effectors=effs,
                                             retarget=link.replace(offsets={}, ranges={})))
    actions.commit(state, "clear retarget edits")


def edit_rows(state: AppState) -> list[tuple[str, str, np.ndarray | None]]:
    """``[(site, "pinned" | "offset" | "target" | "dragging", offset or None)]``: the edits in
    effect."""
    link = current(state)
    if link is None:
        return []
    rows = []
    drag_site = _drag_site(state, link)
    for e in state.doc.effectors:
        if not e.active or e.site not in link.session.editable:
            continue
        if e.site == drag_site:
            off = link.session.drag_offset
            rows.append((e.site, "dragging", None if off is None else np.array(off)))
        elif e.mode == PINNED:
            rows.append((e.site, "pinned", None))
        elif e.site in link.offsets:
            rows.append((e.site, "offset", np.asarray(link.offsets[e.site])))
        else:
            rows.append((e.site, "target", None))
    return rows


# ====================================================================== per frame
def update(state: AppState, dt: float) -> None:
    """One app frame in retarget mode: advance the playhead, solve the frame(s) with the
    current edits, write the pose into the document (replaces the app's IK step)."""
    link = current(state)
    sess = link.session
    _drop_uneditable(state, link)
    _sync_drag(state, link)
    n = sess.n_frames
    goal = sess.frame
    if sess.seek_to is not None:
        goal = sess.seek_to
        sess.seek_to = None
        sess.clock = float(goal)
    elif sess.playing and n > 1:
        sess.clock += min(max(float(dt), 0.0), MAX_DT) * sess.fps * sess.speed
        if sess.loop:
            sess.clock %= n  # frame i shows for clock in [i, i + 1): wrap past the last one
        elif sess.clock >= n - 1:
            sess.clock = float(n - 1)
            sess.playing = False
        goal = int(math.floor(sess.clock))
    items, key = _spec(state, link)
    t0 = time.perf_counter()
    rt = sess.rt
    try:
        if goal == sess.frame and sess.state is not None:
            if key == sess.solved_key and sess.state.converged:
                state.stats.record(state.stats.last_error_mm, 0, 0.0)  # nothing to do
                return
            st_in = sess.solve_input()
            edits = _edits_at(sess, items, goal, st_in)
            q, st = rt.step(goal, state=st_in, edits=edits)
        elif sess.state is not None and 0 < goal - sess.frame <= MAX_CATCHUP:
            st = sess.state
            for f in range(sess.frame + 1, goal + 1):
                sess.input_state = st
                edits = _edits_at(sess, items, f, st)
                q, st = rt.step(f, state=st, edits=edits)
                if f < goal:
                    _record(state, sess, st, 0.0, stats_only=True)
        else:  # a jump: cold start
            sess.input_state = None
            edits = _edits_at(sess, items, goal, None)
            q, st = rt.step(goal, state=None, edits=edits)
    except Exception as e:  # a failed solve must not take the session down
        if not isinstance(e, _errors()):
            import traceback

            traceback.print_exc()
        sess.playing = False
        msg = f"Retarget step failed at frame {goal}: {_describe(e)}"
        if msg != sess.error:
            sess.error = msg
            state.error(msg)
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    sess.error = ""
    sess.state, sess.frame, sess.solved_key = st, goal, key
    sess.bases = _bases(sess, st, edits)
    _record(state, sess, st, 1e3 * (time.perf_counter() - t0))
    _write_pose(state, link, st)
    if sess.follow and sess.playing:
        _follow(state, sess)


def _record(state: AppState, sess: RetargetSession, st, ms: float, stats_only: bool = False) -> None:
    q = np.asarray(st.q)
    err = sess.errors_mm(q, st)
    tgt = sess.rt.target
    viol = int(np.sum((q < tgt.lower - 1e-9) | (q > tgt.upper + 1e-9)))
    sess.stats.record(err, st.iterations, st.converged, viol, ms, np.asarray(st.contact), st.crouch)
    if not stats_only:
        state.stats.record(float(err.max()) if len(err) else 0.0, st.iterations, ms)


def _write_pose(state: AppState, link: RetargetLink, st) -> None:
    """The solved pose into the document; the handle of an offset edit (kept, or the drag in
    progress) goes where its target is on this frame."""
    doc = state.doc
    sess = link.session
    drag_site = _drag_site(state, link)
    effs = None
    for i, e in enumerate(doc.effectors):
        if e.mode != TARGET:
            continue
        if e.site == drag_site:
            if sess.drag_offset is None and e.site not in link.offsets:
                continue
        elif e.site not in link.offsets:
            continue
        p = sess.target_of(st, e.site)
        if e.site == drag_site:
            sess.drag_shown = p.copy()
            if sess.playing:  # the drag plane moves with the handle (the controller's next move)
                state.drag.start_position = p.copy()
        if not np.array_equal(p, e.position):
            if effs is None:
                effs = list(doc.effectors)
            effs[i] = e.replace(position=p)
    kw: dict[str, Any] = {"q": st.q}
    if effs is not None:
        kw["effectors"] = tuple(effs)
    state.doc = doc.replace(**kw)


def _drop_uneditable(state: AppState, link: RetargetLink) -> None:
    """Constraints on sites the retargeter does not drive (set from a menu or the Effectors
    panel) are freed, with a notice."""
    from . import actions

    editable = link.session.editable
    bad = [e for e in state.doc.effectors if e.active and e.site not in editable]
    if not bad or (state.drag is not None and state.drag.site in {e.site for e in bad}):
        return
    doc = state.doc
    for e in bad:
        doc = doc.with_effector(e.replace(mode=FREE, rotation=None))
    actions.set_doc(state, doc)
    actions.commit(state, "free non-retarget effectors")
    state.info(f"In retarget mode only {', '.join(editable)} can be pinned or dragged")


def _follow(state: AppState, sess: RetargetSession) -> None:
    """Keep the camera on the pair while the clip plays (the user's pan offset is kept)."""
    fk = state.fk
    th = fk.joint_positions[sess.tgt_hips]
    mid = th + 0.5 * sess.side
    mid[2] = 0.0
    if sess.follow_mid is not None:
        state.camera.target = state.camera.target + (mid - sess.follow_mid)
    sess.follow_mid = mid


# ====================================================================== bake and export
def bake_motion(state: AppState):
    """Every frame of the clip retargeted with the current edits (pins, kept offsets).

    Returns:
        ``(motion on the target rig, RetargetReport, edits key)``.
    """
    link = current(state)
    sess = link.session
    rt = sess.rt
    items, key = _spec(state, link, dragging=False)
    t0 = time.perf_counter()
    T = sess.n_frames
    q = np.empty((T, rt.target.n_dof))
    targets = np.empty((T, len(rt.effector_sites), 3))
    iters = np.zeros(T, dtype=np.int64)
    crouch = np.zeros(T)
    st = None
    for t in range(T):
        q[t], st = rt.step(t, state=st, edits=_edits_at(sess, items, t, st))
        targets[t], iters[t], crouch[t] = st.targets, st.iterations, st.crouch
    report = rt.report(q, targets, iters, time.perf_counter() - t0, crouch)
    name = f"{sess.source_name}_{rt.target.name}"
    meta = {"source": sess.source_path or sess.source_name, "clip": name,
            "retarget_source": sess.source_path or sess.source_name,
            "retarget_report": report.to_dict(),
            "retarget_edits": [{"site": s, "kind": k, "frames": list(link.range_of(s)),
                                **({"offset_m": o.tolist()} if o is not None else {})}
                               for s, k, o in edit_rows(state)]}
    return Motion(rt.target, q, sess.fps, meta=meta), report, key


def bake(state: AppState) -> Motion | None:
    """Bake the edited retargeted motion (all frames) into the document (one undo step): a
    keyframe clip in ``Document.clips`` when the document has clips, and always
    ``RetargetLink.baked`` (exported by :func:`export_bvh`).

    Returns:
        The baked motion, or None after reporting an error.
    """
    from . import actions

    link = current(state)
    if link is None:
        return None
    try:
        motion, report, key = bake_motion(state)
    except _errors() as e:
        state.error(f"Cannot bake the retarget: {_describe(e)}")
        return None
    doc = state.doc.replace(retarget=link.replace(baked=motion, baked_key=key, report=report))
    name = str(motion.meta["clip"])
    if hasattr(doc, "clips"):
        try:
            from ..anim import clip_from_motion

            names = {c.name for c in doc.clips}
            base, i = name, 2
            while name in names:
                name, i = f"{base}_{i}", i + 1
            clip = clip_from_motion(motion, name=name)
            doc = doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips))
        except _errors() as e:
            state.error(f"Baked, but cannot make a clip of it: {_describe(e)}")
    actions.set_doc(state, doc)
    actions.commit(state, "bake retarget")
    state.info(f"Baked {motion.n_frames} frames as {name!r}"
               + (" (a clip)" if hasattr(doc, "clips") else ""))
    return motion


def default_export_path(state: AppState) -> Path:
    link = current(state)
    sess = link.session
    folder = Path(sess.source_path).parent if sess.source_path else Path.cwd()
    return folder / f"{sess.source_name}_{sess.rt.target.name}.bvh"


def export_bvh(state: AppState, path: str | Path | None = None) -> Path | None:
    """Write the edited retargeted motion as BVH (atomically; baked now unless the last bake
    has the current edits). Body95-like rigs BVH cannot hold are written with baked Euler
    channels (:func:`animik.io.bvh_compat.write_bvh_compatible`).

    Returns:
        The path written, or None after reporting an error.
    """
    from ..io.bvh_compat import write_bvh_compatible

    link = current(state)
    if link is None:
        return None
    path = Path(path).expanduser() if path else default_export_path(state)
    if path.suffix.lower() != ".bvh":
        path = path.with_name(path.name + ".bvh")
    try:
        _, key = _spec(state, link, dragging=False)
        motion = link.baked if link.baked is not None and link.baked_key == key else None
        if motion is None:
            motion = bake_motion(state)[0]
        _, layout = write_bvh_compatible(motion, path)
    except _errors() as e:
        state.error(f"Cannot export {path}: {_describe(e)}")
        return None
    state.info(f"Exported {motion.n_frames} frames to {path}"
               + (" (baked Euler channels)" if layout == "baked" else ""))
    return path


# ====================================================================== the view
def decorate_view(state: AppState, geom):
    """The view geometry in retarget mode: the source skeleton drawn beside the target, and
    only the editable effectors' handles (picking uses the same geometry)."""
    from .geometry import cylinder_instances, sphere_instances

    link = current(state)
    sess = link.session
    skel = state.skeleton
    fk = state.fk
    # handles of the sites the retargeter does not drive are hidden
    keep = np.array([s in sess.editable for s in skel.site_names], bool)
    if not keep.all() and len(geom.handle_sites) == skel.n_sites:
        hidden = np.asarray(geom.handle_pos[~keep], np.float32)
        fs = geom.free_spheres
        if len(fs) and len(hidden):
            match = (fs[:, None, 9:12] == hidden[None, :, :]).all(axis=2).any(axis=1)
            fs = fs[~match]
        geom = dataclasses.replace(geom, free_spheres=fs, handle_sites=geom.handle_sites[keep],
                                   handle_pos=geom.handle_pos[keep],
                                   handle_radius=geom.handle_radius[keep])
    pj, ps = sess.source_points(sess.frame, fk.joint_positions[sess.tgt_hips])
    par, child, sites = sess._bones
    a = np.concatenate([pj[par], pj[sess.motion.skeleton.site_joint[sites]]])
    b = np.concatenate([pj[child], ps[sites]])
    spheres = sphere_instances(pj[sess.body], sess.src_joint_r, SOURCE_JOINT)
    cyl = cylinder_instances(a, b, sess.src_bone_r, SOURCE_BONE)
    return dataclasses.replace(geom, spheres=np.concatenate([geom.spheres, spheres]),
                               cylinders=np.concatenate([geom.cylinders, cyl]))


def label_points(state: AppState) -> list[tuple[str, np.ndarray]]:
    """``[(text, world point)]``: names above the target and the source (the panel draws them)."""
    link = current(state)
    if link is None:
        return []
    sess = link.session
    fk = state.fk
    pj, _ = sess.source_points(sess.frame, fk.joint_positions[sess.tgt_hips])
    pj = pj[sess.body]
    top_t = fk.joint_positions[fk.joint_positions[:, 2].argmax()] + [0.0, 0.0, 0.18]
    top_s = pj[pj[:, 2].argmax()] + [0.0, 0.0, 0.18]
    return [(f"target: {sess.rt.target.name}", top_t), (f"source: {sess.source_name}", top_s)]


__all__ = ["LiveStats", "RetargetLink", "RetargetSession", "RetargetUI", "active", "bake",
           "bake_motion", "base_target", "clear_edit", "clear_edits", "current", "decorate_view",
           "edit_rows", "edits_of", "end_drag", "enter", "export_bvh", "frame_both", "leave",
           "on_key_press", "open_panel", "pin", "seek", "set_playing", "set_range", "step_frames",
           "ui_of", "update"]
