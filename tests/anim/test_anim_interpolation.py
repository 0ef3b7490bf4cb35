"""Interpolation of joint and effector tracks: key hitting, continuity, slerp, gimbal, limits."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q, random_skeleton
from scipy.interpolate import PchipInterpolator
from scipy.spatial.transform import Rotation, Slerp

from animik import anim
from animik.anim.interpolation import MODE_CODE, eval_rotation, eval_scalar, pchip_slopes
from animik.joints import dof_rotation_product, joint_layouts, local_transforms
from animik.rigs import load_rig
from animik.rotations import euler_to_matrix, matrix_to_rotvec, rotvec_to_matrix
from animik.skeleton import Dof, Joint, Skeleton


def _ball(order: str = "zxy", lower=-np.inf, upper=np.inf, signs=(1, 1, 1)) -> Skeleton:
    """One BVH-style ball joint (three rotation DoFs in ``order``) with a child."""
    dofs = [Dof(f"r{a}{i}", "r", lower, upper, axis=tuple(s * np.eye(3)["xyz".index(a)]))
            for i, (a, s) in enumerate(zip(order, signs, strict=True))]
    return Skeleton.from_joints("ball", [Joint("root", None, dofs=dofs), Joint("tip", "root", (0, 0, 1))])


def _geodesic_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.norm(matrix_to_rotvec(np.swapaxes(a, -1, -2) @ b), axis=-1)


def _random_clip(skel: Skeleton, rng, n_keys: int, mode: str, scale: float = 0.6,
                 inside: bool = False) -> anim.Clip:
    """Random keys; ``inside``: within the middle half of every finite range (off the limits)."""
    times = np.sort(rng.uniform(0.0, 3.0, n_keys))
    times[0] = 0.0
    lo, hi = skel.lower, skel.upper
    if inside:
        fin = np.isfinite(lo) & np.isfinite(hi)
        mid = np.where(fin, 0.5 * (np.where(fin, lo, 0) + np.where(fin, hi, 0)), skel.rest_q)
        half = np.where(fin, 0.25 * (np.where(fin, hi, 0) - np.where(fin, lo, 0)), scale)
        poses = mid + rng.uniform(-1, 1, size=(n_keys, skel.n_dof)) * half
    else:
        base = np.clip(skel.rest_q, lo, hi)
        poses = np.clip(base + rng.normal(size=(n_keys, skel.n_dof)) * scale, lo, hi)
    return anim.clip_from_poses(skel, times, poses, interpolation=mode)


@pytest.mark.parametrize("mode", ["linear", "smooth", "step"])
@pytest.mark.parametrize("rig", ["body95", "wheeled20", "random"])
def test_keys_are_hit_exactly(rig, mode, rng):
    skel = random_skeleton(rng, 10) if rig == "random" else load_rig(rig)
    clip = _random_clip(skel, rng, 6, mode)
    kt = clip.key_times
    q = clip.sample(kt)
    for tr in clip.tracks:
        cols = list(skel.joint_dofs(tr.joint))
        want = np.clip(tr.values, skel.lower[cols], skel.upper[cols])
        np.testing.assert_array_equal(q[:, cols], want)
    assert skel.within_limits(clip.sample(np.linspace(-1, 4, 301))).all()


@pytest.mark.parametrize("rig", ["body95", "random"])
def test_linear_is_continuous_and_smooth_is_c1(rig, rng):
    skel = random_skeleton(rng, 10, translations=True) if rig == "random" else load_rig(rig)
    if rig == "random":
        skel = skel.replace(lower=np.full(skel.n_dof, -np.inf), upper=np.full(skel.n_dof, np.inf))
    for mode in ("linear", "smooth"):
        clip = _random_clip(skel, rng, 5, mode, scale=0.25, inside=True)
        inner = clip.key_times[1:-1]
        eps = 1e-6
        left, at, right = clip.sample(inner - eps), clip.sample(inner), clip.sample(inner + eps)
        # C0: both sides converge to the key
        assert np.abs(left - at).max() < 1e-4 and np.abs(right - at).max() < 1e-4
        if mode == "smooth":
            h = 1e-4
            d_left = (at - clip.sample(inner - h)) / h
            d_right = (clip.sample(inner + h) - at) / h
            slope = np.abs(d_left) + np.abs(d_right) + 1.0
            # one-sided differences agree up to O(h) curvature terms: C1
            assert np.max(np.abs(d_left - d_right) / slope) < 5e-3
            # linear interpolation has a kink at keys; smooth has none
        else:
            h = 1e-4
            d_left = (at - clip.sample(inner - h)) / h
            d_right = (clip.sample(inner + h) - at) / h
            assert np.max(np.abs(d_left - d_right)) > 1e-2


def test_smooth_scalar_is_scipy_pchip(rng):
    times = np.sort(rng.uniform(0, 5, 9))
    vals = rng.normal(size=(9, 3))
    t = np.linspace(times[0], times[-1], 500)
    got = eval_scalar(times, vals, np.full(9, MODE_CODE["smooth"]), t, pchip_slopes(times, vals))
    np.testing.assert_allclose(got, PchipInterpolator(times, vals)(t), atol=1e-12)


def test_smooth_rotation_has_continuous_angular_velocity(rng):
    times = np.array([0.0, 0.4, 1.5, 2.0, 3.1])
    rots = rotvec_to_matrix(rng.normal(size=(5, 3)) * 0.8)
    modes = np.full(5, MODE_CODE["smooth"])
    cache: dict = {}
    h = 1e-5
    for tk in times[1:-1]:
        r = [eval_rotation(times, rots, modes, np.array([x]), cache)[0][0] for x in (tk - h, tk, tk + h)]
        w_left = matrix_to_rotvec(r[0].T @ r[1]) / h  # body angular velocity
        w_right = matrix_to_rotvec(r[1].T @ r[2]) / h
        assert np.linalg.norm(w_left - w_right) < 1e-3 * (1 + np.linalg.norm(w_left))
    # key hitting and two keys = slerp
    np.testing.assert_array_equal(eval_rotation(times, rots, modes, times, {})[0], rots)
    t = np.linspace(0, 0.4, 9)
    two = eval_rotation(times[:2], rots[:2], modes[:2], t, {})[0]
    ref = Slerp(times[:2], Rotation.from_matrix(rots[:2]))(t).as_matrix()
    np.testing.assert_allclose(two, ref, atol=1e-12)


def test_stepped_holds():
    skel = _ball()
    a, b, c = np.array([0.1, 0.2, 0.3]), np.array([1.0, -0.5, 0.2]), np.array([0.0, 0.0, 0.0])
    clip = anim.clip_from_poses(skel, [0.0, 1.0, 2.0], [a, b, c], interpolation="step")
    q = clip.sample([0.0, 0.3, 0.999999, 1.0, 1.5, 2.0, 5.0])
    np.testing.assert_array_equal(q, [a, a, a, b, b, c, c])


def test_slerp_known_value():
    # 90° about z halfway is 45° about z, for a ZXY ball joint and a -z axis joint.
    for signs in ((1, 1, 1), (-1, 1, 1)):
        skel = _ball("zxy", signs=signs)
        clip = anim.clip_from_poses(skel, [0.0, 2.0], [[0.0, 0, 0], [np.pi / 2, 0, 0]])
        np.testing.assert_allclose(clip.sample([1.0, 0.5]), [[np.pi / 4, 0, 0], [np.pi / 8, 0, 0]],
                                   atol=1e-14)
    # a general pair against scipy's slerp, ZYX and a left-handed axis triple
    rng = np.random.default_rng(3)
    for order, signs in (("zyx", (1, 1, 1)), ("xzy", (1, -1, 1)), ("yxz", (1, 1, -1))):
        skel = _ball(order, signs=signs)
        keys = rng.uniform(-0.9, 0.9, size=(2, 3))
        clip = anim.clip_from_poses(skel, [0.0, 1.0], keys)
        t = np.linspace(0, 1, 51)
        r = local_transforms(skel, clip.sample(t))[0][:, 0]
        rk = local_transforms(skel, keys)[0][:, 0]
        ref = Slerp([0, 1], Rotation.from_matrix(rk))(t).as_matrix()
        assert _geodesic_angle(r, ref).max() < 1e-10


def test_no_gimbal_flip_through_singular_region():
    # ZXY ball joint; the geodesic between the keys passes 2.7° from gimbal lock (middle
    # angle 90°). Per-DoF Euler interpolation leaves the geodesic by 7°; ours follows it.
    skel = _ball("zxy")
    a, b = np.radians([-90.0, 80.0, 60.0]), np.radians([90.0, 80.0, -60.0])
    clip = anim.clip_from_poses(skel, [0.0, 1.0], [a, b])
    t = np.linspace(0.0, 1.0, 4001)
    q = clip.sample(t)
    r = euler_to_matrix(q, "zxy")
    geo = Slerp([0, 1], Rotation.from_matrix(euler_to_matrix(np.stack([a, b]), "zxy")))(t).as_matrix()
    assert _geodesic_angle(r, geo).max() < 1e-9
    assert np.degrees(q[:, 1].max()) > 87.0  # it did cross the singular region
    naive = euler_to_matrix(a + t[:, None] * (b - a), "zxy")
    assert _geodesic_angle(naive, geo).max() > 0.1
    # continuous DoF values (Euler angles move fast near the lock, but never jump)
    assert np.abs(np.diff(q, axis=0)).max() < 0.01
    np.testing.assert_array_equal(q[[0, -1]], [a, b])


def test_branch_continuity_no_2pi_jumps():
    skel = _ball("zxy")
    # a root yaw winding up in steps below pi, and values beyond ±pi
    keys = np.array([[0.0, 0.2, 0.0], [2.5, 0.3, 0.1], [5.0, 0.2, 0.0], [7.5, 0.1, -0.2],
                     [3.0, 0.0, 3.0], [3.4, 0.1, 3.3]])
    clip = anim.clip_from_poses(skel, np.arange(6.0), keys, interpolation="smooth")
    t = np.linspace(0, 5, 5001)
    q = clip.sample(t)
    assert np.abs(np.diff(q, axis=0)).max() < 0.02
    np.testing.assert_array_equal(clip.sample(np.arange(6.0)), keys)
    # a deliberate wind-up by more than pi in one segment is interpolated per DoF (no shortcut)
    clip = anim.clip_from_poses(skel, [0.0, 1.0], [[0.0, 0.0, 0.0], [4.5, 0.0, 0.0]])
    np.testing.assert_allclose(clip.sample([0.5])[0], [2.25, 0, 0], atol=1e-12)


def test_limits_respected():
    skel = _ball("zxy", lower=-0.6, upper=0.6)
    rng = np.random.default_rng(7)
    keys = rng.uniform(-0.6, 0.6, size=(6, 3))
    keys[1] = [0.6, 0.6, 0.6]
    keys[2] = [-0.6, 0.6, -0.6]
    for mode in ("linear", "smooth"):
        clip = anim.clip_from_poses(skel, np.arange(6.0), keys, interpolation=mode)
        q = clip.sample(np.linspace(0, 5, 2001))
        assert skel.within_limits(q).all()
    # body95 shoulders (3 DoF with limits) and wrists (2 DoF with limits)
    body = load_rig("body95")
    clip = _random_clip(body, rng, 7, "smooth", scale=1.0)
    assert body.within_limits(clip.sample(np.linspace(0, 3, 601))).all()


def test_two_dof_joint_least_squares(rng):
    skel = load_rig("wheeled20")
    lay = joint_layouts(skel)[skel.joint_index("l_wrist")]
    assert lay.group is not None and lay.group.k == 2
    keys = np.array([[-1.0, -0.6], [1.2, 0.7]])
    clip = anim.set_joint_key(anim.set_joint_key(anim.new_clip(skel), "l_wrist", 0.0, keys[0]),
                              "l_wrist", 1.0, keys[1])
    t = np.linspace(0, 1, 401)
    q = clip.sample(t)[:, lay.dofs]
    rk = dof_rotation_product(lay.group.axes, keys)
    geo = Slerp([0, 1], Rotation.from_matrix(rk))(t).as_matrix()
    got = dof_rotation_product(lay.group.axes, q)
    dev = _geodesic_angle(got, geo)
    # the 2-DoF projection of the geodesic: nearer to it than per-DoF interpolation (whose
    # poses are also reachable by the joint), and a least-squares optimum
    naive = dof_rotation_product(lay.group.axes, keys[0] + t[:, None] * (keys[1] - keys[0]))
    assert np.all(dev <= _geodesic_angle(naive, geo) + 1e-12)
    assert dev.max() < 0.5
    for i in (50, 200, 350):
        for d in np.eye(2) * 1e-4:
            for s in (1, -1):
                alt = dof_rotation_product(lay.group.axes, q[i] + s * d)
                assert np.trace(alt @ geo[i].T) <= np.trace(got[i] @ geo[i].T) + 1e-12
    assert np.abs(np.diff(q, axis=0)).max() < 0.02
    np.testing.assert_array_equal(q[[0, -1]], keys)


def test_effector_track_interpolation():
    skel = load_rig("fig2")
    r0, r1 = np.eye(3), rotvec_to_matrix(np.array([0.0, 0.0, np.pi / 2]))
    clip = anim.add_effector_key(anim.new_clip(skel), "l_hand", 0.0, [0, 0, 1], r0)
    clip = anim.add_effector_key(clip, "l_hand", 2.0, [1, 0, 1], r1)
    pos, rot = clip.sample_targets([0.0, 1.0, 2.0, 3.0])["l_hand"]
    np.testing.assert_allclose(pos, [[0, 0, 1], [0.5, 0, 1], [1, 0, 1], [1, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(matrix_to_rotvec(rot[1]), [0, 0, np.pi / 4], atol=1e-14)


def test_random_skeleton_sampling_is_pose_of_keys(rng):
    # non-group joints (general axes, repeated axes) are interpolated per DoF
    skel = random_skeleton(rng, 12)
    keys = random_q(skel, rng, (3,)) * 0.5
    clip = anim.clip_from_poses(skel, [0.0, 1.0, 2.0], keys)
    np.testing.assert_array_equal(clip.sample([0.0, 1.0, 2.0]),
                                  np.clip(keys, skel.lower, skel.upper))
    lay = joint_layouts(skel)
    q = clip.sample([0.5])[0]
    for L in lay:
        if L.group is None:
            np.testing.assert_allclose(q[L.dofs], np.clip(0.5 * (keys[0] + keys[1]), skel.lower,
                                                          skel.upper)[L.dofs], atol=1e-12)
