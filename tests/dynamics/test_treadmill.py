"""A treadmill capture turned into overground walking (animik.dynamics.treadmill, run by
``animik filter --plant``): a body standing on a raised belt that runs at a constant speed
becomes a body standing on the floor, its accelerations kept, its feet still, and the written
clip passes the independent ``animik feasibility`` at every frame."""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, crouched_on_floor, needs_shared

import animik
from animik.cli import main
from animik.dynamics import check_clip
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.treadmill import belt_and_surface, to_overground
from animik.io.bvh_compat import write_bvh_compatible
from animik.kinematics import forward_kinematics
from animik.motion import Motion

DECK = 0.2  # m, the belt above the floor
SPEED = 1.2  # m/s


def _belt_clip(skel, fps=50.0, seconds=6.0):
    """On the floor for 1 s, lifted onto a deck ``DECK`` m high (0.5 s), carried by its belt:
    the belt starts at 2 s, runs at ``SPEED`` m/s from 3 s; the trunk sways sideways (1 Hz)
    throughout, so the clip has accelerations of its own that the conversion must keep."""
    T = int(seconds * fps)
    t = np.arange(T) / fps
    q = crouched_on_floor(skel, T)
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
    belt, surface, sections, _raised, _floor = belt_and_surface(m)
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
    lift = (t > 0.5) & (t < 2.0)  # the surface is smoothed over 0.5 s
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
    q = crouched_on_floor(skel, 100)
    q[:, skel.dof_index("pelvis_tx")] += 0.4 * np.sin(np.arange(100) / 50.0 * np.pi)  # a sway
    m = Motion(skel, q, 50.0)
    r = to_overground(m)
    assert r.sections == r.raised == [] and r.motion is m and not r.shift.any()


def test_filter_writes_a_feasible_overground_clip(tmp_path, capsys):
    skel = animik.load_rig("body95")
    src, out = tmp_path / "belt.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(_belt_clip(skel), src)
    assert main(["feasibility", str(src), "--model", "body95", "--every", "0"]) == 5
    assert main(["filter", str(src), "-o", str(out), "--model", "body95", "--plant"]) == 0
    capsys.readouterr()
    assert main(["feasibility", str(out), "--model", "body95", "--every", "0"]) == 0


def _pedalling(skel, fps=50.0, seconds=5.0, rpm=80.0, crank=0.17):
    """A body whose pelvis stays put while its feet turn cranks (a stationary bike): each
    sole follows a vertical circle of radius ``crank``, the two half a turn apart; the lowest
    point of each turn moves at ``crank * omega`` (1.4 m/s), as fast as a belt."""
    from animik.dynamics._leg_ik import hold_points

    T = int(seconds * fps)
    q = crouched_on_floor(skel, T)
    cm = contact_model_for_clip(skel, q)
    pts = cm.points(skel, q)
    w = rpm / 60.0 * 2 * np.pi
    t = np.arange(T) / fps
    anc = skel.joint_ancestor_mask
    root = int(np.flatnonzero(skel.parents < 0)[0])
    for a in range(cm.n_areas):
        P_a = np.flatnonzero(cm.point_area == a)
        ph = w * t + np.pi * a
        X = pts[:, P_a].copy()
        X[..., 0] += crank * np.sin(ph)[:, None]
        X[..., 2] += crank * (1 - np.cos(ph))[:, None]  # the turn's bottom at the floor
        joints = cm.point_joint[P_a]
        legj = anc[np.unique(joints)].any(axis=0)
        legj[root] = False
        dofs = np.flatnonzero(legj[skel.dof_joint])
        q = hold_points(skel, q, dofs, joints, cm.point_local[P_a], X, 1e-4, 40)
    return Motion(skel, q, fps)


def test_pedalling_is_not_a_belt():
    skel = animik.load_rig("body95")
    m = _pedalling(skel)
    # the floor is given: a clip of nothing but pedalling has no still foot to estimate it
    belt, _s, sections, _r, _f = belt_and_surface(m, floor=0.0, min_support=0.0)
    assert sections  # as fast as a belt at the bottom of each turn ...
    belt, _s, sections, _r, _f = belt_and_surface(m, floor=0.0)
    assert sections == [] and not belt.any()  # ... but no foot stays on it
    assert to_overground(m, floor=0.0).motion is m


@needs_shared
def test_louise_is_pedalling_not_a_belt():
    """The shared optitrack louise.bvh, thought a raised-treadmill walk: after 6.5 s standing
    and a mount, the feet turn circles of ~0.18 m radius half a turn apart (83 rpm) while the
    hips and wrists hold still within 1-2 cm (saddle, handlebars): a stationary bike. Its feet
    reach the belt speed at the bottom of each turn but touch that surface < 1/3 of the time."""
    from animik.io.bvh import read_bvh

    m = read_bvh(SHARED_BVH / "optitrack_adelaide" / "louise.bvh")
    fk = forward_kinematics(m.skeleton, m.q[1100:])
    toes = [m.skeleton.site_names.index(f"{s}Ankle_end") for s in ("Left", "Right")]
    for k in toes:
        p = fk.site_positions[:, k][:, [0, 2]]  # the pedalling plane (x forward, z up)
        A = np.column_stack([p, np.ones(len(p))])
        D, E, F = np.linalg.lstsq(A, -(p ** 2).sum(axis=1), rcond=None)[0]
        c = np.array([-D / 2, -E / 2])
        r = np.sqrt(c @ c - F)
        assert 0.15 < r < 0.2 and np.abs(np.hypot(*(p - c).T) - r).std() < 0.02
    wrists = [m.skeleton.joint_names.index(f"{s}Wrist") for s in ("Left", "Right")]
    assert fk.joint_positions[:, wrists].std(axis=0).max() < 0.02
    assert belt_and_surface(m, min_support=0.0)[2]  # fast at the bottom of each turn
    assert belt_and_surface(m)[2] == []
