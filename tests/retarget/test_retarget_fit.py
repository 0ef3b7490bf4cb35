"""Rotations → DoF values (the reference pose fit) and foot contacts."""

from __future__ import annotations

import numpy as np
import pytest

import animik
from animik.kinematics import forward_kinematics
from animik.retarget.fit import JointFit, PoseFitter
from animik.semantics.contacts import (
    ContactParams,
    FootState,
    detect_contacts,
    estimate_ground,
    hold_foot,
    horizontal_speed,
)


def _random_q(skel, rng, n, shrink=0.9):
    lo, hi = skel.lower, skel.upper
    c = 0.5 * (np.where(np.isfinite(lo), lo, -np.pi) + np.where(np.isfinite(hi), hi, np.pi))
    h = 0.5 * (np.where(np.isfinite(hi), hi, np.pi) - np.where(np.isfinite(lo), lo, -np.pi))
    return c + shrink * h * rng.uniform(-1, 1, size=(n, skel.n_dof))


@pytest.mark.parametrize("rig", ["body95", "fig2", "biped12"])
def test_fit_reproduces_representable_poses(rig, rng):
    """World rotations of FK(q) → fitted q' → the same joint rotations (away from gimbal lock)."""
    skel = animik.load_rig(rig)
    q = _random_q(skel, rng, 200, shrink=0.6)
    fk = forward_kinematics(skel, q)
    fitted = PoseFitter(skel).fit(fk.joint_rotations, np.broadcast_to(q, q.shape).copy())
    assert np.all(fitted >= skel.lower) and np.all(fitted <= skel.upper)
    fk2 = forward_kinematics(skel, fitted)
    err = np.abs(fk2.joint_rotations - fk.joint_rotations).max()
    assert err < 2e-3


def test_one_dof_fit_is_exact_least_squares(rng):
    skel = animik.load_rig("body95")
    j = skel.joint_index("l_knee")
    jf = JointFit(skel, j, skel.rest_q)
    from animik.rotations import axis_angle_to_matrix, rotvec_to_matrix

    theta = rng.uniform(0, 2, size=50)
    L = axis_angle_to_matrix(jf.axes[0], theta)
    assert np.allclose(jf.fit(L)[:, 0], theta, atol=1e-12)
    # with an off-axis perturbation: no other angle is closer in the Frobenius norm
    Lp = L @ rotvec_to_matrix(rng.normal(scale=0.2, size=(50, 3)))
    best = jf.fit(Lp)[:, 0]
    for d in (-1e-3, 1e-3):
        worse = axis_angle_to_matrix(jf.axes[0], best + d)
        assert np.all(np.linalg.norm(worse - Lp, axis=(1, 2)) >= np.linalg.norm(
            axis_angle_to_matrix(jf.axes[0], best) - Lp, axis=(1, 2)) - 1e-12)


def test_fit_is_batched_like_single_frames(rng):
    skel = animik.load_rig("body95")
    q = _random_q(skel, rng, 20, shrink=0.5)
    R = forward_kinematics(skel, q).joint_rotations
    f = PoseFitter(skel)
    many = f.fit(R, q.copy())
    one = np.stack([f.fit(R[i:i + 1], q[i:i + 1].copy())[0] for i in range(len(q))])
    # free root angles are unwrapped along time in the batch: compare modulo 2π
    d = np.angle(np.exp(1j * (many - one)))
    assert np.abs(d).max() < 1e-9


def test_gimbal_lock_split_is_smooth():
    """Arm hanging (abduction −90°): the coupled flexion/rotation split follows the prior."""
    skel = animik.load_rig("body95")
    k = [skel.dof_index(n) for n in ("l_shoulder_horizontal_flexion", "l_shoulder_abduction",
                                     "l_shoulder_rotation")]
    T = 100
    q = np.zeros((T, skel.n_dof))
    q[:, k[0]] = np.linspace(0.3, 0.5, T)   # true split drifts slowly ...
    q[:, k[1]] = -np.pi / 2 + 1e-7          # ... at the lock
    q[:, k[2]] = np.linspace(-0.2, 0.1, T)
    fitted = PoseFitter(skel).fit(forward_kinematics(skel, q).joint_rotations, q.copy())
    # same rotation, and no jumps between frames
    R1 = forward_kinematics(skel, fitted).joint_rotations[:, skel.joint_index("l_shoulder")]
    R0 = forward_kinematics(skel, q).joint_rotations[:, skel.joint_index("l_shoulder")]
    assert np.abs(R1 - R0).max() < 1e-4
    assert np.abs(np.diff(fitted[:, k], axis=0)).max() < 0.02


# ----------------------------------------------------------------------------- contacts
def _steps(fps=60.0, n_steps=4):
    """A foot that stands 0.5 s, swings 0.4 s (10 cm high, 0.6 m forward), repeatedly."""
    pts = []
    x = 0.0
    for _ in range(n_steps):
        for _ in range(int(0.5 * fps)):
            pts.append((x, 0.0, 0.003))
        n = int(0.4 * fps)
        for i in range(n):
            s = (i + 1) / n
            pts.append((x + 0.6 * s, 0.0, 0.003 + 0.1 * np.sin(np.pi * s)))
        x += 0.6
    return np.array(pts)[:, None, :]


def test_detect_contacts_phases_and_hysteresis():
    fps = 60.0
    p = _steps(fps)
    flags = detect_contacts(p[..., 2], horizontal_speed(p, fps), fps)
    from animik.semantics.contacts import contact_phases

    ph = contact_phases(flags)[0]
    assert len(ph) == 4
    for a, b in ph:
        assert 25 <= b - a <= 33  # the 0.5 s stance (30 frames), give or take the edges
    # a blip shorter than min_duration is dropped; a short gap is closed
    h = np.full((60, 1), 0.2)
    v = np.zeros((60, 1))
    h[10:12] = 0.0
    h[30:40] = 0.0
    h[42:50] = 0.0
    f = detect_contacts(h, v, fps, ContactParams(min_duration=0.08, min_gap=0.05))
    assert not f[10:12].any() and f[30:50].all()


def test_hold_foot_fixes_xy_and_never_goes_below_ground():
    st = FootState()
    h_sole = 0.02
    out = []
    free = [np.array([0.0, 0, 0.05]), np.array([0.01, 0, 0.03]), np.array([0.02, 0, 0.0]),
            np.array([0.03, 0, -0.05]), np.array([0.2, 0, 0.3]), np.array([0.4, 0, -0.1])]
    contact = [True, True, True, True, False, False]
    for c, f in zip(contact, free, strict=True):
        t, st = hold_foot(c, f, st, h_sole, n_in=1, n_out=1)
        out.append(t)
    out = np.array(out)
    assert np.allclose(out[:4, :2], [0.0, 0.0])      # held where the contact began
    assert np.all(out[:, 2] >= h_sole - 1e-12)       # never through the floor
    assert out[2, 2] == pytest.approx(h_sole)        # on the ground once eased down
    assert 0.0 < out[4, 0] < 0.2                     # blending back to the free path
    assert out[5, 0] == pytest.approx(0.4) and out[5, 2] == pytest.approx(h_sole)


def test_estimate_ground_plane():
    rng = np.random.default_rng(3)
    T = 300
    xy = np.stack([np.linspace(0, 3, T), 0.2 * np.sin(np.linspace(0, 6, T))], axis=1)
    z = 0.05 + 0.02 * xy[:, 0] - 0.01 * xy[:, 1]
    feet = np.stack([np.column_stack([xy, z + rng.normal(scale=0.002, size=T)]),
                     np.column_stack([xy + 0.1, z + 0.15])], axis=1)
    plane = estimate_ground(feet, np.zeros((T, 2)))
    assert np.allclose(plane, [0.05, 0.02, -0.01], atol=3e-3)
    flat = estimate_ground(feet[:20], np.zeros((20, 2)))  # too short a walk: a level floor
    assert flat[1] == 0 and flat[2] == 0
