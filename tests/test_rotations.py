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


# ---------------------------------------------------------------- the rotations package's checks
def test_zero_quaternion_is_an_error_not_nan():
    from animik.errors import AnimikError, ValueRangeError
    from animik.rotations import matrix_from_quat, quat_to_matrix

    assert quat_to_matrix is matrix_from_quat  # the old name stays importable
    with pytest.raises(ValueRangeError, match="zero length"):
        quat_to_matrix(np.zeros(4))
    with pytest.raises(AnimikError, match="NaN"):
        quat_to_matrix(np.array([[1.0, 0, 0, 0], [np.nan, 0, 0, 0]]))


def test_bad_euler_order_and_axis_are_option_errors():
    from animik.errors import OptionError
    from animik.rotations import axis_matrix, euler_to_matrix, matrix_to_euler

    for bad in ("xyx", "xy", "abc", 3):
        with pytest.raises(OptionError, match="permutation of 'xyz'"):
            matrix_to_euler(np.eye(3), bad)
    with pytest.raises(ValueError):  # OptionError is still a ValueError for old callers
        matrix_to_euler(np.eye(3), "zz")
    with pytest.raises(OptionError, match="'x', 'y', 'z'"):
        axis_matrix("w", 0.3)
    with pytest.raises(OptionError):
        euler_to_matrix(np.zeros(3), "xqz")


def test_shape_errors_are_about_shapes():
    from animik.errors import ShapeError
    from animik.rotations import check_quat, euler_to_matrix, quat_from_matrix, rotvec_to_matrix

    with pytest.raises(ShapeError, match=r"\(\.\.\., 3, 3\)"):
        quat_from_matrix(np.eye(4))
    with pytest.raises(ShapeError, match=r"\(\.\.\., 3\)"):
        rotvec_to_matrix(np.zeros(4))
    with pytest.raises(ShapeError, match=r"\(\.\.\., 3\) for order 'zxy'"):
        euler_to_matrix(np.zeros(2), "zxy")
    with pytest.raises(ShapeError):
        check_quat(np.zeros(3))


def test_check_matrix_rejects_non_rotations(rng):
    from animik.errors import ValueRangeError
    from animik.rotations import check_matrix, rotvec_to_matrix

    r = rotvec_to_matrix(rng.normal(size=(5, 3)))
    assert check_matrix(r) is not None
    with pytest.raises(ValueRangeError, match="orthonormal"):
        check_matrix(2.0 * r)
    with pytest.raises(ValueRangeError, match="reflection"):
        check_matrix(-np.eye(3))


def test_xyzw_round_trip_and_slerp_against_matrices(rng):
    from animik.rotations import (
        continuous_quats,
        matrix_from_quat,
        matrix_to_rotvec,
        quat_from_matrix,
        quat_slerp,
        rotvec_to_matrix,
        wxyz_from_xyzw,
        xyzw_from_wxyz,
    )

    q = quat_from_matrix(rotvec_to_matrix(rng.normal(size=(8, 3))))
    assert np.array_equal(wxyz_from_xyzw(xyzw_from_wxyz(q)), q)
    assert np.array_equal(xyzw_from_wxyz(q)[:, 3], q[:, 0])
    # slerp at u follows the geodesic: R_a exp(u log(R_aᵀ R_b)), checked through matrices
    a, b = q[:4], q[4:]
    u = rng.uniform(size=4)
    ra, rb = matrix_from_quat(a), matrix_from_quat(b)
    want = ra @ rotvec_to_matrix(u[:, None] * matrix_to_rotvec(np.swapaxes(ra, -1, -2) @ rb))
    np.testing.assert_allclose(matrix_from_quat(quat_slerp(a, b, u)), want, atol=1e-12)
    # sign continuity keeps the rotations, flips only signs
    flipped = q * np.where(np.arange(8) % 2, -1.0, 1.0)[:, None]
    c = continuous_quats(flipped)
    np.testing.assert_allclose(matrix_from_quat(c), matrix_from_quat(q), atol=1e-12)
    assert np.all(np.einsum("ti,ti->t", c[1:], c[:-1]) >= 0)


def test_inverse_right_jacobian_against_finite_differences(rng):
    """``d/dt log`` of ``R_0 exp(v + t δ)``: angular velocity ``J_r(v) δ``, so ``J_r⁻¹`` maps it
    back to ``δ``."""
    from animik.rotations import inverse_right_jacobian, rotvec_to_matrix

    for _ in range(5):
        v = rng.normal(size=3)
        d = rng.normal(size=3)
        h = 1e-6
        r_p, r_m = rotvec_to_matrix(v + h * d), rotvec_to_matrix(v - h * d)
        rdot = (r_p - r_m) / (2 * h)
        w_hat = rotvec_to_matrix(v).T @ rdot  # body angular velocity, skew form
        omega = np.array([w_hat[2, 1], w_hat[0, 2], w_hat[1, 0]])
        np.testing.assert_allclose(inverse_right_jacobian(v) @ omega, d, atol=1e-7)
