"""View state of the animation editors (no GL): the dope sheet's key selection, time window and
drag, the graph editor's curves and view, the key clipboard, onion skinning and the background
tasks. ``AppState.editing`` holds one :class:`EditingUI`; none of it is undone (the keys
themselves are in the document).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..anim.selection import KeyClipboard, KeyRef
from .tasks import TaskRunner

SUMMARY = ("summary", "")  # the dope sheet's summary row (every track)


@dataclass
class TimeWindow:
    """The visible time range of a time axis (zoom and pan), s.

    Attributes:
        start: time at the left edge; length: visible duration, or None for the whole clip.
    """

    start: float = 0.0
    length: float | None = None

    def span(self, end: float) -> tuple[float, float]:
        """``(t0, t1)`` shown on a timeline whose clip ends at ``end``."""
        n = end if self.length is None else self.length
        return self.start, self.start + max(n, 1e-3)


@dataclass
class DopeSheetView:
    """Where the dope sheet was last drawn (window pixels, origin top-left).

    Attributes:
        x0, x1: the key area's left and right edges; t0, t1: the times there, s.
        top: top of the ruler; bottom: bottom of the key area; ruler_bottom: below the ruler.
        rows: ``[(row, y_centre)]`` of the visible rows; row is :data:`SUMMARY` or
            ``(kind, name)`` of a track.
        scroll: ``(x0, y0, x1, y1)`` of the horizontal scroll bar.
    """

    x0: float
    x1: float
    t0: float
    t1: float
    top: float
    bottom: float
    ruler_bottom: float
    rows: list[tuple[tuple[str, str], float]] = field(default_factory=list)
    scroll: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)

    def x_of(self, t: float) -> float:
        return self.x0 + (self.x1 - self.x0) * (float(t) - self.t0) / max(self.t1 - self.t0, 1e-9)

    def t_of(self, x: float) -> float:
        return self.t0 + (float(x) - self.x0) / max(self.x1 - self.x0, 1.0) * (self.t1 - self.t0)

    def row_y(self, row: tuple[str, str]) -> float:
        return next(y for r, y in self.rows if r == row)


@dataclass
class KeyDrag:
    """A drag on the dope sheet or graph editor in progress.

    Attributes:
        kind: ``"move"`` / ``"scale"`` (selected keys in time), ``"box"`` (box select),
            ``"pan"`` (middle drag), ``"scrub"`` (the playhead), ``"scroll"`` (the scroll bar),
            ``"value"`` (graph editor: a key's value and time), ``"tangent"`` (a key's slope).
        x, y: the press, window pixels; cx, cy: the mouse now.
        add: shift held at the press (add to the selection).
        start: the time window's start at the press (pan / scroll).
        key: the graph key dragged: ``(joint, column, time)``.
        moved: the mouse moved since the press.
    """

    kind: str
    x: float
    y: float
    cx: float = 0.0
    cy: float = 0.0
    add: bool = False
    start: float = 0.0
    key: tuple[str, int, float] | None = None
    moved: bool = False


@dataclass
class GraphView:
    """Where the graph editor was last drawn and its value range.

    Attributes:
        x0, x1, y0, y1: the plot area, window pixels (y0 top); t0, t1: its times, s;
        v0, v1: its values (bottom, top).
    """

    x0: float
    x1: float
    y0: float
    y1: float
    t0: float
    t1: float
    v0: float
    v1: float

    def x_of(self, t: float) -> float:
        return self.x0 + (self.x1 - self.x0) * (float(t) - self.t0) / max(self.t1 - self.t0, 1e-9)

    def t_of(self, x: float) -> float:
        return self.t0 + (float(x) - self.x0) / max(self.x1 - self.x0, 1.0) * (self.t1 - self.t0)

    def y_of(self, v: float) -> float:
        return self.y1 - (self.y1 - self.y0) * (float(v) - self.v0) / max(self.v1 - self.v0, 1e-12)

    def v_of(self, y: float) -> float:
        return self.v0 + (self.y1 - float(y)) / max(self.y1 - self.y0, 1.0) * (self.v1 - self.v0)


@dataclass
class OnionSkin:
    """Ghost poses around the playhead.

    Attributes:
        enabled: draw them.
        before, after: how many ghosts before / after the playhead.
        step: frames between ghosts.
    """

    enabled: bool = False
    before: int = 2
    after: int = 2
    step: int = 5


@dataclass
class EditingUI:
    """The animation editors' view state (``AppState.editing``).

    Attributes:
        selection: the selected keys of the current clip.
        clipboard: keys copied (Ctrl+C), pasted at the playhead (Ctrl+V).
        window: the dope sheet's and graph editor's time window (zoom / pan).
        drag: the drag in progress in either editor.
        dope: where the dope sheet was drawn; graph: where the graph editor was drawn.
        graph_dofs: ``[(joint, column)]`` curves shown (empty: the selected joint's DoFs);
        graph_range: ``(v0, v1)`` the graph's value range (None: fit the curves).
        graph_key: the graph editor's selected key ``(joint, column, time)``.
        focused: the dope sheet or graph editor has the keyboard (Delete, Ctrl+C / V go to it).
        onion: onion-skin settings.
        tasks: the background tasks (imports, key reduction, bakes).
        scale_factor: the dope sheet's "Scale" field; row_scroll: its first track row shown;
            followed_joint: the selected joint whose row it last scrolled to (graph_followed:
            the graph editor's list).
    """

    selection: frozenset[KeyRef] = frozenset()
    clipboard: KeyClipboard | None = None
    window: TimeWindow = field(default_factory=TimeWindow)
    drag: KeyDrag | None = None
    dope: DopeSheetView | None = None
    graph: GraphView | None = None
    graph_dofs: list[tuple[str, int]] = field(default_factory=list)
    graph_range: tuple[float, float] | None = None
    focused: bool = False
    onion: OnionSkin = field(default_factory=OnionSkin)
    tasks: TaskRunner = field(default_factory=TaskRunner)
    scale_factor: float = 2.0
    row_scroll: int = 0
    followed_joint: int | None = None
    graph_followed: int | None = None
    graph_key: tuple[str, int, float] | None = None


__all__ = ["SUMMARY", "DopeSheetView", "EditingUI", "GraphView", "KeyDrag", "OnionSkin",
           "TimeWindow"]
