"""Batch runner: skipping finished outputs, failures, local processes, Dask (both transfers)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from rt_helpers import write_test_clip

from animik.retarget.batch import SIDECAR_SUFFIX, TargetSpec, run_batch


@pytest.fixture
def clips(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    write_test_clip(src / "a.bvh", frames=20, seed=1)
    write_test_clip(src / "b.bvh", frames=12, seed=2)
    (src / "broken.bvh").write_text("HIERARCHY\nROOT hips\n{\n OFFSET 0 0\n")
    return src


def _outputs(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.glob("*.bvh"))}


def test_batch_reports_failures_and_skips_finished(clips, tmp_path):
    out = tmp_path / "out"
    r = run_batch([clips], "fig2", out, progress=False)
    status = {Path(c["input"]).name: c["status"] for c in r.clips}
    assert status == {"a.bvh": "ok", "b.bvh": "ok", "broken.bvh": "failed"}
    assert "BVHParseError" in r.failed[0]["error"] and "broken.bvh:4:" in r.failed[0]["error"]
    assert set(_outputs(out)) == {"a.bvh", "b.bvh"}  # nothing (not even partial) for broken
    assert not list(out.glob(".*tmp"))
    doc = json.loads((out / "report.json").read_text())
    assert doc["counts"] == {"ok": 2, "skipped": 0, "failed": 1}
    side = json.loads((out / f"a{SIDECAR_SUFFIX}").read_text())
    assert side["settings_hash"] == r.settings_hash and side["report"]["limit_violations"] == 0
    first = _outputs(out)
    mtime = (out / "a.bvh").stat().st_mtime_ns
    time.sleep(0.01)
    # re-run: finished outputs skipped, the broken one tried again
    r2 = run_batch([clips], "fig2", out, progress=False)
    st = {Path(c["input"]).name: c["status"] for c in r2.clips}
    assert st == {"a.bvh": "skipped", "b.bvh": "skipped", "broken.bvh": "failed"}
    assert (out / "a.bvh").stat().st_mtime_ns == mtime
    # a changed input is redone, the unchanged one is not
    write_test_clip(clips / "b.bvh", frames=12, seed=3)
    r3 = run_batch([clips], "fig2", out, progress=False)
    st = {Path(c["input"]).name: c["status"] for c in r3.clips}
    assert st["a.bvh"] == "skipped" and st["b.bvh"] == "ok"
    # other settings: everything redone; --force: everything redone
    r4 = run_batch([clips], "fig2", out, options={"iterations": 5}, progress=False)
    assert sorted(c["status"] for c in r4.clips) == ["failed", "ok", "ok"]
    r5 = run_batch([clips], "fig2", out, options={"iterations": 5}, progress=False, force=True)
    assert sorted(c["status"] for c in r5.clips) == ["failed", "ok", "ok"]
    assert _outputs(out)["a.bvh"] != first["a.bvh"]  # 5 iterations instead of 10


def test_output_name_clash_and_missing_input(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    write_test_clip(tmp_path / "x" / "walk.bvh", frames=5)
    write_test_clip(tmp_path / "y" / "walk.bvh", frames=5)
    r = run_batch([tmp_path / "x" / "walk.bvh", tmp_path / "y" / "walk.bvh",
                   tmp_path / "nope.bvh"], "fig2", tmp_path / "out", progress=False)
    assert [c["status"] for c in r.clips] == ["ok", "failed", "failed"]
    assert "already used" in r.clips[1]["error"]
    assert "FileNotFoundError" in r.clips[2]["error"]


def test_local_processes_equal_in_process(clips, tmp_path):
    one = run_batch([clips], "body95", tmp_path / "one", progress=False)
    two = run_batch([clips], "body95", tmp_path / "two", jobs=2, progress=False)
    assert [c["status"] for c in one.clips] == [c["status"] for c in two.clips]
    assert _outputs(tmp_path / "one") == _outputs(tmp_path / "two")


def test_bvh_target_spec(tmp_path):
    tgt = write_test_clip(tmp_path / "target.bvh", frames=2, seed=9)
    spec = TargetSpec.from_arg(tgt)
    assert spec.kind == "bvh" and spec.data == tgt.read_bytes()
    assert spec.unit == pytest.approx(0.01)
    clip = write_test_clip(tmp_path / "c.bvh", frames=8)
    r = run_batch([clip], spec, tmp_path / "out", progress=False)
    assert r.clips[0]["status"] == "ok"
    from animik.io.bvh import read_bvh

    out = read_bvh(tmp_path / "out" / "c.bvh")
    assert out.skeleton.joint_names == read_bvh(tgt).skeleton.joint_names


@pytest.mark.slow
def test_dask_local_cluster_equals_local_run(clips, tmp_path):
    distributed = pytest.importorskip("distributed")
    local = run_batch([clips], "fig2", tmp_path / "local", progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        by_path = run_batch([clips], "fig2", tmp_path / "path", scheduler=cluster.scheduler_address,
                            transfer="path", progress=False)
        with distributed.Client(cluster) as client:
            by_bytes = run_batch([clips], "fig2", tmp_path / "bytes", scheduler=client,
                                 transfer="bytes", progress=False)
    for r in (by_path, by_bytes):
        assert [c["status"] for c in r.clips] == [c["status"] for c in local.clips]
    err = next(c for c in by_bytes.clips if c["status"] == "failed")["error"]
    assert f"{clips / 'broken.bvh'}:4:" in err  # the input's name, not the worker's temp file
    ref = _outputs(tmp_path / "local")
    assert _outputs(tmp_path / "path") == ref
    assert _outputs(tmp_path / "bytes") == ref
    # the sidecars written by workers (path) and by the client (bytes) mark the work finished
    again = run_batch([clips], "fig2", tmp_path / "bytes", progress=False)
    assert sorted(c["status"] for c in again.clips) == ["failed", "skipped", "skipped"]
    assert os.listdir(tmp_path / "bytes")
