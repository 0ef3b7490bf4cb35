"""The task interface: error rows ``target − current`` and their Jacobian at a pose."""

from __future__ import annotations

import numpy as np

from ...kinematics import Kinematics
from ...skeleton import Skeleton


class TaskFrames:
    """Kinematic quantities of one pose that tasks read (a thin view of a
    :class:`~animik.kinematics.Kinematics` workspace updated at ``q``).

    Attributes:
        skeleton: the skeleton. q: ``(n,)`` the pose.
        joint_rotations ``(J, 3, 3)``, joint_positions ``(J, 3)``: world frames of every joint.
        dof_axes ``(n, 3)``, dof_points ``(n, 3)``: world axis of every DoF and the point it acts
            at (seed C's Jacobian columns: revolute ``[w × (p − p_d); w]``, prismatic ``[w; 0]``).
        site_positions ``(S, 3)``, site_rotations ``(S, 3, 3)``, site_jacobians ``(S, 6, n)``:
            every site (computed on first access).
    """

    def __init__(self, kin: Kinematics, q: np.ndarray):
        self.skeleton: Skeleton = kin.skeleton
        self.q = q
        self.joint_rotations = kin.joint_rotations
        self.joint_positions = kin.joint_positions
        self.dof_axes = kin._wax
        self.dof_points = kin._wpt
        self._all: Kinematics | None = None

    @classmethod
    def at(cls, skel: Skeleton, q: np.ndarray) -> TaskFrames:
        """Frames of ``skel`` at ``q`` ``(n,)`` (validated)."""
        kin = Kinematics(skel, rows=0)
        q = np.ascontiguousarray(skel.check_q(q), dtype=float)
        kin.update(q)
        return cls(kin, q)

    def _sites(self) -> Kinematics:
        if self._all is None:
            self._all = Kinematics(self.skeleton, rows=6).update(self.q)
        return self._all

    @property
    def site_positions(self) -> np.ndarray:
        return self._sites().site_positions

    @property
    def site_rotations(self) -> np.ndarray:
        return self._sites().site_rotations

    @property
    def site_jacobians(self) -> np.ndarray:
        return self._sites().jacobian.reshape(self.skeleton.n_sites, 6, self.skeleton.n_dof)


class Task:
    """One IK task. Subclasses set :attr:`name`, :attr:`rows`, :attr:`weight`, :attr:`kind`.

    Attributes:
        name: key of the task in ``IKResult.error`` (the site name for site tasks).
        rows: number of error rows.
        weight: row weight (> 0) — solvers work on ``weight · error`` and ``weight · J``.
        kind: how FIK runs it: ``"site"`` (site pose rows), ``"points"`` (a weighted combination
            of body points, :meth:`points`), ``"null"`` (a null-space term of FIK, never a
            primary row), ``"generic"`` (only the generic solvers).
    """

    # (annotations only: subclasses are dataclasses that declare these as fields or properties)
    name: str
    rows: int
    weight: float
    kind: str

    def compute_error(self, frames: TaskFrames) -> np.ndarray:
        """``(rows,)`` unweighted error ``target − current`` at the frames' pose."""
        raise NotImplementedError

    def compute_jacobian(self, frames: TaskFrames) -> np.ndarray:
        """``(rows, n)`` unweighted ``d current / dq`` (so ``error ≈ J dq`` removes the error)."""
        raise NotImplementedError

    def error_norms(self, error: np.ndarray) -> tuple[float, float]:
        """``(position error m, angle error rad)`` of an unweighted error (convergence test)."""
        return float(np.linalg.norm(error)), 0.0

    def points(self, skel: Skeleton) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``kind == "points"``: ``(joint (P,), offset (P, 3) m, coefficient (P,))`` — the
        task's current value is ``Σ_p coef_p · (world point p)``; such a task also has
        ``axes`` (its rows: a tuple of 0/1/2 for x/y/z) and ``target`` ``(3,)`` (m), which is
        all FIK's compiled point block needs (see :mod:`animik.ik.tasks.com`)."""
        raise NotImplementedError(f"task {self.name!r} is not a point-combination task")

    def with_target(self, value) -> Task:
        """The same task with a new target (validated), for per-frame updates."""
        raise NotImplementedError(f"task {self.name!r} has no target to change")
