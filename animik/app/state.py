"""The app's state: one mutable :class:`AppState` around the immutable, undoable
:class:`~animik.app.document.Document`.

Everything in :class:`AppState` but ``doc`` and ``history`` is view or session state (camera,
selection, the drag in progress, plots, messages, caches) and is not undone. It also keeps the
frame's kinematic snapshot (:class:`PoseKinematics`: forward kinematics of ``doc.q``, computed
once per pose and shared by the IK check, the view geometry and picking) and the view geometry
picking uses (:class:`ViewCache`). No GL here: renderers and panels read this state; the
action modules (:mod:`animik.app.edits`, :mod:`animik.app.timeline`, the modes) write it.

The document types are re-exported here (``from animik.app.state import Document, FREE``).
"""

from __future__ import annotations

import collections
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..ik.fik import PreparedFIK
from ..ik.prepared import PreparedSolver
from ..ik.result import IKResult
from ..kinematics import FKResult, forward_kinematics
from ..skeleton import Skeleton
from .camera import OrbitCamera
from .document import (
    FREE,
    LIMIT_EPS,
    MODES,
    PINNED,
    TARGET,
    Document,
    Effector,
    History,
    ModeData,
    SolverSettings,
)
from .editing_ui import EditingUI
from .instances import ViewGeometry
from .physics_view import PhysicsView
from .ui_state import ModeUI, TimelineDrag, TimelineView


@dataclass
class Drag:
    """A handle drag in progress (one undoable edit from press to release).

    Attributes:
        kind: ``"move"`` (translate the target), ``"rotate"`` (turn a 6-D target on a ring),
            ``"dof"`` (turn the selected joint's DoF ``axis`` on its gizmo ring) or ``"root"``
            (move the root's translational DoF ``axis`` along its gizmo arrow).
        site: the dragged effector's site (gizmo drags: the joint's name).
        start_doc: the document when the drag began (Esc restores it).
        start_position: ``(3,)`` target position at the press.
        plane_normal: ``(3,)`` normal of the drag plane (the view direction at the press).
        grab_offset: ``(3,)`` target minus the press point on the plane.
        axis: ring axis index (rotate) or the constrained world axis (move), or -1.
        start_rotation: target rotation at the press (rotate).
        start_angle: screen angle of the press around the handle (rotate), rad.
        start_value: the DoF's value at the press (gizmo drags).
        goal: the value the gizmo last asked for (gizmo drags; None before the first move):
            the physics mode tracks it instead of jumping to it.
    """

    kind: str
    site: str
    start_doc: Document
    start_position: np.ndarray
    plane_normal: np.ndarray
    grab_offset: np.ndarray
    axis: int = -1
    start_rotation: np.ndarray | None = None
    start_angle: float = 0.0
    moved: bool = False
    start_value: float = 0.0  # the DoF's value at the press ("dof" / "root" gizmo drags)
    goal: float | None = None


VIEW_MESH, VIEW_BONES, VIEW_XRAY = "mesh", "bones", "xray"
#: View modes of the character: its skinned mesh, its bones, or the mesh with the bones drawn
#: through it (x-ray). Without a mesh (``Document.mesh`` None) the bones are drawn in every mode.
VIEW_MODES = (VIEW_MESH, VIEW_BONES, VIEW_XRAY)
VIEW_MODE_LABELS = {VIEW_MESH: "Mesh", VIEW_BONES: "Bones", VIEW_XRAY: "Mesh + x-ray bones"}


@dataclass
class Message:
    level: str  # "error" | "info"
    text: str
    time: float = field(default_factory=time.monotonic)


class Stats:
    """Ring buffers of per-frame figures for the plot and the status bar."""

    def __init__(self, size: int = 600):
        self.size = size
        self.error_mm: collections.deque[float] = collections.deque(maxlen=size)
        self.iterations: collections.deque[float] = collections.deque(maxlen=size)
        self.ik_ms: collections.deque[float] = collections.deque(maxlen=size)
        self.frame_ms: collections.deque[float] = collections.deque(maxlen=size)
        self.frames = 0
        self.last_error_mm = 0.0
        self.last_iterations = 0
        self.last_ik_ms = 0.0
        self.fps = 0.0
        self.fk_passes = 0  # forward kinematics the app ran itself (not the solver's)
        self.view_builds = 0  # view geometries built (render and picking share them)
        self._t_fps = time.perf_counter()
        self._n_fps = 0

    def record(self, error_mm: float, iterations: int, ik_ms: float) -> None:
        self.frames += 1
        self.error_mm.append(error_mm)
        self.iterations.append(float(iterations))
        self.ik_ms.append(ik_ms)
        self.last_error_mm, self.last_iterations, self.last_ik_ms = error_mm, iterations, ik_ms

    def ik_ms_recent(self, n: int = 60) -> float:
        """Mean IK time per frame over the last ``n`` frames, ms (idle frames count as 0)."""
        if not self.ik_ms:
            return 0.0
        recent = list(self.ik_ms)[-n:]
        return float(sum(recent) / len(recent))

    def tick(self, frame_ms: float) -> None:
        self.frame_ms.append(frame_ms)
        self._n_fps += 1
        t = time.perf_counter()
        if t - self._t_fps >= 0.5:
            self.fps = self._n_fps / (t - self._t_fps)
            self._t_fps, self._n_fps = t, 0


@dataclass
class IKCache:
    """The prepared solver and its warm-start state between frames (not undone).

    Attributes:
        key: the skeleton's identity and the constrained ``(site, oriented, weight)`` the
            prepared solver was built for.
        settings: the :class:`SolverSettings` it was prepared with.
        prepared: ``animik.ik.prepare_problem(...)`` (``PreparedFIK`` or ``PreparedSolver``).
    """

    key: tuple | None = None
    settings: SolverSettings | None = None
    prepared: PreparedFIK | PreparedSolver | None = None
    solver_state: object | None = None  # the solver's own (FIK: filter states), passed back
    last_result: IKResult | None = None
    solved_version: int = -1
    converged: bool = False
    failed: str = ""  # message of the last solver exception (retry when settings change)


@dataclass(frozen=True, eq=False)
class PoseKinematics:
    """Forward kinematics of one pose: the frame's kinematic snapshot.

    Attributes:
        skeleton: the skeleton.
        q: ``(n_dof,)`` the (read-only) pose it is of.
        fk: its :class:`~animik.kinematics.FKResult`.
    """

    skeleton: Skeleton
    q: np.ndarray
    fk: FKResult


@dataclass
class ViewCache:
    """The last view geometry built and what it was built from (picking reuses it while the
    pose, the camera, the selection and the mode's view are unchanged).

    Attributes:
        key: what the geometry depends on (see :func:`animik.app.geometry.view_key`).
        geometry: the :class:`~animik.app.instances.ViewGeometry`.
    """

    key: tuple
    geometry: ViewGeometry


@dataclass
class AppState:
    """Everything the app holds. One instance per window (or per offscreen harness).

    Attributes:
        doc: the current document (replaced, never mutated).
        history: undo/redo.
        version: incremented on every document change not made by the IK itself (so the IK knows
            when the problem changed).
        camera: the 3-D view.
        view_rect: ``(x, y, w, h)`` of the 3-D viewport in window pixels, origin top-left.
        window_size: ``(w, h)`` of the window, pixels.
        selected_site / selected_joint / hover_site / hover_joint / hover_ring: selection and
            hover (names / indices / ring axis), or None.
        drag: the handle drag in progress, or None.
        keys_down: pyglet key symbols held (for X / Y / Z axis constraints).
        scene_path: the scene file the document came from (None: a rig or BVH).
        save_path: where Ctrl+S writes (default: ``scene_path`` or ``<name>.scene.toml``).
        messages: errors and notices shown in the banner.
        pin_on_release: a dropped handle becomes a pin instead of a target.
        live_ik: run the solver every frame.
        playing / loop / play_clock: playback of the current clip (the clock in s).
        auto_key: a handle drag or DoF edit keys the pose at the playhead.
        selected_key: ``(time, row)`` of the key mark selected on the timeline; ``row`` is
            ``"*"`` (all tracks), ``"@targets"`` (effector tracks) or a joint name.
        mode_ui: ``{mode name: its panel choices}`` (a :class:`~animik.app.ui_state.ModeUI`
            subclass per mode, made when first needed).
    """

    doc: Document
    history: History
    camera: OrbitCamera
    version: int = 0
    view_rect: tuple[int, int, int, int] = (0, 0, 1280, 800)
    window_size: tuple[int, int] = (1280, 800)
    selected_site: str | None = None
    selected_joint: int | None = None
    hover_site: str | None = None
    hover_joint: int | None = None
    hover_ring: int | None = None
    hover_gizmo: tuple[str, int] | None = None  # ("ring" | "arrow", index) of the joint gizmo
    scroll_tree_to: int | None = None  # joint the Skeleton tree scrolls to (once), from a view click
    drag: Drag | None = None
    keys_down: set[int] = field(default_factory=set)
    scene_path: Path | None = None
    save_path: Path | None = None
    messages: list[Message] = field(default_factory=list)
    pin_on_release: bool = False
    live_ik: bool = True
    handle_px: float = 9.0  # handle radius on screen, pixels
    view_mode: str = VIEW_MESH  # one of VIEW_MODES (the mesh when the document has one)
    show_shadow: bool = False  # contact shadow on the ground (costs ~1 ms on software GL)
    show_file_browser: bool = False
    browser_mode: str = "open"  # "open" | "save" | "export" (a clip) | "import" (a BVH as a clip)
    browser_dir: Path = field(default_factory=Path.cwd)
    write_dir: Path | None = None  # the folder of the last file written (save, export): where
    # the next save / export is proposed; None: the current working directory
    browser_name: str = ""  # file name typed in the browser
    show_help: bool = False
    browser_tolerance: bool = False  # Import BVH: reduce keys (else one key per frame)
    # Open: a .bvh opens as its own skeleton even when it is a built-in rig's hierarchy
    bvh_skeleton: bool = False
    import_tolerance_deg: float = 0.5
    import_position_tolerance_mm: float = 5.0
    playing: bool = False
    loop: bool = True
    follow_playback: bool = False  # the camera follows the body while the timeline plays
    follow_anchor: np.ndarray | None = None  # the body's centre at the last followed frame
    play_clock: float = 0.0
    auto_key: bool = False
    selected_key: tuple[float, str] | None = None
    timeline: TimelineDrag | None = None  # the timeline widget's drag in progress
    timeline_view: TimelineView | None = None  # where the timeline's tracks were last drawn
    rename_buffer: str | None = None  # the clip name being typed
    ui_rects: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)  # a few
    # widgets' last screen rectangles (x0, y0, x1, y1), for tests that click them
    mode_ui: dict[str, ModeUI] = field(default_factory=dict)
    physics: PhysicsView | None = None  # the physics overlay and its last evaluation
    context_site: str | None = None  # right-clicked handle: its context menu is open
    quit_requested: bool = False
    redraw_requested: bool = False  # set (from any thread) to have the window draw again
    # (it redraws only while something changes, see animik/app/pacing.py)
    editing: EditingUI = field(default_factory=EditingUI)  # dope sheet, graph editor, tasks
    stats: Stats = field(default_factory=Stats)
    ik: IKCache = field(default_factory=IKCache)
    view_cache: ViewCache | None = field(default=None, repr=False)
    _kin: PoseKinematics | None = field(default=None, repr=False)

    @property
    def skeleton(self) -> Skeleton:
        return self.doc.skeleton

    @property
    def kinematics(self) -> PoseKinematics:
        """The kinematic snapshot of the current pose (computed once per pose)."""
        k = self._kin
        doc = self.doc
        if k is not None and k.q is doc.q and k.skeleton is doc.skeleton:
            return k
        if k is not None and k.skeleton is doc.skeleton and np.array_equal(k.q, doc.q):
            k = PoseKinematics(doc.skeleton, doc.q, k.fk)  # the same pose in a new array
        else:
            k = PoseKinematics(doc.skeleton, doc.q, forward_kinematics(doc.skeleton, doc.q))
            self.stats.fk_passes += 1
        self._kin = k
        return k

    @property
    def fk(self) -> FKResult:
        """Forward kinematics of the current pose (:attr:`kinematics`)."""
        return self.kinematics.fk

    def adopt_kinematics(self, q: np.ndarray, fk: FKResult) -> None:
        """Take ``fk`` (computed elsewhere, e.g. by the solver, for exactly ``q``) as the
        snapshot of ``q`` when ``q`` is the document's pose, so it is not computed again."""
        if q is self.doc.q:
            self._kin = PoseKinematics(self.doc.skeleton, q, fk)

    def at_limit(self) -> np.ndarray:
        """``(J,)`` bool: joints with a DoF at (within LIMIT_EPS of) a finite limit."""
        skel, q = self.doc.skeleton, self.doc.q
        lo, hi = skel.lower, skel.upper
        dof_at = ((np.isfinite(lo) & (q <= lo + LIMIT_EPS)) | (np.isfinite(hi) & (q >= hi - LIMIT_EPS)))
        # A DoF with (almost) no range is always "at" its limits: not worth flagging.
        dof_at &= (hi - lo) > 4 * LIMIT_EPS
        out = np.zeros(skel.n_joints, dtype=bool)
        np.logical_or.at(out, skel.dof_joint, dof_at)
        return out

    def error(self, text: str) -> None:
        self.messages.append(Message("error", text))
        del self.messages[:-8]

    def info(self, text: str) -> None:
        self.messages.append(Message("info", text))
        del self.messages[:-8]

    def default_save_path(self, writable_scene: bool = True) -> Path:
        """Where Ctrl+S writes: ``save_path``, else the scene file (when ``writable_scene``),
        else ``<slug of the name>.scene.toml`` in :meth:`output_dir`."""
        if self.save_path is not None:
            return self.save_path
        if self.scene_path is not None and writable_scene:
            return self.scene_path
        return self.output_dir() / f"{safe_slug(self.doc.name or self.doc.skeleton.name)}.scene.toml"

    def output_dir(self) -> Path:
        """Where new files are proposed: the folder last written to, else the current working
        directory (never the package's ``scenes/`` or a source file's folder)."""
        d = self.write_dir
        return d if d is not None and d.is_dir() else Path.cwd()

    def mark_scene_path(self, path: Path | None, saved: bool = False) -> None:
        """``path`` is the scene file of the current document, just opened (its history entry
        remembers it, for undo / redo) or ``saved`` (so does the entry where it was opened)."""
        self.scene_path = path
        h = self.history
        k = self._marked_index() if saved else None
        for i in {h.index} | ({k} if k is not None else set()):
            h.notes[i]["scene_path"] = path

    def _marked_index(self) -> int | None:
        h = self.history
        for k in range(h.index, -1, -1):
            if "scene_path" in h.notes[k]:
                return k
        return None

    def restore_scene_path(self) -> None:
        """After undo / redo: the scene file of the document brought back."""
        k = self._marked_index()
        if k is not None:
            self.scene_path = self.history.notes[k]["scene_path"]


def safe_slug(name: str) -> str:
    """A file-name stem from a display name: letters, digits, ``.``, ``_`` and ``-`` only
    (``"default: body95 standing"`` -> ``"default_body95_standing"``); ``"scene"`` if empty."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("._-")
    return slug or "scene"


__all__ = ["FREE", "LIMIT_EPS", "MODES", "PINNED", "TARGET", "AppState", "Document", "Drag",
           "Effector", "History", "IKCache", "Message", "ModeData", "PoseKinematics",
           "SolverSettings", "Stats", "VIEW_BONES", "VIEW_MESH", "VIEW_MODES", "VIEW_MODE_LABELS",
           "VIEW_XRAY", "ViewCache", "safe_slug"]
