"""Supports fixed in the world with the body resting on them (docs/dynamics.md section 5f):
a seat pushes only where the body touches it, a body through it is infeasible, the plant
step does not lower a raised stance the supports hold, and floor-only clips are unchanged."""

from __future__ import annotations

import numpy as np
from conftest import crouched_on_floor, seated_clip

import animik
from animik.dynamics.clip import check_clip
from animik.dynamics.offfloor import infer_supports
from animik.dynamics.plant import plant_contacts
from animik.dynamics.supports import SupportSet
from animik.dynamics.treadmill import to_overground
from animik.dynamics.zmp import CONE, THROUGH
from animik.motion import Motion


def _moved(m: Motion, dz: float, start: int) -> Motion:
    """The clip with the whole figure moved ``dz`` m up from frame ``start`` (over 5 frames)."""
    q = np.array(m.q)
    r = np.clip((np.arange(len(q)) - start) / 5.0, 0.0, 1.0)
    q[:, m.skeleton.dof_index("pelvis_tz")] += dz * r
    return Motion(m.skeleton, q, m.fps)


def test_auto_supports_are_fixed_in_the_world_under_the_body():
    skel = animik.load_rig("body95")
    m = seated_clip(skel)
    sup = infer_supports(m)
    by = {s.name: s for s in sup.supports}
    for name, part in (("seat", "pelvis"), ("l_hand_hold", "l_wrist"),
                       ("l_foot_rest", "l_ankle")):
        s = by[name]
        assert s.joint == -1 and s.touches and skel.joint_names[s.body] == part
    sf = sup.at(skel, m.q)
    a = sup.supports[0].frames[0][0]
    seat = sf.push_support == 0
    # the seat is where the pelvis rests: the body's points on it, within a millimetre
    assert np.abs(sf.gap[a:, seat]).max() < 1e-3 and sf.push_touch[a:, seat].all()
    assert sf.grip_touch[a:].all() and not sf.sunk.any()


def test_a_body_through_a_world_seat_is_infeasible_and_one_above_it_is_not_carried():
    skel = animik.load_rig("body95")
    m = seated_clip(skel)
    sup = infer_supports(m)
    base = check_clip(m, supports=sup)
    assert base.feasible[50:].all()
    # sunk 10 cm through the seat (and the foot rests) from frame 100: the old body-frame
    # supports moved with the body and accepted it
    sunk = check_clip(_moved(m, -0.10, 100), supports=sup)
    assert (sunk.check.reasons[108:145] & THROUGH).all() and not sunk.feasible[108:145].any()
    assert not (sunk.check.reasons[:100] & THROUGH).any()
    # floating 10 cm above it: the seat no longer touches, so it carries nothing -- the seat
    # alone leaves the weight unsupported (force z), while it carries the seated frames
    seat = SupportSet((sup.supports[0],))
    up = _moved(m, 0.10, 100)
    sf = seat.at(skel, up.q)
    assert sf.push_touch[:95].any(axis=1)[50:].all() and not sf.push_touch[108:].any()
    r = check_clip(up, supports=seat)
    assert r.feasible[60:95].all()
    assert (r.check.reasons[108:145] & CONE).all() and (r.check.cone_axis[108:145] == 5).all()


def _deck_clip(skel, fps=50.0, seconds=4.0, deck=0.2):
    """body95 standing, stepping onto a deck ``deck`` m up at 1 s (0.5 s), standing on it."""
    T = int(seconds * fps)
    t = np.arange(T) / fps
    q = crouched_on_floor(skel, T)
    # swaying forward and back (COM s.d. 4 cm): standing on the deck, not held still on it
    q[:, skel.dof_index("pelvis_tx")] += 0.06 * np.sin(np.pi * t)
    up = np.clip((t - 1.0) / 0.5, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] += deck * (3 * up ** 2 - 2 * up ** 3)
    return Motion(skel, q, fps)


def test_a_raised_stance_on_supports_is_not_lowered_and_the_plant_leaves_it():
    skel = animik.load_rig("body95")
    m = _deck_clip(skel)
    floor_only = to_overground(m)
    assert floor_only.raised and floor_only.shift[:, 2].min() < -0.15  # lowered, 5e
    assert len(infer_supports(m)) == 0  # auto: a stance alone stays the floor path (5e)
    sup = infer_supports(m, raised_alone=True)
    rests = [s for s in sup.supports if "raised_rest" in s.name]
    assert len(rests) == 2 and all(s.joint == -1 and s.kind == "foot_rest" for s in rests)
    on = sup.active(len(m.q)).any(axis=1)
    kept = to_overground(m, supported=on)
    assert kept.raised == [] and kept.motion is m
    # the plant step: the supported frames are not moved (no lowering, no foot held there)
    pl = plant_contacts(m, supports=sup)
    assert np.array_equal(pl.motion.q[on], np.asarray(m.q)[on])
    res = check_clip(m, supports=sup)
    c = res.check
    assert not (c.reasons[on] & THROUGH).any() and (c.support_active[on].any(axis=1)).all()


def test_floor_only_clips_are_bit_for_bit_unchanged():
    """No support inferred on a floor clip: the plant step and the check are those of the
    floor (every field); the standing figure of the seated clip's first second."""
    skel = animik.load_rig("body95")
    m = seated_clip(skel, up=0.0)
    assert len(infer_supports(m)) == 0
    a = plant_contacts(m, supports=None)
    b = plant_contacts(m, supports=SupportSet(()))
    assert np.array_equal(a.motion.q, b.motion.q)
    ca, cb = check_clip(m).check, check_clip(m, supports=SupportSet(())).check
    for name in ("wrench", "zmp", "margin", "reasons", "feasible", "in_contact"):
        x, y = getattr(ca, name), getattr(cb, name)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name


def test_report_counts_supported_frames_as_carried():
    """The filter's report: an infeasible frame on an active support (the body sunk through
    the seat) is not one "carried by nothing" (the message would ask for a ballistic body)."""
    from animik.dynamics.correct import CorrectionResult

    skel = animik.load_rig("body95")
    m = seated_clip(skel)
    sup = infer_supports(m)
    sunk = _moved(m, -0.10, 100)
    chk = check_clip(sunk, supports=sup)
    bad = ~chk.feasible
    on_sup = chk.check.support_active.any(1)
    assert (bad & on_sup).sum() >= 30  # the frames through the seat
    r = CorrectionResult(sunk, chk, [(int(bad.sum()), 0)], 0.0, chk).report(m)
    expect = int((bad & ~on_sup & ~chk.check.in_contact.any(1)).sum())
    assert r["infeasible_frames"] == int(bad.sum())
    assert r["infeasible_without_contact"] == expect < int(bad.sum())
