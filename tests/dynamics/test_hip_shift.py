"""The hip strategy (animik/dynamics/hip_shift.py, docs/dynamics.md 5i): the pelvis moved over
a one-foot support with the feet held, checked by the independent clip check and forward
kinematics."""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, needs_shared
from scipy.optimize import brentq
from test_plant import _one_leg

from animik.cli import main
from animik.dynamics import check_clip
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.hip_shift import com_margin, hip_shift
from animik.dynamics.inverse import com
from animik.dynamics.model import with_model_of
from animik.dynamics.plant import plant_contacts
from animik.dynamics.zmp import support_polygon
from animik.io.bvh import read_bvh
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rigs import load_rig


def _outside_by(skel, q, cm, flags, d):
    """``q`` with the lumbar bent sideways so that the static COM is ``d`` m outside the
    support of ``flags`` (the library's COM margin, solved for the bend)."""
    def miss(a):
        qq = q.copy()
        qq[:, skel.dof_index("lumbar_lateral")] += a
        return com_margin(Motion(skel, qq, 30.0), cm, flags)[0][0] + d

    a = brentq(miss, -0.2, 0.2, xtol=1e-10)
    q = q.copy()
    q[:, skel.dof_index("lumbar_lateral")] += a
    return q


def _outside_distance(poly, p):
    """Distance (m, > 0 outside, <= 0 inside) of ``p (2,)`` from the ccw convex ``poly (k, 2)``,
    by the largest edge violation (an independent half-plane test)."""
    e = np.roll(poly, -1, axis=0) - poly
    n = np.stack([e[:, 1], -e[:, 0]], 1) / np.linalg.norm(e, axis=1)[:, None]  # outward
    return float(((p - poly) * n).sum(axis=1).max())


def test_com_outside_one_foot_moved_inside_with_the_feet_held():
    """body95 crouched on its left foot, the right lifted, the trunk bent so the COM is 5 cm
    outside the left sole: every frame infeasible (static: the ZMP is the COM's projection).
    After the hip shift the independent check passes every frame, the COM is inside the sole's
    polygon (half-plane test of the library-free polygon), the held foot's joints stay within
    1 mm (forward kinematics) and only the pelvis's slides, legs' DoFs changed."""
    skel = load_rig("body95")
    T = 45
    q = _one_leg(skel, T)
    cm = contact_model_for_clip(skel, q)
    flags = check_clip(Motion(skel, q, 30.0), contacts=cm).check.in_contact
    assert flags.all(axis=0).tolist() == [True, False]  # standing on the left foot
    q = _outside_by(skel, q, cm, flags, 0.05)
    m = Motion(skel, q, 30.0)
    before = check_clip(m, contacts=cm)
    assert not before.feasible.any()
    poly = support_polygon(skel, q[0], [True, False], cm)
    assert abs(_outside_distance(poly, com(skel, q[0])[:2]) - 0.05) < 1e-3

    res = hip_shift(m, cm)
    after = check_clip(res.motion, contacts=cm)
    assert after.feasible.all()
    assert np.array_equal(after.check.in_contact, before.check.in_contact)
    c = com(skel, res.motion.q)[:, :2]
    poly1 = support_polygon(skel, res.motion.q[0], [True, False], cm)
    assert max(_outside_distance(poly1, ci) for ci in c) < -0.02  # >= 2 cm inside
    fk0, fk1 = forward_kinematics(skel, q), forward_kinematics(skel, res.motion.q)
    for j in ("l_ankle", "l_toe"):
        i = skel.joint_names.index(j)
        assert np.abs(fk1.joint_positions[:, i] - fk0.joint_positions[:, i]).max() < 1e-3
    assert res.foot_error < 1e-3
    moved = np.flatnonzero(np.abs(res.motion.q - q).max(axis=0) > 1e-9)
    names = [skel.dof_names[k] for k in moved]
    assert "pelvis_ty" in names
    assert all(n.startswith(("pelvis_t", "l_", "r_")) for n in names), names
    # the pelvis moved about the deficit plus the margin, no more than a few cm beyond
    assert 0.05 < np.hypot(*res.offset[0]) < 0.12


def test_balanced_clip_left_alone():
    """A crouch on both feet (COM inside, every frame feasible): nothing to push, the same
    object back."""
    skel = load_rig("body95")
    q = _one_leg(skel, 30)
    q[:, skel.dof_index("r_hip_flexion")] -= 0.5
    q[:, skel.dof_index("r_knee_flexion")] -= 1.0
    m = Motion(skel, q, 30.0)
    assert check_clip(m).feasible.all()
    res = hip_shift(m)
    assert res.motion is m and res.frames == 0 and not res.offset.any()


@needs_shared
def test_pirouette_centre_of_mass_brought_over_its_support(tmp_path):
    """The cmu_daz pirouette retargeted onto body95, planted (section 5d): on 331 of its 362
    infeasible contact frames the static COM is outside the support (docs/dynamics.md 5i).
    The hip shift brings it inside on more than half of those, the soles of every area in
    contact within 1 mm of where they were (independent forward kinematics of the ankle and
    toe joints)."""
    src = SHARED_BVH / "cmu_daz" / "pirouette.bvh"
    assert main(["retarget", str(src), "--to", "body95", "--out", str(tmp_path), "--quiet"]) == 0
    m = read_bvh(tmp_path / "pirouette.bvh")
    m = Motion(with_model_of(m.skeleton, load_rig("body95")), m.q, m.fps)
    skel = m.skeleton
    cm = contact_model_for_clip(skel, m.q)
    # the planting 5i measured: every foot held, take-offs too (plant_contacts (b'), 5j)
    pl = plant_contacts(m, cm, take_off_speed=np.inf)
    chk = check_clip(pl.motion, contacts=cm)
    ic = chk.check.in_contact
    act = ~chk.feasible & ic.any(axis=1)
    res = hip_shift(pl.motion, cm, check=chk)
    out0 = (res.com_margin_before[act] < 0).sum()
    out1 = (res.com_margin_after[act] < 0).sum()
    assert out0 > 300 and out1 < out0 / 2 + 20
    fk0 = forward_kinematics(skel, pl.motion.q)
    fk1 = forward_kinematics(skel, res.motion.q)
    for a, side in enumerate(cm.names):
        s = side[0]
        for j in (f"{s}_ankle", f"{s}_toe"):
            i = skel.joint_names.index(j)
            d = np.linalg.norm(fk1.joint_positions[:, i] - fk0.joint_positions[:, i], axis=1)
            assert d[ic[:, a]].max() < 1e-3, (j, d[ic[:, a]].max())
