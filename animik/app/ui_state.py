"""View state of widgets that :class:`~animik.app.state.AppState` keeps between frames (no GL).

The timeline widget's layout and drag in progress (:mod:`animik.app.ui.timeline_panel` fills
them; tests read them to click on the tracks), and the base of a mode's panel choices
(``AppState.mode_ui``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ALL_TRACKS = "*"  # the timeline row of every track (animik.app.timeline.ALL)


@dataclass
class TimelineView:
    """Where the track view was drawn (window pixels, origin top-left).

    Attributes:
        x0, x1: the time axis: ``t = 0`` at ``x0``, ``t = end`` at ``x1``.
        top: top of the ruler; bottom: bottom of the tracks; rows: ``[(row, y_centre)]``.
        end: the time at ``x1``, s (the timeline's end unless zoomed); fps: frames per second.
        start: the time at ``x0``, s (0 unless zoomed or panned).
    """

    x0: float
    x1: float
    top: float
    bottom: float
    end: float
    fps: float
    rows: list[tuple[str, float]] = field(default_factory=list)
    start: float = 0.0

    def x_of(self, t):
        """Pixel x of time(s) ``t`` (a float, or an array for arrays)."""
        x = self.x0 + (self.x1 - self.x0) * (np.asarray(t, float) - self.start) / (self.end - self.start)
        return float(x) if np.ndim(x) == 0 else x

    def t_of(self, x: float) -> float:
        return self.start + (float(x) - self.x0) / max(self.x1 - self.x0, 1.0) * (self.end - self.start)

    def row_y(self, row: str) -> float:
        return next(y for r, y in self.rows if r == row)


@dataclass
class TimelineDrag:
    """A drag on the timeline's tracks in progress.

    Attributes:
        kind: ``"scrub"`` (the playhead) or ``"key"`` (a key mark).
        t: the dragged key's time, s; row: its timeline row; to: where it would go, s.
        moved: the mouse moved since the press.
    """

    kind: str
    t: float = 0.0
    row: str = ALL_TRACKS
    to: float = 0.0
    moved: bool = False


@dataclass
class ModeUI:
    """Base of a mode's panel choices (``AppState.mode_ui[name]``; view state, not undone)."""

    show: bool = False
    focus: bool = False
