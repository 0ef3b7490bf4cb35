"""Rigged glTF characters (issue 12): every shared Khronos character loads, skins like an
independent CPU skinning written from the spec (tests/io/gltf_reference.py, pygltflib + numpy),
poses with IK on its automatic sites, and exports (validator: 0 errors) to a file that reads
back to the same skeleton, mesh and motion."""

from __future__ import annotations

import json
from pathlib import Path

import gltf_reference as ref
import numpy as np
import pytest
from gltf_reference import validate

import animik
from animik.character import Material, SkinnedMesh, homogeneous, skin_matrices
from animik.errors import SkeletonError, UnknownNameError
from animik.ik import solve_ik
from animik.io.gltf import write_glb
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rigs import load_rig
from animik.skeleton import ROTATION, Site

ROOT = Path(__file__).resolve().parents[2]
GLTF = ROOT.parent / "shared" / "data" / "gltf"
CHARACTERS = sorted(GLTF.glob("*/*.glb")) if GLTF.is_dir() else []
needs_gltf = pytest.mark.skipif(not CHARACTERS, reason="../shared/data/gltf not present")
NAMES = ["CesiumMan", "Fox", "RecursiveSkeletons", "RiggedFigure", "RiggedSimple"]


def _path(name: str) -> Path:
    p = GLTF / name / f"{name}.glb"
    if not p.is_file():
        pytest.skip(f"{p} not present")
    return p


def _skin(mesh: SkinnedMesh, skel, q: np.ndarray) -> np.ndarray:
    """Skinned positions ``(V, 3)`` from the character module's matrices."""
    fk = forward_kinematics(skel, q)
    s = skin_matrices(mesh, homogeneous(fk.joint_rotations, fk.joint_positions))
    ph = np.c_[mesh.positions.astype(float), np.ones(mesh.n_vertices)]
    out = np.zeros((mesh.n_vertices, 4))
    for k in range(4):
        out += mesh.weights[:, k:k + 1] * np.einsum("vab,vb->va", s[mesh.joints[:, k]], ph)
    return out[:, :3]


def _size(mesh: SkinnedMesh) -> float:
    return float(np.ptp(mesh.positions, axis=0).max())


def _random_pose(skel, rng, scale=0.4) -> np.ndarray:
    q = skel.rest_q.copy()
    rot = skel.dof_type == ROTATION
    q[rot] += rng.normal(0.0, scale, rot.sum())
    return skel.clip_to_limits(q)


def _errors(report: dict) -> list[str]:
    return [f"{m['code']} {m.get('pointer', '')}: {m['message']}"
            for m in report["issues"]["messages"] if m["severity"] == 0]


# ------------------------------------------------------------------ loading
@needs_gltf
@pytest.mark.parametrize("name", NAMES)
def test_character_loads_with_skeleton_of_the_skin(name):
    path = _path(name)
    ch = animik.load_character(path)
    g = ref.load(path)
    first = next(n for n in g.nodes if n.mesh is not None and n.skin is not None)
    skin = g.skins[first.skin]
    skin_names = {g.nodes[j].name or f"node{j}" for j in skin.joints}
    assert skin_names <= set(ch.skeleton.joint_names)
    assert ch.mesh is not None and ch.mesh.source is not None
    assert ch.skeleton.n_sites >= 1
    # load_rig gives the same skeleton
    rig = load_rig(path)
    assert rig.joint_names == ch.skeleton.joint_names and rig.site_names == ch.skeleton.site_names
    np.testing.assert_allclose(rig.offsets, ch.skeleton.offsets)
    assert len(ch.clips) == len(g.animations)
    # the mesh at the bind pose is the file's skinning at the bind pose: every skin matrix is I
    fk = forward_kinematics(ch.skeleton, ch.skeleton.rest_q)
    wfj = homogeneous(fk.joint_rotations, fk.joint_positions)
    used = np.unique(ch.mesh.joints[ch.mesh.weights > 0])
    np.testing.assert_allclose(skin_matrices(ch.mesh, wfj)[used], np.tile(np.eye(4), (len(used), 1, 1)),
                               atol=1e-6)


@needs_gltf
def test_humanoids_get_head_hand_and_foot_sites():
    for name in ("CesiumMan", "RiggedFigure"):
        skel = animik.load_character(_path(name)).skeleton
        assert set(skel.site_names) >= {"head", "l_hand", "r_hand", "l_foot", "r_foot"}
        fk = forward_kinematics(skel, skel.rest_q)
        z = {s: fk.site_positions[skel.site_index(s)][2] for s in skel.site_names}
        assert z["head"] > z["l_hand"] > z["l_foot"] and z["head"] > 1.0  # Z up, metres


@needs_gltf
def test_textures_decode_to_rgba():
    for name in ("CesiumMan", "Fox"):
        mesh = animik.load_character(_path(name)).mesh
        tex = mesh.materials[mesh.parts[0].material].base_color_texture
        assert tex is not None and tex.dtype == np.uint8 and tex.shape[2] == 4
        assert tex.shape[:2] == (1024, 1024) and tex[..., :3].std() > 10
        assert mesh.uvs is not None and mesh.uvs.shape == (mesh.n_vertices, 2)


# ------------------------------------------------------------------ skinning vs the spec
@needs_gltf
@pytest.mark.parametrize("name", NAMES)
def test_clip_frames_skin_like_the_files_own_animation(name):
    """Independent: node matrices from the file's animation sampled by the reference reader."""
    path = _path(name)
    ch = animik.load_character(path)
    g = ref.load(path)
    clip = ch.clips[0]
    tol = 1e-4 * _size(ch.mesh)
    for k in sorted({0, clip.n_frames // 2, clip.n_frames - 1}):
        t = k / clip.fps
        want = ref.skinned_positions(g, ref.worlds(g, ref.animated_locals(g, 0, t)))
        np.testing.assert_allclose(_skin(ch.mesh, ch.skeleton, clip.q[k]), want, atol=tol)


@needs_gltf
@pytest.mark.parametrize("name", NAMES)
def test_random_poses_skin_like_the_spec_on_the_exported_file(name, tmp_path):
    """A random pose written with the character, skinned by the reference from that file."""
    path = _path(name)
    ch = animik.load_character(path)
    rng = np.random.default_rng(12)
    tol = 1e-5 * _size(ch.mesh)
    for i in range(3):
        q = _random_pose(ch.skeleton, rng)
        out = write_glb(Motion(ch.skeleton, q[None], 30.0), tmp_path / f"{i}.glb", mesh=ch)
        g = ref.load(out)
        want = ref.skinned_positions(g, ref.worlds(g))
        got = _skin(ch.mesh, ch.skeleton, q)
        assert np.max(np.abs(got - _skin(ch.mesh, ch.skeleton, ch.skeleton.rest_q))) > 10 * tol
        np.testing.assert_allclose(got, want, atol=tol)


# ------------------------------------------------------------------ posing
@needs_gltf
@pytest.mark.parametrize("name", NAMES)
def test_ik_on_the_auto_sites_converges(name):
    ch = animik.load_character(_path(name))
    skel = ch.skeleton
    rng = np.random.default_rng(3)
    goal = _random_pose(skel, rng, 0.15)
    fk = forward_kinematics(skel, goal)
    targets = {s: fk.site_positions[i] for i, s in enumerate(skel.site_names)}
    res = solve_ik(skel, skel.rest_q, targets, max_iterations=500)
    size = _size(ch.mesh)
    assert max(res.error.values()) < 1e-3 * size, (res.reason, res.error)


# ------------------------------------------------------------------ export and round trip
@needs_gltf
@pytest.mark.parametrize("name", NAMES)
def test_export_keeps_the_character_and_round_trips(name, tmp_path):
    path = _path(name)
    ch = animik.load_character(path)
    clip = ch.clips[0]
    out = write_glb(clip, tmp_path / f"{name}.glb", mesh=ch)
    report = validate(out)
    assert _errors(report) == [], _errors(report)
    # pygltflib: the original mesh, skin, materials and textures are there, one new animation
    g0, g1 = ref.load(path), ref.load(out)
    for key in ("meshes", "skins", "materials", "textures", "images", "nodes"):
        assert len(getattr(g1, key)) == len(getattr(g0, key)), key
    assert len(g1.animations) == 1
    s0 = g0.skins[0]
    np.testing.assert_array_equal(ref.accessor(g1, g1.skins[0].inverseBindMatrices),
                                  ref.accessor(g0, s0.inverseBindMatrices))
    p0 = g0.meshes[0].primitives[0].attributes
    p1 = g1.meshes[0].primitives[0].attributes
    for attr in ("POSITION", "JOINTS_0", "WEIGHTS_0"):
        np.testing.assert_array_equal(ref.accessor(g1, getattr(p1, attr)),
                                      ref.accessor(g0, getattr(p0, attr)))
    # import again: same skeleton, mesh and motion
    back = animik.load_character(out)
    s, b = ch.skeleton, back.skeleton
    assert b.joint_names == s.joint_names and b.dof_names == s.dof_names
    assert b.site_names == s.site_names
    np.testing.assert_array_equal(b.parents, s.parents)
    np.testing.assert_allclose(b.offsets, s.offsets, atol=1e-12)
    np.testing.assert_allclose(b.rest_rotations, s.rest_rotations, atol=1e-12)
    np.testing.assert_array_equal(back.mesh.positions, ch.mesh.positions)
    np.testing.assert_array_equal(back.mesh.weights, ch.mesh.weights)
    np.testing.assert_array_equal(back.mesh.joints, ch.mesh.joints)
    np.testing.assert_allclose(back.mesh.inverse_bind, ch.mesh.inverse_bind, atol=1e-9)
    assert len(back.clips) == 1 and back.clips[0].n_frames == clip.n_frames
    fa = forward_kinematics(s, clip.q).joint_positions
    fb = forward_kinematics(b, back.clips[0].q).joint_positions
    np.testing.assert_allclose(fb, fa, atol=1e-6 * max(1.0, _size(ch.mesh)))


@needs_gltf
def test_every_clip_of_the_fox_exports(tmp_path):
    ch = animik.load_character(_path("Fox"))
    assert [c.meta["clip"] for c in ch.clips] == ["Survey", "Walk", "Run"]
    for c in ch.clips:
        out = write_glb(c, tmp_path / f"{c.meta['clip']}.glb", mesh=ch.mesh)
        assert ref.load(out).animations[0].name == c.meta["clip"]


# ------------------------------------------------------------------ generated meshes
def _generated_body(skel) -> SkinnedMesh:
    """A box per bone, skinned rigidly to the bone's joint, with a 2x2 texture."""
    fk = forward_kinematics(skel, skel.rest_q)
    wfj = homogeneous(fk.joint_rotations, fk.joint_positions)
    P, F, J = [], [], []
    for j in range(1, skel.n_joints):
        a, b = fk.joint_positions[skel.parents[j]], fk.joint_positions[j]
        c = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float) - 0.5
        box = (a + b) / 2 + c * (np.abs(b - a) + 0.02)
        base = len(P) * 8
        F += [[base + i for i in f] for f in ([0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5],
                                              [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],
                                              [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3])]
        P.append(box)
        J += [skel.parents[j]] * 8
    P = np.concatenate(P)
    V = len(P)
    joints = np.zeros((V, 4), int)
    joints[:, 0] = J
    tex = np.array([[[255, 0, 0, 255], [0, 255, 0, 255]], [[0, 0, 255, 255], [255, 255, 255, 255]]],
                   np.uint8)
    return SkinnedMesh(P, P / np.linalg.norm(P, axis=1, keepdims=True), F, joints,
                       np.tile([1.0, 0, 0, 0], (V, 1)), np.linalg.inv(wfj),
                       uvs=np.tile([[0.25, 0.75]], (V, 1)),
                       materials=(Material("skin", (0.9, 0.7, 0.6, 1.0), tex),))


def test_generated_mesh_writes_as_a_skinned_mesh(tmp_path):
    skel = load_rig("fig2")
    body = _generated_body(skel)
    rng = np.random.default_rng(5)
    q = np.stack([_random_pose(skel, rng, 0.3) for _ in range(4)])
    out = write_glb(Motion(skel, q, 30.0), tmp_path / "fig2.glb", mesh=body)
    assert _errors(validate(out)) == []
    g = ref.load(out)
    assert len(g.images) == 1 and g.materials[0].pbrMetallicRoughness.baseColorTexture is not None
    # the reference skinning of the file's animation = ours
    for k in range(4):
        want = ref.skinned_positions(g, ref.worlds(g, ref.animated_locals(g, 0, k / 30.0)))
        np.testing.assert_allclose(_skin(body, skel, q[k]), want, atol=1e-5)
    back = animik.load_character(out)
    assert back.skeleton.joint_names == skel.joint_names
    np.testing.assert_allclose(back.mesh.positions, body.positions, atol=1e-6)
    np.testing.assert_array_equal(back.mesh.materials[0].base_color_texture,
                                  body.materials[0].base_color_texture)
    np.testing.assert_allclose(forward_kinematics(skel, back.clips[0].q).joint_positions,
                               forward_kinematics(skel, q).joint_positions, atol=1e-6)


# ------------------------------------------------------------------ sites
def test_with_sites_and_without_sites():
    skel = load_rig("fig2")
    s2 = skel.with_sites([Site("tip", skel.joint_names[3], (0.0, 0.0, 0.1))])
    assert s2.site_names == (*skel.site_names, "tip") and s2.dof_names == skel.dof_names
    np.testing.assert_allclose(s2.site_offsets[-1], [0, 0, 0.1])
    s3 = s2.without_sites(["tip", skel.site_names[0]])
    assert s3.site_names == skel.site_names[1:]
    with pytest.raises(SkeletonError):
        skel.with_sites([Site(skel.site_names[0], skel.joint_names[0])])
    with pytest.raises(SkeletonError):
        skel.with_sites([Site("x", "no such joint")])
    with pytest.raises(UnknownNameError):
        skel.without_sites(["no such site"])


def test_load_character_falls_back_to_the_rig_resolver(tmp_path):
    ch = animik.load_character("fig2")
    assert ch.mesh is None and ch.clips == () and ch.skeleton.site_names == load_rig("fig2").site_names
    bvh = sorted((ROOT.parent / "shared" / "data" / "bvh").glob("*/*.bvh"))
    if bvh:
        ch = animik.load_character(bvh[0])
        assert len(ch.clips) == 1 and ch.clips[0].skeleton is ch.skeleton
        assert {"l_hand", "r_hand", "l_foot", "r_foot"} <= set(ch.skeleton.site_names) or \
            ch.skeleton.n_sites > 0


# ------------------------------------------------------------------ bad input
def _synthetic(n_joints=6, joints1=None, weights1=None, weights0=None, joints0=None, ibm=None,
               skin=True, mesh_parent=None, blob_cut=0, drop_bin=False) -> bytes:
    """A chain of ``n_joints`` joint nodes along glTF +y (0.1 apart) and a mesh node with a
    2-triangle quad skinned to them."""
    import struct

    from animik.io.gltf import _Builder, _glb_bytes

    b = _Builder()
    V = 4
    pos = np.array([[0, 0, 0], [0.1, 0, 0], [0.1, 0.3, 0], [0, 0.3, 0]], np.float32)
    acc = {"POSITION": b.accessor(pos, "VEC3", minmax=True, target=34962)}
    if skin:
        j0 = np.array(joints0 if joints0 is not None else [[0, 1, 0, 0]] * V)
        w0 = np.array(weights0 if weights0 is not None else [[0.5, 0.5, 0, 0]] * V)
        acc["JOINTS_0"] = b.accessor(j0, "VEC4", 5121, target=34962)
        acc["WEIGHTS_0"] = b.accessor(w0, "VEC4", target=34962)
        if joints1 is not None:
            acc["JOINTS_1"] = b.accessor(np.array(joints1), "VEC4", 5121, target=34962)
            acc["WEIGHTS_1"] = b.accessor(np.array(weights1), "VEC4", target=34962)
    idx = b.accessor(np.array([0, 1, 2, 0, 2, 3]), "SCALAR", 5123, target=34963)
    nodes = [{"name": f"j{k}", "translation": [0, 0.1 if k else 0, 0],
              **({"children": [k + 1]} if k + 1 < n_joints else {})} for k in range(n_joints)]
    mesh_node = {"name": "body", "mesh": 0, **({"skin": 0} if skin else {})}
    nodes.append(mesh_node)
    if mesh_parent is not None:
        nodes[mesh_parent].setdefault("children", []).append(n_joints)
    gltf = {"asset": {"version": "2.0"}, "scene": 0,
            "scenes": [{"nodes": [0] + ([n_joints] if mesh_parent is None else [])}],
            "nodes": nodes, "meshes": [{"primitives": [{"attributes": acc, "indices": idx}]}]}
    if skin:
        if ibm is None:
            ibm = np.tile(np.eye(4), (n_joints, 1, 1))
            ibm[:, 1, 3] = -0.1 * np.arange(n_joints)
        gltf["skins"] = [{"joints": list(range(n_joints)),
                          "inverseBindMatrices": b.accessor(np.swapaxes(ibm, 1, 2).reshape(-1, 16),
                                                            "MAT4")}]
    gltf["accessors"] = b.accessors
    gltf["bufferViews"] = b.views
    blob = bytes(b.blob)
    gltf["buffers"] = [{"byteLength": len(blob)}]
    data = _glb_bytes(gltf, blob[: len(blob) - blob_cut] if blob_cut else blob)
    if drop_bin:
        n = struct.unpack_from("<I", data, 12)[0]
        data = data[: 20 + n]
        data = data[:8] + struct.pack("<I", len(data)) + data[12:]
    return data


def test_synthetic_character_loads_and_skins(tmp_path):
    ch = animik.load_character(_write(_synthetic(), tmp_path))
    assert ch.skeleton.joint_names == tuple(f"j{k}" for k in range(6))
    assert ch.mesh.n_vertices == 4 and ch.meta["messages"] == []
    np.testing.assert_allclose(ch.mesh.weights[:, :2], 0.5)


def _write(data: bytes, tmp_path: Path, name: str = "c.glb") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_more_than_four_influences_keep_the_four_largest_renormalised(tmp_path):
    w0 = [[0.1, 0.2, 0.3, 0.05]] * 4
    w1 = [[0.25, 0.1, 0.0, 0.0]] * 4
    ch = animik.load_character(_write(_synthetic(
        joints0=[[0, 1, 2, 3]] * 4, weights0=w0, joints1=[[4, 5, 0, 0]] * 4, weights1=w1), tmp_path))
    m = ch.mesh
    # largest: 0.3 (j2), 0.25 (j4), 0.2 (j1), 0.1 (j0, first of the two 0.1s)
    np.testing.assert_array_equal(m.joints[0], [2, 4, 1, 0])
    np.testing.assert_allclose(m.weights[0], np.array([0.3, 0.25, 0.2, 0.1]) / 0.85, rtol=1e-6)
    assert any("4 largest kept" in msg for msg in ch.meta["messages"])


def test_zero_weight_vertices_bind_to_the_mesh_nodes_joint_or_the_root(tmp_path):
    w0 = [[0.5, 0.5, 0, 0], [0, 0, 0, 0], [0.5, 0.5, 0, 0], [0, 0, 0, 0]]
    ch = animik.load_character(_write(_synthetic(weights0=w0, mesh_parent=3), tmp_path))
    np.testing.assert_array_equal(ch.mesh.joints[[1, 3]], [[3, 0, 0, 0]] * 2)
    np.testing.assert_array_equal(ch.mesh.weights[[1, 3]], [[1, 0, 0, 0]] * 2)
    assert any("without weights" in msg for msg in ch.meta["messages"])
    ch = animik.load_character(_write(_synthetic(weights0=w0), tmp_path, "d.glb"))
    np.testing.assert_array_equal(ch.mesh.joints[[1, 3]], [[0, 0, 0, 0]] * 2)


def test_glb_without_a_skin_is_a_static_prop(tmp_path):
    ch = animik.load_character(_write(_synthetic(skin=False), tmp_path))
    assert ch.meta.get("static_prop") and "static prop" in ch.meta["messages"][0]
    assert ch.skeleton.n_joints == 1 and ch.skeleton.n_dof == 6
    assert np.all(ch.mesh.joints == 0) and np.all(ch.mesh.weights[:, 0] == 1)


@needs_gltf
def test_several_skins_use_the_first_skinned_mesh_nodes_skin():
    ch = animik.load_character(_path("RecursiveSkeletons"))
    assert ch.meta["skin"] == 0 and "84 skins" in ch.meta["messages"][0]


@pytest.mark.parametrize("case, match", [
    ("singular_ibm", "cannot be inverted"),
    ("no_bin", "no BIN chunk"),
    ("truncated", "past its buffer"),
    ("bad_joint", "joint index 9"),
])
def test_bad_files_raise_file_format_errors(case, match, tmp_path):
    kw = {
        "singular_ibm": dict(ibm=np.zeros((6, 4, 4))),
        "no_bin": dict(drop_bin=True),
        "truncated": dict(blob_cut=64),
        "bad_joint": dict(joints0=[[9, 0, 0, 0]] * 4, weights0=[[1, 0, 0, 0]] * 4),
    }[case]
    with pytest.raises(animik.FileFormatError, match=match):
        animik.load_character(_write(_synthetic(**kw), tmp_path))


def test_gltf_with_a_missing_buffer_file_is_an_os_error(tmp_path):
    data = _synthetic()
    import struct

    n = struct.unpack_from("<I", data, 12)[0]
    gltf = json.loads(data[20: 20 + n])
    gltf["buffers"][0]["uri"] = "missing.bin"
    p = tmp_path / "c.gltf"
    p.write_text(json.dumps(gltf))
    with pytest.raises(FileNotFoundError, match="buffers"):
        animik.load_character(p)


# ------------------------------------------------------------------ retarget onto a character
@needs_gltf
def test_cli_retarget_to_a_glb_character_writes_a_glb_that_keeps_it(tmp_path):
    from animik.cli import main

    bvh = ROOT.parent / "shared" / "data" / "bvh" / "bandai_namco" / "dataset-1_walk_normal_001.bvh"
    if not bvh.is_file():
        pytest.skip(f"{bvh} not present")
    target = _path("CesiumMan")
    rc = main(["retarget", str(bvh), "--to", str(target), "--out", str(tmp_path / "out"),
               "--format", "glb", "--quiet"])
    assert rc == 0
    out = tmp_path / "out" / f"{bvh.stem}.glb"
    assert _errors(validate(out)) == []
    ch, back = animik.load_character(target), animik.load_character(out)
    assert back.skeleton.joint_names == ch.skeleton.joint_names
    np.testing.assert_array_equal(back.mesh.positions, ch.mesh.positions)
    np.testing.assert_array_equal(back.mesh.weights, ch.mesh.weights)
    np.testing.assert_array_equal(back.mesh.materials[0].base_color_texture,
                                  ch.mesh.materials[0].base_color_texture)
    clip = back.clips[0]
    assert clip.n_frames == animik.read_bvh(bvh).n_frames and clip.meta["clip"] == bvh.stem
    # the animation moves the character (not its rest pose)
    z = forward_kinematics(back.skeleton, clip.q).joint_positions[:, 0]
    assert np.ptp(z[:, :2], axis=0).max() > 0.5


def _split_gltf(src: Path, folder: Path) -> Path:
    """``src`` (.glb) rewritten as a .gltf with its buffer and its images as files beside it."""
    import struct

    data = src.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    gltf = json.loads(data[20: 20 + n])
    blob = data[20 + n + 8:]
    for i, img in enumerate(gltf.get("images", [])):
        v = gltf["bufferViews"][img.pop("bufferView")]
        name = f"texture {i}.png"  # a space: the uri is percent-encoded
        (folder / name).write_bytes(blob[v.get("byteOffset", 0): v.get("byteOffset", 0) + v["byteLength"]])
        img["uri"] = name.replace(" ", "%20")
    (folder / "mesh.bin").write_bytes(blob)
    gltf["buffers"][0]["uri"] = "mesh.bin"
    out = folder / f"{src.stem}.gltf"
    out.write_text(json.dumps(gltf))
    return out


@needs_gltf
def test_cli_retarget_to_a_gltf_with_external_files_keeps_its_mesh(tmp_path):
    """A .gltf target whose buffer and texture are separate files: batch retargeting ships
    targets to its workers as bytes, so the files travel embedded (io.gltf.self_contained)."""
    from animik.cli import main
    from animik.io.gltf import self_contained

    bvh = ROOT.parent / "shared" / "data" / "bvh" / "bandai_namco" / "dataset-1_walk_normal_001.bvh"
    (tmp_path / "char").mkdir()
    target = _split_gltf(_path("CesiumMan"), tmp_path / "char")
    assert b"mesh.bin" in target.read_bytes() and b"mesh.bin" not in self_contained(target)
    rc = main(["retarget", str(bvh), "--to", str(target), "--out", str(tmp_path / "out"),
               "--format", "glb", "--quiet", "--jobs", "2"])
    assert rc == 0
    out = tmp_path / "out" / f"{bvh.stem}.glb"
    assert _errors(validate(out)) == []
    ch, back = animik.load_character(_path("CesiumMan")), animik.load_character(out)
    np.testing.assert_array_equal(back.mesh.positions, ch.mesh.positions)
    np.testing.assert_array_equal(back.mesh.weights, ch.mesh.weights)
    np.testing.assert_array_equal(back.mesh.materials[0].base_color_texture,
                                  ch.mesh.materials[0].base_color_texture)
    # the same motion as retargeting onto the .glb
    rc = main(["retarget", str(bvh), "--to", str(_path("CesiumMan")), "--out",
               str(tmp_path / "out2"), "--format", "glb", "--quiet"])
    assert rc == 0
    ref_clip = animik.load_character(tmp_path / "out2" / f"{bvh.stem}.glb").clips[0]
    np.testing.assert_allclose(back.clips[0].q, ref_clip.q, atol=1e-9)


def test_self_contained_refuses_files_outside_the_folder(tmp_path):
    from animik.errors import FileFormatError
    from animik.io.gltf import self_contained

    (tmp_path / "a").mkdir()
    (tmp_path / "secret.bin").write_bytes(b"x" * 16)
    gltf = {"asset": {"version": "2.0"}, "buffers": [{"uri": "../secret.bin", "byteLength": 16}]}
    p = tmp_path / "a" / "c.gltf"
    p.write_text(json.dumps(gltf))
    with pytest.raises(FileFormatError, match="outside the file's folder"):
        self_contained(p)
    gltf["buffers"][0]["uri"] = "gone.bin"
    p.write_text(json.dumps(gltf))
    with pytest.raises(FileNotFoundError, match="buffers"):
        self_contained(p)


def test_compressed_meshes_are_refused(tmp_path):
    import struct

    from animik.io.gltf import _glb_bytes

    data = _synthetic()
    n = struct.unpack_from("<I", data, 12)[0]
    gltf = json.loads(data[20: 20 + n])
    gltf["extensionsUsed"] = gltf["extensionsRequired"] = ["KHR_draco_mesh_compression"]
    with pytest.raises(animik.FileFormatError, match="compressed meshes"):
        animik.load_character(_write(_glb_bytes(gltf, data[20 + n + 8:]), tmp_path))


def test_auto_sites_include_fingertips_beyond_the_last_joint():
    from animik.semantics.roles import effector_sites

    full = load_rig("body95")
    bare = full.without_sites(full.site_names)
    sites = {s.name: s for s in effector_sites(bare)}
    assert set(sites) == set(full.site_names)  # the same 15 sites body95 ships with
    skel = bare.with_sites(sites.values())
    fk = forward_kinematics(skel, skel.rest_q)
    for side in "lr":
        tip = fk.site_positions[skel.site_index(f"{side}_index_tip")]
        dip = fk.joint_positions[skel.joint_index(f"{side}_index_dip")]
        pip = fk.joint_positions[skel.joint_index(f"{side}_index_pip")]
        np.testing.assert_allclose(tip - dip, 0.75 * (dip - pip), atol=1e-12)
        ref = forward_kinematics(full, full.rest_q).site_positions[full.site_index(f"{side}_index_tip")]
        assert np.linalg.norm(tip - ref) < 0.01  # within 1 cm of the hand-placed site


@needs_gltf
def test_gltf_with_external_buffer_and_image_loads_and_exports_embedded(tmp_path):
    import struct

    data = _path("CesiumMan").read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    gltf = json.loads(data[20: 20 + n])
    blob = data[20 + n + 8:]
    # the texture as a file beside the .gltf, the buffer as a .bin
    img = gltf["images"][0]
    view = gltf["bufferViews"][img.pop("bufferView")]
    (tmp_path / "tex.jpg").write_bytes(blob[view.get("byteOffset", 0):
                                            view.get("byteOffset", 0) + view["byteLength"]])
    img.pop("mimeType", None)
    img["uri"] = "tex.jpg"
    (tmp_path / "c.bin").write_bytes(blob)
    gltf["buffers"][0]["uri"] = "c.bin"
    (tmp_path / "c.gltf").write_text(json.dumps(gltf))
    ch = animik.load_character(tmp_path / "c.gltf")
    ref_ch = animik.load_character(_path("CesiumMan"))
    assert load_rig(tmp_path / "c.gltf").site_names == ref_ch.skeleton.site_names
    np.testing.assert_array_equal(ch.mesh.positions, ref_ch.mesh.positions)
    np.testing.assert_array_equal(ch.mesh.materials[0].base_color_texture,
                                  ref_ch.mesh.materials[0].base_color_texture)
    out = write_glb(ch.clips[0], tmp_path / "out.glb", mesh=ch)
    assert _errors(validate(out)) == []
    back = animik.load_character(out)  # a glb: buffer and image embedded
    np.testing.assert_array_equal(back.mesh.materials[0].base_color_texture,
                                  ref_ch.mesh.materials[0].base_color_texture)


def test_static_prop_gathers_every_mesh_node_at_its_world_transform(tmp_path):
    import struct

    from animik.io.gltf import _glb_bytes

    data = _synthetic(skin=False)
    n = struct.unpack_from("<I", data, 12)[0]
    gltf = json.loads(data[20: 20 + n])
    gltf["nodes"].append({"name": "copy", "mesh": 0, "translation": [1.0, 2.0, 3.0]})
    gltf["scenes"][0]["nodes"].append(len(gltf["nodes"]) - 1)
    gltf["materials"] = [{"name": "red", "pbrMetallicRoughness": {"baseColorFactor": [1, 0, 0, 1]}}]
    gltf["meshes"][0]["primitives"][0]["material"] = 0
    ch = animik.load_character(_write(_glb_bytes(gltf, data[20 + n + 8:]), tmp_path))
    m = ch.mesh
    assert m.n_vertices == 8 and m.n_faces == 4 and len(m.parts) == 2
    assert [p.material for p in m.parts] == [0, 0] and m.materials[0].base_color == (1, 0, 0, 1)
    # glTF (1, 2, 3) is animik (1, -3, 2) (Z up)
    np.testing.assert_allclose(m.positions[4:] - m.positions[:4], np.tile([1.0, -3.0, 2.0], (4, 1)),
                               atol=1e-6)
