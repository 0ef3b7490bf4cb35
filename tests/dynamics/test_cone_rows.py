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


# --- the world-surface rows without the ratchet (docs/dynamics.md 5f, issue 10 eighth round) --
# Main's rows kept every body point touching a world surface *in the current round* within
# 90 % of the tolerance: re-linearised every round, each newly touching point was pushed down
# and nothing pulled the body back (louise's ride 2 cm below the input's seat height). The
# rows now take the touching points and their bounds from the reference clip (the input).


def _heaving_sway_on_low_rests(skel, sink=0.027):
    """The raised sway (a bigger bow) with the rests ``sink`` m below the soles (within the
    3 cm contact tolerance) and the body heaving +-1 cm: the soles' points go in and out of
    contact with the rests."""
    import dataclasses

    m, sup = _raised_sway(skel, amp=0.3)
    q = m.q.copy()
    q[:, skel.dof_index("pelvis_tz")] += 0.01 * np.sin(2 * np.pi * 0.7 * np.arange(m.n_frames)
                                                       / m.fps)
    sup = SupportSet(tuple(dataclasses.replace(s, points=s.points - [0.0, 0.0, sink])
                           for s in sup.supports), "test")
    return Motion(skel, q, m.fps), sup


def _rider_rising_off_the_seat(skel):
    """A seated body95 figure (``seated_clip``: raised 0.3 m at 0.5 s, auto supports: a world
    seat under the pelvis, grips, foot rests, from frame 69) that from 1.2 s rises off the seat
    by up to 4 cm and sits back (1.3 Hz) while bowing (0.1 rad at 1.7 Hz): the seat's points
    leave the 3 cm tolerance and come back every stroke, as louise's on the saddle."""
    from conftest import seated_clip

    from animik.dynamics.offfloor import infer_supports

    m0 = seated_clip(skel, T=240, fps=60.0, at=0.5)
    sup = infer_supports(m0)
    q = m0.q.copy()
    t = np.arange(len(q)) / m0.fps
    on = np.clip((t - 1.2) / 0.3, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] += on * 0.02 * (1 - np.cos(2 * np.pi * 1.3 * t))
    q[:, skel.dof_index("lumbar_flexion")] += on * 0.1 * np.sin(2 * np.pi * 1.7 * t)
    return Motion(skel, q, m0.fps), sup


def _vertical_correction_mm(skel, m, res):
    dz = 1000.0 * (res.motion.q[:, skel.dof_index("pelvis_tz")] - m.q[:, skel.dof_index("pelvis_tz")])
    return dz, dz[2:] - 2 * dz[1:-1] + dz[:-2]


def test_surface_rows_do_not_ratchet_the_body_into_the_rests():
    """The heaving sway on low rests: the correction makes every frame feasible and keeps the
    pelvis at the input's height (measured: mean -0.6 mm, lowest -1.6 mm; main's rows
    -6.3 / -10.6 mm, the rounds' pushes adding up), without shaking it (second difference of
    the correction 0.43 mm at most; main 0.45)."""
    skel = animik.load_rig("body95")
    m, sup = _heaving_sway_on_low_rests(skel)
    before = check_clip(m, supports=sup)
    assert (~before.feasible).sum() >= 20
    res = correct_clip(m, supports=sup)
    after = check_clip(res.motion, supports=sup)
    assert after.feasible.all(), after.infeasible_frames
    dz, d2 = _vertical_correction_mm(skel, m, res)
    assert dz.mean() > -2.0 and dz.min() > -3.0, (dz.mean(), dz.min())
    assert np.abs(d2).max() < 1.0, np.abs(d2).max()


def test_a_rider_rising_off_the_seat_is_not_sunk_onto_it():
    """The rider rising off a world seat and sitting back: every supported frame is made
    feasible (frames 36-68, raised before the supports start, are carried by nothing in the
    input and stay so), the pelvis keeps the input's height over the ride (measured: mean
    -0.6 mm, lowest -1.8 mm; main's rows -10.1 / -13.1 mm: sunk onto the seat) and the
    correction does not shake it (second difference 0.55 mm at most; main 0.58)."""
    skel = animik.load_rig("body95")
    m, sup = _rider_rising_off_the_seat(skel)
    before = check_clip(m, supports=sup)
    ride = np.arange(m.n_frames) >= sup.supports[0].frames[0][0]
    assert (~before.feasible & ride).sum() >= 30
    res = correct_clip(m, supports=sup)
    after = check_clip(res.motion, supports=sup)
    assert after.feasible[ride].all(), after.infeasible_frames
    assert not (after.check.reasons & THROUGH).any()
    dz, d2 = _vertical_correction_mm(skel, m, res)
    s = int(1.5 * m.fps)
    assert abs(dz[s:].mean()) < 2.0 and dz[s:].min() > -4.0, (dz[s:].mean(), dz[s:].min())
    assert np.abs(d2).max() < 1.0, np.abs(d2).max()


def test_surface_rows_are_the_references_whatever_the_round():
    """The rows' bounds on each point's gap come from the reference: the same rows (frames,
    points, bounds on the absolute gap) whether the round's pose is the reference or the body
    1 cm lower -- nothing for the rounds to ratchet. Main's rows (no reference) are re-taken
    from the round's pose: lowered, more points touch and get rows."""
    from animik.dynamics.cone_rows import _surface_rows

    skel = animik.load_rig("body95")
    m, sup = _rider_rising_off_the_seat(skel)
    frames = np.arange(80, m.n_frames)
    low = m.q.copy()
    low[:, skel.dof_index("pelvis_tz")] -= 0.01

    class _Chk:
        supports = sup

    ref = sup.at(skel, m.q[frames], frames=frames)
    rows = {}
    for name, q in (("ref", m.q), ("low", low)):
        sf = sup.at(skel, q[frames], frames=frames)
        rows[name] = _surface_rows(_Chk(), frames, sf, 5, sf_ref=ref)
        rows[name + "_main"] = _surface_rows(_Chk(), frames, sf, 5)
    # the rows keeping a point on its surface (positive coefficient: the surfaces face up);
    # a point the lowered body brings within the tolerance only gets a row against going
    # through, and nothing holds it there
    (f0, c0, r0), (f1, c1, r1) = ((f[c[:, 0, 2] > 0], c[c[:, 0, 2] > 0], r[c[:, 0, 2] > 0])
                                  for f, c, r in (rows["ref"], rows["low"]))
    assert len(f0) > 100
    np.testing.assert_array_equal(f0, f1)
    np.testing.assert_array_equal(c0, c1)
    # a row is  s nz (g + dz) <= b  as  100 s nz dz <= 100 (b - s nz g): lowered 1 cm, g is
    # 1 cm less (times nz), so the same bound b gives a right side larger by s nz 0.01
    np.testing.assert_allclose(r1 - r0, 0.01 * c0[:, 0, 2], atol=1e-9)
    on_main = [int((r[1][:, 0, 2] > 0).sum()) for r in (rows["ref_main"], rows["low_main"])]
    assert on_main[1] > on_main[0], on_main


def test_per_probe_screen_equals_the_repeated_batch():
    """``cone_rows`` screens its probes one probe at a time on the frames' own programmes
    (docs/dynamics.md 6j: no ``cols[rep]`` copy); the simplex solves each programme on its
    own, so that is the screen of the repeated batch, bit for bit."""
    from animik.dynamics.cone_rows import _screen

    skel = animik.load_rig("body95")
    m, sup = _raised_sway(skel)
    chk = check_clip(m, supports=sup)
    frames = np.flatnonzero(chk.check.support_active.any(axis=1))
    cols, ub, w, _, _ = cone_programmes(skel, chk, frames)
    offs = 0.03 * np.vstack([np.zeros(6), np.eye(6)[[0, 1, 3, 4]], -np.eye(6)[[0, 1, 3, 4]]])
    F, P = len(frames), len(offs)
    wp = w[:, None] + offs[None]
    rep = np.repeat(np.arange(F), P)
    ok, batch = _screen(cols[rep], ub[rep], wp.reshape(F * P, 6))
    per = np.stack([_screen(cols, ub, wp[:, p])[1] for p in range(P)], axis=1)
    assert ok.all() and (batch > 1e-6).any() and (batch <= 1e-6).any()
    assert np.array_equal(batch, per.reshape(F * P))
