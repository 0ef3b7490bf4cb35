"""Pin task: a site held at its pose in the start pose ``q0`` (position, optionally rotation).

Pins outrank targets (default weight :data:`PIN_WEIGHT`): when a target is out of reach the
best-effort pose gives up the reach, not the pins (equal weights let a pulled hand drag pinned
feet along).
"""

from __future__ import annotations

import numpy as np

from .base import TaskFrames
from .orientation import SitePoseTask
from .position import SitePositionTask

PIN_WEIGHT = 10.0  # default row weight of pinned sites (targets: 1)


def pin(frames: TaskFrames, name: str, rotation: bool = False,
        weight: float = PIN_WEIGHT) -> SitePositionTask | SitePoseTask:
    """The task holding site ``name`` where it is in ``frames`` (the start pose)."""
    i = frames.skeleton.site_index(name)
    p = np.array(frames.site_positions[i])
    if rotation:
        return SitePoseTask(name, i, p, np.array(frames.site_rotations[i]), weight, pinned=True)
    return SitePositionTask(name, i, p, weight, pinned=True)
