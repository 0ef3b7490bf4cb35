"""A robot's link meshes as a :class:`~animik.character.Character` (rigid skinning).

:func:`read_robot_character` reads a URDF / MJCF robot (:mod:`animik.io.urdf_read`,
:mod:`animik.io.mjcf_read`), loads every visual mesh it references (STL / OBJ / DAE through
trimesh), places each in world coordinates at the robot's rest pose (the bind pose), and binds
every vertex to its link's joint with one influence of weight 1 — a rigid body drawn by the
same linear-blend skinning as a glTF character. One material per mesh colour.

Meshes that cannot be found or read are left out and listed in ``character.meta["warnings"]``
(with the reader's own warnings); a robot without any readable mesh gets ``mesh=None`` (drawn as
bones).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..character import Character, Material, MeshPart, SkinnedMesh, homogeneous
from ..errors import FileFormatError
from ..kinematics import forward_kinematics
from ..skeleton import Skeleton
from .mjcf_read import read_mjcf_robot
from .urdf_read import read_urdf_robot

__all__ = ["read_robot_character", "robot_mesh"]


def _load(file: str):
    import trimesh

    mesh = trimesh.load(file, force="mesh", process=False)
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ValueError("no triangles")
    return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int64)


def robot_mesh(skel: Skeleton, q: np.ndarray | None = None) -> tuple[SkinnedMesh | None, list[str]]:
    """The rigidly skinned mesh of a skeleton read from a robot file, bound at pose ``q``.

    Args:
        skel: a skeleton from :mod:`animik.io.robot_model` (its ``meta["robot_geoms"]``).
        q: ``(n_dof,)`` bind pose (default the rest pose).

    Returns:
        ``(mesh or None, warnings)``.
    """
    q = skel.rest_q if q is None else np.asarray(q, dtype=float)
    fk = forward_kinematics(skel, q)
    world = homogeneous(np.asarray(fk.joint_rotations), np.asarray(fk.joint_positions))
    warnings: list[str] = []
    cache: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
    pos, nrm, faces, joints, parts, materials = [], [], [], [], [], []
    colours: dict[tuple, int] = {}
    n_v = n_f = 0
    for body, _name, file, gpos, grot, gscale, rgba in skel.meta.get("robot_geoms", ()):
        if not file:
            continue  # the reader already warned
        if file not in cache:
            try:
                cache[file] = _load(file)
            except Exception as e:  # noqa: BLE001 - a bad mesh file must not stop the robot
                cache[file] = None
                warnings.append(f"mesh {file!r} (body {body!r}) could not be read: {e}")
        got = cache[file]
        if got is None:
            continue
        v, f = got
        j = skel.joint_index(body)
        local = (v * np.asarray(gscale)) @ np.asarray(grot).reshape(3, 3).T + np.asarray(gpos)
        w = local @ world[j, :3, :3].T + world[j, :3, 3]
        if np.linalg.det(np.diag(gscale)) < 0:
            f = f[:, ::-1]  # a mirroring scale flips the winding
        vn = _vertex_normals(w, f)
        key = tuple(float(x) for x in rgba)
        if key not in colours:
            colours[key] = len(materials)
            materials.append(Material(name=f"rgba{len(materials)}", base_color=key))
        pos.append(w)
        nrm.append(vn)
        faces.append(f + n_v)
        joints.append(np.full(len(w), j))
        parts.append(MeshPart(n_f, len(f), colours[key]))
        n_v += len(w)
        n_f += len(f)
    if not pos:
        return None, warnings
    joint_idx = np.zeros((n_v, 4), dtype=np.uint16)
    joint_idx[:, 0] = np.concatenate(joints)
    weights = np.zeros((n_v, 4), dtype=np.float32)
    weights[:, 0] = 1.0
    mesh = SkinnedMesh(positions=np.concatenate(pos), normals=np.concatenate(nrm),
                       faces=np.concatenate(faces), joints=joint_idx, weights=weights,
                       inverse_bind=np.linalg.inv(world), materials=tuple(materials),
                       parts=tuple(parts))
    return mesh, warnings


def _vertex_normals(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    out = np.zeros_like(v)
    for k in range(3):
        np.add.at(out, f[:, k], n)
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    out = np.where(norm > 1e-20, out / np.maximum(norm, 1e-20), np.array([0.0, 0.0, 1.0]))
    return out


def read_robot_character(path: str | Path, floating: bool = True) -> Character:
    """A robot (``.urdf``, or MJCF ``.xml`` / ``.mjcf``) with its link meshes.

    Args:
        path: the robot file.
        floating: URDF only: give the root a free joint (see :mod:`animik.io.urdf_read`).

    Returns:
        A :class:`~animik.character.Character` (no clips); ``meta["warnings"]`` lists missing
        or unreadable meshes and what the reader ignored.

    Raises:
        RobotFileError: see the readers. FileFormatError: an unknown suffix.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".urdf":
        skel = read_urdf_robot(p, floating)
    elif suffix in (".xml", ".mjcf"):
        skel = read_mjcf_robot(p)
    else:
        raise FileFormatError(f"{p}: a robot file must be .urdf, .xml or .mjcf, got {suffix!r}")
    mesh, warnings = robot_mesh(skel)
    warnings = [*skel.meta.get("warnings", ()), *warnings]
    return Character(skel, mesh, (), name=skel.name,
                     meta={"source": str(p), "warnings": tuple(warnings)})
