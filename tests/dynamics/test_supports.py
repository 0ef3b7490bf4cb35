"""Supports off the floor and the contact-wrench-cone check (docs/dynamics.md section 5f).

Independent references: the ZMP-in-polygon + friction checks of seed D for coplanar floor
contacts (random wrenches away from the boundary), and hand-computed static cases.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared, seated_clip

import animik
from animik.cli import main
from animik.dynamics.clip import check_clip
from animik.dynamics.cone import cone_residual
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.inverse import GRAVITY
from animik.dynamics.model import with_model_of
from animik.dynamics.offfloor import infer_supports, supports_sidecar
from animik.dynamics.support_smooth import smooth_supported
from animik.dynamics.supports import Support, SupportError, SupportSet, supports_from_dict
from animik.dynamics.zmp import CONE, evaluate_wrench
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion

NONE3 = np.zeros((1, 0, 3))


def _one(wrench, com, weight, push=None, grip=None):
    """cone_residual for one frame: push = (points, normals, mu), grip = (points, bound)."""
    pp, pn, pm = push if push is not None else (np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
    gp, gb = grip if grip is not None else (np.zeros((0, 3)), np.zeros(0))
    r, ax = cone_residual(np.asarray(wrench, float)[None], np.asarray(com, float)[None], weight,
                          np.asarray(pp, float)[None], np.asarray(pn, float)[None],
                          np.asarray(pm, float), np.ones((1, len(pp)), bool),
                          np.asarray(gp, float)[None], np.asarray(gb, float),
                          np.ones((1, len(gp)), bool))
    return float(r[0]), int(ax[0])


def _static(m, com):
    """Wrench (moment about the origin, force) that holds a still body of mass m at com."""
    f = -m * np.asarray(GRAVITY)
    return np.concatenate([np.cross(com, f), f])


def test_cone_agrees_with_zmp_and_friction_on_coplanar_floor_contacts():
    skel = animik.load_rig("body95")
    q = skel.rest_q[None]
    cm = contact_model_for_clip(skel, q)
    pts = cm.points(skel, q)  # (1, P, 3)
    floor = float(pts[..., 2].min())
    weight = skel.total_mass * 9.81
    rng = np.random.default_rng(7)
    mu = 0.7
    lo, hi = pts[0, :, :2].min(0) - 0.05, pts[0, :, :2].max(0) + 0.05
    n, agree, kept, feasible = 600, 0, 0, 0
    for _ in range(n):
        act = rng.random(cm.n_areas) < 0.8
        if not act.any():
            act[rng.integers(cm.n_areas)] = True
        fz = rng.uniform(0.2, 2.0) * weight * (1 if rng.random() < 0.9 else -1)
        ratio = rng.uniform(0.0, 1.2 * mu)
        ang = rng.uniform(0, 2 * np.pi)
        f = np.array([abs(fz) * ratio * np.cos(ang), abs(fz) * ratio * np.sin(ang), fz])
        p = np.array([*rng.uniform(lo, hi), floor])
        w = np.concatenate([np.cross(p, f), f])  # no moment about p: the ZMP, no yaw moment
        com = p + [0.0, 0.0, 1.0]
        z = evaluate_wrench(skel, w[None], pts, act[None], com[None], mu, floor, contacts=cm)
        if fz > 0 and (abs(z.margin[0]) < 0.01 or 0.9 * mu < ratio < 1.02 * mu):
            continue  # the boundary: the pyramid is inscribed in the cone, hull vs corners
        kept += 1
        on = act[cm.point_area]
        pp = pts[0].copy()
        pp[:, 2] = floor
        r, _ = _one(w, com, weight, (pp[on], np.tile([0, 0, 1.0], (on.sum(), 1)),
                                     np.full(on.sum(), mu)))
        agree += (r <= 1e-6) == bool(z.feasible[0])
        feasible += bool(z.feasible[0])
    assert kept > 300 and 50 < feasible < kept - 50  # both verdicts well represented
    assert agree == kept


def test_hand_computed_seat_holds_and_tilted_seat():
    m, weight = 60.0, 60.0 * 9.81
    com = np.array([0.0, 0.0, 0.9])
    w = _static(m, com)
    seat = np.array([[0.1, 0.1, 0.5], [0.1, -0.1, 0.5], [-0.1, 0.1, 0.5], [-0.1, -0.1, 0.5]])
    up = np.tile([0, 0, 1.0], (4, 1))
    # a seat under the COM carries m g
    assert _one(w, com, weight, (seat, up, np.full(4, 0.7))) == (0.0, -1)
    # a seat 0.3 m beside the COM pushes but cannot hold the moment
    r, ax = _one(w, com, weight, (seat + [0.3, 0, 0], up, np.full(4, 0.7)))
    assert r > 0.1 and ax in (1, 5)
    # two holds of bound b each beside the COM: they lift 2 b, the rest m g - 2 b is missing
    holds = np.array([[0.0, 0.3, 1.2], [0.0, -0.3, 1.2]])
    for b in (0.2 * weight, 0.45 * weight):
        r, ax = _one(w, com, weight, grip=(holds, np.full(2, b)))
        assert r == pytest.approx((weight - 2 * b) / weight, abs=1e-9) and ax == 5
    assert _one(w, com, weight, grip=(holds, np.full(2, 0.6 * weight)))[0] == 0.0
    # holds pull too: hanging below them
    assert _one(w, com - [0, 0, 0.8], weight, grip=(holds, np.full(2, 0.6 * weight)))[0] == 0.0
    # a seat tilted by theta carries the vertical weight only if tan(theta) is inside the
    # friction pyramid (inscribed octagon: mu cos(22.5 deg))
    for theta, ok in ((np.arctan(0.5), True), (np.arctan(0.8), False)):
        n = np.tile([np.sin(theta), 0.0, np.cos(theta)], (4, 1))
        r, _ = _one(w, com, weight, (seat, n, np.full(4, 0.7)))
        assert (r <= 1e-9) == ok
    # pulling down is never pushed by a seat
    assert _one(-w, com, weight, (seat, up, np.full(4, 0.7)))[0] == pytest.approx(1.0)


def _body_frame(sup: SupportSet, m: Motion, frame: int = -1) -> SupportSet:
    """The supports fixed to the body parts resting on them, at ``frame``'s pose (the form
    auto inferred before seats became world-fixed)."""
    from animik.kinematics import forward_kinematics

    fk = forward_kinematics(m.skeleton, m.q[frame])
    out = []
    for s in sup.supports:
        if s.touches:
            R = fk.joint_rotations[s.body]
            s = Support(s.name, s.kind, s.body, s.body_points, R.T @ s.normal, s.mu,
                        s.max_force, s.frames)
        out.append(s)
    return SupportSet(tuple(out), "body")


def test_inferred_supports_carry_a_seated_body_and_leave_other_frames_bit_for_bit():
    skel = animik.load_rig("body95")
    m = seated_clip(skel)
    sup = infer_supports(m)
    kinds = {s.name: s.kind for s in sup.supports}
    assert kinds == {"seat": "seat", "l_hand_hold": "hold", "r_hand_hold": "hold",
                     "l_foot_rest": "foot_rest", "r_foot_rest": "foot_rest"}
    a, b = sup.supports[0].frames[0]
    assert 40 <= a <= 60 and b == 149
    floor_only = check_clip(m)
    assert (~floor_only.feasible[a:]).all()  # a held body is a "flight" to the floor check
    res = check_clip(m, supports=sup)
    assert res.feasible[a:].all()  # (the rise itself, 1.0-1.3 s, levitates: a flight)
    c = res.check
    assert c.support_active[a:].all() and not c.support_active[:a].any()
    assert (c.reasons[a:] & CONE).sum() == 0 and np.nanmax(c.cone_residual) <= 1e-9
    # frames without an active support: every field bit-for-bit as without supports
    for name in ("wrench", "zmp", "normal_force", "friction_ratio", "margin", "nearest",
                 "flight_residual", "in_contact", "reasons", "feasible", "com"):
        x, y = getattr(c, name)[:a], getattr(floor_only.check, name)[:a]
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    # only the holds, each able to give 50 N: infeasible, and the residual says force z
    weak = SupportSet(tuple(Support(s.name, s.kind, s.joint, s.points, s.normal, s.mu, 50.0,
                                    s.frames) for s in sup.supports if s.kind == "hold"))
    r2 = check_clip(m, supports=weak)
    assert (~r2.feasible[a:]).all() and (r2.check.cone_axis[a:] == 5).all()


def test_smoothing_removes_a_capture_spike_on_supported_frames_only():
    skel = animik.load_rig("body95")
    m = seated_clip(skel, T=180)
    q = m.q.copy()
    q[120:122, skel.dof_index("pelvis_tx")] += 0.1  # a two-frame marker jump while seated
    spiky = Motion(skel, q, m.fps)
    sup = infer_supports(m)
    on = sup.active(len(q)).any(axis=1)
    before = check_clip(spiky, supports=sup)
    bad = np.flatnonzero(~before.feasible & on)
    assert len(bad) and (before.check.reasons[bad] == CONE).all()
    sm = smooth_supported(spiky, sup)
    assert sm.rounds[0] == len(bad) and sm.rounds[-1] == 0
    assert check_clip(sm.motion, supports=sup).feasible[on].all()
    assert np.array_equal(sm.motion.q[~on], q[~on]) and not sm.changed[~on].any()
    assert np.abs(sm.motion.q - q).max() <= 0.1


def test_filter_writes_a_seated_clip_with_its_supports_and_the_check_agrees(tmp_path, capsys):
    skel = animik.load_rig("body95")
    clip, out, rep = tmp_path / "seated.bvh", tmp_path / "o.bvh", tmp_path / "o.json"
    m = seated_clip(skel)
    write_bvh_compatible(m, clip)
    # auto: the supports cover the held stretch (from 50); the rise (33-49) levitates
    assert main(["feasibility", str(clip), "--model", "body95", "--every", "0",
                 "--json", str(tmp_path / "a.json")]) == 5
    text = capsys.readouterr().out
    assert json.loads((tmp_path / "a.json").read_text())["summary"]["support_travel_cm"][
        "seat"] < 0.1
    assert "supports (auto): seat (seat on world, pelvis on it, frames 50-149)" in text
    assert "contact wrench cone: 100, infeasible 0" in text and "infeasible frames: 17 / 150" in text
    # auto's supports are fixed in the world with the body part on them (the JSON round trip
    # of "on" / "on_points" as a user's file): the pelvis touches the seat throughout
    auto_d = json.loads((tmp_path / "a.json").read_text())["summary"]["supports"]
    assert auto_d["supports"][0]["joint"] == "world" and auto_d["supports"][0]["on"] == "pelvis"
    user = tmp_path / "seat.json"
    user.write_text(json.dumps(auto_d))
    assert main(["feasibility", str(clip), "--model", "body95", "--every", "0", "--supports",
                 str(user), "--json", str(tmp_path / "u.json")]) == 5  # the rise levitates
    u = json.loads((tmp_path / "u.json").read_text())["summary"]
    assert u["infeasible_frames"] == 17 and u["support_travel_cm"]["seat"] == 0.0
    assert u["support_contact"]["seat"]["touch_share"] == 1.0 and u["support_warnings"] == []
    # the user's file: the same supports fixed to the body parts from frame 28, the seat
    # lifting the body as it rises (a lifting chair)
    read = animik.read_bvh(clip)
    read = Motion(with_model_of(read.skeleton, skel), read.q, read.fps)
    chair = _body_frame(supports_from_dict(auto_d, read.skeleton, 0.7), read).to_dict(skel)
    for s in chair["supports"]:
        s["frames"] = [[28, 149]]
    user.write_text(json.dumps(chair))
    capsys.readouterr()
    assert main(["filter", str(clip), "-o", str(out), "--model", "body95", "--plant",
                 "--supports", str(user), "--json", str(rep)]) == 0
    r = json.loads(rep.read_text())
    assert r["written"] and r["support_frames"] == 122 and r["support_frames_infeasible"] == 0
    assert [s["name"] for s in r["supports"]["supports"]][0] == "seat"
    side = supports_sidecar(out)
    assert json.loads(side.read_text())["supports"][0]["frames"] == [[28, 149]]
    capsys.readouterr()
    assert main(["feasibility", str(out), "--model", "body95", "--every", "0",
                 "--json", str(tmp_path / "f.json"), "--plot", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").stat().st_size > 10_000  # the supports' points drawn too
    text = capsys.readouterr().out
    assert f"supports (file:{side})" in text
    f = json.loads((tmp_path / "f.json").read_text())
    assert f["summary"]["support_frames"] == 122 and f["frames"][120]["supports"][0] == "seat"
    # the seat fixed to the pelvis rose with it (a lifting chair): the report shows how far a
    # support travelled in the world and flags it (a warning, not exit 5 by itself: the
    # wrench check holds for a moving support; only the file's author knows)
    assert f["summary"]["support_travel_cm"]["seat"] > 10.0
    assert any(w.startswith("seat: a seat fixed to pelvis travels")
               for w in f["summary"]["support_warnings"])
    assert "warning: seat: a seat fixed to pelvis travels" in text
    assert main(["feasibility", str(out), "--model", "body95", "--every", "0",
                 "--supports", "floor"]) == 5
    # the floor only: a clip held off the floor is refused up front, and no stale sidecar stays
    # next to an output written without supports
    assert main(["filter", str(clip), "-o", str(out), "--model", "body95",
                 "--supports", "floor"]) == 5
    stand = tmp_path / "stand.bvh"
    write_bvh_compatible(seated_clip(skel, up=0.0), stand)
    assert main(["filter", str(stand), "-o", str(out), "--model", "body95"]) == 0
    assert not side.exists()


@pytest.mark.parametrize("bad, key", [
    ({"name": "s", "kind": "seat", "joint": "nope", "points": [[0, 0, 0]], "normal": [0, 0, 1]},
     "supports[0].joint"),
    ({"name": "s", "kind": "seat", "joint": "pelvis", "points": [[0, float("nan"), 0]],
      "normal": [0, 0, 1]}, "supports[0].points"),
    ({"name": "s", "kind": "seat", "joint": "pelvis", "points": [[0, 0, 0]], "normal": [0, 0, 0]},
     "supports[0].normal"),
    ({"name": "s", "kind": "seat", "joint": "pelvis", "points": [[0, 0, 0]], "normal": [0, 0, 1],
      "mu": 0}, "supports[0].mu"),
    ({"name": "s", "kind": "seat", "joint": "pelvis", "points": [[0, 0, 0]], "normal": [0, 0, 1],
      "mu": -0.5}, "supports[0].mu"),
    ({"name": "h", "kind": "hold", "joint": "l_wrist", "points": [[0, 0, 0]]},
     "supports[0].max_force"),
    ({"name": "s", "kind": "bench", "joint": "pelvis", "points": [[0, 0, 0]]}, "supports[0].kind"),
    ({"name": "s", "kind": "seat", "joint": "pelvis", "points": [[0, 0, 0]], "normal": [0, 0, 1],
      "frames": [[10, 500]]}, "supports[0].frames"),
    ({"name": "s", "kind": "seat", "joint": "pelvis", "points": [[0, 0, 0]], "normal": [0, 0, 1],
      "height": 2}, "unknown keys"),
])
def test_bad_supports_name_the_key(tmp_path, capsys, bad, key):
    skel = animik.load_rig("body95")
    with pytest.raises(SupportError, match=key.replace("[", r"\[").replace("]", r"\]")):
        supports_from_dict({"supports": [bad]}, skel, 0.7, n_frames=150)
    clip, f = tmp_path / "seated.bvh", tmp_path / "bad.json"
    write_bvh_compatible(seated_clip(skel), clip)
    f.write_text(json.dumps({"supports": [bad]}))
    assert main(["feasibility", str(clip), "--model", "body95", "--supports", str(f)]) == 3
    assert key.split(".")[-1].split("[")[0] in capsys.readouterr().err


def test_supports_file_errors_are_usage_or_os(tmp_path):
    skel = animik.load_rig("body95")
    clip = tmp_path / "seated.bvh"
    write_bvh_compatible(seated_clip(skel), clip)
    assert main(["feasibility", str(clip), "--model", "body95",
                 "--supports", str(tmp_path / "missing.json")]) == 4
    (tmp_path / "x.json").write_text("{not json")
    assert main(["feasibility", str(clip), "--model", "body95",
                 "--supports", str(tmp_path / "x.json")]) == 3
    assert main(["feasibility", str(clip), "--model", "body95", "--supports", "sometimes"]) == 3
    out = tmp_path / "out.bvh"
    assert main(["filter", str(clip), "-o", str(out), "--model", "body95", "--method", "B",
                 "--supports", str(tmp_path / "x.json")]) == 2  # method B: floor springs only
    assert not out.exists()
    with pytest.raises(SupportError, match="unique"):
        s = {"name": "s", "kind": "seat", "joint": "world", "points": [[0, 0, 0.5]],
             "normal": [0, 0, 1]}
        supports_from_dict({"supports": [s, s]}, skel, 0.7)


@needs_shared
def test_louise_rides_on_inferred_supports():
    """optitrack louise.bvh (raw): from 8.7 s on a stationary bike, mounted from 8.1 s standing
    on the left pedal. ``--supports auto`` finds a seat and two grips fixed in the world, two
    moving pedals over the held stretch, and a world foot rest under the left foot for the
    mount (the seat and grips from the mount on); the cone check carries every supported frame
    but a few single-frame capture spikes and the last frames (the Savitzky-Golay fit's edge);
    the floor check failed all of them."""
    m = animik.read_bvh(SHARED_BVH / "optitrack_adelaide" / "louise.bvh")
    sup = infer_supports(m)
    assert {s.name: s.kind for s in sup.supports} == {
        "seat": "seat", "l_hand_hold": "hold", "r_hand_hold": "hold", "l_pedal": "pedal",
        "r_pedal": "pedal", "l_foot_raised_rest": "foot_rest"}
    (a, b), = sup.supports[0].frames
    (p, _), = sup.supports[3].frames
    assert 800 <= a <= 830 and b == 2997 and 850 <= p <= 880  # the mount, then the ride
    assert [s.joint for s in sup.supports] == [-1, -1, -1, *[s.joint for s in sup.supports[3:5]],
                                               -1] and min(s.joint for s in sup.supports[3:5]) >= 0
    floor = check_clip(m, supports=None)
    res = check_clip(m, supports=sup)
    on = res.check.support_active.any(axis=1)
    assert on.sum() == b - a + 1 and (~floor.feasible[on]).mean() > 0.99
    bad = np.flatnonzero(on & ~res.feasible)
    assert len(bad) <= 15 and (res.check.reasons[bad] == CONE).all()
    # isolated frames (spikes), not stretches: no two neighbours apart from the clip's end
    inner = bad[bad < len(m.q) - 5]
    assert (np.diff(inner) > 1).all()
    # the frames before the bike are checked as before, bit for bit
    assert np.array_equal(res.check.reasons[:a], floor.check.reasons[:a])
    assert np.array_equal(res.check.margin[:a], floor.check.margin[:a], equal_nan=True)
