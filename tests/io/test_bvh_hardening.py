"""Issue 15, BVH reader: frame counts bounded by what the data hold, absurd hierarchies refused
with a clear error, and the motion section read into one preallocated array (bounded memory)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from animik.errors import BVHParseError
from animik.io import bvh as bvh_io
from animik.io.bvh import loads_bvh
from animik.io.bvh_compat import dumps_bvh_compatible
from animik.motion import Motion
from animik.rigs import load_rig

NO_CHANNELS = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 0
  End Site
  {
    OFFSET 0 10 0
  }
}
MOTION
Frames: %s
Frame Time: 0.0333333
"""


def test_no_channels_and_a_huge_frame_count_is_refused():
    with pytest.raises(BVHParseError, match="Frames: 1000000000000"):
        loads_bvh(NO_CHANNELS % 1_000_000_000_000 + "\n\n")


def test_no_channels_frames_bounded_by_the_frame_lines():
    m = loads_bvh(NO_CHANNELS % 3 + "\n\n\n", unit="cm")
    assert m.q.shape == (3, 0)
    with pytest.raises(BVHParseError, match="only"):
        loads_bvh(NO_CHANNELS % 50 + "\n\n\n", unit="cm")


def test_frame_count_limit_is_stated_and_enforced():
    text = NO_CHANNELS.replace("CHANNELS 0", "CHANNELS 1 Xrotation") % (bvh_io.MAX_FRAMES + 1)
    with pytest.raises(BVHParseError, match=f"limit of {bvh_io.MAX_FRAMES} frames"):
        loads_bvh(text + "0\n")


def test_a_joint_with_a_million_channels_is_refused_at_once():
    text = NO_CHANNELS.replace("CHANNELS 0", "CHANNELS 1000000 " + "Xrotation " * 1_000_000)
    with pytest.raises(BVHParseError, match="1000000 channels"):
        loads_bvh(text % 1 + "\n")


def test_a_hundred_thousand_joints_are_refused():
    n = 100_000
    body = "".join(f"JOINT j{i}\n{{\nOFFSET 0 1 0\n}}\n" for i in range(1, n))
    text = ("HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n" + body
            + "}\nMOTION\nFrames: 1\nFrame Time: 0.03\n0\n")
    with pytest.raises(BVHParseError, match=f"more than {bvh_io.MAX_JOINTS} joints"):
        loads_bvh(text)


def test_motion_section_memory_is_a_small_multiple_of_the_file():
    """Was ~25x the file size (tokens of the whole section, then four (T, n) copies)."""
    skel = load_rig("body95")
    rng = np.random.default_rng(1)
    q = skel.clip_to_limits(skel.rest_q + 0.1 * rng.standard_normal((3000, skel.n_dof)))
    data = dumps_bvh_compatible(Motion(skel, q, 30.0), channels="compact")[0]
    tracemalloc.start()
    try:
        m = loads_bvh(data, unit="cm")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert m.n_frames == 3000
    # text + lines + the (T, n) array + Motion's read-only copy: ~5x (the issue measured 25x).
    assert peak < 8 * len(data), peak / len(data)
