"""Human motion onto robots: `animik retarget --to robot.xml --format npz|csv`, replayed in
MuJoCo (limits, no foot below the floor, feet planted, end-effector paths), and fidelity against
the source itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_BVH

import animik
from animik.cli import main
from animik.kinematics import forward_kinematics
from animik.retarget import Retargeter
from animik.retarget.fidelity import clip_fidelity
from animik.retarget.floor import lift_above_floor
from animik.retarget.output import encode_clip

mujoco = pytest.importorskip("mujoco")

ROBOTS = SHARED_BVH.parent / "robots"
G1 = ROBOTS / "unitree_g1" / "g1.xml"
H1_URDF = ROBOTS / "unitree_h1" / "urdf" / "h1.urdf"
WALK = SHARED_BVH / "bandai_namco" / "dataset-1_walk_normal_001.bvh"
needs_data = pytest.mark.skipif(not (G1.is_file() and WALK.is_file()),
                                reason="../shared/data (robots, bvh) not present")


@needs_data
def test_retarget_cli_npz_replays_in_mujoco(tmp_path):
    out = tmp_path / "out"
    assert main(["retarget", str(WALK), "--to", str(G1), "--out", str(out), "--format", "npz",
                 "-q"]) == 0
    data = np.load(out / (WALK.stem + ".npz"))
    model = mujoco.MjModel.from_xml_path(str(G1))
    qpos = data["qpos"]
    assert qpos.shape[1] == model.nq and float(data["fps"]) == pytest.approx(30.0, rel=1e-4)
    assert list(data["joint_names"]) == [model.joint(j).name for j in range(model.njnt)]
    np.testing.assert_allclose(np.linalg.norm(qpos[:, 3:7], axis=1), 1.0, atol=1e-12)
    d = mujoco.MjData(model)
    skel = animik.load_rig(G1)
    fk = forward_kinematics(skel, data["q"])
    spheres = [g for g in range(model.ngeom) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
    lowest, hand = [], []
    for t, qp in enumerate(qpos):
        d.qpos[:] = qp
        mujoco.mj_kinematics(model, d)
        # limits: every hinge within its range
        for j in range(1, model.njnt):
            a = model.jnt_qposadr[j]
            lo, hi = model.jnt_range[j]
            assert lo - 1e-9 <= qp[a] <= hi + 1e-9, model.joint(j).name
        # no foot below the floor: the G1's sole spheres (collision geoms) stay above z = 0
        lowest.append(min(d.geom_xpos[g][2] - model.geom_size[g][0] for g in spheres))
        # end-effector paths: MuJoCo's wrist body and foot site follow animik's FK of q
        b = model.body("left_wrist_yaw_link").id
        np.testing.assert_allclose(d.xpos[b], fk.joint_positions[t, skel.joint_index(
            "left_wrist_yaw_link")], atol=1e-9)
        np.testing.assert_allclose(d.site_xpos[model.site("left_foot").id],
                                   fk.site_positions[t, skel.site_index("left_foot")], atol=1e-9)
        hand.append(d.xpos[b].copy())
    assert min(lowest) > -0.003  # the mesh sole vs MuJoCo's 5 mm foot spheres
    # the walk moves forward (the pelvis path) and the hands swing
    assert np.ptp(qpos[:, 0]) + np.ptp(qpos[:, 1]) > 0.5
    assert np.ptp(np.array(hand), axis=0).max() > 0.05
    # feet planted: while a foot is down (its lowest third of heights) it hardly slides
    for site in ("l_foot", "r_foot"):
        p = fk.site_positions[:, skel.site_index(site)]
        down = p[:, 2] < np.percentile(p[:, 2], 33) + 0.003
        step = np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1)
        both = down[1:] & down[:-1]
        assert both.sum() > 20
        assert np.median(step[both]) < 0.005


@needs_data
def test_csv_and_urdf_target(tmp_path):
    m = animik.read_bvh(WALK)
    motion = m.replace(q=np.asarray(m.q)[:20])
    skel = animik.load_rig(H1_URDF)  # the URDF has no meshes here: sites from the inertias
    res = Retargeter(motion, skel).run()
    data, extra = encode_clip(res.motion, "csv")
    lines = data.decode().splitlines()
    assert lines[0].startswith("# fps=") and f"nq={extra['nq']}" in lines[0]
    header = lines[1].split(",")
    assert header[:8] == ["time", "floating_base_joint_x", "floating_base_joint_y",
                          "floating_base_joint_z", "floating_base_joint_qw",
                          "floating_base_joint_qx", "floating_base_joint_qy",
                          "floating_base_joint_qz"]
    table = np.loadtxt(lines[2:], delimiter=",")
    assert table.shape == (20, 1 + extra["nq"])
    np.testing.assert_allclose(animik.q_from_qpos(skel, table[:, 1:]), res.motion.q, atol=1e-9)
    with pytest.raises(animik.OptionError, match="bvh, glb, npz, csv"):
        encode_clip(res.motion, "fbx")


@needs_data
def test_fidelity_against_the_source():
    motion = animik.read_bvh(WALK)
    skel = animik.load_rig(G1)
    rt = Retargeter(motion, skel)
    res = rt.run()
    result, lift = lift_above_floor(res.motion)
    assert 0.0 <= lift < 0.1
    fid = clip_fidelity(motion, result, rt.alignment.scale)
    assert fid.points == ("l_hand", "r_hand", "l_foot", "r_foot", "head")
    assert fid.flexions == ("l_elbow", "r_elbow", "l_knee", "r_knee")
    assert fid.relative.shape == (motion.n_frames, 5) and fid.angle.shape == (motion.n_frames, 4)
    # the source retargeted onto itself is exact: the measure has no floor of its own
    self_fid = clip_fidelity(motion, motion, 1.0)
    np.testing.assert_allclose(self_fid.relative, 0.0, atol=1e-12)
    np.testing.assert_allclose(self_fid.world, 0.0, atol=1e-12)
    np.testing.assert_allclose(self_fid.angle, 0.0, atol=1e-6)
    # on the robot: elbows and knees follow the source's flexion within a few degrees on
    # average (a robot's proportions differ, so positions are cm off, not mm)
    s = fid.summary()
    assert s["elbow_deg"] < 10.0 and s["knee_deg"] < 15.0
    assert s["hand_rel_cm"] < 20.0 and s["foot_rel_cm"] < 20.0


def test_lift_above_floor_is_exact():
    skel = animik.load_rig("body95")
    q = np.tile(skel.rest_q, (3, 1))
    k = skel.dof_index(skel.dof_names[2])
    q[1, k] -= 0.05  # sink frame 1 by 5 cm
    motion = animik.Motion(skel, q, 30.0)
    feet = [n for n in skel.site_names if "foot" in n.lower() or "toe" in n.lower()]
    z0 = forward_kinematics(skel, skel.rest_q).site_positions[
        [skel.site_index(n) for n in feet], 2].min()
    lifted, lift = lift_above_floor(motion, feet, floor=z0)
    assert lift == pytest.approx(0.05, abs=1e-9)
    np.testing.assert_allclose(lifted.q, np.tile(skel.rest_q, (3, 1)), atol=1e-12)
    same, none = lift_above_floor(motion, feet, floor=z0 - 1.0)
    assert none == 0.0 and same is motion


def test_cli_rejects_bad_format(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["retarget", "x.bvh", "--to", "fig2", "--out", str(tmp_path), "--format", "fbx"])
    assert e.value.code == 2


def test_exported_rig_round_trip_path(tmp_path):
    """A built-in rig written as MJCF loads back as a rig file (`--to robot.xml` path)."""
    from animik.io.mjcf import write_mjcf

    path = write_mjcf(animik.load_rig("biped12"), tmp_path / "biped.xml")
    skel = animik.load_rig(Path(path))
    assert skel.n_dof == animik.load_rig("biped12").n_dof
