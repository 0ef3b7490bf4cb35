"""Direct-manipulation gizmos of the selected joint: rotate rings (FK) and root arrows.

* **Rotate rings** — one ring per rotational DoF of the selected joint, in the plane normal to
  the DoF's world axis, centred on the joint. Dragging a ring turns that DoF by the angle the
  cursor sweeps around the axis (clamped into its limits; one undoable edit per drag).
* **Translate arrows** — one arrow per translational DoF of the root joint, along its world
  axis. Dragging an arrow moves that DoF by the cursor's motion along the axis.

The math here is pure NumPy (tested without a window): the world axis of a DoF, ray–ring and
screen-space ring picking, the angle of a ray around an axis, the drag → DoF value mapping.
Sizes are in screen pixels converted at the gizmo's depth (``pixel`` = metres per pixel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics import forward_kinematics
from ..rotations.rotvec import rotvec_from_matrix
from ..skeleton import Skeleton

RING_PX = 62.0  # ring radius on screen, px
RING_PICK_PX = 7.0  # a press this close to a ring (on screen) grabs it
ARROW_PX = 80.0  # arrow length on screen, px
ARROW_PICK_PX = 8.0
EDGE_ON = 0.15  # |axis · view| below this: the ring is seen edge-on (screen-space angle)


@dataclass(frozen=True)
class JointGizmo:
    """The gizmo of one joint at one pose.

    Attributes:
        joint: joint index. centre: ``(3,)`` its world position, m.
        ring_dofs: ``(k,)`` its rotational DoFs; ring_axes ``(k, 3)`` their world axes (unit).
        arrow_dofs: ``(a,)`` translational DoFs (root only); arrow_axes ``(a, 3)`` world axes.
    """

    joint: int
    centre: np.ndarray
    ring_dofs: np.ndarray
    ring_axes: np.ndarray
    arrow_dofs: np.ndarray
    arrow_axes: np.ndarray


def dof_world_axis(skel: Skeleton, q: np.ndarray, dof: int, eps: float = 1e-4) -> np.ndarray:
    """World axis ``(3,)`` of rotational DoF ``dof`` at pose ``q`` (unit).

    Turning the DoF by ``ε`` turns its joint's world frame by ``Rot(a, ε)`` (it turns the
    frame after it, whatever DoFs follow on the same joint), so
    ``a = rotvec(R_j(q + ε e_d) R_j(q)ᵀ) / ε`` exactly (up to rounding).
    """
    j = int(skel.dof_joint[dof])
    q = np.asarray(q, dtype=float)
    qp = q.copy()
    qp[dof] += eps
    r0 = forward_kinematics(skel, q).joint_rotations[j]
    r1 = forward_kinematics(skel, qp).joint_rotations[j]
    a = rotvec_from_matrix(r1 @ r0.T) / eps
    n = np.linalg.norm(a)
    return a / n if n > 0 else np.array([0.0, 0.0, 1.0])


def joint_gizmo(skel: Skeleton, q: np.ndarray, joint_positions: np.ndarray, joint: int) -> JointGizmo:
    """The rings (rotational DoFs) and, for the root, the arrows (translational DoFs)."""
    dofs = np.asarray(skel.joint_dofs(joint), dtype=np.int64)
    rot = dofs[np.asarray(skel.dof_type)[dofs] == 0] if len(dofs) else dofs
    tra = dofs[np.asarray(skel.dof_type)[dofs] == 1] if len(dofs) else dofs
    axes = np.array([dof_world_axis(skel, q, int(d)) for d in rot]).reshape(-1, 3)
    if skel.parents[joint] < 0 and len(tra):
        t_axes = np.array([np.asarray(skel.dof_axis[d], float) / np.linalg.norm(skel.dof_axis[d])
                           for d in tra]).reshape(-1, 3)
    else:
        tra = np.zeros(0, dtype=np.int64)
        t_axes = np.zeros((0, 3))
    return JointGizmo(joint, np.array(joint_positions[joint], float), rot, axes, tra, t_axes)


def ring_basis(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal ``(u, v)`` spanning the plane normal to ``axis``, ``u × v = axis``."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    ref = np.array([0.0, 0.0, 1.0]) if abs(a[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(ref, a)
    u /= np.linalg.norm(u)
    return u, np.cross(a, u)


def ring_points(centre: np.ndarray, axis: np.ndarray, radius: float, n: int = 64) -> np.ndarray:
    """``(n + 1, 3)`` closed polyline of the ring."""
    u, v = ring_basis(axis)
    t = np.linspace(0.0, 2.0 * np.pi, n + 1)
    return centre + radius * (np.cos(t)[:, None] * u + np.sin(t)[:, None] * v)


def ray_plane_angle(origin: np.ndarray, direction: np.ndarray, centre: np.ndarray,
                    axis: np.ndarray) -> tuple[float, float, float] | None:
    """Where the ray meets the ring's plane: ``(t along the ray, distance from the centre,
    angle around the axis in the ring basis)``, or None (parallel or behind)."""
    a = np.asarray(axis, float)
    den = float(np.dot(direction, a))
    if abs(den) < 1e-9:
        return None
    t = float(np.dot(centre - origin, a)) / den
    if t <= 0:
        return None
    w = origin + t * np.asarray(direction, float) - centre
    u, v = ring_basis(a)
    return t, float(np.linalg.norm(w)), float(np.arctan2(np.dot(w, v), np.dot(w, u)))


def ray_ring(origin: np.ndarray, direction: np.ndarray, centre: np.ndarray, axis: np.ndarray,
             radius: float, tol: float) -> float | None:
    """Ray–ring intersection: the ray parameter ``t`` where it crosses the ring's plane within
    ``tol`` (m) of the ring (a torus of tube radius ``tol``, seen from a direction not
    edge-on), or None."""
    hit = ray_plane_angle(origin, direction, centre, axis)
    if hit is None:
        return None
    t, dist, _ = hit
    return t if abs(dist - radius) <= tol else None


def polyline_distance(points: np.ndarray, p: np.ndarray) -> float:
    """Distance (same units) from 2-D point ``p`` to the polyline ``points (N, 2)``."""
    p0, p1 = points[:-1], points[1:]
    seg = p1 - p0
    ll = np.maximum(np.einsum("ij,ij->i", seg, seg), 1e-12)
    tt = np.clip(np.einsum("ij,ij->i", p - p0, seg) / ll, 0.0, 1.0)
    return float(np.linalg.norm(p0 + tt[:, None] * seg - p, axis=1).min())


def wrap(angle: float) -> float:
    """``angle`` wrapped into ``(−π, π]``."""
    return float(-((-angle + np.pi) % (2.0 * np.pi) - np.pi))


def dragged_value(start_value: float, start_angle: float, angle: float, lower: float,
                  upper: float) -> float:
    """New DoF value after the cursor swept from ``start_angle`` to ``angle`` around the DoF's
    axis (rad; positive = right-handed about the axis), clamped into ``[lower, upper]``."""
    return float(np.clip(start_value + wrap(angle - start_angle), lower, upper))


def screen_angle(centre_px: np.ndarray, px: float, py: float, axis: np.ndarray,
                 forward: np.ndarray) -> float:
    """Angle of the cursor around the projected centre, signed for ``axis`` (edge-on or
    screen-space fallback): screen y points down, so a clockwise screen angle is a positive
    rotation about an axis pointing away from the viewer."""
    ang = float(np.arctan2(py - centre_px[1], px - centre_px[0]))
    return ang if float(np.dot(axis, forward)) >= 0 else -ang


def axis_colour(axis: np.ndarray) -> tuple[float, float, float, float]:
    """Red / green / blue by the axis' dominant world component."""
    k = int(np.argmax(np.abs(axis)))
    return ((0.92, 0.30, 0.30, 1.0), (0.35, 0.85, 0.35, 1.0), (0.35, 0.55, 0.98, 1.0))[k]
