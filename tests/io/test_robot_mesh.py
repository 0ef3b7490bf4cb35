"""Robot link meshes as a rigidly skinned Character, checked against MuJoCo's geom poses."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from animik.character import homogeneous, skin_matrices
from animik.io.robot_mesh import read_robot_character
from animik.io.robot_qpos import qpos_from_q
from animik.kinematics import forward_kinematics

mujoco = pytest.importorskip("mujoco")
cKDTree = pytest.importorskip("scipy.spatial").cKDTree

ROBOTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robots"
H1_XML = ROBOTS / "unitree_h1" / "h1.xml"
needs_robots = pytest.mark.skipif(not H1_XML.is_file(), reason="../shared/data/robots absent")


def _skin(mesh, skel, q):
    fk = forward_kinematics(skel, q)
    m = skin_matrices(mesh, homogeneous(fk.joint_rotations, fk.joint_positions))
    j = mesh.joints[:, 0].astype(int)  # rigid: one influence of weight 1
    v = mesh.positions.astype(float)
    return np.einsum("vij,vj->vi", m[j, :3, :3], v) + m[j, :3, 3]


def _mujoco_and_ours(path, max_triangles=None):
    ch = read_robot_character(path, max_triangles=max_triangles)
    skel, mesh = ch.skeleton, ch.mesh
    assert mesh is not None and ch.meta["warnings"] == ()
    np.testing.assert_array_equal(mesh.weights[:, 0], 1.0)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    q = np.clip(skel.rest_q + rng.uniform(-0.8, 0.8, skel.n_dof), skel.lower, skel.upper)
    data.qpos[:] = qpos_from_q(skel, q)
    mujoco.mj_kinematics(model, data)
    theirs = []
    for g in range(model.ngeom):
        if model.geom_type[g] != mujoco.mjtGeom.mjGEOM_MESH or model.geom_group[g] >= 3:
            continue
        mid = model.geom_dataid[g]
        a, n = model.mesh_vertadr[mid], model.mesh_vertnum[mid]
        v = model.mesh_vert[a:a + n].astype(float)
        theirs.append(v @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g])
    return mesh, _skin(mesh, skel, q), np.concatenate(theirs), fk_normals(mesh, skel, q)


def fk_normals(mesh, skel, q):
    fk = forward_kinematics(skel, q)
    m = skin_matrices(mesh, homogeneous(fk.joint_rotations, fk.joint_positions))
    return np.einsum("vij,vj->vi", m[mesh.joints[:, 0].astype(int), :3, :3],
                     mesh.normals.astype(float))


@needs_robots
def test_h1_meshes_follow_mujoco_geoms():
    _, ours, theirs, _ = _mujoco_and_ours(H1_XML)
    # every MuJoCo vertex has one of ours on it and vice versa (both store float32 vertices)
    assert cKDTree(ours).query(theirs)[0].max() < 2e-5
    assert cKDTree(theirs).query(ours)[0].max() < 2e-5


@needs_robots
@pytest.mark.parametrize("robot", ["unitree_h1/h1.xml", "unitree_g1/g1.xml"])
def test_display_budget_mesh_stays_on_mujoco_geoms(robot):
    """The display mesh (merged, decimated to 150k triangles, split at creases) stays on the
    robot's geoms, measured vertex to vertex against MuJoCo's (an upper bound of the distance to
    the surface: a vertex in the middle of a big flat triangle is far from every vertex).
    Measured (H1 / G1): ours to MuJoCo's p99 3.7 / 3.4 mm, max 2.7 / 1.8 cm; MuJoCo's to ours
    p99 6.4 / 7.3 mm, max 5.2 / 3.1 cm (flat regions lose their vertices). Normals unit."""
    budget = 150_000
    mesh, ours, theirs, normals = _mujoco_and_ours(ROBOTS / robot, budget)
    assert mesh.n_faces <= budget
    d_ours = cKDTree(theirs).query(ours)[0]
    d_theirs = cKDTree(ours).query(theirs)[0]
    assert np.percentile(d_ours, 99) < 5e-3 and d_ours.max() < 4e-2
    assert np.percentile(d_theirs, 99) < 1e-2 and d_theirs.max() < 7e-2
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-5)


@needs_robots
def test_missing_meshes_load_without_them(tmp_path):
    shutil.copy(H1_XML, tmp_path / "h1.xml")
    (tmp_path / "assets").mkdir()
    for f in sorted((H1_XML.parent / "assets").iterdir())[:3]:
        shutil.copy(f, tmp_path / "assets" / f.name)
    (tmp_path / "assets" / "pelvis.stl").write_bytes(b"not an stl at all")
    ch = read_robot_character(tmp_path / "h1.xml")
    assert ch.mesh is not None and ch.mesh.n_vertices > 0
    warnings = " ".join(ch.meta["warnings"])
    assert "torso_link.stl" in warnings and "not found" in warnings
    assert "pelvis.stl" in warnings and "could not be read" in warnings
    (tmp_path / "assets2").mkdir()
    empty = tmp_path / "bare.xml"
    empty.write_text((tmp_path / "h1.xml").read_text().replace('meshdir="assets"',
                                                               'meshdir="assets2"'))
    bare = read_robot_character(empty)
    assert bare.mesh is None and len(bare.meta["warnings"]) >= 20
