"""Z-up BVH as Blender writes it (issue 14): ``read_bvh(up="auto")`` detects the up axis, the
figure reads back standing in animik's Z-up world at the right height, and every shared
(Y-up) file still reads Y-up."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_shared, shared_bvh_files

from animik.errors import OptionError
from animik.io.bvh import detect_up, read_bvh
from animik.kinematics import joint_positions

# Rx(+90°) (file Y-up -> Z-up): v -> (x, -z, y); a rotation about Y becomes one about Z, one about
# Z one about -Y. Channel -> (new channel, sign).
_SWAP = {"Xrotation": ("Xrotation", 1.0), "Yrotation": ("Zrotation", 1.0),
         "Zrotation": ("Yrotation", -1.0), "Xposition": ("Xposition", 1.0),
         "Yposition": ("Zposition", 1.0), "Zposition": ("Yposition", -1.0)}


def blender_z_up(text: str) -> str:
    """The same motion as a Z-up file written like Blender's exporter (offsets, channels and
    position values rotated to Z up, ``Frame Time`` with 6 decimals)."""
    out, signs, in_motion, frames_left = [], [], False, None
    for line in text.splitlines():
        s = line.strip()
        if not in_motion:
            m = re.match(r"(\s*)OFFSET\s+(\S+)\s+(\S+)\s+(\S+)", line)
            if m:
                x, y, z = (float(v) for v in m.group(2, 3, 4))
                out.append(f"{m.group(1)}OFFSET {x!r} {-z!r} {y!r}")
                continue
            m = re.match(r"(\s*)CHANNELS\s+(\d+)\s+(.*)", line)
            if m:
                names = []
                for c in m.group(3).split():
                    new, sign = _SWAP[c]
                    names.append(new)
                    signs.append(sign)
                out.append(f"{m.group(1)}CHANNELS {m.group(2)} {' '.join(names)}")
                continue
            if s.upper() == "MOTION":
                in_motion = True
            out.append(line)
            continue
        if s.lower().startswith("frames"):
            out.append(line)
            continue
        if s.lower().startswith("frame time"):
            dt = float(s.split(":")[1])
            out.append(f"Frame Time: {dt:.6f}")
            frames_left = True
            continue
        if frames_left and s:
            vals = np.array(s.split(), dtype=float) * signs
            out.append(" ".join(repr(float(v)) for v in vals))
    return "\n".join(out) + "\n"


def _first_frames(path: Path, n: int = 3) -> str:
    """The file with only its first ``n`` frames (keeps the test fast on long clips)."""
    lines = path.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.strip().lower().startswith("frame time"))
    lines[k - 1] = f"Frames: {n}"
    return "\n".join(lines[: k + 1 + n]) + "\n"


@needs_shared
@pytest.mark.parametrize("path", shared_bvh_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_blender_z_up_copy_reads_back_standing_at_the_right_height(path, tmp_path):
    y_up = tmp_path / "y.bvh"
    y_up.write_text(_first_frames(path))
    z_up = tmp_path / "z.bvh"
    z_up.write_text(blender_z_up(y_up.read_text()))
    ref = read_bvh(y_up)
    got = read_bvh(z_up)
    assert ref.meta["bvh_up"] == "y" and got.meta["bvh_up"] == "z"
    assert got.meta["bvh_unit"] == ref.meta["bvh_unit"]
    assert got.fps == pytest.approx(ref.fps, rel=1e-4)
    a = joint_positions(ref.skeleton, ref.q)
    b = joint_positions(got.skeleton, got.q)
    np.testing.assert_allclose(b, a, atol=1e-9)  # the same world motion: standing, same height
    body = b[0, 1:]  # without the ROOT (a ground node far from the body in some files)
    height, depth = np.ptp(body[:, 2]), np.ptp(body[:, 1])
    assert 1.0 < height < 2.2 and height > 2 * depth  # upright, human-sized (metres)
    # Forced Y-up, the same file lies on its back: the override is obeyed.
    lying = joint_positions(read_bvh(z_up, up="y", unit=got.meta["bvh_unit"]).skeleton, got.q)
    assert np.ptp(lying[0, 1:, 1]) > 2 * np.ptp(lying[0, 1:, 2])


def test_up_and_unit_overrides_and_bad_up(tmp_path):
    text = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 0 50
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 0 40
    }
  }
  JOINT Leg
  {
    OFFSET 10 0 -5
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 0 -80
    }
  }
}
MOTION
Frames: 1
Frame Time: 0.033333
0 0 95 0 0 0 0 0 0 0 0 0
"""
    p = tmp_path / "z.bvh"
    p.write_text(text)
    m = read_bvh(p)
    assert m.meta["bvh_up"] == "z" and m.meta["bvh_unit"] == "cm"
    pos = joint_positions(m.skeleton, m.q)[0]
    assert pos[m.skeleton.joint_index("Spine"), 2] == pytest.approx(1.45)  # (95 + 50) cm, up
    m_in = read_bvh(p, unit="inch", up="z")
    assert m_in.meta["bvh_unit"] == "inch"
    assert joint_positions(m_in.skeleton, m_in.q)[0, 1, 2] == pytest.approx(1.45 / 0.01 * 0.0254)
    with pytest.raises(OptionError, match="up"):
        read_bvh(p, up="x")
    assert detect_up(np.zeros((0, 3))) == "y"  # nothing to go by: the BVH convention


@needs_shared
def test_every_shared_file_still_reads_y_up():
    for path in shared_bvh_files():
        tmp = read_bvh(path)
        assert tmp.meta["bvh_up"] == "y", path
