"""Method A's rows on supported frames (animik.dynamics.cone_rows, docs/dynamics.md 5f):
the cone programme's duals against finite differences of its residual, and the correction
moving supported frames back into the contact wrench cone (main's correction gave those
frames no rows and left them infeasible)."""

from __future__ import annotations

import numpy as np

import animik
from animik.dynamics.clip import check_clip
from animik.dynamics.cone import _highs
from animik.dynamics.cone_rows import cone_duals, cone_programmes
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.correct import correct_clip
from animik.dynamics.supports import Support, SupportSet
from animik.dynamics.zmp import CONE, THROUGH
from animik.kinematics import forward_kinematics
from animik.motion import Motion


def _raised_sway(skel, T=90, fps=60.0, amp=0.12, hz=1.5, deck=0.25):
    """body95 standing on a deck ``deck`` m up (world foot rests under both soles, the only
    supports), bowing forward and back fast at the lumbar spine: the wrench leaves the cone at
    the turns (the floor check's sway of test_correct, raised off the floor)."""
    q = np.tile(skel.rest_q, (T, 1))
    t = np.arange(T) / fps
    q[:, skel.dof_index("lumbar_flexion")] += amp * np.sin(2 * np.pi * hz * t)
    cm = contact_model_for_clip(skel, q)
    pts = cm.points(skel, q)
    q[:, skel.dof_index("pelvis_tz")] += deck - pts[..., 2].min()
    m = Motion(skel, q, fps)
    pts = cm.points(skel, q)
    rests = []
    for a, name in enumerate(cm.names):
        sel = np.flatnonzero(cm.point_area == a)
        j = int(cm.point_joint[sel[0]])
        fk = forward_kinematics(skel, q[:1])
        loc = (pts[0, sel] - fk.joint_positions[0, j]) @ fk.joint_rotations[0, j]
        w = pts[0, sel].copy()
        w[:, 2] = deck  # the rest's surface where the sole stands
        rests.append(Support(f"{name}_rest", "foot_rest", -1, w, np.array([0.0, 0.0, 1.0]), 0.7,
                             float("inf"), None, j, loc, 0.03))
    return m, SupportSet(tuple(rests), "test")


def test_duals_are_the_residuals_gradient():
    """``cone_duals``'s ``y`` equals central differences of the residual (HiGHS, an
    independent solve per perturbed wrench) on frames outside the cone, and its residual
    equals the check's (the same programme: ``cone_programmes`` without margins)."""
    skel = animik.load_rig("body95")
    m, sup = _raised_sway(skel)
    chk = check_clip(m, supports=sup)
    bad = np.flatnonzero(~chk.feasible)
    assert len(bad) >= 10
    cols, ub, w, weight, sf = cone_programmes(skel, chk, bad)
    r0, y = cone_duals(cols, ub, w)
    np.testing.assert_allclose(r0, chk.check.cone_residual[bad], atol=1e-9)
    assert np.abs(y).max() <= 1.0 + 1e-9 and (np.abs(y).sum(axis=1) > 0.5).all()
    h = 1e-6
    for i in range(6):
        d = np.zeros(6)
        d[i] = h
        rp = _highs(cols, ub, w + d, 64)[0]
        rm = _highs(cols, ub, w - d, 64)[0]
        np.testing.assert_allclose((rp - rm) / (2 * h), y[:, i], atol=1e-5)


def test_correction_moves_supported_frames_into_the_cone():
    """The raised sway: every frame on the world rests, many outside the cone; the
    correction's cone rows make every frame feasible by an independent ``check_clip``, nothing
    goes through the rests, and the correction stays small. Main's correction had no rows
    there and returned the input (its rounds stopped at once)."""
    skel = animik.load_rig("body95")
    m, sup = _raised_sway(skel)
    before = check_clip(m, supports=sup)
    # (the floor is estimated at the soles, on the deck: its contacts join the cone, coplanar
    # with the rests; main's correction gave no rows to any supported frame all the same)
    assert before.check.support_active.any(axis=1).all()
    bad0 = ~before.feasible
    assert bad0.sum() >= 20 and (before.check.reasons[bad0] & CONE).all()
    res = correct_clip(m, supports=sup)
    after = check_clip(res.motion, supports=sup)  # derivatives and contacts found afresh
    assert after.feasible.all(), after.infeasible_frames
    assert not (after.check.reasons & THROUGH).any()
    assert np.abs(res.motion.q - m.q).max() < 0.3
    assert res.history[0][0] == bad0.sum() and res.history[-1][0] == 0


def test_simplex_duals_equal_highs_marginals():
    """The numba simplex's duals (``B^-T c_B``) equal HiGHS's marginals on the raised sway's
    frames outside the cone (unique optima there: the central differences above agree)."""
    from animik.dynamics.cone_rows import cone_duals_fast

    skel = animik.load_rig("body95")
    m, sup = _raised_sway(skel)
    chk = check_clip(m, supports=sup)
    bad = np.flatnonzero(~chk.feasible)
    cols, ub, w, _, _ = cone_programmes(skel, chk, bad, 0.9, 0.9, 0.01)
    ra, ya = cone_duals(cols, ub, w)
    rb, yb = cone_duals_fast(cols, ub, w)
    np.testing.assert_allclose(rb, ra, atol=1e-9)
    np.testing.assert_allclose(yb, ya, atol=1e-9)


def _heaving_sway_on_low_rests(skel, sink=0.027):
    """The raised sway (a bigger bow: 5 rounds) with the rests ``sink`` m below the soles
    (within the 3 cm contact tolerance) and the body heaving +-1 cm: the soles' points go in
    and out of contact with the rests."""
    import dataclasses

    m, sup = _raised_sway(skel, amp=0.3)
    q = m.q.copy()
    q[:, skel.dof_index("pelvis_tz")] += 0.01 * np.sin(2 * np.pi * 0.7 * np.arange(m.n_frames)
                                                       / m.fps)
    sup = SupportSet(tuple(dataclasses.replace(s, points=s.points - [0.0, 0.0, sink])
                           for s in sup.supports), "test")
    return Motion(skel, q, m.fps), sup


def test_surface_rows_do_not_ratchet_the_body_into_the_rests():
    """Re-linearised every round, the rows keeping a touching point on its rest pushed each
    newly touching point below 90 % of the tolerance and nothing pulled the body back (louise's
    ride 1.6 cm, at most 2.7 cm, below the input's). A row now keeps the body within
    ``DROP`` of the clip the correction started from: the heaving sway sinks less (measured:
    mean -0.40 cm; main -0.63 cm, the rounds' pushes adding up)."""
    skel = animik.load_rig("body95")
    m, sup = _heaving_sway_on_low_rests(skel)
    before = check_clip(m, supports=sup)
    assert (~before.feasible).sum() >= 20
    res = correct_clip(m, supports=sup)
    after = check_clip(res.motion, supports=sup)
    assert after.feasible.all(), after.infeasible_frames
    z = skel.dof_index("pelvis_tz")
    dz = res.motion.q[:, z] - m.q[:, z]
    assert dz.mean() > -0.005, (dz.mean(), dz.min())


def test_surface_rows_pull_a_sunk_body_back_to_the_reference():
    """The rows of a clip whose body sits 1 cm lower than the reference's (every touching frame):
    each such frame gets a row asking the vertical slide to bring it back to within ``DROP``
    (``dz >= 0.01 - DROP``), on the root's vertical slide only (mode 2, through ``D0``)."""
    from animik.dynamics.clip import clip_states
    from animik.dynamics.cone_rows import DROP, _surface_rows

    skel = animik.load_rig("body95")
    m, sup = _heaving_sway_on_low_rests(skel, sink=0.02)
    q = m.q.copy()
    q[:, skel.dof_index("pelvis_tz")] -= 0.01
    chk = check_clip(Motion(skel, q, m.fps), supports=sup)
    frames = np.arange(m.n_frames)
    sf = sup.at(skel, chk.states.q, frames=frames)
    g_ref = sup.at(skel, clip_states(skel, m.q, m.fps).q, frames=frames).gap
    touching = (sf.push_touch & np.isfinite(sf.gap)).any(axis=1)
    assert touching.sum() >= 60
    f0, c0, r0 = _surface_rows(chk, frames, sf, 5)
    f1, c1, r1 = _surface_rows(chk, frames, sf, 5, g_ref=g_ref)
    np.testing.assert_array_equal(f1[:len(f0)], f0)  # the contact rows as before, then ...
    f, c, r = f1[len(f0):], c1[len(f0):], r1[len(f0):]
    np.testing.assert_array_equal(f, np.flatnonzero(touching))  # ... one row a touching frame
    assert np.count_nonzero(c) == len(f) and (c[:, 0, 2] < 0).all()
    # the row c dz <= r with c < 0, i.e. dz >= r / c: back up by the 1 cm sunk, less DROP
    np.testing.assert_allclose(r / c[:, 0, 2], 0.01 - DROP, atol=1e-6)
