"""A robot's link meshes as a :class:`~animik.character.Character` (rigid skinning).

:func:`read_robot_character` reads a URDF / MJCF robot (:mod:`animik.io.urdf_read`,
:mod:`animik.io.mjcf_read`), loads every visual mesh it references (STL / OBJ / DAE through
trimesh), places each in world coordinates at the robot's rest pose (the bind pose), and binds
every vertex to its link's joint with one influence of weight 1 — a rigid body drawn by the
same linear-blend skinning as a glTF character. One material per mesh colour.

Primitive geoms (MJCF sphere / ellipsoid / box / cylinder / capsule of groups 0-2, URDF
``<box> <sphere> <cylinder>`` visuals) are drawn as trimesh primitives, so a robot without
mesh files still gets a body.

Meshes that cannot be found or read are left out and listed in ``character.meta["warnings"]``
(with the reader's own warnings); a robot without any readable mesh gets ``mesh=None`` (drawn as
bones).

**Display budget.** Robot STL files are triangle soups (three vertices per triangle) and dense
(G1: 393k triangles, 1.18 M vertices as read): too heavy for the app on a software renderer.
With ``max_triangles`` (:func:`animik.rigs.load_character` passes :data:`DISPLAY_TRIANGLES`),
each file's duplicate vertices are merged, it is decimated by quadric error
(``fast_simplification``, Fast-Quadric-Mesh-Simplification) to its share of the budget (every
file by the same ratio, counting a file used twice twice), and its vertices are split again
along edges sharper than :data:`CREASE_DEG` so flat faces keep flat normals
(:func:`_crease_split`). Processed files are kept in memory per (file, size, mtime, ratio). Without a
budget the meshes are exactly the files' (``read_robot_character``'s default).
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

__all__ = ["DISPLAY_TRIANGLES", "read_robot_character", "robot_mesh"]

#: Triangle budget of a robot's whole mesh for display (``animik.load_character``).
DISPLAY_TRIANGLES = 150_000
#: Edges sharper than this keep separate (flat) vertex normals on a processed mesh.
CREASE_DEG = 30.0

#: (resolved file, size, mtime_ns, ratio) -> (vertices, faces, normals) of processed files.
_PROCESSED: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
_PROCESSED_MAX = 512


def _load(file: str):
    import trimesh

    mesh = trimesh.load(file, force="mesh", process=False)
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ValueError("no triangles")
    return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int64)


def _file_key(file: str) -> tuple:
    st = Path(file).stat()
    return (str(Path(file).resolve()), st.st_size, st.st_mtime_ns)


def _processed(file: str, raw: tuple[np.ndarray, np.ndarray], ratio: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``raw`` merged, decimated to ``ratio`` of its triangles, split at creases (with normals)."""
    key = (*_file_key(file), round(float(ratio), 4))
    got = _PROCESSED.get(key)
    if got is not None:
        return got
    import trimesh

    v, f = raw
    m = trimesh.Trimesh(v, f, process=True)  # merges duplicate vertices (the STL soup)
    v, f = np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
    if ratio < 1.0 and len(f) > 64:
        import fast_simplification

        v, f = fast_simplification.simplify(v, f, target_reduction=1.0 - ratio)
        v, f = np.asarray(v, float), np.asarray(f, np.int64)
    out = _crease_split(v, f, np.radians(CREASE_DEG))
    if len(_PROCESSED) >= _PROCESSED_MAX:
        _PROCESSED.pop(next(iter(_PROCESSED)))
    _PROCESSED[key] = out
    return out


def robot_mesh(skel: Skeleton, q: np.ndarray | None = None, max_triangles: int | None = None
               ) -> tuple[SkinnedMesh | None, list[str]]:
    """The rigidly skinned mesh of a skeleton read from a robot file, bound at pose ``q``.

    Args:
        skel: a skeleton from :mod:`animik.io.robot_model` (its ``meta["robot_geoms"]``).
        q: ``(n_dof,)`` bind pose (default the rest pose).
        max_triangles: display budget of the whole mesh (see the module docstring); ``None``:
            the files' triangles exactly as read.

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
    geoms = [g for g in skel.meta.get("robot_geoms", ()) if g[2]]  # no file: already warned
    for body, _name, file, *_ in geoms:
        if file not in cache:
            try:
                cache[file] = _load(file)
            except Exception as e:  # noqa: BLE001 - a bad mesh file must not stop the robot
                cache[file] = None
                warnings.append(f"mesh {file!r} (body {body!r}) could not be read: {e}")
    ratio = 1.0
    if max_triangles is not None:
        total = sum(len(cache[g[2]][1]) for g in geoms if cache[g[2]] is not None)
        ratio = min(1.0, max_triangles / max(total, 1))
    for body, _name, file, gpos, grot, gscale, rgba in geoms:
        got = cache[file]
        if got is None:
            continue
        v, f = got
        fn = None
        if max_triangles is not None:
            v, f, fn = _processed(file, got, ratio)
        j = skel.joint_index(body)
        local = (v * np.asarray(gscale)) @ np.asarray(grot).reshape(3, 3).T + np.asarray(gpos)
        w = local @ world[j, :3, :3].T + world[j, :3, 3]
        if np.linalg.det(np.diag(gscale)) < 0:
            f = f[:, ::-1]  # a mirroring scale flips the winding
        if fn is None:
            vn = _vertex_normals(w, f)
        else:  # normals of the processed file, carried by the geom's and the body's rotation
            g = np.asarray(grot).reshape(3, 3) @ np.diag(1.0 / np.asarray(gscale, float))
            vn = fn @ (world[j, :3, :3] @ g).T
            vn /= np.maximum(np.linalg.norm(vn, axis=1, keepdims=True), 1e-20)
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
    for body, _name, kind, size, gpos, grot, rgba in skel.meta.get("robot_primitives", ()):
        got = _primitive(kind, np.asarray(size, float))
        if got is None:
            continue
        v, f, fn = got
        j = skel.joint_index(body)
        R = world[j, :3, :3] @ np.asarray(grot).reshape(3, 3)
        w = v @ R.T + (world[j, :3, :3] @ np.asarray(gpos) + world[j, :3, 3])
        key = tuple(float(x) for x in rgba)
        if key not in colours:
            colours[key] = len(materials)
            materials.append(Material(name=f"rgba{len(materials)}", base_color=key))
        pos.append(w)
        nrm.append(fn @ R.T)
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


def _primitive(kind: str, size: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(vertices, faces, normals)`` of an MJCF primitive (half sizes) in its own frame: the
    axis of capsules and cylinders along z, as MuJoCo's; flat normals on box faces and cylinder
    caps (split at creases)."""
    import trimesh.creation as tc

    if kind == "sphere" and size[0] > 0:
        m = tc.icosphere(subdivisions=3, radius=size[0])
    elif kind == "ellipsoid" and np.all(size > 0):
        m = tc.icosphere(subdivisions=3, radius=1.0)
        m.vertices = np.asarray(m.vertices) * size
    elif kind == "box" and np.all(size > 0):
        m = tc.box(extents=2.0 * size)
    elif kind == "cylinder" and size[0] > 0 and size[1] > 0:
        m = tc.cylinder(radius=size[0], height=2.0 * size[1], sections=32)
    elif kind == "capsule" and size[0] > 0:
        m = tc.capsule(height=2.0 * size[1], radius=size[0], count=[32, 16])
    else:
        return None
    return _crease_split(np.asarray(m.vertices, float), np.asarray(m.faces, np.int64),
                         np.radians(CREASE_DEG))


def _crease_split(v: np.ndarray, f: np.ndarray, angle: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices split along edges sharper than ``angle`` (rad), with area-weighted normals.

    Faces joined by smooth edges form patches (connected components of the face adjacency kept
    below ``angle``, as trimesh's ``smooth_shade`` but without building sub-meshes); a vertex
    becomes one vertex per patch it touches, whose normal averages that patch's faces.

    Returns:
        ``(vertices (V', 3), faces (F, 3), normals (V', 3))``.
    """
    import trimesh

    m = trimesh.Trimesh(v, f, process=False)
    if len(f) == 0:
        return v, f, np.zeros_like(v)
    adj = m.face_adjacency
    keep = adj[m.face_adjacency_angles < angle]
    patch = trimesh.graph.connected_component_labels(keep, node_count=len(f))
    corner_v = f.ravel()
    corner_p = np.repeat(patch, 3)
    key = corner_v.astype(np.int64) * (int(patch.max()) + 1) + corner_p
    uniq, inv = np.unique(key, return_inverse=True)
    new_v = v[uniq // (int(patch.max()) + 1)]
    fn = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])  # 2 x area, unnormalised
    nrm = np.zeros((len(uniq), 3))
    np.add.at(nrm, inv, np.repeat(fn, 3, axis=0))
    n = np.linalg.norm(nrm, axis=1, keepdims=True)
    nrm = np.where(n > 1e-20, nrm / np.maximum(n, 1e-20), np.array([0.0, 0.0, 1.0]))
    return new_v, inv.reshape(-1, 3).astype(np.int64), nrm


def _vertex_normals(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    out = np.zeros_like(v)
    for k in range(3):
        np.add.at(out, f[:, k], n)
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    out = np.where(norm > 1e-20, out / np.maximum(norm, 1e-20), np.array([0.0, 0.0, 1.0]))
    return out


def read_robot_character(path: str | Path, floating: bool = True,
                         max_triangles: int | None = None) -> Character:
    """A robot (``.urdf``, or MJCF ``.xml`` / ``.mjcf``) with its link meshes.

    Args:
        path: the robot file.
        floating: URDF only: give the root a free joint (see :mod:`animik.io.urdf_read`).
        max_triangles: display budget (see :func:`robot_mesh`); ``None``: exact meshes.

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
    mesh, warnings = robot_mesh(skel, max_triangles=max_triangles)
    warnings = [*skel.meta.get("warnings", ()), *warnings]
    return Character(skel, mesh, (), name=skel.name,
                     meta={"source": str(p), "warnings": tuple(warnings)})
