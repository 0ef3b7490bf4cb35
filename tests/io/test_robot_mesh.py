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


@needs_robots
def test_h1_meshes_follow_mujoco_geoms():
    ch = read_robot_character(H1_XML)
    skel, mesh = ch.skeleton, ch.mesh
    assert mesh is not None and ch.meta["warnings"] == ()
    np.testing.assert_array_equal(mesh.weights[:, 0], 1.0)
    model = mujoco.MjModel.from_xml_path(str(H1_XML))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    q = np.clip(skel.rest_q + rng.uniform(-0.8, 0.8, skel.n_dof), skel.lower, skel.upper)
    data.qpos[:] = qpos_from_q(skel, q)
    mujoco.mj_kinematics(model, data)
    ours = _skin(mesh, skel, q)
    theirs = []
    for g in range(model.ngeom):
        if model.geom_type[g] != mujoco.mjtGeom.mjGEOM_MESH or model.geom_group[g] >= 3:
            continue
        mid = model.geom_dataid[g]
        a, n = model.mesh_vertadr[mid], model.mesh_vertnum[mid]
        v = model.mesh_vert[a:a + n].astype(float)
        theirs.append(v @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g])
    theirs = np.concatenate(theirs)
    # every MuJoCo vertex has one of ours on it and vice versa (both store float32 vertices)
    assert cKDTree(ours).query(theirs)[0].max() < 2e-5
    assert cKDTree(theirs).query(ours)[0].max() < 2e-5


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
