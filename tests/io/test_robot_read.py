"""URDF / MJCF readers checked against MuJoCo and pinocchio loading the same files.

Body and site poses on random configurations must equal MuJoCo's ``mj_kinematics`` (MJCF, and
URDF with a welded root) and pinocchio's ``framesForwardKinematics`` (URDF with a free-flyer
root) to 1e-9; the DoF order must be the model's own; inverse dynamics must equal MuJoCo's
``mj_inverse``; ``qpos_from_q`` / ``q_from_qpos`` must follow MuJoCo's qpos layout.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import animik
from animik.dynamics.inverse import inverse_dynamics
from animik.io.mjcf import write_mjcf
from animik.io.mjcf_read import loads_mjcf_robot, read_mjcf_robot
from animik.io.robot_model import RobotFileError
from animik.io.robot_qpos import q_from_qpos, qpos_from_q, qpos_names
from animik.io.urdf import write_urdf
from animik.io.urdf_read import loads_urdf_robot, read_urdf_robot
from animik.kinematics import forward_kinematics

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")

TOL = 1e-9
ROBOTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robots"
G1_XML = ROBOTS / "unitree_g1" / "g1.xml"
H1_XML = ROBOTS / "unitree_h1" / "h1.xml"
G1_URDF = ROBOTS / "unitree_g1" / "urdf" / "g1_29dof_rev_1_0.urdf"
H1_URDF = ROBOTS / "unitree_h1" / "urdf" / "h1.urdf"
needs_robots = pytest.mark.skipif(not ROBOTS.is_dir(),
                                  reason="../shared/data/robots not present (developer data)")


def _random_qpos(model, rng) -> np.ndarray:
    qpos = model.qpos0.copy()
    for j in range(model.njnt):
        a = model.jnt_qposadr[j]
        t = model.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] = rng.normal(size=3)
            qq = rng.normal(size=4)
            qpos[a + 3:a + 7] = qq / np.linalg.norm(qq)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            qq = rng.normal(size=4)
            qpos[a:a + 4] = qq / np.linalg.norm(qq)
        else:
            lo, hi = model.jnt_range[j] if model.jnt_limited[j] else (-3.0, 3.0)
            qpos[a] = rng.uniform(lo, hi)
    return qpos


def _compare_mujoco(skel, model, seeds=range(6)) -> None:
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    for _ in seeds:
        qpos = _random_qpos(model, rng)
        data.qpos[:] = qpos
        mujoco.mj_kinematics(model, data)
        fk = forward_kinematics(skel, q_from_qpos(skel, qpos))
        for b in range(1, model.nbody):
            j = skel.joint_index(model.body(b).name)
            np.testing.assert_allclose(fk.joint_positions[j], data.xpos[b], atol=TOL, rtol=0)
            np.testing.assert_allclose(fk.joint_rotations[j], data.xmat[b].reshape(3, 3),
                                       atol=TOL, rtol=0)
        for s in range(model.nsite):
            k = skel.site_index(model.site(s).name)
            np.testing.assert_allclose(fk.site_positions[k], data.site_xpos[s], atol=TOL, rtol=0)
            np.testing.assert_allclose(fk.site_rotations[k], data.site_xmat[s].reshape(3, 3),
                                       atol=TOL, rtol=0)


def _same_qpos(a: np.ndarray, b: np.ndarray, skel) -> None:
    """qpos equal up to each quaternion's sign."""
    a, b = np.array(a), np.array(b)
    i = 0
    for _, kind, _ in skel.meta["qpos_layout"]:
        n = {"free": 7, "ball": 4}.get(kind, 1)
        if kind in ("free", "ball"):
            qa, qb = a[..., i + n - 4:i + n], b[..., i + n - 4:i + n]
            sign = np.sign(np.sum(qa * qb, axis=-1, keepdims=True))
            a[..., i + n - 4:i + n] = qa * sign
        i += n
    np.testing.assert_allclose(a, b, atol=1e-12)


@needs_robots
@pytest.mark.parametrize("path", [G1_XML, H1_XML], ids=["g1", "h1"])
def test_mjcf_matches_mujoco(path):
    skel = read_mjcf_robot(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    assert skel.meta["nq"] == model.nq and skel.n_dof == model.nv
    # names: bodies are joints, joints are DoFs (free joint: 6 suffixed DoFs), in MuJoCo's order
    assert skel.joint_names == tuple(model.body(b).name for b in range(1, model.nbody))
    hinges = [model.joint(j).name for j in range(model.njnt)
              if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    assert skel.dof_names[6:] == tuple(hinges)
    _compare_mujoco(skel, model)
    np.testing.assert_allclose(skel.rest_q, q_from_qpos(skel, model.qpos0), atol=1e-12)
    for j in range(model.njnt):
        if model.jnt_limited[j]:
            k = skel.dof_index(model.joint(j).name)
            np.testing.assert_allclose([skel.lower[k], skel.upper[k]], model.jnt_range[j])


@needs_robots
@pytest.mark.parametrize("path", [G1_XML, H1_XML], ids=["g1", "h1"])
def test_qpos_round_trip_matches_mujoco_layout(path):
    skel = read_mjcf_robot(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    rng = np.random.default_rng(3)
    qpos = np.stack([_random_qpos(model, rng) for _ in range(7)]).reshape(7, model.nq)
    q = q_from_qpos(skel, qpos)
    assert q.shape == (7, skel.n_dof)
    _same_qpos(qpos_from_q(skel, q), qpos, skel)
    # batched equals one by one
    for t in range(7):
        np.testing.assert_array_equal(q_from_qpos(skel, qpos[t]), q[t])
    # the free joint's qpos is position + wxyz quaternion of the pelvis, as MuJoCo's
    data = mujoco.MjData(model)
    data.qpos[:] = qpos_from_q(skel, q[2])
    mujoco.mj_kinematics(model, data)
    np.testing.assert_allclose(data.xquat[1] * np.sign(data.xquat[1][0]),
                               qpos_from_q(skel, q[2])[3:7] * np.sign(qpos_from_q(skel, q[2])[3]),
                               atol=1e-12)
    assert len(qpos_names(skel)) == model.nq
    with pytest.raises(animik.ShapeError, match=str(model.nq)):
        q_from_qpos(skel, np.zeros(model.nq + 1))


@needs_robots
@pytest.mark.parametrize("path", [G1_XML, H1_XML], ids=["g1", "h1"])
def test_inverse_dynamics_matches_mj_inverse(path):
    skel = read_mjcf_robot(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    model.dof_armature[:] = 0.0
    model.dof_damping[:] = 0.0
    model.dof_frictionloss[:] = 0.0
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    data = mujoco.MjData(model)
    rng = np.random.default_rng(1)
    np.testing.assert_allclose(skel.masses.sum(), model.body_mass.sum(), rtol=1e-12)
    for _ in range(4):
        qpos = _random_qpos(model, rng)
        # base angular velocity / acceleration zero: MuJoCo's free joint rotates about body
        # axes, animik's root about Z-Y-X Euler axes; translations and hinges are the same DoFs.
        qvel, qacc = rng.normal(size=model.nv), rng.normal(size=model.nv)
        qvel[3:6] = 0.0
        qacc[3:6] = 0.0
        data.qpos[:], data.qvel[:], data.qacc[:] = qpos, qvel, qacc
        mujoco.mj_inverse(model, data)
        tau = inverse_dynamics(skel, q_from_qpos(skel, qpos), qvel, qacc,
                               gravity=model.opt.gravity)
        np.testing.assert_allclose(tau[6:], data.qfrc_inverse[6:], atol=1e-8)
        np.testing.assert_allclose(tau[:3], data.qfrc_inverse[:3], atol=1e-8)


def _pin_compare(skel, model) -> None:
    data = model.createData()
    rng = np.random.default_rng(2)
    for _ in range(6):
        qpin = pin.randomConfiguration(model, -2 * np.ones(model.nq), 2 * np.ones(model.nq))
        qpin[:3] = rng.normal(size=3)
        qq = rng.normal(size=4)
        qpin[3:7] = qq / np.linalg.norm(qq)  # pinocchio: x y z, qx qy qz qw
        qpos = np.concatenate([qpin[:3], [qpin[6]], qpin[3:6], qpin[7:]])
        fk = forward_kinematics(skel, q_from_qpos(skel, qpos))
        pin.framesForwardKinematics(model, data, qpin)
        n = 0
        for i, f in enumerate(model.frames):
            if f.type != pin.FrameType.BODY:
                continue
            if f.name in skel.joint_names:
                j = skel.joint_index(f.name)
                p, r = fk.joint_positions[j], fk.joint_rotations[j]
            else:  # a link folded by a fixed joint: a site named by the link
                s = skel.site_index(f.name)
                p, r = fk.site_positions[s], fk.site_rotations[s]
            np.testing.assert_allclose(p, data.oMf[i].translation, atol=TOL, rtol=0)
            np.testing.assert_allclose(r, data.oMf[i].rotation, atol=TOL, rtol=0)
            n += 1
        assert n == skel.n_joints + sum(1 for f in model.frames if f.type == pin.FrameType.BODY
                                        and f.name not in skel.joint_names)


def _strip_geometry(src: Path, dst: Path) -> Path:
    """A copy of a URDF without visual / collision elements (MuJoCo needs their meshes)."""
    root = ET.parse(src).getroot()
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    ET.ElementTree(root).write(dst)
    return dst


@needs_robots
@pytest.mark.parametrize("path", [G1_URDF, H1_URDF], ids=["g1", "h1"])
def test_urdf_matches_pinocchio_and_mujoco(path, tmp_path):
    skel = read_urdf_robot(path)
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert skel.dof_names[6:] == tuple(model.names[2:])  # pinocchio's joint order
    assert skel.meta["nq"] == model.nq
    _pin_compare(skel, model)
    # masses and inertias (fixed links merged into their parent): pinocchio's RNEA
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    np.testing.assert_allclose(sum(pm.inertias[i].mass for i in range(pm.njoints)),
                               skel.masses.sum(), rtol=1e-12)
    data = pm.createData()
    rng = np.random.default_rng(5)
    qpin = pin.neutral(pm)
    qpin[7:] = rng.uniform(-0.5, 0.5, size=pm.nq - 7)
    v, a = np.zeros(pm.nv), np.zeros(pm.nv)
    v[6:], a[6:] = rng.normal(size=pm.nv - 6), rng.normal(size=pm.nv - 6)
    v[:3], a[:3] = rng.normal(size=3), rng.normal(size=3)
    tau_pin = pin.rnea(pm, data, qpin, v, a)
    qpos = np.concatenate([qpin[:3], [qpin[6]], qpin[3:6], qpin[7:]])
    tau = inverse_dynamics(skel, q_from_qpos(skel, qpos), v, a, gravity=[0, 0, -9.81])
    np.testing.assert_allclose(tau[6:], tau_pin[6:], atol=1e-8)
    np.testing.assert_allclose(tau[:3], tau_pin[:3], atol=1e-8)  # root at identity: same axes
    # MuJoCo loads a URDF with the root welded to the world and fixed links fused
    fixed = read_urdf_robot(path, floating=False)
    mj = mujoco.MjModel.from_xml_path(str(_strip_geometry(path, tmp_path / "robot.urdf")))
    assert fixed.n_dof == mj.nq
    _compare_mujoco(fixed, mj, seeds=range(4))


@pytest.mark.parametrize("rig", list(animik.rigs.BUILTIN_RIGS))
def test_exported_builtin_rigs_read_back(rig, tmp_path):
    """animik's own URDF / MJCF of every built-in rig, read back, equals MuJoCo / pinocchio on
    those files and the original rig's site poses."""
    orig = animik.load_rig(rig)
    xml = write_mjcf(orig, tmp_path / f"{rig}.xml")
    skel = read_mjcf_robot(xml)
    model = mujoco.MjModel.from_xml_path(str(xml))
    _compare_mujoco(skel, model, range(3))
    rng = np.random.default_rng(7)
    q = orig.rest_q + rng.uniform(-0.4, 0.4, orig.n_dof)
    q = np.clip(q, orig.lower, orig.upper)
    a, b = forward_kinematics(orig, q), forward_kinematics(skel, q_from_qpos(skel, q))
    order = [skel.site_index(n) for n in orig.site_names]
    np.testing.assert_allclose(b.site_positions[order], a.site_positions, atol=TOL)
    urdf = write_urdf(orig, tmp_path / f"{rig}.urdf")
    us = read_urdf_robot(urdf, floating=False)
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    for _ in range(3):
        qp = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        pin.framesForwardKinematics(model, data, qp)
        fk = forward_kinematics(us, q_from_qpos(us, qp))
        for i, f in enumerate(model.frames):
            if f.type != pin.FrameType.BODY or f.name == "universe":
                continue
            if f.name == "world" and "world" not in us.joint_names:  # the world link itself
                np.testing.assert_allclose(data.oMf[i].translation, 0.0, atol=TOL)
                continue
            if f.name in us.joint_names:
                p = fk.joint_positions[us.joint_index(f.name)]
            else:
                p = fk.site_positions[us.site_index(f.name)]
            np.testing.assert_allclose(p, data.oMf[i].translation, atol=TOL, rtol=0)


@needs_robots
def test_load_rig_reads_robots_with_effector_sites():
    from animik.retarget.mapping import build_mapping

    for path in (G1_XML, H1_XML, G1_URDF, H1_URDF):
        skel = animik.load_rig(path)
        head = "head"
        for site in ("pelvis", "l_hand", "r_hand", head, "l_foot", "r_foot"):
            assert site in skel.site_names, (path, site)
        # standing: the feet on the floor at rest (URDF robots are raised onto it), the foot
        # sites ahead of the ankles (the foot's bone direction), the head above the hands
        fk = forward_kinematics(skel, skel.rest_q)
        p = {n: fk.site_positions[skel.site_index(n)] for n in skel.site_names}
        assert all(-0.01 <= p[f][2] < 0.05 for f in ("l_foot", "r_foot")), path
        ankle = fk.joint_positions[skel.site_joint[skel.site_index("l_foot")]]
        assert p["l_foot"][0] > ankle[0] + 0.02
        assert p[head][2] > p["l_hand"][2] > 0.5
        assert p["l_hand"][1] > 0.1 > -0.1 > p["r_hand"][1]
        # the retarget mapping uses these sites as its effectors
        effectors = build_mapping(animik.load_rig("body95"), skel).effectors
        assert set(effectors) == {"l_hand", "r_hand", "l_foot", "r_foot", head}, path
        # the file's own sites are kept, with their poses (checked against MuJoCo above)
        if path == G1_XML:
            assert {"left_foot", "right_foot", "imu_in_pelvis"} <= set(skel.site_names)
    # meshes found: sole corner sites from the foot meshes, level with the ball of the foot
    g1 = animik.load_rig(G1_XML)
    fk = forward_kinematics(g1, g1.rest_q)
    z = [fk.site_positions[g1.site_index(n)][2] for n in ("l_sole_back", "l_sole_front", "l_foot")]
    np.testing.assert_allclose(z, z[2], atol=1e-9)


@needs_robots
def test_site_override_file(tmp_path):
    import shutil

    dst = tmp_path / "h1.xml"
    shutil.copy(H1_XML, dst)
    (tmp_path / "h1.sites.toml").write_text(
        '[l_hand]\njoint = "left_elbow_link"\noffset = [0.3, 0.0, 0.0]\n[head]\njoint = ""\n')
    skel = animik.load_rig(dst)
    k = skel.site_index("l_hand")
    assert skel.joint_names[skel.site_joint[k]] == "left_elbow_link"
    np.testing.assert_allclose(skel.site_offsets[k], [0.3, 0.0, 0.0])
    assert "head" not in skel.site_names
    (tmp_path / "h1.sites.toml").write_text('[l_hand]\njoint = "nope"\n')
    with pytest.raises(animik.UnknownNameError, match="nope"):
        animik.load_rig(dst)


# ----------------------------------------------------------------------------- bad input
_MINI = """<mujoco><worldbody><body name="a"><freejoint/><inertial pos="0 0 0" mass="1"
 diaginertia="1 1 1"/><body name="b" pos="0 0 1"><joint name="j" axis="0 1 0" range="-1 1"/>
 <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{extra_body}</body></body></worldbody>
 {extra}</mujoco>"""


def _mini(extra: str = "", extra_body: str = "") -> bytes:
    return _MINI.format(extra=extra, extra_body=extra_body).encode()


def test_mjcf_bad_input():
    skel = loads_mjcf_robot(_mini())
    assert skel.dof_names[-1] == "j"
    with pytest.raises(RobotFileError, match="malformed XML"):
        loads_mjcf_robot(b"<mujoco><worldbody>")
    with pytest.raises(RobotFileError, match="not an MJCF"):
        loads_mjcf_robot(b"<robot/>")
    with pytest.raises(RobotFileError, match="equality.*connect"):
        loads_mjcf_robot(_mini('<equality><connect body1="a" body2="b" anchor="0 0 0"/>'
                               '</equality>'))
    tendon = loads_mjcf_robot(_mini('<tendon><fixed name="t"><joint joint="j" coef="1"/>'
                                    '</fixed></tendon>'))
    assert any("tendon" in w for w in tendon.meta["warnings"])
    with pytest.raises(RobotFileError, match="off the body origin"):
        loads_mjcf_robot(_mini(extra_body='<body name="c"><joint name="k" pos="0 0 0.1"/>'
                                          '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
                                          '</body>'))
    with pytest.raises(RobotFileError, match="replicate.*not supported"):
        loads_mjcf_robot(_mini(extra_body='<replicate count="2" offset="0 0 1"><body name="r">'
                                          '</body></replicate>'))
    with pytest.raises(RobotFileError, match="include"):
        loads_mjcf_robot(b'<mujoco><include file="x.xml"/></mujoco>')
    with pytest.raises(RobotFileError, match="numbers"):
        loads_mjcf_robot(_mini(extra_body='<site name="s" pos="0 zero 0"/>'))
    missing = loads_mjcf_robot(
        _mini('<asset><mesh file="nowhere.stl"/></asset>',
              '<geom type="mesh" mesh="nowhere"/>'), folder=Path("/nonexistent"))
    assert any("nowhere.stl" in w and "not found" in w for w in missing.meta["warnings"])
    # degrees by default (MuJoCo's compiler default)
    deg = loads_mjcf_robot(b'<mujoco><worldbody><body name="a"><joint name="h" range="-90 45"/>'
                           b'<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>'
                           b'</worldbody></mujoco>')
    np.testing.assert_allclose([deg.lower[0], deg.upper[0]], np.deg2rad([-90, 45]))


_URDF = """<robot name="r"><link name="base"/><link name="l1"><inertial><mass value="1"/>
<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
<visual><geometry><mesh filename="package://nopkg/meshes/l1.stl"/></geometry></visual></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>{extra}</robot>"""


def test_urdf_bad_input():
    skel = loads_urdf_robot(_URDF.format(extra="").encode(), "r.urdf", Path("/nonexistent"))
    assert any("package://nopkg" in w and "ROS_PACKAGE_PATH" in w
               for w in skel.meta["warnings"])
    with pytest.raises(RobotFileError, match="closed kinematic loop"):
        loads_urdf_robot(_URDF.format(extra='<link name="l2"/><joint name="j2" type="fixed">'
                                            '<parent link="base"/><child link="l2"/></joint>'
                                            '<joint name="j3" type="fixed"><parent link="l1"/>'
                                            '<child link="l2"/></joint>').encode())
    with pytest.raises(RobotFileError, match="exactly one root"):
        loads_urdf_robot(_URDF.format(extra='<link name="lonely"/>').encode())
    with pytest.raises(RobotFileError, match="planar"):
        loads_urdf_robot(_URDF.format(extra='<link name="l2"/><joint name="j2" type="planar">'
                                            '<parent link="l1"/><child link="l2"/></joint>'
                                            ).encode())
    with pytest.raises(RobotFileError, match="unknown child link"):
        loads_urdf_robot(_URDF.format(extra='<joint name="j2" type="fixed"><parent link="l1"/>'
                                            '<child link="ghost"/></joint>').encode())
    with pytest.raises(RobotFileError, match="malformed XML"):
        loads_urdf_robot(b"<robot><link name='a'>")
    mimic = loads_urdf_robot(_URDF.format(extra='<link name="l2"/><joint name="j2" '
                                                'type="continuous"><parent link="l1"/><child '
                                                'link="l2"/><mimic joint="j1"/></joint>').encode())
    assert any("mimic" in w for w in mimic.meta["warnings"])
    assert np.isinf(mimic.upper[mimic.dof_index("j2")])
    # a file with its own floating joint gets no second one
    own = loads_urdf_robot(b'<robot name="f"><link name="world"/><link name="base"><inertial>'
                           b'<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" '
                           b'izz="1"/></inertial></link><joint name="float" type="floating">'
                           b'<parent link="world"/><child link="base"/></joint></robot>')
    assert own.dof_names == tuple(f"float_{s}" for s in ("tx", "ty", "tz", "rz", "ry", "rx"))


def test_cli_reports_bad_robot_file(tmp_path, capsys):
    from animik.cli import main

    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot><link name='a'>")
    assert main(["retarget", str(bad), "--to", str(bad), "--out", str(tmp_path / "o")]) == 3
    err = capsys.readouterr().err
    assert "malformed XML" in err and "Traceback" not in err
