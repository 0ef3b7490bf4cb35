"""URDF / MJCF export, checked against two independent kinematics implementations.

The exported files are loaded by MuJoCo (MJCF) and pinocchio (URDF); body / link / site poses,
site Jacobians, total mass, whole-body COM and centroidal inertia computed by those libraries
must equal animik's own to ~1e-9 on random poses. This checks the exporters *and* animik's
kinematics (FK, the geometric Jacobian, the DoF composition order) at the same time.
"""

from __future__ import annotations

import dataclasses
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import random_q, random_skeleton, shared_bvh_files

import animik
from animik.errors import FileFormatError
from animik.io._robot import matrix_to_rpy
from animik.io.mjcf import mjcf_mass_properties, mjcf_string, write_mjcf
from animik.io.urdf import UNLIMITED, urdf_string, write_urdf
from animik.kinematics import forward_kinematics, site_jacobians
from animik.rotations import (
    axis_angle_to_matrix,
    euler_to_matrix,
    matrix_to_quat,
    rotvec_to_matrix,
)
from animik.skeleton import Dof, Joint, Site, Skeleton

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")

TOL = 1e-9
RIGS = list(animik.rigs.BUILTIN_RIGS)  # every built-in rig, including ones added later
SEEDS = [0, 1, 2, 3, 4, 5]


@pytest.fixture(autouse=True)
def mujoco_warnings():
    """Collect MuJoCo's warnings instead of letting it append them to ./MUJOCO_LOG.TXT.

    The only one allowed: random skeletons may give one joint the same axis twice (e.g. ``rx``
    then ``rx``), a kinematic redundancy that makes MuJoCo's mass matrix singular when the
    model is compiled. That is a property of the skeleton, not of the export.
    """
    messages: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(messages.append)
    try:
        yield messages
    finally:
        mujoco.set_mju_user_warning(previous)
    unexpected = [m for m in messages if "Inertia matrix is too close to singular" not in m]
    assert not unexpected, f"MuJoCo warnings: {unexpected}"


# ---------------------------------------------------------------------- skeletons under test
def awkward_skeleton() -> Skeleton:
    """Every corner case at once: a root without DoFs, rest rotations at exactly 90° and 180°
    and near gimbal lock, free and one-sided limits, massless and point-mass segments with
    DoFs, inertias that break the triangle inequality or are not positive, and names with
    ``: < > & " '`` that also clash with the exporters' generated names."""
    rz90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    rx180 = np.diag([1.0, -1.0, -1.0])
    ry90 = axis_angle_to_matrix(np.array([0.0, 1.0, 0.0]), np.pi / 2)
    near_lock = euler_to_matrix(np.array([0.3, np.pi / 2 - 1e-7, -1.1]), "zyx")
    inf = np.inf
    rot = rotvec_to_matrix(np.array([0.3, -0.8, 0.5]))
    bad_tri = rot @ np.diag([0.01, 0.01, 0.05]) @ rot.T
    joints = [
        Joint("base:Hips", None, (0.1, 0.2, 0.9), (), rz90, mass=5.0, com=(0.0, 0.01, 0.02),
              inertia=np.diag([0.1, 0.1, 0.0])),
        Joint('a<b&c"d\'', "base:Hips", (0.0, 0.1, 0.3), [
            Dof("rx:free", "rx"),
            Dof("ty<half>", "ty", -inf, 0.5),
            Dof("general", "r", axis=(1.0, 2.0, -0.5)),
        ], ry90, mass=0.0, com=(0.0, 0.0, 0.0), inertia=np.zeros((3, 3))),
        Joint("spine:1", 'a<b&c"d\'', (0.2, 0.0, 0.1), [
            Dof("spine_rz", "rz", -1.0, 1.0),
            Dof("slide_free", "tz"),
        ], near_lock, mass=1.0, com=(0.05, 0.0, 0.0), inertia=np.zeros((3, 3))),
        Joint("leaf", "spine:1", (0.0, 0.0, 0.2), (), rx180, mass=0.0, com=(0.0, 0.0, 0.0),
              inertia=np.zeros((3, 3))),
        Joint("arm", "base:Hips", (0.3, -0.1, 0.0), [Dof("leaf", "ry"), Dof("arm_rz", "rz")],
              near_lock.T,
              mass=2.0, com=(0.1, 0.0, 0.0), inertia=bad_tri),
        Joint("arm__leaf", "arm", (0.3, 0.0, 0.0), [
            Dof("h1", "r", -0.5, inf, axis=(0.0, 1.0, 1.0)),
            Dof("h2", "t", axis=(1.0, 1.0, 1.0)),
            Dof("h3", "rx", -3.0, 3.0),
        ], rot, mass=0.5, com=(0.02, 0.01, 0.0), inertia=np.diag([-1e-3, 1e-2, 1e-2])),
        Joint("head", "base:Hips", (0.0, 0.0, 0.3), (), mass=0.7, com=(0.0, 0.0, 0.05),
              inertia=np.zeros((3, 3))),
        Joint("finger", "arm__leaf", (0.05, 0.0, 0.0), [Dof("finger_rz", "rz")], mass=0.2,
              com=(0.01, 0.0, 0.0), inertia=np.diag([1e-4, 2e-4, 2e-4])),
    ]
    sites = [
        Site("tip:<&>", "leaf", (0.0, 0.0, 0.1), rx180),
        Site("hand", "arm__leaf", (0.1, 0.0, 0.0), near_lock),
        Site("on_base", "base:Hips", (0.0, 0.0, -0.1), ry90),
        Site("on_finger", "finger", (0.02, 0.0, 0.0)),
    ]
    return Skeleton.from_joints("awkward <&> 'robot'", joints, sites)


def unlimited_skeleton(seed: int) -> Skeleton:
    """A random skeleton with some rotation DoFs made free (continuous-joint candidates)."""
    rng = np.random.default_rng(seed)
    skel = random_skeleton(rng, n_joints=10)
    free = (skel.dof_type == 0) & (rng.random(skel.n_dof) < 0.5)
    return skel.replace(lower=np.where(free, -np.inf, skel.lower),
                        upper=np.where(free, np.inf, skel.upper))


def rigid_skeleton() -> Skeleton:
    """One joint, no DoF at all: everything is welded to the world."""
    return Skeleton.from_joints("rigid", [Joint("body", None, (0.0, 0.0, 1.0), (),
                                                rotvec_to_matrix(np.array([0.1, 0.2, 0.3])),
                                                mass=3.0, com=(0.0, 0.0, 0.1))],
                                [Site("top", "body", (0.0, 0.0, 0.2))])


def _bvh_id(p) -> str:
    return f"bvh-{p.parent.name}/{p.name}"


CASES = (
    [pytest.param(("random", s), id=f"random-{s}") for s in SEEDS]
    + [pytest.param(("random-plain", 7), id="random-principal-axes")]
    + [pytest.param(("unlimited", 8), id="random-unlimited")]
    + [pytest.param(("awkward", None), id="awkward")]
    + [pytest.param(("rigid", None), id="rigid")]
    + [pytest.param(("rig", r), id=f"rig-{r}") for r in RIGS]
    + [pytest.param(("bvh", p), id=_bvh_id(p)) for p in shared_bvh_files()]
)


def get_skeleton(case) -> Skeleton:
    kind, arg = case
    if kind == "random":
        return random_skeleton(np.random.default_rng(arg))
    if kind == "random-plain":
        return random_skeleton(np.random.default_rng(arg), general_axes=False,
                               rest_rotations=False, translations=False)
    if kind == "unlimited":
        return unlimited_skeleton(arg)
    if kind == "awkward":
        return awkward_skeleton()
    if kind == "rigid":
        return rigid_skeleton()
    if kind == "rig":
        return animik.load_rig(arg)  # every built-in rig must load: a failure is a failure
    if kind == "bvh":
        return animik.read_bvh(arg).skeleton
    raise AssertionError(case)


@pytest.fixture(params=CASES)
def skel(request) -> Skeleton:
    return get_skeleton(request.param)


def poses(skel: Skeleton, seed: int = 0, n: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([skel.rest_q[None], np.zeros((1, skel.n_dof)),
                           random_q(skel, rng, (n,))])


# ---------------------------------------------------------------------- reference quantities
def whole_body(skel: Skeleton, q: np.ndarray, masses: np.ndarray, inertias: np.ndarray):
    """Total mass, COM (3,) and inertia about the COM in world axes (3, 3), from animik FK and
    the segment data (a plain weighted sum, independent of both libraries)."""
    fk = forward_kinematics(skel, q)
    seg_com = fk.joint_positions + np.einsum("jab,jb->ja", fk.joint_rotations, skel.coms)
    total = masses.sum()
    com = (masses[:, None] * seg_com).sum(0) / total
    inertia = np.zeros((3, 3))
    for j in range(skel.n_joints):
        r, d = fk.joint_rotations[j], seg_com[j] - com
        inertia += r @ inertias[j] @ r.T + masses[j] * (d @ d * np.eye(3) - np.outer(d, d))
    return total, com, inertia


def assert_close(actual, expected, what: str, tol: float = TOL) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    err = float(np.max(np.abs(actual - expected))) if actual.size else 0.0
    assert err <= tol, f"{what}: max abs error {err:.3g} > {tol:g}"


# ---------------------------------------------------------------------- MuJoCo
def load_mujoco(skel: Skeleton, tmp_path):
    path = write_mjcf(skel, tmp_path / "model.xml")
    return mujoco.MjModel.from_xml_path(str(path))


def test_mujoco_matches_animik(skel, tmp_path):
    model = load_mujoco(skel, tmp_path)
    data = mujoco.MjData(model)
    assert model.nq == model.nv == skel.n_dof, "one scalar MuJoCo joint per DoF"
    qadr = np.array([model.joint(n).qposadr[0] for n in skel.dof_names], dtype=int)
    dadr = np.array([model.joint(n).dofadr[0] for n in skel.dof_names], dtype=int)
    bodies = np.array([model.body(n).id for n in skel.joint_names], dtype=int)
    sites = np.array([model.site(n).id for n in skel.site_names], dtype=int)
    masses, inertias = mjcf_mass_properties(skel)
    assert_close(model.body_mass[bodies], masses, "body masses", 1e-12)
    # Masses are exported as they are, except the documented floor on massless moving bodies.
    has_dof = np.diff(skel.joint_dof_start) > 0
    floored = has_dof & (skel.masses < 1e-6)
    assert np.array_equal(masses[~floored], skel.masses[~floored])
    assert np.all(masses[floored] == 1e-6)
    assert model.body_mass.sum() == pytest.approx(skel.masses.sum() + 1e-6 * floored.sum()
                                                  - skel.masses[floored].sum(), abs=1e-12)

    for i, q in enumerate(poses(skel)):
        data.qpos[:] = 0.0
        data.qpos[qadr] = q
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        fk = forward_kinematics(skel, q)
        assert_close(data.xpos[bodies], fk.joint_positions, f"pose {i}: body positions")
        assert_close(data.xmat[bodies].reshape(-1, 3, 3), fk.joint_rotations,
                     f"pose {i}: body rotations")
        assert_close(data.site_xpos[sites], fk.site_positions, f"pose {i}: site positions")
        assert_close(data.site_xmat[sites].reshape(-1, 3, 3), fk.site_rotations,
                     f"pose {i}: site rotations")
        jac = site_jacobians(skel, q)
        jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        for s, sid in enumerate(sites):
            mujoco.mj_jacSite(model, data, jacp, jacr, sid)
            mj = np.vstack([jacp, jacr])[:, dadr]
            assert_close(mj, jac[s], f"pose {i}: Jacobian of site {skel.site_names[s]!r}")
        # Whole body: MuJoCo's own COM and an inertia assembled from MuJoCo's inertial frames.
        total, com, inertia = whole_body(skel, q, masses, inertias)
        assert_close(data.subtree_com[0], com, f"pose {i}: whole-body COM")
        mj_inertia = np.zeros((3, 3))
        for b in range(1, model.nbody):
            r, d = data.ximat[b].reshape(3, 3), data.xipos[b] - data.subtree_com[0]
            m = model.body_mass[b]
            mj_inertia += (r * model.body_inertia[b]) @ r.T + m * (d @ d * np.eye(3) - np.outer(d, d))
        assert_close(mj_inertia, inertia, f"pose {i}: inertia about the COM")
    assert model.body_mass.sum() == pytest.approx(total, abs=1e-12)


def test_mujoco_limits_names_and_keyframe(skel, tmp_path):
    model = load_mujoco(skel, tmp_path)
    for k, name in enumerate(skel.dof_names):
        jnt = model.joint(name)
        expected_type = mujoco.mjtJoint.mjJNT_SLIDE if skel.dof_type[k] else mujoco.mjtJoint.mjJNT_HINGE
        assert jnt.type[0] == expected_type
        lo, hi = skel.lower[k], skel.upper[k]
        if np.isfinite(lo) or np.isfinite(hi):
            assert model.jnt_limited[jnt.id]
            assert_close(jnt.range, [lo if np.isfinite(lo) else -UNLIMITED,
                                     hi if np.isfinite(hi) else UNLIMITED], f"range of {name}", 0)
        else:
            assert not model.jnt_limited[jnt.id]
    for name in skel.joint_names:
        model.body(name)  # raises KeyError when missing
    for name in skel.site_names:
        model.site(name)
    assert model.nbody == skel.n_joints + 1 and model.nsite == skel.n_sites
    if skel.n_dof:
        qadr = [model.joint(n).qposadr[0] for n in skel.dof_names]
        assert_close(model.key("rest").qpos[qadr], skel.rest_q, "rest keyframe", 0)
    assert_close(model.opt.gravity, [0.0, 0.0, -9.81], "gravity", 0)


# ---------------------------------------------------------------------- pinocchio
def load_pinocchio(skel: Skeleton, tmp_path, **options):
    path = write_urdf(skel, tmp_path / "model.urdf", **options)
    return pin.buildModelFromUrdf(str(path))


def pin_configuration(model, skel: Skeleton, q: np.ndarray) -> np.ndarray:
    out = pin.neutral(model)
    for k, name in enumerate(skel.dof_names):
        jm = model.joints[model.getJointId(name)]
        if jm.nq == 1:
            out[jm.idx_q] = q[k]
        else:  # continuous joint: (cos q, sin q)
            out[jm.idx_q:jm.idx_q + 2] = np.cos(q[k]), np.sin(q[k])
    return out


@pytest.mark.parametrize("unlimited_rotation", ["revolute", "continuous"])
def test_pinocchio_matches_animik(skel, tmp_path, unlimited_rotation):
    model = load_pinocchio(skel, tmp_path, unlimited_rotation=unlimited_rotation)
    data = model.createData()
    assert model.njoints - 1 == model.nv == skel.n_dof, "one URDF joint per DoF"
    idx_v = np.array([model.joints[model.getJointId(n)].idx_v for n in skel.dof_names], dtype=int)
    links = [model.getFrameId(n, pin.BODY) for n in skel.joint_names]
    sites = [model.getFrameId(n, pin.BODY) for n in skel.site_names]
    # Segments fixed to the base (a root without DoFs) land on pinocchio's universe body.
    assert pin.computeTotalMass(model) + model.inertias[0].mass == pytest.approx(
        skel.masses.sum(), abs=1e-9)

    for i, q in enumerate(poses(skel, seed=1)):
        qp = pin_configuration(model, skel, q)
        pin.forwardKinematics(model, data, qp)
        pin.updateFramePlacements(model, data)
        fk = forward_kinematics(skel, q)
        assert_close([data.oMf[f].translation for f in links], fk.joint_positions,
                     f"pose {i}: link positions")
        assert_close([data.oMf[f].rotation for f in links], fk.joint_rotations,
                     f"pose {i}: link rotations")
        assert_close([data.oMf[f].translation for f in sites], fk.site_positions.reshape(-1, 3),
                     f"pose {i}: site positions")
        assert_close([data.oMf[f].rotation for f in sites],
                     fk.site_rotations.reshape(-1, 3, 3), f"pose {i}: site rotations")
        if not skel.n_dof:
            continue  # pinocchio 4.1's getFrameJacobian crashes (SIGSEGV) on a model with nv = 0
        pin.computeJointJacobians(model, data, qp)
        jac = site_jacobians(skel, q)
        for s, fid in enumerate(sites):
            pj = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, idx_v]
            assert_close(pj, jac[s], f"pose {i}: Jacobian of site {skel.site_names[s]!r}")
        # Whole-body COM and centroidal inertia (the moving part: pinocchio leaves the universe
        # body out, so leave the segments welded to the base out of the reference too).
        moving = pin_moving_mask(model, skel)
        if moving.any() and skel.masses[moving].sum() > 0:
            m_ref = np.where(moving, skel.masses, 0.0)
            i_ref = np.where(moving[:, None, None], skel.inertias, 0.0)
            total, com, inertia = whole_body(skel, q, m_ref, i_ref)
            assert_close(pin.centerOfMass(model, data, qp), com, f"pose {i}: whole-body COM")
            pin.ccrba(model, data, qp, np.zeros(model.nv))
            assert data.Ig.mass == pytest.approx(total, abs=1e-9)
            assert_close(data.Ig.inertia, inertia, f"pose {i}: centroidal inertia")


def pin_moving_mask(model, skel: Skeleton) -> np.ndarray:
    """Skeleton joints whose link pinocchio attaches to a moving joint (not the universe)."""
    return np.array([model.frames[model.getFrameId(n, pin.BODY)].parentJoint > 0
                     for n in skel.joint_names])


def test_pinocchio_limits_and_names(skel, tmp_path):
    model = load_pinocchio(skel, tmp_path)
    for k, name in enumerate(skel.dof_names):
        assert model.existJointName(name), name
        jm = model.joints[model.getJointId(name)]
        lo, hi = skel.lower[k], skel.upper[k]
        assert model.lowerPositionLimit[jm.idx_q] == (lo if np.isfinite(lo) else -UNLIMITED)
        assert model.upperPositionLimit[jm.idx_q] == (hi if np.isfinite(hi) else UNLIMITED)
    for name in (*skel.joint_names, *skel.site_names):
        assert model.existFrame(name, pin.BODY), name


def test_continuous_joints_for_free_rotations(tmp_path):
    skel = unlimited_skeleton(8)
    model = load_pinocchio(skel, tmp_path, unlimited_rotation="continuous")
    free = ~np.isfinite(skel.lower) & ~np.isfinite(skel.upper)
    assert free.any()
    for k, name in enumerate(skel.dof_names):
        nq = model.joints[model.getJointId(name)].nq
        assert nq == (2 if free[k] and skel.dof_type[k] == 0 else 1), name
    root = ET.fromstring(urdf_string(skel, unlimited_rotation="continuous"))
    types = {j.get("name"): j.get("type") for j in root.iter("joint")}
    assert {types[n] for n in np.array(skel.dof_names)[free & (skel.dof_type == 0)]} == {"continuous"}
    with pytest.raises(ValueError, match="unlimited_rotation"):
        urdf_string(skel, unlimited_rotation="free")


# ---------------------------------------------------------------------- structure of the files
def test_urdf_structure():
    skel = awkward_skeleton()
    root = ET.fromstring(urdf_string(skel))
    links = [e.get("name") for e in root.iter("link")]
    joints = {e.get("name"): e for e in root.iter("joint")}
    assert len(set(links)) == len(links) and len(joints) == len(list(root.iter("joint")))
    assert links[0] == "world"
    # Joint "arm" has DoFs "leaf", "arm_rz": its intermediate link would be "arm__leaf", the
    # name of a skeleton joint, so it gets another one.
    assert joints["leaf"].find("child").get("link") == "arm__leaf_2"
    assert joints["arm_rz"].find("parent").get("link") == "arm__leaf_2"
    # Joint 'a<b&c"d'' has three DoFs -> two intermediate links, the first joint has the origin.
    chain = [joints[n] for n in ("rx:free", "ty<half>", "general")]
    assert [c.find("origin") is not None for c in chain] == [True, False, False]
    assert chain[0].find("parent").get("link") == "base:Hips"
    assert chain[-1].find("child").get("link") == 'a<b&c"d\''
    assert chain[1].find("parent").get("link") == chain[0].find("child").get("link")
    assert joints["base:Hips__fixed"].get("type") == "fixed"
    assert joints["rx:free"].get("type") == "revolute"
    assert joints["slide_free"].find("limit").get("upper") == repr(UNLIMITED)
    # Massless intermediate links carry nothing; the segment link carries the inertial.
    for link in root.iter("link"):
        if "__" in link.get("name") and link.get("name") != "arm__leaf":  # a skeleton joint
            assert len(link) == 0


def test_mjcf_structure_and_inertia_regularisation():
    skel = awkward_skeleton()
    text = mjcf_string(skel)
    root = ET.fromstring(text)
    assert root.find("compiler").get("angle") == "radian"
    body = next(b for b in root.iter("body") if b.get("name") == 'a<b&c"d\'')
    assert [j.get("name") for j in body.findall("joint")] == ["rx:free", "ty<half>", "general"]
    assert [j.get("type") for j in body.findall("joint")] == ["hinge", "slide", "hinge"]
    masses, inertias = mjcf_mass_properties(skel)
    j = skel.joint_index
    # Massless / point-mass segments with DoFs get the floors, static ones stay massless.
    assert masses[j('a<b&c"d\'')] == 1e-6 and masses[j("leaf")] == 0.0
    assert masses[j("head")] == 0.7  # static: mass kept, but its zero inertia is floored
    assert np.allclose(np.linalg.eigvalsh(inertias[j("head")]), 1e-10, rtol=1e-6)
    assert np.linalg.eigvalsh(inertias[j("spine:1")]).min() == pytest.approx(1e-10)
    # Triangle inequality restored with the smallest change; valid inertias untouched.
    lam = np.linalg.eigvalsh(inertias[j("arm")])
    assert lam[0] + lam[1] >= lam[2] and lam[2] == pytest.approx(0.05, abs=1e-15)
    assert lam[0] == pytest.approx(0.025) and lam[1] == pytest.approx(0.025)
    assert np.linalg.eigvalsh(inertias[j("arm__leaf")]).min() >= 0.0
    assert np.array_equal(inertias[j("finger")], skel.inertias[j("finger")])
    mujoco.MjModel.from_xml_string(text)


@pytest.mark.parametrize("seed", range(20))
def test_rotation_conversions_are_exact(seed):
    rng = np.random.default_rng(seed)
    mats = [rotvec_to_matrix(rng.normal(size=3)),
            euler_to_matrix(np.array([rng.normal(), np.pi / 2 * rng.choice([-1, 1]), rng.normal()])
                            + np.array([0, 10.0 ** -rng.integers(4, 16), 0]), "zyx"),
            axis_angle_to_matrix(np.eye(3)[seed % 3], np.pi * rng.choice([0.5, 1.0, -0.5]))]
    for r in mats:
        roll, pitch, yaw = matrix_to_rpy(r)
        rpy = euler_to_matrix(np.array([yaw, pitch, roll]), "zyx")
        assert_close(rpy, r, "rpy round trip", 1e-15 * 4)
        q = matrix_to_quat(r)
        assert q[0] >= 0 and abs(np.linalg.norm(q) - 1) < 1e-15
        back = pin.Quaternion(*q).toRotationMatrix()  # pin.Quaternion(w, x, y, z)
        assert_close(back, r, "quaternion round trip", 1e-15 * 4)


# ---------------------------------------------------------------------- names and failures
def test_names_survive_escaping(tmp_path):
    skel = awkward_skeleton()
    model = load_mujoco(skel, tmp_path)
    assert model.body('a<b&c"d\'').name == 'a<b&c"d\''
    assert model.site("tip:<&>").name == "tip:<&>"
    assert model.joint("ty<half>").name == "ty<half>"
    pmodel = load_pinocchio(skel, tmp_path)
    assert pmodel.existFrame("tip:<&>", pin.BODY) and pmodel.existJointName("ty<half>")
    assert pmodel.name == skel.name
    assert model.names.split(b"\0")[0].decode() == skel.name


@pytest.mark.parametrize("writer", [write_urdf, write_mjcf], ids=["urdf", "mjcf"])
def test_failed_write_keeps_existing_file(tmp_path, monkeypatch, writer):
    path = tmp_path / "model.xml"
    path.write_text("old contents")
    skel = random_skeleton(np.random.default_rng(0))
    bad = skel.replace(joint_names=("bad\x01name",) + skel.joint_names[1:])
    with pytest.raises(FileFormatError, match="XML 1.0"):
        writer(bad, path)
    assert path.read_text() == "old contents"

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        writer(skel, path)
    assert path.read_text() == "old contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.xml"]


def test_joint_named_world(tmp_path):
    joints, sites = random_skeleton(np.random.default_rng(2)).to_joints()
    joints = [dataclasses.replace(jt, name="world") if jt.name == "j3" else
              dataclasses.replace(jt, parent="world") if jt.parent == "j3" else jt
              for jt in joints]
    sites = [dataclasses.replace(s, joint="world") if s.joint == "j3" else s for s in sites]
    skel = Skeleton.from_joints("w", joints, sites)
    # URDF: the base link takes another name; pinocchio still agrees with animik.
    root = ET.fromstring(urdf_string(skel))
    assert next(root.iter("link")).get("name") == "world_2"
    model = load_pinocchio(skel, tmp_path)
    data = model.createData()
    q = random_q(skel, np.random.default_rng(0))
    pin.framesForwardKinematics(model, data, pin_configuration(model, skel, q))
    assert_close(data.oMf[model.getFrameId("world", pin.BODY)].translation,
                 animik.joint_positions(skel, q)[skel.joint_index("world")], "link 'world'")
    # MJCF: MuJoCo reserves the body name "world".
    with pytest.raises(FileFormatError, match="reserves the body name 'world'"):
        mjcf_string(skel)


def test_urdf_rejects_site_named_like_a_joint():
    skel = random_skeleton(np.random.default_rng(0))
    clash = skel.replace(site_names=(skel.joint_names[1],) + skel.site_names[1:])
    with pytest.raises(FileFormatError, match="both a joint and a site"):
        urdf_string(clash)
    mujoco.MjModel.from_xml_string(mjcf_string(clash))  # separate name spaces in MuJoCo


def test_string_and_file_agree(tmp_path):
    skel = random_skeleton(np.random.default_rng(3))
    assert write_urdf(skel, tmp_path / "a.urdf").read_text() == urdf_string(skel)
    assert write_mjcf(skel, tmp_path / "a.xml").read_text() == mjcf_string(skel)
    assert animik.write_urdf is write_urdf and animik.write_mjcf is write_mjcf


# ---------------------------------------------------------------------- URDF in MuJoCo
def load_mujoco_urdf(skel: Skeleton, tmp_path):
    path = write_urdf(skel, tmp_path / "model.urdf")
    return mujoco.MjModel.from_xml_path(str(path))


def test_urdf_loads_in_mujoco_and_matches_animik(skel, tmp_path):
    """Every exported URDF loads in MuJoCo (issue 14: massless links between the DoFs of one
    joint were rejected) and MuJoCo's FK of it is animik's. A segment inertia that is not
    positive semi-definite (the awkward skeleton's, on purpose) is physically invalid: MuJoCo
    names that link, and the rest is checked with the inertias the MJCF export writes."""
    bad = [n for n, i in zip(skel.joint_names, skel.inertias, strict=True)
           if np.linalg.eigvalsh(0.5 * (i + i.T)).min() < 0.0]
    if bad:
        with pytest.raises(ValueError, match="positive eigenvalues"):
            load_mujoco_urdf(skel, tmp_path)
        skel = skel.replace(inertias=mjcf_mass_properties(skel)[1])
    model = load_mujoco_urdf(skel, tmp_path)
    data = mujoco.MjData(model)
    assert model.nq == model.nv == skel.n_dof
    qadr = np.array([model.joint(n).qposadr[0] for n in skel.dof_names], dtype=int)
    bodies = np.array([model.body(n).id for n in skel.joint_names], dtype=int)
    sites = np.array([model.body(n).id for n in skel.site_names], dtype=int)
    for i, q in enumerate(poses(skel)):
        data.qpos[:] = 0.0
        data.qpos[qadr] = q
        mujoco.mj_kinematics(model, data)
        fk = forward_kinematics(skel, q)
        assert_close(data.xpos[bodies], fk.joint_positions, f"pose {i}: link positions")
        assert_close(data.xmat[bodies].reshape(-1, 3, 3), fk.joint_rotations,
                     f"pose {i}: link rotations")
        assert_close(data.xpos[sites], fk.site_positions, f"pose {i}: site positions")
        assert_close(data.xmat[sites].reshape(-1, 3, 3), fk.site_rotations,
                     f"pose {i}: site rotations")


def test_urdf_without_mujoco_extension_is_rejected_by_mujoco():
    """The defect the extension fixes: the plain document does not load (proves the test above
    tests something)."""
    with pytest.raises(ValueError, match="mjMINVAL"):
        mujoco.MjModel.from_xml_string(urdf_string(animik.load_rig("body95"), mujoco=False))
    assert "<mujoco>" not in urdf_string(animik.load_rig("body95"), mujoco=False)


@pytest.mark.parametrize("rig", RIGS)
def test_urdf_dynamics_in_mujoco_match_the_mjcf_export(rig, tmp_path):
    """The mass floors MuJoCo puts on the URDF's extra links change the joint-space mass matrix
    by at most 1e-4 (kg·m² / kg; 5.8e-5 measured on body95, entries up to ~10) relative to the
    MJCF export, and gravity torques by 1e-3 (N·m / N; 5.5e-4 measured on body95)."""
    skel = animik.load_rig(rig)
    urdf = load_mujoco_urdf(skel, tmp_path)
    mjcf = load_mujoco(skel, tmp_path)
    du, dm = mujoco.MjData(urdf), mujoco.MjData(mjcf)
    au = np.array([urdf.joint(n).dofadr[0] for n in skel.dof_names], dtype=int)
    am = np.array([mjcf.joint(n).dofadr[0] for n in skel.dof_names], dtype=int)
    assert urdf.body_mass.sum() == pytest.approx(mjcf.body_mass.sum(), abs=1e-4)
    for i, q in enumerate(poses(skel)):
        mu, mm = np.zeros((skel.n_dof, skel.n_dof)), np.zeros((skel.n_dof, skel.n_dof))
        for model, data, adr, full in ((urdf, du, au, mu), (mjcf, dm, am, mm)):
            data.qpos[:] = 0.0
            data.qpos[np.array([model.joint(n).qposadr[0] for n in skel.dof_names], dtype=int)] = q
            mujoco.mj_forward(model, data)
            m = np.zeros((model.nv, model.nv))
            mujoco.mj_fullM(model, data, m)
            full[:] = m[np.ix_(adr, adr)]
        assert_close(mu, mm, f"pose {i}: mass matrix", 1e-4)
        assert_close(du.qfrc_bias[au], dm.qfrc_bias[am], f"pose {i}: gravity torques", 1e-3)
