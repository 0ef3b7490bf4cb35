"""The app's state: one mutable :class:`AppState` around an immutable, undoable :class:`Document`.

The *document* is everything a user edits and an undo step restores: the skeleton and where it
came from, the pose ``q``, every effector's mode and target, the solver settings, and the
keyframe clips with the current clip and the playhead time. Edits
replace ``state.doc`` with a new :class:`Document` (they are cheap: arrays are shared) and
:func:`animik.app.actions.commit` records it in the :class:`History`.

Everything else in :class:`AppState` is view or session state (camera, selection, the drag in
progress, plots, messages) and is not undone. No GL here: renderers and panels read this state;
:mod:`animik.app.actions` and :mod:`animik.app.controller` write it.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..anim import Clip
from ..kinematics import FKResult, forward_kinematics
from ..motion import Motion
from ..skeleton import Skeleton
from .camera import OrbitCamera

FREE, TARGET, PINNED = "free", "target", "pinned"
MODES = (FREE, TARGET, PINNED)

LIMIT_EPS = 1e-4  # rad / m: a DoF this close to a finite limit counts as "at the limit"


@dataclass(frozen=True, eq=False)
class Effector:
    """One effector site and its IK constraint.

    Attributes:
        site: site name.
        mode: ``"free"`` (no constraint; the handle sits on the site), ``"target"`` (a goal the
            IK pulls the site to) or ``"pinned"`` (held where it was pinned).
        position: ``(3,)`` target position, m (meaningful when not free).
        rotation: ``(3, 3)`` target rotation for a 6-D target (position + orientation), else None.
        weight: task weight (> 0).
    """

    site: str
    mode: str = FREE
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"effector mode must be one of {MODES}, got {self.mode!r}")
        p = np.array(self.position, dtype=float)
        p.setflags(write=False)
        object.__setattr__(self, "position", p)
        if self.rotation is not None:
            r = np.array(self.rotation, dtype=float)
            r.setflags(write=False)
            object.__setattr__(self, "rotation", r)

    @property
    def active(self) -> bool:
        return self.mode != FREE

    @property
    def oriented(self) -> bool:
        return self.rotation is not None

    def replace(self, **kw: Any) -> Effector:
        return dataclasses.replace(self, **kw)

    def same_as(self, other: Effector) -> bool:
        return (self.site == other.site and self.mode == other.mode
                and np.array_equal(self.position, other.position)
                and (self.rotation is None) == (other.rotation is None)
                and (self.rotation is None or np.array_equal(self.rotation, other.rotation))
                and self.weight == other.weight)


@dataclass(frozen=True, eq=False)
class SolverSettings:
    """IK settings applied live.

    Attributes:
        name: solver name (a key of :data:`animik.ik.SOLVERS`).
        iterations: iteration budget per frame (the solver's ``max_iterations``).
        options: ``{solver name: {option: value}}``: each solver keeps its own settings, so
            switching back and forth loses nothing; only the current solver's are used and saved.
    """

    name: str = "fik"
    iterations: int = 20
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(
            {k: MappingProxyType(dict(v)) for k, v in self.options.items()}))

    @property
    def current(self) -> Mapping[str, Any]:
        """Options of the current solver."""
        return self.options.get(self.name, MappingProxyType({}))

    def with_option(self, key: str, value: Any) -> SolverSettings:
        opts = {k: dict(v) for k, v in self.options.items()}
        opts.setdefault(self.name, {})[key] = value
        return dataclasses.replace(self, options=opts)

    def without_option(self, key: str) -> SolverSettings:
        opts = {k: dict(v) for k, v in self.options.items()}
        opts.get(self.name, {}).pop(key, None)
        return dataclasses.replace(self, options=opts)

    def replace(self, **kw: Any) -> SolverSettings:
        return dataclasses.replace(self, **kw)

    def same_as(self, other: SolverSettings) -> bool:
        return (self.name == other.name and self.iterations == other.iterations
                and {k: dict(v) for k, v in self.options.items()}
                == {k: dict(v) for k, v in other.options.items()})


@dataclass(frozen=True, eq=False)
class Document:
    """The undoable part of the app state.

    Attributes:
        skeleton: the character.
        rig: where it came from: a built-in rig name or a file path (``.toml`` rig or ``.bvh``).
        q: ``(n_dof,)`` pose, rad / m (read-only).
        effectors: one :class:`Effector` per site, in site order.
        solver: the IK settings.
        motion: the BVH motion when the rig came from a BVH file, else None.
        frame: the BVH frame the pose was last taken from.
        name: scene name (window title, default file name).
        clips: keyframe clips (:class:`animik.anim.Clip` on ``skeleton``), names unique.
        clip: index of the current clip in ``clips`` (-1: none).
        time: the playhead, s (a frame time ``i / fps`` of the current clip).
        retarget: retarget mode (:class:`animik.app.retarget_mode.RetargetLink`: the motion
            retargeted onto ``skeleton`` every frame, and the edits layered on it), or None.
    """

    skeleton: Skeleton
    rig: str
    q: np.ndarray
    effectors: tuple[Effector, ...]
    solver: SolverSettings = field(default_factory=SolverSettings)
    motion: Motion | None = None
    frame: int = 0
    name: str = ""
    clips: tuple[Clip, ...] = ()
    clip: int = -1
    time: float = 0.0
    retarget: Any = None

    def __post_init__(self) -> None:
        clips = tuple(self.clips)
        object.__setattr__(self, "clips", clips)
        if not clips:
            object.__setattr__(self, "clip", -1)
        elif not 0 <= self.clip < len(clips):
            raise ValueError(f"clip must be an index into the {len(clips)} clips, got {self.clip}")
        object.__setattr__(self, "time", float(self.time))
        q = np.array(self.q, dtype=float)
        if q.shape != (self.skeleton.n_dof,):
            raise ValueError(f"q must have shape ({self.skeleton.n_dof},), got {q.shape}")
        q.setflags(write=False)
        object.__setattr__(self, "q", q)
        eff = tuple(self.effectors)
        if tuple(e.site for e in eff) != self.skeleton.site_names:
            raise ValueError("effectors must list every site of the skeleton, in site order")
        object.__setattr__(self, "effectors", eff)

    @classmethod
    def new(cls, skeleton: Skeleton, rig: str, q: np.ndarray | None = None, **kw: Any) -> Document:
        """A document with every effector free, at ``q`` (default: the rest pose)."""
        q = skeleton.rest_q if q is None else q
        fk = forward_kinematics(skeleton, q)
        eff = tuple(Effector(s, FREE, fk.site_positions[i]) for i, s in enumerate(skeleton.site_names))
        return cls(skeleton, rig, q, eff, **kw)

    def replace(self, **kw: Any) -> Document:
        return dataclasses.replace(self, **kw)

    def effector(self, site: str) -> Effector:
        return self.effectors[self.skeleton.site_index(site)]

    def with_effector(self, eff: Effector) -> Document:
        i = self.skeleton.site_index(eff.site)
        effs = list(self.effectors)
        effs[i] = eff
        return self.replace(effectors=tuple(effs))

    def same_as(self, other: Document) -> bool:
        """Equal content (used to skip no-op history entries)."""
        return np.array_equal(self.q, other.q) and self.same_but_q(other)

    @property
    def current_clip(self) -> Clip | None:
        return self.clips[self.clip] if self.clips else None

    def with_clip(self, clip: Clip) -> Document:
        """The document with the current clip replaced by ``clip``."""
        clips = list(self.clips)
        clips[self.clip] = clip
        return self.replace(clips=tuple(clips))

    def same_but_q(self, other: Document) -> bool:
        """Equal in everything but the pose."""
        return (self.skeleton is other.skeleton and self.rig == other.rig
                and self.frame == other.frame
                and self.motion is other.motion and self.name == other.name
                and self.clip == other.clip and self.time == other.time
                and len(self.clips) == len(other.clips)
                and all(a is b for a, b in zip(self.clips, other.clips, strict=True))
                and all(a.same_as(b) for a, b in zip(self.effectors, other.effectors, strict=True))
                and self.solver.same_as(other.solver)
                and self.retarget is other.retarget)


class History:
    """Linear undo/redo of :class:`Document` snapshots (each entry is the state after an edit)."""

    def __init__(self, doc: Document, limit: int = 500):
        self.entries: list[tuple[str, Document]] = [("open", doc)]
        self.index = 0
        self.limit = limit

    @property
    def current(self) -> Document:
        return self.entries[self.index][1]

    def push(self, label: str, doc: Document) -> bool:
        """Record ``doc`` after an edit; returns False (nothing recorded) if nothing changed."""
        if doc.same_as(self.current):
            return False
        del self.entries[self.index + 1:]
        self.entries.append((label, doc))
        if len(self.entries) > self.limit:
            del self.entries[0]
        self.index = len(self.entries) - 1
        return True

    def amend(self, doc: Document) -> bool:
        """Replace the current entry by ``doc`` if only the pose differs (the IK settling after
        an edit belongs to that edit: undo/redo then restore the settled pose)."""
        cur = self.current
        if doc is cur or not doc.same_but_q(cur):
            return False
        self.entries[self.index] = (self.entries[self.index][0], doc)
        return True

    def can_undo(self) -> bool:
        return self.index > 0

    def can_redo(self) -> bool:
        return self.index < len(self.entries) - 1

    def undo(self) -> tuple[str, Document] | None:
        if not self.can_undo():
            return None
        label = self.entries[self.index][0]
        self.index -= 1
        return label, self.current

    def redo(self) -> tuple[str, Document] | None:
        if not self.can_redo():
            return None
        self.index += 1
        return self.entries[self.index]

    def reset(self, doc: Document, label: str = "open") -> None:
        self.entries = [(label, doc)]
        self.index = 0


@dataclass
class Drag:
    """A handle drag in progress (one undoable edit from press to release).

    Attributes:
        kind: ``"move"`` (translate the target) or ``"rotate"`` (turn a 6-D target on a ring).
        site: the dragged effector's site.
        start_doc: the document when the drag began (Esc restores it).
        start_position: ``(3,)`` target position at the press.
        plane_normal: ``(3,)`` normal of the drag plane (the view direction at the press).
        grab_offset: ``(3,)`` target minus the press point on the plane.
        axis: ring axis index (rotate) or the constrained world axis (move), or -1.
        start_rotation: target rotation at the press (rotate).
        start_angle: screen angle of the press around the handle (rotate), rad.
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
    """The IK problem and the solver's warm-start state between frames (not undone)."""

    key: Any = None
    problem: Any = None
    solver_state: Any = None
    last_result: Any = None
    solved_version: int = -1
    converged: bool = False
    failed: str = ""  # message of the last solver exception (retry when settings change)


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
    drag: Drag | None = None
    keys_down: set[int] = field(default_factory=set)
    scene_path: Path | None = None
    save_path: Path | None = None
    messages: list[Message] = field(default_factory=list)
    pin_on_release: bool = False
    live_ik: bool = True
    handle_px: float = 9.0  # handle radius on screen, pixels
    show_shadow: bool = False  # contact shadow on the ground (costs ~1 ms on software GL)
    show_file_browser: bool = False
    browser_mode: str = "open"  # "open" | "save" | "export" (a clip) | "import" (a BVH as a clip)
    browser_dir: Path = field(default_factory=Path.cwd)
    browser_name: str = ""  # file name typed in the browser
    show_help: bool = False
    browser_tolerance: bool = False  # Import BVH: reduce keys (else one key per frame)
    import_tolerance_deg: float = 0.5
    import_position_tolerance_mm: float = 5.0
    playing: bool = False
    loop: bool = True
    play_clock: float = 0.0
    auto_key: bool = False
    selected_key: tuple[float, str] | None = None
    timeline: Any = None  # the timeline widget's drag in progress (ui/timeline_panel.py)
    timeline_view: Any = None  # where the timeline's tracks were last drawn (TimelineView)
    drive: Any = None  # drive mode (app/drive_mode.py DriveSession: the balance MPC), or None
    rename_buffer: str | None = None  # the clip name being typed
    ui_rects: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)  # a few
    # widgets' last screen rectangles (x0, y0, x1, y1), for tests that click them
    retarget_ui: Any = None  # the Retarget panel's choices (retarget_mode.RetargetUI), lazily
    context_site: str | None = None  # right-clicked handle: its context menu is open
    quit_requested: bool = False
    stats: Stats = field(default_factory=Stats)
    ik: IKCache = field(default_factory=IKCache)
    _fk_key: Any = field(default=None, repr=False)
    _fk: FKResult | None = field(default=None, repr=False)

    @property
    def skeleton(self) -> Skeleton:
        return self.doc.skeleton

    @property
    def fk(self) -> FKResult:
        """Forward kinematics of the current pose (cached until ``doc.q`` changes)."""
        key = (id(self.doc.skeleton), self.doc.q.tobytes())
        if self._fk_key != key:
            self._fk = forward_kinematics(self.doc.skeleton, self.doc.q)
            self._fk_key = key
        return self._fk

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

    def default_save_path(self) -> Path:
        if self.save_path is not None:
            return self.save_path
        if self.scene_path is not None:
            return self.scene_path
        name = (self.doc.name or self.doc.skeleton.name or "scene").replace("/", "_")
        return Path.cwd() / f"{name}.scene.toml"
