"""ZMP, support polygon and seed D's three checks on constructed motions with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_q, shared_bvh_files

import animik
from animik.dynamics import com, momentum
from animik.dynamics.clip import check_clip, clip_states
from animik.dynamics.contacts import ContactGeometryError, contact_model, contact_model_for_clip
from animik.dynamics.zmp import (
    OUTSIDE,
    PULL,
    SLIP,
    FeasibilityError,
    check_contacts,
    support_polygon,
    zmp,
)
from animik.errors import UnknownNameError, ValueRangeError
from animik.motion import Motion
from animik.skeleton import Joint, Skeleton


@pytest.mark.parametrize("rig", ["body95", "biped12", "fig2", "wheeled20"])
def test_static_zmp_is_com_projection(rig):
    skel = animik.load_rig(rig)
    rng = np.random.default_rng(0)
    q = skel.rest_q + 0.3 * (random_q(skel, rng, (5,)) - skel.rest_q)
    z = np.zeros_like(q)
    p = zmp(skel, q, z, z)
    c = com(skel, q)
    assert np.allclose(p[:, :2], c[:, :2], atol=1e-12) and np.all(p[:, 2] == 0.0)
    chk = check_contacts(skel, q, z, z)
    assert np.allclose(chk.normal_force, skel.total_mass * 9.81, rtol=1e-12)
    assert np.allclose(chk.friction_ratio, 0.0, atol=1e-12)
    # On a raised floor the static ZMP is still below the COM.
    assert np.allclose(zmp(skel, q, z, z, floor=0.3)[:, :2], c[:, :2], atol=1e-12)


def test_support_polygon_of_body95_soles():
    skel = animik.load_rig("body95")
    both = support_polygon(skel, skel.rest_q)
    meta = skel.meta["soles"]["l_foot"]
    cx, (length, width) = meta["center"][0], meta["size"]
    assert both.shape == (4, 2)
    assert np.isclose(both[:, 0].min(), cx - length / 2) and np.isclose(both[:, 0].max(), cx + length / 2)
    assert np.isclose(np.ptp(both[:, 1]), 2 * 0.09 + width)
    left = support_polygon(skel, skel.rest_q, ["l_foot"])
    assert np.allclose(np.sort(left[:, 1]), [0.09 - width / 2] * 2 + [0.09 + width / 2] * 2)
    assert support_polygon(skel, skel.rest_q, False).shape == (0, 2)
    # counter-clockwise
    x, y = both[:, 0], both[:, 1]
    assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0
    with pytest.raises(UnknownNameError, match="l_foot"):
        support_polygon(skel, skel.rest_q, ["left"])


def test_wheeled20_contacts_from_meta():
    skel = animik.load_rig("wheeled20")
    poly = support_polygon(skel, skel.rest_q)
    assert poly.shape == (3, 2)
    assert np.allclose(sorted(poly[:, 0]), sorted(p[0] for p in skel.meta["wheel_contacts"]))


@pytest.mark.parametrize("path", shared_bvh_files(), ids=lambda p: p.name)
def test_derived_soles_of_bvh_skeletons(path):
    skel = animik.read_bvh(path).skeleton
    cm = contact_model(skel)
    assert cm.source == "derived" and cm.names == ("l_foot", "r_foot")
    pts = cm.points(skel, skel.rest_q)
    for a in range(2):
        p = pts[cm.point_area == a]
        centred = p - p.mean(axis=0)
        sv = np.linalg.svd(centred, compute_uv=False)
        assert sv[2] < 1e-9  # a flat sole (plane) at rest
        assert 0.05 < sv[0] < 0.5 and sv[1] > 0.02  # a foot-sized rectangle
    clip_model = contact_model_for_clip(skel, animik.read_bvh(path).q)
    assert clip_model.names == ("l_foot", "r_foot")


def test_missing_contact_geometry_names_the_keys():
    skel = Skeleton.from_joints("blob", [Joint("body", None, (0, 0, 1), (), mass=1.0)])
    with pytest.raises(ContactGeometryError, match=r"meta\.soles.*contact_points.*wheel_contacts"):
        contact_model(skel)


def lean_clip(theta_max=0.32, seconds=12.0, fps=60.0):
    """body95 leaning forward rigidly about the ankle axis, feet flat (ankles compensate)."""
    skel = animik.load_rig("body95")
    t = np.arange(int(seconds * fps)) / fps
    s = t / seconds
    theta = theta_max * (3 * s**2 - 2 * s**3)
    d = skel.dof_index
    pivot_z = 0.06825
    q = np.tile(skel.rest_q, (len(t), 1))
    h = 0.9275 - pivot_z
    q[:, d("pelvis_tx")] = h * np.sin(theta)
    q[:, d("pelvis_tz")] = pivot_z + h * np.cos(theta) - 0.9275  # relative to the rest height
    q[:, d("pelvis_ry")] = theta
    q[:, d("l_ankle_dorsiflexion")] = theta
    q[:, d("r_ankle_dorsiflexion")] = theta
    return Motion(skel, q, fps)


def test_lean_past_the_toes_is_infeasible_at_the_right_frames():
    clip = lean_clip()
    skel = clip.skeleton
    cm = contact_model(skel)
    pts = cm.points(skel, clip.q)
    assert np.abs(pts[..., 2]).max() < 1e-9, "feet stay flat on the floor"
    toe = pts[0, :, 0].max()
    res = check_clip(clip, in_contact=True, floor=0.0)
    # Slow motion: the ZMP stays within a few millimetres of the COM projection ...
    c = com(skel, res.states.q)
    assert np.nanmax(np.abs(res.check.zmp[:, :2] - c[:, :2])) < 5e-3
    # ... so the frames reported infeasible are those whose COM is past the toes
    # (frames within 5 mm of the edge are not judged).
    past = c[:, 0] > toe
    clear = np.abs(c[:, 0] - toe) > 5e-3
    assert past.any() and (~past).any()
    assert np.array_equal(~res.feasible[clear], past[clear])
    assert np.all(res.check.reasons[past & clear] == OUTSIDE)
    # Outside, the margin is minus the ZMP's distance past the toe edge.
    out = past & clear
    assert np.allclose(res.check.margin[out], toe - res.check.zmp[out, 0], atol=1e-12)


def test_ballistic_clip_needs_no_contact_force():
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(2)
    fps = 100.0
    t = np.arange(60) / fps
    pose = skel.rest_q + 0.2 * (random_q(skel, rng) - skel.rest_q)
    q = np.tile(pose, (len(t), 1))
    d = skel.dof_index
    v0 = np.array([1.2, -0.4, 2.5])
    for i, ax in enumerate("xyz"):
        q[:, d(f"pelvis_t{ax}")] += 1.0 * (ax == "z") + v0[i] * t - (4.905 * t**2 if ax == "z" else 0)
    clip = Motion(skel, q, fps)
    res = check_clip(clip, in_contact=False)
    assert np.abs(res.check.wrench).max() < 1e-8
    assert res.feasible.all()
    # The same clip claimed to be standing on the floor: a "pull" (F_z = 0 is not a push
    # with the wrench at numerical noise, so check the force is ~0 rather than the verdict).
    st = clip_states(skel, q, fps)
    assert np.allclose(st.qdd[:, d("pelvis_tz")], -9.81, atol=1e-9)
    # A wrongly-tuned gravity makes it a pull while in contact.
    pulled = check_contacts(skel, st.q, st.qd, st.qdd, True, gravity=(0, 0, -5.0))
    assert np.all(pulled.reasons & PULL)


def test_momentum_of_ballistic_flight_is_linear_in_time():
    skel = animik.load_rig("biped12")
    v = np.zeros(skel.n_dof)
    m = momentum(skel, skel.rest_q, v)
    assert np.allclose(m.linear, 0) and np.allclose(m.com_velocity, 0)


def test_friction_check():
    skel = animik.load_rig("body95")
    z = np.zeros(skel.n_dof)
    qdd = z.copy()
    qdd[skel.dof_index("pelvis_tx")] = 9.81  # all segments accelerate forward at 1 g
    chk = check_contacts(skel, skel.rest_q, z, qdd, True, mu=0.7)
    assert np.isclose(chk.friction_ratio, 1.0)
    assert chk.reasons & SLIP
    assert check_contacts(skel, skel.rest_q, z, qdd, True, mu=1.2).reasons & SLIP == 0


def test_bad_input():
    skel = animik.load_rig("body95")
    z = np.zeros(skel.n_dof)
    with pytest.raises(FeasibilityError, match="mu"):
        check_contacts(skel, skel.rest_q, z, z, mu=0)
    with pytest.raises(FeasibilityError, match="mu"):
        check_contacts(skel, skel.rest_q, z, z, mu=float("nan"))
    with pytest.raises(FeasibilityError, match="fps"):
        clip_states(skel, np.tile(skel.rest_q, (5, 1)), 0.0)
    bad = np.tile(skel.rest_q, (5, 1))
    bad[2, 3] = np.nan
    with pytest.raises(ValueRangeError, match="NaN"):
        clip_states(skel, bad, 30.0)
    with pytest.raises(ContactGeometryError, match="trailing dimension 2"):
        check_contacts(skel, skel.rest_q, z, z, np.ones(3, dtype=bool))
