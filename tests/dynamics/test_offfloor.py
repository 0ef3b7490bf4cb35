"""A body held still off the floor (a seat, a bike) is named, not filtered into something else."""

from __future__ import annotations

import json

import numpy as np
from conftest import SHARED_BVH, needs_shared, seated_clip

import animik
from animik.cli import main
from animik.dynamics.offfloor import held_off_floor
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion


def test_a_still_body_with_no_foot_near_the_floor_is_held_by_something_else():
    skel = animik.load_rig("body95")
    m = seated_clip(skel)
    (a, b), = held_off_floor(m)
    assert 40 <= a <= 60 and b == 150  # from the rise (1.0-1.3 s) plus half the 1 s window
    standing = seated_clip(skel, up=0.0)
    assert held_off_floor(standing) == []
    # a short hop (under a second off the floor) is not a seat
    hop = seated_clip(skel, T=60, at=1.0)
    q = hop.q.copy()
    q[45:, skel.dof_index("pelvis_tz")] = q[0, skel.dof_index("pelvis_tz")]
    assert held_off_floor(Motion(skel, q, 30.0)) == []


def test_settling_onto_the_seat_does_not_split_the_held_stretch():
    """A body settling 8 cm onto its seat in 0.3 s (its 1 s s.d. above the stillness bound for
    a moment) with every foot still far off the floor is held by the same seat throughout: one
    stretch (main: two, each with its own seat; louise on flat body95 feet sitting down onto
    the saddle, 965-982, carried by nothing)."""
    skel = animik.load_rig("body95")
    m = seated_clip(skel, T=300)
    q = m.q.copy()
    r = np.clip((np.arange(300) / 30.0 - 5.0) / 0.3, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] -= 0.08 * (3 * r ** 2 - 2 * r ** 3)
    sink = Motion(skel, q, 30.0)
    (a, b), = held_off_floor(sink)
    assert 40 <= a <= 60 and b == 300
    # a body that comes down to the floor in the gap (0.4 s) is two stretches: the floor
    # carried it in between
    q[140:152, skel.dof_index("pelvis_tz")] = q[0, skel.dof_index("pelvis_tz")]
    assert len(held_off_floor(Motion(skel, q, 30.0))) == 2


def test_filter_with_the_floor_only_refuses_a_seated_clip_and_says_why(tmp_path, capsys):
    skel = animik.load_rig("body95")
    clip, out, rep = tmp_path / "seated.bvh", tmp_path / "o.bvh", tmp_path / "o.json"
    write_bvh_compatible(seated_clip(skel), clip)
    rc = main(["filter", str(clip), "-o", str(out), "--model", "body95", "--plant",
               "--supports", "floor", "--json", str(rep)])
    assert rc == 5 and not out.exists()
    err = capsys.readouterr().err
    assert "not the floor carries it" in err and "(frames 5" in err
    r = json.loads(rep.read_text())
    assert r["written"] is False and r["held_off_floor_frames"][0][1] == 149
    assert main(["feasibility", str(clip), "--model", "body95", "--every", "0",
                 "--supports", "floor"]) == 5
    assert "held still with no foot near the floor" in capsys.readouterr().out


@needs_shared
def test_louise_pedals_a_bike_and_is_refused_up_front():
    """optitrack louise.bvh: 20 s on a stationary bike (COM still within 1-2 cm, both feet
    0.2-0.5 m up). Every other shared capture is carried by the floor."""
    found = {}
    for path in sorted(SHARED_BVH.glob("*/*.bvh")):
        found[path.stem] = held_off_floor(animik.read_bvh(path))
    assert [k for k, v in found.items() if v] == ["louise"]
    (a, b), = found["louise"]
    assert 8.0 < a / 100.0 < 9.5 and b == 2998
