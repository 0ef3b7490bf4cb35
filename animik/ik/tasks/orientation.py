"""Site pose task: position (3 rows, m) then orientation (3 rows, rad).

The orientation error is the rotation vector of ``R_target R_siteᵀ`` in world axes (pairs with
the world angular Jacobian rows; seed C's link-frame ``R_siteᵀ R_target`` is the same rotation
in the link's axes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...rotations import matrix_to_rotvec
from .base import Task, TaskFrames


@dataclass(frozen=True, eq=False)
class SitePoseTask(Task):
    """A site's world position and orientation to a target pose.

    Attributes:
        name: the site name. site: its index. target: ``(3,)`` m. rotation: ``(3, 3)``.
        weight: row weight. pinned: True when the target is the site's own start pose.
    """

    name: str
    site: int
    target: np.ndarray
    rotation: np.ndarray
    weight: float = 1.0
    pinned: bool = False
    rows: int = 6
    kind: str = "site"

    def compute_error(self, frames: TaskFrames) -> np.ndarray:
        ep = self.target - frames.site_positions[self.site]
        er = matrix_to_rotvec(self.rotation @ frames.site_rotations[self.site].T)
        return np.concatenate([ep, er])

    def compute_jacobian(self, frames: TaskFrames) -> np.ndarray:
        return frames.site_jacobians[self.site].copy()

    def error_norms(self, error: np.ndarray) -> tuple[float, float]:
        return float(np.linalg.norm(error[:3])), float(np.linalg.norm(error[3:]))
