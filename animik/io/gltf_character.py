"""Rigged glTF 2.0 characters (``.glb`` / ``.gltf``) read as a :class:`~animik.character.Character`
and written back with a new animation, keeping the file's mesh, skin, materials and textures.

Reading (:func:`read_character`, :func:`loads_character`):

* **The skin.** The skin of the first node (in node order) that has both a mesh and a skin is
  used; every mesh node bound to that same skin contributes its primitives. Other skins are
  ignored, with a message in ``Character.meta["messages"]``. A file without a skinned mesh
  loads as a **static prop** (:func:`_static_prop`): one free root joint ``"root"`` (3
  translation + 3 rotation DoFs) with every mesh node's triangles, at their world transform,
  bound rigidly to it; a message says so.
* **Skeleton = the skin's joints** (the file's node names; unnamed nodes ``node<i>``), parent =
  the nearest ancestor node that is a joint. Joints under different tops are joined at their
  lowest common ancestor node (the nodes on the way become joints), or under an added joint
  ``"root"`` at the origin when they share none. The **rest pose is the bind pose**: joint
  ``j``'s world frame at rest is ``B_j = M @ inverse(IBM_j)`` (``M`` the world matrix of the
  first skinned mesh node, ``IBM`` the skin's inverse bind matrix, identity when absent), made
  rigid by the polar decomposition; its rotation becomes the joint's rest rotation and every
  joint gets three rotation DoFs ``Z X Y`` (rest 0), the root also three translation DoFs, and
  another joint three translation DoFs limited to the range the clips use (widened by that
  range on each side) when some clip moves it off its bind offset (exporters often key a
  bone's offset a few mm off its bind offset; the limits keep IK from stretching bones). A file
  written by animik (``extras.animik.rig``, see :mod:`animik.io.gltf`) gives back its stored
  skeleton exactly (DoFs, limits, sites).
* **The mesh** (:class:`~animik.character.SkinnedMesh`): positions ``M @ v`` and normals at the
  bind pose in animik's world (Z up: ``WORLD_FROM_GLTF``), ``TEXCOORD_0`` as in the file (v
  down: image row 0 is the top), triangles (strips and fans converted; points and lines
  skipped with a message), one part per primitive. ``JOINTS_0/WEIGHTS_0`` (and ``_1``) are
  remapped to skeleton joint indices; with more than 4 influences the **4 largest are kept and
  renormalised**; a vertex whose weights are all 0 is **bound to the joint of its mesh node**
  (the nearest joint above it) or, when it has none, to the root. Normals the file lacks are
  computed (area-weighted). Skinning then reproduces the spec's
  ``sum_k w_k G_k(t) IBM_k v`` exactly (``inverse_bind`` is ``inverse(W_j)`` of the rigid
  bind frames; the non-rigid remainder of a scaled bind matrix is folded into the joint
  frames the clips are read into).
* **Materials**: name, ``baseColorFactor``, metallic / roughness factors, ``doubleSided`` and
  the base colour texture decoded to RGBA uint8 with **Pillow** (``image/png``,
  ``image/jpeg``; embedded, data URI or a file beside a ``.gltf``).
* **Clips**: every animation, sampled at its key rate (as :func:`animik.io.gltf.read_glb`;
  keys sparser than :data:`MIN_FPS` at the smallest integer multiple of their rate above it),
  as a :class:`~animik.motion.Motion` on the skeleton (joint world frames reproduced; node
  scale keys are allowed and folded as above). Animations of nodes that are not joints are
  not read.

Bad input raises :class:`~animik.errors.FileFormatError` naming the problem: a missing or
truncated buffer, a bind matrix that cannot be inverted (or mirrors), a vertex weight on a
joint index outside the skin, no triangles at all.

Writing: the :class:`GltfSource` kept in ``SkinnedMesh.source`` writes the original file's
JSON and data (meshes, skins, materials, textures, samplers, extras) with its animations
replaced by one new animation (:meth:`GltfSource.dumps_glb`): joint nodes get translation,
rotation (and, for scaled binds, scale) channels such that the file's own skinning
reproduces the motion's joint frames. Accessors and buffer views only the old animations used
are dropped; all data lands in the one GLB buffer (external and data-URI buffers and images
are embedded). ``extras.animik`` records the exact skeleton, as :func:`animik.io.gltf.write_glb`
does, so import → export → import gives back the same skeleton and motion.
"""

from __future__ import annotations

import copy
import io
import math
import mimetypes
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..character import MAX_INFLUENCES, Character, Material, MeshPart, SkinnedMesh
from ..errors import AnimikError, FileFormatError, SkeletonError
from ..joints import dofs_from_local, local_transforms
from ..motion import Motion
from ..rotations import quaternion as quat
from ..skeleton import Dof, Joint, Skeleton
from .gltf import (
    _CTYPES,
    GLTF_FROM_WORLD,
    WORLD_FROM_GLTF,
    _accessor,
    _bad,
    _Builder,
    _check_fps,
    _external_buffer,
    _frame_count,
    _generator,
    _glb_bytes,
    _index,
    _infer_fps,
    _jsonable,
    _list_of_dicts,
    _load,
    _parents,
    _sample,
    _vector,
)
from .rigfile import dumps_rig, loads_rig

__all__ = ["GltfSource", "has_meshes", "loads_character", "read_character"]

_WFG4 = np.eye(4)
_WFG4[:3, :3] = WORLD_FROM_GLTF
_GFW4 = np.eye(4)
_GFW4[:3, :3] = GLTF_FROM_WORLD
_ELEMENT_ARRAY_BUFFER = 34963
#: Clips whose keys are sparser than this are sampled at an integer multiple of their key rate.
MIN_FPS = 24.0


# ============================================================================ node transforms
def _node_trs(node: dict, src: str, idx: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(translation, rotation xyzw, scale)`` of a TRS node; None for a ``matrix`` node."""
    if "matrix" in node:
        return None
    t = _vector(node, "translation", 3, [0.0, 0.0, 0.0], src, idx)
    r = _vector(node, "rotation", 4, [0.0, 0.0, 0.0, 1.0], src, idx)
    s = _vector(node, "scale", 3, [1.0, 1.0, 1.0], src, idx)
    if np.linalg.norm(r) < 1e-6:
        raise _bad(src, f"nodes[{idx}].rotation is a zero quaternion")
    return t, r / np.linalg.norm(r), s


def _compose(t: np.ndarray, r_xyzw: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``(..., 4, 4)`` matrices ``T R S`` from ``(..., 3)``, ``(..., 4)`` xyzw, ``(..., 3)``."""
    rot = quat.matrix_from_quat(quat.wxyz_from_xyzw(r_xyzw / np.linalg.norm(r_xyzw, axis=-1,
                                                                          keepdims=True)))
    out = np.zeros(np.broadcast_shapes(t.shape[:-1], r_xyzw.shape[:-1], s.shape[:-1]) + (4, 4))
    out[..., :3, :3] = rot * s[..., None, :]
    out[..., :3, 3] = t
    out[..., 3, 3] = 1.0
    return out


def _node_local(node: dict, src: str, idx: int) -> np.ndarray:
    trs = _node_trs(node, src, idx)
    if trs is None:
        m = _vector(node, "matrix", 16, [], src, idx).reshape(4, 4).T
        if np.max(np.abs(m[3] - [0.0, 0.0, 0.0, 1.0])) > 1e-6:
            raise _bad(src, f"nodes[{idx}].matrix is not affine (last row {m[3].tolist()})")
        return m
    return _compose(*trs)


def _rest_worlds(nodes: list[dict], parent: dict[int, int], src: str) -> list[np.ndarray]:
    out: list[np.ndarray | None] = [None] * len(nodes)

    def world(i: int) -> np.ndarray:
        chain = []
        n: int | None = i
        while n is not None and out[n] is None:
            chain.append(n)
            n = parent.get(n)
        m = np.eye(4) if n is None else out[n]
        for k in reversed(chain):
            m = m @ _node_local(nodes[k], src, k)
            out[k] = m
        return out[i]  # type: ignore[return-value]

    for i in range(len(nodes)):
        world(i)
    return out  # type: ignore[return-value]


def _rigid(m: np.ndarray, what: str, src: str) -> np.ndarray:
    """The rigid part of an affine ``(4, 4)`` matrix (polar decomposition of its 3x3 block)."""
    u, sv, vt = np.linalg.svd(m[:3, :3])
    if not np.all(np.isfinite(sv)) or sv.min() < 1e-9 * max(sv.max(), 1e-300):
        raise _bad(src, f"{what} is singular (cannot be inverted)")
    r = u @ vt
    if np.linalg.det(r) < 0:
        raise _bad(src, f"{what} mirrors (negative determinant); mirrored joints are not supported")
    out = np.eye(4)
    out[:3, :3] = r
    out[:3, 3] = m[:3, 3]
    return out


def _rigid_batch(m: np.ndarray) -> tuple[np.ndarray, float]:
    """Rigid parts of ``(..., 4, 4)`` matrices and the largest deviation of a 3x3 block from
    its rotation (0 for rigid input)."""
    u, _, vt = np.linalg.svd(m[..., :3, :3])
    r = u @ vt
    neg = np.linalg.det(r) < 0
    if np.any(neg):
        u = u.copy()
        u[neg, :, 2] *= -1
        r = u @ vt
    out = m.copy()
    dev = float(np.max(np.abs(m[..., :3, :3] - r))) if m.size else 0.0
    out[..., :3, :3] = r
    out[..., 3, :] = [0.0, 0.0, 0.0, 1.0]
    return out, dev


# ============================================================================ the source
@dataclass(frozen=True, eq=False)
class GltfSource:
    """What re-exporting an imported glTF character needs (``SkinnedMesh.source``).

    Attributes:
        gltf: the file's JSON (a private deep copy).
        buffers: the file's buffers' bytes.
        folder: the folder of a ``.gltf`` (external images), or None.
        skin: index of the skin used.
        joint_nodes: ``(J,)`` node index of each skeleton joint (-1: the added ``"root"``).
        bind_fix: ``(J, 4, 4)`` ``inverse(B'_j) @ B_j``: the file's bind frame from the rigid
            one (identity for rigid bind matrices); ``node world = GLTF_FROM_WORLD @ W_j @
            bind_fix_j``.
        name: the source file name, for messages.
    """

    gltf: dict
    buffers: tuple[bytes, ...]
    folder: Path | None
    skin: int
    joint_nodes: tuple[int, ...]
    bind_fix: np.ndarray
    name: str

    def dumps_glb(self, motion: Motion, name: str | None = None) -> bytes:
        """The original file with its animations replaced by ``motion`` (see module docs).

        Args:
            motion: a motion on the character's skeleton (joints matched by name; its DoF
                layout may differ, e.g. a retargeted clip).
            name: animation name (default ``motion.meta["clip"]``, else the skeleton name).

        Raises:
            FileFormatError: an empty or non-finite motion, or joints it lacks.
        """
        return _dumps_source(self, motion, name)


# ============================================================================ reading
def read_character(path: str | os.PathLike) -> Character:
    """Read a rigged glTF character (``.glb``, or ``.gltf`` with its buffers); see module docs.

    Raises:
        FileFormatError: malformed or unsupported content (see module docs).
        FileNotFoundError: the file or a buffer file does not exist.
    """
    p = Path(path)
    data = p.read_bytes()
    return _read_checked(data, str(p), p.parent, p.stem or "gltf")


def loads_character(data: bytes, source: str = "<glb bytes>") -> Character:
    """:func:`read_character` of content given as bytes (its buffers must be embedded)."""
    return _read_checked(bytes(data), source, None, Path(source).stem or "gltf")


def has_meshes(data: bytes, source: str = "<glb bytes>") -> bool:
    """Whether glTF content has a node with a mesh (reads the JSON only; False when the content
    is not glTF at all: the full readers then say why)."""
    import json

    try:
        if data[:4] == b"glTF":
            n = struct.unpack_from("<I", data, 12)[0]
            data = data[20: 20 + n]
        gltf = json.loads(data.decode("utf-8"))
    except (struct.error, UnicodeDecodeError, ValueError, RecursionError):
        return False
    nodes = gltf.get("nodes") if isinstance(gltf, dict) else None
    return isinstance(nodes, list) and any(isinstance(n, dict) and "mesh" in n for n in nodes)


def _read_checked(data: bytes, src: str, folder: Path | None, stem: str) -> Character:
    try:
        gltf, buffers = _load(data, src, folder)
        return _read(gltf, buffers, src, folder, stem)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError,
            RecursionError, np.linalg.LinAlgError) as e:
        if isinstance(e, AnimikError):
            raise
        raise _bad(src, f"malformed glTF ({type(e).__name__}: {e})") from None


#: Extensions whose data the reader cannot decode: a file that requires one is refused.
UNSUPPORTED_EXTENSIONS = ("KHR_draco_mesh_compression", "EXT_meshopt_compression")


def _read(gltf: dict, buffers: list[bytes], src: str, folder: Path | None, stem: str) -> Character:
    required = gltf.get("extensionsRequired", [])
    if isinstance(required, list):
        bad = [e for e in required if e in UNSUPPORTED_EXTENSIONS]
        if bad:
            raise _bad(src, f"the file requires {bad}: compressed meshes are not supported "
                            "(decompress it first, e.g. gltf-transform copy)")
    nodes = _list_of_dicts(gltf, "nodes", src)
    meshes = _list_of_dicts(gltf, "meshes", src)
    skins = _list_of_dicts(gltf, "skins", src)
    parent = _parents(nodes, src)
    rest_world = _rest_worlds(nodes, parent, src)
    messages: list[str] = []
    skinned = [i for i, n in enumerate(nodes) if "mesh" in n and "skin" in n]
    if not skinned:
        return _static_prop(gltf, buffers, nodes, meshes, rest_world, src, folder, stem)
    si = _index(nodes[skinned[0]]["skin"], len(skins), f"nodes[{skinned[0]}].skin", src)
    others = sorted({nodes[i]["skin"] for i in skinned} - {si})
    if others or len(skins) > 1:
        messages.append(f"{len(skins)} skins: skin {si} (of node {skinned[0]}, the first skinned "
                        f"mesh node) and its meshes are used, the others ignored")
    mesh_nodes = [i for i in skinned if nodes[i]["skin"] == si]
    skin = skins[si]
    sj = skin.get("joints")
    if not isinstance(sj, list) or not sj:
        raise _bad(src, f"skins[{si}].joints must be a non-empty list")
    skin_joints = [_index(j, len(nodes), f"skins[{si}].joints[]", src) for j in sj]
    if len(set(skin_joints)) != len(skin_joints):
        raise _bad(src, f"skins[{si}].joints lists a node twice")
    n_sj = len(skin_joints)
    if "inverseBindMatrices" in skin:
        ibm = _accessor(gltf, buffers, skin["inverseBindMatrices"], src)
        if ibm.shape != (n_sj, 16):
            raise _bad(src, f"skins[{si}].inverseBindMatrices must hold {n_sj} MAT4, got "
                            f"{ibm.shape}")
        ibm = np.swapaxes(ibm.reshape(n_sj, 4, 4), 1, 2)
    else:
        ibm = np.tile(np.eye(4), (n_sj, 1, 1))
    mesh_world = rest_world[mesh_nodes[0]]

    # --- skeleton members: skin joints joined into one tree
    members = list(skin_joints)
    member_set = set(members)

    def up(n: int) -> int | None:
        p = parent.get(n)
        while p is not None and p not in member_set:
            p = parent.get(p)
        return p

    tops = [n for n in members if up(n) is None]
    synthetic_root = False
    if len(tops) > 1:
        chains = []
        for t in tops:
            c, n = [], parent.get(t)
            while n is not None:
                c.append(n)
                n = parent.get(n)
            chains.append(c)
        common = set(chains[0]).intersection(*map(set, chains[1:]))
        if common:
            lca = next(n for n in chains[0] if n in common)
            for c in chains:
                for n in c:
                    if n not in member_set:
                        members.append(n)
                        member_set.add(n)
                    if n == lca:
                        break
        else:
            synthetic_root = True
            messages.append(f"the skin's joints have {len(tops)} top nodes with no common "
                            "ancestor: an added joint 'root' at the origin joins them")
    # depth-first order from the top(s), siblings in node order
    kids: dict[int | None, list[int]] = {}
    for n in sorted(members):
        kids.setdefault(up(n), []).append(n)
    order: list[int] = [-1] if synthetic_root else []
    stack = list(reversed(kids.get(None, [])))
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(reversed(kids.get(n, [])))
    J = len(order)
    jparent = [-1] * J
    pos_of = {n: k for k, n in enumerate(order)}
    for k, n in enumerate(order):
        if n >= 0:
            p = up(n)
            jparent[k] = pos_of[p] if p is not None else (0 if synthetic_root else -1)
    names = list(_joint_names(nodes, tuple(order)))

    # --- bind frames (glTF world) and their rigid parts
    bind = np.tile(np.eye(4), (J, 1, 1))
    k_of_node = {n: k for k, n in enumerate(skin_joints)}
    for k, n in enumerate(order):
        if n < 0:
            continue
        if n in k_of_node:
            m = ibm[k_of_node[n]]
            sv = np.linalg.svd(m[:3, :3], compute_uv=False)
            if not sv[-1] > 1e-12 * sv[0] or np.max(np.abs(m[3] - [0, 0, 0, 1.0])) > 1e-5:
                raise _bad(src, f"skins[{si}] inverse bind matrix of joint {names[k]!r} cannot be "
                                "inverted (singular or not affine)")
            bind[k] = mesh_world @ np.linalg.inv(m)
        else:
            bind[k] = rest_world[n]
    rigid = np.stack([_rigid(bind[k], f"the bind matrix of joint {names[k]!r}", src)
                      for k in range(J)])
    bind_fix = np.linalg.inv(rigid) @ bind
    world_bind = _WFG4 @ rigid  # animik world frames of the joints at rest
    if not np.all(np.isfinite(world_bind)):
        raise _bad(src, "the bind matrices overflow")

    # --- clips: joint world frames per frame
    anims = _list_of_dicts(gltf, "animations", src)
    clip_frames = []
    for ai, anim in enumerate(anims):
        got = _animation_frames(gltf, buffers, nodes, parent, anim, ai, order, bind_fix, src)
        if got is not None:
            clip_frames.append(got)
        else:
            messages.append(f"animation {ai} moves no joint: not read")

    extras = gltf.get("extras")
    extras = extras.get("animik") if isinstance(extras, dict) else None
    extras = extras if isinstance(extras, dict) else None
    skel = None
    if extras and isinstance(extras.get("rig"), str):
        stored = loads_rig(extras["rig"], source=f"{src} extras.animik.rig")
        if stored.joint_names == tuple(names):
            skel = stored
    if skel is None:
        skel = _skeleton(stem, names, jparent, world_bind, clip_frames, src)
    first = None
    if extras and skel is not None:
        f = extras.get("first_pose")
        if isinstance(f, list) and len(f) == skel.n_dof and all(
                isinstance(x, (int, float)) and math.isfinite(x) for x in f):
            first = np.array(f, dtype=float)
    clips = []
    for frames, fps, clip_name in clip_frames:
        rot, pos = _locals(frames, jparent)
        q = dofs_from_local(skel, rot, pos, skel.rest_q if first is None else first,
                            sequential=True)
        clips.append(Motion(skel, q, fps, meta={"source": src, "clip": clip_name,
                                                "gltf_animation": clip_name}))
        first = None

    mesh = _skinned_mesh(gltf, buffers, nodes, meshes, mesh_nodes, mesh_world, skin_joints,
                         pos_of, order, parent, world_bind, src, folder, messages)
    mesh = mesh.replace(source=GltfSource(copy.deepcopy(gltf), tuple(bytes(b) for b in buffers),
                                          folder, si, tuple(order), bind_fix, src))
    meta: dict[str, Any] = {"source": src, "skin": si, "messages": messages}
    return Character(skel, mesh, tuple(clips), name=stem, meta=meta)


def _locals(frames: np.ndarray, jparent: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Local rotations ``(T, J, 3, 3)`` and translations ``(T, J, 3)`` of rigid world frames."""
    loc = frames.copy()
    for j, p in enumerate(jparent):
        if p >= 0:
            loc[:, j] = np.linalg.inv(frames[:, p]) @ frames[:, j]
    return loc[..., :3, :3], loc[..., :3, 3]


def _animation_frames(gltf, buffers, nodes, parent, anim, ai, order, bind_fix, src):
    """``(frames (T, J, 4, 4) animik world, fps, name)`` of one animation, or None."""
    samplers = anim.get("samplers", [])
    channels = anim.get("channels", [])
    if not isinstance(samplers, list) or not isinstance(channels, list):
        raise _bad(src, f"animations[{ai}]: samplers and channels must be lists")
    # the nodes whose motion reaches a joint: joints and their ancestors
    needed: set[int] = set()
    for n in order:
        while n is not None and n >= 0 and n not in needed:
            needed.add(n)
            n = parent.get(n)
    chans: dict[int, dict[str, tuple]] = {}
    times = []
    for ch in channels:
        tgt = ch.get("target") if isinstance(ch, dict) else None
        if not isinstance(tgt, dict):
            raise _bad(src, f"animations[{ai}]: a channel without a target object")
        if "node" not in tgt or tgt.get("path") not in ("translation", "rotation", "scale"):
            continue
        node = _index(tgt["node"], len(nodes), "a channel's target.node", src)
        if node not in needed:
            continue
        smp = samplers[_index(ch.get("sampler"), len(samplers), "a channel's sampler", src)]
        if not isinstance(smp, dict):
            raise _bad(src, f"animations[{ai}].samplers[] must be objects")
        tin = _accessor(gltf, buffers, smp.get("input"), src)[:, 0]
        if len(tin) > 1 and np.any(np.diff(tin) < 0):
            raise _bad(src, "a sampler's key times decrease (they must increase)")
        interp = smp.get("interpolation", "LINEAR")
        if interp not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise _bad(src, f"unknown sampler interpolation {interp!r}")
        out = _accessor(gltf, buffers, smp.get("output"), src)
        width = 4 if tgt["path"] == "rotation" else 3
        if out.shape[1] != width:
            raise _bad(src, f"animations[{ai}]: {tgt['path']} output of node {node} must have "
                            f"{width} components")
        chans.setdefault(node, {})[tgt["path"]] = (tin, out, interp)
        times.append(tin)
    if not chans:
        return None
    t_max = max((float(t[-1]) for t in times if len(t)), default=0.0)
    fps = _infer_fps(times)
    if fps < MIN_FPS:  # sparse keys: sample an integer multiple of their rate
        fps *= math.ceil(MIN_FPS / fps)
    fps = _check_fps(fps, "the key rate", src)
    T = _frame_count(t_max, fps, len(order), src)
    t = np.arange(T) / fps
    world: dict[int, np.ndarray] = {}

    def node_world(n: int) -> np.ndarray:
        if n in world:
            return world[n]
        nd = nodes[n]
        ch = chans.get(n, {})
        trs = _node_trs(nd, src, n)
        if trs is None or not ch:
            if ch and trs is None:
                raise _bad(src, f"nodes[{n}] has a matrix and is animated (glTF forbids it)")
            loc = np.broadcast_to(_node_local(nd, src, n), (T, 4, 4))
        else:
            tr, rq, sc = trs
            parts = {"translation": np.tile(tr, (T, 1)), "rotation": np.tile(rq, (T, 1)),
                     "scale": np.tile(sc, (T, 1))}
            for path, (tin, out, interp) in ch.items():
                parts[path] = _sample(tin, out, interp, t, path == "rotation", src)
            loc = _compose(parts["translation"], parts["rotation"], parts["scale"])
        p = parent.get(n)
        w = loc if p is None else node_world(p) @ loc
        world[n] = w
        return w

    frames = np.empty((T, len(order), 4, 4))
    for k, n in enumerate(order):
        frames[:, k] = np.eye(4) if n < 0 else _WFG4 @ node_world(n) @ np.linalg.inv(bind_fix[k])
    if not np.all(np.isfinite(frames)):
        raise _bad(src, f"animations[{ai}]: the joint transforms overflow (non-finite values)")
    frames, _ = _rigid_batch(frames)
    return frames, fps, str(anim.get("name") or f"animation{ai}")


def _skeleton(stem: str, names: list[str], jparent: list[int], world_bind: np.ndarray,
              clip_frames: list, src: str) -> Skeleton:
    J = len(names)
    local = world_bind.copy()
    for j, p in enumerate(jparent):
        if p >= 0:
            local[j] = np.linalg.inv(world_bind[p]) @ world_bind[j]
    # a joint some clip moves off its bind offset gets translation DoFs
    span = np.ptp(world_bind[:, :3, 3], axis=0).max() if J > 1 else 1.0
    tol = 1e-4 * max(float(span), 1e-3)
    lo = np.zeros((J, 3))
    hi = np.zeros((J, 3))
    if clip_frames:
        pos = np.concatenate([_locals(frames, jparent)[1] for frames, _, _ in clip_frames])
        # translation DoF values: along the joint's rest-rotated axes
        d = np.einsum("jba,tjb->tja", local[:, :3, :3], pos - local[None, :, :3, 3])
        lo = np.minimum(d.min(axis=0), 0.0)
        hi = np.maximum(d.max(axis=0), 0.0)
    moves = np.max(hi - lo, axis=1) > tol
    joints = []
    for j, nm in enumerate(names):
        dofs = []
        if jparent[j] < 0:
            dofs += [Dof(f"{nm}_t{a}", f"t{a}", rest=0.0) for a in "xyz"]
        elif moves[j]:
            # a joint the clips move off its bind offset (COLLADA exports often key offsets a
            # few mm off): translation DoFs limited to the clips' range (IK stretches no bone)
            pad = max(float(np.max(hi[j] - lo[j])), 10 * tol)  # clip values off the limits
            dofs += [Dof(f"{nm}_t{a}", f"t{a}", float(lo[j, i]) - pad, float(hi[j, i]) + pad,
                         rest=0.0) for i, a in enumerate("xyz")]
        dofs += [Dof(f"{nm}_r{a}", f"r{a}", rest=0.0) for a in "zxy"]
        joints.append(Joint(nm, None if jparent[j] < 0 else names[jparent[j]],
                            tuple(local[j, :3, 3]), dofs, rotation=local[j, :3, :3]))
    try:
        return Skeleton.from_joints(stem, joints, meta={"source": src})
    except SkeletonError as e:
        raise _bad(src, f"cannot build a skeleton from the skin: {e}") from None


# ---------------------------------------------------------------------------- mesh
def _int_accessor(gltf, buffers, index, src, what) -> np.ndarray:
    accessors = _list_of_dicts(gltf, "accessors", src)
    acc = accessors[_index(index, len(accessors), what, src)]
    if _CTYPES.get(acc.get("componentType")) not in (np.uint8, np.uint16, np.uint32):
        raise _bad(src, f"{what} must use unsigned integers")
    return _accessor(gltf, buffers, index, src).astype(np.int64)


def _triangles(mode: int, idx: np.ndarray) -> np.ndarray:
    if mode == 4:
        return idx[: len(idx) - len(idx) % 3].reshape(-1, 3)
    n = len(idx) - 2
    if n <= 0:
        return np.zeros((0, 3), dtype=np.int64)
    k = np.arange(n)
    if mode == 5:  # strip: every other triangle flipped to keep the winding
        a, b = idx[k], idx[k + 1]
        tri = np.stack([np.where(k % 2 == 0, a, b), np.where(k % 2 == 0, b, a), idx[k + 2]], 1)
    else:  # fan
        tri = np.stack([np.full(n, idx[0]), idx[k + 1], idx[k + 2]], 1)
    return tri


def _vertex_normals(p: np.ndarray, faces: np.ndarray) -> np.ndarray:
    fn = np.cross(p[faces[:, 1]] - p[faces[:, 0]], p[faces[:, 2]] - p[faces[:, 0]])
    n = np.zeros_like(p)
    for c in range(3):
        np.add.at(n, faces[:, c], fn)
    norm = np.linalg.norm(n, axis=1, keepdims=True)
    return np.where(norm > 1e-20, n / np.where(norm > 1e-20, norm, 1.0), [0.0, 0.0, 1.0])


def _skinned_mesh(gltf, buffers, nodes, meshes, mesh_nodes, mesh_world, skin_joints, pos_of,
                  order, parent, world_bind, src, folder, messages) -> SkinnedMesh:
    mats, mat_index = _materials(gltf, buffers, src, folder)
    P, N, UV, JN, WT, F, parts = [], [], [], [], [], [], []
    lin = mesh_world[:3, :3]
    normal_m = np.linalg.inv(lin).T
    any_uv = False
    n_v = 0
    n_fixed = n_trimmed = 0
    for mn in mesh_nodes:
        # a vertex with no weight goes to the mesh node's own joint (the nearest joint above it)
        home = 0
        n = mn
        while n is not None:
            if n in pos_of:
                home = pos_of[n]
                break
            n = parent.get(n)
        mi = _index(nodes[mn]["mesh"], len(meshes), f"nodes[{mn}].mesh", src)
        prims = meshes[mi].get("primitives")
        if not isinstance(prims, list):
            raise _bad(src, f"meshes[{mi}].primitives must be a list")
        for pi, prim in enumerate(prims):
            what = f"meshes[{mi}].primitives[{pi}]"
            if not isinstance(prim, dict) or not isinstance(prim.get("attributes"), dict):
                raise _bad(src, f"{what} must be an object with attributes")
            mode = prim.get("mode", 4)
            if mode not in (4, 5, 6):
                messages.append(f"{what}: mode {mode} (points or lines) skipped")
                continue
            at = prim["attributes"]
            if "POSITION" not in at:
                raise _bad(src, f"{what} has no POSITION")
            v = _accessor(gltf, buffers, at["POSITION"], src)
            nv = len(v)
            if v.shape[1] != 3:
                raise _bad(src, f"{what}.POSITION must be VEC3")
            idx = (_int_accessor(gltf, buffers, prim["indices"], src, f"{what}.indices")[:, 0]
                   if "indices" in prim else np.arange(nv))
            if len(idx) and (idx.max() >= nv):
                raise _bad(src, f"{what}: an index refers to vertex {int(idx.max())} of {nv}")
            tri = _triangles(mode, idx)
            # influences: JOINTS_k / WEIGHTS_k sets
            jsets, wsets = [], []
            for s in range(8):
                if f"JOINTS_{s}" not in at and f"WEIGHTS_{s}" not in at:
                    break
                if f"JOINTS_{s}" not in at or f"WEIGHTS_{s}" not in at:
                    raise _bad(src, f"{what} has JOINTS_{s} or WEIGHTS_{s} without the other")
                js = _int_accessor(gltf, buffers, at[f"JOINTS_{s}"], src, f"{what}.JOINTS_{s}")
                ws = _accessor(gltf, buffers, at[f"WEIGHTS_{s}"], src)
                if js.shape != (nv, 4) or ws.shape != (nv, 4):
                    raise _bad(src, f"{what}: JOINTS_{s}/WEIGHTS_{s} must be {nv} VEC4")
                jsets.append(js)
                wsets.append(ws)
            if jsets and skin_joints:
                js = np.concatenate(jsets, axis=1)
                ws = np.maximum(np.concatenate(wsets, axis=1), 0.0)
                bad = (js >= len(skin_joints)) & (ws > 0)
                if np.any(bad):
                    raise _bad(src, f"{what}: a weight on joint index {int(js[bad].max())}, the "
                                    f"skin has {len(skin_joints)} joints")
                js = np.where(ws > 0, js, 0)
                if js.shape[1] > MAX_INFLUENCES:
                    n_trimmed += int(np.count_nonzero(
                        np.count_nonzero(ws, axis=1) > MAX_INFLUENCES))
                    top = np.argsort(-ws, axis=1, kind="stable")[:, :MAX_INFLUENCES]
                    js = np.take_along_axis(js, top, 1)
                    ws = np.take_along_axis(ws, top, 1)
                remap = np.array([pos_of[n] for n in skin_joints])
                jj = remap[js]
            else:
                jj = np.zeros((nv, MAX_INFLUENCES), dtype=np.int64)
                ws = np.zeros((nv, MAX_INFLUENCES))
            total = ws.sum(axis=1)
            zero = total <= 1e-8
            n_fixed += int(zero.sum())
            ws = np.where(zero[:, None], [1.0, 0.0, 0.0, 0.0], ws / np.where(zero, 1.0, total)[:, None])
            jj = np.where(zero[:, None], [home, 0, 0, 0], jj)
            jj = np.where(ws > 0, jj, 0)
            p_b = v @ lin.T + mesh_world[:3, 3]
            if "NORMAL" in at:
                nn = _accessor(gltf, buffers, at["NORMAL"], src)
                if nn.shape != (nv, 3):
                    raise _bad(src, f"{what}.NORMAL must be {nv} VEC3")
                nn = nn @ normal_m.T
                ln = np.linalg.norm(nn, axis=1, keepdims=True)
                nn = np.where(ln > 1e-12, nn / np.where(ln > 1e-12, ln, 1.0), [0.0, 1.0, 0.0])
            else:
                nn = _vertex_normals(p_b, tri) if len(tri) else np.tile([0.0, 1.0, 0.0], (nv, 1))
            if "TEXCOORD_0" in at:
                uv = _accessor(gltf, buffers, at["TEXCOORD_0"], src)
                if uv.shape != (nv, 2):
                    raise _bad(src, f"{what}.TEXCOORD_0 must be {nv} VEC2")
                any_uv = True
            else:
                uv = np.zeros((nv, 2))
            if len(tri) == 0:
                continue
            m = prim.get("material")
            m = len(mats) if m is None else mat_index(m, what)
            parts.append(MeshPart(sum(len(f) for f in F), len(tri), m))
            P.append(p_b @ WORLD_FROM_GLTF.T)
            N.append(nn @ WORLD_FROM_GLTF.T)
            UV.append(uv)
            JN.append(jj)
            WT.append(ws)
            F.append(tri + n_v)
            n_v += nv
    if not F:
        raise _bad(src, "the skinned meshes have no triangles")
    if any(p.material == len(mats) for p in parts):
        mats = [*mats, Material(name="default")]
    if n_fixed:
        messages.append(f"{n_fixed} vertices without weights bound to their mesh node's joint "
                        "(or the root)")
    if n_trimmed:
        messages.append(f"{n_trimmed} vertices with more than {MAX_INFLUENCES} influences: the "
                        f"{MAX_INFLUENCES} largest kept, renormalised")
    return SkinnedMesh(
        positions=np.concatenate(P), normals=np.concatenate(N), faces=np.concatenate(F),
        joints=np.concatenate(JN), weights=np.concatenate(WT),
        inverse_bind=np.linalg.inv(world_bind), uvs=np.concatenate(UV) if any_uv else None,
        materials=tuple(mats), parts=tuple(parts))


def _image_bytes(gltf, buffers, img: dict, i: int, src: str, folder: Path | None) -> bytes:
    if "bufferView" in img:
        views = _list_of_dicts(gltf, "bufferViews", src)
        v = views[_index(img["bufferView"], len(views), f"images[{i}].bufferView", src)]
        buf = buffers[_index(v.get("buffer"), len(buffers), "bufferViews[].buffer", src)]
        off, n = v.get("byteOffset", 0), v.get("byteLength")
        if not isinstance(off, int) or not isinstance(n, int) or off < 0 or off + n > len(buf):
            raise _bad(src, f"images[{i}]: its buffer view reaches past the buffer")
        return bytes(buf[off: off + n])
    uri = img.get("uri")
    if not isinstance(uri, str):
        raise _bad(src, f"images[{i}] has neither a bufferView nor a uri")
    if uri.startswith("data:"):
        import base64

        try:
            return base64.b64decode(uri.split(",", 1)[1])
        except (ValueError, IndexError):
            raise _bad(src, f"images[{i}]: bad data URI") from None
    if folder is None:
        raise _bad(src, f"images[{i}] refers to the file {uri!r}; content given as bytes must "
                        "embed its images")
    return _external_buffer(folder, uri, i, src)


def _decode_image(data: bytes, i: int, src: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            return np.asarray(im.convert("RGBA"), dtype=np.uint8).copy()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as e:
        raise _bad(src, f"images[{i}] cannot be decoded ({type(e).__name__}: {e})") from None


def _materials(gltf, buffers, src, folder):
    mats_json = _list_of_dicts(gltf, "materials", src)
    textures = _list_of_dicts(gltf, "textures", src)
    images = _list_of_dicts(gltf, "images", src)
    decoded: dict[int, np.ndarray] = {}
    out = []
    for mi, m in enumerate(mats_json):
        pbr = m.get("pbrMetallicRoughness", {})
        if not isinstance(pbr, dict):
            raise _bad(src, f"materials[{mi}].pbrMetallicRoughness must be an object")
        bc = pbr.get("baseColorFactor", [1.0, 1.0, 1.0, 1.0])
        if not (isinstance(bc, list) and len(bc) == 4 and all(
                isinstance(x, (int, float)) and math.isfinite(x) for x in bc)):
            raise _bad(src, f"materials[{mi}].baseColorFactor must be 4 numbers")
        tex = None
        ti = pbr.get("baseColorTexture")
        if isinstance(ti, dict) and "index" in ti:
            t = textures[_index(ti["index"], len(textures), f"materials[{mi}] texture", src)]
            if "source" in t:
                k = _index(t["source"], len(images), "textures[].source", src)
                if k not in decoded:
                    decoded[k] = _decode_image(
                        _image_bytes(gltf, buffers, images[k], k, src, folder), k, src)
                tex = decoded[k]

        def factor(key: str, default: float, pbr: dict = pbr, mi: int = mi) -> float:
            v = pbr.get(key, default)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise _bad(src, f"materials[{mi}].{key} must be a number")
            return float(min(max(v, 0.0), 1.0))

        out.append(Material(
            name=str(m.get("name", "")), base_color=tuple(float(min(max(x, 0), 1)) for x in bc),
            base_color_texture=tex, metallic=factor("metallicFactor", 1.0),
            roughness=factor("roughnessFactor", 1.0), double_sided=bool(m.get("doubleSided")),
            source=copy.deepcopy(m)))

    def index(m: Any, what: str) -> int:
        return _index(m, len(out), f"{what}.material", src)

    return out, index


def _static_prop(gltf, buffers, nodes, meshes, rest_world, src, folder, stem) -> Character:
    """A file without a skinned mesh: every mesh node bound rigidly to one free root joint."""
    messages = ["no skinned mesh: loaded as a static prop (every mesh bound to one root joint)"]
    mesh_nodes = [i for i, n in enumerate(nodes) if "mesh" in n]
    if not mesh_nodes:
        raise _bad(src, "the file has neither a skinned mesh nor any mesh")
    skel = Skeleton.from_joints(stem, [Joint("root", None, (0.0, 0.0, 0.0), [
        *(Dof(f"root_t{a}", f"t{a}") for a in "xyz"), *(Dof(f"root_r{a}", f"r{a}") for a in "zxy")
    ])], meta={"source": src})
    parts_all = []
    for mn in mesh_nodes:
        part = _skinned_mesh(gltf, buffers, nodes, meshes, [mn], rest_world[mn], [], {}, [0],
                             {}, np.eye(4)[None], src, folder, messages)
        parts_all.append(part)
    # every part lists the file's materials, some with a default one appended: the longest
    materials = max((m.materials for m in parts_all), key=len)
    P, N, F, UV, parts = [], [], [], [], []
    base = 0
    any_uv = any(m.uvs is not None for m in parts_all)
    for m in parts_all:
        P.append(m.positions)
        N.append(m.normals)
        UV.append(m.uvs if m.uvs is not None else np.zeros((m.n_vertices, 2)))
        parts += [MeshPart(p.start + sum(len(f) for f in F), p.count, p.material) for p in m.parts]
        F.append(m.faces.astype(np.int64) + base)
        base += m.n_vertices
    V = base
    mesh = SkinnedMesh(np.concatenate(P), np.concatenate(N), np.concatenate(F),
                       np.zeros((V, 4), dtype=np.int64), np.tile([1.0, 0, 0, 0], (V, 1)),
                       np.eye(4)[None], uvs=np.concatenate(UV) if any_uv else None,
                       materials=materials, parts=tuple(parts))
    return Character(skel, mesh, (), name=stem, meta={"source": src, "messages": messages,
                                                       "static_prop": True})


# ============================================================================ writing
def _world_frames(motion: Motion, names: tuple[str, ...], src: str) -> np.ndarray:
    """``(T, J, 4, 4)`` animik world frames of the joints ``names`` over the motion."""
    skel = motion.skeleton
    missing = [n for n in names if n != "root" and n not in skel.joint_names]
    if missing:
        raise FileFormatError(f"{src}: the motion's skeleton {skel.name!r} lacks joints "
                              f"{missing[:5]} of the character")
    rot, pos = local_transforms(skel, motion.q)
    T = motion.n_frames
    world = np.empty((T, skel.n_joints, 4, 4))
    for j in range(skel.n_joints):
        m = np.zeros((T, 4, 4))
        m[:, :3, :3] = rot[:, j]
        m[:, :3, 3] = pos[:, j]
        m[:, 3, 3] = 1.0
        p = skel.parents[j]
        world[:, j] = m if p < 0 else world[:, p] @ m
    idx = {n: i for i, n in enumerate(skel.joint_names)}
    out = np.tile(np.eye(4), (T, len(names), 1, 1))
    for k, n in enumerate(names):
        if n in idx:
            out[:, k] = world[:, idx[n]]
    return out


def _decompose(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(translation, rotation xyzw, scale)`` of ``(T, 4, 4)`` affine matrices (no shear)."""
    lin = m[:, :3, :3]
    s = np.linalg.norm(lin, axis=1)
    r = lin / np.where(s > 1e-12, s, 1.0)[:, None, :]
    u, _, vt = np.linalg.svd(r)
    r = u @ vt
    neg = np.linalg.det(r) < 0
    if np.any(neg):
        s[neg, 0] *= -1
        r[neg, :, 0] *= -1
    return m[:, :3, 3], quat.continuous_quats(quat.xyzw_from_wxyz(quat.quat_from_matrix(r))), s


def _dumps_source(source: GltfSource, motion: Motion, name: str | None) -> bytes:
    src = source.name
    if motion.n_frames == 0:
        raise FileFormatError(f"cannot write an empty motion (0 frames) of {src!r} to glTF")
    if not np.all(np.isfinite(motion.q)):
        raise FileFormatError(f"motion of {motion.skeleton.name!r} has NaN or infinite values")
    gltf = copy.deepcopy(source.gltf)
    nodes = gltf["nodes"]
    parent = _parents(nodes, src)
    # joint names as the reader made them: the motion's joints are matched by these
    names = _joint_names(nodes, source.joint_nodes)
    W = _world_frames(motion, names, src)  # (T, J, 4, 4)
    T = motion.n_frames
    G = _GFW4 @ W @ source.bind_fix  # node world matrices (glTF) of the joint nodes
    joint_of = {n: k for k, n in enumerate(source.joint_nodes) if n >= 0}
    rest_local = {i: _node_local(nodes[i], src, i) for i in range(len(nodes))}
    cache: dict[int, np.ndarray] = {}

    def world(n: int) -> np.ndarray:
        if n in joint_of:
            return G[:, joint_of[n]]
        if n not in cache:
            p = parent.get(n)
            cache[n] = rest_local[n][None] if p is None else world(p) @ rest_local[n]
        return cache[n]

    b = _Builder()
    _repack(gltf, source, b, src)
    times = np.arange(T) / motion.fps
    t_acc = b.accessor(times, "SCALAR", minmax=True)
    channels, samplers = [], []
    for n, k in sorted(joint_of.items()):
        p = parent.get(n)
        loc = G[:, k] if p is None else np.linalg.inv(world(p)) @ G[:, k]
        tr, rq, sc = _decompose(loc)
        node = nodes[n]
        node.pop("matrix", None)
        node["translation"] = [float(x) for x in tr[0]]
        node["rotation"] = [float(x) for x in rq[0]]
        paths = [("translation", tr, "VEC3"), ("rotation", rq, "VEC4")]
        if np.max(np.abs(sc - 1.0)) > 1e-6:
            node["scale"] = [float(x) for x in sc[0]]
            paths.append(("scale", sc, "VEC3"))
        else:
            node.pop("scale", None)
        for path, vals, kind in paths:
            samplers.append({"input": t_acc, "interpolation": "LINEAR",
                             "output": b.accessor(vals, kind)})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": n, "path": path}})
    if name is None:
        name = str(motion.meta.get("clip", "")) or motion.skeleton.name
    gltf["animations"] = [{"name": name, "channels": channels, "samplers": samplers}]
    gltf["accessors"] = b.accessors
    gltf["bufferViews"] = b.views
    gltf["buffers"] = [{"byteLength": len(b.blob)}]
    gltf.setdefault("asset", {})["generator"] = _generator()
    meta = {k: _jsonable(v) for k, v in motion.meta.items() if k.startswith("bvh_") or k == "clip"}
    extras = gltf.get("extras") if isinstance(gltf.get("extras"), dict) else {}
    extras["animik"] = {"format_version": 1, "fps": motion.fps, "frames": T, "motion_meta": meta,
                        "first_pose": [float(x) for x in motion.q[0]],
                        "rig": dumps_rig(motion.skeleton, header="skeleton of this glTF file")}
    gltf["extras"] = extras
    return _glb_bytes(gltf, bytes(b.blob))


def _joint_names(nodes: list[dict], joint_nodes: tuple[int, ...]) -> tuple[str, ...]:
    names, used = [], set()
    for n in joint_nodes:
        base = "root" if n < 0 else str(nodes[n].get("name") or f"node{n}")
        nm, c = base, 1
        while nm in used:
            c += 1
            nm = f"{base}_{c}"
        used.add(nm)
        names.append(nm)
    return tuple(names)


def _repack(gltf: dict, source: GltfSource, b: _Builder, src: str) -> None:
    """Drop the animations and the accessors / views only they used; copy every kept buffer
    view (and every image) into the builder's one buffer, renumbering references."""
    gltf.pop("animations", None)
    accessors = gltf.get("accessors", [])
    views = gltf.get("bufferViews", [])
    used_acc: set[int] = set()
    for mesh in gltf.get("meshes", []):
        for prim in mesh.get("primitives", []):
            used_acc.update(prim.get("attributes", {}).values())
            if "indices" in prim:
                used_acc.add(prim["indices"])
            for tgt in prim.get("targets", []) or []:
                used_acc.update(tgt.values())
    for skin in gltf.get("skins", []):
        if "inverseBindMatrices" in skin:
            used_acc.add(skin["inverseBindMatrices"])
    if gltf.get("extensionsUsed"):
        used_acc = set(range(len(accessors)))  # extensions may refer to any accessor
    acc_map = {old: new for new, old in enumerate(sorted(used_acc))}
    view_map: dict[int, int] = {}

    def copy_view(vi: int) -> int:
        if vi not in view_map:
            v = views[_index(vi, len(views), "a bufferView index", src)]
            buf = source.buffers[_index(v.get("buffer"), len(source.buffers),
                                        "bufferViews[].buffer", src)]
            off, n = v.get("byteOffset", 0), v["byteLength"]
            if off + n > len(buf):
                raise _bad(src, f"bufferViews[{vi}] reaches past its buffer")
            new = b.view(bytes(buf[off: off + n]), v.get("target"))
            for key in ("byteStride", "name"):
                if key in v:
                    b.views[new][key] = v[key]
            view_map[vi] = new
        return view_map[vi]

    new_acc = []
    for old in sorted(used_acc):
        a = copy.deepcopy(accessors[old])
        if "bufferView" in a:
            a["bufferView"] = copy_view(a["bufferView"])
        sp = a.get("sparse")
        if isinstance(sp, dict):
            for part in ("indices", "values"):
                if isinstance(sp.get(part), dict) and "bufferView" in sp[part]:
                    sp[part]["bufferView"] = copy_view(sp[part]["bufferView"])
        new_acc.append(a)
    for i, img in enumerate(gltf.get("images", [])):
        if "bufferView" in img:
            img["bufferView"] = copy_view(img["bufferView"])
        else:
            data = _image_bytes(source.gltf, list(source.buffers), img, i, src, source.folder)
            uri = img.pop("uri")
            mime = img.get("mimeType")
            if mime is None:
                mime = ("image/png" if data[:8] == b"\x89PNG\r\n\x1a\n" else
                        "image/jpeg" if data[:2] == b"\xff\xd8" else
                        mimetypes.guess_type(uri)[0] or "image/png")
            img["mimeType"] = mime
            img["bufferView"] = b.view(data)
    for mesh in gltf.get("meshes", []):
        for prim in mesh.get("primitives", []):
            prim["attributes"] = {k: acc_map[v] for k, v in prim.get("attributes", {}).items()}
            if "indices" in prim:
                prim["indices"] = acc_map[prim["indices"]]
            if prim.get("targets"):
                prim["targets"] = [{k: acc_map[v] for k, v in t.items()} for t in prim["targets"]]
    for skin in gltf.get("skins", []):
        if "inverseBindMatrices" in skin:
            skin["inverseBindMatrices"] = acc_map[skin["inverseBindMatrices"]]
    b.accessors.extend(new_acc)
