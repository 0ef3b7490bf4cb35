"""The built-in rigs: loading, sizes, anthropometry, limits, symmetry, and seed C reachability."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import random_q

import animik
from animik import rigs
from animik.errors import RigNotFoundError, UnknownNameError
from animik.io.rigfile import dumps_rig, loads_rig
from animik.kinematics import forward_kinematics
from animik.rotations import matrix_to_rotvec
from animik.skeleton import ROTATION, TRANSLATION, Skeleton

ALL = ["biped12", "body95", "fig2", "wheeled20"]
MIRROR = np.diag([1.0, -1.0, 1.0])
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_rigs.py"


def world_point(skel: Skeleton, q: np.ndarray, joint: str, offset) -> np.ndarray:
    fk = forward_kinematics(skel, q)
    j = skel.joint_index(joint)
    return fk.joint_rotations[j] @ np.asarray(offset, float) + fk.joint_positions[j]


def landmark(skel: Skeleton, name: str, q=None) -> np.ndarray:
    lm = skel.meta["landmarks"][name]
    return world_point(skel, skel.rest_q if q is None else q, lm["joint"], lm["offset"])


def body_com(skel: Skeleton, q: np.ndarray, exclude=()) -> np.ndarray:
    fk = forward_kinematics(skel, q)
    c = np.einsum("jab,jb->ja", fk.joint_rotations, skel.coms) + fk.joint_positions
    w = skel.masses.copy()
    for j in exclude:
        w[skel.joint_index(j)] = 0.0
    return (w[:, None] * c).sum(0) / w.sum()


def sites_at_rest(skel: Skeleton) -> dict[str, np.ndarray]:
    fk = forward_kinematics(skel, skel.rest_q)
    return dict(zip(skel.site_names, fk.site_positions, strict=True))


def dofs_of(skel: Skeleton, joints) -> list[str]:
    return [skel.dof_names[k] for j in joints for k in skel.joint_dofs(j)]


# ---------------------------------------------------------------------- loading
def test_list_rigs():
    assert animik.list_rigs() == ALL
    assert all(rigs.rig_path(n).is_file() for n in ALL)


@pytest.mark.parametrize("name", ALL)
def test_load_by_name_and_path(name):
    skel = animik.load_rig(name)
    assert isinstance(skel, Skeleton) and skel.name == name
    assert animik.load_rig(name) is skel                  # cached: immutable, shared
    path = rigs.rig_path(name)
    for p in (path, str(path)):
        other = animik.load_rig(p)
        assert other is not skel
        assert other.dof_names == skel.dof_names
        np.testing.assert_array_equal(other.offsets, skel.offsets)


def test_unknown_rig_lists_builtins():
    with pytest.raises(RigNotFoundError, match=r"unknown rig 'bodyy95'.*'biped12', 'body95', "
                                               r"'fig2', 'wheeled20'"):
        animik.load_rig("bodyy95")
    with pytest.raises(UnknownNameError):   # RigNotFoundError is an UnknownNameError (KeyError)
        animik.load_rig("nope")
    with pytest.raises(RigNotFoundError, match=r"does not exist.*built-in rigs"):
        animik.load_rig("/nonexistent/rig.toml")


def test_wrong_file_type(tmp_path):
    p = tmp_path / "rig.json"
    p.write_text("{}")
    with pytest.raises(RigNotFoundError, match=r"neither a \.toml rig file nor a \.bvh file"):
        animik.load_rig(p)


_SMALL_BVH = """HIERARCHY
ROOT hips
{
	OFFSET 0 90 0
	CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
	JOINT knee
	{
		OFFSET 0 -45 0
		CHANNELS 1 Xrotation
		End Site
		{
			OFFSET 0 -45 0
		}
	}
}
MOTION
Frames: 2
Frame Time: 0.04
0 90 0 0 0 0 10
1 90 0 5 0 0 20
"""


def test_bvh_path_returns_its_skeleton_and_motion(tmp_path):
    from animik.io.bvh import read_bvh
    from animik.rigs import resolve_rig, rig_from_bytes

    p = tmp_path / "walk.bvh"
    p.write_text(_SMALL_BVH)
    direct = read_bvh(p)
    skel = animik.load_rig(p)
    assert skel.joint_names == direct.skeleton.joint_names == ("hips", "knee")
    assert np.array_equal(skel.offsets, direct.skeleton.offsets)
    src = resolve_rig(p.name, base_dir=tmp_path)  # relative to a folder, as scenes do
    assert src.kind == "bvh" and src.path == p and np.array_equal(src.motion.q, direct.q)
    from_bytes = rig_from_bytes(p.read_bytes(), ".bvh", "walk.bvh")
    assert np.array_equal(from_bytes.motion.q, direct.q) and from_bytes.skeleton.name == "walk"


def test_registered_reader_is_used_everywhere(tmp_path):
    from animik import rigs

    calls = []

    def reader(data, source, name):
        calls.append((data, name))
        return animik.load_rig("fig2"), None

    rigs.register_rig_reader(".fakerig", reader)
    try:
        p = tmp_path / "robot.fakerig"
        p.write_bytes(b"xyz")
        assert animik.load_rig(p).name == "fig2"
        assert calls == [(b"xyz", "robot")]
        assert ".fakerig" in rigs.rig_suffixes()
        # the same reader serves scenes (paths relative to the scene), the CLI and batch targets
        from animik.cli import _load_any
        from animik.retarget.batch import TargetSpec
        from animik.scene import loads_scene

        scene = loads_scene('format = "animik-scene"\n[scene]\nrig = "robot.fakerig"\n',
                            base_dir=tmp_path)
        assert scene.skeleton.name == "fig2"
        assert _load_any(str(p)).name == "fig2"
        spec = TargetSpec.from_arg(p)
        assert (spec.kind, spec.data) == ("fakerig", b"xyz")
        assert spec.skeleton().name == "fig2"  # rebuilt from the bytes, no temporary file
        assert len(calls) == 5
    finally:
        rigs._READERS.pop(".fakerig")


def test_missing_rig_file_is_both_not_found_errors(tmp_path):
    from animik.errors import RigFileNotFoundError

    with pytest.raises(RigFileNotFoundError, match="does not exist") as ei:
        animik.load_rig(tmp_path / "gone.toml")
    assert isinstance(ei.value, RigNotFoundError) and isinstance(ei.value, FileNotFoundError)


def test_packaged_assets_fallback(monkeypatch):
    # A wheel install has no assets/ next to the package: rigs come from animik._assets.
    here = Path(__file__).resolve().parents[1] / "assets" / "rigs"
    monkeypatch.setattr(rigs, "source_rig_dir", lambda: None)
    monkeypatch.setattr(rigs, "packaged_rig_dir", lambda: here)
    rigs._load_builtin.cache_clear()
    try:
        skel = rigs.load_rig("biped12")
        assert skel.n_dof == 12
        assert rigs.rig_path("biped12") == here / "biped12.toml"
    finally:
        rigs._load_builtin.cache_clear()


@pytest.mark.parametrize("name", ALL)
def test_writer_round_trip(name):
    skel = animik.load_rig(name)
    text = dumps_rig(skel)
    back = loads_rig(text)
    assert back.joint_names == skel.joint_names and back.dof_names == skel.dof_names
    assert back.site_names == skel.site_names
    for f in ("offsets", "rest_rotations", "dof_axis", "rest_q", "site_offsets",
              "site_rotations", "masses", "coms", "inertias"):
        np.testing.assert_allclose(getattr(back, f), getattr(skel, f), rtol=0, atol=1e-12)
    for f in ("lower", "upper"):
        np.testing.assert_array_equal(getattr(back, f), getattr(skel, f))
    assert dict(back.meta) == dict(skel.meta)
    assert dumps_rig(back) == text


@pytest.mark.skipif(not SCRIPT.is_file(), reason="scripts/make_rigs.py not in this checkout")
def test_committed_files_are_generated_by_the_script():
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, f"assets/rigs is stale: run python scripts/make_rigs.py\n{out}"


# ---------------------------------------------------------------------- every rig
@pytest.mark.parametrize("name", ALL)
def test_common_properties(name):
    skel = animik.load_rig(name)
    assert skel.within_limits(skel.rest_q)
    rot = skel.dof_type == ROTATION
    assert np.all(skel.lower[rot] < skel.upper[rot])        # no fixed rotation DoFs
    assert np.all(skel.masses > 0) and np.all(np.isfinite(skel.masses))
    for j in range(skel.n_joints):                         # inertia: SPD, triangle inequality
        ev = np.linalg.eigvalsh(skel.inertias[j])
        assert ev.min() > 0 and 2 * ev.max() <= ev.sum() * (1 + 1e-9), skel.joint_names[j]
    assert isinstance(skel.meta["mass_source"], str) and skel.meta["mass_source"]
    # joints and sites never share a name (URDF/MJCF exports make links/bodies of both)
    assert not set(skel.joint_names) & set(skel.site_names)
    assert skel.meta["description"]
    # one-way knees
    knees = [k for k, n in enumerate(skel.dof_names) if "knee" in n]
    assert knees
    for k in knees:
        if name == "wheeled20":   # Pepper's knee pitch tilts the whole robot both ways
            continue
        assert skel.lower[k] == 0.0 and skel.upper[k] >= np.radians(120)


def mirror_map(skel: Skeleton) -> tuple[np.ndarray, np.ndarray]:
    """For each DoF its mirror twin and the sign that maps a pose onto its mirror image."""
    def swap(n: str) -> str:
        return {"l_": "r_", "r_": "l_"}.get(n[:2], "") + n[2:] if n[:2] in ("l_", "r_") else n

    twin = np.array([skel.dof_index(swap(n)) for n in skel.dof_names])
    sign = np.zeros(skel.n_dof)
    for k, t in enumerate(twin):
        a, b = skel.dof_axis[k], skel.dof_axis[t]
        # A rotation about a mirrors into one about -M a; a translation along a, along M a.
        same = -MIRROR @ a if skel.dof_type[k] == ROTATION else MIRROR @ a
        if np.allclose(b, same):
            sign[k] = 1.0
        elif np.allclose(b, -same):
            sign[k] = -1.0
        else:
            raise AssertionError(f"{skel.dof_names[k]} and {skel.dof_names[t]} are not mirrored")
    return twin, sign


@pytest.mark.parametrize("name", ALL)
def test_left_right_symmetry(name, rng):
    skel = animik.load_rig(name)

    def swap_idx(names, index):
        def sw(n):
            return ("r_" + n[2:]) if n.startswith("l_") else ("l_" + n[2:]) if n.startswith("r_") else n
        return np.array([index(sw(n)) for n in names])

    jt = swap_idx(skel.joint_names, skel.joint_index)
    st = swap_idx(skel.site_names, skel.site_index)
    # structure
    np.testing.assert_allclose(skel.offsets[jt], skel.offsets @ MIRROR, atol=1e-12)
    np.testing.assert_allclose(skel.rest_rotations[jt], MIRROR @ skel.rest_rotations @ MIRROR,
                               atol=1e-12)
    np.testing.assert_allclose(skel.masses[jt], skel.masses)
    np.testing.assert_allclose(skel.coms[jt], skel.coms @ MIRROR, atol=1e-12)
    np.testing.assert_allclose(skel.inertias[jt], MIRROR @ skel.inertias @ MIRROR, atol=1e-15)
    np.testing.assert_allclose(skel.site_offsets[st], skel.site_offsets @ MIRROR, atol=1e-12)
    # limits and rest pose mirror too
    twin, sign = mirror_map(skel)
    lo = np.where(sign > 0, skel.lower, -skel.upper)
    hi = np.where(sign > 0, skel.upper, -skel.lower)
    np.testing.assert_array_equal(skel.lower[twin], lo)
    np.testing.assert_array_equal(skel.upper[twin], hi)
    np.testing.assert_allclose(skel.rest_q[twin], sign * skel.rest_q, atol=1e-15)
    # kinematics: the mirrored pose puts every joint and site at the mirror image
    for q in [skel.rest_q, *random_q(skel, rng, (5,))]:
        qm = np.empty_like(q)
        qm[twin] = sign * q
        assert skel.within_limits(qm, tol=1e-12)
        a, b = forward_kinematics(skel, q), forward_kinematics(skel, qm)
        np.testing.assert_allclose(b.joint_positions[jt], a.joint_positions @ MIRROR, atol=1e-12)
        np.testing.assert_allclose(b.joint_rotations[jt], MIRROR @ a.joint_rotations @ MIRROR,
                                   atol=1e-12)
        np.testing.assert_allclose(b.site_positions[st], a.site_positions @ MIRROR, atol=1e-12)


# ---------------------------------------------------------------------- body95
def test_body95_counts_and_breakdown():
    s = animik.load_rig("body95")
    assert (s.n_dof, s.n_joints, s.n_sites) == (95, 52, 15)
    tips = [f"{side}_{f}_tip" for side in "lr" for f in ("thumb", "index", "middle", "ring",
                                                         "little")]
    assert set(s.site_names) == {"head", "l_hand", "r_hand", "l_foot", "r_foot", *tips}
    # the breakdown of docs/rigs.md
    hand = [j for j in s.joint_names if j.startswith("l_") and
            j.split("_")[1] in ("thumb", "index", "middle", "ring", "little")]
    groups = {
        "root": ["pelvis"], "spine": ["lumbar", "lower_thorax", "upper_thorax"],
        "neck+head": ["neck", "skull"], "clavicles": ["l_clavicle", "r_clavicle"],
        "shoulders": ["l_shoulder", "r_shoulder"], "elbows+forearms": ["l_elbow", "r_elbow"],
        "wrists": ["l_wrist", "r_wrist"], "hands": hand + ["r_" + j[2:] for j in hand],
        "hips": ["l_hip", "r_hip"], "knees": ["l_knee", "r_knee"],
        "ankles": ["l_ankle", "r_ankle"], "toes": ["l_toe", "r_toe"],
    }
    sizes = {g: len(dofs_of(s, js)) for g, js in groups.items()}
    assert sizes == {"root": 6, "spine": 9, "neck+head": 6, "clavicles": 4, "shoulders": 6,
                     "elbows+forearms": 4, "wrists": 4, "hands": 42, "hips": 6, "knees": 2,
                     "ankles": 4, "toes": 2}
    assert sum(sizes.values()) == 95
    assert len(dofs_of(s, [j for j in hand if "thumb" in j])) == 5
    assert len(dofs_of(s, [j for j in hand if "index" in j])) == 4
    # free-floating root: 3 translations then 3 rotations, unlimited
    root = list(s.joint_dofs("pelvis"))
    assert list(s.dof_type[root]) == [TRANSLATION] * 3 + [ROTATION] * 3
    assert np.all(np.isinf(s.lower[root])) and np.all(np.isinf(s.upper[root]))


def test_body95_anthropometry():
    s = animik.load_rig("body95")
    p = sites_at_rest(s)
    # stature: sole to the top of the head
    top = landmark(s, "head_top")
    sole = min(p["l_foot"][2], p["r_foot"][2])
    assert top[2] - sole == pytest.approx(1.75, abs=0.03)
    assert p["l_foot"][2] == pytest.approx(0.0, abs=1e-9)
    assert p["r_foot"][2] == pytest.approx(0.0, abs=1e-9)
    fk = forward_kinematics(s, s.rest_q)
    assert fk.joint_positions[:, 2].min() >= -1e-9            # nothing below the floor
    # soles lie on the floor
    for side in ("l_foot", "r_foot"):
        sole = s.meta["soles"][side]
        c = world_point(s, s.rest_q, sole["joint"], sole["center"])
        assert c[2] == pytest.approx(0.0, abs=1e-9) and c[0] > 0.0    # toes point +x
        assert 0.24 < sole["size"][0] < 0.28 and 0.08 < sole["size"][1] < 0.11
    # T-pose: hands left and right at shoulder height, fingertips beyond the wrists
    assert p["l_hand"][1] > 0.6 and p["r_hand"][1] < -0.6
    assert p["l_hand"][2] == pytest.approx(1.75 * 0.818, abs=0.03)
    wrist_l = fk.joint_positions[s.joint_index("l_wrist")]
    wrist_r = fk.joint_positions[s.joint_index("r_wrist")]
    for f in ("thumb", "index", "middle", "ring", "little"):
        assert p[f"l_{f}_tip"][1] > wrist_l[1] + 0.05
        assert p[f"r_{f}_tip"][1] < wrist_r[1] - 0.05
    assert p["l_middle_tip"][1] > p["l_index_tip"][1] > p["l_little_tip"][1]
    assert p["l_thumb_tip"][0] > p["l_index_tip"][0]             # thumbs point forward
    assert 1.55 < p["head"][2] < 1.75 and abs(p["head"][1]) < 1e-12
    # arm span ~ stature (men: about 1.0-1.06 H)
    span = p["l_middle_tip"][1] - p["r_middle_tip"][1]
    assert 1.0 * 1.75 < span < 1.07 * 1.75


def test_body95_masses():
    s = animik.load_rig("body95")
    assert s.total_mass == pytest.approx(75.0, abs=1e-3)
    m = dict(zip(s.joint_names, s.masses, strict=True))
    # de Leva (1996) male fractions: thigh 14.16 %, shank 4.33 %, upper arm 2.71 %, forearm
    # 1.62 %, head+neck 6.94 %, hand 0.61 % (palm + fingers), foot 1.37 % (foot + toes)
    assert m["l_hip"] == pytest.approx(0.1416 * 75, rel=1e-5)
    assert m["l_knee"] == pytest.approx(0.0433 * 75, rel=1e-5)
    assert m["l_shoulder"] == pytest.approx(0.0271 * 75, rel=1e-5)
    assert m["l_elbow"] == pytest.approx(0.0162 * 75, rel=1e-5)
    assert m["neck"] + m["skull"] == pytest.approx(0.0694 * 75, rel=1e-5)
    hand = sum(v for k, v in m.items() if k.startswith("l_") and k.split("_")[1] in
               ("wrist", "thumb", "index", "middle", "ring", "little"))
    assert hand == pytest.approx(0.0061 * 75, rel=1e-4)
    assert m["l_ankle"] + m["l_toe"] == pytest.approx(0.0137 * 75, rel=1e-4)
    fingers = hand - m["l_wrist"]
    assert 0.15 < fingers / hand < 0.45                              # palm heavier than fingers
    # whole-body COM: in the midline, a little above half the stature (T-pose raises it)
    com = body_com(s, s.rest_q)
    assert abs(com[1]) < 1e-9 and abs(com[0]) < 0.03
    assert 0.54 * 1.75 < com[2] < 0.59 * 1.75


def test_body95_limits_are_anatomical():
    s = animik.load_rig("body95")
    deg = {n: (math.degrees(lo), math.degrees(hi)) for n, lo, hi in
           zip(s.dof_names, s.lower, s.upper, strict=True)}
    assert deg["l_elbow_flexion"] == pytest.approx((0.0, 150.0))
    assert deg["r_elbow_flexion"] == pytest.approx((0.0, 150.0))
    assert deg["l_hip_flexion"] == pytest.approx((-30.0, 120.0))
    assert deg["l_knee_flexion"] == pytest.approx((0.0, 135.0))
    assert deg["l_index_pip_flexion"][0] == 0.0
    # anatomical axes: flexing both elbows by 90 deg brings both forearms forward (+x)
    q = s.rest_q.copy()
    q[[s.dof_index("l_elbow_flexion"), s.dof_index("r_elbow_flexion")]] = np.pi / 2
    q[[s.dof_index("l_knee_flexion"), s.dof_index("r_knee_flexion")]] = np.pi / 2
    q[[s.dof_index("l_index_mcp_flexion"), s.dof_index("r_index_mcp_flexion")]] = np.pi / 2
    fk = forward_kinematics(s, q)
    j = s.joint_index
    for side in "lr":
        assert fk.joint_positions[j(f"{side}_wrist"), 0] > 0.25       # forearm forward
        assert fk.joint_positions[j(f"{side}_ankle"), 0] < -0.4       # shank backward
        tip = fk.site_positions[s.site_index(f"{side}_index_tip")]
        assert tip[2] < fk.joint_positions[j(f"{side}_index_mcp"), 2] - 0.03   # curls to palm


# ---------------------------------------------------------------------- fig2
def test_fig2_structure():
    s = animik.load_rig("fig2")
    assert (s.n_joints, s.n_sites, s.n_dof) == (10, 5, 25)
    assert set(s.site_names) == {"head", "l_hand", "r_hand", "l_foot", "r_foot"}
    per_joint = {j: len(s.joint_dofs(j)) for j in s.joint_names}
    assert per_joint == {"pelvis": 6, "neck": 3, "l_shoulder": 3, "l_elbow": 1, "l_hip": 3,
                         "l_knee": 1, "r_shoulder": 3, "r_elbow": 1, "r_hip": 3, "r_knee": 1}


def test_fig2_is_body95_with_merged_segments():
    f, b = animik.load_rig("fig2"), animik.load_rig("body95")
    pf, pb = sites_at_rest(f), sites_at_rest(b)
    for site in f.site_names:
        np.testing.assert_allclose(pf[site], pb[site], atol=1e-6)
    assert f.total_mass == pytest.approx(b.total_mass, abs=1e-3)
    np.testing.assert_allclose(body_com(f, f.rest_q), body_com(b, b.rest_q), atol=1e-5)
    assert landmark(f, "head_top")[2] == pytest.approx(1.75, abs=1e-9)


# ---------------------------------------------------------------------- wheeled20
def test_wheeled20_structure():
    s = animik.load_rig("wheeled20")
    assert s.n_dof == 20
    root = list(s.joint_dofs("base_link"))
    assert [s.dof_names[k] for k in root] == ["base_x", "base_y", "base_yaw"]
    np.testing.assert_array_equal(s.dof_axis[root], [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert list(s.dof_type[root]) == [TRANSLATION, TRANSLATION, ROTATION]
    groups = {"leg": ["knee", "hip", "torso"], "head": ["neck", "head_link"],
              "l_arm": ["l_shoulder", "l_elbow", "l_wrist"],
              "r_arm": ["r_shoulder", "r_elbow", "r_wrist"]}
    assert {g: len(dofs_of(s, js)) for g, js in groups.items()} == {
        "leg": 3, "head": 2, "l_arm": 6, "r_arm": 6}
    assert dofs_of(s, groups["leg"]) == ["knee_pitch", "hip_pitch", "hip_roll"]
    assert {"head", "l_hand", "r_hand", "base"} <= set(s.site_names)
    # Pepper's ranges
    deg = {n: (math.degrees(lo), math.degrees(hi)) for n, lo, hi in
           zip(s.dof_names, s.lower, s.upper, strict=True)}
    assert deg["head_yaw"] == pytest.approx((-119.5, 119.5))
    assert deg["head_pitch"] == pytest.approx((-40.5, 36.5))
    assert deg["hip_pitch"] == pytest.approx((-59.5, 59.5))
    assert deg["l_shoulder_roll"] == pytest.approx((0.5, 89.5))
    assert deg["r_shoulder_roll"] == pytest.approx((-89.5, -0.5))
    assert deg["l_elbow_roll"] == pytest.approx((-89.5, -0.5))
    assert deg["l_wrist_yaw"] == pytest.approx((-104.5, 104.5))


def test_wheeled20_size_mass_and_balance_data():
    s = animik.load_rig("wheeled20")
    meta = s.meta
    p = sites_at_rest(s)
    assert landmark(s, "head_top")[2] == pytest.approx(1.37, abs=0.02)
    fk = forward_kinematics(s, s.rest_q)
    assert fk.joint_positions[:, 2].min() >= 0.0
    # arms hang at the sides at rest
    assert p["l_hand"][1] > 0.15 and p["r_hand"][1] < -0.15
    assert p["l_hand"][2] < 0.8 and p["r_hand"][2] < 0.8
    assert s.total_mass == pytest.approx(30.0, abs=1e-6)
    base = s.masses[s.joint_index("base_link")]
    assert base == pytest.approx(15.0, abs=0.5) and base == meta["base_mass"]
    assert meta["upper_body_mass"] == pytest.approx(s.total_mass - base)
    # the two-mass model of seed E
    assert body_com(s, s.rest_q, exclude=[j for j in s.joint_names if j != "base_link"])[2] == \
        pytest.approx(meta["base_com_height"])
    assert body_com(s, s.rest_q, exclude=["base_link"])[2] == \
        pytest.approx(meta["upper_body_com_height"], abs=1e-6)
    assert p["base"][2] == pytest.approx(meta["base_com_height"])
    assert meta["max_base_speed"] == 1.4 and meta["max_base_acceleration"] == 1.7
    # three wheel contacts on the ground: an equilateral triangle of side 0.422 m around the base
    w = np.array(meta["wheel_contacts"])
    assert w.shape == (3, 3) and np.all(w[:, 2] == 0.0)
    sides = [np.linalg.norm(w[i] - w[(i + 1) % 3]) for i in range(3)]
    np.testing.assert_allclose(sides, 0.422, atol=1e-5)
    np.testing.assert_allclose(w.mean(0), 0.0, atol=1e-6)
    assert meta["support_radius"] == pytest.approx(0.422 / (2 * math.sqrt(3)), abs=1e-6)


# ---------------------------------------------------------------------- biped12
LEG = ("hip_yaw", "hip_roll", "hip_pitch", "knee_pitch", "ankle_pitch", "ankle_roll")


def test_biped12_structure():
    s = animik.load_rig("biped12")
    assert s.n_dof == 12
    assert s.joint_names[0] == "torso" and len(s.joint_dofs("torso")) == 0
    for side in "lr":
        chain = [n for n in s.dof_names if n.startswith(side + "_")]
        assert chain == [f"{side}_{d}" for d in LEG]
    assert set(s.site_names) == {"l_sole", "r_sole"}
    np.testing.assert_array_equal(s.rest_q, 0.0)            # legs straight: seed C's singular pose
    fk = forward_kinematics(s, s.rest_q)
    for site in ("l_sole", "r_sole"):
        i = s.site_index(site)
        np.testing.assert_allclose(fk.site_rotations[i], np.eye(3), atol=1e-15)   # soles flat
        assert s.meta["soles"][site]["size"] == (0.22, 0.1)
    # straight legs are singular: the sole Jacobian loses rank
    jac = animik.site_jacobian(s, s.rest_q, "l_sole")
    cols = [s.dof_index("l_" + d) for d in LEG]
    assert np.linalg.matrix_rank(jac[:, cols], tol=1e-9) < 6


def solve_leg(s: Skeleton, site: str, target) -> tuple[np.ndarray, np.ndarray]:
    from scipy.optimize import least_squares

    side = site[0]
    idx = [s.dof_index(f"{side}_{d}") for d in LEG]
    i = s.site_index(site)

    def residual(x):
        q = s.rest_q.copy()
        q[idx] = x
        fk = forward_kinematics(s, q)
        # position error and the sole's tilt (rotation vector of world_from_sole vs identity)
        return np.concatenate([fk.site_positions[i] - target,
                               matrix_to_rotvec(fk.site_rotations[i])])

    x0 = np.zeros(6)
    x0[3] = 0.3   # start with the knee a little bent (off the singular straight leg)
    r = least_squares(residual, x0, bounds=(s.lower[idx], s.upper[idx]), xtol=1e-15,
                      ftol=1e-15, gtol=1e-15)
    q = s.rest_q.copy()
    q[idx] = r.x
    return q, r.fun


def test_biped12_reaches_seed_c_targets():
    pytest.importorskip("scipy")
    s = animik.load_rig("biped12")
    targets = s.meta["seed_c_targets"]
    assert targets["l_sole"] == (-0.25, 0.35, 0.0) and targets["r_sole"] == (0.25, -0.35, 0.0)
    q = s.rest_q.copy()
    for site, tgt in targets.items():
        qs, err = solve_leg(s, site, np.array(tgt))
        assert np.abs(err).max() < 1e-6, site
        side = list(s.joint_dofs(f"{site[0]}_hip")) + list(s.joint_dofs(f"{site[0]}_knee")) + \
            list(s.joint_dofs(f"{site[0]}_ankle"))
        q[side] = qs[side]
    assert s.within_limits(q)
    fk = forward_kinematics(s, q)
    for site, tgt in targets.items():
        i = s.site_index(site)
        np.testing.assert_allclose(fk.site_positions[i], tgt, atol=1e-6)
        np.testing.assert_allclose(fk.site_rotations[i], np.eye(3), atol=1e-6)
    # the knees are bent clearly off the singular straight pose
    for side in "lr":
        assert q[s.dof_index(f"{side}_knee_pitch")] > np.radians(10)
    # the torso really is fixed and the seed's targets lie on the ground plane z = 0
    assert s.offsets[0, 2] == s.meta["torso_height"]
