"""A foot turning in place stays in contact (docs/dynamics.md 5j, "The raw pirouette"): the
contact detector judges a sole that turns fast about the vertical by its pivot's speed, not by
its circling mean. Checked on body95 spun about the ball of its left foot, against a slide of
the same speed (which must still lose the contact) and a slow turn (left bit for bit)."""

from __future__ import annotations

import numpy as np

import animik
from animik.dynamics import check_clip, detect_clip_contacts
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.turning_contacts import turning_speed
from animik.motion import Motion


def _spin(skel, rate: float, slide: float = 0.0, fps: float = 120.0):
    """body95 standing on the floor, still for 0.5 s, then turning about the vertical through
    the ball of its left foot at ``rate`` rad/s for 1 s (eased in over 0.1 s), then still;
    ``slide``: instead of turning, the whole figure slides along x at that speed (m/s)."""
    T = int(round(2.0 * fps))
    q = np.tile(skel.rest_q, (T, 1))
    cm = contact_model_for_clip(skel, q)
    z = skel.dof_index("pelvis_tz")
    q[:, z] -= cm.points(skel, q[:1])[..., 2].min()
    pts = cm.points(skel, q[:1])[0]
    left = pts[cm.point_area == cm.area_index("l_foot")]
    fwd = left[:, 0] if np.ptp(left[:, 0]) > np.ptp(left[:, 1]) else left[:, 1]
    front = left[np.argsort(fwd)[-2:]].mean(axis=0)
    ball = 0.75 * front + 0.25 * left.mean(axis=0)  # under the sole, toward its front
    t = np.arange(T) / fps
    s = np.clip((t - 0.5) / 0.1, 0.0, 1.0)
    speed = np.where(t < 1.5, 3 * s ** 2 - 2 * s ** 3, 0.0)
    angle = np.cumsum(speed) / fps  # the turn (rad per unit rate) or distance (m per m/s)
    x, y = skel.dof_index("pelvis_tx"), skel.dof_index("pelvis_ty")
    if slide:
        q[:, x] += slide * angle
        return Motion(skel, q, fps), cm
    th = rate * angle
    p0 = np.array([q[0, x], q[0, y]]) - ball[:2]
    c, si = np.cos(th), np.sin(th)
    q[:, x] = ball[0] + c * p0[0] - si * p0[1]
    q[:, y] = ball[1] + si * p0[0] + c * p0[1]
    q[:, skel.dof_index("pelvis_rz")] += th
    return Motion(skel, q, fps), cm


def _mean_speed(skel, m, cm):
    pts = cm.points(skel, m.q)
    a = cm.area_index("l_foot")
    mid = pts[:, cm.point_area == a].mean(axis=1)
    return np.linalg.norm(np.gradient(mid[:, :2], 1.0 / m.fps, axis=0), axis=1), pts


def test_a_foot_spinning_on_its_ball_stays_in_contact():
    """12 rad/s (two turns a second, a pirouette's rate) about the left ball: the sole's mean
    circles at more than the detector's release speed (0.6 m/s), so judged by it the left foot
    loses the contact for the whole turn (main's detector); by its pivot (which stands still)
    it keeps it. The check's flags (its own detection) agree."""
    skel = animik.load_rig("body95")
    m, cm = _spin(skel, 12.0)
    v, pts = _mean_speed(skel, m, cm)
    turn = slice(int(0.65 * m.fps), int(1.45 * m.fps))
    assert v[turn].min() > 0.6
    a = cm.area_index("l_foot")
    spd = np.stack([v, v], axis=1)
    assert turning_speed(pts, cm.point_area, cm.n_areas, m.fps, spd)[turn, a].max() < 0.05
    flags, _ = detect_clip_contacts(skel, m.q, m.fps, contacts=cm)
    assert flags[turn, a].all()
    chk = check_clip(m, contacts=cm)
    assert chk.check.in_contact[turn, a].all()
    # the right foot circles about the left ball at ~1.5-2.5 m/s: not in contact
    assert not chk.check.in_contact[turn, cm.area_index("r_foot")].any()


def test_a_slide_or_a_slow_turn_is_judged_as_before():
    """The same figure sliding at 1 m/s loses both contacts (a translation moves the pivot
    too); a slow turn (3 rad/s, a walking foot's rate) keeps the mean's speed bit for bit."""
    skel = animik.load_rig("body95")
    m, cm = _spin(skel, 0.0, slide=1.0)
    flags, _ = detect_clip_contacts(skel, m.q, m.fps, contacts=cm)
    mid = slice(int(0.65 * m.fps), int(1.45 * m.fps))
    assert not flags[mid].any()
    m, cm = _spin(skel, 3.0)
    v, pts = _mean_speed(skel, m, cm)
    spd = np.stack([v, v], axis=1)
    assert np.array_equal(turning_speed(pts, cm.point_area, cm.n_areas, m.fps, spd), spd)
