"""Seed D method B away from the origin and on walks (docs/dynamics.md 5c, "The balance law"):
the simulation must not depend on where the body stands, and the step-aware law's pieces
(the input's contact schedule, the swing feet's rows) are checked against what they are built
from."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared

import animik
from animik.dynamics import check_clip
from animik.dynamics.method_b import _schedule, method_b_clip
from animik.motion import Motion


def _standing(skel, T=60, shift=(0.0, 0.0)):
    q = np.tile(skel.rest_q, (T, 1))
    root = list(skel.joint_dofs(int(np.flatnonzero(skel.parents < 0)[0])))
    q[:, root[0]] += shift[0]
    q[:, root[1]] += shift[1]
    return Motion(skel, q, 30.0), root


def test_method_b_does_not_depend_on_where_the_body_stands():
    """Body95 standing 5 m from the world origin is simulated as at the origin, shifted: the
    start lowers the body by a translation DoF (main picked a rotation, whose linear part
    p × w grows with the distance, and dropped the body in free fall) and the balance law
    takes moments about the wanted centre of pressure (about the origin, the yaw row mixed in
    5 m × the force error and twisted the soles: main diverged at frame 46)."""
    skel = animik.load_rig("body95")
    here, root = _standing(skel)
    there, _ = _standing(skel, shift=(3.0, 4.0))
    a = method_b_clip(here).motion.q
    b = method_b_clip(there).motion.q.copy()
    b[:, root[0]] -= 3.0
    b[:, root[1]] -= 4.0
    # rad or m; measured 9e-6 (rounding of positions 5 m out, amplified by the stiff springs)
    assert np.abs(a - b).max() < 1e-4
    assert check_clip(Motion(skel, b, 30.0)).feasible.all()


def test_schedule_is_the_next_contact_frame():
    flags = np.array([[1, 0], [0, 0], [0, 1], [1, 1], [0, 0]], dtype=bool)
    assert _schedule(flags).tolist() == [[0, 2], [3, 2], [3, 2], [3, 3], [-1, -1]]


def test_step_aware_goal_lets_the_capture_point_run_to_the_next_footprint():
    """Mid-stance of a walk (COM over the stance sole, 1.2 m/s forward, the next footprint
    0.6 m ahead): the previous law clamps the goal ξ_ref into the stance sole and brakes
    (centre of pressure at the sole's front edge, force backward); the step-aware law clamps
    it into the hull of the sole and the next footprint, so with the input's own LIP centre
    of pressure fed forward the body keeps its speed (force through the COM from the input's
    p_ref, here the COM projection: no horizontal force)."""
    from animik.dynamics.sole_balance import SoleBalanceOptions, desired_force
    sole = np.array([[-0.10, -0.05], [0.15, -0.05], [0.15, 0.05], [-0.10, 0.05]])
    nxt = sole + [0.6, 0.0]
    out = np.empty((8, 2))
    from animik.dynamics import _support
    goal = out[:_support.hull(np.ascontiguousarray(np.vstack([sole, nxt])), out)]
    c, cd = np.array([0.0, 0.0, 0.9]), np.array([1.2, 0.0, 0.0])
    g, m = 9.81, 70.0
    old = SoleBalanceOptions(step=False)
    F0, p0 = desired_force(c, cd, c, cd, np.zeros(3), sole, 0.0, g, m, old)
    assert p0[0] == pytest.approx(0.15 - old.margin) and F0[0] < -100  # brakes
    new = SoleBalanceOptions(feedforward=True)
    F1, p1 = desired_force(c, cd, c, cd, np.zeros(3), sole, 0.0, g, m, new, goal)
    assert np.allclose(p1, c[:2]) and abs(F1[0]) < 1e-9  # keeps walking
    # a capture-point error still acts: the body 0.1 m/s too slow is pushed forward
    F2, p2 = desired_force(c, cd - [0.1, 0, 0], c, cd, np.zeros(3), sole, 0.0, g, m, new, goal)
    assert F2[0] > 0 and p2[0] < c[0]


def test_swing_rows_against_finite_differences():
    """The swing foot's rows: ``J`` against central differences of forward kinematics (the
    joint's position and rotation), and the bias ``J̇ q̇`` against differences of ``J q̇``
    along the motion: with ``q̈`` solving ``J q̈ = r``, the foot's acceleration is the PD's."""
    from animik.dynamics.filter import DynamicsFilter
    from animik.dynamics.method_b import _swing_rows
    from animik.kinematics import forward_kinematics
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(5)
    q = skel.rest_q + 0.2 * rng.normal(size=skel.n_dof)
    qd = rng.normal(size=skel.n_dof)
    filt = DynamicsFilter(skel)
    j = int(filt.area_joint[0])
    filt.terms(q, qd)
    x, R = filt.pw[j].copy(), filt.Rw[j].copy()
    Jr, r = _swing_rows(filt, j, x, R, np.zeros(3), np.zeros(3), 8.0)
    h = 1e-6
    for k in rng.choice(skel.n_dof, 12, replace=False):
        e = np.zeros(skel.n_dof)
        e[k] = h
        fp, fm = forward_kinematics(skel, q + e), forward_kinematics(skel, q - e)
        dp = (fp.joint_positions[j] - fm.joint_positions[j]) / (2 * h)
        dR = (fp.joint_rotations[j] - fm.joint_rotations[j]) / (2 * h) @ R.T
        w = np.array([dR[2, 1], dR[0, 2], dR[1, 0]])
        assert np.allclose(Jr[:3, k], dp, atol=1e-6) and np.allclose(Jr[3:, k], w, atol=1e-6)
    # at the target with the foot's own velocity: r = -J̇ q̇ - k_d v (PD with zero error)
    wn = 2 * np.pi * 8.0
    v = Jr @ qd

    def jq(s):
        filt.terms(q + s * qd, qd)
        return _swing_rows(filt, j, x, R, np.zeros(3), np.zeros(3), 8.0)[0] @ qd

    jdot_qd = (jq(h) - jq(-h)) / (2 * h)
    lin = -jdot_qd[:3] - 2 * wn * v[:3]
    assert np.allclose(r[:3], lin, atol=1e-4 * np.abs(lin).max())


def test_leg_row_against_finite_differences():
    """The stance leg's vertical row (the joint's height over the root): ``J`` against central
    differences of forward kinematics, and the bias so that at the reference height with the
    reference velocity the row asks ``ḧ = 0``."""
    from animik.dynamics.filter import DynamicsFilter
    from animik.dynamics.method_b import _leg_row
    from animik.kinematics import forward_kinematics
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(7)
    q = skel.rest_q + 0.2 * rng.normal(size=skel.n_dof)
    qd = rng.normal(size=skel.n_dof)
    filt = DynamicsFilter(skel)
    j = int(filt.area_joint[1])
    root = int(np.flatnonzero(skel.parents < 0)[0])
    filt.terms(q, qd)
    h0 = filt.pw[j, 2] - filt.pw[root, 2]
    Jl, _ = _leg_row(filt, j, root, h0, 0.0, 15.0)
    step = 1e-6
    for k in rng.choice(skel.n_dof, 12, replace=False):
        e = np.zeros(skel.n_dof)
        e[k] = step
        fp, fm = forward_kinematics(skel, q + e), forward_kinematics(skel, q - e)
        dh = ((fp.joint_positions[j, 2] - fp.joint_positions[root, 2])
              - (fm.joint_positions[j, 2] - fm.joint_positions[root, 2])) / (2 * step)
        assert Jl[k] == pytest.approx(dh, abs=1e-6)
    hd = float(Jl @ qd)

    def jq(s):
        filt.terms(q + s * qd, qd)
        return _leg_row(filt, j, root, h0, 0.0, 15.0)[0] @ qd

    jdot_qd = (jq(step) - jq(-step)) / (2 * step)
    filt.terms(q, qd)
    _, r = _leg_row(filt, j, root, h0, hd, 15.0)  # on the reference: ḧ = J q̈ + J̇ q̇ = 0
    assert r == pytest.approx(-jdot_qd, rel=1e-4, abs=1e-6)


class _Stop(Exception):
    pass


@needs_shared
def test_walk_starts_in_step():
    """Method B on the Bandai walk retargeted onto body95, up to the clip's first frame: the
    settle (not written) brings the body onto the input's COM path, so the clip starts with
    the input's COM velocity, 1.05 m/s along -y (main's settle ended with the body moving
    +1.03 m/s, backwards: its law's goal, the input's capture point clamped into the stance
    sole, is behind a walk's COM -- docs/dynamics.md 5c)."""
    from animik.dynamics.clip import clip_states
    from animik.dynamics.inverse import momentum
    from animik.io.bvh import read_bvh
    from animik.retarget import retarget

    src = read_bvh(SHARED_BVH / "bandai_namco" / "dataset-1_walk_normal_001.bvh")
    m = retarget(src, animik.load_rig("body95"))
    skel = m.skeleton
    seen = []

    def trace(d):
        seen.append(d)
        if d["frame"] >= 0:
            raise _Stop

    with pytest.raises(_Stop):
        method_b_clip(m, trace=trace)
    first = seen[-1]
    sim = momentum(skel, first["q"][None], first["v"][None]).com_velocity[0]
    ref = clip_states(skel, m.q, m.fps)
    inp = momentum(skel, ref.q[:1], ref.qd[:1]).com_velocity[0]
    # m/s; measured 0.01 apart (main: 2.1)
    assert np.linalg.norm(sim[:2] - inp[:2]) < 0.15


def test_swing_foot_brakes_before_the_floor_and_lifts_out_of_it():
    """A swing foot descending at 1 m/s with its lowest point 2 cm above its clearance asks
    at least the deceleration that stops it there, ``v²/(2 gap)`` = 25 m/s² up (the clipped
    PD alone overshot 1.1 cm into the springs); one still in the floor asks up."""
    from animik.dynamics.filter import DynamicsFilter
    from animik.dynamics.method_b import _swing_rows
    skel = animik.load_rig("body95")
    filt = DynamicsFilter(skel)
    j = int(filt.area_joint[0])
    qd = np.zeros(skel.n_dof)
    filt.terms(skel.rest_q, qd)
    Jv = filt.link_motion(j)[1]
    qd = np.linalg.lstsq(Jv, np.array([0.0, 0.0, -1.0]), rcond=None)[0]  # foot down 1 m/s
    filt.terms(skel.rest_q, qd)
    x, R = filt.pw[j].copy(), filt.Rw[j].copy()
    ap = filt.link_motion(j)[5]
    v_ref = np.array([0.0, 0.0, -1.0])
    _, free = _swing_rows(filt, j, x, R, v_ref, np.zeros(3), 8.0, (30.0, 300.0))
    _, braked = _swing_rows(filt, j, x, R, v_ref, np.zeros(3), 8.0, (30.0, 300.0), 0.02, 15.0)
    assert free[2] + ap[2] == pytest.approx(0.0, abs=1e-6)  # on its (descending) reference
    assert braked[2] + ap[2] == pytest.approx(1.0 / (2 * 0.02))
    _, out = _swing_rows(filt, j, x, R, np.zeros(3), np.zeros(3), 8.0, (30.0, 300.0), -0.01,
                         15.0)
    assert out[2] + ap[2] > 0.0
