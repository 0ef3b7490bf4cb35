"""glTF binary export / import: an independent reader (pygltflib + our own node-transform code),
the Khronos validator, round trips and bad input."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_shared, random_q, random_skeleton, shared_bvh_files

from animik import anim
from animik.errors import FileFormatError
from animik.io.bvh import read_bvh, write_bvh
from animik.io.gltf import GLTF_FROM_WORLD, convert, read_glb, write_glb
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rigs import load_rig

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ independent reader
def _quat_xyzw_to_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = (q / np.linalg.norm(q, axis=-1, keepdims=True)).T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


class _Glb:
    """The file through pygltflib; accessor data decoded here with numpy."""

    def __init__(self, path: Path):
        pygltflib = pytest.importorskip("pygltflib", reason="pygltflib (test dependency) not installed")
        self.g = pygltflib.GLTF2().load(str(path))
        self.blob = self.g.binary_blob()

    def data(self, index: int) -> np.ndarray:
        acc = self.g.accessors[index]
        view = self.g.bufferViews[acc.bufferView]
        n = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc.type]
        dtype = {5126: "<f4", 5121: "u1", 5123: "<u2"}[acc.componentType]
        start = (view.byteOffset or 0) + (acc.byteOffset or 0)
        a = np.frombuffer(self.blob, dtype=dtype, count=acc.count * n, offset=start)
        return a.reshape(acc.count, n).astype(float)

    def world(self, frame: int | None) -> tuple[np.ndarray, np.ndarray]:
        """World rotations and positions of every node at an animation frame (None: rest)."""
        nodes = self.g.nodes
        rot = np.array([_quat_xyzw_to_matrix(np.array(nd.rotation or [0, 0, 0, 1.0])) for nd in nodes])
        pos = np.array([nd.translation or [0.0, 0.0, 0.0] for nd in nodes], dtype=float)
        if frame is not None:
            an = self.g.animations[0]
            for ch in an.channels:
                out = self.data(an.samplers[ch.sampler].output)[frame]
                if ch.target.path == "rotation":
                    rot[ch.target.node] = _quat_xyzw_to_matrix(out)
                else:
                    pos[ch.target.node] = out
        parent = {c: i for i, nd in enumerate(nodes) for c in (nd.children or [])}
        wr, wp = np.empty_like(rot), np.empty_like(pos)
        done: set[int] = set()

        def visit(i):
            if i in done:
                return
            p = parent.get(i)
            if p is None:
                wr[i], wp[i] = rot[i], pos[i]
            else:
                visit(p)
                wr[i], wp[i] = wr[p] @ rot[i], wp[p] + wr[p] @ pos[i]
            done.add(i)

        for i in range(len(nodes)):
            visit(i)
        return wr, wp


def _check_against_fk(path: Path, motion: Motion, atol: float = 1e-6) -> _Glb:
    glb = _Glb(path)
    skel = motion.skeleton
    g = glb.g
    assert [g.nodes[i].name for i in g.skins[0].joints] == list(skel.joint_names)
    times = glb.data(g.animations[0].samplers[0].input)[:, 0]
    np.testing.assert_allclose(times, np.arange(motion.n_frames) / motion.fps, atol=1e-6)
    fk = forward_kinematics(skel, motion.q)
    joints = g.skins[0].joints
    for f in range(0, motion.n_frames, max(1, motion.n_frames // 7)):
        wr, wp = glb.world(f)
        np.testing.assert_allclose(wr[joints], GLTF_FROM_WORLD @ fk.joint_rotations[f], atol=atol)
        np.testing.assert_allclose(wp[joints], fk.joint_positions[f] @ GLTF_FROM_WORLD.T, atol=atol)
    # bind pose = rest pose; inverse bind matrices invert it
    wr, wp = glb.world(None)
    rest = forward_kinematics(skel, skel.rest_q)
    np.testing.assert_allclose(wp[joints], rest.joint_positions @ GLTF_FROM_WORLD.T, atol=atol)
    ibm = glb.data(g.skins[0].inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
    bind = np.zeros((len(joints), 4, 4))
    bind[:, :3, :3], bind[:, :3, 3], bind[:, 3, 3] = wr[joints], wp[joints], 1.0
    np.testing.assert_allclose(ibm @ bind, np.broadcast_to(np.eye(4), bind.shape), atol=1e-5)
    return glb


def _clip(rig="body95", seed=2):
    skel = load_rig(rig)
    rng = np.random.default_rng(seed)
    poses = np.clip(skel.rest_q + rng.normal(size=(4, skel.n_dof)) * 0.4, skel.lower, skel.upper)
    poses[:, :3] += [[0, 0, 0], [0.3, 0.1, 0.05], [0.6, -0.2, 0.0], [1.0, 0.0, 0.1]]
    return anim.clip_from_poses(skel, [0.0, 0.5, 1.2, 2.0], poses, name="dance", fps=30,
                                interpolation="smooth")


def test_glb_matches_fk_independent_reader(tmp_path):
    clip = _clip()
    path = anim.export_clip(clip, tmp_path / "dance.glb")
    glb = _check_against_fk(path, clip.to_motion())
    g = glb.g
    assert g.asset.version == "2.0" and g.animations[0].name == "dance"
    assert g.skins[0].skeleton == 0
    prim = g.meshes[0].primitives[0]
    w = glb.data(prim.attributes.WEIGHTS_0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    jnt = glb.data(prim.attributes.JOINTS_0)
    assert jnt[:, 0].max() < clip.skeleton.n_joints and np.all(jnt[:, 1:] == 0)
    pos = glb.data(prim.attributes.POSITION)
    acc = g.accessors[prim.attributes.POSITION]
    np.testing.assert_allclose(acc.min, pos.min(axis=0), atol=1e-6)
    np.testing.assert_allclose(acc.max, pos.max(axis=0), atol=1e-6)
    # keyed times are frames here: the file reproduces the sampled clip at the keys
    kt = clip.key_times
    frames = np.round(kt * clip.fps).astype(int)
    fk = forward_kinematics(clip.skeleton, clip.sample(kt))
    for i, f in enumerate(frames):
        wr, wp = glb.world(int(f))
        np.testing.assert_allclose(wp[:clip.skeleton.n_joints], fk.joint_positions[i] @ GLTF_FROM_WORLD.T,
                                   atol=1e-6)


def test_glb_loads_in_trimesh(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    path = write_glb(_clip("fig2").to_motion(), tmp_path / "f.glb")
    scene = trimesh.load(path)
    assert sum(len(gm.vertices) for gm in scene.geometry.values()) > 0


@pytest.mark.parametrize("rig", ["fig2", "wheeled20", "biped12", "random"])
def test_glb_round_trip_restores_skeleton_and_poses(rig, tmp_path, rng):
    if rig == "random":
        skel = random_skeleton(rng, 9)
        q = random_q(skel, rng, (12,)) * 0.5
    else:
        skel = load_rig(rig)
        q = np.clip(skel.rest_q + np.cumsum(rng.normal(size=(12, skel.n_dof)) * 0.1, axis=0),
                    skel.lower, skel.upper)
    m = Motion(skel, q, 24.0, meta={"clip": "x"})
    path = write_glb(m, tmp_path / "x.glb", mesh=rig != "biped12")
    _check_against_fk(path, m)
    back = read_glb(path)
    assert back.skeleton.joint_names == skel.joint_names and back.skeleton.dof_names == skel.dof_names
    np.testing.assert_allclose(back.skeleton.offsets, skel.offsets, atol=1e-15)
    assert back.fps == 24.0 and back.meta["gltf_animation"] == "x"
    fk0, fk1 = forward_kinematics(skel, q), forward_kinematics(back.skeleton, back.q)
    np.testing.assert_allclose(fk1.joint_positions, fk0.joint_positions, atol=2e-6)
    np.testing.assert_allclose(fk1.site_positions, fk0.site_positions, atol=2e-6)
    if rig != "random":  # (random skeletons have redundant DoFs)
        np.testing.assert_allclose(back.q, q, atol=2e-6)


def _strip_extras(src: Path, dst: Path) -> Path:
    return _rewrite_json(src, dst, lambda doc: doc.pop("extras"))


def test_read_foreign_glb(tmp_path):
    # A glb without animik's extras: joints from the skin, 3 rotation DoFs per animated node.
    clip = _clip()
    m = clip.to_motion()
    path = _strip_extras(write_glb(m, tmp_path / "a.glb"), tmp_path / "foreign.glb")
    back = read_glb(path)
    assert back.skeleton.joint_names == m.skeleton.joint_names
    assert abs(back.fps - 30.0) < 1e-9 and back.n_frames == m.n_frames
    fk0, fk1 = forward_kinematics(m.skeleton, m.q), forward_kinematics(back.skeleton, back.q)
    np.testing.assert_allclose(fk1.joint_positions, fk0.joint_positions, atol=2e-6)
    np.testing.assert_allclose(fk1.joint_rotations, fk0.joint_rotations, atol=2e-6)
    # glb -> BVH -> glb keeps the poses
    write_bvh(back, tmp_path / "f.bvh")
    again = read_bvh(tmp_path / "f.bvh")
    np.testing.assert_allclose(forward_kinematics(again.skeleton, again.q).joint_positions,
                               fk0.joint_positions, atol=2e-6)


def test_bvh_glb_bvh_round_trip(tmp_path):
    m = Motion(load_rig("fig2"), np.clip(load_rig("fig2").rest_q + np.linspace(0, 0.5, 25)[:, None]
                                         * np.sin(np.arange(25)), load_rig("fig2").lower,
                                         load_rig("fig2").upper), 30.0)
    write_bvh(m, tmp_path / "a.bvh")
    convert(tmp_path / "a.bvh", tmp_path / "a.glb")
    convert(tmp_path / "a.glb", tmp_path / "b.bvh")
    convert(tmp_path / "b.bvh", tmp_path / "b.glb")
    a, b = read_bvh(tmp_path / "a.bvh"), read_bvh(tmp_path / "b.bvh")
    assert b.skeleton.joint_names == a.skeleton.joint_names
    assert b.skeleton.dof_names == a.skeleton.dof_names
    np.testing.assert_allclose(b.q, a.q, atol=2e-6)
    assert (tmp_path / "a.bvh").read_text().split("MOTION")[0] == \
        (tmp_path / "b.bvh").read_text().split("MOTION")[0]  # same hierarchy, byte for byte
    ga, gb = read_glb(tmp_path / "a.glb"), read_glb(tmp_path / "b.glb")
    np.testing.assert_allclose(gb.q, ga.q, atol=2e-6)


@needs_shared
@pytest.mark.parametrize("path", shared_bvh_files()[:9], ids=lambda p: p.name)
def test_shared_bvh_to_glb(path, tmp_path):
    m = read_bvh(path)
    if m.n_frames > 600:
        m = m.replace(q=m.q[:600])
    out = write_glb(m, tmp_path / "m.glb")
    _check_against_fk(out, m, atol=2e-6 * max(1.0, float(np.abs(forward_kinematics(
        m.skeleton, m.q).joint_positions).max())))
    back = read_glb(out)
    np.testing.assert_allclose(forward_kinematics(back.skeleton, back.q).joint_positions,
                               forward_kinematics(m.skeleton, m.q).joint_positions, atol=1e-5)
    assert [n.name for n in _Glb(out).g.nodes[:m.skeleton.n_joints]] == list(m.skeleton.joint_names)


# ------------------------------------------------------------------ Khronos validator
from gltf_reference import validate  # noqa: E402


def _assert_clean(report: dict) -> None:
    issues = report["issues"]
    msgs = [f"{m['code']} {m.get('pointer', '')}: {m['message']}" for m in issues["messages"]]
    assert issues["numErrors"] == 0, msgs
    assert issues["numWarnings"] == 0, msgs


def test_validator_body95_clip(tmp_path):
    report = validate(anim.export_clip(_clip(), tmp_path / "body95.glb"))
    _assert_clean(report)
    assert report["info"]["animationCount"] == 1 and report["info"]["hasSkins"]


def test_validator_ik_clip_without_mesh(tmp_path):
    skel = load_rig("fig2")
    clip = anim.add_key(anim.new_clip(skel, "ik"), 0.0, skel.rest_q)
    clip = anim.add_effector_key(clip, "r_hand", 0.0, [0.2, -0.4, 1.0])
    clip = anim.add_effector_key(clip, "r_hand", 1.0, [0.3, -0.3, 1.2])
    _assert_clean(validate(anim.export_clip(clip, tmp_path / "ik.glb", mesh=False)))


@needs_shared
def test_validator_shared_bvh(tmp_path):
    path = next(p for p in shared_bvh_files() if p.name == "pirouette.bvh")
    out = convert(path, tmp_path / "pirouette.glb")
    report = validate(out)
    _assert_clean(report)
    assert report["info"]["animationCount"] == 1


# ------------------------------------------------------------------ bad input
def test_bad_input(tmp_path):
    skel = load_rig("fig2")
    with pytest.raises(FileFormatError, match="empty motion"):
        write_glb(Motion(skel, np.zeros((0, skel.n_dof)), 30.0), tmp_path / "e.glb")
    (tmp_path / "junk.glb").write_bytes(b"glTF\x02\x00\x00\x00\xff\x00\x00\x00")
    with pytest.raises(FileFormatError):
        read_glb(tmp_path / "junk.glb")
    (tmp_path / "text.glb").write_text("not json")
    with pytest.raises(FileFormatError, match="not a glTF file"):
        read_glb(tmp_path / "text.glb")
    with pytest.raises(FileNotFoundError):
        read_glb(tmp_path / "missing.glb")
    trimesh = pytest.importorskip("trimesh")
    trimesh.creation.box().export(tmp_path / "box.glb")
    with pytest.raises(FileFormatError, match="no animation"):
        read_glb(tmp_path / "box.glb")
    m = Motion(skel, np.zeros((2, skel.n_dof)), 30.0)
    path = write_glb(m, tmp_path / "m.glb")
    with pytest.raises(FileFormatError, match="no animation named 'run'"):
        read_glb(path, animation="run")
    with pytest.raises(FileFormatError, match="unknown output extension"):
        convert(path, tmp_path / "m.fbx")


def test_atomic_write_keeps_old_file(tmp_path, monkeypatch):
    import os

    skel = load_rig("fig2")
    path = tmp_path / "out.glb"
    path.write_bytes(b"old contents")

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="No space"):
        write_glb(Motion(skel, np.zeros((2, skel.n_dof)), 30.0), path)
    assert path.read_bytes() == b"old contents"
    assert [p.name for p in tmp_path.iterdir()] == ["out.glb"]


def _rewrite_json(src: Path, dst: Path, edit) -> Path:
    data = src.read_bytes()
    jlen = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + jlen])
    edit(doc)
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    rest = data[20 + jlen:]
    dst.write_bytes(struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(js) + len(rest))
                    + struct.pack("<II", len(js), 0x4E4F534A) + js + rest)
    return dst


def test_read_resampled_and_step(tmp_path):
    from scipy.spatial.transform import Rotation, Slerp

    m = _clip("fig2").to_motion()
    path = write_glb(m, tmp_path / "a.glb")
    fine = read_glb(path, fps=60.0)
    assert fine.n_frames == 2 * m.n_frames - 1
    np.testing.assert_allclose(fine.q[::2], m.q, atol=2e-6)
    # in between: glTF LINEAR = slerp of the node rotations, lerp of translations
    r = forward_kinematics(m.skeleton, m.q).joint_rotations[:, 0]
    mid = forward_kinematics(fine.skeleton, fine.q[1::2]).joint_rotations[:, 0]
    ref = np.array([Slerp([0, 1], Rotation.from_matrix(r[i:i + 2]))([0.5]).as_matrix()[0]
                    for i in range(m.n_frames - 1)])
    np.testing.assert_allclose(mid, ref, atol=2e-6)

    def step(doc):
        for s in doc["animations"][0]["samplers"]:
            s["interpolation"] = "STEP"

    stepped = read_glb(_rewrite_json(path, tmp_path / "s.glb", step), fps=60.0)
    np.testing.assert_allclose(stepped.q[1::2], stepped.q[:-1:2], atol=1e-12)


def test_read_cubicspline_without_skin(tmp_path):
    # A hand-made file: two nodes, no skin, CUBICSPLINE translation of the root.
    from animik.io.gltf import _Builder, _glb_bytes

    b = _Builder()
    t = b.accessor(np.array([0.0, 1.0]), "SCALAR", minmax=True)
    p0, p1 = np.array([0.0, 1.0, 0.0]), np.array([2.0, 1.0, 0.0])
    tang = np.array([1.0, 0.0, 0.0])  # in-tangent, value, out-tangent per key
    out = b.accessor(np.stack([tang, p0, tang, tang, p1, tang]), "VEC3")
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"name": "hips", "children": [1]}, {"name": "head", "translation": [0, 0.5, 0]}],
           "animations": [{"channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
                           "samplers": [{"input": t, "output": out, "interpolation": "CUBICSPLINE"}]}],
           "accessors": b.accessors, "bufferViews": b.views, "buffers": [{"byteLength": len(b.blob)}]}
    path = tmp_path / "c.glb"
    path.write_bytes(_glb_bytes(doc, bytes(b.blob)))
    m = read_glb(path, fps=4.0)
    assert m.skeleton.joint_names == ("hips", "head") and m.n_frames == 5
    pos = forward_kinematics(m.skeleton, m.q).joint_positions[:, 0]
    s = np.linspace(0, 1, 5)
    # Hermite with unit tangents in x: x(s) = h00*0 + h10*1 + h01*2 + h11*1
    x = (s**3 - 2 * s**2 + s) * 1 + (-2 * s**3 + 3 * s**2) * 2 + (s**3 - s**2) * 1
    # glTF (x, y, z) -> world (x, -z, y)
    np.testing.assert_allclose(pos, np.stack([x, np.zeros(5), np.ones(5)], -1), atol=1e-12)
    head = forward_kinematics(m.skeleton, m.q).joint_positions[:, 1]
    np.testing.assert_allclose(head[:, 2], 1.5, atol=1e-12)
