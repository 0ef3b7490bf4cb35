"""Seed D method B (a): the operational-space inverse inertia ``Λ⁻¹ = J M⁻¹ Jᵀ`` against
pinocchio's ``computeMinverse`` on the exported URDF, and its Jacobian against finite
differences of forward kinematics."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q

import animik
from animik.dynamics.opspace import inverse_inertia, point_jacobian
from animik.errors import ShapeError
from animik.io.urdf import write_urdf
from animik.kinematics import forward_kinematics

pin = pytest.importorskip("pinocchio")


def _feet(skel):
    return [skel.joint_index(n) for n in ("l_ankle", "r_ankle")]


def test_point_jacobian_matches_finite_differences():
    skel = animik.load_rig("body95")
    q = random_q(skel, np.random.default_rng(3))
    js = _feet(skel) + [skel.joint_index("r_wrist")]
    pts = np.array([[0.05, 0.02, -0.07], [0.0, 0.0, 0.0], [0.1, 0.0, 0.0]])
    Jp = point_jacobian(skel, q, js, pts)

    def where(qq):
        fk = forward_kinematics(skel, qq)
        return np.concatenate([fk.joint_positions[j] + fk.joint_rotations[j] @ p
                               for j, p in zip(js, pts, strict=True)])

    h = 1e-6
    fd = np.stack([(where(q + h * e) - where(q - h * e)) / (2 * h) for e in np.eye(skel.n_dof)], 1)
    assert np.abs(fd - Jp).max() < 1e-6


@pytest.mark.parametrize("rig", ["body95", "biped12"])
def test_inverse_inertia_matches_pinocchio_minverse(rig, tmp_path):
    skel = animik.load_rig(rig)
    model = pin.buildModelFromUrdf(str(write_urdf(skel, tmp_path / "m.urdf")))
    data = model.createData()
    idx = np.array([model.joints[model.getJointId(n)].idx_v for n in skel.dof_names], dtype=int)
    feet = [j for j in range(skel.n_joints) if skel.joint_names[j].endswith(("ankle", "foot"))][:2]
    assert feet
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = random_q(skel, rng)
        qp = np.zeros(model.nq)
        qp[idx] = q
        Minv = pin.computeMinverse(model, data, qp)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        Jp = point_jacobian(skel, q, feet, angular=True)
        ref = Jp @ Minv[np.ix_(idx, idx)] @ Jp.T
        ours = inverse_inertia(skel, q, feet, angular=True)
        assert np.abs(ours - ref).max() <= 1e-8 * np.abs(ref).max()
        # Symmetric positive definite: a push accelerates the point along the push.
        assert np.allclose(ours, ours.T) and np.linalg.eigvalsh(ours).min() > 0


def test_inverse_inertia_bad_input():
    skel = animik.load_rig("body95")
    with pytest.raises(ShapeError):
        inverse_inertia(skel, skel.rest_q, [0], points=np.zeros((2, 3)))
    with pytest.raises(ShapeError):
        inverse_inertia(skel, np.tile(skel.rest_q, (2, 1)), [0])
    with pytest.raises(animik.AnimikError):
        inverse_inertia(skel, skel.rest_q, ["no_such_joint"])
