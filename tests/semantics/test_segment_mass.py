"""Segment masses by body role (animik/semantics/segment_mass.py) against de Leva's table, and
the mass split of every shared BVH skeleton as read (docs/dynamics.md section 5h)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_shared, shared_bvh_files

from animik import Joint, Site, Skeleton
from animik.io.bvh import loads_bvh, read_bvh
from animik.kinematics import forward_kinematics
from animik.semantics.roles import classify_joints
from animik.semantics.segment_mass import DE_LEVA, MIN_MASS, TRUNK_PARTS, RolesNotFound, role_mass_properties

# a standing figure along z (m): hips at 1 m, knees at 0.55, ankles at 0.1, toes 0.15 in front
_J = [("Hips", None, (0, 0, 1.0)), ("Spine", "Hips", (0, 0, 0.05)), ("Spine1", "Spine", (0, 0, 0.15)),
      ("Chest", "Spine1", (0, 0, 0.15)), ("Neck", "Chest", (0, 0, 0.2)), ("Head", "Neck", (0, 0, 0.1))]
for _s, _y in (("Left", 0.1), ("Right", -0.1)):
    _J += [(f"{_s}UpLeg", "Hips", (0, _y, -0.05)), (f"{_s}Leg", f"{_s}UpLeg", (0, 0, -0.45)),
           (f"{_s}Foot", f"{_s}Leg", (0, 0, -0.45)), (f"{_s}ToeBase", f"{_s}Foot", (0.12, 0, -0.08)),
           (f"{_s}Shoulder", "Chest", (0, _y * 0.5, 0.15)),
           (f"{_s}Arm", f"{_s}Shoulder", (0, _y * 1.5, 0.0)),
           (f"{_s}ForeArm", f"{_s}Arm", (0, _y * 3.0, 0.0)),
           (f"{_s}Hand", f"{_s}ForeArm", (0, _y * 2.5, 0.0)),
           (f"{_s}HandMiddle1", f"{_s}Hand", (0, _y, 0.0))]
TOTAL, HEIGHT = 70.0, 1.75


def _figure() -> Skeleton:
    joints = [Joint(n, p, offset=o) for n, p, o in _J]
    sites = [Site("Head_end", "Head", offset=(0, 0, 0.2)),
             *(Site(f"{s}Toe_end", f"{s}ToeBase", offset=(0.05, 0, 0)) for s in ("Left", "Right")),
             *(Site(f"{s}Middle_end", f"{s}HandMiddle1", offset=(0, y * 0.8, 0))
               for s, y in (("Left", 0.1), ("Right", -0.1)))]
    return Skeleton.from_joints("figure", joints, sites)


def test_a_figure_with_named_roles_gets_de_levas_fractions_coms_and_radii():
    skel = _figure()
    roles = classify_joints(skel).roles
    assert roles["l_thigh"] == "LeftUpLeg" and roles["l_middle1"] == "LeftHandMiddle1"
    seg = role_mass_properties(skel, TOTAL, HEIGHT)
    assert seg.masses.sum() == pytest.approx(TOTAL, rel=1e-12)
    free = [j for j in range(skel.n_joints) if j not in seg.segment_joint.values()]
    assert len(free) == 8 and np.all(seg.masses[free] == MIN_MASS)  # clavicles, toes, fingers, neck, Spine
    scale = (TOTAL - MIN_MASS * len(free)) / TOTAL
    fk = forward_kinematics(skel, skel.rest_q)
    P = fk.joint_positions
    ix = skel.joint_names.index
    # limbs: mass, COM along the bone, inertia about it (longitudinal / transverse radii)
    for name, a, b in (("thigh", "LeftUpLeg", "LeftLeg"), ("shank", "LeftLeg", "LeftFoot"),
                       ("upper_arm", "LeftArm", "LeftForeArm"),
                       ("forearm", "LeftForeArm", "LeftHand"),
                       ("hand", "LeftHand", "LeftHandMiddle1")):
        frac, c, (ks, kt, kl) = DE_LEVA[name]
        j = ix(a)
        assert seg.segment_joint[f"l_{name}"] == j
        assert seg.masses[j] == pytest.approx(frac * TOTAL * scale, rel=1e-12)
        L = np.linalg.norm(P[ix(b)] - P[j])
        np.testing.assert_allclose(seg.coms[j], c * (P[ix(b)] - P[j]), atol=1e-12)
        ev = np.linalg.eigvalsh(seg.inertias[j])
        m = seg.masses[j]
        np.testing.assert_allclose(ev, np.sort([m * (kl * L) ** 2, *[m * (0.5 * (ks + kt) * L) ** 2] * 2]),
                                   rtol=1e-10)
    # foot: the heel 25 % of the ankle-to-toe-tip length behind the ankle, COM 44.15 % from it
    j = ix("LeftFoot")
    tip = fk.site_positions[skel.site_names.index("LeftToe_end")]
    np.testing.assert_allclose(seg.coms[j], (0.4415 * 1.25 - 0.25) * (tip - P[j]), atol=1e-12)
    assert seg.masses[j] == pytest.approx(DE_LEVA["foot"][0] * TOTAL * scale)
    # trunk: lower / middle / upper on the spine joints at or below each part's COM
    midh = 0.5 * (P[ix("LeftUpLeg")] + P[ix("RightUpLeg")])
    L = np.linalg.norm(P[ix("Neck")] - midh)
    total_len = sum(ln for _, ln in TRUNK_PARTS)
    lo = 0.0
    for (name, ln), joint in zip(TRUNK_PARTS, ("Hips", "Spine1", "Chest"), strict=True):
        hi = lo + ln / total_len
        z = midh[2] + (lo + DE_LEVA[name][1] * (hi - lo)) * L
        assert seg.segment_joint[name] == ix(joint), name
        assert seg.masses[ix(joint)] == pytest.approx(DE_LEVA[name][0] * TOTAL * scale)
        assert seg.coms[ix(joint)][2] == pytest.approx(z - P[ix(joint)][2])
        lo = hi
    assert seg.segment_joint["head"] == ix("Head")  # CERV (the neck) to the head's end site
    np.testing.assert_allclose(P[ix("Head")] + seg.coms[ix("Head")],
                               P[ix("Neck")] + [0, 0, DE_LEVA["head"][1] * 0.3], atol=1e-12)
    # whole body: upper body (trunk, head, arms) 60.3 % of the segments' mass
    legs = sum(DE_LEVA[k][0] for k in ("thigh", "shank", "foot")) * 2
    assert legs == pytest.approx(0.3972)


def test_no_roles_raise_and_the_reader_falls_back_to_cylinders():
    chain = Skeleton.from_joints("c", [Joint("a", None), Joint("b", "a", offset=(0, 0, 0.5)),
                                       Joint("c", "b", offset=(0, 0, 0.5))])
    with pytest.raises(RolesNotFound, match="roles not found: hips"):
        role_mass_properties(chain, TOTAL, HEIGHT)
    text = ("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
            "Zrotation Xrotation Yrotation\n JOINT b\n {\n  OFFSET 0 50 0\n  CHANNELS 3 Zrotation "
            "Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 50 0\n  }\n }\n}\nMOTION\nFrames: 1\n"
            "Frame Time: 0.01\n0 0 0 0 0 0 0 0 0\n")
    skel = loads_bvh(text).skeleton
    src = skel.meta["mass_source"]
    assert "cylinders" in src and "no de Leva segments (roles not found: hips" in src


@needs_shared
def test_every_shared_bvh_skeleton_has_an_adult_mass_split():
    """Legs (the thighs' subtrees) 39-40.5 % of the body, so trunk, head and arms 59.5-61 %
    (de Leva: 39.7 / 60.3 %; the difference is the joints that carry no segment); was 40-80 %
    legs with bone cylinders (raw Bandai 78.5 %, mocapbank 78 %)."""
    for path in shared_bvh_files():
        skel = read_bvh(path).skeleton
        assert "de Leva" in skel.meta["mass_source"], path.name
        roles = classify_joints(skel).roles
        ix = skel.joint_names.index
        under = np.zeros(skel.n_joints, bool)
        for r in ("l_thigh", "r_thigh"):
            j0 = ix(roles[r])
            for j in range(skel.n_joints):
                k = j
                while k >= 0 and k != j0:
                    k = skel.parents[k]
                under[j] |= k == j0
        legs = skel.masses[under].sum() / skel.total_mass
        assert 0.39 < legs < 0.405, (path.name, legs)
        assert np.all(skel.masses >= MIN_MASS) and np.all(np.linalg.eigvalsh(skel.inertias) > 0)
