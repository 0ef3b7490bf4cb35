"""A treadmill capture turned into overground walking (animik.dynamics.treadmill, run by
``animik filter --plant``): a body standing on a raised belt that runs at a constant speed
becomes a body standing on the floor, its accelerations kept, its feet still, and the written
clip passes the independent ``animik feasibility`` at every frame."""

from __future__ import annotations

import numpy as np

import animik
from animik.cli import main
from animik.dynamics import check_clip
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.treadmill import belt_and_surface, to_overground
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion

DECK = 0.2  # m, the belt above the floor
SPEED = 1.2  # m/s


def _standing(skel, T):
    """body95 in a slight crouch, feet flat on z = 0."""
    q = np.tile(skel.rest_q, (T, 1))
    for side in "lr":
        q[:, skel.dof_index(f"{side}_hip_flexion")] += 0.3
        q[:, skel.dof_index(f"{side}_knee_flexion")] += 0.6
        q[:, skel.dof_index(f"{side}_ankle_dorsiflexion")] += 0.3
    cm = contact_model_for_clip(skel, q)
    q[:, skel.dof_index("pelvis_tz")] -= cm.points(skel, q)[..., 2].min(axis=1)
    return q


def _belt_clip(skel, fps=50.0, seconds=6.0):
    """On the floor for 1 s, lifted onto a deck ``DECK`` m high (0.5 s), carried by its belt:
    the belt starts at 2 s, runs at ``SPEED`` m/s from 3 s; the trunk sways sideways (1 Hz)
    throughout, so the clip has accelerations of its own that the conversion must keep."""
    T = int(seconds * fps)
    t = np.arange(T) / fps
    q = _standing(skel, T)
    q[:, skel.dof_index("lumbar_lateral")] += 0.08 * np.sin(2 * np.pi * t)
    up = np.clip((t - 1.0) / 0.5, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] += DECK * (3 * up ** 2 - 2 * up ** 3)
    # belt velocity: 0 until 2 s, a smooth ramp to SPEED by 3 s; the body rides it along -x
    r = np.clip(t - 2.0, 0.0, 1.0)
    v = SPEED * (3 * r ** 2 - 2 * r ** 3)
    x = np.concatenate([[0.0], np.cumsum(0.5 * (v[1:] + v[:-1])) / fps])
    q[:, skel.dof_index("pelvis_tx")] -= x
    return Motion(skel, q, fps)


def test_belt_found_and_taken_out():
    skel = animik.load_rig("body95")
    m = _belt_clip(skel)
    before = check_clip(m)
    carried = np.arange(len(m.q)) / m.fps > 2.5
    assert not before.check.in_contact[carried].any()  # the belt: too fast for a contact
    assert (~before.feasible[carried]).all()
    belt, surface, sections, _floor = belt_and_surface(m)
    assert len(sections) == 1
    s, e = sections[0]
    assert e == len(m.q) and abs(s / m.fps - 2.5) < 0.5
    steady = np.arange(len(m.q)) / m.fps > 4.2  # the belt's estimate averages 2 x 1 s
    np.testing.assert_allclose(belt[steady], [[-SPEED, 0.0]] * int(steady.sum()), atol=1e-6)
    np.testing.assert_allclose(surface[steady], DECK, atol=2e-3)
    r = to_overground(m)
    # overground: the feet stay on the floor and do not slide
    cm = contact_model_for_clip(skel, r.motion.q)
    pts = cm.points(skel, r.motion.q)
    t = np.arange(len(m.q)) / m.fps
    lift = (t > 0.8) & (t < 1.8)  # the surface is smoothed over 0.3 s
    sole = np.abs(pts[:, :, 2].min(axis=1))
    assert sole[~lift].max() < 0.005 and sole[lift].max() < 0.05
    # the belt's start (1 s) is averaged over 2 s: the feet drift while it speeds up and come
    # back (the estimate integrates to the belt's travel); at a constant speed they stand
    slide = np.abs(pts[:, :, :2] - pts[:1, :, :2])
    assert slide.max() < 0.15
    assert slide[steady].max() < 1e-3
    # the belt runs at a constant speed: the root's accelerations are the input's there
    root = [skel.dof_index(f"pelvis_t{a}") for a in "xyz"]
    acc_in = np.diff(m.q[:, root], 2, axis=0) * m.fps ** 2
    acc_out = np.diff(r.motion.q[:, root], 2, axis=0) * m.fps ** 2
    np.testing.assert_allclose(acc_out[steady[1:-1]], acc_in[steady[1:-1]], atol=1e-6)
    # and the independent check accepts every frame, each with a contact
    after = check_clip(r.motion)
    assert after.check.in_contact.any(axis=1).all()
    assert after.feasible.all()


def test_no_belt_no_change():
    skel = animik.load_rig("body95")
    q = _standing(skel, 100)
    q[:, skel.dof_index("pelvis_tx")] += 0.4 * np.sin(np.arange(100) / 50.0 * np.pi)  # a sway
    m = Motion(skel, q, 50.0)
    r = to_overground(m)
    assert r.sections == [] and r.motion is m and not r.shift.any()


def test_filter_writes_a_feasible_overground_clip(tmp_path, capsys):
    skel = animik.load_rig("body95")
    src, out = tmp_path / "belt.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(_belt_clip(skel), src)
    assert main(["feasibility", str(src), "--model", "body95", "--every", "0"]) == 5
    assert main(["filter", str(src), "-o", str(out), "--model", "body95", "--plant"]) == 0
    capsys.readouterr()
    assert main(["feasibility", str(out), "--model", "body95", "--every", "0"]) == 0
