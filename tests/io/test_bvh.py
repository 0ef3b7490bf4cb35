"""BVH reader/writer: real files, an independent forward-kinematics reference, round trips,
writing Z-up skeletons, format quirks and malformed files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared, random_q, random_skeleton, shared_bvh_files

from animik.errors import BVHParseError, FileFormatError, UnknownNameError
from animik.io.bvh import UNITS, read_bvh, write_bvh
from animik.kinematics import joint_positions, site_positions
from animik.motion import Motion
from animik.skeleton import Dof, Joint, Site, Skeleton

FILES = shared_bvh_files()
IDS = [p.relative_to(SHARED_BVH).as_posix() for p in FILES]

# SOURCES.md: joints, End Sites, channels, frames, frame time, expected unit, root name.
EXPECTED = {
    "cmu/02_01.bvh": (31, 7, 96, 344, 0.0083333, "cmu", "Hips"),
    "cmu_daz/pirouette.bvh": (43, 14, 132, 592, 0.00833333, "cm", "hip"),
    "bandai_namco/dataset-1_walk_normal_001.bvh": (22, 5, 132, 195, 0.0333333, "cm", "joint_Root"),
    "bandai_namco/dataset-1_bow_active_001.bvh": (22, 5, 132, 128, 0.0333333, "cm", "joint_Root"),
    "bandai_namco/dataset-2_walk-turn-left_normal_001.bvh":
        (22, 5, 132, 102, 0.0333333, "cm", "joint_Root"),
    "sfu/0005_Walking001.bvh": (25, 5, 78, 270, 0.008333, "inch", "Hips"),
    "mocapbank/test_mocapbank.bvh": (19, 5, 60, 455, 0.033333, "cm", "Hips"),
    "mixamo_rig/test_freebvh.bvh": (55, 15, 168, 69, 0.0333333, "cm", "mixamorig:Hips"),
    "optitrack_adelaide/louise.bvh": (18, 5, 57, 2998, 0.01, "cm", "Hips"),
}

WORLD_FROM_BVH = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])


# ------------------------------------------------------------------ independent reference
def _rot_deg(axis: str, deg: float) -> np.ndarray:
    a = np.radians(deg)
    c, s = np.cos(a), np.sin(a)
    if axis == "X":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "Y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def reference_bvh_fk(text: str, frames) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Joint names, joint and End Site positions ``(F, J, 3)``, ``(F, E, 3)`` in file units and
    the file's Y-up frame, straight from the text (written independently of animik)."""
    tok = text.split()
    joints, ends, stack, i = [], [], [], 0
    while tok[i] != "MOTION":
        t = tok[i]
        if t in ("ROOT", "JOINT"):
            joints.append([tok[i + 1], stack[-1] if stack else -1, None, []])
            stack.append(len(joints) - 1)
            i += 3
        elif t == "End":  # End Site { OFFSET x y z }
            ends.append((stack[-1], [float(x) for x in tok[i + 4:i + 7]]))
            i += 8
        elif t == "OFFSET":
            joints[stack[-1]][2] = [float(x) for x in tok[i + 1:i + 4]]
            i += 4
        elif t == "CHANNELS":
            n = int(tok[i + 1])
            joints[stack[-1]][3] = tok[i + 2:i + 2 + n]
            i += 2 + n
        elif t == "}":
            stack.pop()
            i += 1
        else:
            i += 1
    n_frames = int(tok[i + 2])  # MOTION Frames: N Frame Time: t values...
    n_ch = sum(len(j[3]) for j in joints)
    values = np.array(tok[i + 6:], dtype=float).reshape(n_frames, n_ch)
    out_j, out_e = [], []
    for f in frames:
        row = values[f]
        pos, rot, col = [], [], 0
        for _, parent, off, chans in joints:
            t = np.array(off, dtype=float)
            r = np.eye(3)
            for c in chans:
                if c.endswith("position"):
                    t["XYZ".index(c[0])] = row[col]  # position channels replace the OFFSET
                else:
                    r = r @ _rot_deg(c[0], row[col])
                col += 1
            if parent < 0:
                pos.append(t)
                rot.append(r)
            else:
                pos.append(pos[parent] + rot[parent] @ t)
                rot.append(rot[parent] @ r)
        out_j.append(pos)
        out_e.append([pos[j] + rot[j] @ np.array(o) for j, o in ends])
    return [j[0] for j in joints], np.array(out_j), np.array(out_e).reshape(len(frames), -1, 3)


def _to_world(p_file: np.ndarray, scale: float) -> np.ndarray:
    return p_file @ WORLD_FROM_BVH.T * scale


# ------------------------------------------------------------------ real files
@needs_shared
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_shared_file_loads_as_documented(path: Path):
    m = read_bvh(path)
    n_j, n_e, n_ch, n_f, ft, unit, root = EXPECTED[path.relative_to(SHARED_BVH).as_posix()]
    sk = m.skeleton
    assert sk.n_joints == n_j
    assert sk.n_sites == n_e
    assert sk.n_dof == n_ch
    assert m.q.shape == (n_f, n_ch)
    assert sk.joint_names[0] == root
    assert 1.0 / m.fps == pytest.approx(ft, rel=1e-6)
    assert m.meta["bvh_unit"] == unit and sk.meta["bvh_unit"] == unit
    assert m.meta["bvh_unit_scale"] == UNITS[unit] == sk.meta["bvh_unit_scale"]
    assert m.meta["source"] == str(path) == sk.meta["source"]
    assert len(sk.meta["bvh_end_sites"]) == n_e
    assert all(nm.endswith("_end") or nm[-1].isdigit() for nm in sk.site_names)
    assert np.all(np.isinf(sk.lower)) and np.all(np.isinf(sk.upper))
    np.testing.assert_allclose(sk.rest_rotations[0], WORLD_FROM_BVH)
    np.testing.assert_array_equal(sk.rest_rotations[1:], np.tile(np.eye(3), (n_j - 1, 1, 1)))


@needs_shared
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_shared_file_matches_independent_fk(path: Path):
    m = read_bvh(path)
    frames = sorted({0, 1, m.n_frames // 3, m.n_frames // 2, m.n_frames - 1})
    names, p_joint, p_end = reference_bvh_fk(path.read_text(), frames)
    assert list(m.skeleton.joint_names) == names
    scale = m.meta["bvh_unit_scale"]
    q = m.q[frames]
    np.testing.assert_allclose(joint_positions(m.skeleton, q), _to_world(p_joint, scale),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(site_positions(m.skeleton, q), _to_world(p_end, scale),
                               rtol=0, atol=1e-9)


@needs_shared
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_shared_file_round_trip(path: Path, tmp_path: Path):
    a = read_bvh(path)
    out = write_bvh(a, tmp_path / "out.bvh")
    b = read_bvh(out)
    sa, sb = a.skeleton, b.skeleton
    assert sb.joint_names == sa.joint_names
    assert sb.dof_names == sa.dof_names
    assert sb.site_names == sa.site_names
    np.testing.assert_array_equal(sb.parents, sa.parents)
    np.testing.assert_array_equal(sb.dof_type, sa.dof_type)
    np.testing.assert_array_equal(sb.dof_axis, sa.dof_axis)
    np.testing.assert_allclose(sb.offsets, sa.offsets, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sb.rest_q, sa.rest_q, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sb.site_offsets, sa.site_offsets, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.q, a.q, rtol=1e-9, atol=1e-12)
    assert b.fps == pytest.approx(a.fps, rel=1e-12)
    assert b.meta["bvh_unit"] == a.meta["bvh_unit"]
    assert b.meta["bvh_unit_scale"] == a.meta["bvh_unit_scale"]


@needs_shared
def test_bandai_position_channels_replace_offset():
    path = SHARED_BVH / "bandai_namco" / "dataset-1_walk_normal_001.bvh"
    m = read_bvh(path)
    sk = m.skeleton
    j = sk.joint_index("Spine")
    np.testing.assert_array_equal(sk.offsets[j], [0.0, 0.0, 0.0])
    tx = sk.dof_index("Spine_tx")
    assert sk.rest_q[tx] == pytest.approx(0.157357, rel=1e-12)  # OFFSET 15.7357 cm
    assert m.q[0, tx] == pytest.approx(0.157357, rel=1e-5)  # the channel holds the same value
    assert sk.dof_names[sk.joint_dofs(j)[0]:sk.joint_dofs(j)[-1] + 1] == (
        "Spine_tx", "Spine_ty", "Spine_tz", "Spine_rz", "Spine_rx", "Spine_ry")


@needs_shared
def test_explicit_unit_overrides_detection():
    path = SHARED_BVH / "cmu" / "02_01.bvh"
    auto = read_bvh(path)
    cm = read_bvh(path, unit="cm")
    num = read_bvh(path, unit=0.01)
    assert cm.meta["bvh_unit"] == "cm" and num.meta["bvh_unit"] == "cm"
    np.testing.assert_allclose(cm.skeleton.offsets, num.skeleton.offsets)
    ratio = UNITS["cmu"] / UNITS["cm"]
    np.testing.assert_allclose(auto.skeleton.offsets, cm.skeleton.offsets * ratio)
    odd = read_bvh(path, unit=0.5)
    assert odd.meta["bvh_unit"] == "custom" and odd.meta["bvh_unit_scale"] == 0.5


# ------------------------------------------------------------------ synthetic file
BASE = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 5 0
    }
  }
  JOINT LeftLeg
  {
    OFFSET 5 -2 0
    CHANNELS 3 Xrotation Yrotation Zrotation
    End Site
    {
      OFFSET 0 -40 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
1 90 2 10 20 30 5 6 7 -8 9 10
1.5 91 2.5 11 21 31 6 7 8 -9 10 11
"""
BASE_LINES = BASE.splitlines()  # line k of the file is BASE_LINES[k - 1]


def _write(tmp_path: Path, text: str | bytes, name: str = "t.bvh") -> Path:
    p = tmp_path / name
    if isinstance(text, str):
        p.write_bytes(text.encode("utf-8"))
    else:
        p.write_bytes(text)
    return p


def _edit(line: int, new: str | None = None, insert: str | None = None) -> str:
    """BASE with file line ``line`` replaced (``new``), deleted (both None) or preceded by
    ``insert``."""
    lines = list(BASE_LINES)
    if insert is not None:
        lines.insert(line - 1, insert)
    elif new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    return "\n".join(lines) + "\n"


def _check_against_reference(m: Motion, text: str) -> None:
    frames = list(range(m.n_frames))
    names, p_joint, p_end = reference_bvh_fk(text, frames)
    assert list(m.skeleton.joint_names) == names
    s = m.meta["bvh_unit_scale"]
    np.testing.assert_allclose(joint_positions(m.skeleton, m.q), _to_world(p_joint, s), atol=1e-12)
    np.testing.assert_allclose(site_positions(m.skeleton, m.q), _to_world(p_end, s), atol=1e-12)


def test_base_file(tmp_path: Path):
    m = read_bvh(_write(tmp_path, BASE), unit="cm")
    sk = m.skeleton
    assert sk.joint_names == ("Hips", "Spine", "LeftLeg")
    assert sk.dof_names[:6] == ("Hips_tx", "Hips_ty", "Hips_tz", "Hips_rz", "Hips_rx", "Hips_ry")
    assert sk.site_names == ("Spine_end", "LeftLeg_end")
    assert sk.meta["bvh_end_sites"] == ("Spine_end", "LeftLeg_end")
    assert m.fps == pytest.approx(1 / 0.0333333, rel=1e-15)
    assert m.meta["bvh_frame_time"] == 0.0333333
    np.testing.assert_allclose(m.q[0, :3], [0.01, 0.90, 0.02])
    np.testing.assert_allclose(m.q[0, 3:6], np.radians([10, 20, 30]))
    # Root translation acts in the BVH frame: BVH (1, 90, 2) cm -> world (0.01, -0.02, 0.90) m.
    np.testing.assert_allclose(joint_positions(sk, m.q[0])[0], [0.01, -0.02, 0.90], atol=1e-15)
    np.testing.assert_allclose(joint_positions(sk, sk.rest_q)[1], [0, 0, 0.10], atol=1e-15)
    _check_against_reference(m, BASE)


def test_missing_file_raises_file_not_found(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="BVH file not found"):
        read_bvh(tmp_path / "nope.bvh")


def test_unknown_unit_name(tmp_path: Path):
    with pytest.raises(UnknownNameError, match="unknown BVH unit 'furlong'"):
        read_bvh(_write(tmp_path, BASE), unit="furlong")
    with pytest.raises(FileFormatError, match="positive"):
        read_bvh(_write(tmp_path, BASE), unit=-1.0)
    assert read_bvh(_write(tmp_path, BASE), unit="Inches").meta["bvh_unit"] == "inch"


def _same_motion(a: Motion, b: Motion) -> None:
    assert a.skeleton.joint_names == b.skeleton.joint_names
    assert a.skeleton.dof_names == b.skeleton.dof_names
    np.testing.assert_allclose(a.skeleton.offsets, b.skeleton.offsets, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(a.skeleton.site_offsets, b.skeleton.site_offsets, atol=1e-15)
    np.testing.assert_allclose(a.q, b.q, rtol=1e-12, atol=1e-15)


QUIRKS = {
    "crlf": BASE.replace("\n", "\r\n"),
    "mixed_endings": "".join(
        ln + ("\r\n" if i % 2 else "\n") for i, ln in enumerate(BASE_LINES)),
    "old_mac_cr": BASE.replace("\n", "\r"),
    "tabs": BASE.replace("  ", "\t").replace(" ", "\t").replace("End\tSite", "End Site")
    .replace("Frame\tTime:", "Frame Time:"),
    "trailing_whitespace": "\n".join(ln + " \t " for ln in BASE_LINES) + "\n",
    "blank_line_after_motion": _edit(26, insert=""),
    "blank_lines_everywhere": "\n\n".join(BASE_LINES) + "\n\n\n",
    "frames_tab_and_spaces": _edit(26, "Frames:\t   2"),
    "exponents": _edit(28, "1e0 9.0E+01 2.000 1.0e+01 20 3e1 5 6 7 -8 9 10"),
    "no_final_newline": BASE.rstrip("\n"),
    "utf8_bom": "\ufeff" + BASE,
    "lowercase_keywords": BASE.replace("OFFSET", "offset").replace("End Site", "end site")
    .replace("Zrotation", "ZROTATION"),
    "leading_indent_before_motion": _edit(25, "  MOTION  "),
}


@pytest.mark.parametrize("name", list(QUIRKS))
def test_quirks_parse_like_base(tmp_path: Path, name: str):
    base = read_bvh(_write(tmp_path, BASE, "base.bvh"), unit="cm")
    m = read_bvh(_write(tmp_path, QUIRKS[name]), unit="cm")
    _same_motion(base, m)
    assert m.fps == base.fps


def test_frame_time_without_leading_zero(tmp_path: Path):
    m = read_bvh(_write(tmp_path, _edit(27, "Frame Time: .0083333")), unit="cm")
    assert m.fps == 1.0 / 0.0083333


def test_negative_zero_and_tiny_exponent(tmp_path: Path):
    m = read_bvh(_write(tmp_path, _edit(28, "-0.0 90 1.87007e-05 -0 20 30 5 6 7 -8 9 10")),
                 unit="cm")
    assert m.q[0, 0] == 0.0 and np.signbit(m.q[0, 0])
    assert m.q[0, 2] == pytest.approx(1.87007e-07, rel=1e-15)


def test_zero_length_bones_and_colon_names(tmp_path: Path):
    text = (BASE.replace("OFFSET 0 10 0", "OFFSET 0 0 0").replace("OFFSET 0 -40 0", "OFFSET 0 0 0")
            .replace("Hips", "mixamorig:Hips").replace("Spine", "mixamorig:Spine"))
    m = read_bvh(_write(tmp_path, text), unit="cm")
    assert m.skeleton.joint_names[:2] == ("mixamorig:Hips", "mixamorig:Spine")
    assert m.skeleton.dof_names[0] == "mixamorig:Hips_tx"
    assert m.skeleton.site_names[0] == "mixamorig:Spine_end"
    np.testing.assert_array_equal(m.skeleton.offsets[1], 0.0)
    _check_against_reference(m, text)


def test_joint_with_position_and_rotation_channels(tmp_path: Path):
    text = _edit(9, "    CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation")
    text = text.replace("5 6 7 -8 9 10", "0.5 11 -0.25 5 6 7 -8 9 10")
    text = text.replace("6 7 8 -9 10 11", "0 10 0 6 7 8 -9 10 11")
    m = read_bvh(_write(tmp_path, text), unit="cm")
    sk = m.skeleton
    np.testing.assert_array_equal(sk.offsets[1], [0, 0, 0])
    spine = list(sk.joint_dofs("Spine"))
    np.testing.assert_allclose(sk.rest_q[spine[:3]], [0.0, 0.10, 0.0])
    np.testing.assert_allclose(m.q[0, spine[:3]], [0.005, 0.11, -0.0025])
    _check_against_reference(m, text)
    # Rest pose reproduces the OFFSET.
    np.testing.assert_allclose(joint_positions(sk, sk.rest_q)[1], [0, 0, 0.10], atol=1e-15)


def test_root_offset_replaced_only_where_channels_exist(tmp_path: Path):
    text = _edit(4, "  OFFSET 3 4 5").replace(
        "CHANNELS 6 Xposition Yposition Zposition", "CHANNELS 4 Yposition")
    text = text.replace("1 90 2 10", "90 10").replace("1.5 91 2.5 11", "91 11")
    m = read_bvh(_write(tmp_path, text), unit="cm")
    sk = m.skeleton
    # BVH (3, y, 5) cm -> world (0.03, -0.05, y)
    np.testing.assert_allclose(sk.offsets[0], [0.03, -0.05, 0.0], atol=1e-15)
    assert sk.rest_q[0] == pytest.approx(0.04)
    np.testing.assert_allclose(joint_positions(sk, m.q[0])[0], [0.03, -0.05, 0.90], atol=1e-15)


def test_position_channels_after_rotations_translate_first(tmp_path: Path):
    text = _edit(5, "  CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition")
    text = text.replace("1 90 2 10 20 30", "10 20 30 1 90 2")
    text = text.replace("1.5 91 2.5 11 21 31", "11 21 31 1.5 91 2.5")
    m = read_bvh(_write(tmp_path, text), unit="cm")
    base = read_bvh(_write(tmp_path, BASE, "base.bvh"), unit="cm")
    assert m.skeleton.dof_names == base.skeleton.dof_names  # translations moved first
    np.testing.assert_allclose(m.q, base.q, rtol=1e-15)


def test_joints_without_channels_are_fixed(tmp_path: Path):
    text = _edit(9, None).replace(" 5 6 7 -8", " -8").replace(" 6 7 8 -9", " -9")  # Spine
    text = text.replace("CHANNELS 3 Xrotation Yrotation Zrotation", "CHANNELS 0")
    text = text.replace(" -8 9 10", "").replace(" -9 10 11", "")
    m = read_bvh(_write(tmp_path, text), unit="cm")
    assert m.skeleton.n_dof == 6
    assert len(m.skeleton.joint_dofs("Spine")) == 0 and len(m.skeleton.joint_dofs("LeftLeg")) == 0
    _check_against_reference(m, text)


def test_repeated_rotation_channel(tmp_path: Path):
    text = _edit(9, "    CHANNELS 3 Zrotation Xrotation Zrotation")
    m = read_bvh(_write(tmp_path, text), unit="cm")
    assert m.skeleton.dof_names[6:9] == ("Spine_rz", "Spine_rx", "Spine_rz2")
    _check_against_reference(m, text)


def test_zero_frames_and_no_channels(tmp_path: Path):
    text = _edit(26, "Frames: 0").split("Frame Time: 0.0333333\n")[0] + "Frame Time: 0.01\n"
    m = read_bvh(_write(tmp_path, text), unit="cm")
    assert m.q.shape == (0, 12) and m.fps == pytest.approx(100)
    with pytest.raises(FileFormatError, match="empty motion"):
        write_bvh(m, tmp_path / "empty.bvh")
    text = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 3\nFrame Time: 0.1\n\n\n\n"
    m = read_bvh(_write(tmp_path, text), unit="m")
    assert m.q.shape == (3, 0)
    back = read_bvh(write_bvh(m, tmp_path / "w.bvh"), unit="m")
    assert back.q.shape == (3, 0)


def test_unit_detection_on_synthetic_heights(tmp_path: Path):
    # A 1.75 m figure written in each unit is detected as that unit.
    for unit, scale in UNITS.items():
        h = 1.75 / scale
        text = (f"HIERARCHY\nROOT r\n{{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n"
                f"JOINT head\n{{\nOFFSET 0 {h:.9g} 0\nEnd Site\n{{\nOFFSET 0 0 0\n}}\n}}\n}}\n"
                f"MOTION\nFrames: 1\nFrame Time: 0.1\n0 {h / 2:.9g} 0\n")
        m = read_bvh(_write(tmp_path, text))
        assert m.meta["bvh_unit"] == unit, unit


# ------------------------------------------------------------------ malformed files
MALFORMED = [
    ("truncated_motion", _edit(29), 29, r"truncated motion: 'Frames: 2' but only 1 frame"),
    ("truncated_no_frames", "\n".join(BASE_LINES[:27]) + "\n", 28, r"truncated motion"),
    ("too_few_values", _edit(28, "1 90 2 10 20 30 5 6 7 -8 9"), 28, r"expected 12 values"),
    ("too_many_values", _edit(29, BASE_LINES[28] + " 3"), 29, r"expected 12 values.*got 13"),
    ("unknown_channel", _edit(9, "    CHANNELS 3 Zrotation Xrot Yrotation"), 9,
     r"unknown channel 'Xrot'.*expected one of"),
    ("channels_count_low", _edit(5, BASE_LINES[4].replace("6", "5")), 5,
     r"declares 5 channels but lists 6"),
    ("channels_count_high", _edit(9, "    CHANNELS 4 Zrotation Xrotation Yrotation"), 9,
     r"declares 4 channels but lists 3"),
    ("channels_count_missing", _edit(9, "    CHANNELS Zrotation Xrotation Yrotation"), 9,
     r"expected a channel count"),
    ("non_numeric_value", _edit(29, "1.5 91 2.5 11 21 31 6 abc 8 -9 10 11"), 29,
     r"expected a number for channel 8 of frame 2, got 'abc'"),
    ("nan_value", _edit(28, "1 nan 2 10 20 30 5 6 7 -8 9 10"), 28, r"expected a number"),
    ("overflow_value", _edit(28, "1 1e999 2 10 20 30 5 6 7 -8 9 10"), 28, r"expected a number"),
    ("double_dot_value", _edit(28, "1 9.0.0 2 10 20 30 5 6 7 -8 9 10"), 28, r"'9.0.0'"),
    ("non_numeric_offset", _edit(8, "    OFFSET 0 ten 0"), 8, r"expected a number for OFFSET"),
    ("short_offset", _edit(8, "    OFFSET 0 10"), 8, r"expected 3 numbers after OFFSET"),
    ("missing_close_brace", _edit(14), 24, r"unbalanced braces: expected '}' to close joint"),
    ("extra_close_brace", _edit(25, insert="}"), 25, r"unbalanced braces: unexpected '}'"),
    ("missing_open_brace", _edit(7), 7, r"expected '\{' after JOINT Spine"),
    ("unclosed_at_eof", "\n".join(BASE_LINES[:20]), 20, r"expected OFFSET in End Site"),
    ("missing_hierarchy", _edit(1), 1, r"expected 'HIERARCHY'"),
    ("missing_root", _edit(2, "Hips"), 2, r"expected 'ROOT' after HIERARCHY"),
    ("root_without_name", _edit(2, "ROOT"), 2, r"expected a joint name after ROOT"),
    ("missing_motion", _edit(25), 25, r"expected 'MOTION' after the hierarchy"),
    ("missing_frames", _edit(26), 26, r"expected 'Frames: <count>'"),
    ("missing_frame_time", _edit(27), 27, r"expected 'Frame Time: <seconds>'"),
    ("bad_frames_count", _edit(26, "Frames: 2.5"), 26, r"non-negative integer after 'Frames:'"),
    ("negative_frames", _edit(26, "Frames: -2"), 26, r"non-negative integer"),
    ("negative_frame_time", _edit(27, "Frame Time: -0.1"), 27, r"positive number.*'-0.1'"),
    ("zero_frame_time", _edit(27, "Frame Time: 0"), 27, r"positive number after 'Frame Time:'"),
    ("empty_file", "", 1, r"empty file: expected 'HIERARCHY'"),
    ("blank_file", "  \n\t\r\n\n", 1, r"empty file"),
    ("extra_frame_lines", BASE + BASE_LINES[28] + "\n", 30, r"expected 2 frame lines.*more"),
    ("missing_offset", _edit(8), 13, r"expected OFFSET in joint 'Spine'"),
    ("duplicate_offset", _edit(9, "    OFFSET 1 2 3"), 9, r"second OFFSET"),
    ("duplicate_joint", BASE.replace("JOINT LeftLeg", "JOINT Spine"), 15,
     r"duplicate joint name 'Spine' \(first defined at line 6\)"),
    ("duplicate_position_channel", _edit(5, BASE_LINES[4].replace("Zposition", "Xposition")), 5,
     r"lists channel 'Xposition' twice"),
    ("second_root", _edit(25, insert="ROOT Other"), 25, r"only one ROOT"),
    ("junk_in_joint", _edit(9, "    CHANNEL 3 Zrotation Xrotation Yrotation"), 9,
     r"unexpected 'CHANNEL' in joint 'Spine': expected OFFSET, CHANNELS"),
    ("end_without_site", _edit(10, "    End"), 10, r"expected 'End Site'"),
    ("text_after_motion", _edit(25, "MOTION 3"), 25, r"nothing after MOTION"),
]


@pytest.mark.parametrize("text,line,match", [c[1:] for c in MALFORMED],
                         ids=[c[0] for c in MALFORMED])
def test_malformed_raises_with_line(tmp_path: Path, text: str, line: int, match: str):
    path = _write(tmp_path, text)
    with pytest.raises(BVHParseError, match=match) as info:
        read_bvh(path, unit="cm")
    assert info.value.line == line
    assert info.value.path == str(path)
    assert f":{line}:" in str(info.value)


def test_non_utf8_garbage_reports_its_line(tmp_path: Path):
    data = _edit(12, "      OFFSET 0 5 0 \xff").encode("utf-8").replace(b"\xc3\xbf", b"\xff\xfe")
    with pytest.raises(BVHParseError, match=r"invalid UTF-8 byte 0xff") as info:
        read_bvh(_write(tmp_path, data), unit="cm")
    assert info.value.line == 12
    with pytest.raises(BVHParseError, match="UTF-8") as info:
        read_bvh(_write(tmp_path, bytes(range(128, 256)) * 10), unit="cm")
    assert info.value.line == 1


# ------------------------------------------------------------------ writing
def test_written_file_is_readable_text(tmp_path: Path):
    m = read_bvh(_write(tmp_path, BASE), unit="cm")
    out = write_bvh(m, tmp_path / "o.bvh")
    text = out.read_text()
    assert text.startswith("HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n")
    assert "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n" in text
    assert "Frames: 2\nFrame Time: 0.0333333\n1 90 2 10 20 30 5 6 7 -8 9 10\n" in text
    _same_motion(m, read_bvh(out, unit="cm"))
    # Default unit comes from meta; an explicit one rescales the numbers.
    text_m = write_bvh(m, tmp_path / "m.bvh", unit_scale=1.0).read_text()
    assert "0.01 0.9 0.02 10 20 30" in text_m
    _same_motion(m, read_bvh(tmp_path / "m.bvh", unit="m"))
    exact = read_bvh(write_bvh(m, tmp_path / "r.bvh", precision=None), unit="cm")
    np.testing.assert_allclose(exact.q, m.q, rtol=2e-16, atol=0)  # degrees <-> radians: 1 ulp


def _bvh_representable(skel: Skeleton) -> bool:
    """Independent check: below the root, no translation DoF after a rotation DoF and no two
    translations on one axis (root DoFs from random_skeleton are tx ty tz first)."""
    for j in range(1, skel.n_joints):
        kinds = [(skel.dof_type[k], tuple(np.abs(skel.dof_axis[k]))) for k in skel.joint_dofs(j)]
        first_rot = next((i for i, (t, _) in enumerate(kinds) if t == 0), len(kinds))
        trans = [ax for t, ax in kinds if t == 1]
        if any(t == 1 for t, _ in kinds[first_rot:]) or len(set(trans)) != len(trans):
            return False
    return True


def _check_written_fk(tmp_path: Path, skel: Skeleton, rng: np.random.Generator) -> None:
    q = random_q(skel, rng, (6,))
    motion = Motion(skel, q, 50.0)
    back = read_bvh(write_bvh(motion, tmp_path / "w.bvh"), unit="cm")  # default unit: cm
    assert back.skeleton.joint_names == skel.joint_names
    assert back.fps == pytest.approx(50.0, rel=1e-14)
    np.testing.assert_allclose(joint_positions(back.skeleton, back.q), joint_positions(skel, q),
                               rtol=0, atol=1e-9)
    # Leaf joints carry their first site as End Site.
    got, want = [], []
    for j in range(skel.n_joints):
        own = [s for s in range(skel.n_sites) if skel.site_joint[s] == j]
        if not skel.children[j] and own:
            got.append(back.skeleton.site_index(f"{skel.joint_names[j]}_end"))
            want.append(own[0])
    if want:
        np.testing.assert_allclose(site_positions(back.skeleton, back.q)[:, got],
                                   site_positions(skel, q)[:, want], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_write_zup_skeleton_keeps_world_positions(tmp_path: Path, seed: int):
    rng = np.random.default_rng(seed)
    skel = random_skeleton(rng, general_axes=False, rest_rotations=False)
    if not _bvh_representable(skel):
        with pytest.raises(FileFormatError, match=r"translation"):
            write_bvh(Motion(skel, random_q(skel, rng, (2,)), 30.0), tmp_path / "w.bvh")
        return
    _check_written_fk(tmp_path, skel, rng)


def test_write_skeleton_with_rotated_root_and_negative_axes(tmp_path: Path, rng):
    rz90 = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    joints = [
        Joint("root", None, (0.1, 0.2, 0.9), [Dof("x", "tx"), Dof("y", "ty"), Dof("z", "tz"),
                                             Dof("yaw", "rz"), Dof("ny", "r", axis=(0, -1, 0))],
              rotation=rz90),
        Joint("a", "root", (0.0, 0.3, 0.0), [Dof("a_t", "t", axis=(0, 0, -1)),
                                             Dof("a_r", "r", axis=(-1, 0, 0)), Dof("a_q", "ry")]),
        Joint("b", "a", (0.2, 0.0, -0.1), [Dof("b_r", "rz")]),
        Joint("c", "root", (-0.2, 0.0, 0.0)),
    ]
    sites = [Site("tip", "b", (0.0, 0.0, -0.3)), Site("mid", "a", (0.05, 0, 0)),
             Site("c_tip", "c", (0.0, 0.1, 0.0))]
    skel = Skeleton.from_joints("rot", joints, sites)
    _check_written_fk(tmp_path, skel, rng)
    back = read_bvh(tmp_path / "w.bvh", unit="cm")
    assert back.skeleton.site_names == ("b_end", "c_end")  # "mid" is on a non-leaf: dropped


def test_write_rejects_general_axis_and_rest_rotation(tmp_path: Path):
    target = tmp_path / "w.bvh"
    general = Skeleton.from_joints("g", [
        Joint("r", None, dofs=[Dof("r_x", "rx")]),
        Joint("k", "r", (0, 0.1, 0), [Dof("tilted", "r", axis=(1.0, 1.0, 0.0))]),
    ])
    with pytest.raises(FileFormatError, match=r"DoF 'tilted' of joint 'k'.*principal axis"):
        write_bvh(Motion(general, np.zeros((2, 2)), 30), target)
    rotated = Skeleton.from_joints("g", [
        Joint("r", None, dofs=[Dof("r_x", "rx")]),
        Joint("k", "r", (0, 0.1, 0), [Dof("k_x", "rx")], rotation=np.array(
            [[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])),
    ])
    with pytest.raises(FileFormatError, match=r"joint 'k' has a non-identity rest rotation"):
        write_bvh(Motion(rotated, np.zeros((2, 2)), 30), target)
    spaced = Skeleton.from_joints("g", [Joint("r oot\t", None, dofs=[Dof("r_x", "rx")])])
    with pytest.raises(FileFormatError, match=r"joint name"):
        write_bvh(Motion(spaced, np.zeros((2, 1)), 30), target)
    assert not target.exists()


def test_random_skeleton_with_general_axes_raises(tmp_path: Path):
    rng = np.random.default_rng(3)
    skel = random_skeleton(rng, general_axes=True, rest_rotations=False, translations=False)
    with pytest.raises(FileFormatError, match="principal axis"):
        write_bvh(Motion(skel, random_q(skel, rng, (2,)), 30), tmp_path / "w.bvh")


# ------------------------------------------------------------------ atomic writing
def test_failed_write_leaves_existing_file_untouched(tmp_path: Path, monkeypatch):
    import animik.io._atomic as atomic

    m = read_bvh(_write(tmp_path, BASE), unit="cm")
    target = tmp_path / "keep.bvh"
    target.write_text("old content")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_bvh(m, target)
    monkeypatch.undo()
    assert target.read_text() == "old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.bvh", "t.bvh"]  # no temp left

    # A skeleton BVH cannot hold fails before anything is written.
    bad = Skeleton.from_joints("g", [Joint("r", None, dofs=[Dof("d", "r", axis=(1, 1, 1))])])
    with pytest.raises(FileFormatError):
        write_bvh(Motion(bad, np.zeros((1, 1)), 30), target)
    assert target.read_text() == "old content"


def test_write_into_missing_folder_raises(tmp_path: Path):
    m = read_bvh(_write(tmp_path, BASE), unit="cm")
    with pytest.raises(FileNotFoundError):
        write_bvh(m, tmp_path / "no" / "such" / "dir.bvh")


def test_dataclass_replace_keeps_bvh_meta(tmp_path: Path):
    # A motion edited in memory (q replaced) still writes with the file's unit.
    m = read_bvh(_write(tmp_path, BASE), unit="inch")
    m2 = dataclasses.replace(m, q=np.asarray(m.q) * 0.5)
    back = read_bvh(write_bvh(m2, tmp_path / "half.bvh"), unit="inch")
    np.testing.assert_allclose(back.q, m2.q, rtol=1e-12, atol=1e-15)


def test_written_files_have_ordinary_permissions(tmp_path):
    import os

    from animik.io._atomic import atomic_write

    target = tmp_path / "a.txt"
    atomic_write(target, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert (target.stat().st_mode & 0o777) == (0o666 & ~umask)
    os.chmod(target, 0o640)
    atomic_write(target, "y")
    assert (target.stat().st_mode & 0o777) == 0o640
