"""Primitive geoms of robot files (MJCF sphere / ellipsoid / box / cylinder / capsule, URDF box /
sphere / cylinder) drawn as mesh parts: every vertex on the primitive's surface where MuJoCo
places that geom (geom_xpos / geom_xmat / geom_size) on a random configuration."""

from __future__ import annotations

import numpy as np
import pytest

from animik.character import homogeneous, skin_matrices
from animik.io.robot_mesh import read_robot_character
from animik.io.robot_qpos import qpos_from_q
from animik.kinematics import forward_kinematics

mujoco = pytest.importorskip("mujoco")

_XML = """<mujoco model="prims"><compiler angle="radian"/>
<worldbody><body name="base" pos="0 0 1"><freejoint/>
  <geom type="box" size="0.1 0.2 0.05" pos="0.01 0.02 0.03" euler="0.3 -0.2 0.5" rgba="1 0 0 1"/>
  <geom type="sphere" size="0.07" pos="0 0.1 0" rgba="0 1 0 1"/>
  <geom type="sphere" size="0.5" group="3" rgba="0 0 0 1"/>
  <body name="arm" pos="0 0.3 0"><joint name="j1" axis="0 1 0" range="-1 1"/>
    <geom type="capsule" fromto="0 0 0 0.1 0.05 -0.3" size="0.04" rgba="0 0 1 1"/>
    <geom type="cylinder" size="0.03 0.08" pos="0.05 0 -0.1" quat="0.9 0.1 0.3 0.2"
          rgba="1 1 0 1"/>
    <body name="hand" pos="0.1 0.05 -0.3"><joint name="j2" axis="1 0 0" range="-1 1"/>
      <geom type="ellipsoid" size="0.05 0.03 0.02" pos="0 0 -0.02" rgba="0 1 1 1"/>
    </body>
  </body>
</body></worldbody></mujoco>"""


def _surface_residual(kind, size, p):
    """0 on the primitive's surface (p in the geom frame; half sizes), in metres (roughly)."""
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return np.linalg.norm(p, axis=1) - size[0]
    if kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        return (np.linalg.norm(p / size, axis=1) - 1.0) * size.min()
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        return np.max(np.abs(p) - size, axis=1)
    if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return np.maximum(np.linalg.norm(p[:, :2], axis=1) - size[0], np.abs(p[:, 2]) - size[1])
    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        z = np.clip(p[:, 2], -size[1], size[1])
        return np.linalg.norm(p - np.stack([0 * z, 0 * z, z], axis=1), axis=1) - size[0]
    raise AssertionError(kind)


def test_primitives_are_drawn_on_mujocos_geoms(tmp_path):
    f = tmp_path / "prims.xml"
    f.write_text(_XML)
    ch = read_robot_character(f)
    mesh, skel = ch.mesh, ch.skeleton
    assert mesh is not None
    model = mujoco.MjModel.from_xml_path(str(f))
    data = mujoco.MjData(model)
    q = np.clip(skel.rest_q + np.random.default_rng(1).uniform(-0.8, 0.8, skel.n_dof),
                skel.lower, skel.upper)
    data.qpos[:] = qpos_from_q(skel, q)
    mujoco.mj_kinematics(model, data)
    fk = forward_kinematics(skel, q)
    m = skin_matrices(mesh, homogeneous(fk.joint_rotations, fk.joint_positions))
    j = mesh.joints[:, 0].astype(int)
    v = np.einsum("vij,vj->vi", m[j, :3, :3], mesh.positions.astype(float)) + m[j, :3, 3]
    colours = {tuple(np.round(mat.base_color[:3], 3)): k for k, mat in enumerate(mesh.materials)}
    drawn = 0
    for g in range(model.ngeom):
        key = tuple(np.round(model.geom_rgba[g][:3], 3))
        if model.geom_group[g] >= 3:
            assert key not in colours  # collision geoms are not drawn
            continue
        part = [p for p in mesh.parts if p.material == colours[key]]
        assert len(part) == 1
        idx = np.unique(mesh.faces[part[0].start:part[0].start + part[0].count])
        local = (v[idx] - data.geom_xpos[g]) @ data.geom_xmat[g].reshape(3, 3)
        res = _surface_residual(model.geom_type[g], model.geom_size[g], local)
        assert np.abs(res).max() < 1e-6, model.geom_type[g]
        drawn += 1
    assert drawn == 5


def test_urdf_primitive_visuals(tmp_path):
    f = tmp_path / "r.urdf"
    f.write_text("""<robot name="r"><link name="base"><inertial><mass value="1"/>
<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
<visual><origin xyz="0 0 0.1"/><geometry><box size="0.2 0.4 0.1"/></geometry></visual>
<visual><geometry><cylinder radius="0.05" length="0.3"/></geometry></visual>
<visual><geometry><sphere radius="0.02"/></geometry></visual></link></robot>""")
    ch = read_robot_character(f, floating=False)
    assert ch.mesh is not None
    p = ch.mesh.positions
    # the box spans 0.2 x 0.4 around (0, 0, 0.1); the cylinder reaches z = ±0.15
    assert p[:, 1].max() == pytest.approx(0.2) and p[:, 2].min() == pytest.approx(-0.15)
