"""Forward kinematics and site Jacobians, batched over any leading shape.

All functions take a :class:`~animik.skeleton.Skeleton` and poses ``q`` of shape
``(..., n_dof)`` and return world-frame quantities (Z up, metres). Jacobians have shape
``(..., 6, n_dof)`` with rows ``(linear; angular)``: ``d(site position)/dq`` then the angular
velocity map, by the geometric method of seed C (column of a revolute DoF with world axis ``w``
at point ``p_j``: ``[w x (p_site - p_j); w]``; of a prismatic DoF: ``[w; 0]``).

The hot path for solvers is :class:`Kinematics`, a reusable workspace that computes FK, site
poses and the stacked Jacobian of a chosen set of sites in one compiled call with
preallocated buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from . import _kernels as K
from .cache import cached
from .errors import ShapeError
from .skeleton import Skeleton


class FKResult(NamedTuple):
    """World frames of every joint and site for poses ``(...)``.

    Attributes:
        joint_rotations: ``(..., J, 3, 3)`` world_from_joint rotations.
        joint_positions: ``(..., J, 3)`` m.
        site_rotations: ``(..., S, 3, 3)``.
        site_positions: ``(..., S, 3)`` m.
    """

    joint_rotations: np.ndarray
    joint_positions: np.ndarray
    site_rotations: np.ndarray
    site_positions: np.ndarray


def kernel_args(skel: Skeleton) -> tuple:
    """The skeleton as the contiguous arrays the compiled kernels take (cached per skeleton).

    Returns:
        ``(parents, offsets, rest_rotations, joint_dof_start, dof_type, dof_axis, site_joint,
        site_offsets, site_rotations, site_dof_mask)`` in the kernels' dtypes; the first six
        describe the tree and its DoFs (shared by the dynamics kernels).
    """
    return cached(skel, "kinematics.kernel_args", lambda: _build_model_args(skel))


def _build_model_args(skel: Skeleton) -> tuple:
    return (
        np.ascontiguousarray(skel.parents, dtype=np.int64),
        np.ascontiguousarray(skel.offsets),
        np.ascontiguousarray(skel.rest_rotations),
        np.ascontiguousarray(skel.joint_dof_start, dtype=np.int64),
        np.ascontiguousarray(skel.dof_type, dtype=np.int8),
        np.ascontiguousarray(skel.dof_axis),
        np.ascontiguousarray(skel.site_joint, dtype=np.int64),
        np.ascontiguousarray(skel.site_offsets),
        np.ascontiguousarray(skel.site_rotations),
        np.ascontiguousarray(skel.site_dof_mask),
    )


def _site_selection(skel: Skeleton, sites: Sequence[str | int] | str | int | None) -> np.ndarray:
    if sites is None:
        return np.arange(skel.n_sites, dtype=np.int64)
    if isinstance(sites, (str, int, np.integer)):
        sites = [sites]
    return np.array([skel.site_index(s) for s in sites], dtype=np.int64)


def forward_kinematics(skel: Skeleton, q: np.ndarray) -> FKResult:
    """World rotations and positions of every joint and site.

    Args:
        skel: the skeleton.
        q: poses, shape ``(..., n_dof)`` (rad / m).

    Returns:
        :class:`FKResult` with arrays of leading shape ``q.shape[:-1]``.

    Raises:
        ShapeError: ``q`` has the wrong trailing dimension or non-finite values.
    """
    q = skel.check_q(q)
    lead = q.shape[:-1]
    qb = np.ascontiguousarray(q.reshape(int(np.prod(lead)), skel.n_dof))
    B, J, S = qb.shape[0], skel.n_joints, skel.n_sites
    (par, off, rr, ds, dt, dax, sj, so, sr, _m) = kernel_args(skel)
    Rw = np.empty((B, J, 3, 3))
    pw = np.empty((B, J, 3))
    sR = np.empty((B, S, 3, 3))
    sp = np.empty((B, S, 3))
    K.fk_batch(qb, par, off, rr, ds, dt, dax, sj, so, sr, np.arange(S, dtype=np.int64),
               Rw, pw, sR, sp)
    return FKResult(
        Rw.reshape(lead + (J, 3, 3)), pw.reshape(lead + (J, 3)),
        sR.reshape(lead + (S, 3, 3)), sp.reshape(lead + (S, 3)),
    )


def joint_positions(skel: Skeleton, q: np.ndarray) -> np.ndarray:
    """World positions of every joint, ``(..., J, 3)`` m."""
    return forward_kinematics(skel, q).joint_positions


def standing_height(skel: Skeleton, q: np.ndarray | None = None, max_poses: int = 600) -> float:
    """Standing height: the largest vertical (Z) extent of the body over the poses, m.

    The body is every joint but the root and every site (a BVH root is often a capture-volume
    point, e.g. Bandai's ``joint_Root`` at the origin under a moving ``joint_Hips``, not part of
    the figure). Over a motion this is head-to-floor in its most upright frame; for a rig, pass
    nothing to measure the rest pose. A figure with its arms raised overhead in every pose
    measures taller than it stands.

    Args:
        skel: the skeleton.
        q: ``(n_dof,)`` or ``(T, n_dof)`` poses, rad / m; None: the rest pose.
        max_poses: at most this many poses are measured (evenly spaced), to bound the cost.

    Returns:
        Height, m (0 for a skeleton with a single point).
    """
    q = skel.rest_q if q is None else np.asarray(q, dtype=float)
    q = q.reshape(-1, skel.n_dof) if skel.n_dof else np.zeros((1, 0))
    if len(q) > max_poses:
        q = q[np.linspace(0, len(q) - 1, max_poses).round().astype(np.int64)]
    fk = forward_kinematics(skel, q)
    body = fk.joint_positions[:, 1:] if skel.n_joints > 1 else fk.joint_positions
    z = np.concatenate([body[..., 2], fk.site_positions[..., 2]], axis=1)
    if z.shape[1] == 0:
        return 0.0
    return float((z.max(axis=1) - z.min(axis=1)).max())


def site_positions(skel: Skeleton, q: np.ndarray) -> np.ndarray:
    """World positions of every site, ``(..., S, 3)`` m."""
    return forward_kinematics(skel, q).site_positions


def site_poses(skel: Skeleton, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World ``(positions (..., S, 3), rotations (..., S, 3, 3))`` of every site."""
    fk = forward_kinematics(skel, q)
    return fk.site_positions, fk.site_rotations


def site_jacobians(
    skel: Skeleton, q: np.ndarray, sites: Sequence[str | int] | None = None
) -> np.ndarray:
    """Geometric Jacobians of several sites, ``(..., k, 6, n_dof)`` (rows: linear; angular).

    Args:
        skel: the skeleton.
        q: poses ``(..., n_dof)``.
        sites: site names or indices (default: all sites).
    """
    q = skel.check_q(q)
    sel = _site_selection(skel, sites)
    lead = q.shape[:-1]
    qb = np.ascontiguousarray(q.reshape(int(np.prod(lead)), skel.n_dof))
    B, n, k = qb.shape[0], skel.n_dof, len(sel)
    (par, off, rr, ds, dt, dax, sj, so, sr, mask) = kernel_args(skel)
    sp = np.empty((B, k, 3))
    jac = np.empty((B, 6 * k, n))
    K.jac_batch(qb, par, off, rr, ds, dt, dax, sj, so, sr, sel, mask, 6, sp, jac)
    return jac.reshape(lead + (k, 6, n))


def site_jacobian(skel: Skeleton, q: np.ndarray, site: str | int) -> np.ndarray:
    """Geometric Jacobian of one site, ``(..., 6, n_dof)`` (rows: linear; angular)."""
    return site_jacobians(skel, q, [site])[..., 0, :, :]


def stacked_jacobian(
    skel: Skeleton, q: np.ndarray, sites: Sequence[str | int] | None = None,
    rows: str = "pose",
) -> np.ndarray:
    """Jacobians of a set of sites stacked into one matrix.

    Args:
        rows: ``"pose"`` (6 rows per site: linear then angular) or ``"position"`` (3 rows).

    Returns:
        ``(..., 6k, n_dof)`` or ``(..., 3k, n_dof)``.
    """
    if rows not in ("pose", "position"):
        raise ValueError(f"rows must be 'pose' or 'position', got {rows!r}")
    jac = site_jacobians(skel, q, sites)
    if rows == "position":
        jac = jac[..., :3, :]
    return jac.reshape(jac.shape[:-3] + (-1, skel.n_dof))


def com_points(skel: Skeleton) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The whole-body centre of mass as a weighted set of body points (cached on the skeleton).

    Returns:
        ``(joint (P,) int64, offset (P, 3) m, coefficient (P,))``: one point per segment with
        mass, at its COM (``skel.coms``, joint frame), coefficient ``m_j / M``.

    Raises:
        ShapeError: the skeleton has no mass (``skel.masses`` sums to 0).
    """
    return cached(skel, "kinematics.com_points", lambda: _build_com_points(skel))


def _build_com_points(skel: Skeleton) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    masses = np.asarray(skel.masses, dtype=float)
    total = float(masses.sum())
    if not total > 0.0:
        raise ShapeError(f"skeleton {skel.name!r} has no mass (masses sum to {total}): no centre "
                         "of mass")
    j = np.flatnonzero(masses > 0).astype(np.int64)
    out = (j, np.ascontiguousarray(np.asarray(skel.coms, dtype=float)[j]),
           np.ascontiguousarray(masses[j] / total))
    for a in out:
        a.setflags(write=False)
    return out


def _com_batch(skel: Skeleton, q: np.ndarray, jacobian: bool) -> tuple[np.ndarray, np.ndarray]:
    q = skel.check_q(q)
    lead = q.shape[:-1]
    qb = np.ascontiguousarray(q.reshape(int(np.prod(lead)), skel.n_dof))
    B, n = qb.shape[0], skel.n_dof
    (par, off, rr, ds, dt, dax, *_rest) = kernel_args(skel)
    pj, po, pc = com_points(skel)
    x = np.empty((B, 3))
    jac = np.empty((B, 3, n) if jacobian else (B, 0, 0))
    K.points_batch(qb, par, off, rr, ds, dt, dax, np.ascontiguousarray(skel.dof_joint, dtype=np.int64),
                   pj, po, pc, 3 if jacobian else 0, x, jac)
    return x.reshape(lead + (3,)), jac.reshape(lead + jac.shape[1:])


def com_position(skel: Skeleton, q: np.ndarray) -> np.ndarray:
    """Whole-body centre of mass ``(..., 3)``, m: ``Σ_j m_j (R_j c_j + p_j) / Σ_j m_j`` with the
    segment masses ``skel.masses`` and COMs ``skel.coms`` (joint frames).

    Raises:
        ShapeError: bad ``q``, or a skeleton without mass.
    """
    return _com_batch(skel, q, False)[0]


def com_jacobian(skel: Skeleton, q: np.ndarray) -> np.ndarray:
    """Jacobian of the whole-body centre of mass, ``(..., 3, n_dof)`` (``d com / dq``, m per rad
    or m per m): each DoF moves the mass of its joint's subtree rigidly."""
    return _com_batch(skel, q, True)[1]


class Kinematics:
    """Reusable single-pose workspace: FK + site poses + stacked Jacobian in one compiled call.

    Solvers call :meth:`update` every iteration; the result arrays are overwritten in place
    (copy them to keep them).

    Args:
        skel: the skeleton.
        sites: sites whose poses/Jacobian rows are computed (default: all).
        rows: per-site Jacobian rows, 6 (linear; angular), 3 (linear only) or 0 (none).

    Attributes (valid after :meth:`update`):
        joint_rotations ``(J, 3, 3)``, joint_positions ``(J, 3)``, site_rotations ``(k, 3, 3)``,
        site_positions ``(k, 3)``, jacobian ``(rows * k, n_dof)``.
    """

    def __init__(self, skel: Skeleton, sites: Sequence[str | int] | None = None, rows: int = 6):
        if rows not in (0, 3, 6):
            raise ValueError(f"rows must be 0, 3 or 6, got {rows!r}")
        self.skeleton = skel
        self.sites = _site_selection(skel, sites)
        self.rows = rows
        n, J, k = skel.n_dof, skel.n_joints, len(self.sites)
        self.joint_rotations = np.empty((J, 3, 3))
        self.joint_positions = np.empty((J, 3))
        self.site_rotations = np.empty((k, 3, 3))
        self.site_positions = np.empty((k, 3))
        self.jacobian = np.zeros((rows * k, n))
        self._wax = np.empty((n, 3))
        self._wpt = np.empty((n, 3))
        self._args = kernel_args(skel)

    def update(self, q: np.ndarray) -> Kinematics:
        """Recompute everything at pose ``q`` ``(n_dof,)`` (float64, C-contiguous; not checked)."""
        (par, off, rr, ds, dt, dax, sj, so, sr, mask) = self._args
        K.fk_sites_jac_one(q, par, off, rr, ds, dt, dax, sj, so, sr, self.sites, mask, self.rows,
                           self.joint_rotations, self.joint_positions, self._wax, self._wpt,
                           self.site_rotations, self.site_positions, self.jacobian)
        return self

    def update_checked(self, q: np.ndarray) -> Kinematics:
        """:meth:`update` with validation of ``q``."""
        q = self.skeleton.check_q(q)
        if q.ndim != 1:
            raise ShapeError(f"q must have shape ({self.skeleton.n_dof},), got {q.shape}")
        return self.update(np.ascontiguousarray(q))
