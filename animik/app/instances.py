"""Instance records of the view's primitives (numpy, no GL) and :class:`ViewGeometry`, the
arrays one frame of the view is drawn from (and picked against).

An instance record is 16 float32: the three columns of the linear part (rotation times
per-axis scale), the translation, and an RGBA colour. The unit primitives are a sphere (radius
1), a cylinder (radius 1, from z = 0 to z = 1), a cube (half-size 1) and a torus (major radius
1, in the XY plane).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class ViewGeometry:
    """Instances (``(N, 16)`` float32 each) and handle data for one frame.

    Attributes:
        spheres, cylinders: the character (depth-tested).
        free_spheres: handles of free effectors (small, drawn over the character).
        overlay_spheres, overlay_cubes, overlay_cylinders, overlay_tori: handles of constrained
            and selected effectors, error lines, orientation gizmo (drawn over everything).
        joint_radius: ``(J,)`` m, bone_radius ``(J,)`` m (per child joint), used by picking.
        handle_sites: ``(H,)`` site indices of the handles, handle_pos ``(H, 3)``, handle_radius
            ``(H,)`` m.
        ring_centre ``(3,)``, ring_axes ``(3, 3)`` (columns), ring_radius (m): the rotate gizmo of
            the selected 6-D target, or ring_centre None.
        n_character_spheres, n_character_cylinders: how many leading ``spheres`` /
            ``cylinders`` are the character's own joints and bones (hidden under its skinned
            mesh; what a mode appends after them, e.g. retarget's source, stays drawn); -1: all.
    """

    spheres: np.ndarray
    cylinders: np.ndarray
    free_spheres: np.ndarray
    overlay_spheres: np.ndarray
    overlay_cubes: np.ndarray
    overlay_cylinders: np.ndarray
    overlay_tori: np.ndarray
    joint_radius: np.ndarray
    bone_radius: np.ndarray
    handle_sites: np.ndarray
    handle_pos: np.ndarray
    handle_radius: np.ndarray
    ring_centre: np.ndarray | None = None
    ring_axes: np.ndarray | None = None
    ring_radius: float = 0.0
    gizmo: Any = None  # animik.app.gizmo.JointGizmo of the selected joint, or None
    gizmo_radius: float = 0.0  # m: ring radius of the joint gizmo (and arrow length / 1.3)
    n_character_spheres: int = -1
    n_character_cylinders: int = -1

    def character_split(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(character spheres, character cylinders, other spheres, other cylinders)``."""
        ns = len(self.spheres) if self.n_character_spheres < 0 else self.n_character_spheres
        nc = len(self.cylinders) if self.n_character_cylinders < 0 else self.n_character_cylinders
        return self.spheres[:ns], self.cylinders[:nc], self.spheres[ns:], self.cylinders[nc:]


def _rgba(c, n: int) -> np.ndarray:
    c = np.asarray(c, dtype=np.float32)
    if c.ndim == 1:
        if c.shape[0] == 3:
            c = np.append(c, np.float32(1.0))
        return np.broadcast_to(c, (n, 4))
    if c.shape[1] == 3:
        c = np.concatenate([c, np.ones((len(c), 1), np.float32)], axis=1)
    return c


def sphere_instances(centres: np.ndarray, radius, color) -> np.ndarray:
    centres = np.asarray(centres, float).reshape(-1, 3)
    n = len(centres)
    r = np.broadcast_to(np.asarray(radius, float), (n,))
    out = np.zeros((n, 16), np.float32)
    out[:, 0] = r
    out[:, 4] = r
    out[:, 8] = r
    out[:, 9:12] = centres
    out[:, 12:16] = _rgba(color, n)
    return out


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of ``(N, 3)`` arrays (np.cross costs ~10x more on small arrays,
    and the view is rebuilt every frame)."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def _perp_basis(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors ``(N, 3)`` orthogonal to each unit ``d`` and to each other."""
    helper = np.where(np.abs(d[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    u = _cross(d, helper)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = _cross(d, u)
    return u, v


def cylinder_instances(a: np.ndarray, b: np.ndarray, radius, color) -> np.ndarray:
    """Cylinders from points ``a (N, 3)`` to ``b (N, 3)``."""
    a = np.asarray(a, float).reshape(-1, 3)
    b = np.asarray(b, float).reshape(-1, 3)
    n = len(a)
    seg = b - a
    length = np.linalg.norm(seg, axis=1)
    d = seg / np.maximum(length, 1e-12)[:, None]
    d[length < 1e-12] = (0.0, 0.0, 1.0)
    u, v = _perp_basis(d)
    r = np.broadcast_to(np.asarray(radius, float), (n,))[:, None]
    out = np.zeros((n, 16), np.float32)
    out[:, 0:3] = u * r
    out[:, 3:6] = v * r
    out[:, 6:9] = seg
    out[:, 9:12] = a
    out[:, 12:16] = _rgba(color, n)
    return out


def framed_instances(centres: np.ndarray, axes: np.ndarray, scale, color) -> np.ndarray:
    """Instances with a given rotation ``axes (N, 3, 3)`` (columns) and uniform ``scale (N,)``."""
    centres = np.asarray(centres, float).reshape(-1, 3)
    n = len(centres)
    s = np.broadcast_to(np.asarray(scale, float), (n,))[:, None]
    ax = np.asarray(axes, float).reshape(n, 3, 3)
    out = np.zeros((n, 16), np.float32)
    out[:, 0:3] = ax[:, :, 0] * s
    out[:, 3:6] = ax[:, :, 1] * s
    out[:, 6:9] = ax[:, :, 2] * s
    out[:, 9:12] = centres
    out[:, 12:16] = _rgba(color, n)
    return out
