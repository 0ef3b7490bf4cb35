"""Inverse dynamics, mass matrix, bias forces and whole-body momentum, batched.

All functions take poses ``q``, velocities ``qd`` and accelerations ``qdd`` of shape
``(..., n_dof)`` in animik's DoF order (rad, m, rad/s, m/s, ...) and use the segment mass data
of the skeleton (``masses`` kg, ``coms`` m in the joint frame, ``inertias`` kg m^2 about the
COM in the joint frame). Generalised forces are N m for rotation DoFs and N for translations.

The algorithms run in world-frame spatial algebra (see :mod:`animik.dynamics._kernels`):
recursive Newton-Euler for ``tau`` and the root wrench, the composite rigid body algorithm for
``M``. Seed D obtains ``M_b`` and ``c_b`` "by repeated inverse-dynamics calls"; the CRBA gives
the same matrix (checked in the tests) in one O(n d) pass.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import ShapeError, SkeletonError, ValueRangeError
from ..skeleton import Skeleton
from . import _kernels as K

GRAVITY = (0.0, 0.0, -9.81)


def model_args(skel: Skeleton) -> tuple:
    """Contiguous kernel arrays of a skeleton (cached on it, like the kinematics kernels')."""
    try:
        return skel.__dict__["_dynamics_args"]
    except KeyError:
        pass
    args = (
        np.ascontiguousarray(skel.parents, dtype=np.int64),
        np.ascontiguousarray(skel.offsets),
        np.ascontiguousarray(skel.rest_rotations),
        np.ascontiguousarray(skel.joint_dof_start, dtype=np.int64),
        np.ascontiguousarray(skel.dof_type, dtype=np.int8),
        np.ascontiguousarray(skel.dof_axis),
        np.ascontiguousarray(skel.masses),
        np.ascontiguousarray(skel.coms),
        np.ascontiguousarray(skel.inertias),
    )
    skel.__dict__["_dynamics_args"] = args  # frozen dataclass: cache like cached_property does
    return args


def _gravity(gravity: Any) -> np.ndarray:
    g = np.asarray(gravity, dtype=float)
    if g.shape != (3,):
        raise ShapeError(f"gravity must have shape (3,) (m/s^2), got {gravity!r}")
    if not np.isfinite(g).all():
        raise ValueRangeError(f"gravity must be 3 finite numbers (m/s^2), got {gravity!r}")
    return np.ascontiguousarray(g)


def _states(skel: Skeleton, *arrays: Any) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """Validate ``(..., n_dof)`` arrays, broadcast them, flatten the leading dims."""
    names = ("q", "qd", "qdd")
    checked = [skel.check_q(a, name=names[i]) for i, a in enumerate(arrays)]
    try:
        bc = np.broadcast_arrays(*checked)
    except ValueError as e:
        shapes = ", ".join(f"{names[i]} {a.shape}" for i, a in enumerate(checked))
        raise ShapeError(f"leading shapes do not broadcast: {shapes}") from e
    lead = bc[0].shape[:-1]
    B = int(np.prod(lead))
    # np.array copies: broadcast views are read-only (numba warns about them)
    return lead, [np.array(a.reshape(B, skel.n_dof), dtype=float) for a in bc]


class InverseDynamics(NamedTuple):
    """Result of :func:`rnea`.

    Attributes:
        tau: ``(..., n_dof)`` generalised forces (N m / N) in animik's DoF order.
        wrench: ``(..., 6)`` total external wrench the environment must apply to the root,
            ``(moment about the world origin N m; force N)`` in world axes. For a free root
            (3 slides + 3 hinges) it is the wrench behind the root's six ``tau`` rows
            (docs/dynamics.md); for a fixed root it is the base reaction.
    """

    tau: np.ndarray
    wrench: np.ndarray


def rnea(skel: Skeleton, q: Any, qd: Any, qdd: Any, gravity: Any = GRAVITY) -> InverseDynamics:
    """Recursive Newton-Euler inverse dynamics: generalised forces and the root wrench.

    Args:
        skel: the skeleton (its masses, COMs and inertias are used as they are).
        q, qd, qdd: ``(..., n_dof)`` poses, velocities, accelerations (broadcast together).
        gravity: ``(3,)`` m/s^2, world frame (Z up).

    Returns:
        :class:`InverseDynamics` with leading shape of the broadcast inputs.

    Raises:
        ShapeError: wrong trailing dimension, non-finite values, non-broadcastable shapes.
    """
    g = _gravity(gravity)
    lead, (qb, qdb, qddb) = _states(skel, q, qd, qdd)
    B, n = qb.shape
    tau = np.empty((B, n))
    wrench = np.empty((B, 6))
    K.rnea_batch(qb, qdb, qddb, g, *model_args(skel), tau, wrench)
    return InverseDynamics(tau.reshape(lead + (n,)), wrench.reshape(lead + (6,)))


def inverse_dynamics(skel: Skeleton, q: Any, qd: Any, qdd: Any,
                     gravity: Any = GRAVITY) -> np.ndarray:
    """Generalised forces ``tau (..., n_dof)`` that produce ``qdd`` at ``(q, qd)``.

    Floating-base recursive Newton-Euler: for a free root its DoF rows are the wrench the
    environment must supply (expressed on the root's slide / hinge axes; use :func:`rnea` for
    the same wrench in world axes). See :func:`rnea` for the arguments.
    """
    return rnea(skel, q, qd, qdd, gravity).tau


def mass_matrix(skel: Skeleton, q: Any) -> np.ndarray:
    """Joint-space inertia matrix ``M (..., n_dof, n_dof)`` (composite rigid body algorithm)."""
    q = skel.check_q(q)
    lead = q.shape[:-1]
    qb = np.ascontiguousarray(q.reshape(int(np.prod(lead)), skel.n_dof))
    B, n = qb.shape
    M = np.empty((B, n, n))
    par, off, rr, ds, dt, dax, m, c, ine = model_args(skel)
    K.crba_batch(qb, par, off, rr, ds, dt, dax,
                 np.ascontiguousarray(skel.dof_joint, dtype=np.int64), m, c, ine, M)
    return M.reshape(lead + (n, n))


def bias_forces(skel: Skeleton, q: Any, qd: Any, gravity: Any = GRAVITY) -> np.ndarray:
    """Velocity and gravity terms ``c(q, qd) = ID(q, qd, 0)`` ``(..., n_dof)`` (seed D)."""
    q = skel.check_q(q)
    return inverse_dynamics(skel, q, qd, np.zeros(skel.n_dof), gravity)


class Momentum(NamedTuple):
    """Whole-body centre of mass and momentum, world axes (see :func:`momentum`).

    Attributes:
        com: ``(..., 3)`` m. com_velocity: ``(..., 3)`` m/s.
        linear: ``(..., 3)`` kg m/s. angular: ``(..., 3)`` kg m^2/s about the COM
            (with ``linear``: the centroidal momentum).
    """

    com: np.ndarray
    com_velocity: np.ndarray
    linear: np.ndarray
    angular: np.ndarray


def momentum(skel: Skeleton, q: Any, qd: Any | None = None) -> Momentum:
    """Centre of mass, its velocity and the centroidal momentum for ``(..., n_dof)`` states.

    Raises:
        ShapeError: bad shapes. ValueRangeError: NaN / infinite values. SkeletonError: a
            skeleton of zero total mass.
    """
    if not skel.total_mass > 0.0:
        raise SkeletonError(f"skeleton {skel.name!r} has zero total mass: no centre of mass")
    if qd is None:
        qd = np.zeros(skel.n_dof)
    lead, (qb, qdb) = _states(skel, q, qd)
    out = np.empty((qb.shape[0], 12))
    K.momentum_batch(qb, qdb, *model_args(skel), out)
    out = out.reshape(lead + (12,))
    return Momentum(out[..., 0:3], out[..., 3:6], out[..., 6:9], out[..., 9:12])


def com(skel: Skeleton, q: Any) -> np.ndarray:
    """Whole-body centre of mass ``(..., 3)`` m, world frame."""
    return momentum(skel, q).com


def com_velocity(skel: Skeleton, q: Any, qd: Any) -> np.ndarray:
    """Centre-of-mass velocity ``(..., 3)`` m/s."""
    return momentum(skel, q, qd).com_velocity


def centroidal_momentum(skel: Skeleton, q: Any, qd: Any) -> np.ndarray:
    """Centroidal momentum ``(..., 6)``: linear (kg m/s) then angular about the COM (kg m^2/s)."""
    m = momentum(skel, q, qd)
    return np.concatenate([m.linear, m.angular], axis=-1)
