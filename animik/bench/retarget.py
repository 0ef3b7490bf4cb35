"""``animik bench retarget``: retargeting speed (frames per second per core), quality, scaling.

1. **Speed, one core.** Every BVH file of ``--data`` (default ``../shared/data/bvh``) is read
   once (not timed), then ``Retargeter(motion, rig).run()`` is timed with
   ``time.perf_counter`` — everything a retarget does: mapping, rest alignment, the batched
   preparation (source FK over all frames, desired rotations, reference poses, contacts) and
   the per-frame FIK solves — after one untimed warm-up retarget per rig (numba compile/cache
   load). Frames/s = frames / time, per rig over all clips and per clip.
2. **Quality**: the report of every clip (effector errors, foot skate, penetration, limit
   violations, frames not converged).
3. **Scaling** (``--jobs 1,2``): :func:`animik.retarget.batch.run_batch` on ``--repeat`` copies
   of the data set (so that a few long clips do not decide the balance) into temporary
   folders, with a pre-started and warmed-up process pool (the pool start is reported
   separately: it is paid once per batch). Speed-up = time(jobs=1) / time(jobs=N). The machine
   may be shared or throttled: the table also shows the speed-up a pure-Python CPU loop gets
   on as many processes at the same moment ("machine speed-up"), to read the result against.

4. **The whole command as users run it** (printed right after 1.; ``--command-jobs``,
   default 2): ``animik retarget DATA --to RIG --out TMP --jobs N -q`` run
   ``--command-repeat`` times (default 3) in a subprocess, timed from launch to exit:
   interpreter start, imports, numba cache load, the worker pool, reading, retargeting,
   writing, everything. Reported: the median wall time, frames/s and frames/s per core
   (÷ min(N, CPUs)), the CPU seconds of the command and its workers, next to the inner-loop
   figure of 1. for the same rig, the CPU critical path (the parent's CPU seconds, start-up
   included, plus the busiest worker's: what the wall time is on an idle machine, for reading
   the result on a shared one), and a breakdown of the median run from its
   ``report.json``: start-up (wall time outside the batch, plus the warm-up / pool start),
   and per phase summed over the clips (seconds of the worker processes): read, build
   (mapping, alignment, the batched per-frame targets), solve (the per-frame FIK solves),
   format (BVH text) and write. Before timing, animik's modules are compiled to ``.pyc``
   (:func:`ensure_bytecode`; the table says whether it was needed): with
   ``PYTHONDONTWRITEBYTECODE`` set an editable install would otherwise compile all of animik
   at every start, which no user's installed copy does.

Benchmarks print tables; they never fail on speed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from .. import _cli_args as _args
from .._table import format_table
from ..errors import AnimikError
from ..io.bvh import read_bvh
from ..retarget import Retargeter
from ..retarget.batch import TargetSpec, run_batch, warm_up
from ..retarget.report import report_rows

DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "bvh"


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench retarget``."""
    p = subparsers.add_parser(
        "retarget", help="retargeting frames/s per core, quality table, --jobs scaling",
        description="Retarget every BVH of a folder onto rigs: frames per second per core, the "
                    "quality report of each clip, and the speed-up of local worker processes.")
    p.add_argument("--data", default=str(DEFAULT_DATA), metavar="DIR",
                   help="folder of BVH files (default ../shared/data/bvh)")
    p.add_argument("--rigs", default="body95,fig2,biped12", help="comma-separated targets")
    p.add_argument("--jobs", default="1,2", help="worker counts for the scaling test ('' skips it)")
    p.add_argument("--repeat", type=_args.count, default=3, metavar="N",
                   help="copies of the data set in the scaling test (default 3)")
    p.add_argument("--scaling-rig", default="body95", help="rig of the scaling test")
    p.add_argument("--no-quality", action="store_true", help="skip the per-clip quality table")
    p.add_argument("--command-jobs", default="2",
                   help="--jobs of the whole-command timing (comma-separated; '' skips it)")
    p.add_argument("--command-repeat", type=_args.count, default=3, metavar="N",
                   help="runs of the whole command per setting (median reported; default 3)")
    p.add_argument("--command-rigs", default=None,
                   help="rigs of the whole-command timing (default: --scaling-rig)")
    p.set_defaults(func=run_cli)
    return p


def _files(data: str) -> list[Path]:
    root = Path(data)
    if not root.is_dir():
        raise AnimikError(f"--data {data!r} is not a folder of BVH files")
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() == ".bvh")
    if not files:
        raise AnimikError(f"no .bvh file under {data!r}")
    return files


def speed_and_quality(files: list[Path], rigs: list[str]):
    """``(speed rows, quality rows)`` of single-process retargets."""
    motions = [(f, read_bvh(f)) for f in files]
    speed, quality = [], []
    for rig in rigs:
        Retargeter(motions[0][1], rig).run()  # warm-up (numba cache, rig load)
        frames = 0
        total = 0.0
        prep_total = 0.0
        iters = 0.0
        for f, m in motions:
            t0 = time.perf_counter()
            rt = Retargeter(m, rig)
            t1 = time.perf_counter()
            res = rt.run()
            t2 = time.perf_counter()
            frames += m.n_frames
            total += t2 - t0
            prep_total += t1 - t0
            iters += res.report.mean_iterations * m.n_frames
            quality.append((rig, f.name, res.report, t2 - t0))
        speed.append((rig, len(motions), frames, round(total, 3), round(frames / total),
                      round(100.0 * prep_total / total, 1), round(iters / frames, 2)))
    return speed, quality


def scaling(files: list[Path], rig: str, jobs_list: list[int], repeat: int) -> list[tuple]:
    """Wall times of :func:`run_batch` for each worker count, on ``repeat`` copies of the data."""

    rows = []
    spec = TargetSpec.from_arg(rig)
    with tempfile.TemporaryDirectory(prefix="animik-bench-") as tmp:
        src = Path(tmp) / "in"
        src.mkdir()
        for k in range(repeat):
            for f in files:
                shutil.copyfile(f, src / f"{f.stem}-{k}{f.suffix}")
        n_files = len(list(src.iterdir()))
        base = None
        for jobs in jobs_list:
            out = Path(tmp) / f"out{jobs}"
            if jobs == 1:
                warm_up(spec)
                t_start = 0.0
                t0 = time.perf_counter()
                res = run_batch([src], spec, out, jobs=1, progress=False, force=True)
                wall = time.perf_counter() - t0
            else:
                ctx = multiprocessing.get_context("spawn")
                t0 = time.perf_counter()
                with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=warm_up,
                                         initargs=(spec,)) as ex:
                    # make every worker start and warm up before timing
                    list(ex.map(_noop, range(jobs), chunksize=1))
                    t_start = time.perf_counter() - t0
                    t1 = time.perf_counter()
                    res = run_batch([src], spec, out, progress=False, force=True, executor=ex)
                    wall = time.perf_counter() - t1
            frames = res.frames
            if base is None:
                base = wall
            rows.append((rig, jobs, n_files, frames, round(t_start, 2), round(wall, 2),
                         round(frames / wall), round(base / wall, 2), res.count("failed")))
    return rows


PHASES = ("read", "build", "solve", "format", "write")


def command_line(data: str, rig: str, out: str, jobs: int) -> list[str]:
    """The ``animik retarget`` command the whole-command timing runs (as a user would)."""
    return [sys.executable, "-m", "animik.cli", "retarget", str(data), "--to", rig, "--out", out,
            "--jobs", str(jobs), "-q"]


def ensure_bytecode() -> str:
    """Compile animik's modules into their ``__pycache__`` (``compileall``: new or stale
    ``.pyc`` only) so that the timed command imports them as an installed copy does, and say
    so. With ``PYTHONDONTWRITEBYTECODE`` set (some sandboxes and CI set it) an editable
    install never writes them and every start compiles all of animik from source (~0.2–0.3 s
    of CPU, a third of the start-up) — a cost users, whose first run writes the ``.pyc``, do
    not pay."""
    import compileall
    import importlib.util

    pkg = Path(__file__).resolve().parents[1]
    sources = [p for p in pkg.rglob("*.py") if "__pycache__" not in p.parts]

    def fresh(p: Path) -> bool:
        c = Path(importlib.util.cache_from_source(str(p)))
        return c.is_file() and c.stat().st_mtime >= p.stat().st_mtime

    stale = sum(not fresh(p) for p in sources)
    flag = " (PYTHONDONTWRITEBYTECODE is set here)" if os.environ.get("PYTHONDONTWRITEBYTECODE") \
        else ""
    if stale:
        try:
            compileall.compile_dir(str(pkg), quiet=2)
        except OSError as e:  # pragma: no cover - a read-only install
            return f"byte-code: {stale} of {len(sources)} animik modules have no .pyc and " \
                   f"cannot be compiled ({e}): the command compiles them at every start{flag}"
        left = sum(not fresh(p) for p in sources)
        return (f"byte-code: compiled {stale - left} of {len(sources)} animik modules to .pyc "
                f"before timing{flag}, as a normal install has them")
    return f"byte-code: every animik module has its .pyc{flag}"


def whole_command(data: str, rig: str, jobs: int, repeat: int) -> dict:
    """Time ``animik retarget`` as users run it, ``repeat`` times in a subprocess.

    Returns:
        ``{"runs": [...], "median": run}``; each run: ``wall`` (s, launch to exit), ``cpu``
        (user + system seconds of the command and its workers), ``frames``, ``batch`` (the
        batch's own seconds), ``warm_up`` (warm-up / pool start inside it), ``phases``
        (seconds per phase summed over clips), ``failed``, ``load`` (1-min load average
        before the run).

    Raises:
        AnimikError: the command failed (exit code other than 0 and 5) or wrote no report.
    """
    runs = []
    env = dict(os.environ)
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="animik-bench-cmd-") as tmp:
            out = str(Path(tmp) / "out")
            cmd = command_line(data, rig, out, jobs)
            load = os.getloadavg()[0]
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  env=env, check=False)
            wall = time.perf_counter() - t0
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            report = Path(out) / "report.json"
            if proc.returncode not in (0, 5) or not report.is_file():
                raise AnimikError(f"{' '.join(cmd)} exited {proc.returncode}: "
                                  f"{proc.stderr.decode(errors='replace')[-2000:]}")
            doc = json.loads(report.read_text(encoding="utf-8"))
        phases = dict.fromkeys(PHASES, 0.0)
        per_pid: dict[int, float] = {}
        for c in doc["clips"]:
            ph = dict(c.get("phases_s") or {})
            cpu = ph.pop("cpu", 0.0)
            if c.get("pid") is not None and c["pid"] != doc.get("pid"):
                per_pid[c["pid"]] = per_pid.get(c["pid"], 0.0) + cpu
            for k, v in ph.items():
                phases[k] = phases.get(k, 0.0) + v
        # the command's wall time on an idle machine: the parent's CPU (start-up, warm-up and
        # in-process clips) then the busiest worker's CPU (I/O waits left out)
        critical = float(doc.get("process_cpu_s", 0.0)) + max(per_pid.values(), default=0.0)
        runs.append({"wall": wall, "frames": int(doc["frames_retargeted"]),
                     "cpu": (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime),
                     "batch": float(doc["seconds"]), "warm_up": float(doc.get("warm_up_s", 0.0)),
                     "pool": doc.get("pool"), "phases": phases,
                     "failed": doc["counts"]["failed"], "load": load, "command": cmd,
                     "critical": critical})
    walls = [r["wall"] for r in runs]
    med = runs[walls.index(statistics.median_low(walls))]
    return {"runs": runs, "median": med}


def command_rows(rig: str, jobs: int, timing: dict, inner: float | None) -> tuple[list, list]:
    """The whole-command table row and the breakdown rows of the median run."""
    med = timing["median"]
    cores = max(1, min(jobs, os.cpu_count() or 1))
    walls = sorted(r["wall"] for r in timing["runs"])
    fps = med["frames"] / med["wall"]
    crit = statistics.median(r["critical"] for r in timing["runs"])
    row = (rig, jobs, med["pool"] or "-", len(timing["runs"]), med["frames"],
           round(med["wall"], 2), f"{walls[0]:.2f}-{walls[-1]:.2f}", round(fps),
           round(fps / cores), round(med["cpu"], 2),
           round(1e6 * med["cpu"] / med["frames"]) if med["frames"] else "-", round(crit, 2),
           round(med["frames"] / crit / cores) if crit > 0 else "-",
           round(inner) if inner else "-", round(inner / (fps / cores), 2) if inner else "-",
           round(med["load"], 2))
    frames = max(med["frames"], 1)
    startup = med["wall"] - med["batch"] + med["warm_up"]
    parts = [("start-up: interpreter, imports, arguments, output (wall)",
              med["wall"] - med["batch"]),
             (f"start-up: warm-up / pool start ({med['pool'] or 'in process'}) (wall)",
              med["warm_up"])]
    names = {"read": "read (bytes, SHA-256, parse)",
             "build": "build (mapping, alignment, batched per-frame targets)",
             "solve": "solve (per-frame FIK, report)", "format": "format (BVH text)",
             "write": "write (atomic file)"}
    parts += [(f"{names.get(k, k)} (summed over clips)", v) for k, v in med["phases"].items()]
    total = sum(sec for _, sec in parts)
    rows = [(name, round(sec, 3), round(1e6 * sec / frames),
             round(100 * sec / total, 1) if total > 0 else "-") for name, sec in parts]
    rows.append(("total start-up (wall)", round(startup, 3), round(1e6 * startup / frames), "-"))
    return [row], rows


def _noop(i: int) -> int:
    time.sleep(0.05)
    return i


def _spin(n: int) -> int:
    s = 0
    for i in range(n):
        s += i * i
    return s


def raw_scaling(jobs: int, n: int = 5_000_000) -> float:
    """Speed-up of a pure-Python CPU loop on ``jobs`` processes: what the machine gives now
    (a shared or throttled VM can give far less than its CPU count)."""
    if jobs <= 1:
        return 1.0
    t0 = time.perf_counter()
    for _ in range(jobs):
        _spin(n)
    serial = time.perf_counter() - t0
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as ex:
        list(ex.map(_spin, [10] * jobs))
        t0 = time.perf_counter()
        list(ex.map(_spin, [n] * jobs))
        parallel = time.perf_counter() - t0
    return serial / parallel


def run_cli(args: argparse.Namespace) -> int:
    files = _files(args.data)
    rigs = [r.strip() for r in args.rigs.split(",") if r.strip()]
    cpu = platform.processor() or platform.machine()
    print(f"animik bench retarget: {len(files)} clips from {args.data} ({cpu}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()})\n")
    speed, quality = speed_and_quality(files, rigs)
    print(format_table(["rig", "clips", "frames", "time s", "frames/s (1 core)", "prep %",
                        "FIK it/frame"], speed,
                       title="1. speed, one process (mapping + preparation + per-frame FIK; "
                             "the inner loop: no start-up, reading or writing)"))
    cmd_jobs = [int(j) for j in args.command_jobs.split(",") if j.strip()]
    cmd_rigs = [r.strip() for r in (args.command_rigs or args.scaling_rig).split(",")
                if r.strip()]
    if cmd_jobs:
        inner = {r[0]: r[4] for r in speed}
        table, breakdown = [], []
        bytecode = ensure_bytecode()
        for rig in cmd_rigs:
            for jobs in cmd_jobs:
                timing = whole_command(args.data, rig, jobs, args.command_repeat)
                row, parts = command_rows(rig, jobs, timing, inner.get(rig))
                table += row
                breakdown.append((rig, jobs, timing, parts))
        print()
        print(format_table(["rig", "jobs", "pool", "runs", "frames", "wall s (median)",
                            "wall s range", "frames/s", "frames/s/core", "CPU s",
                            "CPU us/frame",
                            "CPU critical path s", "frames/s/core idle machine",
                            "inner loop frames/s (1.)", "inner / command per core",
                            "load (1 min)"], table,
                           title="4. the whole command as users run it (median of the runs; "
                                 "per core = ÷ min(jobs, CPUs); CPU s = user + system of the "
                                 "command and its workers; CPU critical path = the parent's CPU "
                                 "s + the busiest worker's: the wall time on an idle machine, "
                                 "I/O waits left out — read it when the load is high)"))
        print(f"   {bytecode}")
        for rig, jobs, timing, parts in breakdown:
            cmd = timing["median"]["command"]
            print("   command: animik " + " ".join("TMP" if i == len(cmd) - 4 else a
                                                    for i, a in enumerate(cmd) if i >= 3))
            print(format_table(["phase", "seconds", "us/frame", "% of the parts"], parts,
                               title=f"   breakdown of the median run onto {rig}, --jobs {jobs} "
                                     "(phases summed over clips are worker seconds: with N "
                                     "workers they overlap)"))
    if not args.no_quality:
        for rig in rigs:
            items = [(name, rep, "ok") for r, name, rep, _ in quality if r == rig]
            headers, rows = report_rows(items)
            print()
            print(format_table(headers, rows, title=f"2. quality onto {rig}: mean errors against "
                                                    "the retarget targets, max skate per "
                                                    "contact, penetration (cm)"))
    jobs_list = [int(j) for j in args.jobs.split(",") if j.strip()]
    if jobs_list:
        rows = scaling(files, args.scaling_rig, jobs_list, max(args.repeat, 1))
        rows = [(*r, round(raw_scaling(r[1]), 2)) for r in rows]
        print()
        print(format_table(["rig", "jobs", "clips", "frames", "pool start s", "wall s",
                            "frames/s", "speed-up", "failed", "machine speed-up"], rows,
                           title="3. scaling: run_batch (read, retarget, write BVH + reports), "
                                 "warm pool; 'machine speed-up' = a pure-Python CPU loop on "
                                 "as many processes, measured right after"))
        print(f"   load average (1 min) after the test: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0
