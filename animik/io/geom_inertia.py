"""Mass, centre of mass and inertia of MJCF geoms, as MuJoCo's compiler infers them
(``<compiler inertiafromgeom>``: a body without ``<inertial>`` gets the sum of its geoms').

Each geom is a uniform solid of ``density`` (default 1000 kg/m³) or of its given ``mass``;
volumes and inertias are MuJoCo's (``mjCGeom::GetVolume`` / ``SetInertia``): a capsule is a
cylinder plus two hemispheres displaced along its axis, exactly as MuJoCo sums them. Mesh geoms
follow their ``<mesh inertia>``: ``exact`` (the closed-mesh volume integrals, trimesh's mass
properties) and ``convex`` (those of the convex hull) equal MuJoCo's; MuJoCo's default,
``legacy`` (absolute pyramid volumes from a surface centroid, which over-counts open meshes),
is NOT reproduced: the exact integrals are used and the reader warns. The geoms' parts are
combined with the parallel-axis theorem in the body frame.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["geom_mass_properties", "combine"]


def _principal(kind: str, size: np.ndarray) -> tuple[float, np.ndarray] | None:
    """``(volume, diagonal inertia per unit mass (3,))`` of a primitive in its own frame."""
    if kind == "sphere":
        r = size[0]
        return 4.0 / 3.0 * np.pi * r ** 3, np.full(3, 0.4 * r * r)
    if kind == "ellipsoid":
        a, b, c = size[:3]
        return 4.0 / 3.0 * np.pi * a * b * c, np.array([b * b + c * c, a * a + c * c,
                                                          a * a + b * b]) / 5.0
    if kind == "box":
        a, b, c = size[:3]
        return 8.0 * a * b * c, np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 3.0
    if kind == "cylinder":
        r, h = size[0], 2.0 * size[1]
        return np.pi * r * r * h, np.array([(3 * r * r + h * h) / 12, (3 * r * r + h * h) / 12,
                                            r * r / 2])
    if kind == "capsule":
        r, h = size[0], 2.0 * size[1]
        vol = np.pi * r * r * (h + 4.0 / 3.0 * r)
        sphere = 4.0 * r / (4.0 * r + 3.0 * h)  # mass fraction of the two hemispheres
        cyl = 1.0 - sphere
        ixx = cyl * (3 * r * r + h * h) / 12 + 0.4 * sphere * r * r \
            + sphere * h * (3 * r + 2 * h) / 8  # MuJoCo's hemisphere displacement term
        return vol, np.array([ixx, ixx, cyl * r * r / 2 + 0.4 * sphere * r * r])
    return None


def geom_mass_properties(kind: str, size: np.ndarray, pos: np.ndarray, rot: np.ndarray,
                         density: float = 1000.0, mass: float | None = None,
                         mesh: tuple[Path, np.ndarray, str] | None = None
                         ) -> tuple[float, np.ndarray, np.ndarray] | None:
    """``(mass kg, com (3,), inertia about the com (3, 3))`` of one geom in its body's frame.

    Args:
        kind: MJCF geom type (sphere, capsule, cylinder, box, ellipsoid, mesh).
        size: the geom's ``size`` (MJCF meaning per type).
        pos, rot: the geom frame in the body frame.
        density, mass: MJCF ``density`` / ``mass`` (``mass`` wins when given).
        mesh: ``(file, scale, inertia mode)`` of a mesh geom (mode: exact, convex, legacy).

    Returns:
        None for what has no volume here (planes, height fields, unreadable meshes).
    """
    rot = np.asarray(rot, float).reshape(3, 3)
    if kind == "mesh":
        if mesh is None:
            return None
        import trimesh

        try:
            m = trimesh.load(str(mesh[0]), force="mesh", process=True)
        except Exception:  # noqa: BLE001 - an unreadable mesh adds no mass (warned elsewhere)
            return None
        m = trimesh.Trimesh(np.asarray(m.vertices) * np.asarray(mesh[1], float), m.faces,
                            process=False)
        if mesh[2] == "convex":
            m = m.convex_hull
        vol = float(abs(m.volume))
        if vol <= 0:
            return None
        props = m.mass_properties  # density 1
        com_local = np.asarray(props["center_mass"], float)
        inertia_local = np.asarray(props["inertia"], float) * np.sign(m.volume) / vol
    else:
        got = _principal(kind, np.asarray(size, float))
        if got is None:
            return None
        vol, diag = got
        com_local, inertia_local = np.zeros(3), np.diag(diag)
    m_geom = float(mass) if mass is not None else density * vol
    return (m_geom, np.asarray(pos, float) + rot @ com_local,
            m_geom * (rot @ inertia_local @ rot.T))


def combine(parts: list[tuple[float, np.ndarray, np.ndarray]]
            ) -> tuple[float, np.ndarray, np.ndarray]:
    """Total mass, com and inertia about the com of rigidly joined parts (parallel axes)."""
    mass = sum(p[0] for p in parts)
    if mass <= 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = sum(p[0] * p[1] for p in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, i in parts:
        d = c - com
        inertia += i + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return float(mass), com, inertia
