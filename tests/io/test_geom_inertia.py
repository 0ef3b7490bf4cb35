"""MJCF bodies without <inertial>: mass, centre of mass and inertia inferred from their geoms
exactly as MuJoCo's compiler does (body_mass, body_ipos, body_iquat / body_inertia)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from animik.io.mjcf_read import loads_mjcf_robot
from animik.rotations import matrix_from_quat

mujoco = pytest.importorskip("mujoco")

H1_ASSETS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robots" / \
    "unitree_h1" / "assets"

_XML = """<mujoco model="geoms"><compiler angle="radian" meshdir="{meshdir}" {compiler}/>
<asset>{asset}</asset>
<worldbody><body name="base" pos="0 0 1"><freejoint/>
  <geom type="box" size="0.1 0.2 0.05" pos="0.01 0.02 0.03" euler="0.3 -0.2 0.5"/>
  <geom type="sphere" size="0.07" pos="0 0.1 0" density="500" group="3"/>
  <body name="arm" pos="0 0.3 0"><joint name="j1" axis="0 1 0" range="-1 1"/>
    <geom type="capsule" fromto="0 0 0 0.1 0.05 -0.3" size="0.04"/>
    <geom type="cylinder" size="0.03 0.08" pos="0.05 0 -0.1" quat="0.9 0.1 0.3 0.2"
          mass="0.7"/>
    <body name="hand" pos="0.1 0.05 -0.3"><joint name="j2" axis="1 0 0" range="-1 1"/>
      <geom type="ellipsoid" size="0.05 0.03 0.02" pos="0 0 -0.02"/>
      <geom type="capsule" size="0.02 0.05" pos="0.02 0 0" euler="0 1.2 0"/>
      {mesh_geom}
    </body>
    <body name="given" pos="0 0 -0.4"><joint name="j3" axis="1 0 0"/>
      <inertial pos="0 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>
      <geom type="sphere" size="0.2"/>
    </body>
  </body>
</body></worldbody></mujoco>"""


def _check(xml: str, tmp_path: Path) -> None:
    f = tmp_path / "g.xml"
    f.write_text(xml)
    model = mujoco.MjModel.from_xml_path(str(f))
    skel = loads_mjcf_robot(xml.encode(), str(f), tmp_path)
    for b in range(1, model.nbody):
        name = model.body(b).name
        j = skel.joint_index(name)
        assert skel.masses[j] == pytest.approx(model.body_mass[b], rel=1e-9), name
        np.testing.assert_allclose(skel.coms[j], model.body_ipos[b], atol=1e-9, err_msg=name)
        R = matrix_from_quat(model.body_iquat[b])
        full = R @ np.diag(model.body_inertia[b]) @ R.T
        np.testing.assert_allclose(skel.inertias[j], full, atol=1e-9 * max(1.0, full.max()),
                                   rtol=1e-7, err_msg=name)


def test_primitive_geoms_give_mujocos_body_inertia(tmp_path):
    _check(_XML.format(meshdir=".", compiler="", asset="", mesh_geom=""), tmp_path)


def test_inertiafromgeom_true_overrides_a_given_inertial(tmp_path):
    _check(_XML.format(meshdir=".", compiler='inertiafromgeom="true"', asset="", mesh_geom=""),
           tmp_path)


@pytest.mark.skipif(not (H1_ASSETS / "pelvis.stl").is_file(),
                    reason="../shared/data/robots absent")
@pytest.mark.parametrize(("file", "mode"), [("pelvis.stl", "exact"),
                                            ("left_elbow_link.stl", "convex")])
def test_mesh_geom_gives_mujocos_body_inertia(tmp_path, file, mode):
    _check(_XML.format(meshdir=str(H1_ASSETS), compiler="",
                       asset=f'<mesh name="m" file="{file}" scale="1 1.5 1" inertia="{mode}"/>',
                       mesh_geom='<geom type="mesh" mesh="m" pos="0.01 0 0" euler="0 0 0.4"/>'),
           tmp_path)


@pytest.mark.skipif(not (H1_ASSETS / "pelvis.stl").is_file(),
                    reason="../shared/data/robots absent")
def test_legacy_mesh_inertia_is_warned(tmp_path):
    xml = _XML.format(meshdir=str(H1_ASSETS), compiler="",
                      asset='<mesh name="m" file="pelvis.stl"/>',
                      mesh_geom='<geom type="mesh" mesh="m"/>')
    skel = loads_mjcf_robot(xml.encode(), "g.xml", tmp_path)
    assert any("legacy mesh inertia" in w for w in skel.meta["warnings"])
    assert skel.masses[skel.joint_index("hand")] > 0
