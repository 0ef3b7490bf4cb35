"""A motion: a skeleton and a sequence of poses sampled at a fixed frame rate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .errors import OptionError, ShapeError, ValueRangeError
from .skeleton import Skeleton, freeze


@dataclass(frozen=True, eq=False)
class Motion:
    """Immutable motion clip.

    Attributes:
        skeleton: the skeleton the poses belong to.
        q: ``(T, n_dof)`` poses, metres and radians (read-only).
        fps: frames per second (> 0).
        meta: read-only metadata (e.g. ``"bvh_unit_scale"``: metres per file unit, source path).
    """

    skeleton: Skeleton
    q: np.ndarray
    fps: float
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        q = np.array(self.q, dtype=float)
        if q.ndim != 2 or q.shape[1] != self.skeleton.n_dof:
            raise ShapeError(
                f"Motion.q must have shape (T, {self.skeleton.n_dof}), got {q.shape}"
            )
        if not np.all(np.isfinite(q)):
            raise ValueRangeError("Motion.q contains NaN or infinite values")
        fps = float(self.fps)
        if not np.isfinite(fps) or fps <= 0:
            raise OptionError(f"Motion.fps must be a positive number, got {self.fps!r}")
        q.setflags(write=False)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "fps", fps)
        object.__setattr__(self, "meta", freeze(self.meta))

    @property
    def n_frames(self) -> int:
        return int(self.q.shape[0])

    @property
    def frame_time(self) -> float:
        """Seconds per frame."""
        return 1.0 / self.fps

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame."""
        return max(self.n_frames - 1, 0) / self.fps

    def replace(self, **changes: Any) -> Motion:
        return replace(self, **changes)

    def __repr__(self) -> str:
        return (f"Motion({self.skeleton.name!r}: {self.n_frames} frames at {self.fps:g} fps, "
                f"{self.skeleton.n_dof} DoF)")
