"""An independent glTF reader and CPU skinning for the character tests: pygltflib for the file
structure, numpy straight from the accessors, the spec's formulas (no animik code)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pygltflib
import pytest

_DT = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32,
       5126: np.float32}
_N = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
#: animik world (Z up) from glTF (Y up).
WORLD_FROM_GLTF = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])


def load(path: Path) -> pygltflib.GLTF2:
    return pygltflib.GLTF2().load(str(path))


def accessor(g: pygltflib.GLTF2, i: int) -> np.ndarray:
    a = g.accessors[i]
    v = g.bufferViews[a.bufferView]
    blob = g.binary_blob()
    dt = np.dtype(_DT[a.componentType]).newbyteorder("<")
    n = _N[a.type]
    stride = v.byteStride or dt.itemsize * n
    off = (v.byteOffset or 0) + (a.byteOffset or 0)
    out = np.ndarray((a.count, n), dtype=dt, buffer=blob, offset=off,
                     strides=(stride, dt.itemsize)).astype(float)
    if a.normalized:
        out = out / np.iinfo(_DT[a.componentType]).max
    return out


def quat_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion ``xyzw`` (``(..., 4)``)."""
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def trs(t, r, s) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = quat_matrix(np.asarray(r, float)) * np.asarray(s, float)
    m[:3, 3] = t
    return m


def node_local(node, t=None, r=None, s=None) -> np.ndarray:
    if node.matrix is not None:
        return np.array(node.matrix, dtype=float).reshape(4, 4).T
    return trs(node.translation or [0, 0, 0] if t is None else t,
               node.rotation or [0, 0, 0, 1] if r is None else r,
               node.scale or [1, 1, 1] if s is None else s)


def parents(g: pygltflib.GLTF2) -> dict[int, int]:
    return {c: i for i, n in enumerate(g.nodes) for c in (n.children or [])}


def worlds(g: pygltflib.GLTF2, local: dict[int, np.ndarray] | None = None) -> list[np.ndarray]:
    """World matrices of every node (``local`` overrides some nodes' local matrices)."""
    par = parents(g)
    out: dict[int, np.ndarray] = {}

    def w(i: int) -> np.ndarray:
        if i not in out:
            m = (local or {}).get(i)
            m = node_local(g.nodes[i]) if m is None else m
            out[i] = m if i not in par else w(par[i]) @ m
        return out[i]

    return [w(i) for i in range(len(g.nodes))]


def _slerp(a: np.ndarray, b: np.ndarray, u: float) -> np.ndarray:
    if np.dot(a, b) < 0:
        b = -b
    d = min(max(float(np.dot(a, b)), -1.0), 1.0)
    th = np.arccos(d)
    if th < 1e-9:
        return a
    return (np.sin((1 - u) * th) * a + np.sin(u * th) * b) / np.sin(th)


def animated_locals(g: pygltflib.GLTF2, anim: int, t: float) -> dict[int, np.ndarray]:
    """Local matrices of the animated nodes at time ``t`` (LINEAR samplers, clamped)."""
    a = g.animations[anim]
    parts: dict[int, dict[str, np.ndarray]] = {}
    for ch in a.channels:
        smp = a.samplers[ch.sampler]
        ts = accessor(g, smp.input)[:, 0]
        vs = accessor(g, smp.output)
        assert smp.interpolation in (None, "LINEAR")
        if t <= ts[0]:
            v = vs[0]
        elif t >= ts[-1]:
            v = vs[-1]
        else:
            k = int(np.searchsorted(ts, t, side="right") - 1)
            u = (t - ts[k]) / (ts[k + 1] - ts[k])
            v = _slerp(vs[k], vs[k + 1], u) if ch.target.path == "rotation" else \
                vs[k] + u * (vs[k + 1] - vs[k])
        parts.setdefault(ch.target.node, {})[ch.target.path] = v
    out = {}
    for n, p in parts.items():
        out[n] = node_local(g.nodes[n], p.get("translation"), p.get("rotation"), p.get("scale"))
    return out


def skinned_positions(g: pygltflib.GLTF2, node_world: list[np.ndarray]) -> np.ndarray:
    """glTF linear blend skinning (spec §3.7.3) of every primitive of every mesh node bound to
    the first skinned mesh node's skin, in node / primitive order, in animik's world frame."""
    first = next(i for i, n in enumerate(g.nodes) if n.mesh is not None and n.skin is not None)
    si = g.nodes[first].skin
    skin = g.skins[si]
    ibm = accessor(g, skin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
    jm = np.stack([node_world[j] @ ibm[k] for k, j in enumerate(skin.joints)])
    out = []
    for n in g.nodes:
        if n.mesh is None or n.skin != si:
            continue
        for prim in g.meshes[n.mesh].primitives:
            v = accessor(g, prim.attributes.POSITION)
            jj = accessor(g, prim.attributes.JOINTS_0).astype(int)
            ww = accessor(g, prim.attributes.WEIGHTS_0)
            vh = np.c_[v, np.ones(len(v))]
            p = np.zeros((len(v), 4))
            for k in range(4):
                p += ww[:, k:k + 1] * np.einsum("vab,vb->va", jm[jj[:, k]], vh)
            out.append(p[:, :3])
    return np.concatenate(out) @ WORLD_FROM_GLTF.T


ROOT = Path(__file__).resolve().parents[2]


def validate(path: Path) -> dict:
    """The Khronos glTF-Validator report of a file (skips when Node.js or the package is
    missing; setup.sh installs both)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js not installed: the Khronos glTF validator runs on Node")
    if not (ROOT / "node_modules" / "gltf-validator").is_dir():
        pytest.skip("npm package gltf-validator not installed: run `npm ci` in the repository root")
    script = ("const fs=require('fs');const v=require('gltf-validator');"
              "v.validateBytes(new Uint8Array(fs.readFileSync(process.argv[1])),{maxIssues:100})"
              ".then(r=>process.stdout.write(JSON.stringify(r)))"
              ".catch(e=>{console.error(String(e));process.exit(2);});")
    res = subprocess.run([node, "-e", script, str(path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)
