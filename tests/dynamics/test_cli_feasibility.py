"""`animik feasibility` end to end: exit codes, JSON, PNG, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared

import animik
from animik.cli import main
from animik.dynamics.limits import limit_excess
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion


def _standing(tmp_path, frames=40, lean=0.0):
    skel = animik.load_rig("body95")
    q = np.tile(skel.rest_q, (frames, 1))
    if lean:
        d = skel.dof_index
        th = np.linspace(0.0, lean, frames)
        q[:, d("pelvis_tx")] = 0.859 * np.sin(th)
        q[:, d("pelvis_tz")] = 0.06825 + 0.859 * np.cos(th) - 0.9275  # tz is relative to the rest height
        q[:, d("pelvis_ry")] = th
        q[:, d("l_ankle_dorsiflexion")] = th
        q[:, d("r_ankle_dorsiflexion")] = th
    path = tmp_path / "clip.bvh"
    write_bvh_compatible(Motion(skel, q, 30.0), path)
    return path


def test_standing_clip_is_feasible(tmp_path, capsys):
    path = _standing(tmp_path)
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    assert main(["feasibility", str(path), "--json", str(out), "--plot", str(png), "--every", "10"]) == 0
    data = json.loads(out.read_text())
    assert data["summary"]["feasible"] and data["summary"]["frames"] == 40
    assert len(data["frames"]) == 40 and data["frames"][0]["in_contact"] == [True, True]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "infeasible frames: 0 / 40" in capsys.readouterr().out


def test_leaning_clip_exits_5(tmp_path):
    path = _standing(tmp_path, frames=60, lean=0.5)
    out = tmp_path / "r.json"
    assert main(["feasibility", str(path), "--json", str(out), "--every", "0"]) == 5
    s = json.loads(out.read_text())["summary"]
    assert s["infeasible_frames"] > 0 and s["reasons"]["zmp outside"] > 0
    assert s["infeasible_ranges"][-1][1] == 59  # the end of the lean is past the toes


def test_bad_input(tmp_path, capsys):
    path = _standing(tmp_path)
    with pytest.raises(SystemExit) as e:  # a bad option value is bad usage (exit 2)
        main(["feasibility", str(path), "--mu", "0"])
    assert e.value.code == 2
    assert "mu" in capsys.readouterr().err
    assert main(["feasibility", str(tmp_path / "missing.bvh")]) == 4
    bad = tmp_path / "bad.bvh"
    bad.write_text(path.read_text().replace("MOTION", "MOTIONX"))
    assert main(["feasibility", str(bad)]) == 3


@needs_shared
def test_shared_mocap_on_body95(tmp_path):
    clip = SHARED_BVH / "cmu" / "02_01.bvh"
    out = tmp_path / "r.json"
    code = main(["feasibility", str(clip), "--rig", "body95", "--json", str(out), "--every", "0"])
    assert code in (0, 5)
    s = json.loads(out.read_text())["summary"]
    assert s["frames"] > 100 and s["contact_areas"] == ["l_foot", "r_foot"]
    assert code == (0 if s["feasible"] else 5)


def _infeasible(capsys) -> tuple[str, str]:
    """The infeasible count and the margin / torque line of the report; stderr."""
    cap = capsys.readouterr()
    line = next(s for s in cap.out.splitlines() if "infeasible frames:" in s)
    peak = next(s for s in cap.out.splitlines() if "min ZMP margin" in s)
    return line.split("infeasible frames:")[1].split("(")[0].strip() + peak, cap.err


def test_body95_file_is_checked_as_body95(tmp_path, capsys):
    """A BVH written from body95 is recognised: without --model it is checked with body95's
    masses and soles, said on stderr, with --model body95's count; --model file keeps the
    file's own skeleton (masses by role, soles from its feet)."""
    path = _standing(tmp_path, frames=60, lean=0.35)
    assert main(["feasibility", str(path), "--every", "0"]) == 5
    auto, err = _infeasible(capsys)
    assert "recognised body95's hierarchy" in err and "--model file" in err
    main(["feasibility", str(path), "--every", "0", "--model", "body95"])
    explicit, err = _infeasible(capsys)
    assert auto == explicit and "recognised" not in err
    main(["feasibility", str(path), "--every", "0", "--model", "file"])
    own, err = _infeasible(capsys)
    assert own != auto and "recognised" not in err


def test_filter_uses_the_recognised_rig(tmp_path, capsys):
    path = _standing(tmp_path, frames=40)
    out = tmp_path / "out.bvh"
    assert main(["filter", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "animik filter: recognised body95's hierarchy" in err
    # the filter wrote the file's skeleton back: body95's hierarchy again
    assert animik.rigs.recognise_rig(animik.read_bvh(out)).skeleton.name == "body95"


def test_filter_output_with_a_twisted_knee_is_checked_as_body95(tmp_path, capsys):
    """`animik filter --model body95` moves the file's padded channels (a knee's twist: 11° on
    louise): body95's hierarchy, not a body95 motion; still checked with body95's model."""
    path = _standing(tmp_path, frames=40)
    m = animik.read_bvh(path)
    q = m.q.copy()
    q[:, m.skeleton.dof_index("r_knee_rx")] = 0.1
    twisted = tmp_path / "twisted.bvh"
    write_bvh_compatible(Motion(m.skeleton, q, m.fps), twisted)
    back = animik.read_bvh(twisted)
    assert animik.rigs.recognise_rig(back) is None
    assert animik.rigs.recognise_hierarchy(back.skeleton) == "body95"
    main(["feasibility", str(twisted), "--every", "0"])
    auto, err = _infeasible(capsys)
    assert "recognised body95's hierarchy" in err
    main(["feasibility", str(twisted), "--every", "0", "--model", "body95"])
    assert _infeasible(capsys)[0] == auto


@needs_shared
def test_filter_writes_a_body95_motion_on_a_body95_retarget(tmp_path, capsys):
    """A body95 retarget is filtered on body95's own 95 DoF: the written file is a body95
    motion again (its padded channels still zero, recognise_rig maps it), not the file's 159
    channels moved (the plant passes twisted 02_01's knees 9° about their long axes)."""
    assert main(["retarget", str(SHARED_BVH / "cmu" / "02_01.bvh"), "--to", "body95",
                 "--out", str(tmp_path), "-q"]) == 0
    out, rep = tmp_path / "out.bvh", tmp_path / "out.json"
    assert main(["filter", str(tmp_path / "02_01.bvh"), "-o", str(out), "--plant",
                 "--json", str(rep)]) == 0
    err = capsys.readouterr().err
    assert "recognised body95's hierarchy" in err
    back = animik.rigs.recognise_rig(animik.read_bvh(out))
    assert back is not None and back.skeleton.name == "body95"
    # the written file keeps body95's joint limits (the trunk's limit rows, the legs' limited
    # IK; last round's file left them on 108 frames, 10.9 deg at r_hip_flexion) and the report's
    # figures are the written file's; the warning would say so if it left them
    lim = json.loads(rep.read_text())["joint_limits"]
    mine = limit_excess(back.skeleton, back.q)
    assert mine["max_excess_deg"] < 1e-3  # the file's digits
    assert lim["output"]["frames_outside"] == lim["input"]["frames_outside"] == 0
    assert "leaves body95's joint limits" not in err
    assert main(["feasibility", str(out), "--every", "0"]) == 0
