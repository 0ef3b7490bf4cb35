"""``animik solve`` end to end through ``animik.cli.main``, and ``animik bench ik`` smoke test."""

from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pytest

import animik
from animik.cli import main
from animik.commands.solve import EXIT_NOT_CONVERGED
from animik.kinematics import site_poses, site_positions
from animik.rotations import matrix_to_quat


def _write(path, obj):
    path.write_text(json.dumps(obj) if not isinstance(obj, str) else obj, encoding="utf-8")
    return str(path)


def _fig2_targets():
    skel = animik.load_rig("fig2")
    q = np.array(skel.rest_q)
    q[skel.dof_index("r_elbow_flexion")] = 1.0
    q[skel.dof_index("r_shoulder_horizontal_flexion")] = 0.5
    pos, rot = site_poses(skel, q)
    i = skel.site_index("r_hand")
    return skel, pos[i], rot[i]


def test_solve_end_to_end(tmp_path, capsys):
    skel, p, r = _fig2_targets()
    tgt = _write(tmp_path / "t.json", {
        "targets": {"r_hand": {"position": p.tolist(), "rotation": r.tolist()}},
        "pinned": ["l_foot", "r_foot"], "weights": {"r_hand": 2.0}})
    out = tmp_path / "pose.json"
    rc = main(["solve", "fig2", "--targets", tgt, "--solver", "dls", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "converged" in text and "r_hand" in text and "l_foot" in text and "wrote" in text
    # solve time and start-up (rig, kernel load on the first call) are reported apart
    m = re.search(r"solve ([0-9.]+) ms, start-up ([0-9.]+) ms", text)
    assert m is not None, text
    assert float(m.group(1)) > 0 and float(m.group(2)) >= 0
    doc = json.loads(out.read_text())
    assert doc["rig"] == "fig2" and doc["solver"] == "dls" and doc["converged"] is True
    assert set(doc) >= {"iterations", "error_m", "q", "angle_error_rad", "reason"}
    assert list(doc["q"]) == list(skel.dof_names)
    q = np.array([doc["q"][n] for n in skel.dof_names])
    assert skel.within_limits(q)
    got = site_positions(skel, q)[skel.site_index("r_hand")]
    assert np.linalg.norm(got - p) <= 1e-3
    assert doc["error_m"]["r_hand"] <= 1e-3 and "l_foot" in doc["error_m"]
    assert not list(tmp_path.glob(".pose.json.*"))  # atomic write left no temporary file

    # the output is a valid --q0: starting at the solution takes no iteration
    rc = main(["solve", "fig2", "--targets", tgt, "--solver", "pinv", "--q0", str(out),
               "--out", str(tmp_path / "again.json")])
    assert rc == 0
    assert json.loads((tmp_path / "again.json").read_text())["iterations"] == 0


def test_solve_start_up_is_never_negative(tmp_path, capsys, monkeypatch):
    # Kernels already loaded in this process: the warm solve can time slower than the first
    # (CI once printed "start-up -0 ms"). The process is warmed by one run first (this test
    # may be a worker's first to solve), then the warm (second) solve is made 0.5 s slower:
    # far more than loading a warm rig and its targets.
    import time

    import animik.commands.solve as solve_cmd

    skel, p, r = _fig2_targets()
    tgt = _write(tmp_path / "t.json", {"targets": {"r_hand": {"position": p.tolist()}}})
    assert main(["solve", "fig2", "--targets", tgt, "--solver", "dls"]) == 0
    capsys.readouterr()
    calls = []
    real = solve_cmd.solve_ik

    def slow_second(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            time.sleep(0.5)
        return real(*a, **k)

    monkeypatch.setattr(solve_cmd, "solve_ik", slow_second)
    assert main(["solve", "fig2", "--targets", tgt, "--solver", "dls"]) == 0
    text = capsys.readouterr().out
    m = re.search(r"solve ([0-9.]+) ms, start-up ([0-9.]+) ms", text)
    assert m is not None, text
    assert float(m.group(1)) >= 500 and float(m.group(2)) == 0.0


def test_solve_quaternion_targets_partial_q0_and_tolerance(tmp_path, capsys):
    skel, p, r = _fig2_targets()
    tgt = _write(tmp_path / "t.json", {
        "targets": {"r_hand": {"position": p.tolist(), "quat_wxyz": matrix_to_quat(r).tolist()},
                    "head": site_positions(skel, skel.rest_q)[skel.site_index("head")].tolist()}})
    q0 = _write(tmp_path / "q0.json", {"q": {"r_elbow_flexion": 0.8}})
    rc = main(["solve", "fig2", "--targets", tgt, "--solver", "approx_inverse", "--q0", q0,
               "--tol", "2", "--tol-deg", "1", "--max-iterations", "5000", "--out", "-"])
    assert rc == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # "-": the JSON alone on stdout, the table on stderr
    assert doc["error_m"]["r_hand"] <= 2e-3
    assert "r_hand" in captured.err


def test_solve_not_converged_still_writes_pose(tmp_path, capsys):
    # fig2's pelvis is free: pin the feet so that the hand cannot reach 3 m away
    tgt = _write(tmp_path / "t.json", {"targets": {"r_hand": [0.0, -3.0, 1.4]},
                                       "pinned": ["l_foot", "r_foot"]})
    out = tmp_path / "pose.json"
    rc = main(["solve", "fig2", "--targets", tgt, "--solver", "dls", "--out", str(out)])
    assert rc == EXIT_NOT_CONVERGED == 5
    assert "NOT converged" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["converged"] is False and doc["error_m"]["r_hand"] > 0.5


def test_solve_iteration_cap(tmp_path):
    skel, p, _ = _fig2_targets()
    tgt = _write(tmp_path / "t.json", {"targets": {"r_hand": p.tolist()}})
    out = tmp_path / "pose.json"
    rc = main(["solve", "fig2", "--targets", tgt, "--solver", "jt", "--max-iterations", "2",
               "--out", str(out)])
    assert rc == EXIT_NOT_CONVERGED
    assert json.loads(out.read_text())["iterations"] == 2


@pytest.mark.parametrize("content, args, match", [
    ("{not json", [], "invalid JSON"),
    ({"target": {}}, [], "targets"),
    ({"targets": {"r_hand": [1, 2]}}, [], "shape"),
    ({"targets": {"r_hand": {"pos": [1, 2, 3]}}}, [], "position"),
    ({"targets": {"tail": [0, 0, 1]}}, [], "tail"),
    ({"targets": {"r_hand": [0, -0.5, 1.4]}, "pinned": "l_foot"}, [], "pinned"),
    ({"targets": {"r_hand": [0, -0.5, 1.4]}, "weights": {"r_hand": -1}}, [], "weight"),
    ({"targets": {"r_hand": {"position": [0, -0.5, 1.4], "rotation": [[1, 0], [0, 1]]}}}, [],
     "rotation"),
])
def test_solve_bad_input_exit_3(tmp_path, capsys, content, args, match):
    tgt = _write(tmp_path / "t.json", content)
    out = tmp_path / "pose.json"
    rc = main(["solve", "fig2", "--targets", tgt, "--out", str(out), *args])
    assert rc == 3
    assert match in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("args, match", [
    (["--solver", "newton"], "newton"),
    (["--solver", "dls", "--tol", "-1"], "--tol"),
    (["--solver", "dls", "--tol", "nan"], "--tol"),
    (["--solver", "dls", "--tol-deg", "inf"], "--tol-deg"),
    (["--solver", "dls", "--max-iterations", "-4"], "--max-iterations"),
])
def test_solve_bad_option_value_is_usage_exit_2(tmp_path, capsys, args, match):
    """Issue 15 item 12: a bad option value is bad usage (2) in every command, as the README says."""
    tgt = _write(tmp_path / "t.json", {"targets": {"r_hand": [0, -0.5, 1.4]}})
    out = tmp_path / "pose.json"
    with pytest.raises(SystemExit) as e:
        main(["solve", "fig2", "--targets", tgt, "--out", str(out), *args])
    assert e.value.code == 2
    assert match in capsys.readouterr().err
    assert not out.exists()


def test_solve_bad_q0_and_rig(tmp_path, capsys):
    tgt = _write(tmp_path / "t.json", {"targets": {"r_hand": [0, -0.5, 1.4]}})
    q0 = _write(tmp_path / "q0.json", {"q": {"knee": 1.0}})
    assert main(["solve", "fig2", "--targets", tgt, "--solver", "dls", "--q0", q0]) == 3
    assert "knee" in capsys.readouterr().err
    q0 = _write(tmp_path / "q0.json", {"q": [0.0, 1.0]})
    assert main(["solve", "fig2", "--targets", tgt, "--solver", "dls", "--q0", q0]) == 3
    assert "25" in capsys.readouterr().err
    assert main(["solve", "nosuchrig", "--targets", tgt]) == 3
    assert "fig2" in capsys.readouterr().err  # the built-in rigs are listed


def test_solve_missing_file_exit_4(tmp_path, capsys):
    rc = main(["solve", "fig2", "--targets", str(tmp_path / "none.json"), "--solver", "dls"])
    assert rc == 4
    assert "none.json" in capsys.readouterr().err


def test_solve_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["solve", "fig2"])  # --targets is required
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["solve", "--help"])
    assert info.value.code == 0
    assert "5  not converged" in capsys.readouterr().out


def test_bench_ik_prints_tables(capsys):
    peers = all(importlib.util.find_spec(m) is not None for m in ("pinocchio", "mink", "daqp"))
    args = ["bench", "ik", "--rigs", "biped12", "--problems", "3", "--solvers",
            "dls,jt_speculative,approx_inverse"] + (["--peers"] if peers else [])
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "success %" in out and "tracking" in out
    for name in ("dls", "jt_speculative", "approx_inverse"):
        assert f"biped12  {name}" in out
    if peers:
        assert "pinocchio DLS" in out and "mink (daqp)" in out and "/ pinocchio" in out


def test_bench_ik_rejects_bad_arguments(capsys):
    # Bad option values are bad usage (exit 2), as in every command (issue 15 item 12).
    for argv in (["--problems", "0"], ["--problems", "1", "--solvers", "zzz", "--no-tracking"]):
        with pytest.raises(SystemExit) as e:
            main(["bench", "ik", "--rigs", "biped12", *argv])
        assert e.value.code == 2
    assert "zzz" in capsys.readouterr().err
