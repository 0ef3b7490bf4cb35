"""Inverse dynamics, mass matrix and momentum against MuJoCo, pinocchio and finite differences.

The skeletons are exported with animik's own MJCF / URDF writers and loaded by the two
libraries; their ``mj_inverse`` / ``rnea`` / ``crba`` must equal animik's to 1e-8 on random
states. MuJoCo gets the mass data the MJCF carries (massless moving bodies are floored to
1e-6 kg there, see ``mjcf_mass_properties``), so animik is run on the same numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q, random_skeleton, shared_bvh_files

import animik
from animik.dynamics import (
    bias_forces,
    inverse_dynamics,
    mass_matrix,
    momentum,
    rnea,
)
from animik.errors import ShapeError, ValueRangeError
from animik.io.mjcf import mjcf_mass_properties, write_mjcf
from animik.io.urdf import write_urdf
from animik.kinematics import forward_kinematics

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")

TOL = 1e-8
RIGS = ["fig2", "body95", "wheeled20", "biped12"]


def _bvh_id(p) -> str:
    return f"bvh-{p.parent.name}/{p.name}"


CASES = (
    [pytest.param(("random", s), id=f"random-{s}") for s in range(4)]
    + [pytest.param(("rig", r), id=f"rig-{r}") for r in RIGS]
    + [pytest.param(("bvh", p), id=_bvh_id(p)) for p in shared_bvh_files()]
)


@pytest.fixture(params=CASES)
def skel(request):
    kind, arg = request.param
    if kind == "random":
        return random_skeleton(np.random.default_rng(arg))
    if kind == "rig":
        return animik.load_rig(arg)
    return animik.read_bvh(arg).skeleton


def states(skel, seed=0, n=3):
    rng = np.random.default_rng(seed)
    q = random_q(skel, rng, (n,))
    qd = rng.normal(size=(n, skel.n_dof)) * 2.0
    qdd = rng.normal(size=(n, skel.n_dof)) * 5.0
    return q, qd, qdd


def err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) if np.size(a) else 0.0


@pytest.fixture
def quiet_mujoco():
    """Keep MuJoCo's compile warnings (random skeletons may repeat an axis within a joint, a
    singular mass matrix) out of ./MUJOCO_LOG.TXT; inverse dynamics does not need M^-1."""
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda msg: None)
    yield
    mujoco.set_mju_user_warning(previous)


def test_matches_mujoco_mj_inverse(skel, tmp_path, quiet_mujoco):
    model = mujoco.MjModel.from_xml_path(str(write_mjcf(skel, tmp_path / "m.xml")))
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    data = mujoco.MjData(model)
    masses, inertias = mjcf_mass_properties(skel)
    same = skel.replace(masses=masses, inertias=inertias)
    qadr = np.array([model.joint(n).qposadr[0] for n in skel.dof_names], dtype=int)
    dadr = np.array([model.joint(n).dofadr[0] for n in skel.dof_names], dtype=int)
    q, qd, qdd = states(skel)
    tau = inverse_dynamics(same, q, qd, qdd)
    scale = max(1.0, float(np.abs(tau).max()))
    for i in range(len(q)):
        data.qpos[qadr], data.qvel[dadr], data.qacc[dadr] = q[i], qd[i], qdd[i]
        mujoco.mj_inverse(model, data)
        e = err(data.qfrc_inverse[dadr], tau[i])
        assert e <= TOL * scale, f"state {i}: |tau - qfrc_inverse| = {e:.3g} (scale {scale:.3g})"


def test_matches_pinocchio_rnea_and_crba(skel, tmp_path):
    model = pin.buildModelFromUrdf(str(write_urdf(skel, tmp_path / "m.urdf")))
    data = model.createData()
    idx = np.array([model.joints[model.getJointId(n)].idx_v for n in skel.dof_names], dtype=int)
    q, qd, qdd = states(skel, seed=1)
    tau = inverse_dynamics(skel, q, qd, qdd)
    M = mass_matrix(skel, q)
    scale = max(1.0, float(np.abs(tau).max()))
    for i in range(len(q)):
        qp, vp, ap = (np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv))
        qp[idx], vp[idx], ap[idx] = q[i], qd[i], qdd[i]
        ref = pin.rnea(model, data, qp, vp, ap)[idx]
        assert err(ref, tau[i]) <= TOL * scale, f"state {i}: rnea differs by {err(ref, tau[i]):.3g}"
        Mp = pin.crba(model, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert err(Mp[np.ix_(idx, idx)], M[i]) <= TOL


def test_mass_matrix_equals_repeated_inverse_dynamics(skel):
    """Seed D's recipe: column k of M = ID(q, 0, e_k) - ID(q, 0, 0); c = ID(q, qd, 0)."""
    q, qd, _ = states(skel, seed=2, n=1)
    n = skel.n_dof
    base = inverse_dynamics(skel, q[0], np.zeros(n), np.zeros(n), gravity=(0, 0, 0))
    cols = inverse_dynamics(skel, q[0], np.zeros(n), np.eye(n), gravity=(0, 0, 0)) - base
    assert err(cols.T, mass_matrix(skel, q[0])) <= 1e-9
    assert err(bias_forces(skel, q, qd), inverse_dynamics(skel, q, qd, np.zeros(n))) == 0.0


def _segment_state(skel, q):
    fk = forward_kinematics(skel, q)
    c = fk.joint_positions + np.einsum("...jab,jb->...ja", fk.joint_rotations, skel.coms)
    return fk.joint_rotations, c


def kinetic_energy_fd(skel, q, qd, h=1e-6):
    """T from segment velocities by central differences of FK (independent of the kernels)."""
    R0, c0 = _segment_state(skel, q - h * qd)
    R1, c1 = _segment_state(skel, q + h * qd)
    R, _ = _segment_state(skel, q)
    v = (c1 - c0) / (2 * h)
    dR = (R1 - R0) / (2 * h)
    W = dR @ np.swapaxes(R, -1, -2)  # skew(w) in world axes
    w = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)
    Iw = np.einsum("jab,jbc,jdc->jad", R, skel.inertias, R)
    return 0.5 * np.sum(skel.masses * np.sum(v * v, -1)) + 0.5 * np.einsum("ja,jab,jb->", w, Iw, w)


@pytest.mark.parametrize("name", ["random", "biped12", "fig2"])
def test_lagrangian_finite_differences(name):
    """M from T = 1/2 qd^T M qd (FK differences); tau from Lagrange's equation with
    dM/dq and the potential energy by finite differences."""
    skel = random_skeleton(np.random.default_rng(5), n_joints=6) if name == "random" \
        else animik.load_rig(name)
    rng = np.random.default_rng(3)
    n = skel.n_dof
    q = random_q(skel, rng) * 0.8
    qd = rng.normal(size=n)
    qdd = rng.normal(size=n)
    M = mass_matrix(skel, q)
    # Polarisation: e_i^T M e_j from kinetic energies of unit velocities.
    E = np.eye(n)
    T = np.array([kinetic_energy_fd(skel, q, E[i]) for i in range(n)])
    Mfd = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            Mfd[i, j] = kinetic_energy_fd(skel, q, E[i] + E[j]) - T[i] - T[j]
    assert err(Mfd, M) <= 1e-6 * max(1.0, np.abs(M).max())
    # Lagrange: tau = M qdd + (dM/dt) qd - dT/dq + dV/dq.
    h = 1e-6
    dM = [(mass_matrix(skel, q + h * E[k]) - mass_matrix(skel, q - h * E[k])) / (2 * h)
          for k in range(n)]
    Mdot = sum(dM[k] * qd[k] for k in range(n))
    dTdq = np.array([0.5 * qd @ dM[k] @ qd for k in range(n)])

    def V(qq):
        _, c = _segment_state(skel, qq)
        return 9.81 * np.sum(skel.masses * c[:, 2])

    dVdq = np.array([(V(q + h * E[k]) - V(q - h * E[k])) / (2 * h) for k in range(n)])
    tau_ref = M @ qdd + Mdot @ qd - dTdq + dVdq
    tau = inverse_dynamics(skel, q, qd, qdd)
    assert err(tau, tau_ref) <= 1e-5 * max(1.0, np.abs(tau).max())


def test_root_wrench_and_momentum(skel):
    """The root wrench is the rate of change of total momentum minus gravity; a static pose
    needs exactly m g upward with moment COM x m g."""
    q, qd, qdd = states(skel, seed=4, n=1)
    mom = momentum(skel, q[0])
    static = rnea(skel, q[0], np.zeros(skel.n_dof), np.zeros(skel.n_dof))
    mg = skel.total_mass * 9.81
    assert err(static.wrench[3:], [0, 0, mg]) <= 1e-9 * max(1, mg)
    assert err(static.wrench[:3], np.cross(mom.com, [0, 0, mg])) <= 1e-9 * max(1, mg)
    # d/dt of linear momentum by finite differences along the trajectory q + t qd + t^2/2 qdd.
    h = 1e-5
    p = [momentum(skel, q[0] + t * qd[0] + 0.5 * t * t * qdd[0], qd[0] + t * qdd[0]).linear
         for t in (-h, h)]
    dp = (p[1] - p[0]) / (2 * h)
    full = rnea(skel, q[0], qd[0], qdd[0])
    assert err(full.wrench[3:] - [0, 0, mg], dp) <= 1e-5 * max(1.0, np.abs(dp).max())


def test_batched_shapes_and_errors():
    skel = animik.load_rig("biped12")
    q, qd, qdd = states(skel, n=6)
    tau = inverse_dynamics(skel, q.reshape(2, 3, -1), qd.reshape(2, 3, -1), qdd.reshape(2, 3, -1))
    assert tau.shape == (2, 3, skel.n_dof)
    assert err(tau.reshape(6, -1), inverse_dynamics(skel, q, qd, qdd)) == 0.0
    assert mass_matrix(skel, q.reshape(2, 3, -1)).shape == (2, 3, skel.n_dof, skel.n_dof)
    assert momentum(skel, q[0]).com.shape == (3,)
    bad = q[0].copy()
    bad[2] = np.nan
    with pytest.raises(ValueRangeError, match="qd contains NaN"):
        inverse_dynamics(skel, q[0], bad, qdd[0])
    with pytest.raises(ShapeError, match="trailing dimension of qdd"):
        inverse_dynamics(skel, q[0], qd[0], qdd[0, :3])
    with pytest.raises(ShapeError, match="gravity"):
        inverse_dynamics(skel, q[0], qd[0], qdd[0], gravity=(0, 9.81))
