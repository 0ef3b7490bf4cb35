"""Read and write motions as glTF 2.0 binary files (``.glb``): a skinned skeleton with animation.

Layout written by :func:`write_glb` (the file side of the Z-up ↔ Y-up boundary):

* **Frames.** glTF is Y-up, metres, right-handed. ``gltf_from_world = Rx(-90°)`` (world ``+z``
  → glTF ``+y``, world ``+y`` → glTF ``-z``; the same map as BVH) is folded into the root
  joint's node transform, so there is no extra wrapper node and every other node transform is
  animik's ``parent_from_joint`` unchanged. A skeleton read from BVH (root rest rotation
  ``Rx(+90°)``) therefore gets exactly the BVH joint transforms.
* **Nodes.** One node per joint, named as the joint, in skeleton order (node ``j`` = joint
  ``j``), children as in the skeleton. A joint's DoFs and rest transform are composed into the
  node's translation and rotation (``parent_from_joint(q) = T(p) R``); node world transforms
  equal :func:`~animik.kinematics.forward_kinematics` rotated by ``gltf_from_world``. The
  nodes' default TRS is the rest pose, which is also the bind pose.
* **Skin.** ``joints`` = the joint nodes, ``skeleton`` = the root joint, and
  ``inverseBindMatrices`` = the inverse world matrices of the joints in the rest pose.
* **Mesh** (``mesh=True``): one octahedral "bone" per parent→child segment (and per site on a
  leaf joint), flat-shaded, each vertex bound rigidly to the segment's joint (``JOINTS_0`` =
  joint, ``WEIGHTS_0`` = (1, 0, 0, 0)), in the bind pose; a mesh node at the scene root with no
  transform, as the spec recommends for skinned meshes.
* **Animation.** One animation named after the clip, sampled at every frame ``i / fps``:
  a ``rotation`` channel (unit quaternions ``xyzw``, sign-continuous) for every joint with
  rotation DoFs, a ``translation`` channel for every joint with translation DoFs, and both for
  the root. All samplers are ``LINEAR`` (slerp for rotations) and share one time accessor, so the
  file reproduces the motion exactly at the frames (to float32 precision, ~1e-7) and
  interpolates between them as glTF viewers do.
* **Extras.** ``extras.animik`` at the top level records the exact skeleton (the animik rig
  file text, :mod:`animik.io.rigfile`), the frame rate, the motion's BVH metadata and the
  first frame's DoF values, so :func:`read_glb` restores the same skeleton, DoF layout and
  Euler branches: glb → BVH → glb round-trips. (The animation, not the extras, is the truth
  for every frame: a tool that edits the animation and keeps the extras still reads right.)

:func:`read_glb` reads the first (or a named) animation back as a :class:`~animik.motion.Motion`:

* a file written by animik: its skeleton from ``extras``, the DoF values recovered from the
  node transforms per frame (:func:`animik.joints.dofs_from_local`: rotation groups in
  closed form on the branch continuous from the previous frame, starting from the stored first
  pose; translations by least squares). The values equal the written ones to float32
  precision, except where the written motion jumped by 2π or between Euler branches from one
  frame to the next (BVH files often wrap angles at ±180°): the read-back is continuous, with
  the same poses;
* any other file: the skin's joint nodes (or, without a skin, the node subtree under the
  animated nodes' common ancestor, without un-animated mesh and camera nodes) become joints
  named as the nodes. A node with an animated rotation, or a non-root
  node with a rest rotation, gets three rotation DoFs ``Z X Y`` (``f"{name}_rz"``... as BVH
  channels); a node with an animated translation gets three translation DoFs (which replace its
  offset, as BVH position channels); the root always gets three rotation DoFs and carries
  ``world_from_gltf`` and the transforms of non-joint ancestor nodes as its rest transform.
  Samplers are evaluated at ``i / fps`` (``LINEAR``, ``STEP`` and ``CUBICSPLINE``); ``fps`` is
  the argument, else the uniform spacing of the keyframes, else 30. Node scale must be 1.

Only the binary container is read and written (``.gltf`` with external or data-URI buffers is
read when given, but the writer always makes ``.glb``). Writing is atomic.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import stat
import struct
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np

from .._version import __version__
from ..character import Character, SkinnedMesh
from ..errors import AnimikError, FileFormatError, SkeletonError
from ..joints import dofs_from_local, local_transforms, tb_angles
from ..motion import Motion
from ..rotations import quaternion as quat
from ..skeleton import ROTATION, TRANSLATION, Dof, Joint, Skeleton
from ._atomic import atomic_write
from .bvh import read_bvh, write_bvh
from .rigfile import dumps_rig, loads_rig

__all__ = ["GLTF_FROM_WORLD", "WORLD_FROM_GLTF", "convert", "dumps_glb", "loads_glb", "read_glb",
           "self_contained", "write_glb"]

#: glTF (Y up) from animik world (Z up): Rx(-90°).
GLTF_FROM_WORLD = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
WORLD_FROM_GLTF = GLTF_FROM_WORLD.T.copy()
WORLD_FROM_GLTF4 = np.eye(4)
WORLD_FROM_GLTF4[:3, :3] = WORLD_FROM_GLTF

_GLB_MAGIC = 0x46546C67  # "glTF"
_CHUNK_JSON = 0x4E4F534A
_CHUNK_BIN = 0x004E4942
_FLOAT, _UBYTE, _USHORT, _UINT = 5126, 5121, 5123, 5125
_ARRAY_BUFFER = 34962
_EXTRAS_VERSION = 1

#: Reader limits (a file beyond them is refused with a :class:`FileFormatError`, never read
#: into memory): the largest file or external buffer, the most sampled frames, the most
#: sampled joint-frames (frames x joints: bounds the ~100 bytes per joint and frame the reader
#: holds), the most elements of one accessor, the most nodes, and the sampling rate range.
MAX_FILE_BYTES = 1 << 30
MAX_FRAMES = 1_000_000
MAX_JOINT_FRAMES = 5_000_000
MAX_ACCESSOR_ELEMENTS = 1 << 26
MAX_NODES = 100_000
MAX_FPS = 10_000.0

_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_CTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32,
           5126: np.float32}


# ============================================================================ writing
class _Builder:
    """Accumulates the binary buffer, buffer views and accessors of one glb."""

    def __init__(self) -> None:
        self.blob = bytearray()
        self.views: list[dict] = []
        self.accessors: list[dict] = []

    def view(self, data: bytes, target: int | None = None) -> int:
        while len(self.blob) % 4:
            self.blob.append(0)
        v: dict[str, Any] = {"buffer": 0, "byteOffset": len(self.blob), "byteLength": len(data)}
        if target is not None:
            v["target"] = target
        self.blob.extend(data)
        self.views.append(v)
        return len(self.views) - 1

    def accessor(self, arr: np.ndarray, kind: str, ctype: int = _FLOAT, target: int | None = None,
                 minmax: bool = False) -> int:
        dtype = _CTYPES[ctype]
        a = np.ascontiguousarray(arr, dtype=dtype)
        n = _COMPONENTS[kind]
        flat = a.reshape(a.shape[0], n) if a.ndim > 1 or n > 1 else a.reshape(-1, 1)
        acc: dict[str, Any] = {"bufferView": self.view(a.tobytes(), target),
                               "componentType": ctype, "count": int(flat.shape[0]), "type": kind}
        if minmax:
            conv = float if ctype == _FLOAT else int
            acc["min"] = [conv(x) for x in flat.min(axis=0)]
            acc["max"] = [conv(x) for x in flat.max(axis=0)]
        self.accessors.append(acc)
        return len(self.accessors) - 1


def _node_locals(skel: Skeleton, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Node rotations ``(..., J, 3, 3)`` and translations ``(..., J, 3)`` in glTF's frame."""
    rot, pos = local_transforms(skel, q)
    rot[..., 0, :, :] = GLTF_FROM_WORLD @ rot[..., 0, :, :]
    pos[..., 0, :] = pos[..., 0, :] @ GLTF_FROM_WORLD.T
    return rot, pos


def _xyzw(rot: np.ndarray) -> np.ndarray:
    """Quaternions ``xyzw`` of rotations ``(T, 3, 3)``, sign-continuous along the first axis."""
    return quat.continuous_quats(quat.xyzw_from_wxyz(quat.quat_from_matrix(rot)))


def _world(skel: Skeleton, rot: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """World 4x4 matrices ``(J, 4, 4)`` from node-local rotations / translations of one pose."""
    J = skel.n_joints
    out = np.zeros((J, 4, 4))
    for j in range(J):
        m = np.eye(4)
        m[:3, :3] = rot[j]
        m[:3, 3] = pos[j]
        p = skel.parents[j]
        out[j] = m if p < 0 else out[p] @ m
    return out


def _bone_mesh(skel: Skeleton, local_pos: np.ndarray, world: np.ndarray):
    """Octahedral bones in the bind pose: positions, normals ``(V, 3)``, joints ``(V,)``."""
    segs: list[tuple[int, np.ndarray]] = []
    for j in range(skel.n_joints):
        for c in skel.children[j]:
            segs.append((j, local_pos[c]))
        if not skel.children[j]:
            segs.extend((j, np.array(skel.site_offsets[s])) for s in range(skel.n_sites)
                        if skel.site_joint[s] == j)
    pos, nrm, jnt = [], [], []
    for j, v in segs:
        length = float(np.linalg.norm(v))
        if length < 1e-3:
            continue
        d = v / length
        e1 = np.cross(d, [1.0, 0.0, 0.0] if abs(d[0]) < 0.9 else [0.0, 1.0, 0.0])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(d, e1)
        r = min(0.1 * length, 0.03)
        mid = 0.2 * v
        ring = [mid + r * e1, mid + r * e2, mid - r * e1, mid - r * e2]
        head, tail = np.zeros(3), v
        tris = []
        for i in range(4):
            a, b = ring[i], ring[(i + 1) % 4]
            tris.append((head, b, a))
            tris.append((tail, a, b))
        m = world[j]
        centre = m[:3, :3] @ (0.5 * v) + m[:3, 3]
        for tri in tris:
            w = [m[:3, :3] @ x + m[:3, 3] for x in tri]
            n = np.cross(w[1] - w[0], w[2] - w[0])
            nn = np.linalg.norm(n)
            if nn < 1e-12:
                continue
            n /= nn
            if np.dot(n, (w[0] + w[1] + w[2]) / 3.0 - centre) < 0:
                w = [w[0], w[2], w[1]]
                n = -n
            pos.extend(w)
            nrm.extend([n, n, n])
            jnt.extend([j, j, j])
    return np.array(pos).reshape(-1, 3), np.array(nrm).reshape(-1, 3), np.array(jnt, dtype=np.int64)


def _mesh_glb_parts(b: _Builder, mesh: SkinnedMesh, n_joints: int) -> tuple[list, list, dict]:
    """Accessors of a generated (source-less) skinned mesh in glTF's frame.

    Returns:
        ``(primitives, materials, extra)`` for one glTF mesh; ``extra`` holds ``images``,
        ``textures``, ``samplers`` lists (possibly empty) and ``ibm`` (the inverse bind matrices
        in glTF's frame, ``(J, 4, 4)``).
    """
    ctype = _UBYTE if n_joints <= 256 else _USHORT
    attrs = {
        "POSITION": b.accessor(mesh.positions.astype(float) @ GLTF_FROM_WORLD.T, "VEC3",
                               target=34962, minmax=True),
        "NORMAL": b.accessor(mesh.normals.astype(float) @ GLTF_FROM_WORLD.T, "VEC3", target=34962),
        "JOINTS_0": b.accessor(np.where(mesh.weights > 0, mesh.joints, 0), "VEC4", ctype,
                               target=34962),
        "WEIGHTS_0": b.accessor(mesh.weights, "VEC4", _FLOAT, target=34962),
    }
    if mesh.uvs is not None:
        attrs["TEXCOORD_0"] = b.accessor(mesh.uvs, "VEC2", target=34962)
    images, textures, materials = [], [], []
    for m in mesh.materials:
        pbr: dict[str, Any] = {"baseColorFactor": [float(x) for x in m.base_color],
                               "metallicFactor": float(m.metallic),
                               "roughnessFactor": float(m.roughness)}
        if m.base_color_texture is not None and mesh.uvs is not None:
            from PIL import Image  # Pillow: PNG encoding of the texture

            out = io.BytesIO()
            Image.fromarray(np.asarray(m.base_color_texture, dtype=np.uint8)).save(out, "PNG")
            images.append({"mimeType": "image/png", "bufferView": b.view(out.getvalue())})
            textures.append({"source": len(images) - 1, "sampler": 0})
            pbr["baseColorTexture"] = {"index": len(textures) - 1}
        mat: dict[str, Any] = {"name": m.name or f"material{len(materials)}",
                               "pbrMetallicRoughness": pbr}
        if m.double_sided:
            mat["doubleSided"] = True
        materials.append(mat)
    prims = []
    V = mesh.n_vertices
    for part in mesh.parts:
        if part.count == 0:
            continue
        f = mesh.faces[part.start: part.start + part.count].reshape(-1)
        itype = _USHORT if V < 65535 else _UINT
        prims.append({"attributes": dict(attrs), "material": int(part.material), "mode": 4,
                      "indices": b.accessor(f, "SCALAR", itype, target=34963)})
    extra = {"images": images, "textures": textures,
             "samplers": [{"magFilter": 9729, "minFilter": 9987}] if textures else [],
             "ibm": mesh.inverse_bind @ WORLD_FROM_GLTF4}
    return prims, materials, extra


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict) or hasattr(v, "items"):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def write_glb(motion: Motion, path: str | os.PathLike, name: str | None = None,
              mesh: bool | SkinnedMesh | Character = True) -> Path:
    """Write a motion as a skinned, animated glTF 2.0 binary file (atomically).

    Args:
        motion: the motion (at least one frame).
        path: destination ``.glb`` file.
        name: animation name (default ``motion.meta["clip"]``, else the skeleton name).
        mesh: True: add the bone mesh bound to the skin (a skin without a mesh is legal but
            most viewers then show nothing); False: no mesh; a :class:`~animik.character.
            SkinnedMesh` (or a :class:`~animik.character.Character`, its mesh): an imported
            character's mesh (``source`` set by :mod:`animik.io.gltf_character`) writes the
            original file (mesh, skin, materials, textures) with ``motion`` as its animation;
            a generated mesh (``source`` None) is written skinned to the joint nodes, with its
            materials and base colour textures (PNG). The motion's joints are matched to the
            character's by name.

    Returns:
        The destination path.

    Raises:
        FileFormatError: an empty motion or non-finite values.
    """
    return atomic_write(path, dumps_glb(motion, name=name, mesh=mesh))


def dumps_glb(motion: Motion, name: str | None = None,
              mesh: bool | SkinnedMesh | Character = True) -> bytes:
    """The glTF binary content :func:`write_glb` writes (same arguments and errors).

    Returns:
        The ``.glb`` bytes; :func:`loads_glb` reads them back.
    """
    if isinstance(mesh, Character):
        mesh = True if mesh.mesh is None else mesh.mesh
    body: SkinnedMesh | None = None
    if isinstance(mesh, SkinnedMesh):
        if mesh.source is not None:
            writer = getattr(mesh.source, "dumps_glb", None)
            if writer is None:
                raise FileFormatError(f"a mesh read from {type(mesh.source).__name__} cannot be "
                                      "written to glTF")
            return writer(motion, name)
        if len(mesh.inverse_bind) != motion.skeleton.n_joints:
            raise FileFormatError(f"the mesh binds {len(mesh.inverse_bind)} joints, the motion's "
                                  f"skeleton {motion.skeleton.name!r} has "
                                  f"{motion.skeleton.n_joints}")
        body = mesh
    skel = motion.skeleton
    T = motion.n_frames
    if T == 0:
        raise FileFormatError(f"cannot write an empty motion (0 frames) of {skel.name!r} to glTF")
    if not np.all(np.isfinite(motion.q)):
        raise FileFormatError(f"motion of {skel.name!r} has NaN or infinite values")
    if name is None:
        name = str(motion.meta.get("clip", "")) or skel.name
    J = skel.n_joints
    rot, pos = _node_locals(skel, motion.q)  # (T, J, 3, 3), (T, J, 3)
    rest_rot, rest_pos = _node_locals(skel, skel.rest_q)
    rest_world = _world(skel, rest_rot, rest_pos)

    b = _Builder()
    nodes: list[dict[str, Any]] = []
    rest_quat = _xyzw(rest_rot)
    for j in range(J):
        node: dict[str, Any] = {"name": skel.joint_names[j]}
        if skel.children[j]:
            node["children"] = [int(c) for c in skel.children[j]]
        node["rotation"] = [float(x) for x in rest_quat[j]]
        node["translation"] = [float(x) for x in rest_pos[j]]
        nodes.append(node)

    ibm = np.linalg.inv(rest_world)
    ibm[:, 3, :] = [0.0, 0.0, 0.0, 1.0]
    body_parts = None
    if body is not None:
        body_parts = _mesh_glb_parts(b, body, J)
        ibm = body_parts[2]["ibm"]
        ibm[:, 3, :] = [0.0, 0.0, 0.0, 1.0]
    ibm_acc = b.accessor(np.swapaxes(ibm, -1, -2).reshape(J, 16), "MAT4")  # column-major
    skin = {"name": skel.name, "joints": list(range(J)), "skeleton": 0,
            "inverseBindMatrices": ibm_acc}

    gltf: dict[str, Any] = {"asset": {"version": "2.0", "generator": _generator()}}
    scene_nodes = [0]
    meshes, materials = [], []
    if body_parts is not None:
        prims, materials, extra = body_parts
        meshes.append({"name": f"{skel.name} body", "primitives": prims})
        for key in ("images", "textures", "samplers"):
            if extra[key]:
                gltf[key] = extra[key]
        mesh_name = f"{skel.name} mesh"
        while mesh_name in skel.joint_names:
            mesh_name += "_"
        nodes.append({"name": mesh_name, "mesh": 0, "skin": 0})
        scene_nodes.append(len(nodes) - 1)
    elif mesh:
        v_pos, v_nrm, v_jnt = _bone_mesh(skel, rest_pos, rest_world)
        if len(v_pos):
            ctype = _UBYTE if J <= 256 else _USHORT
            joints4 = np.zeros((len(v_jnt), 4), dtype=np.int64)
            joints4[:, 0] = v_jnt
            weights4 = np.zeros((len(v_jnt), 4))
            weights4[:, 0] = 1.0
            attrs = {
                "POSITION": b.accessor(v_pos, "VEC3", target=_ARRAY_BUFFER, minmax=True),
                "NORMAL": b.accessor(v_nrm, "VEC3", target=_ARRAY_BUFFER),
                "JOINTS_0": b.accessor(joints4, "VEC4", ctype, target=_ARRAY_BUFFER),
                "WEIGHTS_0": b.accessor(weights4, "VEC4", target=_ARRAY_BUFFER),
            }
            materials.append({"name": "bone", "pbrMetallicRoughness": {
                "baseColorFactor": [0.75, 0.75, 0.78, 1.0], "metallicFactor": 0.0,
                "roughnessFactor": 0.7}})
            meshes.append({"name": f"{skel.name} bones",
                           "primitives": [{"attributes": attrs, "material": 0}]})
            mesh_name = f"{skel.name} mesh"
            while mesh_name in skel.joint_names:
                mesh_name += "_"
            nodes.append({"name": mesh_name, "mesh": 0, "skin": 0})
            scene_nodes.append(len(nodes) - 1)

    times = np.arange(T) / motion.fps
    t_acc = b.accessor(times, "SCALAR", minmax=True)
    channels, samplers = [], []
    has_rot = np.zeros(J, dtype=bool)
    has_trans = np.zeros(J, dtype=bool)
    has_rot[skel.dof_joint[skel.dof_type == ROTATION]] = True
    has_trans[skel.dof_joint[skel.dof_type == TRANSLATION]] = True
    has_rot[0] = has_trans[0] = True
    for j in range(J):
        if has_trans[j]:
            samplers.append({"input": t_acc, "interpolation": "LINEAR",
                             "output": b.accessor(pos[:, j], "VEC3")})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": j, "path": "translation"}})
        if has_rot[j]:
            samplers.append({"input": t_acc, "interpolation": "LINEAR",
                             "output": b.accessor(_xyzw(rot[:, j]), "VEC4")})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": j, "path": "rotation"}})

    meta = {k: _jsonable(v) for k, v in motion.meta.items() if k.startswith("bvh_") or k == "clip"}
    gltf.update({
        "scene": 0,
        "scenes": [{"name": skel.name, "nodes": scene_nodes}],
        "nodes": nodes,
        "skins": [skin],
        "animations": [{"name": name, "channels": channels, "samplers": samplers}],
    })
    if meshes:
        gltf["meshes"] = meshes
        gltf["materials"] = materials
    gltf["accessors"] = b.accessors
    gltf["bufferViews"] = b.views
    gltf["buffers"] = [{"byteLength": len(b.blob)}]
    gltf["extras"] = {"animik": {"format_version": _EXTRAS_VERSION, "fps": motion.fps,
                                 "frames": T, "motion_meta": meta,
                                 "first_pose": [float(x) for x in motion.q[0]],
                                 "rig": dumps_rig(skel, header="skeleton of this glTF file")}}
    return _glb_bytes(gltf, bytes(b.blob))


def _generator() -> str:
    return f"animik {__version__}"


def _glb_bytes(gltf: dict, blob: bytes) -> bytes:
    js = json.dumps(gltf, separators=(",", ":"), allow_nan=False).encode("utf-8")
    js += b" " * (-len(js) % 4)
    blob = blob + b"\0" * (-len(blob) % 4)
    total = 12 + 8 + len(js) + (8 + len(blob) if blob else 0)
    out = bytearray(struct.pack("<III", _GLB_MAGIC, 2, total))
    out += struct.pack("<II", len(js), _CHUNK_JSON) + js
    if blob:
        out += struct.pack("<II", len(blob), _CHUNK_BIN) + blob
    return bytes(out)


# ============================================================================ reading
def _bad(src: str, what: str) -> FileFormatError:
    return FileFormatError(f"{src}: {what}")


def _index(v: Any, n: int, what: str, src: str) -> int:
    """``v`` as an index into a list of ``n`` items (a plain int, not a bool), else an error."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < n:
        raise _bad(src, f"{what} must be an index in 0..{n - 1}, got {v!r}")
    return v


def _list_of_dicts(gltf: dict, key: str, src: str, limit: int | None = None) -> list[dict]:
    items = gltf.get(key, [])
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise _bad(src, f"{key!r} must be a list of objects")
    if limit is not None and len(items) > limit:
        raise _bad(src, f"{len(items)} {key} (at most {limit} are read)")
    return items


def _external_buffer(folder: Path, uri: str, i: int, src: str) -> bytes:
    """An external buffer file: a regular file inside ``folder`` of at most MAX_FILE_BYTES."""
    rel = unquote(uri)
    if "\0" in rel:
        raise _bad(src, f"buffers[{i}].uri contains a NUL character")
    base = folder.resolve()
    target = (base / rel).resolve()
    if target != base and base not in target.parents:
        raise _bad(src, f"buffers[{i}].uri {uri!r} points outside the file's folder {str(base)!r}")
    try:
        st = target.stat()
    except FileNotFoundError:
        raise FileNotFoundError(2, f"{src}: buffers[{i}] file not found", str(target)) from None
    except OSError as e:
        raise _bad(src, f"buffers[{i}].uri {uri!r}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise _bad(src, f"buffers[{i}].uri {uri!r} is not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise _bad(src, f"buffers[{i}] file is {st.st_size} bytes (at most {MAX_FILE_BYTES})")
    try:
        with open(target, "rb") as f:
            # At most the size stat gave (read(n) allocates n bytes up front).
            return f.read(st.st_size)
    except OSError as e:
        raise _bad(src, f"buffers[{i}].uri {uri!r}: {e.strerror or e}") from None


def self_contained(path: str | os.PathLike) -> bytes:
    """A ``.gltf`` file's content with its external buffer and image files embedded as
    ``data:`` URIs (the same files the reader would open: regular files inside the file's
    folder), so it can travel as bytes (batch retargeting ships targets to workers as bytes).
    A ``.glb`` or an already self-contained ``.gltf`` comes back unchanged.

    Raises:
        FileFormatError: not glTF 2.0, or a uri outside the folder / not a regular file.
        FileNotFoundError: a referenced file is missing.
    """
    path = Path(path)
    data = path.read_bytes()
    src = path.name
    if data[:4] == b"glTF":
        return data
    gltf, _ = _load(data, src, path.parent)  # validates, and every external buffer is readable
    changed = False
    for key, mime in (("buffers", "application/octet-stream"), ("images", None)):
        for i, item in enumerate(_list_of_dicts(gltf, key, src)):
            uri = item.get("uri")
            if not isinstance(uri, str) or uri.startswith("data:"):
                continue
            blob = _external_buffer(path.parent, uri, i, src)
            kind = mime or ("image/png" if blob[:8] == b"\x89PNG\r\n\x1a\n" else
                            "image/jpeg" if blob[:2] == b"\xff\xd8" else
                            item.get("mimeType") or "application/octet-stream")
            item["uri"] = f"data:{kind};base64,{base64.b64encode(blob).decode('ascii')}"
            changed = True
    return json.dumps(gltf).encode("utf-8") if changed else data


def _load(data: bytes, src: str, folder: Path | None) -> tuple[dict, list[bytes]]:
    """``(gltf JSON, buffers)`` of ``.glb`` / ``.gltf`` content; external buffer files are read
    from ``folder`` (content given as bytes has none) and must lie inside it."""
    if len(data) > MAX_FILE_BYTES:
        raise _bad(src, f"{len(data)} bytes (at most {MAX_FILE_BYTES} are read)")
    if data[:4] == b"glTF":
        if len(data) < 20:
            raise _bad(src, "truncated glb header")
        magic, version, length = struct.unpack_from("<III", data, 0)
        if version != 2:
            raise _bad(src, f"glb container version {version}, expected 2")
        if length > len(data):
            raise _bad(src, f"glb declares {length} bytes but has {len(data)}")
        off, js, bin_chunk = 12, None, None
        while off + 8 <= length:
            clen, ctype = struct.unpack_from("<II", data, off)
            chunk = data[off + 8: off + 8 + clen]
            if len(chunk) != clen:
                raise _bad(src, f"truncated glb chunk at byte {off}")
            if ctype == _CHUNK_JSON and js is None:
                js = chunk
            elif ctype == _CHUNK_BIN and bin_chunk is None:
                bin_chunk = chunk
            off += 8 + clen
        if js is None:
            raise _bad(src, "glb without a JSON chunk")
    else:
        js, bin_chunk = data, None
    try:
        gltf = json.loads(js.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _bad(src, f"not a glTF file (invalid JSON: {type(e).__name__}: {e})") from None
    asset = gltf.get("asset") if isinstance(gltf, dict) else None
    if not isinstance(asset, dict) or not str(asset.get("version", "")).startswith("2"):
        raise _bad(src, "not a glTF 2.0 file (asset must be an object with version 2.x)")
    buffers = []
    for i, buf in enumerate(_list_of_dicts(gltf, "buffers", src)):
        uri = buf.get("uri")
        if uri is None:
            if bin_chunk is None:
                raise _bad(src, f"buffers[{i}] has no uri and there is no BIN chunk")
            buffers.append(bin_chunk)
        elif not isinstance(uri, str):
            raise _bad(src, f"buffers[{i}].uri must be a string, got {type(uri).__name__}")
        elif uri.startswith("data:"):
            try:
                buffers.append(base64.b64decode(uri.split(",", 1)[1]))
            except (ValueError, IndexError):
                raise _bad(src, f"buffers[{i}]: bad data URI") from None
        elif folder is None:
            raise _bad(src, f"buffers[{i}] refers to the file {uri!r}; content given as bytes "
                            "must carry its buffers (a .glb, or data: URIs)")
        else:
            buffers.append(_external_buffer(folder, uri, i, src))
    return gltf, buffers


def _accessor(gltf: dict, buffers: list[bytes], index: Any, src: str) -> np.ndarray:
    """Accessor ``index`` as float64 ``(count, components)``; finite values only."""
    accessors = _list_of_dicts(gltf, "accessors", src)
    index = _index(index, len(accessors), "an accessor index", src)
    acc = accessors[index]
    if "sparse" in acc:
        raise _bad(src, f"accessors[{index}]: sparse accessors are not supported")
    n = _COMPONENTS.get(acc.get("type"))
    dtype = _CTYPES.get(acc.get("componentType"))
    count = acc.get("count")
    if n is None or dtype is None or not isinstance(count, int) or isinstance(count, bool) \
            or count < 0:
        raise _bad(src, f"accessors[{index}]: bad type/componentType/count")
    if count * n > MAX_ACCESSOR_ELEMENTS:
        raise _bad(src, f"accessors[{index}]: {count} x {n} elements (at most "
                        f"{MAX_ACCESSOR_ELEMENTS} are read)")
    if "bufferView" not in acc:
        return np.zeros((count, n))
    views = _list_of_dicts(gltf, "bufferViews", src)
    view = views[_index(acc["bufferView"], len(views), f"accessors[{index}].bufferView", src)]
    buf = buffers[_index(view.get("buffer"), len(buffers), "bufferViews[].buffer", src)]
    fields = [view.get("byteOffset", 0), acc.get("byteOffset", 0), view.get("byteLength"),
              view.get("byteStride") or 0]
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in fields):
        raise _bad(src, f"accessors[{index}]: bad byteOffset/byteLength/byteStride")
    v_off, a_off, v_len, stride = fields
    start = v_off + a_off
    item = np.dtype(dtype).itemsize * n
    stride = stride or item
    need = start + stride * (count - 1) + item if count else start
    if need > len(buf) or need > v_off + v_len:
        raise _bad(src, f"accessors[{index}] reaches past its buffer view")
    raw = np.ndarray((count, n), dtype=np.dtype(dtype).newbyteorder("<"), buffer=buf,
                     offset=start, strides=(stride, np.dtype(dtype).itemsize))
    out = raw.astype(float)
    if acc.get("normalized"):
        info = np.iinfo(dtype)
        out = np.maximum(out / info.max, -1.0)
    if not np.all(np.isfinite(out)):
        raise _bad(src, f"accessors[{index}] holds NaN or infinite values")
    return out


def _vector(node: dict, key: str, n: int, default: list[float], src: str, idx: int) -> np.ndarray:
    v = node.get(key, default)
    if not isinstance(v, list) or len(v) != n or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v):
        raise _bad(src, f"nodes[{idx}].{key} must be {n} finite numbers, got {v!r:.80}")
    return np.array(v, dtype=float)


def _node_rest(node: dict, src: str, idx: int) -> tuple[np.ndarray, np.ndarray]:
    if "matrix" in node:
        m = _vector(node, "matrix", 16, [], src, idx).reshape(4, 4).T
        r = m[:3, :3]
        scale = np.linalg.norm(r, axis=0)
        if np.any(np.abs(scale - 1.0) > 1e-5) or abs(np.linalg.det(r) - 1.0) > 1e-4:
            raise _bad(src, f"nodes[{idx}] ({node.get('name', '')!r}): scaled or sheared node "
                            "matrices are not supported")
        u, _, vt = np.linalg.svd(r)
        return u @ vt, m[:3, 3].copy()
    s = _vector(node, "scale", 3, [1.0, 1.0, 1.0], src, idx)
    if np.any(np.abs(s - 1.0) > 1e-5):
        raise _bad(src, f"nodes[{idx}] ({node.get('name', '')!r}): node scale {s.tolist()} is "
                        "not supported (joints must not scale)")
    q = _vector(node, "rotation", 4, [0.0, 0.0, 0.0, 1.0], src, idx)
    if np.linalg.norm(q) < 1e-6:
        raise _bad(src, f"nodes[{idx}].rotation is a zero quaternion")
    r = quat.matrix_from_quat(quat.wxyz_from_xyzw(q / np.linalg.norm(q)))
    return r, _vector(node, "translation", 3, [0.0, 0.0, 0.0], src, idx)


def _sample(times: np.ndarray, values: np.ndarray, interp: str, t: np.ndarray, is_rot: bool,
            src: str) -> np.ndarray:
    """Evaluate a sampler (key ``times`` ascending) at the frame times ``t``: O(T log K)."""
    K = times.shape[0]
    if interp == "CUBICSPLINE":
        if values.shape[0] != 3 * K:
            raise _bad(src, "CUBICSPLINE sampler output must hold 3 values per key")
        a_in, vals, b_out = values[0::3], values[1::3], values[2::3]
    else:
        if values.shape[0] != K:
            raise _bad(src, f"sampler output count {values.shape[0]} differs from its {K} key times")
        vals = values
    if K == 0:
        raise _bad(src, "a sampler has no keys")
    if is_rot and np.any(np.linalg.norm(vals, axis=-1) < 1e-6):
        raise _bad(src, "a rotation sampler holds a zero quaternion")
    # Frames that coincide with a key (float32 times: relative tolerance) take the key value.
    # The nearest key is one of the two around t's insertion point: linear, not T x K.
    ins = np.searchsorted(times, t)
    lo = np.clip(ins - 1, 0, K - 1)
    hi = np.clip(ins, 0, K - 1)
    d_lo, d_hi = np.abs(t - times[lo]), np.abs(times[hi] - t)
    k_near = np.where(d_hi < d_lo, hi, lo)
    snap = np.minimum(d_lo, d_hi) <= 1e-5 + 2.5e-7 * np.abs(t)
    if K == 1:
        out = np.repeat(vals[:1], t.shape[0], axis=0)
    else:
        seg = np.clip(np.searchsorted(times, t, side="right") - 1, 0, K - 2)
        h = times[seg + 1] - times[seg]
        u = np.clip((t - times[seg]) / np.where(h > 0, h, 1.0), 0.0, 1.0)
        if interp == "STEP":
            out = np.where((u >= 1.0)[:, None], vals[seg + 1], vals[seg])
        elif interp == "CUBICSPLINE":
            uu = u[:, None]
            u2, u3 = uu * uu, uu * uu * uu
            out = ((2 * u3 - 3 * u2 + 1) * vals[seg] + (u3 - 2 * u2 + uu) * h[:, None] * b_out[seg]
                   + (-2 * u3 + 3 * u2) * vals[seg + 1] + (u3 - u2) * h[:, None] * a_in[seg + 1])
        elif is_rot:
            out = quat.quat_slerp(vals[seg], vals[seg + 1], u)
        else:
            out = vals[seg] + u[:, None] * (vals[seg + 1] - vals[seg])
    out = np.where(snap[:, None], vals[k_near], out)
    if is_rot:
        norm = np.linalg.norm(out, axis=-1, keepdims=True)
        if np.any(norm < 1e-9):
            raise _bad(src, "a CUBICSPLINE rotation passes through a zero quaternion")
        out = out / norm
    return out


def read_glb(path: str | os.PathLike, animation: int | str | None = None,
             fps: float | None = None) -> Motion:
    """Read an animated glTF 2.0 file (``.glb``) as a motion (metres, radians, Z up).

    Limits (beyond them the file is refused with a :class:`FileFormatError`; memory stays
    bounded by them): files and external buffers of at most :data:`MAX_FILE_BYTES` (1 GiB),
    external buffers only inside the file's folder, at most :data:`MAX_FRAMES` (10⁶) sampled
    frames and :data:`MAX_JOINT_FRAMES` (5·10⁶) frames x joints, accessors of at most
    :data:`MAX_ACCESSOR_ELEMENTS` numbers, :data:`MAX_NODES` nodes, ``fps`` at most
    :data:`MAX_FPS`. Time and memory are linear in the frame count.

    Args:
        path: the file.
        animation: index or name of the animation (default: the first).
        fps: frame rate to sample at (default: the file's, see the module docstring).

    Returns:
        The motion; ``meta["source"]`` is the path, ``meta["gltf_animation"]`` the animation name.

    Raises:
        FileNotFoundError: no such file (or external buffer file).
        FileFormatError: not glTF 2.0, no animation or skeleton, unsupported features (scaled
            joints, sparse accessors), a bad animation index or name, a limit exceeded.
    """
    p = Path(path)
    src = os.fspath(path)
    if not p.is_file():
        raise FileNotFoundError(2, "glTF file not found", src)
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _bad(src, f"{size} bytes (at most {MAX_FILE_BYTES} are read)")
    return _read_checked(p.read_bytes(), src, p.parent, animation, fps)


def loads_glb(data: bytes, animation: int | str | None = None, fps: float | None = None,
              source: str = "<bytes>") -> Motion:
    """Read glTF 2.0 content (``.glb`` bytes, or ``.gltf`` JSON with embedded buffers).

    Args:
        data: the content.
        animation, fps: as in :func:`read_glb` (same limits).
        source: names the content in error messages and ``meta["source"]``.

    Raises:
        FileFormatError: as in :func:`read_glb`; also a ``.gltf`` that refers to buffer files.
    """
    return _read_checked(bytes(data), source, None, animation, fps)


def _read_checked(data: bytes, src: str, folder: Path | None, animation, fps) -> Motion:
    # Every structural problem is checked where it is met; this is the net under them, so a
    # malformed file never surfaces as a bare Python exception.
    try:
        return _read(*_load(data, src, folder), src, animation, fps)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError,
            RecursionError) as e:
        if isinstance(e, AnimikError):
            raise
        raise _bad(src, f"malformed glTF ({type(e).__name__}: {e})") from None


def _parents(nodes: list[dict], src: str) -> dict[int, int]:
    """``child -> parent`` of the node graph, checked to be a forest (no node with two parents,
    no cycle): every later walk up or down the graph then ends."""
    parent: dict[int, int] = {}
    for i, nd in enumerate(nodes):
        kids = nd.get("children", [])
        if not isinstance(kids, list):
            raise _bad(src, f"nodes[{i}].children must be a list")
        for c in kids:
            c = _index(c, len(nodes), f"nodes[{i}].children[]", src)
            if c in parent:
                raise _bad(src, f"node {c} is a child of both node {parent[c]} and node {i}")
            parent[c] = i
    state = [0] * len(nodes)  # 0 unseen, 1 on the current walk, 2 known to reach a root
    for i in range(len(nodes)):
        walk, n = [], i
        while n is not None and state[n] == 0:
            state[n] = 1
            walk.append(n)
            n = parent.get(n)
        if n is not None and state[n] == 1:
            raise _bad(src, f"the node graph has a cycle through node {n} (a node is its own "
                            "ancestor)")
        for m in walk:
            state[m] = 2
    return parent


def _read(gltf: dict, buffers: list[bytes], src: str, animation, fps) -> Motion:
    nodes = _list_of_dicts(gltf, "nodes", src, MAX_NODES)
    anims = _list_of_dicts(gltf, "animations", src)
    if not anims:
        raise _bad(src, "the file has no animation")
    if animation is None:
        ai = 0
    elif isinstance(animation, str):
        names = [a.get("name", "") for a in anims]
        if animation not in names:
            raise _bad(src, f"no animation named {animation!r}; animations are {names}")
        ai = names.index(animation)
    else:
        ai = int(animation)
        if not 0 <= ai < len(anims):
            raise _bad(src, f"animation index {ai} out of range 0..{len(anims) - 1}")
    if fps is not None:
        fps = _check_fps(fps, "fps", src)
    anim = anims[ai]
    parent = _parents(nodes, src)
    samplers = anim.get("samplers", [])
    channels = anim.get("channels", [])
    if not isinstance(samplers, list) or not isinstance(channels, list):
        raise _bad(src, f"animations[{ai}]: samplers and channels must be lists")
    # Channels: node -> {path: (times, values, interpolation)}
    chans: dict[int, dict[str, tuple]] = {}
    t_max = 0.0
    all_times = []
    for ch in channels:
        tgt = ch.get("target", {}) if isinstance(ch, dict) else None
        if not isinstance(tgt, dict):
            raise _bad(src, f"animations[{ai}]: a channel without a target object")
        if "node" not in tgt:
            continue
        node = _index(tgt["node"], len(nodes), "a channel's target.node", src)
        smp = samplers[_index(ch.get("sampler"), len(samplers), "a channel's sampler", src)]
        if not isinstance(smp, dict):
            raise _bad(src, f"animations[{ai}].samplers[] must be objects")
        tin = _accessor(gltf, buffers, smp.get("input"), src)[:, 0]
        if len(tin) > 1 and np.any(np.diff(tin) < 0):
            raise _bad(src, "a sampler's key times decrease (they must increase)")
        out = _accessor(gltf, buffers, smp.get("output"), src)
        interp = smp.get("interpolation", "LINEAR")
        if interp not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise _bad(src, f"unknown sampler interpolation {interp!r}")
        if tgt.get("path") == "scale":
            vals = out[1::3] if interp == "CUBICSPLINE" else out
            if np.any(np.abs(vals - 1.0) > 1e-4):
                raise _bad(src, f"node {node} has a scale animation; scaled joints are not "
                                "supported")
            continue
        if tgt.get("path") not in ("translation", "rotation"):
            continue
        chans.setdefault(node, {})[tgt["path"]] = (tin, out, interp)
        if len(tin):
            t_max = max(t_max, float(tin[-1]))
            all_times.append(tin)
    if not chans:
        raise _bad(src, f"animation {ai} has no translation or rotation channels")
    extras = gltf.get("extras")
    extras = extras.get("animik") if isinstance(extras, dict) else None
    extras = extras if isinstance(extras, dict) else None

    skins = _list_of_dicts(gltf, "skins", src)
    skin_joints = None
    if skins:
        skin_joints = skins[0].get("joints", [])
        if not isinstance(skin_joints, list):
            raise _bad(src, "skins[0].joints must be a list")
        skin_joints = list(dict.fromkeys(_index(j, len(nodes), "skins[0].joints[]", src)
                                         for j in skin_joints))
    if extras and isinstance(extras.get("rig"), str):
        skel = loads_rig(extras["rig"], source=f"{src} extras.animik.rig")
        by_name = {nodes[i].get("name"): i for i in (skin_joints if skins else range(len(nodes)))}
        missing = [n for n in skel.joint_names if n not in by_name]
        if missing:
            raise _bad(src, f"joints {missing[:5]} of the animik skeleton have no node")
        joint_nodes = [by_name[n] for n in skel.joint_names]
        if fps is None:
            fps = _check_fps(extras.get("fps", 30.0), "extras.animik.fps", src)
        meta = extras.get("motion_meta")
        meta = dict(meta) if isinstance(meta, dict) else {}
        first = extras.get("first_pose")
        ref = np.array(first, dtype=float) if isinstance(first, list) and len(first) == skel.n_dof \
            and all(isinstance(x, (int, float)) and math.isfinite(x) for x in first) \
            else skel.rest_q
    else:
        skel, joint_nodes = _skeleton_from_nodes(nodes, parent, chans, skin_joints, src)
        meta = {}
        ref = skel.rest_q
        if fps is None:
            fps = _infer_fps(all_times)
    n_frames = _frame_count(t_max, fps, skel.n_joints, src)
    t = np.arange(n_frames) / fps
    J = skel.n_joints
    rot = np.empty((n_frames, J, 3, 3))
    pos = np.empty((n_frames, J, 3))
    for j, ni in enumerate(joint_nodes):
        r0, p0 = _node_rest(nodes[ni], src, ni)
        ch = chans.get(ni, {})
        if "rotation" in ch:
            tin, out, interp = ch["rotation"]
            if out.shape[1] != 4:
                raise _bad(src, f"rotation output of node {ni} must be VEC4")
            qx = _sample(tin, out, interp, t, True, src)
            rot[:, j] = quat.matrix_from_quat(quat.wxyz_from_xyzw(qx))
        else:
            rot[:, j] = r0
        if "translation" in ch:
            tin, out, interp = ch["translation"]
            if out.shape[1] != 3:
                raise _bad(src, f"translation output of node {ni} must be VEC3")
            pos[:, j] = _sample(tin, out, interp, t, False, src)
        else:
            pos[:, j] = p0
    # The root: world_from_gltf @ (static non-joint ancestors) @ node (the graph is a forest).
    a = np.eye(4)
    n = parent.get(joint_nodes[0])
    while n is not None:
        r_a, p_a = _node_rest(nodes[n], src, n)
        m = np.eye(4)
        m[:3, :3], m[:3, 3] = r_a, p_a
        a = m @ a
        n = parent.get(n)
    g_rot = WORLD_FROM_GLTF @ a[:3, :3]
    g_pos = WORLD_FROM_GLTF @ a[:3, 3]
    rot[:, 0] = g_rot @ rot[:, 0]
    pos[:, 0] = pos[:, 0] @ g_rot.T + g_pos
    if not (np.all(np.isfinite(rot)) and np.all(np.isfinite(pos))):
        raise _bad(src, "the joint transforms overflow (non-finite values)")
    q = dofs_from_local(skel, rot, pos, ref, sequential=True)
    meta.update({"source": src, "gltf_animation": str(anim.get("name", ai))})
    return Motion(skel, q, fps, meta=meta)


def _check_fps(fps: Any, what: str, src: str) -> float:
    try:
        value = float(fps)
    except (TypeError, ValueError, OverflowError):
        value = math.nan
    if isinstance(fps, bool) or not (math.isfinite(value) and 0 < value <= MAX_FPS):
        raise _bad(src, f"{what} must be a number in (0, {MAX_FPS:g}], got {fps!r}")
    return value


def _frame_count(t_max: float, fps: float, n_joints: int, src: str) -> int:
    """Frames ``0, 1/fps, ... `` up to the last key, that key included: key times are float32,
    so the last key within float32 precision of a frame counts as that frame."""
    x = t_max * fps
    if not math.isfinite(x) or x > MAX_FRAMES:
        raise _bad(src, f"the animation lasts {t_max:.6g} s: {x:.6g} frames at {fps:g} fps "
                        f"(at most {MAX_FRAMES} frames are read)")
    k = round(x)
    n = (k if abs(x - k) <= 1e-3 + 5e-7 * x else math.floor(x)) + 1
    if n * n_joints > MAX_JOINT_FRAMES:
        raise _bad(src, f"{n} frames x {n_joints} joints exceeds the reader's limit of "
                        f"{MAX_JOINT_FRAMES} joint-frames")
    return n


def _infer_fps(all_times: list[np.ndarray]) -> float:
    """The keys' frame rate: the key times are (up to float32 precision) multiples of one
    spacing, the median spacing (a regularly sampled clip) or the smallest (keys on a frame grid
    with gaps), refined by least squares and snapped to an integer rate within 1e-4. Keys on no
    grid: 30 fps."""
    if not all_times:
        return 30.0
    t = np.sort(np.concatenate(all_times))
    # Channels written separately share times up to float32 rounding: merge those.
    keep = np.concatenate([[True], np.diff(t) > 1e-6 + 5e-7 * np.abs(t[1:])])
    t = t[keep]
    if len(t) < 2:
        return 30.0
    d = np.diff(t)
    for dt in (float(np.median(d)), float(np.min(d))):
        if not dt > 0:
            continue
        k = (t - t[0]) / dt
        kr = np.round(k)
        if np.max(np.abs(k - kr)) > 0.01:
            continue
        kc = kr - kr.mean()
        dt = float(np.dot(kc, t - t.mean()) / np.dot(kc, kc))
        fps = 1.0 / dt
        r = round(fps)
        fps = float(r) if abs(fps - r) <= 1e-4 * fps else fps
        if 0 < fps <= MAX_FPS:
            return fps
    return 30.0


def _skeleton_from_nodes(nodes, parent, chans, skin_joints, src) -> tuple[Skeleton, list[int]]:
    if skin_joints is not None:
        members = list(skin_joints)
    else:
        # The subtree under the common ancestor of the animated nodes (mesh and camera nodes
        # that are not animated are not joints).
        chain: set[int] = set()
        for ni in chans:
            n = ni
            while n is not None and n not in chain:
                chain.add(n)
                n = parent.get(n)
        tops = [n for n in chain if parent.get(n) not in chain]
        members, stack = [], list(tops)
        while stack:
            n = stack.pop()
            if n in chans or not ({"mesh", "camera"} & set(nodes[n])):
                members.append(n)
                stack.extend(nodes[n].get("children", []))
    member_set = set(members)
    roots = [n for n in members if parent.get(n) not in member_set]
    if len(roots) != 1:
        raise FileFormatError(f"{src}: the joint nodes must form one tree, found roots "
                              f"{[nodes[r].get('name', r) for r in roots]}")
    # Depth-first order from the root, keeping the node order among siblings.
    order, stack = [], [roots[0]]
    while stack:
        n = stack.pop()
        order.append(n)
        kids = [c for c in nodes[n].get("children", []) if c in member_set]
        stack.extend(reversed(kids))
    names: dict[int, str] = {}
    used: set[str] = set()
    for n in order:
        base = str(nodes[n].get("name") or f"node{n}")
        nm, k = base, 1
        while nm in used:
            k += 1
            nm = f"{base}_{k}"
        used.add(nm)
        names[n] = nm
    joints = []
    for n in order:
        r0, p0 = _node_rest(nodes[n], src, n)
        ch = chans.get(n, {})
        root = n == roots[0]
        dofs = []
        offset = p0
        if "translation" in ch:
            dofs += [Dof(f"{names[n]}_t{a}", f"t{a}", rest=float(p0[i])) for i, a in enumerate("xyz")]
            offset = np.zeros(3)
        rot_dofs = "rotation" in ch or root or np.max(np.abs(r0 - np.eye(3))) > 1e-9
        if rot_dofs:
            # Z X Y (BVH channel order): Rz Rx Ry = Q Rx Ry Rz Qᵀ with Q = [z x y].
            basis = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
            rest = tb_angles(basis.T @ r0 @ basis, np.ones(3), np.zeros(3), np.full(3, -np.inf),
                             np.full(3, np.inf))
            dofs += [Dof(f"{names[n]}_r{a}", f"r{a}", rest=float(rest[i]))
                     for i, a in enumerate("zxy")]
        joints.append(Joint(names[n], None if root else names[parent[n]], tuple(offset), dofs))
    try:
        skel = Skeleton.from_joints(Path(src).stem or "gltf", joints, meta={"source": src})
    except SkeletonError as e:
        raise FileFormatError(f"{src}: cannot build a skeleton from the joint nodes: {e}") from None
    by_name = {names[n]: n for n in order}
    return skel, [by_name[nm] for nm in skel.joint_names]


def convert(in_path: str | os.PathLike, out_path: str | os.PathLike, **options: Any) -> Path:
    """Convert a motion between BVH and glTF binary by extension (``.bvh`` ↔ ``.glb``).

    Args:
        in_path: ``.bvh`` or ``.glb`` input.
        out_path: ``.bvh`` or ``.glb`` output (written atomically).
        **options: passed to the writer (``unit_scale`` / ``precision`` for BVH, ``mesh`` for glb).

    Raises:
        FileFormatError: unknown extensions or a skeleton the output format cannot hold.
    """
    ext_in = Path(in_path).suffix.lower()
    ext_out = Path(out_path).suffix.lower()
    readers = {".bvh": read_bvh, ".glb": read_glb, ".gltf": read_glb}
    if ext_in not in readers:
        raise FileFormatError(f"cannot convert {str(in_path)!r}: unknown input extension {ext_in!r} "
                              "(expected .bvh or .glb)")
    if ext_out not in (".bvh", ".glb"):
        raise FileFormatError(f"cannot convert to {str(out_path)!r}: unknown output extension "
                              f"{ext_out!r} (expected .bvh or .glb)")
    motion = readers[ext_in](in_path)
    if ext_out == ".bvh":
        return write_bvh(motion, out_path, **options)
    return write_glb(motion, out_path, **options)
