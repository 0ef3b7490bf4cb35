"""The plant step's grounded free foot (animik.dynamics.plant, step (a2); docs/dynamics.md 5i,
"The stance foot for the limited body"): a body standing on one foot with its static centre of
mass outside that sole, the other foot a few cm up beside it, gets that foot put down and held
still, so the centre of mass is over the two feet -- where the limited stance leg cannot bring
it over its own sole (mocapbank's side squat retargeted onto body95)."""

from __future__ import annotations

import dataclasses

import numpy as np
from conftest import SHARED_BVH, crouched_on_floor, needs_shared
from test_hip_shift import _outside_by

import animik
from animik.dynamics import check_clip
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.free_feet import ground_free_feet
from animik.dynamics.hip_shift import com_margin
from animik.dynamics.limits import limit_excess
from animik.dynamics.plant import plant_contacts
from animik.motion import Motion


def _side_stand(T=60, hip_on_limit=True):
    """body95 crouched on its left foot, the right foot lifted ~6 cm, the trunk bent so the
    static COM is 6 cm outside the left sole (towards the right foot). ``hip_on_limit``: the
    rig's left hip rotation range ends at the pose's angle (the stance hip on a limit, as
    mocapbank's squat on body95)."""
    skel = animik.load_rig("body95")
    q = crouched_on_floor(skel, T)
    q[:, skel.dof_index("r_hip_flexion")] += 0.3
    q[:, skel.dof_index("r_knee_flexion")] += 0.7
    if hip_on_limit:
        k = skel.dof_index("l_hip_rotation")
        upper = np.array(skel.upper)
        upper[k] = q[0, k]
        skel = dataclasses.replace(skel, upper=upper)
        assert (q[:, k] <= skel.upper[k]).all()
    cm = contact_model_for_clip(skel, q)
    flags = check_clip(Motion(skel, q, 30.0), contacts=cm).check.in_contact
    assert flags.all(axis=0).tolist() == [True, False]  # on the left foot only
    return skel, _outside_by(skel, q, cm, flags, 0.06), cm


def test_low_free_foot_grounded_and_held_still():
    skel, q, cm = _side_stand()
    m = Motion(skel, q, 30.0)
    chk = check_clip(m, contacts=cm)
    assert not chk.feasible.any()
    ic = chk.check.in_contact
    # the premise: outside the left sole, inside the hull of both feet
    assert abs(com_margin(m, cm, ic)[0][0] + 0.06) < 1e-6
    assert com_margin(m, cm, np.ones_like(ic))[0][0] > 0.05
    r = cm.area_index("r_foot")
    pts = cm.points(skel, q)
    up = pts[:, cm.point_area == r, 2].min(axis=1) - chk.floor
    assert (up > 0.04).all()  # lifted: no contact

    g = ground_free_feet(m, cm, chk)
    assert g[:, r].all() and not np.delete(g, r, axis=1).any()
    pr = plant_contacts(m, cm)
    assert pr.planted[:, r].all()
    after = check_clip(pr.motion, contacts=cm)
    assert after.check.in_contact.all()  # both feet on the floor now
    assert after.feasible.all()
    p1 = cm.points(skel, pr.motion.q)[:, cm.point_area == r]
    low = p1[..., 2].min(axis=1) - chk.floor
    assert np.abs(low - 0.005).max() < 0.005  # on the floor (the plant step's clearance)
    c = p1[..., :2].mean(axis=1)
    assert np.hypot(*(c - c[0]).T).max() < 1e-3  # held still: no skate
    # only the right leg moved, within the rig's limits
    moved = np.flatnonzero(np.abs(pr.motion.q - q).max(axis=0) > 1e-9)
    assert all(skel.dof_names[k].startswith("r_") for k in moved)
    assert limit_excess(skel, pr.motion.q)["frames_outside"] == 0


def test_grounding_off_leaves_the_clip_alone():
    skel, q, cm = _side_stand()
    m = Motion(skel, q, 30.0)
    pr = plant_contacts(m, cm, ground_min=0.0)  # every frame has a contact: nothing to plant
    assert not pr.planted.any() and np.array_equal(pr.motion.q, q)


def test_short_deficit_not_grounded():
    """A deficit shorter than ``ground_min`` (a walk's single support) grounds nothing."""
    skel, q, cm = _side_stand(T=20)  # 0.67 s
    m = Motion(skel, q, 30.0)
    assert not ground_free_feet(m, cm, check_clip(m, contacts=cm)).any()


def test_free_stance_hip_not_grounded():
    """The same stand with the stance hip free (the rig's own limits): the hip strategy can
    move the pelvis over the sole, so the free foot is not put down."""
    skel, q, cm = _side_stand(hip_on_limit=False)
    m = Motion(skel, q, 30.0)
    chk = check_clip(m, contacts=cm)
    assert not chk.feasible.any()
    assert not ground_free_feet(m, cm, chk).any()
    pr = plant_contacts(m, cm)
    assert not pr.planted.any() and np.array_equal(pr.motion.q, q)


@needs_shared
def test_walk_swing_foot_not_grounded():
    """The Bandai walk retargeted onto body95: its swing feet are low and its static COM
    leaves the single support, but never for a second: nothing grounded."""
    from animik.io.bvh import read_bvh
    from animik.retarget import retarget

    src = read_bvh(SHARED_BVH / "bandai_namco" / "dataset-1_walk_normal_001.bvh")
    m = retarget(src, animik.load_rig("body95"))
    cm = contact_model_for_clip(m.skeleton, m.q)
    assert not ground_free_feet(m, cm, check_clip(m, contacts=cm)).any()
