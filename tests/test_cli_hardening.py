"""Issue 15 items 5, 8 and 12: every numeric option range-checked (bad usage, exit 2, in every
command), bad data exits 3 with a message (never a traceback), a missing file exits 4."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from animik import anim
from animik.cli import main
from animik.errors import FileFormatError
from animik.io.bvh import read_bvh, write_bvh
from animik.io.gltf import dumps_glb
from animik.motion import Motion
from animik.rigs import load_rig


def _usage_exit(argv, capsys, match):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert match in capsys.readouterr().err


def _scene(tmp_path):
    skel = load_rig("fig2")
    q1 = np.array(skel.rest_q)
    q1[skel.dof_index("l_shoulder_abduction")] = 1.0
    wave = anim.clip_from_poses(skel, [0.0, 1.0], [skel.rest_q, q1], name="wave", fps=20)
    path = tmp_path / "scene.toml"
    path.write_text('format = "animik-scene"\nformat_version = 1\n\n[scene]\nname = "t"\n'
                    'rig = "fig2"\n\n' + anim.clips_to_toml([wave]), encoding="utf-8")
    return path


def _bvh(tmp_path):
    skel = load_rig("fig2")
    path = tmp_path / "a.bvh"
    from animik.io.bvh_compat import write_bvh_compatible
    write_bvh_compatible(Motion(skel, skel.rest_q[None], 30.0), path)
    return path


@pytest.mark.parametrize("fps", ["1e9", "0", "-3", "nan", "inf", "x"])
def test_export_fps_out_of_range_is_usage(tmp_path, capsys, fps):
    out = tmp_path / "w.glb"
    _usage_exit(["export", str(_scene(tmp_path)), "-o", str(out), "--fps", fps], capsys, "--fps")
    assert not out.exists()


@pytest.mark.parametrize("cmd", ["convert", "export"])
@pytest.mark.parametrize("unit", ["1e-320", "0", "-1", "1e300", "nan", "furlong"])
def test_unit_out_of_range_is_usage(tmp_path, capsys, cmd, unit):
    out = tmp_path / "w.bvh"
    src = [str(_bvh(tmp_path)), str(out)] if cmd == "convert" else \
        [str(_scene(tmp_path)), "-o", str(out)]
    _usage_exit([cmd, *src, "--unit", unit], capsys, "--unit")
    assert not out.exists()


def test_writer_refuses_a_unit_that_makes_offsets_infinite(tmp_path):
    m = read_bvh(_bvh(tmp_path))
    with pytest.raises(FileFormatError, match="infinite"):
        write_bvh(m, tmp_path / "x.bvh", unit_scale=1e-320)
    assert not (tmp_path / "x.bvh").exists()


def test_clip_sampling_is_bounded():
    skel = load_rig("fig2")
    clip = anim.clip_from_poses(skel, [0.0, 1e6], [skel.rest_q, skel.rest_q], name="long")
    with pytest.raises(anim.ClipError, match="at most"):
        clip.frame_times(30.0)


@pytest.mark.parametrize("argv", [
    ["tune", "fig2", "--problems", "0"], ["tune", "fig2", "--frames", "-1"],
    ["bench", "kinematics", "--batch", "0"], ["retarget", "x.bvh", "--to", "fig2", "--out", "o",
                                              "--iterations", "0"],
    ["solve", "fig2", "--targets", "t.json", "--tol", "0"],
])
def test_numeric_options_checked_in_every_command(capsys, argv):
    _usage_exit(argv, capsys, "error: argument")


def test_huge_frame_count_without_channels_exits_3(tmp_path, capsys):
    p = tmp_path / "empty.bvh"
    p.write_text("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\n"
                 "Frames: 1000000000000\nFrame Time: 0.03\n\n")
    for cmd in (["info", str(p)], ["convert", str(p), str(tmp_path / "o.bvh")]):
        assert main(cmd) == 3
        assert "1000000000000" in capsys.readouterr().err


def test_glb_with_a_node_cycle_exits_3(tmp_path, capsys):
    data = dumps_glb(Motion(load_rig("fig2"), load_rig("fig2").rest_q[None], 30.0), mesh=False)
    jl = struct.unpack_from("<I", data, 12)[0]
    js = json.loads(data[20:20 + jl])
    js["nodes"][2]["children"] = [0]
    from animik.io.gltf import _glb_bytes
    p = tmp_path / "cycle.glb"
    p.write_bytes(_glb_bytes(js, data[20 + jl + 8:]))
    assert main(["convert", str(p), str(tmp_path / "o.bvh")]) == 3
    assert "cycle" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["missing_scene.toml"], ["app", "missing_scene.toml"], ["info", "missing.bvh"],
    ["convert", "missing.glb", "o.bvh"], ["export", "missing.toml", "-o", "o.glb"],
    ["retarget", "missing1.bvh", "missing2.bvh", "--to", "fig2", "--out", "OUT"],
    ["retarget", "SRC", "--to", "missing.bvh", "--out", "OUT"],
])
def test_missing_file_exits_4(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    src = str(_bvh(tmp_path))
    assert main([src if a == "SRC" else a for a in argv]) == 4
    assert "missing" in capsys.readouterr().err
