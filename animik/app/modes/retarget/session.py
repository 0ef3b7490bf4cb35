"""Retarget mode's data: the session (the prepared :class:`~animik.retarget.Retargeter`, the
source, playback and live numbers: view state), the undoable :class:`RetargetLink` the
document holds while in retarget mode, and the Retarget panel's choices."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from ....kinematics import forward_kinematics
from ....motion import Motion
from ....retarget import Retargeter, RetargetReport, RetargetState
from ....semantics.contacts import FootState
from ...document import Document, ModeData
from ...state import AppState
from ...ui_state import ModeUI

NAME = "retarget"  # the mode's registry name
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


@dataclass
class RetargetUI(ModeUI):
    """The Retarget panel's choices (``AppState.mode_ui["retarget"]``; not undone).

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
            drawn (``"menu_retarget"``, ``"retarget"``, ``"play"``, ``"bake"``):
            tests click them.
    """

    source_path: str = ""
    target: str = "body95"
    target_file: str = ""
    mapping_path: str = ""
    keep_edits: bool = True
    export_path: str = ""
    rects: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)


def ui_of(state: AppState) -> RetargetUI:
    """The Retarget panel's choices (made when first asked for)."""
    ui = state.mode_ui.get(NAME)
    if not isinstance(ui, RetargetUI):
        ui = RetargetUI()
        state.mode_ui[NAME] = ui
    return ui


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
        self.state: RetargetState | None = None  # the solve of `frame`
        self.input_state: RetargetState | None = None  # what `frame` was solved from (None: cold)
        self.solved_key: tuple | None = None
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
        return dataclasses.replace(cur, frame=-1, feet=tuple(FootState() for _ in cur.feet),
                                   crouch=0.0)

    def errors_mm(self, q: np.ndarray, st) -> np.ndarray:
        """Distance of each shown effector to its target this frame, mm."""
        fk = st.fk if (st.fk is not None and st.q is q) else forward_kinematics(self.rt.solve_skeleton, q)
        ach = fk.site_positions[self._solve_idx]
        return 1e3 * np.linalg.norm(ach - np.asarray(st.targets)[self._shown_k], axis=1)

    def target_of(self, st, site: str) -> np.ndarray:
        return np.array(st.targets[self._eff_k[site]])


@dataclass(frozen=True, eq=False)
class RetargetLink(ModeData):
    """Retarget mode's part of a :class:`~animik.app.document.Document` (``Document.mode``;
    immutable, undoable).

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
        previous: the document before retarget mode was entered (its clips, pins and pose
            come back on leaving, see :func:`~animik.app.modes.retarget.leave`), or None.
    """

    name: ClassVar[str] = NAME

    session: RetargetSession
    offsets: Mapping[str, np.ndarray] = field(default_factory=dict)
    ranges: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    baked: Motion | None = None
    baked_key: tuple | None = None
    report: RetargetReport | None = None
    previous: Document | None = None

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
    mode = state.doc.mode
    return mode if isinstance(mode, RetargetLink) else None


def active(state: AppState) -> bool:
    return current(state) is not None

