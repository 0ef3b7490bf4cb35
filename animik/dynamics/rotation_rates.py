"""Velocities and accelerations of ball joints near gimbal lock, from the rotation itself.

The check (:func:`animik.dynamics.clip.clip_states`) fits a Savitzky-Golay cubic to every DoF
value. For a joint whose three rotation DoFs are Euler angles (a BVH ``Zrotation Xrotation
Yrotation`` triple) that is fine while the middle angle stays away from +-90 deg; near it (gimbal
lock) the first and third angles swing by tens of degrees per frame while the rotation turns a
few (raw mocapbank's knees bend ~90 deg about the middle axis: 72 deg per frame of ``rz`` and
``ry`` against a 5 deg turn), and capture files jump between the two Euler branches ``(a, b,
c)`` and ``(a + pi, pi - b, c + pi)`` there (108 deg in one frame, the same rotation). A cubic
through such angles is not the joint's motion: the check then reads accelerations of many
body weights (docs/dynamics.md 5j).

For such a joint (:func:`lock_groups`: its angles jump a quarter turn between two frames while
the rotation turns less than half that) the states are rebuilt from the
rotation: the joint's rotation as a quaternion (signs made continuous), the same
Savitzky-Golay operators applied to its four components, the fitted quaternion normalised;
the angular velocity and acceleration ``omega = 2 vec(q' q*)``, ``alpha = 2 vec(q'' q*)`` (in
the frame before the DoF chain); the DoF values by a Tait-Bryan decomposition on the branch
nearest the raw frame; and the DoF rates from the chain's angular-velocity map ``E = [a1, R1
a2, R1 R2 a3]``: ``qd = E^+ omega``, ``qdd = E^+ (alpha - E' qd)`` with ``E' qd = (a1 qd1) x (R1 a2
qd2) + (a1 qd1 + R1 a2 qd2) x (R1 R2 a3 qd3)``. Inverse dynamics on the DoF chain then sees the
rotation's own angular velocity and acceleration (``E qd = omega``), whatever the Euler angles
do. Every other joint keeps the per-DoF fit (bit for bit).
"""

from __future__ import annotations

import numpy as np

from ..joints import joint_layouts, tb_angles
from ..rotations import continuous_quats, matrix_from_axis_chain, quat_from_matrix
from ..skeleton import Skeleton

#: a DoF step larger than this between frames (rad, after unwrapping) while the joint's rotation
#: turns by less than ``JUMP / 2``: the angles jumped to the other Euler branch
JUMP = 0.5 * np.pi
#: ``|cos(middle angle)|`` below this on some frame: the joint comes within ~11.5 deg of gimbal
#: lock, where its first and third angles turn much faster than the joint
LOCK_COS = 0.2


def lock_groups(skel: Skeleton, q: np.ndarray, near: np.ndarray | None = None
                ) -> list[np.ndarray]:
    """The three-DoF rotation groups of ``q (T, n_dof)`` (unwrapped) whose Euler angles jump
    between branches: on some frame a DoF steps by more than ``JUMP`` while the rotation turns
    by less than half of it (a fast turn, or a retarget's first-frame glitch, is not a jump).
    Each as its ``(3,)`` DoF indices.

    A joint that only comes near the lock with continuous angles keeps the per-DoF fit (raw
    Bandai's spine sits at 87 deg, its first and third angles turning 8 deg per frame together:
    a cubic follows them; body95's shoulders pass near the lock on five of the shared clips and
    keep their checks bit for bit). Measured in docs/dynamics.md 5j: taking the rotation's
    states for those too made the clip filter's correction (which differentiates the lean
    modes' DoFs with the per-DoF operators) fail its banded solve on the raw Bandai walk.

    ``near``: ``(J,)`` bool, joints for which coming near the lock (``|cos(middle angle)| <
    LOCK_COS`` on some frame) is enough: the legs (:func:`leg_joints`), which only the plant
    step's and the hip strategy's leg IK move (raw mocapbank's and louise's knees bend about
    the middle axis through 90 deg).
    """
    out = []
    for lay in joint_layouts(skel):
        g = lay.group
        if g is None or g.k != 3 or q.shape[0] < 2:
            continue
        if near is not None and near[g.joint] \
                and np.abs(np.cos(q[:, g.dofs[1]])).min() < LOCK_COS:
            out.append(g.dofs)
            continue
        step = np.abs(np.diff(q[:, g.dofs], axis=0)).max(axis=1)
        t = np.flatnonzero(step > JUMP)
        if not len(t):
            continue
        R0 = matrix_from_axis_chain(g.axes, q[t][:, g.dofs])
        R1 = matrix_from_axis_chain(g.axes, q[t + 1][:, g.dofs])
        cos = 0.5 * (np.einsum("tij,tij->t", R0, R1) - 1.0)  # cos of the turn R0^T R1
        if (cos > np.cos(0.5 * step[t])).any():
            out.append(g.dofs)
    return out


def leg_joints(skel: Skeleton, point_joint: np.ndarray) -> np.ndarray:
    """``(J,)`` bool: joints that carry a contact point below them, the root excepted."""
    legs = skel.joint_ancestor_mask[np.unique(point_joint)].any(axis=0)
    legs[int(np.flatnonzero(skel.parents < 0)[0])] = False
    return legs


def near_lock_joints(skel: Skeleton, point_joint: np.ndarray) -> np.ndarray:
    """``(J,)`` bool: the joints for which coming near the lock is enough (:func:`lock_groups`'s
    ``near``): the legs (:func:`leg_joints`) and the **root**. A root turning near the lock
    swings its first and third angles by 0.4-0.6 rad per frame while the pelvis turns 0.1 rad
    (the raw cmu_daz pirouette's spin, |cos(middle)| down to 0.07; raw Mixamo's hips 0.10): the
    per-DoF cubic then reads the whole body's acceleration wrong (the pirouette's required force
    5 body weights off the centre of mass's own acceleration at 174 and 240-246; docs/dynamics.md
    5j, "The raw pirouette")."""
    near = leg_joints(skel, point_joint)
    near[int(np.flatnonzero(skel.parents < 0)[0])] = True
    return near


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quaternion products ``a b`` (wxyz, ``(..., 4)``)."""
    aw, av = a[..., :1], a[..., 1:]
    bw, bv = b[..., :1], b[..., 1:]
    return np.concatenate([aw * bw - np.sum(av * bv, -1, keepdims=True),
                           aw * bv + bw * av + np.cross(av, bv)], axis=-1)


def group_states(skel: Skeleton, q: np.ndarray, dofs: np.ndarray, D0, D1, D2
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values, rates and accelerations ``(T, 3)`` each of one three-DoF rotation group.

    Args:
        skel: the skeleton. q: ``(T, n_dof)`` raw poses (rad). dofs: ``(3,)`` the group.
        D0, D1, D2: ``(T, T)`` Savitzky-Golay operators (value, first and second derivative,
            per second) of the check.

    Returns:
        ``(values rad, rates rad/s, accelerations rad/s^2)`` with ``E(values) rates`` the
        fitted rotation's angular velocity (module docstring).
    """
    axes = np.asarray(skel.dof_axis[dofs], dtype=float)
    g = next(lay.group for lay in joint_layouts(skel)
             if lay.group is not None and np.array_equal(lay.group.dofs, dofs))
    quat = continuous_quats(quat_from_matrix(matrix_from_axis_chain(axes, q[:, dofs])))
    Q0, Q1, Q2 = (np.asarray(D @ quat) for D in (D0, D1, D2))
    n = np.linalg.norm(Q0, axis=1, keepdims=True)
    u = Q0 / n
    conj = u * np.array([1.0, -1.0, -1.0, -1.0])
    omega = 2.0 * _qmul(Q1 / n, conj)[:, 1:]
    alpha = 2.0 * _qmul(Q2 / n, conj)[:, 1:]
    # the rotation of the fitted quaternion, as the group's DoF values on the raw frame's branch
    w, x, y, z = u.T
    R = np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                  np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                  np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)],
                 axis=-2)
    canon = np.einsum("ji,tjk,kl->til", g.basis, R, g.basis)
    lo, hi = skel.lower[dofs], skel.upper[dofs]
    val = tb_angles(canon, g.signs, q[:, dofs], lo, hi)
    # the chain's angular-velocity map at those values
    R1 = matrix_from_axis_chain(axes[:1], val[:, :1])
    R12 = matrix_from_axis_chain(axes[:2], val[:, :2])
    e1 = np.broadcast_to(axes[0], (len(val), 3))
    e2 = R1 @ axes[1]
    e3 = R12 @ axes[2]
    E = np.stack([e1, e2, e3], axis=-1)  # (T, 3, 3), columns
    Ep = np.linalg.pinv(E, rcond=1e-9)
    qd = np.einsum("tij,tj->ti", Ep, omega)
    w1, w2, w3 = e1 * qd[:, :1], e2 * qd[:, 1:2], e3 * qd[:, 2:]
    bias = np.cross(w1, w2) + np.cross(w1 + w2, w3)
    qdd = np.einsum("tij,tj->ti", Ep, alpha - bias)
    return val, qd, qdd

