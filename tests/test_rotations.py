"""Rotation helpers: inverse pairs, batching, precision near the identity and half turns."""

import numpy as np
import pytest

from animik import rotations as R


def random_rot(rng, n):
    return R.rotvec_to_matrix(rng.normal(size=(n, 3)))


def test_quat_roundtrip_and_precision():
    rng = np.random.default_rng(0)
    m = random_rot(rng, 200)
    np.testing.assert_allclose(R.quat_to_matrix(R.matrix_to_quat(m)), m, atol=1e-14)
    # tiny and half-turn rotations keep full precision
    for angle in (1e-9, np.pi - 1e-9, np.pi):
        axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
        v = R.matrix_to_rotvec(R.axis_angle_to_matrix(axis, angle))
        if angle < 1:
            np.testing.assert_allclose(v, axis * angle, rtol=1e-6, atol=1e-20)
        else:
            assert np.isclose(np.linalg.norm(v), angle)
            assert abs(abs(v @ axis) - angle) < 1e-7


def test_rotvec_roundtrip():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(100, 3))
    v *= (np.pi * 0.99 / np.maximum(np.linalg.norm(v, axis=1), np.pi))[:, None]
    np.testing.assert_allclose(R.matrix_to_rotvec(R.rotvec_to_matrix(v)), v, atol=1e-12)


@pytest.mark.parametrize("order", ["xyz", "xzy", "yxz", "yzx", "zxy", "zyx"])
def test_euler_roundtrip(order):
    rng = np.random.default_rng(2)
    a = rng.uniform(-np.pi, np.pi, size=(50, 3))
    a[:, 1] = rng.uniform(-1.5, 1.5, size=50)
    m = R.euler_to_matrix(a, order)
    np.testing.assert_allclose(R.matrix_to_euler(m, order), a, atol=1e-10)
    # intrinsic composition: R = R_a0 @ R_a1 @ R_a2
    ref = (R.axis_matrix(order[0], a[:, 0]) @ R.axis_matrix(order[1], a[:, 1])
           @ R.axis_matrix(order[2], a[:, 2]))
    np.testing.assert_allclose(m, ref, atol=1e-14)


def test_euler_gimbal_lock_reconstructs_matrix():
    m = R.euler_to_matrix(np.array([0.3, np.pi / 2, 0.2]), "zxy")
    np.testing.assert_allclose(R.euler_to_matrix(R.matrix_to_euler(m, "zxy"), "zxy"), m, atol=1e-9)


def test_rpy_is_urdf_convention():
    rpy = np.array([0.1, -0.4, 1.2])
    m = R.axis_matrix("z", rpy[2]) @ R.axis_matrix("y", rpy[1]) @ R.axis_matrix("x", rpy[0])
    np.testing.assert_allclose(R.rpy_from_matrix(m), rpy, atol=1e-12)


def test_euler_precision_near_gimbal_lock():
    for order in ("zxy", "xyz", "zyx"):
        for pitch in (np.pi / 2 - 1e-7, -np.pi / 2 + 1e-9, np.pi / 2 - 1e-4):
            m = R.euler_to_matrix(np.array([0.4, pitch, -0.3]), order)
            back = R.euler_to_matrix(R.matrix_to_euler(m, order), order)
            np.testing.assert_allclose(back, m, atol=1e-14)
