"""The physics overlay's settings and last evaluation (data only; :mod:`animik.app.physics`
evaluates it every frame and draws it)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..skeleton import Skeleton

HISTORY = 300  # frames in the margin plot


@dataclass
class PhysicsView:
    """Physics overlay settings and the last evaluation.

    Attributes:
        show: draw the overlay and evaluate every frame.
        mu: friction coefficient. contact_height: an area touches the floor below this (m).
        error: why there is nothing to show (no contact geometry...), or "".
        com, zmp: ``(3,)`` m; polygon ``(k, 2)``; wrench ``(6,)``; margin m; normal N;
        ratio: friction ratio; feasible; reasons (text); in_contact ``(A,)``.
        margins: recent margins (cm) for the plot (NaN in flight).
        supports, supports_fps: the supports off the floor the timeline marks were checked with
            (:class:`animik.dynamics.supports.SupportSet`, ``--supports auto``) and the clip's
            frame rate; the overlay marks the active ones' points at the playhead.
        on_supports: names of the supports the displayed pose touches at the playhead (its
            verdict is then the contact-wrench-cone check's, not the floor's).
    """

    show: bool = False  # off until the user ticks it in the Physics panel (it draws over the body)
    mu: float = 0.7
    contact_height: float = 0.02
    error: str = ""
    com: np.ndarray | None = None
    zmp: np.ndarray | None = None
    polygon: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    wrench: np.ndarray | None = None
    margin: float = float("nan")
    normal: float = float("nan")
    ratio: float = float("nan")
    feasible: bool = True
    reasons: str = ""
    in_contact: np.ndarray | None = None
    area_names: tuple[str, ...] = ()
    margins: deque = field(default_factory=lambda: deque(maxlen=HISTORY))
    _poses: deque = field(default_factory=lambda: deque(maxlen=3))
    _skel: Skeleton | None = None
    stamp: int = 0  # bumped by every evaluation (the view cache's key)
    frame_time: float | None = None  # set by the physics mode: its smoothed frame time (s)
    supports: Any = None
    supports_fps: float = 0.0
    on_supports: tuple[str, ...] = ()  # supports touching the displayed pose (cone checked)
