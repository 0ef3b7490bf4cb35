"""Kinematics against an independent homogeneous-matrix reference and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q, random_skeleton, reference_fk

import animik
from animik.errors import ShapeError, UnknownNameError, ValueRangeError
from animik.kinematics import Kinematics, forward_kinematics, site_jacobians, stacked_jacobian
from animik.rotations import matrix_to_rotvec

SEEDS = [0, 1, 2, 3]


@pytest.fixture(params=SEEDS)
def skel_and_rng(request):
    rng = np.random.default_rng(request.param)
    return random_skeleton(rng, n_joints=int(rng.integers(3, 25)), n_sites=5), rng


def test_fk_matches_reference(skel_and_rng):
    skel, rng = skel_and_rng
    for _ in range(5):
        q = random_q(skel, rng)
        world, sites = reference_fk(skel, q)
        fk = forward_kinematics(skel, q)
        np.testing.assert_allclose(fk.joint_positions, world[:, :3, 3], atol=1e-12)
        np.testing.assert_allclose(fk.joint_rotations, world[:, :3, :3], atol=1e-12)
        np.testing.assert_allclose(fk.site_positions, sites[:, :3, 3], atol=1e-12)
        np.testing.assert_allclose(fk.site_rotations, sites[:, :3, :3], atol=1e-12)


def test_batched_equals_single(skel_and_rng):
    skel, rng = skel_and_rng
    qb = random_q(skel, rng, (2, 3))
    fk = forward_kinematics(skel, qb)
    jac = site_jacobians(skel, qb)
    assert fk.joint_positions.shape == (2, 3, skel.n_joints, 3)
    assert jac.shape == (2, 3, skel.n_sites, 6, skel.n_dof)
    for i in range(2):
        for j in range(3):
            one = forward_kinematics(skel, qb[i, j])
            for a, b in zip(one, fk, strict=True):
                np.testing.assert_array_equal(a, b[i, j])
            np.testing.assert_array_equal(site_jacobians(skel, qb[i, j]), jac[i, j])


def test_jacobian_matches_finite_differences(skel_and_rng):
    skel, rng = skel_and_rng
    q = random_q(skel, rng)
    jac = site_jacobians(skel, q)
    eps = 1e-6
    for k in range(skel.n_dof):
        dq = np.zeros(skel.n_dof)
        dq[k] = eps
        fp = forward_kinematics(skel, q + dq)
        fm = forward_kinematics(skel, q - dq)
        lin = (fp.site_positions - fm.site_positions) / (2 * eps)
        # angular velocity: log(R(q+) R(q-)^T) / (2 eps), world frame
        ang = matrix_to_rotvec(fp.site_rotations @ np.swapaxes(fm.site_rotations, -1, -2)) / (2 * eps)
        np.testing.assert_allclose(jac[:, :3, k], lin, atol=1e-7)
        np.testing.assert_allclose(jac[:, 3:, k], ang, atol=1e-7)


def test_jacobian_zero_for_dofs_that_do_not_move_site(skel_and_rng):
    skel, rng = skel_and_rng
    jac = site_jacobians(skel, random_q(skel, rng))
    for s in range(skel.n_sites):
        off = ~skel.site_dof_mask[s]
        assert np.all(jac[s][:, off] == 0.0)


def test_workspace_equals_functional_api(skel_and_rng):
    skel, rng = skel_and_rng
    sites = [skel.site_names[i] for i in (3, 0, 3)]
    q = random_q(skel, rng)
    ws = Kinematics(skel, sites, rows=6).update_checked(q)
    np.testing.assert_array_equal(ws.jacobian, stacked_jacobian(skel, q, sites))
    fk = forward_kinematics(skel, q)
    np.testing.assert_array_equal(ws.joint_positions, fk.joint_positions)
    np.testing.assert_array_equal(ws.site_positions, fk.site_positions[[3, 0, 3]])
    ws3 = Kinematics(skel, sites, rows=3).update_checked(q)
    np.testing.assert_array_equal(ws3.jacobian, stacked_jacobian(skel, q, sites, rows="position"))


def test_public_names(skel_and_rng):
    skel, rng = skel_and_rng
    q = random_q(skel, rng)
    assert animik.joint_positions(skel, q).shape == (skel.n_joints, 3)
    assert animik.site_positions(skel, q).shape == (skel.n_sites, 3)
    j = animik.site_jacobian(skel, q, skel.site_names[1])
    assert j.shape == (6, skel.n_dof)
    np.testing.assert_array_equal(j, site_jacobians(skel, q)[1])


def test_bad_input_is_rejected_clearly():
    skel = random_skeleton(np.random.default_rng(5), n_joints=4)
    with pytest.raises(ShapeError, match=f"trailing dimension of q must be {skel.n_dof}"):
        animik.joint_positions(skel, np.zeros(skel.n_dof + 1))
    with pytest.raises(ValueRangeError, match="NaN"):
        animik.joint_positions(skel, np.full(skel.n_dof, np.nan))
    with pytest.raises(ShapeError):
        animik.joint_positions(skel, "abc")
    with pytest.raises(UnknownNameError, match="unknown site 'nope'.*'s0'"):
        animik.site_jacobian(skel, skel.rest_q, "nope")


def test_zero_dof_and_no_site_skeleton():
    skel = animik.Skeleton.from_joints("rigid", [animik.Joint("a", None, (1, 2, 3))])
    fk = forward_kinematics(skel, np.zeros(0))
    np.testing.assert_array_equal(fk.joint_positions, [[1, 2, 3]])
    assert site_jacobians(skel, np.zeros((4, 0))).shape == (4, 0, 6, 0)


def test_com_position_and_jacobian_against_reference_fk(skel_and_rng):
    """Whole-body COM: the mass-weighted segment COMs of the independent FK reference; its
    Jacobian by central differences; batched shapes."""
    from animik.kinematics import com_jacobian, com_position

    skel, rng = skel_and_rng
    qs = random_q(skel, rng, (3,))
    c = com_position(skel, qs)
    J = com_jacobian(skel, qs)
    assert c.shape == (3, 3) and J.shape == (3, 3, skel.n_dof)
    for q, cq, Jq in zip(qs, c, J, strict=True):
        world, _ = reference_fk(skel, q)
        seg = np.einsum("jab,jb->ja", world[:, :3, :3], skel.coms) + world[:, :3, 3]
        np.testing.assert_allclose(cq, skel.masses @ seg / skel.masses.sum(), atol=1e-12)
        h = 1e-6
        fd = np.stack([(com_position(skel, q + h * e) - com_position(skel, q - h * e)) / (2 * h)
                       for e in np.eye(skel.n_dof)], axis=1)
        np.testing.assert_allclose(Jq, fd, atol=1e-7)


def test_com_of_a_massless_skeleton_is_an_error():
    from animik.kinematics import com_position
    from animik.skeleton import Dof, Joint, Skeleton

    skel = Skeleton.from_joints("massless", [Joint("a", None, (0, 0, 0), [Dof("a_rz", "rz")],
                                                   mass=0.0, com=(0, 0, 0),
                                                   inertia=np.zeros((3, 3)))], [])
    with pytest.raises(ShapeError, match="no mass"):
        com_position(skel, np.zeros(1))
