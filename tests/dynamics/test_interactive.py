"""Seed D's interactive filter (animik.dynamics.interactive): a hand dragged far forward with the
feet pinned stays feasible; the same drag without the filter does not; a clip made of that
infeasible drag comes out feasible."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import animik
from animik.anim.feasible import feasible_clip_poses
from animik.dynamics import check_contacts, com, contact_model
from animik.dynamics.interactive import (
    BalanceFilter,
    BalanceOptions,
    BalanceOptionsError,
    _ray_clamp,
    foot_sites,
    track_target,
)
from animik.ik import prepare_ik
from animik.kinematics import forward_kinematics
from animik.scene import load_scene

FPS = 60.0
SCENE = Path(__file__).resolve().parents[2] / "scenes" / "default.toml"  # the app's start scene


@pytest.fixture(scope="module")
def body():
    return animik.load_rig("body95")


def _default_scene(skel):
    """The app's default scene with the feet pinned and the right hand a target: its solver
    options, the start pose (the null-space terms settled, as the app's first frames do), the
    pins, the hand's start, the task weights and the reference IK."""
    scene = load_scene(SCENE)
    assert scene.skeleton.n_dof == skel.n_dof
    opts = dict(scene.solver_options)
    q0 = np.array(scene.q, float)
    fk = forward_kinematics(skel, q0)
    pins = {s: fk.site_positions[skel.site_index(s)].copy() for s in ("l_foot", "r_foot")}
    hand0 = fk.site_positions[skel.site_index("r_hand")].copy()
    w = {"l_foot": 10.0, "r_foot": 10.0, "r_hand": 1.0}
    ref = prepare_ik(skel, q0, {**pins, "r_hand": hand0}, "fik", weights=w, tol_position=1e-4,
                     **opts)
    for _ in range(30):
        q0 = ref.solve(q0, max_iterations=20).q
    return opts, q0, pins, hand0, w, ref


def _drag(skel, physics: bool, reach=0.6, frames=60, hold=30):
    """Drag the right hand ``reach`` m forward over ``frames`` frames with the feet pinned (the
    app's default scene, its pose and solver options), then hold it there."""
    opts, q0, pins, hand0, w, ref = _default_scene(skel)
    # the corrective solve without the posture pull (a null-space term that switches on when
    # the tasks converge: a jerk the COM task cannot see)
    copts = {k: v for k, v in opts.items() if k not in ("reference", "reference_gain")}
    cor = prepare_ik(skel, q0, {**pins, "r_hand": hand0}, "fik", weights={**w, "com": 10.0},
                     com=(0.0, 0.0, 1.0), tol_position=1e-5, **copts)
    filt = BalanceFilter(skel, BalanceOptions())
    filt.reset(q0)
    q, out, state = q0, [], None
    for i in range(frames + hold):
        hand = hand0 + [reach * min(i + 1, frames) / frames, 0.0, 0.0]
        r = ref.solve(q, targets={"r_hand": hand}, max_iterations=20, state=state)
        state = r.state
        if physics:
            st = filt.step(r.q, 1 / FPS, lambda c, start, hand=hand: cor.solve(
                start, targets={"r_hand": hand, "com": c}, max_iterations=50).q)
            q = st.q
        else:
            q = r.q
        out.append(q)
    return np.array(out), pins, q0


def _checks(skel, q0, Q):
    P = np.concatenate([[q0, q0], Q])
    qd = (P[2:] - P[1:-1]) * FPS
    qdd = (P[2:] - 2 * P[1:-1] + P[:-2]) * FPS**2
    return check_contacts(skel, Q, qd, qdd, True)


def test_dragged_hand_stays_feasible_with_feet_pinned(body):
    Q, pins, q0 = _drag(body, physics=True)
    chk = _checks(body, q0, Q)  # an independent batched evaluation of the output
    assert chk.feasible.all() and (chk.margin > 0).all()
    fk = forward_kinematics(body, Q)
    for s, p in pins.items():
        assert np.abs(fk.site_positions[:, body.site_index(s)] - p).max() < 1e-3
    # the hand gets there: the filter moves the hips back instead of giving up the reach
    hand = fk.site_positions[-1, body.site_index("r_hand")]
    assert hand[0] - forward_kinematics(body, q0).site_positions[body.site_index("r_hand")][0] > 0.55
    assert abs(com(body, Q[-1])[0]) < 0.1


def test_same_drag_without_the_filter_is_infeasible(body):
    Q, _, q0 = _drag(body, physics=False)
    chk = _checks(body, q0, Q)
    assert not chk.feasible[-1] and chk.margin[-1] < 0  # held lean: COM past the toes
    assert (~chk.feasible).sum() > 20


def test_correction_target_realises_the_cart_table_zmp(body):
    """If the IK puts the COM exactly at the target, the discrete cart-table ZMP of the COM
    history is the chosen ZMP, and it lies in the shrunk polygon."""
    filt = BalanceFilter(body, BalanceOptions(margin=0.02))
    q0 = np.zeros(body.n_dof)
    q1 = q0.copy()
    q1[0] = 0.004  # pelvis slide forward: the COM moves 4 mm a frame
    filt.reset(q0)
    filt.push(q1)
    h = 1 / FPS
    cm = contact_model(body)
    from animik.dynamics import support_polygon

    poly = support_polygon(body, q1, True, cm)
    c_ref = com(body, q1) + [0.5, 0, 0]  # far past the toes, same height
    c_n, p = filt.com_target(c_ref, poly, h)
    c1, c2 = com(body, q1), com(body, q0)
    w2 = 9.81 / c1[2]
    acc = (c_n[:2] - 2 * c1[:2] + c2[:2]) / h**2
    assert abs(c_n[2] - c1[2]) < 1e-12
    assert np.allclose(c_n[:2] - acc / w2, p, atol=1e-9)
    from animik.dynamics.interactive import _distance

    assert _distance(poly, p) >= 0.02 - 1e-9


def test_ray_clamp_stops_at_the_shrunk_edge():
    sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    p = _ray_clamp(sq, np.array([0.5, 0.5]), np.array([3.0, 0.5]), 0.1)
    assert np.allclose(p, [0.9, 0.5])
    assert np.allclose(_ray_clamp(sq, np.array([0.5, 0.5]), np.array([0.6, 0.5]), 0.1), [0.6, 0.5])


def test_clip_of_an_infeasible_drag_is_made_feasible(body):
    Q, _, q0 = _drag(body, physics=False, frames=40, hold=10)
    Q = np.concatenate([[q0] * 5, Q])
    assert not _checks(body, q0, Q).feasible.all()
    res = feasible_clip_poses(body, Q, FPS)
    assert res.feasible.all() and res.corrected.any() and not res.reference_feasible.all()
    chk = _checks(body, Q[0], res.q)
    assert chk.feasible.all()
    feet = foot_sites(body)
    assert set(feet) == {"l_foot", "r_foot"}
    a, b = forward_kinematics(body, Q), forward_kinematics(body, res.q)
    for s in feet:
        i = body.site_index(s)
        assert np.abs(a.site_positions[:, i] - b.site_positions[:, i]).max() < 1e-3


def test_bad_options_raise(body):
    with pytest.raises(BalanceOptionsError):
        BalanceFilter(body, BalanceOptions(margin=-1))
    with pytest.raises(BalanceOptionsError):
        feasible_clip_poses(body, np.zeros((3, body.n_dof)), 0.0)
    with pytest.raises(BalanceOptionsError):
        feasible_clip_poses(body, np.zeros(body.n_dof), 30.0)


def test_filter_check_and_polygon_equal_the_public_functions(body):
    """BalanceFilter.check / .polygon (the live filter's fast path: kernels called directly,
    contact points computed once per pose) equal check_contacts / support_polygon."""
    from animik.dynamics import support_polygon

    rng = np.random.default_rng(2)
    q0 = body.rest_q.copy()
    filt = BalanceFilter(body)
    filt.reset(q0)
    h = 1 / FPS
    for _ in range(3):
        q = q0 + 0.02 * rng.normal(size=body.n_dof)
        chk = filt.check(q, h)
        qd, qdd = filt.states(q, h)
        ref = check_contacts(body, q, qd, qdd, chk.in_contact, mu=filt.options.mu,
                             floor=filt.options.floor)
        for a, b in zip(chk, ref, strict=True):
            assert np.shape(a) == np.shape(b)
            assert np.allclose(a, b, rtol=1e-12, atol=1e-9, equal_nan=True)
        poly = filt.polygon(q, chk.in_contact)
        assert np.allclose(poly, support_polygon(body, q, chk.in_contact))
        filt.push(q)


def _jerky_drag(skel, rng, hz, jump=0.04, every=4, reach=0.6, hold=1.5, track=True,
                pelvis=False):
    """A jerky drag as a window delivers it: the target jumps ``jump`` m every ``every``
    frames (a mouse event every ~150 ms), frame times jittered ±40 % around ``1/hz``, the feet
    pinned; the right hand dragged forward (its corrective target through
    :func:`track_target` with ``track``, else the raw target), or with ``pelvis`` the pelvis
    pushed forward by its root DoF (as the app's arrow does). Returns the output poses, the
    frame times the filter used, the pins, the start pose and the hand's goal."""
    opts, q0, pins, hand0, w, ref = _default_scene(skel)
    copts = {k: v for k, v in opts.items() if k not in ("reference", "reference_gain")}
    cor = prepare_ik(skel, q0, {**pins, "r_hand": hand0}, "fik", weights={**w, "com": 3.0},
                     com=(0.0, 0.0, 1.0), tol_position=1e-5, reference_gain=0.3, **copts)
    hand_i = skel.site_index("r_hand")
    tx = skel.dof_names.index("pelvis_tx")
    filt = BalanceFilter(skel, BalanceOptions())
    filt.reset(q0)
    n_jumps = int(np.ceil(reach / jump))
    frames = n_jumps * every + int(hold * hz)
    q, out, hs, state = q0, [], [], None
    goal = hand0.copy()
    for i in range(frames):
        k = min(i // every + 1, n_jumps)
        dt = (1 + 0.4 * rng.uniform(-1, 1)) / hz
        h = filt.frame_time(dt)
        if pelvis:
            qi = q.copy()
            qi[tx] = q0[tx] + min(k * jump, reach)
            r = ref.solve(qi, targets={"r_hand": forward_kinematics(skel, q).site_positions[
                hand_i]}, max_iterations=20, state=state)
        else:
            goal = hand0 + [min(k * jump, reach), 0.0, 0.0]
            r = ref.solve(q, targets={"r_hand": goal}, max_iterations=20, state=state)
        state = r.state

        def solve(c, start, goal=goal, h=h):
            hist = filt.history
            tgt = goal
            if pelvis:
                tgt = forward_kinematics(skel, start).site_positions[hand_i]
            elif track and len(hist) == 2:
                p1, p2 = (forward_kinematics(skel, x).site_positions[hand_i] for x in hist[::-1])
                tgt = track_target(p1, p2, goal, h)
            return cor.solve(start, targets={"r_hand": tgt, "com": c}, max_iterations=50,
                             reference=start).q

        q = filt.step(r.q, dt, solve).q
        out.append(q)
        hs.append(h)
    return np.array(out), np.array(hs), pins, q0, goal


def _checks_h(skel, q0, Q, hs):
    """The independent batched check of output poses at per-frame times ``hs`` (backward
    differences with each frame's own time, as the filter and the overlay differentiate)."""
    P = np.concatenate([[q0, q0], Q])
    qd = (P[2:] - P[1:-1]) / hs[:, None]
    qdd = (P[2:] - 2 * P[1:-1] + P[:-2]) / hs[:, None] ** 2
    return check_contacts(skel, Q, qd, qdd, True)


@pytest.mark.parametrize("hz", [14.0, 30.0, 60.0])
def test_jerky_hand_drag_stays_feasible_at_window_rates(body, hz):
    """A mouse that jumps 4 cm every 4 frames at 14-60 Hz with jittered frame times, the
    corrective solve dragging toward :func:`track_target` as the app's does: every output
    frame feasible, the feet within 1 mm, and the hand within 2 cm of the target 1.5 s after
    the last jump. (The filter before the tracker, the raw target in the corrective solve:
    4 of 81, 6 of 105 and 42 of 150 frames infeasible at 14, 30 and 60 Hz.)"""
    rng = np.random.default_rng(int(hz))
    Q, hs, pins, q0, goal = _jerky_drag(body, rng, hz)
    chk = _checks_h(body, q0, Q, hs)
    assert chk.feasible.all(), f"{(~chk.feasible).sum()} infeasible, min margin " \
        f"{np.nanmin(chk.margin):.3f} m"
    fk = forward_kinematics(body, Q)
    for s, p in pins.items():
        assert np.abs(fk.site_positions[:, body.site_index(s)] - p).max() < 1e-3
    assert np.linalg.norm(fk.site_positions[-1, body.site_index("r_hand")] - goal) < 0.02


def test_track_target_bounds_the_acceleration():
    p = np.zeros(3)
    h = 1 / 30
    x = track_target(p, p, [1.0, 0, 0], h, omega=10.0, accel=4.0)
    assert np.isclose(np.linalg.norm(x - p) / h**2, 4.0)  # from rest: the bound
    x = track_target(p, p, [0.001, 0, 0], h, omega=10.0, accel=4.0)
    assert np.isclose(x[0], 100 * 0.001 * h * h)  # near: ω² (target − p)
    pts = [p, p]  # a still target is reached (critically damped, no runaway)
    for _ in range(120):
        pts.append(track_target(pts[-1], pts[-2], [0.3, 0, 0], h))
    assert abs(pts[-1][0] - 0.3) < 1e-3
