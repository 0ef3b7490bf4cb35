"""Centre-of-mass task: the whole-body centre of mass to a target, on ``xy`` or ``xyz``.

``solve_ik(skel, q0, targets, com=(x, y))`` (ground projection: balance over a support
polygon) or ``com=(x, y, z)``; ``weights={"com": w}``. The current value is
``Σ_j m_j (R_j c_j + p_j) / M`` (``skel.masses``, ``skel.coms``); its Jacobian column for DoF
``d`` of joint ``j`` is the rigid motion of the mass of ``j``'s subtree
(:func:`animik.kinematics.com_jacobian`). FIK runs it in its compiled loop as a
point-combination block (one point per segment with mass, coefficient ``m_j / M``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..._kernels import point_jacobian, point_sums
from ...errors import OptionError, ShapeError, ValueRangeError
from ...kinematics import com_points
from ...skeleton import Skeleton
from .base import Task, TaskFrames

KEYWORD = "com"
NAME = "com"


@dataclass(frozen=True, eq=False)
class ComTask(Task):
    """Whole-body centre of mass to ``target`` on ``axes``.

    Attributes:
        target: ``(3,)`` m (entries off ``axes`` unused). axes: ``(r,)`` int, 0/1/2 for x/y/z
            (``(0, 1)``: the ground projection). weight: row weight.
    """

    target: np.ndarray
    axes: tuple[int, ...] = (0, 1, 2)
    weight: float = 1.0
    name: str = NAME
    kind: str = "points"

    @property
    def rows(self) -> int:  # type: ignore[override]
        return len(self.axes)

    def points(self, skel: Skeleton) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return com_points(skel)

    def _sums(self, frames: TaskFrames):
        skel = frames.skeleton
        pj, po, pc = com_points(skel)
        J = skel.n_joints
        S, A, x = np.empty((J, 3)), np.empty(J), np.empty(3)
        point_sums(frames.joint_rotations, frames.joint_positions,
                   np.ascontiguousarray(skel.parents, dtype=np.int64), pj, po, pc, S, A, x)
        return S, A, x

    def compute_error(self, frames: TaskFrames) -> np.ndarray:
        x = self._sums(frames)[2]
        return (self.target - x)[list(self.axes)]

    def compute_jacobian(self, frames: TaskFrames) -> np.ndarray:
        skel = frames.skeleton
        S, A, _ = self._sums(frames)
        jac = np.empty((3, skel.n_dof))
        point_jacobian(S, A, np.ascontiguousarray(skel.dof_type, dtype=np.int8),
                       np.ascontiguousarray(skel.dof_joint, dtype=np.int64),
                       frames.dof_axes, frames.dof_points, jac)
        return jac[list(self.axes)]

    def with_target(self, value) -> ComTask:
        target, axes = parse_target(value)
        if axes != self.axes:
            raise OptionError(f"com target: cannot change axes {_axes_name(self.axes)} to "
                             f"{_axes_name(axes)} on a prepared problem")
        return replace(self, target=target)


def _axes_name(axes) -> str:
    return "".join("xyz"[a] for a in axes)


def parse_target(value) -> tuple[np.ndarray, tuple[int, ...]]:
    """``(x, y)`` → xy only; ``(x, y, z)`` → xyz. Returns ``(target (3,), axes)``."""
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"com must be 2 (x, y) or 3 (x, y, z) numbers, got {value!r}") from None
    if v.shape not in ((2,), (3,)):
        raise ShapeError(f"com must have shape (2,) (x, y: ground projection) or (3,) "
                         f"(x, y, z), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueRangeError(f"com target contains NaN or infinite values: {v}")
    t = np.zeros(3)
    t[: len(v)] = v
    t.setflags(write=False)
    return t, tuple(range(len(v)))


def from_argument(skel: Skeleton, q0: np.ndarray, value) -> ComTask:
    """The task of ``com=value`` (validated; the skeleton must have mass)."""
    com_points(skel)  # raises ShapeError for a massless skeleton
    target, axes = parse_target(value)
    return ComTask(target, axes)
