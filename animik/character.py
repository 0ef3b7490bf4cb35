"""Characters: a skeleton with a skinned mesh, its materials and its clips.

One mesh type serves every body animik draws: a rigged glTF character (up to 4 influences per
vertex), a body generated for a built-in rig or a BVH skeleton (smooth weights), and a robot's
link meshes (one influence of weight 1 per vertex: rigid skinning is the same formula).

Linear blend skinning (glTF 2.0 §3.7.3, with the mesh already in world coordinates at the bind
pose)::

    skin_from_bind[j] = world_from_joint(q)[j] @ inverse_bind[j]          (4, 4) per joint
    p(q)              = sum_k weights[v, k] * skin_from_bind[joints[v, k]] @ p_bind[v]

``inverse_bind[j]`` is ``joint_from_world`` at the bind pose (glTF's inverse bind matrix with the
mesh node's transform folded in), so at the bind pose every ``skin_from_bind`` is the identity.
Joint indices are the *skeleton's* joint indices (a file's skin-joint order is remapped on load).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .errors import ShapeError, ValueRangeError
from .motion import Motion
from .skeleton import Skeleton

MAX_INFLUENCES = 4


def _frozen(a: Any, dtype: Any, shape_tail: tuple[int, ...], what: str) -> np.ndarray:
    arr = np.array(a, dtype=dtype)
    if arr.ndim != 1 + len(shape_tail) or arr.shape[1:] != shape_tail:
        raise ShapeError(f"{what} must have shape (n, {', '.join(map(str, shape_tail))}), "
                         f"got {arr.shape}")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Material:
    """A metallic-roughness material reduced to what the viewport draws.

    Attributes:
        name: the file's material name ("" when unnamed).
        base_color: linear RGBA factor ``(4,)`` in [0, 1].
        base_color_texture: RGBA ``(H, W, 4)`` uint8 image, or None.
        metallic, roughness: glTF factors in [0, 1].
        double_sided: draw back faces too.
        source: the file's own material object (a dict), kept for a faithful re-export.
    """

    name: str = ""
    base_color: tuple[float, float, float, float] = (0.8, 0.8, 0.8, 1.0)
    base_color_texture: np.ndarray | None = None
    metallic: float = 0.0
    roughness: float = 0.8
    double_sided: bool = False
    source: Any = None


@dataclass(frozen=True)
class MeshPart:
    """A run of triangles drawn with one material: ``faces[start:start + count]``."""

    start: int
    count: int
    material: int = 0


@dataclass(frozen=True, eq=False)
class SkinnedMesh:
    """A triangle mesh bound to a skeleton's joints by linear blend skinning.

    Attributes:
        positions: ``(V, 3)`` float32 vertex positions in world coordinates at the bind pose, m.
        normals: ``(V, 3)`` float32 unit normals at the bind pose.
        faces: ``(F, 3)`` uint32 vertex indices, counter-clockwise seen from outside.
        joints: ``(V, 4)`` uint16 skeleton joint indices (unused slots: 0 with weight 0).
        weights: ``(V, 4)`` float32, each row sums to 1.
        inverse_bind: ``(n_joints, 4, 4)`` float64 ``joint_from_world`` at the bind pose, one per
            skeleton joint (joints no vertex uses may hold any invertible matrix).
        uvs: ``(V, 2)`` float32 texture coordinates, or None.
        materials: the materials parts refer to (at least one).
        parts: triangle runs by material, covering ``faces`` in order.
        source: file-specific data a writer needs for a faithful re-export (e.g. the glTF JSON and
            buffers of the original file), or None for generated meshes.
    """

    positions: np.ndarray
    normals: np.ndarray
    faces: np.ndarray
    joints: np.ndarray
    weights: np.ndarray
    inverse_bind: np.ndarray
    uvs: np.ndarray | None = None
    materials: tuple[Material, ...] = (Material(),)
    parts: tuple[MeshPart, ...] = ()
    source: Any = None

    def __post_init__(self) -> None:
        pos = _frozen(self.positions, np.float32, (3,), "SkinnedMesh.positions")
        n = len(pos)
        fields = {
            "positions": pos,
            "normals": _frozen(self.normals, np.float32, (3,), "SkinnedMesh.normals"),
            "faces": _frozen(self.faces, np.uint32, (3,), "SkinnedMesh.faces"),
            "joints": _frozen(self.joints, np.uint16, (MAX_INFLUENCES,), "SkinnedMesh.joints"),
            "weights": _frozen(self.weights, np.float32, (MAX_INFLUENCES,), "SkinnedMesh.weights"),
            "inverse_bind": _frozen(self.inverse_bind, np.float64, (4, 4),
                                    "SkinnedMesh.inverse_bind"),
        }
        for key in ("normals", "joints", "weights"):
            if len(fields[key]) != n:
                raise ShapeError(f"SkinnedMesh.{key} has {len(fields[key])} rows for {n} vertices")
        if self.uvs is not None:
            fields["uvs"] = _frozen(self.uvs, np.float32, (2,), "SkinnedMesh.uvs")
            if len(fields["uvs"]) != n:
                raise ShapeError(f"SkinnedMesh.uvs has {len(fields['uvs'])} rows for {n} vertices")
        if len(fields["faces"]) and int(fields["faces"].max()) >= n:
            raise ValueRangeError(f"SkinnedMesh.faces refers to vertex {int(fields['faces'].max())}"
                                  f" of {n}")
        if len(fields["joints"]) and int(fields["joints"].max()) >= len(fields["inverse_bind"]):
            raise ValueRangeError(
                f"SkinnedMesh.joints refers to joint {int(fields['joints'].max())} of "
                f"{len(fields['inverse_bind'])}")
        w = fields["weights"]
        if not np.all(np.isfinite(w)) or np.any(w < 0) or (
                n and not np.allclose(w.sum(axis=1), 1.0, atol=1e-3)):
            raise ValueRangeError("SkinnedMesh.weights must be finite, >= 0, and sum to 1 per vertex")
        for k, v in fields.items():
            object.__setattr__(self, k, v)
        if not self.materials:
            object.__setattr__(self, "materials", (Material(),))
        if not self.parts:
            object.__setattr__(self, "parts", (MeshPart(0, len(fields["faces"]), 0),))
        object.__setattr__(self, "materials", tuple(self.materials))
        object.__setattr__(self, "parts", tuple(self.parts))

    @property
    def n_vertices(self) -> int:
        return int(self.positions.shape[0])

    @property
    def n_faces(self) -> int:
        return int(self.faces.shape[0])

    def replace(self, **changes: Any) -> SkinnedMesh:
        return replace(self, **changes)


def homogeneous(rotations: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``(..., 4, 4)`` transforms from ``(..., 3, 3)`` rotations and ``(..., 3)`` positions (e.g.
    ``FKResult.joint_rotations`` and ``joint_positions`` give ``world_from_joint``)."""
    rot = np.asarray(rotations, dtype=float)
    pos = np.asarray(positions, dtype=float)
    out = np.zeros(rot.shape[:-2] + (4, 4))
    out[..., :3, :3] = rot
    out[..., :3, 3] = pos
    out[..., 3, 3] = 1.0
    return out


def skin_matrices(mesh: SkinnedMesh, world_from_joint: np.ndarray) -> np.ndarray:
    """``skin_from_bind`` per joint: ``world_from_joint(q) @ inverse_bind``.

    Args:
        mesh: the skinned mesh.
        world_from_joint: ``(..., n_joints, 4, 4)`` joint frames of the posed skeleton.

    Returns:
        ``(..., n_joints, 4, 4)`` float64; what the vertex shader receives.
    """
    wfj = np.asarray(world_from_joint, dtype=float)
    if wfj.shape[-3:] != mesh.inverse_bind.shape:
        raise ShapeError(f"world_from_joint must end in {mesh.inverse_bind.shape}, got {wfj.shape}")
    return wfj @ mesh.inverse_bind


def skin_positions(mesh: SkinnedMesh, world_from_joint: np.ndarray) -> np.ndarray:
    """Skinned vertex positions on the CPU (what the app's vertex shader computes).

    Args:
        mesh: the skinned mesh.
        world_from_joint: ``(n_joints, 4, 4)`` joint frames of the posed skeleton.

    Returns:
        ``(V, 3)`` float64 world positions, m.
    """
    skin = skin_matrices(mesh, world_from_joint)  # (J, 4, 4)
    m = np.einsum("vk,vkij->vij", mesh.weights.astype(float), skin[mesh.joints])  # (V, 4, 4)
    return np.einsum("vij,vj->vi", m[:, :3, :3], mesh.positions.astype(float)) + m[:, :3, 3]


@dataclass(frozen=True, eq=False)
class Character:
    """A skeleton with an optional skinned mesh and the clips that came with it.

    Attributes:
        skeleton: the rig (joint names are the file's).
        mesh: the body, or None (drawn as bones).
        clips: the file's animations, in file order.
        name: display name.
        meta: read-only extra information (source path, messages from the loader).
    """

    skeleton: Skeleton
    mesh: SkinnedMesh | None = None
    clips: tuple[Motion, ...] = ()
    name: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mesh is not None and len(self.mesh.inverse_bind) != self.skeleton.n_joints:
            raise ShapeError(f"Character mesh binds {len(self.mesh.inverse_bind)} joints, the "
                             f"skeleton has {self.skeleton.n_joints}")
        for clip in self.clips:
            if clip.skeleton.n_dof != self.skeleton.n_dof:
                raise ShapeError(f"Character clip has {clip.skeleton.n_dof} DoF, the skeleton "
                                 f"has {self.skeleton.n_dof}")
        object.__setattr__(self, "clips", tuple(self.clips))
