"""Hovers (docs/dynamics.md 5i, "Hovers"): feet a few cm above the floor for a while with the
body held up (no flight: the centre of mass does not fall) are grounded slowly by the hip
passes of ``animik filter --plant`` -- the pelvis eased down over the whole hover with the
feet -- and the hip offset stays bounded against the input across passes. Checked by the
independent clip check and forward kinematics."""

from __future__ import annotations

import numpy as np
from test_hip_shift import _outside_by
from test_plant import _one_leg

import animik
from animik.dynamics import check_clip
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.correct import correct_clip
from animik.dynamics.hip_shift import hip_shift
from animik.dynamics.limits import limit_excess
from animik.dynamics.plant import hover_drop, plant_contacts
from animik.motion import Motion


def _hover(skel, fps=60.0, up=0.15):
    """body95 standing (the rest pose: straight legs), then the whole figure (feet and all) up
    ``up`` m for 1 s -- risen and lowered over 0.5 s each (smoothstep), 0.5 s on the floor either
    side: a capture's floor offset, not a jump (the height's curvature in the hover is 0)."""
    T = int(round(3.0 * fps))
    q = np.tile(skel.rest_q, (T, 1))
    cm = contact_model_for_clip(skel, q)
    q[:, skel.dof_index("pelvis_tz")] -= cm.points(skel, q[:1])[..., 2].min()
    t = np.arange(T) / fps
    r = np.clip((t - 0.5) / 0.5, 0, 1) - np.clip((t - 2.0) / 0.5, 0, 1)
    q[:, skel.dof_index("pelvis_tz")] += up * np.where(
        t < 1.5, 3 * r ** 2 - 2 * r ** 3, 1 - (3 * (1 - r) ** 2 - 2 * (1 - r) ** 3))
    return Motion(skel, q, fps)


def test_hover_drop_is_slow_and_constant_over_the_hover():
    """The drop is the support's height over a hover, constant there, eased over the given
    time outside (its second difference at most 6 drop / ease^2), nothing for a short run or
    one far above the floor."""
    fps, T = 60.0, 200
    need = np.zeros(T, dtype=bool)
    need[60:120] = True
    sup = np.where(need, 0, -1)
    h = np.full((T, 2), 0.3)
    h[:, 0] = 0.1 + 0.01 * np.sin(np.arange(T))
    d = hover_drop(need, sup, h, fps, 0.5)
    assert np.allclose(d[60:120], np.percentile(h[60:120, 0], 90))
    assert d[:30].max() == 0 and d[150:].max() == 0
    acc = np.abs(np.diff(d, 2)) * fps ** 2
    assert acc.max() <= 6 * d.max() / 0.5 ** 2 * 1.05
    short = need.copy()
    short[70:120] = False  # 10 frames: shorter than 0.25 s
    assert not hover_drop(short, np.where(short, 0, -1), h, fps, 0.5).any()
    assert not hover_drop(need, sup, h + 0.3, fps, 0.5).any()  # 40 cm up: not a hover


def test_straight_legged_hover_grounded_slowly_and_feasible():
    """Straight legs 15 cm above the floor for 1 s: the plant step's leg IK cannot put them
    down (pointing the feet, the straight legs reach 8-9 cm further: the soles stay 6-7 cm
    up, above the detector's entry height; a 10 cm hover it does put down). With ``ground_hover``
    the pelvis eases down over the whole hover: every frame has a contact, the pelvis's
    added vertical acceleration stays below ``6 drop / ease^2`` (the grounding is slow), and
    method A's correction of the grounded clip passes the independent check at every frame."""
    skel = animik.load_rig("body95")
    m = _hover(skel)
    cm = contact_model_for_clip(skel, m.q)
    before = check_clip(m, contacts=cm)
    nc = ~before.feasible & ~before.check.in_contact.any(axis=1)
    assert nc.sum() > 40  # infeasible without contact: the body is carried by nothing
    # the plant step alone (its leg IK) does not put straight legs down 15 cm: the soles stay
    # 6.3 cm up over the hover (median), the knees straight at their limit -- the unlimited
    # leg IK bent them 7.3 deg backwards and left the soles 7.0 cm up (which the detector
    # read as no contact; 6.3 cm is within its release height after the frames before)
    pl = plant_contacts(m, cm)
    assert np.median(cm.points(skel, pl.motion.q)[nc][..., 2].min(axis=1)) > 0.05
    assert limit_excess(skel, pl.motion.q)["frames_outside"] == 0
    pl = plant_contacts(m, cm, ground_hover=0.5)
    assert check_clip(pl.motion, contacts=cm).check.in_contact.any(axis=1).all()
    # ... with the knees bent forward, within body95's limits (the unlimited leg IK bent them
    # up to 51 deg backwards over the easing in and out)
    assert limit_excess(skel, pl.motion.q)["frames_outside"] == 0
    z = skel.dof_index("pelvis_tz")
    dz = pl.motion.q[:, z] - m.q[:, z]
    drop = -dz.min()
    assert 0.13 < drop < 0.15  # the soles' 15 cm less the 5 mm clearance
    assert np.allclose(dz[nc], -drop)  # constant over the hover: no added acceleration
    assert np.abs(np.diff(dz, 2)).max() * m.fps ** 2 <= 6 * drop / 0.5 ** 2 * 1.01  # slow
    low = cm.points(skel, pl.motion.q)[nc][..., 2].min(axis=1)
    # the soles on the floor in the hover -- up to 3.2 cm into it: the leg IK's pull toward
    # the input's straight knee (1e-2 m^2/rad^2) leaves that much of a 14.5 cm drop undone
    assert np.abs(low).max() < 0.035
    res = correct_clip(pl.motion, contacts=cm)
    after = check_clip(res.motion)  # independent: its own contact model and floor estimate
    assert after.feasible.all()
    assert after.check.in_contact.any(axis=1).all()
    # the correction's root slides sink the feet 2.7 cm (the floor estimate follows them)
    pts = cm.points(skel, res.motion.q)
    assert np.abs(pts[nc][..., 2].min(axis=1)).max() < 0.03


def test_hip_offset_bounded_against_the_input_across_passes():
    """Five passes that each find the COM about 5 cm further out (the trunk bent again) (as the correction's
    rounds of each hip pass do on the pirouette), with an 8 cm cap: unbounded, the passes'
    offsets add up (12 cm, where the crouched stance leg's reach ends it); with ``base`` (the
    pelvis's offset from the input so far) the total stays within the cap on every frame, and
    the held sole stays where it was."""
    skel = animik.load_rig("body95")
    T = 30
    q0 = _one_leg(skel, T)
    cm = contact_model_for_clip(skel, q0)
    flags = check_clip(Motion(skel, q0, 30.0), contacts=cm).check.in_contact
    xy = [skel.dof_index("pelvis_tx"), skel.dof_index("pelvis_ty")]

    lum = skel.dof_index("lumbar_lateral")
    bend = _outside_by(skel, q0, cm, flags, 0.05)[0, lum] - q0[0, lum]

    def passes(bounded):
        q = q0.copy()
        for _ in range(5):
            q = q.copy()
            q[:, lum] += bend  # the COM pushed out again by about 5 cm
            base = q[:, xy] - q0[:, xy] if bounded else None
            q = hip_shift(Motion(skel, q, 30.0), cm, max_offset=0.08, base=base).motion.q
        return np.hypot(*(q[:, xy] - q0[:, xy]).T).max(), q

    free, _ = passes(False)
    total, q = passes(True)
    assert free > 0.11  # each pass's offset up to the cap, added up (the legs' reach ends it)
    assert total <= 0.08 + 1e-9
    i = skel.joint_names.index("l_toe")
    from animik.kinematics import forward_kinematics
    d = np.linalg.norm(forward_kinematics(skel, q).joint_positions[:, i]
                       - forward_kinematics(skel, q0).joint_positions[:, i], axis=1)
    assert d.max() < 2e-3
