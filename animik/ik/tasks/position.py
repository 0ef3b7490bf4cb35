"""Site position task: 3 rows, ``p_target − p_site`` (m)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Task, TaskFrames


@dataclass(frozen=True, eq=False)
class SitePositionTask(Task):
    """A site's world position to a target.

    Attributes:
        name: the site name. site: its index. target: ``(3,)`` m. weight: row weight.
        pinned: True when the target is the site's own position at the start pose.
    """

    name: str
    site: int
    target: np.ndarray
    weight: float = 1.0
    pinned: bool = False
    rows: int = 3
    kind: str = "site"

    def compute_error(self, frames: TaskFrames) -> np.ndarray:
        return self.target - frames.site_positions[self.site]

    def compute_jacobian(self, frames: TaskFrames) -> np.ndarray:
        return frames.site_jacobians[self.site, :3].copy()
