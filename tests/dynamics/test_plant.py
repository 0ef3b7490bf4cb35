"""Planting supports before method A (animik.dynamics.plant, ``animik filter --plant``): frames
without a detected contact that still need the floor get a held foot (leg IK) or, for a body
carried along, a root moved against its support; the written clip passes the independent
``animik feasibility`` at every frame, where the unplanted filter writes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, crouched_on_floor, needs_shared

import animik
from animik.cli import main
from animik.dynamics import check_clip
from animik.dynamics.plant import plant_contacts
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion


def _lifted(skel, T=60, fps=30.0, lift=0.1):
    """A crouched body whose whole figure rises ``lift`` m (feet and all) after 0.5 s and
    stays up: the weight is still needed, no foot is near the floor."""
    q = crouched_on_floor(skel, T)
    ramp = np.clip((np.arange(T) - 15) / 10.0, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] += lift * (3 * ramp ** 2 - 2 * ramp ** 3)
    return Motion(skel, q, fps)


def _carried(skel, T=90, fps=30.0, speed=1.0):
    """A standing body gliding at ``speed`` m/s after 0.5 s (a treadmill seen from its belt):
    feet on the floor but too fast for a contact, the weight still needed."""
    q = crouched_on_floor(skel, T)
    t = np.arange(T) / fps
    s = np.where(t < 0.5, 0.0, speed * (t - 0.5))
    q[:, skel.dof_index("pelvis_tx")] += s
    return Motion(skel, q, fps)


def _verdict(path, capsys):
    code = main(["feasibility", str(path), "--model", "body95", "--every", "0"])
    capsys.readouterr()
    return code


def test_lifted_body_planted_by_leg_ik(tmp_path, capsys):
    skel = animik.load_rig("body95")
    m = _lifted(skel)
    before = check_clip(m)
    nc = ~before.feasible & ~before.check.in_contact.any(axis=1)
    assert nc.sum() > 20  # infeasible frames without contact in the input
    pr = plant_contacts(m)
    assert pr.planted.any(axis=1).sum() >= nc.sum()
    assert np.abs(pr.root_shift).max() == 0.0  # nothing carried: the legs do it
    # The feet are back on the floor and the trunk did not move.
    after = check_clip(pr.motion)
    assert after.check.in_contact.any(axis=1).all()
    root = [skel.dof_index(f"pelvis_t{a}") for a in "xyz"]
    assert np.abs(pr.motion.q[:, root] - m.q[:, root]).max() < 1e-12
    src, out = tmp_path / "lift.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(m, src)
    assert _verdict(src, capsys) == 5
    assert main(["filter", str(src), "-o", str(out), "--rig", "body95"]) == 5
    assert not out.exists()
    assert main(["filter", str(src), "-o", str(out), "--rig", "body95", "--plant"]) == 0
    assert "planted" in capsys.readouterr().out
    assert _verdict(out, capsys) == 0  # the independent check of the written file


def test_carried_body_moved_against_its_support(tmp_path, capsys):
    skel = animik.load_rig("body95")
    m = _carried(skel)
    before = check_clip(m)
    assert (~before.feasible & ~before.check.in_contact.any(axis=1)).sum() > 30
    pr = plant_contacts(m)
    assert np.abs(pr.root_shift[:, 0]).max() > 0.5  # the glide taken out of the root
    src, out = tmp_path / "glide.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(m, src)
    assert _verdict(src, capsys) == 5
    assert main(["filter", str(src), "-o", str(out), "--rig", "body95", "--plant"]) == 0
    assert _verdict(out, capsys) == 0


def test_plant_leaves_a_feasible_clip_alone():
    skel = animik.load_rig("body95")
    q = crouched_on_floor(skel, 40)
    m = Motion(skel, q, 30.0)
    pr = plant_contacts(m)
    assert pr.frames == 0 and not pr.planted.any()
    assert np.array_equal(pr.motion.q, m.q)


@needs_shared
@pytest.mark.parametrize("folder, name", [("mocapbank", "test_mocapbank"), ("cmu", "02_01")])
def test_shared_clip_on_body95_planted_and_feasible(tmp_path, capsys, folder, name):
    """Shared clips retargeted onto body95 that need planting; with --plant the written clip
    passes the independent check.

    * mocapbank: 147 infeasible frames without a contact (both feet 4-6 cm up; a 5 s stand on
      one leg with the ZMP 12-15 cm beside the foot).
    * CMU 02_01 (306 of 344 frames infeasible, 37 without a contact): a start transient and
      double supports whose landing foot rolls 1-4 cm up beside a stance foot 4 cm into the
      floor (before the plantspin round 11 frames stayed infeasible and nothing was written).
    """
    src = SHARED_BVH / folder / f"{name}.bvh"
    ret = tmp_path / "ret"
    assert main(["retarget", str(src), "--to", "body95", "--out", str(ret), "--quiet"]) == 0
    clip, out = ret / f"{name}.bvh", tmp_path / "o.bvh"
    assert _verdict(clip, capsys) == 5
    assert main(["filter", str(clip), "-o", str(out), "--model", "body95", "--plant"]) == 0
    assert _verdict(out, capsys) == 0


def _rise(T, fps, lift=0.08, at=0.5):
    """``(T,)`` m: 0 for ``at`` s (the floor the check estimates), then up to ``lift`` over
    0.15 s (on the toes: the detector sees no contact)."""
    r = np.clip((np.arange(T) / fps - at) / 0.15, 0.0, 1.0)
    return lift * (3 * r ** 2 - 2 * r ** 3)


def _lift_and_spin(skel, q, fps, theta, pivot_area="l_foot", pivot_point=2):
    """Turn the clip ``q`` about the vertical through one sole point (yaw ``theta (T,)`` of the
    root, the root slid so that point stays put) and rise onto the toes (:func:`_rise`)."""
    from animik.dynamics.contacts import contact_model_for_clip

    q = q.copy()
    q[:, skel.dof_index("pelvis_rz")] += theta
    cm = contact_model_for_clip(skel, q)
    a = cm.area_index(pivot_area)
    p = cm.points(skel, q)[:, np.flatnonzero(cm.point_area == a)[pivot_point], :2]
    q[:, skel.dof_index("pelvis_tx")] -= p[:, 0] - p[0, 0]
    q[:, skel.dof_index("pelvis_ty")] -= p[:, 1] - p[0, 1]
    q[:, skel.dof_index("pelvis_tz")] += _rise(len(q), fps)
    return q


def _one_leg(skel, T):
    """Crouched, the right foot lifted (the left is the support)."""
    q = crouched_on_floor(skel, T)
    q[:, skel.dof_index("r_hip_flexion")] += 0.5
    q[:, skel.dof_index("r_knee_flexion")] += 1.0
    return q


def test_support_motion_2d_pivot_of_rigid_motions():
    """The pivot's velocity from the fitted rigid 2-D motion: 0 for a turn about a point of
    the sole, the translation for a slide, ``w x (pivot - centre)`` against finite
    differences of the exact motion for a turn about a point outside."""
    from animik.dynamics.plant import support_motion_2d

    fps, T = 120.0, 60
    t = np.arange(T) / fps
    sole = np.array([[-0.05, -0.05], [0.14, -0.05], [0.14, 0.05], [-0.05, 0.05], [0.07, 0.0]])

    def moved(theta, centre, slide):
        c, s = np.cos(theta), np.sin(theta)
        R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (T, 2, 2)
        return np.einsum("tab,pb->tpa", R, sole - centre) + centre + slide[:, None]

    w = 2 * np.pi  # one turn a second
    spin = moved(w * t, sole[1], np.zeros((T, 2)))  # about the toe corner
    v, om, piv = support_motion_2d(spin, fps)
    assert np.allclose(om, w, rtol=1e-3)
    assert np.abs(v).max() < 1e-9 and np.allclose(piv, sole[1], atol=1e-9)
    slide = moved(np.zeros(T), sole[0], np.outer(t, [1.2, -0.4]))
    v, om, _ = support_motion_2d(slide, fps)
    assert np.allclose(om, 0.0) and np.allclose(v, [1.2, -0.4])
    outside = np.array([0.6, 0.2])  # a turn about a point 0.5 m ahead of the foot
    X = moved(0.5 * t, outside, np.zeros((T, 2)))
    v, om, piv = support_motion_2d(X, fps)
    assert np.allclose(om, 0.5, rtol=1e-3)
    # the pivot is the sole's point nearest the centre: the edge point on the line to it
    k = slice(1, -1)
    assert np.all(np.linalg.norm(piv[k] - outside, axis=1) < np.linalg.norm(
        X[k] - outside, axis=2).min(axis=1) + 1e-9)
    exact = 0.5 * np.stack([-(piv[:, 1] - outside[1]), piv[:, 0] - outside[0]], 1)
    assert np.allclose(v[k], exact[k], atol=2e-4)
    # no point of the sole moves slower than the pivot (finite differences of the input)
    fd = np.linalg.norm(np.gradient(X, 1.0 / fps, axis=0), axis=2)
    assert np.all(np.linalg.norm(v[k], axis=1) <= fd[k].min(axis=1) + 1e-3)


@pytest.mark.parametrize("corner", [2, 0], ids=["toe", "heel"])
def test_spin_on_the_toes_is_not_carried(corner):
    """A body turning on a corner of its left sole (4 rad/s, 8 cm up: the detector sees no
    contact) needs a held foot, not a root moved against a 'moving' support: the other points
    circle, the sole's pivot stands still. Regression: the old rule (the points' mean velocity
    averaged over 0.5 s) moved the root ~0.3 m on the heel spin (the mean 11 cm from the
    pivot)."""
    skel = animik.load_rig("body95")
    T, fps = 180, 60.0
    t = np.arange(T) / fps
    theta = 4.0 * np.clip(t - 0.65, 0.0, None)
    m = Motion(skel, _lift_and_spin(skel, _one_leg(skel, T), fps, theta, pivot_point=corner),
               fps)
    before = check_clip(m)
    assert (~before.feasible & ~before.check.in_contact.any(axis=1)).sum() > 100
    pr = plant_contacts(m)
    assert pr.planted[:, 0].sum() > 100  # the left foot held
    assert np.abs(pr.root_shift).max() == 0.0
    assert not pr.carried.any()


def test_quick_slide_is_not_carried_but_a_belt_is():
    """Regression (the old rule averaged the support's speed over 0.5 s, so one quick slide of
    a low foot -- 0.45 m in 0.15 s, like the pirouette's leap or a start transient -- counted
    as a treadmill and the root was moved ~0.5 m): the pivot must keep moving on most frames.
    A support gliding steadily is still taken out (as a belt, by the treadmill conversion)."""
    skel = animik.load_rig("body95")
    T, fps = 150, 60.0
    t = np.arange(T) / fps
    q = crouched_on_floor(skel, T)
    q[:, skel.dof_index("pelvis_tz")] += _rise(T, fps)
    ramp = np.clip((t - 1.0) / 0.15, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tx")] += 0.45 * ramp
    pr = plant_contacts(Motion(skel, q, fps))
    assert pr.planted.any(axis=1).sum() > 80
    assert np.abs(pr.root_shift).max() == 0.0 and not pr.carried.any()
    pr = plant_contacts(_carried(skel))
    # a steady glide: taken out as a belt, by dynamics.treadmill (c0) before rule (c) looks
    assert pr.overground.sections and np.abs(pr.root_shift[:, :2]).max() > 0.3




@needs_shared
@pytest.mark.parametrize("tol, eps", [(1e-10, 1e-6), (1e-8, 3e-7)])
def test_mocapbank_planted_whatever_the_round_off(tmp_path, capsys, monkeypatch, tol, eps):
    """mocapbank's --plant passes take another path for a round-off-level change (the QP
    tolerance, the forward-difference step of dW/dq; docs/dynamics.md 6e), but the command
    still writes a clip that passes the independent check (the smooth passes, or the passes
    without the smoothness term when those stall)."""
    import animik.dynamics.correct as correct

    monkeypatch.setattr(correct, "_QP_TOL", tol)
    monkeypatch.setattr(correct, "_FD_EPS", eps)
    ret = tmp_path / "ret"
    src = SHARED_BVH / "mocapbank" / "test_mocapbank.bvh"
    assert main(["retarget", str(src), "--to", "body95", "--out", str(ret), "--quiet"]) == 0
    out = tmp_path / "o.bvh"
    assert main(["filter", str(ret / "test_mocapbank.bvh"), "-o", str(out), "--model", "body95",
                 "--plant"]) == 0
    assert _verdict(out, capsys) == 0


@needs_shared
def test_swinging_foot_is_not_held_back():
    """The Bandai walk retargeted onto body95 (feet flat since the sole-to-sole alignment):
    a foot lifting off keeps its toe within 7 cm of the floor while it already swings forward.
    The plant step's widening of a held run held it there, the leg stretched back after the
    body (25 cm behind the input's foot, the knee 60 degrees off). Where the input's foot
    moves at more than 2 m/s (a swing), the planted one is within 8 cm of it (the hold's
    0.1 s blend; measured 5.1 cm, 35 cm before)."""
    from animik.dynamics.contacts import contact_model_for_clip
    from animik.io.bvh import read_bvh
    from animik.retarget import retarget

    src = read_bvh(SHARED_BVH / "bandai_namco" / "dataset-1_walk_normal_001.bvh")
    m = retarget(src, animik.load_rig("body95"))
    cm = contact_model_for_clip(m.skeleton, m.q)
    pl = plant_contacts(m, cm)
    p_in, p_out = cm.points(m.skeleton, m.q), cm.points(m.skeleton, pl.motion.q)
    worst = 0.0
    for a in range(cm.n_areas):
        sel = cm.point_area == a
        c_in = p_in[:, sel, :2].mean(axis=1)
        speed = np.hypot(*np.gradient(c_in, axis=0).T) * m.fps
        swing = speed > 2.0
        lag = np.hypot(*(p_out[:, sel, :2].mean(axis=1) - c_in).T)
        worst = max(worst, float(lag[swing].max()))
    assert worst < 0.08, f"a swinging foot held {worst * 100:.1f} cm behind the input's"
