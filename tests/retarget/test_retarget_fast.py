"""The fast retarget path against its reference forms (issue 14, throughput as users run it).

* the compiled fit (Gauss–Newton refinement, local rotations) against the numpy forms kept as
  the reference (``refine_numpy``, ``local_rotations_numpy``): equal to 1e-9 rad;
* a whole retarget of a shared clip with the fast build against the same retarget built with
  the reference forms: the batched per-frame targets equal, the reference poses to 1e-9, the
  solved effectors within the solver's tolerance of each other;
* ``animik retarget --jobs 2`` run as users run it (a fresh single-threaded process: the pool
  is forked from the warmed-up parent) writes the same files as the in-process batch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_shared, shared_bvh_files
from rt_helpers import write_test_clip

from animik.io.bvh import read_bvh
from animik.kinematics import forward_kinematics
from animik.retarget import Retargeter
from animik.retarget import fit as F
from animik.retarget.batch import pool_context, run_batch
from animik.rigs import load_rig


def _random_world_rotations(skel, frames: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(skel.lower), skel.lower, -np.pi)
    hi = np.where(np.isfinite(skel.upper), skel.upper, np.pi)
    q = rng.uniform(lo, hi, size=(frames, skel.n_dof))
    return forward_kinematics(skel, q).joint_rotations


_COMPILED_REFINE = F.refine


@pytest.mark.parametrize("rig", ["body95", "fig2", "biped12"])
def test_compiled_fit_equals_numpy_fit(rig, monkeypatch):
    skel = load_rig(rig)
    R = _random_world_rotations(skel, 200, seed=3)
    fitter = F.PoseFitter(skel)
    np.testing.assert_allclose(fitter.local_rotations(R), fitter.local_rotations_numpy(R),
                               rtol=0, atol=1e-12)
    fill = np.broadcast_to(skel.rest_q, (len(R), skel.n_dof))
    fast = fitter.fit(R, fill)
    rows = []

    def reference(*a):
        rows.append(len(a[0]))
        return F.refine_numpy(*a)

    monkeypatch.setattr(F, "refine", reference)
    monkeypatch.setattr(F.PoseFitter, "local_rotations", F.PoseFitter.local_rotations_numpy)
    ref = fitter.fit(R, fill)
    assert sum(rows) > 0, "nothing was refined: the comparison would be empty"
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-9)


def test_compiled_refine_regularised_rows_equal_numpy():
    """Rows near gimbal lock (the regularised path: eigenvector of BᵀB) and general axes."""
    rng = np.random.default_rng(7)
    n = 400
    axes = np.tile(np.eye(3)[[2, 0, 1]], (n, 1, 1))  # z x y, principal
    gen = rng.normal(size=(n // 2, 3, 3))
    axes[n // 2:] = gen / np.linalg.norm(gen, axis=-1, keepdims=True)
    theta = rng.uniform(-1.5, 1.5, size=(n, 3))
    theta[: n // 4, 1] = np.pi / 2 - rng.uniform(0.0, 0.2, size=n // 4)  # near the lock
    L = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
    from animik.rotations import axis_angle_to_matrix

    for k in range(3):
        L = L @ axis_angle_to_matrix(axes[:, k], theta[:, k])
    start = theta + rng.normal(scale=0.2, size=theta.shape)
    prior = rng.normal(scale=0.5, size=theta.shape)
    free = rng.random(theta.shape) < 0.2
    weight = np.where(np.arange(n) < n // 4, rng.uniform(0.1, 1.0, n), 0.0)
    weight[n // 2:] = 1.0
    fast = _COMPILED_REFINE(L, start, axes, prior, free, weight)
    ref = F.refine_numpy(L, start, axes, prior, free, weight)
    # a few rows far from any solution wander to tens of radians: relative there
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-9)


@needs_shared
def test_fast_retarget_equals_reference_on_a_shared_clip(monkeypatch):
    path = next(p for p in shared_bvh_files() if p.name == "02_01.bvh")
    motion = read_bvh(path)
    fast = Retargeter(motion, "body95")
    with monkeypatch.context() as m:
        m.setattr(F, "refine", F.refine_numpy)
        m.setattr(F.PoseFitter, "local_rotations", F.PoseFitter.local_rotations_numpy)
        ref = Retargeter(motion, "body95")
    for key in ("virtual", "A", "b", "dz", "ground", "p_hips", "leg_base", "contact"):
        np.testing.assert_array_equal(fast.clip[key], ref.clip[key], err_msg=key)
    np.testing.assert_allclose(fast.clip["bq"], ref.clip["bq"], rtol=0, atol=1e-9)
    a, b = fast.run(), ref.run()
    tol = fast.options.tol
    np.testing.assert_allclose(a.targets, b.targets, rtol=0, atol=1e-9)
    skel = fast.solve_skeleton
    sa = forward_kinematics(skel, a.motion.q).site_positions[:, fast._site_idx]
    sb = forward_kinematics(skel, b.motion.q).site_positions[:, fast._site_idx]
    assert np.abs(sa - sb).max() <= 2 * tol
    assert a.report.limit_violations == b.report.limit_violations == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork pools are Linux only")
def test_forked_pool_of_the_command_equals_in_process(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for i, frames in enumerate((40, 25, 12)):
        write_test_clip(src / f"c{i}.bvh", frames=frames, seed=i)
    one = run_batch([src], "body95", tmp_path / "one", progress=False)
    out = tmp_path / "two"
    cmd = [sys.executable, "-m", "animik.cli", "retarget", str(src), "--to", "body95",
           "--out", str(out), "--jobs", "2", "-q"]
    proc = subprocess.run(cmd, capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    doc = json.loads((out / "report.json").read_text())
    assert doc["pool"] == "fork" and doc["counts"]["ok"] == 3
    assert all(set(c["phases_s"]) == {"read", "build", "solve", "format", "write", "cpu"}
               for c in doc["clips"])
    for c in one.clips:
        name = Path(c["output"]).name
        assert (out / name).read_bytes() == Path(c["output"]).read_bytes(), name


def test_pool_context_falls_back_to_spawn_with_threads():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert pool_context().get_start_method() == "spawn"
    finally:
        stop.set()
        t.join()
