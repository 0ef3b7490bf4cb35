"""The `animik` command: listing, info, convert, exit codes, app dispatch."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import needs_shared, shared_bvh_files

import animik
from animik.cli import main


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for word in ("rigs", "info", "convert", "bench", "solve", "exit codes"):
        assert word in out
    with pytest.raises(SystemExit):
        main(["--version"])
    assert animik.__version__ in capsys.readouterr().out


def test_rigs_lists_counts(capsys):
    assert main(["rigs"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines()[2:]}
    assert lines["body95"][1:4] == ["52", "95", "15"]
    assert lines["fig2"][1] == "10" and lines["fig2"][3] == "5"
    assert lines["wheeled20"][2] == "20" and lines["biped12"][2] == "12"


@needs_shared
def test_info_on_real_bvh(capsys):
    path = [p for p in shared_bvh_files() if p.name == "02_01.bvh"][0]
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "344" in out and "120 fps" in out and "cmu" in out


def test_convert_rig_to_every_format(tmp_path):
    for ext in (".urdf", ".xml", ".bvh", ".toml"):
        out = tmp_path / f"fig2{ext}"
        assert main(["convert", "fig2", str(out)]) == 0
        assert out.stat().st_size > 0
    back = animik.read_bvh(tmp_path / "fig2.bvh")
    skel = animik.load_rig("fig2")
    np.testing.assert_allclose(animik.joint_positions(back.skeleton, back.q[0]),
                               animik.joint_positions(skel, skel.rest_q), atol=1e-9)
    assert animik.load_rig(str(tmp_path / "fig2.toml")).dof_names == skel.dof_names


def test_convert_body95_to_bvh_rewrites_what_bvh_cannot_hold(tmp_path):
    """body95's thumbs have a rest rotation BVH cannot hold: convert rewrites them (it failed)."""
    out = tmp_path / "body95.bvh"
    assert main(["convert", "body95", str(out)]) == 0
    back = animik.read_bvh(out)
    skel = animik.load_rig("body95")
    np.testing.assert_allclose(animik.joint_positions(back.skeleton, back.q[0]),
                               animik.joint_positions(skel, skel.rest_q), atol=1e-9)


@needs_shared
def test_convert_bvh_roundtrip(tmp_path):
    src = shared_bvh_files()[0]
    assert main(["convert", str(src), str(tmp_path / "a.bvh")]) == 0
    a, b = animik.read_bvh(src), animik.read_bvh(tmp_path / "a.bvh")
    np.testing.assert_allclose(a.q, b.q, rtol=1e-9, atol=1e-12)


def test_exit_codes(tmp_path, capsys):
    assert main(["convert", "fig2", str(tmp_path / "x.obj")]) == 2
    assert main(["convert", str(tmp_path / "missing.bvh"), str(tmp_path / "y.urdf")]) == 4
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n OFFSET 0 0\n")
    assert main(["convert", str(bad), str(tmp_path / "y.urdf")]) == 3
    assert "bad.bvh:4: expected 3 numbers after OFFSET" in capsys.readouterr().err
    assert not (tmp_path / "y.urdf").exists()
    assert main(["info", "no_such_rig"]) == 3
    with pytest.raises(SystemExit) as e:
        main(["convert"])
    assert e.value.code == 2


def test_bench_kinematics_prints_table(capsys):
    assert main(["bench", "kinematics", "--rig", "fig2", "--batch", "50", "--no-peers"]) == 0
    out = capsys.readouterr().out
    assert "FK + 5 site Jacobians" in out and "poses/s" in out


def test_console_script_opens_app_without_display_gives_clear_error():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run([sys.executable, "-m", "animik.cli", "fig2"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 4, out.stderr
    assert "display" in out.stderr.lower()


def _info_rows(capsys, path) -> dict[str, str]:
    assert main(["info", str(path)]) == 0
    rows = {}
    for line in capsys.readouterr().out.splitlines():
        key, _, value = line.partition("  ")
        rows[key.strip()] = value.strip()
    return rows


@needs_shared
def test_info_mass_follows_standing_height_and_travel_is_the_hips(capsys, tmp_path):
    """issue 13 item 4.10: one mass rule (BMI 22 x standing height^2) for every file, so the
    same person in another file layout weighs the same; the hips' travel under a static root."""
    from animik.kinematics import standing_height
    from animik.skeleton import mass_from_height

    for path in shared_bvh_files():
        m = animik.read_bvh(path)
        h = standing_height(m.skeleton, m.q)
        assert 1.2 < h < 2.0, (path.name, h)
        assert m.skeleton.total_mass == pytest.approx(mass_from_height(h), rel=1e-6), path.name
        rows = _info_rows(capsys, path)
        assert rows["standing height"].startswith(f"{h:.3f} m")
    bandai = [p for p in shared_bvh_files() if p.name == "dataset-1_walk_normal_001.bvh"][0]
    # the same motion written with another channel layout and unit: same height, same mass
    out = tmp_path / "walk_compact.bvh"
    assert main(["convert", str(bandai), str(out)]) == 0
    a, b = animik.read_bvh(bandai), animik.read_bvh(out)
    assert b.skeleton.total_mass == pytest.approx(a.skeleton.total_mass, rel=1e-3)
    # joint_Root stays at the origin; the hips walk about 8 m along y
    rows = _info_rows(capsys, bandai)
    travel = rows["root travel (Hips)"]
    y0, y1 = (float(v) for v in travel.split("y [")[1].split("]")[0].split(","))
    assert y1 - y0 > 7.0


def test_info_height_of_a_body95_motion_is_its_standing_height(capsys, tmp_path):
    """A body95 motion crouched at frame 0 (as a retarget may start) reports its standing
    height, not the crouch's (it said 1.52 m for a 1.64 m head site)."""
    from animik.io.bvh_compat import write_bvh_compatible
    from animik.kinematics import site_positions

    skel = animik.load_rig("body95")
    q = np.tile(skel.rest_q, (20, 1))
    bend = np.linspace(1.0, 0.0, 20)
    for side in ("l", "r"):
        q[:, skel.dof_index(f"{side}_knee_flexion")] = bend
    out = tmp_path / "body95_crouch.bvh"
    write_bvh_compatible(animik.Motion(skel, q, 30.0), out)
    head = site_positions(skel, skel.rest_q)[skel.site_index("head")][2]
    rows = _info_rows(capsys, out)
    assert float(rows["standing height"].split()[0]) == pytest.approx(head, abs=0.01)
    rows = _info_rows(capsys, "body95")
    assert rows["standing height"].startswith("1.750 m (given by the rig)")
