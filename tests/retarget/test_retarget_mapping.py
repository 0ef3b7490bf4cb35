"""Joint mapping: name normalisation, every naming convention, topology fallback, mapping files."""

from __future__ import annotations

import json

import pytest
from conftest import needs_shared, shared_bvh_files
from rt_helpers import CONVENTIONS, humanoid

import animik
from animik.errors import FileFormatError, UnknownNameError
from animik.retarget import build_mapping, classify_joints, parse_name, read_mapping_file, unmapped_joints
from animik.semantics.roles import topology_roles


@pytest.mark.parametrize("name, side, base", [
    ("mixamorig:LeftUpLeg", "l", "upleg"),
    ("lShldr", "l", "shldr"),
    ("rForeArm", "r", "forearm"),
    ("UpperArm_L", "l", "upperarm"),
    ("Toes_R", "r", "toes"),
    ("RHipJoint", "r", "hipjoint"),
    ("Bip01 L Thigh", "l", "thigh"),
    ("joint_Root", "", "root"),
    ("LowerBack", "", "lowerback"),
    ("LUArm", "l", "uarm"),
    ("LEFT_ARM", "l", "arm"),
    ("l_thumb_cmc", "l", "thumbcmc"),
    ("HandLeft", "l", "hand"),
])
def test_parse_name(name, side, base):
    p = parse_name(name)
    assert (p.side, p.base) == (side, base)


# The roles every convention must yield (slot names of rt_helpers are the canonical roles).
_CORE = ["hips", "head", "l_upper_arm", "l_forearm", "l_hand", "r_upper_arm", "r_forearm",
         "r_hand", "l_thigh", "l_shin", "l_foot", "r_thigh", "r_shin", "r_foot"]


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_naming_conventions(convention):
    names = CONVENTIONS[convention]
    skel = humanoid(names, convention)
    roles = classify_joints(skel)
    slot_of = {v: k for k, v in names.items()}
    got = {role: slot_of[j] for role, j in roles.roles.items()}
    for role in _CORE:
        assert got.get(role) == role, (convention, role, got.get(role))
    for role, slot in got.items():
        # spine chains are numbered from the hips up, whatever the file calls them
        if slot.startswith(("spine", "chest")):
            assert role.startswith(("spine", "chest"))
        else:
            assert role == slot, (convention, role, slot)
    assert all(roles.method[r] == "name" for r in _CORE)
    # the ignored joints are the known non-body parts
    ignored = {slot_of[j] for j in roles.ignored}
    assert ignored <= {"l_hipjoint", "r_hipjoint", "head_end", "eye", "l_metacarpal", "r_metacarpal"}


def test_shoulder_means_clavicle_or_upper_arm():
    cmu = classify_joints(humanoid(CONVENTIONS["cmu"]))
    assert cmu.roles["l_clavicle"] == "LeftShoulder" and cmu.roles["l_upper_arm"] == "LeftArm"
    ade = classify_joints(humanoid(CONVENTIONS["adelaide"]))
    assert ade.roles["l_clavicle"] == "LeftCollar" and ade.roles["l_upper_arm"] == "LeftShoulder"
    body = classify_joints(animik.load_rig("body95"))
    assert body.roles["l_clavicle"] == "l_clavicle" and body.roles["l_upper_arm"] == "l_shoulder"


def test_builtin_rigs_roles():
    body = classify_joints(animik.load_rig("body95"))
    assert body.spine == ("lumbar", "lower_thorax", "upper_thorax")
    assert body.roles["head"] == "skull" and body.roles["l_thumb3"] == "l_thumb_ip"
    fig2 = classify_joints(animik.load_rig("fig2"))
    assert fig2.roles["neck"] == "neck" and fig2.roles["l_forearm"] == "l_elbow"
    biped = classify_joints(animik.load_rig("biped12"))
    assert biped.roles["hips"] == "torso" and biped.roles["r_foot"] == "r_ankle"


def test_topology_fallback_finds_limbs_and_sides():
    # joints named j0, j1, ...: only the tree and the rest geometry are left
    names = {slot: f"j{i}" for i, slot in enumerate(CONVENTIONS["mixamo"])}
    skel = humanoid(names)
    roles = classify_joints(skel)
    slot_of = {v: k for k, v in names.items()}
    for role in ("hips", "l_thigh", "l_shin", "l_foot", "r_thigh", "r_shin", "r_foot", "l_hand",
                 "r_hand", "l_forearm", "r_upper_arm", "head"):
        assert slot_of[roles.roles[role]] == role, role
        assert roles.method[role] == "topology"
    geo = topology_roles(skel)
    assert slot_of[skel.joint_names[geo["l_toe"]]] == "l_toe"


@needs_shared
def test_topology_on_renamed_real_file():
    from animik.io.bvh import read_bvh

    path = next(p for p in shared_bvh_files() if p.name == "0005_Walking001.bvh")
    skel = read_bvh(path).skeleton
    by_name = classify_joints(skel).roles
    joints, sites = skel.to_joints()
    rename = {j.name: f"bone{i:02d}" for i, j in enumerate(joints)}
    from dataclasses import replace

    from animik.skeleton import Skeleton

    joints = [replace(j, name=rename[j.name], parent=rename.get(j.parent) if j.parent else None)
              for j in joints]
    sites = [replace(s, joint=rename[s.joint]) for s in sites]
    anon = Skeleton.from_joints("anon", joints, sites, meta=dict(skel.meta))
    topo = classify_joints(anon).roles
    for role in ("hips", "l_thigh", "r_thigh", "l_shin", "r_shin", "l_foot", "r_foot", "l_hand",
                 "r_hand", "l_upper_arm", "r_upper_arm"):
        assert topo[role] == rename[by_name[role]], role


def test_mapping_pairs_and_unmapped():
    src = humanoid(CONVENTIONS["cmu"], "cmu")
    m = build_mapping(src, animik.load_rig("body95"))
    pairs = dict(m.pairs)
    assert pairs["pelvis"] == "Hips" and pairs["l_shoulder"] == "LeftArm"
    assert pairs["l_clavicle"] == "LeftShoulder" and pairs["r_ankle"] == "RightFoot"
    assert pairs["lumbar"] == "LowerBack" and pairs["upper_thorax"] == "Spine1"
    assert pairs["lower_thorax"] == "Spine"
    un = unmapped_joints(m)
    assert "LHipJoint" in un["source"] and "LeftFingerBase" in un["source"]
    assert "l_middle_mcp" in un["target"] and "pelvis" not in un["target"]
    assert "hip offset" in m.unmapped_reason["LHipJoint"]
    assert m.effectors == {"head": "head", "l_hand": "l_hand", "r_hand": "r_hand",
                           "l_foot": "l_foot", "r_foot": "r_foot"}
    d = m.to_dict()
    json.dumps(d)
    assert d["unmapped_source"] == list(m.unmapped_source)


def test_chains_of_different_lengths_match_at_both_ends():
    src = humanoid(CONVENTIONS["daz"], "daz")  # abdomen, chest
    pairs = dict(build_mapping(src, animik.load_rig("body95")).pairs)
    assert pairs["lumbar"] == "abdomen" and pairs["upper_thorax"] == "chest"
    assert "lower_thorax" not in pairs  # interpolated between its neighbours


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_mapping_file_overrides(tmp_path, fmt):
    src = humanoid(CONVENTIONS["mixamo"], "mixamo")
    body = animik.load_rig("body95")
    doc = {"joints": {"mixamorig:Spine1": "", "mixamorig:Spine": "lower_thorax"},
           "effectors": {"head": ""}}
    p = tmp_path / f"map.{fmt}"
    if fmt == "json":
        p.write_text(json.dumps(doc))
    else:
        p.write_text('[joints]\n"mixamorig:Spine1" = ""\n"mixamorig:Spine" = "lower_thorax"\n'
                     '[effectors]\nhead = ""\n')
    spec = read_mapping_file(p)
    m = build_mapping(src, body, spec)
    pairs = dict(m.pairs)
    assert pairs["lower_thorax"] == "mixamorig:Spine"
    assert "lumbar" not in pairs  # its auto source was moved
    assert "mixamorig:Spine1" in m.unmapped_source
    assert m.unmapped_reason["mixamorig:Spine1"] == "ignored by the mapping file"
    assert "head" not in m.effectors


def test_flat_mapping_and_errors(tmp_path):
    src = humanoid(CONVENTIONS["bandai"], "bandai")
    fig2 = animik.load_rig("fig2")
    m = build_mapping(src, fig2, {"Hips": "pelvis", "Head": "neck"})
    assert dict(m.pairs)["neck"] == "Head"
    with pytest.raises(UnknownNameError, match="nope"):
        build_mapping(src, fig2, {"joints": {"nope": "pelvis"}})
    with pytest.raises(UnknownNameError, match="unknown joint"):
        build_mapping(src, fig2, {"joints": {"Hips": "nope"}})
    bad = tmp_path / "bad.toml"
    bad.write_text("[joints\n")
    with pytest.raises(FileFormatError, match="malformed"):
        read_mapping_file(bad)
    bad.write_text("[joints]\nHips = 3\n")
    with pytest.raises(FileFormatError, match="must be a name"):
        read_mapping_file(bad)
    bad.write_text("wat = 1\n[joints]\n")
    with pytest.raises(FileFormatError, match="unknown key"):
        read_mapping_file(bad)
    with pytest.raises(FileFormatError, match="effector roles"):
        build_mapping(src, fig2, {"effectors": {"head": "tail"}})


def test_unmappable_skeleton_raises():
    from animik.skeleton import Dof, Joint, Skeleton

    odd = Skeleton.from_joints("odd", [Joint("a", None, dofs=[Dof("a_rz", "rz")]),
                                       Joint("b", "a", (0, 0, 1.0), [Dof("b_rz", "rz")])])
    with pytest.raises(FileFormatError, match="cannot map"):
        build_mapping(odd, animik.load_rig("body95"))


def test_example_mapping_file_applies():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "assets" / "mappings" / "example.toml"
    spec = read_mapping_file(path)
    m = build_mapping(humanoid(CONVENTIONS["mixamo"], "mixamo"), animik.load_rig("body95"), spec)
    assert dict(m.pairs)["lower_thorax"] == "mixamorig:Spine1"
    assert "head" not in m.effectors
