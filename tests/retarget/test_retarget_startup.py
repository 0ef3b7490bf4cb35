"""Start-up of ``animik retarget``: what a process loads before its first clip."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_kernels_use_lapack_without_importing_scipy_linalg():
    # numba's BLAS check and gn_refine's eigh find the two Cython modules animik._kernels
    # preloads; all of scipy.linalg is not imported, and importing it later still works and
    # uses the same module objects.
    out = _run("""
        import sys
        import numpy as np
        from animik.retarget.batch import TargetSpec, warm_up
        from animik.retarget._fit_kernels import gn_refine
        warm_up(TargetSpec.from_arg("body95"))
        rng = np.random.default_rng(0)
        axes = np.tile(np.eye(3), (4, 1, 1))
        L = np.tile(np.eye(3), (4, 1, 1))
        th = rng.normal(size=(4, 3))
        got = gn_refine(L, th, axes, np.zeros((4, 3)), np.zeros((4, 3), bool), np.ones(4), 0.5, 3)
        print("linalg" if "scipy.linalg" in sys.modules else "no-linalg")
        import scipy.linalg as sla
        from scipy.linalg import cython_lapack
        assert cython_lapack is sys.modules["scipy.linalg.cython_lapack"]
        a = np.array([[2.0, 1.0], [1.0, 3.0]])
        assert np.allclose(sla.eigh(a)[0], np.linalg.eigh(a)[0])
        assert np.allclose(sla.solve(a, [1.0, 2.0]), np.linalg.solve(a, [1.0, 2.0]))
        print("finite" if np.all(np.isfinite(got)) else "nan")
    """)
    assert out.split() == ["no-linalg", "finite"]


def test_bench_compiles_the_bytecode_the_timed_command_imports():
    # the whole-command timing runs animik as an installed copy does: every module with a
    # current .pyc, even where PYTHONDONTWRITEBYTECODE keeps imports from writing them
    from animik.bench.retarget import ensure_bytecode

    first = ensure_bytecode()
    assert first.startswith("byte-code: ")
    assert ensure_bytecode().startswith("byte-code: every animik module has its .pyc")


def test_command_process_exits_fast_with_its_code_and_all_its_output(tmp_path):
    # `python -m animik.cli retarget ...` ends through cli.exit_now (no interpreter teardown):
    # the exit code, the table on a pipe and the files are all there
    from rt_helpers import write_test_clip

    clip = write_test_clip(tmp_path / "walk.bvh", frames=30, seed=0)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "animik.cli", "retarget", str(clip), "--to", "fig2", "--out",
           str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith(f"report: {out / 'report.json'}")
    assert (out / "walk.bvh").is_file() and (out / "walk.retarget.json").is_file()
    bad = subprocess.run([*cmd[:4], str(tmp_path / "missing.bvh"), *cmd[5:]],
                         capture_output=True, text=True, check=False, timeout=300)
    assert bad.returncode == 4 and "no such file" in bad.stderr


def test_exit_now_returns_while_another_thread_runs():
    out = _run("""
        import threading, time
        from animik.cli import exit_now
        stop = threading.Event()
        t = threading.Thread(target=stop.wait)
        t.start()
        exit_now(3)  # a non-daemon thread is running: returns, the normal exit waits for it
        print("returned")
        stop.set()
        t.join()
    """)
    assert out.split() == ["returned"]
