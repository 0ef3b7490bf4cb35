"""The plant step's batched leg IK (animik.dynamics._leg_ik.hold_points) equals the per-frame
Python Gauss-Newton it replaced (kept here as the reference: the composite-rigid-body pass for
the DoF axes, opspace's Jacobian, numpy's solve), frame by frame, on a short walk of body95;
it keeps the rig's joint limits (docs/dynamics.md 5i, "Joint limits in the leg IK")."""

from __future__ import annotations

import numpy as np

import animik
from animik.dynamics._leg_ik import INSIDE, area_leg, hold_points
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.opspace import _axes_and_mass, _jacobian


def _hold_reference(skel, q0, dofs, joints, local, X, lam, iterations):
    """The plant step's former ``_hold`` (one frame), verbatim, and the rig's limits kept as
    a projected damped least squares: start clipped 5 deg inside the box, DoFs at a bound
    pushed out of it fixed (the others solved without them), steps clipped into the box."""
    lo, hi = skel.lower[dofs], skel.upper[dofs]
    q = q0.copy()
    inside = INSIDE  # a DoF at a limit starts 5 deg inside (a straight knee)
    wide = hi - lo > 2 * inside
    q[dofs] = np.where(wide, np.clip(q[dofs], lo + inside, hi - inside), np.clip(q[dofs], lo, hi))
    for _ in range(iterations):
        Rw, pw, S, _ = _axes_and_mass(skel, q)
        x = pw[joints] + np.einsum("pab,pb->pa", Rw[joints], local)
        r = (X - x).ravel()
        if np.abs(r).max() < 1e-4:
            break
        Jf = _jacobian(skel, Rw, pw, S, joints, local, False)[:, dofs]
        H = Jf.T @ Jf + lam * np.eye(len(dofs))
        g = Jf.T @ r - lam * (q[dofs] - q0[dofs])
        fix = ((q[dofs] <= lo) & (g < 0)) | ((q[dofs] >= hi) & (g > 0))
        dq = np.zeros(len(dofs))
        f = ~fix
        dq[f] = np.linalg.solve(H[np.ix_(f, f)], g[f])
        big = np.abs(dq).max()
        q[dofs] = np.clip(q[dofs] + (dq * min(1.0, 0.2 / big) if big > 0 else dq), lo, hi)
    return q


def _walk(skel, T=40):
    """Hips, knees and ankles swinging, the pelvis swaying: a short stepping clip."""
    t = np.arange(T) / 30.0
    q = np.tile(skel.rest_q, (T, 1))
    for side, ph in (("l", 0.0), ("r", np.pi)):
        q[:, skel.dof_index(f"{side}_hip_flexion")] += 0.4 * np.sin(2 * np.pi * t + ph)
        q[:, skel.dof_index(f"{side}_knee_flexion")] += 0.5 + 0.4 * np.sin(2 * np.pi * t + ph)
        q[:, skel.dof_index(f"{side}_ankle_dorsiflexion")] += 0.2 * np.cos(2 * np.pi * t + ph)
    q[:, skel.dof_index("pelvis_tx")] += 0.05 * np.sin(2 * np.pi * t)
    return q


def test_hold_points_equals_the_per_frame_reference():
    skel = animik.load_rig("body95")
    q = _walk(skel)
    cm = contact_model_for_clip(skel, q)
    pts = cm.points(skel, q)
    anc = skel.joint_ancestor_mask
    root = int(np.flatnonzero(skel.parents < 0)[0])
    moved = 0.0
    at_bound = False
    for a in range(len(cm.names)):
        P_a = np.flatnonzero(cm.point_area == a)
        joints = cm.point_joint[P_a]
        legj = anc[np.unique(joints)].any(axis=0)
        legj[root] = False
        dofs = np.flatnonzero(legj[skel.dof_joint])
        # targets: the sole flattened onto the floor and pulled 3 cm back (a held stance)
        X = pts[:, P_a].copy()
        X[..., 2] = 0.005
        X[..., 0] -= 0.03
        got = hold_points(skel, q, dofs, joints, cm.point_local[P_a], X, 1e-2, 12)
        at_bound |= np.isclose(got[:, dofs], skel.lower[dofs]).any()
        for t in range(len(q)):
            ref = _hold_reference(skel, q[t], dofs, joints, cm.point_local[P_a], X[t], 1e-2, 12)
            np.testing.assert_allclose(got[t], ref, atol=1e-9)
        untouched = np.setdiff1d(np.arange(skel.n_dof), dofs)
        assert np.array_equal(got[:, untouched], q[:, untouched])
        moved = max(moved, float(np.abs(got - q).max()))
    assert moved > 0.05  # the IK did work
    assert at_bound  # ... and held a knee at its limit (the unlimited one bent it backwards)



def test_chain_forward_kinematics_bit_equal_to_the_whole_body():
    """The leg IK evaluates only the points' chain (``_fk_joints``, ~6 of body95's 52 joints):
    every chain joint's pose and every chain DoF's axis and point are ``fk_one``'s bit for bit,
    and joints off the chain are not written."""
    from animik._kernels import fk_one
    from animik.dynamics._leg_ik import _fk_joints
    from animik.kinematics import kernel_args

    skel = animik.load_rig("body95")
    q = _walk(skel)[7]
    args = kernel_args(skel)[:6]
    J, n = len(skel.parents), skel.n_dof
    full = (np.empty((J, 3, 3)), np.empty((J, 3)), np.empty((n, 3)), np.empty((n, 3)))
    fk_one(q, *args, *full)
    cm = contact_model_for_clip(skel, _walk(skel))
    joints = cm.point_joint[cm.point_area == 0]
    sel = np.flatnonzero(skel.joint_ancestor_mask[joints].any(axis=0)).astype(np.int64)
    assert 3 <= len(sel) < J // 4
    part = tuple(np.full_like(a, np.nan) for a in full)
    _fk_joints(q, sel, *args, *part)
    dofs = np.flatnonzero(np.isin(skel.dof_joint, sel))
    assert np.array_equal(part[0][sel], full[0][sel]) and np.array_equal(part[1][sel], full[1][sel])
    assert np.array_equal(part[2][dofs], full[2][dofs]) and np.array_equal(part[3][dofs], full[3][dofs])
    off = np.setdiff1d(np.arange(J), sel)
    assert np.isnan(part[1][off]).all()


def test_hip_offset_reuses_unchanged_frames_bit_for_bit():
    """``apply_hip_offset(previous=...)`` solves only the frames whose offset changed; the
    result equals a fresh solve of every frame bit for bit (hip_shift's reach steps change the
    offset near the frames out of reach only)."""
    from animik.dynamics.hip_shift import apply_hip_offset
    from animik.motion import Motion

    skel = animik.load_rig("body95")
    q = _walk(skel)
    m = Motion(skel, q, 30.0)
    cm = contact_model_for_clip(skel, q)
    held = np.ones((len(q), cm.n_areas))
    o1 = np.zeros((len(q), 2))
    o1[5:30, 0] = 0.04
    first = apply_hip_offset(m, cm, o1, held)
    o2 = o1.copy()
    o2[12:18] *= 0.7  # a reach step scales part of the offset back
    fresh = apply_hip_offset(m, cm, o2, held)
    reused = apply_hip_offset(m, cm, o2, held, previous=(o1, first))
    assert np.array_equal(reused.q, fresh.q)
    assert not np.array_equal(fresh.q[12:18], first.q[12:18])  # the changed frames re-solved


def test_limited_leg_ik_never_leaves_the_limits():
    """Property: for random reachable and unreachable targets of every sole (a foot pulled
    up to the hip, pushed 60 cm out, twisted), the leg IK's poses stay within body95's limits
    on every DoF it moves, from starts inside them; and where the target is reachable within
    them it is still reached (the box does not stop the solver)."""
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(10)
    q = _walk(skel, T=60)
    cm = contact_model_for_clip(skel, q)
    pts = cm.points(skel, q)
    lo, hi = skel.lower, skel.upper
    for a in range(cm.n_areas):
        P_a = np.flatnonzero(cm.point_area == a)
        joints = cm.point_joint[P_a]
        dofs = area_leg(skel, cm, a)[2]
        X = pts[:, P_a] + rng.normal(0.0, 0.25, (len(q), 1, 3))  # the sole moved rigidly
        X[::3] += rng.normal(0.0, 0.05, X[::3].shape)  # ... and bent out of shape
        got = hold_points(skel, q, dofs, joints, cm.point_local[P_a], X, 1e-2, 30,
                          no_flips=True)
        assert (got[:, dofs] >= lo[dofs] - 1e-12).all()
        assert (got[:, dofs] <= hi[dofs] + 1e-12).all()
        # a target made by a pose within the limits is reached
        qt = q.copy()
        qt[:, dofs] = np.clip(q[:, dofs] + rng.normal(0.0, 0.3, (len(q), len(dofs))),
                              lo[dofs], hi[dofs])
        Xt = cm.points(skel, qt)[:, P_a]
        got = hold_points(skel, q, dofs, joints, cm.point_local[P_a], Xt, 1e-6, 60)
        assert (got[:, dofs] >= lo[dofs] - 1e-12).all() and (got[:, dofs] <= hi[dofs] + 1e-12).all()
        err = np.linalg.norm(cm.points(skel, got)[:, P_a] - Xt, axis=-1).max(axis=1)
        assert np.median(err) < 2e-3


def test_unlimited_dofs_solve_as_before():
    """A skeleton without limits (a BVH file's) takes the unlimited solver's steps: the
    reference above, with the knee target past body95's knee limit reached by bending it so."""
    from animik.io.bvh import loads_bvh
    from animik.io.bvh_compat import dumps_bvh_compatible

    skel = animik.load_rig("body95")
    free = loads_bvh(dumps_bvh_compatible(animik.Motion(skel, _walk(skel), 30.0))[0])
    s2, q = free.skeleton, np.asarray(free.q)
    assert not np.isfinite(s2.lower).any()
    cm = contact_model_for_clip(s2, q)
    pts = cm.points(s2, q)
    P_a = np.flatnonzero(cm.point_area == 0)
    joints = cm.point_joint[P_a]
    dofs = area_leg(s2, cm, 0)[2]
    X = pts[:, P_a].copy()
    X[..., 2] = 0.005
    X[..., 0] -= 0.03
    got = hold_points(s2, q, dofs, joints, cm.point_local[P_a], X, 1e-2, 12)
    for t in range(0, len(q), 7):
        ref = _hold_reference(s2, q[t], dofs, joints, cm.point_local[P_a], X[t], 1e-2, 12)
        np.testing.assert_allclose(got[t], ref, atol=1e-9)
