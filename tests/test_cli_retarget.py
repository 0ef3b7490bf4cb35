"""``animik retarget``: outputs, report, exit codes, skipping, --force, bad inputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "retarget"))
from rt_helpers import write_test_clip  # noqa: E402

from animik.cli import main  # noqa: E402


@pytest.fixture
def inputs(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    write_test_clip(d / "one.bvh", frames=15, seed=1)
    write_test_clip(d / "two.bvh", frames=10, seed=2)
    return d


def test_retarget_writes_outputs_and_table(inputs, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["retarget", str(inputs / "one.bvh"), str(inputs / "two.bvh"), "--to", "fig2",
               "--out", str(out)])
    assert rc == 0
    cap = capsys.readouterr()
    assert "one.bvh" in cap.out and "hand err" in cap.out and "report:" in cap.out
    assert "retarget" in cap.err  # the progress bar
    assert (out / "one.bvh").is_file() and (out / "two.bvh").is_file()
    doc = json.loads((out / "report.json").read_text())
    assert doc["counts"]["ok"] == 2 and doc["target"] == "fig2"
    assert doc["clips"][0]["report"]["limit_violations"] == 0
    from animik.io.bvh import read_bvh

    m = read_bvh(out / "one.bvh")
    assert m.n_frames == 15 and m.meta["bvh_unit"] == "cm"
    # re-run: skipped; --force: redone
    assert main(["retarget", str(inputs), "--to", "fig2", "--out", str(out), "-q"]) == 0
    doc = json.loads((out / "report.json").read_text())
    assert doc["counts"] == {"ok": 0, "skipped": 2, "failed": 0}
    assert main(["retarget", str(inputs), "--to", "fig2", "--out", str(out), "-q",
                 "--force"]) == 0
    assert json.loads((out / "report.json").read_text())["counts"]["ok"] == 2


def test_bad_input_among_good_ones(inputs, tmp_path, capsys):
    (inputs / "bad.bvh").write_text("HIERARCHY\nROOT x\n{\n OFFSET 0 0 0\n CHANNELS 2 Xrotation\n")
    out = tmp_path / "out"
    rc = main(["retarget", str(inputs), "--to", "biped12", "--out", str(out), "-q"])
    assert rc == 5
    err = capsys.readouterr().err
    assert "failed" in err and "bad.bvh" in err
    assert not (out / "bad.bvh").exists()
    assert (out / "one.bvh").is_file() and (out / "two.bvh").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary leftovers
    # only bad inputs: exit 3
    assert main(["retarget", str(inputs / "bad.bvh"), "--to", "fig2", "--out", str(out),
                 "-q"]) == 3


def test_usage_and_target_errors(inputs, tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["retarget", str(inputs), "--to", "nosuchrig", "--out", out]) == 3
    assert "nosuchrig" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["retarget", str(inputs), "--to", "fig2", "--out", out, "--jobs", "0"])
    assert e.value.code == 2
    bad_map = tmp_path / "m.toml"
    bad_map.write_text("[joints\n")
    assert main(["retarget", str(inputs), "--to", "fig2", "--out", out, "--mapping",
                 str(bad_map)]) == 3
    with pytest.raises(SystemExit) as e:
        main(["retarget", str(inputs), "--out", out])  # --to missing
    assert e.value.code == 2


def test_mapping_file_and_bvh_target(inputs, tmp_path):
    target = write_test_clip(tmp_path / "target.bvh", frames=2, seed=5)
    m = tmp_path / "map.json"
    m.write_text(json.dumps({"joints": {"l_wrist": "", "r_wrist": ""}}))
    out = tmp_path / "out"
    rc = main(["retarget", str(inputs / "one.bvh"), "--to", str(target), "--out", str(out),
               "--mapping", str(m), "-q", "--iterations", "4"])
    assert rc == 0
    rep = json.loads((out / "one.retarget.json").read_text())["report"]
    assert "l_wrist" in rep["mapping"]["unmapped_source"]
    assert rep["mapping"]["origin"].endswith("map.json")


def test_jobs_two(inputs, tmp_path):
    out1, out2 = tmp_path / "o1", tmp_path / "o2"
    assert main(["retarget", str(inputs), "--to", "body95", "--out", str(out1), "-q"]) == 0
    assert main(["retarget", str(inputs), "--to", "body95", "--out", str(out2), "-q",
                 "--jobs", "2"]) == 0
    for name in ("one.bvh", "two.bvh"):
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes()
