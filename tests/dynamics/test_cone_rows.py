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
