"""Batch retargeting of many BVH files: in-process, local processes, or a Dask cluster.

Outputs, per input ``DIR/<stem>.bvh`` (written atomically) and a sidecar
``DIR/<stem>.retarget.json`` (the clip's quality report plus the **settings hash** and the
input's SHA-256), and for the batch ``DIR/report.json``.

**Finished outputs are skipped**: an input counts as done when its BVH and its sidecar exist,
the sidecar says ``"status": "ok"``, and both its settings hash (target skeleton, mapping,
options, animik version) and its input hash match. Content hashes rather than modification
times: copying or checking out files changes times, not contents, and a touched but unchanged
input need not be redone. The sidecar is written after the BVH, so an interrupted run leaves
nothing that looks finished. ``force=True`` redoes everything.

**Failures never stop the batch**: an input that cannot be read, mapped or retargeted is
reported (``"status": "failed"`` with the error) and nothing is written for it.

**Scale-out** (:func:`run_batch`):

* ``jobs=1`` — in this process;
* ``jobs=N`` — a ``ProcessPoolExecutor`` of N processes (:func:`pool_context`: ``fork`` of
  the warmed-up parent on Linux while it runs a single thread, else ``spawn``: from a script,
  call :func:`run_batch` under ``if __name__ == "__main__":``); each process warms up once
  (imports, loads the target, runs a two-frame retarget so that numba loads its on-disk
  compile cache) before taking clips;
* ``scheduler="tcp://host:8786"`` — a Dask ``distributed`` cluster (``pip install
  distributed``). ``transfer="path"``: workers read inputs and write outputs by path (a
  filesystem shared with the client); ``transfer="bytes"``: the client reads each input and
  sends its bytes, the worker returns the BVH bytes and the report, and the client writes the
  files (no shared filesystem needed). Both produce the same files as a local run.
"""

from __future__ import annotations

import gc
import hashlib
import json
import multiprocessing
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import AnimikError, FileFormatError
from ..ik.tuning import fingerprint
from ..io._atomic import atomic_write
from ..io.bvh import loads_bvh
from ..io.gltf import self_contained
from ..io.gltf_character import loads_character
from ..motion import Motion
from ..rigs import load_rig, resolve_rig, rig_from_bytes
from .floor import lift_above_floor
from .mapping import mapping_spec, read_mapping_file
from .output import check_format, encode_clip
from .retarget import Retargeter, RetargetOptions

FORMAT = "animik-retarget"
FORMAT_VERSION = 1
SIDECAR_SUFFIX = ".retarget.json"
REPORT_NAME = "report.json"
BUILTIN_UNIT = "cm"


# ----------------------------------------------------------------------------- target
@dataclass(frozen=True)
class TargetSpec:
    """The target skeleton, in a form that travels to workers.

    Attributes:
        name: a built-in rig name, or the target file's path as given.
        kind: ``"rig"`` (built-in), ``"toml"`` (rig file) or ``"bvh"`` (a BVH's skeleton).
        data: the target file's bytes (``None`` for built-in rigs), so that workers without
            the file can rebuild it and the settings hash covers its content.
    """

    name: str
    kind: str
    data: bytes | None = None

    @classmethod
    def from_arg(cls, spec: str | os.PathLike) -> TargetSpec:
        """A built-in rig name or a rig file path (``.toml``, ``.bvh``...: :func:`resolve_rig`).

        Raises:
            RigNotFoundError: neither. FileFormatError: a malformed file.
        """
        s = os.fspath(spec)
        src = resolve_rig(s)  # validate now: a bad target is a usage error, not N failed clips
        if src.kind == "builtin":
            return cls(s, "rig")
        if src.kind == "gltf":  # its buffer and image files travel inside the bytes
            return cls(s, src.kind, self_contained(src.path))
        return cls(s, src.kind, src.path.read_bytes())

    @property
    def folder(self) -> Path | None:
        """The target file's folder when it exists here (robot meshes, includes), else None."""
        if self.kind == "rig":
            return None
        d = Path(self.name).expanduser().resolve().parent
        return d if d.is_dir() else None

    def skeleton(self):
        """The target skeleton (cached per process), rebuilt from the shipped bytes."""
        key = (self.name, self.kind, hashlib.sha256(self.data or b"").hexdigest())
        hit = _TARGETS.get(key)
        if hit is not None:
            return hit
        if self.kind == "rig":
            skel = load_rig(self.name)
        else:
            folder = self.folder
            name = str(folder / Path(self.name).name) if folder is not None else Path(self.name).name
            skel = rig_from_bytes(self.data or b"", "." + self.kind, name, folder=folder).skeleton
        _TARGETS[key] = skel
        return skel

    def body(self):
        """What a ``.glb`` output carries as its mesh: a glTF character target's own mesh (its
        file's mesh, skin and materials are kept), else True (animik's bone mesh)."""
        if self.kind not in ("glb", "gltf"):
            return True
        key = ("body", self.name, hashlib.sha256(self.data or b"").hexdigest())
        if key not in _TARGETS:
            _TARGETS[key] = loads_character(self.data or b"", source=Path(self.name).name).mesh
        return _TARGETS[key] if _TARGETS[key] is not None else True

    @property
    def unit(self) -> float | str:
        """Output unit: the BVH target's own, else centimetres."""
        if self.kind == "bvh":
            return self.skeleton().meta.get("bvh_unit_scale", 0.01)
        return BUILTIN_UNIT

    def identity(self) -> dict[str, Any]:
        return {"name": Path(self.name).name if self.kind != "rig" else self.name,
                "kind": self.kind, "fingerprint": fingerprint(self.skeleton()),
                "sha256": hashlib.sha256(self.data).hexdigest() if self.data else None}


_TARGETS: dict[tuple, Any] = {}


def settings_hash(target: TargetSpec, mapping: Mapping[str, Any] | None,
                  options: Mapping[str, Any], fmt: str = "bvh") -> str:
    """SHA-256 (16 hex digits) of everything that decides an output but the input itself."""

    content = None if mapping is None else {k: v for k, v in mapping.items() if k != "origin"}
    doc = {"format": FORMAT, "version": FORMAT_VERSION, "animik": __version__,
           "target": target.identity(), "mapping": content,
           "options": RetargetOptions.from_kwargs(**options).to_dict()}
    if fmt != "bvh":  # (BVH batches keep the hash they had before formats existed)
        doc["format_out"] = fmt
    text = json.dumps(doc, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------- one clip
@dataclass(frozen=True)
class ClipTask:
    """One input of a batch (picklable; what a worker needs)."""

    input: str
    output: str
    sidecar: str
    target: TargetSpec
    mapping: Mapping[str, Any] | None
    options: Mapping[str, Any]
    settings: str
    out_format: str = "bvh"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bvh_bytes(name: str, data: bytes) -> Motion:
    """A BVH file given as bytes, read exactly as :func:`animik.io.bvh.read_bvh` reads ``name``
    (same skeleton name, ``meta["source"]`` and error messages)."""
    return loads_bvh(data, source=name, name=Path(name).stem or "bvh")


def retarget_motion(motion, name: str, target: TargetSpec, mapping: Mapping[str, Any] | None,
                    options: Mapping[str, Any], out_format: str = "bvh",
                    timing: dict[str, float] | None = None) -> tuple[bytes, dict[str, Any]]:
    """Retarget one motion; returns the output bytes (``out_format``: see
    :mod:`animik.retarget.output`) and the report dict.

    Args:
        timing: if given, receives the seconds of each phase: ``build`` (mapping, alignment
            and the clip's batched per-frame targets, :attr:`Retargeter.setup_seconds`),
            ``solve`` (the per-frame solves and the report), ``format`` (the BVH text).

    Raises:
        AnimikError: an empty motion, unmappable skeleton, bad options.
    """
    if motion.n_frames == 0:
        raise FileFormatError(f"{name}: the motion has no frames")
    t0 = time.perf_counter()
    rt = Retargeter(motion, target.skeleton(), mapping, **dict(options))
    t1 = time.perf_counter()
    res = rt.run()
    result, lift = lift_above_floor(res.motion)  # robots: heels / toes never below the floor
    t2 = time.perf_counter()
    if out_format == "glb":  # a glTF character target keeps its mesh, skin and materials
        result = result.replace(meta={**result.meta, "clip": Path(name).stem})
    out, extra = encode_clip(result, out_format, target.unit, mesh=target.body())
    if timing is not None:
        timing.update(build=t1 - t0, solve=t2 - t1, format=time.perf_counter() - t2)
    rep = res.report.to_dict()
    rep["floor_lift_cm"] = round(100 * lift, 3)
    rep.update(extra)
    return out, rep


def retarget_bytes(name: str, data: bytes, target: TargetSpec, mapping: Mapping[str, Any] | None,
                   options: Mapping[str, Any], out_format: str = "bvh"
                   ) -> tuple[bytes, dict[str, Any]]:
    """Retarget one BVH file given as bytes; returns the output BVH bytes and the report dict.

    Raises:
        AnimikError: malformed input, unmappable skeleton, bad options.
    """
    return retarget_motion(read_bvh_bytes(name, data), name, target, mapping, options, out_format)


def _summary(task_input: str, output: str, status: str, settings: str, input_sha: str | None,
             report: dict | None = None, error: BaseException | None = None,
             seconds: float = 0.0, phases: Mapping[str, float] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"input": task_input, "output": output, "status": status,
                           "settings_hash": settings, "input_sha256": input_sha,
                           "seconds": round(seconds, 4), "report": report}
    if phases:
        out["phases_s"] = {k: round(v, 5) for k, v in phases.items()}
        out["pid"] = os.getpid()
    if error is not None:
        out["error"] = f"{type(error).__name__}: {error}"
        if not isinstance(error, (AnimikError, OSError)):
            out["traceback"] = "".join(traceback.format_exception(error))[-4000:]
    return out


def _sidecar_doc(summary: Mapping[str, Any]) -> str:
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, **summary}
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def run_clip(task: ClipTask) -> dict[str, Any]:
    """Path transfer: read ``task.input``, write the output BVH and its sidecar; never raises
    for a bad input (returns a ``"failed"`` summary)."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    sha = None
    try:
        data = Path(task.input).read_bytes()
        sha = _sha256(data)
        motion = read_bvh_bytes(task.input, data)
        phases = {"read": time.perf_counter() - t0}
        out, rep = retarget_motion(motion, task.input, task.target, task.mapping, task.options,
                                   task.out_format, phases)
        t1 = time.perf_counter()
        atomic_write(task.output, out)
        phases["write"] = time.perf_counter() - t1  # the sidecar's own write is not counted
        phases["cpu"] = time.process_time() - c0  # this process's CPU seconds for the clip
        summary = _summary(task.input, task.output, "ok", task.settings, sha, rep,
                           seconds=time.perf_counter() - t0, phases=phases)
        atomic_write(task.sidecar, _sidecar_doc(summary))
        return summary
    except Exception as e:  # noqa: BLE001 - a failed clip is a result, not a crash of the batch
        return _summary(task.input, task.output, "failed", task.settings, sha, error=e,
                        seconds=time.perf_counter() - t0)


def run_clip_data(task: ClipTask, data: bytes) -> tuple[bytes | None, dict[str, Any]]:
    """Bytes transfer: the worker side; returns ``(BVH bytes or None, summary)``."""
    t0 = time.perf_counter()
    sha = _sha256(data)
    try:
        out, rep = retarget_bytes(task.input, data, task.target, task.mapping, task.options,
                                  task.out_format)
        return out, _summary(task.input, task.output, "ok", task.settings, sha, rep,
                             seconds=time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001
        return None, _summary(task.input, task.output, "failed", task.settings, sha, error=e,
                              seconds=time.perf_counter() - t0)


def warm_up(target: TargetSpec | None = None) -> bool:
    """Import and run a tiny retarget so that numba loads its compiled kernels (per process)."""
    skel = target.skeleton() if target is not None else load_rig("fig2")
    src = load_rig("fig2")
    q = np.tile(src.rest_q, (2, 1))
    Retargeter(Motion(src, q, 30.0), skel, iterations=1, first_iterations=2).run()
    return True


def finished(task: ClipTask) -> dict[str, Any] | None:
    """The sidecar summary if ``task`` is already done with the same settings and input."""
    out, side = Path(task.output), Path(task.sidecar)
    if not (out.is_file() and side.is_file()):
        return None
    try:
        doc = json.loads(side.read_text(encoding="utf-8"))
        sha = _sha256(Path(task.input).read_bytes())
    except (OSError, ValueError):
        return None
    if doc.get("status") != "ok" or doc.get("settings_hash") != task.settings \
            or doc.get("input_sha256") != sha:
        return None
    doc = {k: v for k, v in doc.items() if k not in ("format", "format_version")}
    doc["status"] = "skipped"
    return doc


# ----------------------------------------------------------------------------- the batch
@dataclass
class BatchResult:
    """Outcome of :func:`run_batch`.

    Attributes:
        clips: one summary dict per input (``status`` ``ok`` / ``skipped`` / ``failed``).
        settings_hash, out_dir, report_path: as written to ``report.json``.
        seconds: wall time; ``frames``: frames retargeted in this run (skips excluded).
    """

    clips: list[dict[str, Any]]
    settings_hash: str
    out_dir: Path
    report_path: Path
    seconds: float = 0.0
    frames: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(1 for c in self.clips if c["status"] == status)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [c for c in self.clips if c["status"] == "failed"]

    def hard_goals_met(self) -> bool:
        """Every done clip is finite and within the joint limits."""
        for c in self.clips:
            rep = c.get("report") or {}
            if c["status"] != "failed" and not (rep.get("finite", True)
                                                and rep.get("limit_violations", 0) == 0):
                return False
        return True

    def quality_goals_met(self) -> bool:
        return all((c.get("report") or {}).get("goals_met", True) for c in self.clips
                   if c["status"] != "failed")


def expand_inputs(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Files as given; a directory contributes its ``*.bvh`` files (recursively, sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*") if x.suffix.lower() == ".bvh" and x.is_file()))
        else:
            out.append(p)
    return out


def plan_tasks(inputs: Sequence[Path], out_dir: Path, target: TargetSpec,
               mapping: Mapping[str, Any] | None, options: Mapping[str, Any], settings: str,
               out_format: str = "bvh") -> tuple[list[ClipTask], list[dict[str, Any]]]:
    """Tasks per input, and failed summaries for inputs whose output name is already taken."""
    tasks, clashes = [], []
    used: dict[str, str] = {}
    for p in inputs:
        stem = p.stem
        key = stem.lower()
        out = out_dir / f"{stem}.{out_format}"
        if key in used:
            clashes.append(_summary(str(p), str(out), "failed", settings, None,
                                    error=FileFormatError(f"output name {out.name!r} is already "
                                                          f"used by {used[key]!r}; rename one")))
            continue
        used[key] = str(p)
        tasks.append(ClipTask(str(p), str(out), str(out_dir / f"{stem}{SIDECAR_SUFFIX}"), target,
                              mapping, dict(options), settings, out_format))
    return tasks, clashes


def run_batch(inputs: Sequence[str | os.PathLike], target: str | os.PathLike | TargetSpec,
              out_dir: str | os.PathLike, mapping: str | os.PathLike | Mapping | None = None,
              options: Mapping[str, Any] | None = None, jobs: int = 1,
              scheduler: str | Any | None = None, transfer: str = "path", force: bool = False,
              progress: bool = True, executor: Executor | None = None, stream=None,
              out_format: str = "bvh") -> BatchResult:
    """Retarget BVH files into ``out_dir`` (see the module docstring).

    Args:
        inputs: BVH files and/or directories of them.
        target: built-in rig name, ``.toml`` rig or ``.bvh`` file, or a :class:`TargetSpec`.
        out_dir: output folder (created).
        mapping: mapping file path or its content (:func:`~animik.retarget.mapping.read_mapping_file`).
        options: :class:`~animik.retarget.retarget.RetargetOptions` fields.
        jobs: local worker processes (1: this process).
        scheduler: a Dask scheduler address (``"tcp://host:8786"``) or a ``distributed.Client``.
        transfer: ``"path"`` or ``"bytes"`` (Dask only; local processes always use paths).
        force: redo finished outputs.
        progress: show a tqdm progress bar on ``stream`` (default stderr).
        executor: use this ``concurrent.futures`` executor instead of creating a pool.
        out_format: ``bvh``, ``glb``, ``npz`` or ``csv`` (:mod:`animik.retarget.output`).

    Returns:
        :class:`BatchResult` (also written to ``out_dir/report.json``).

    Raises:
        RigNotFoundError / FileFormatError / FileNotFoundError: a bad target or mapping.
        ValueError: bad ``jobs`` or ``transfer``.
    """

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if transfer not in ("path", "bytes"):
        raise ValueError(f"transfer must be 'path' or 'bytes', got {transfer!r}")
    out_format = check_format(out_format)
    t_start = time.perf_counter()
    spec = target if isinstance(target, TargetSpec) else TargetSpec.from_arg(target)
    if mapping is not None and not isinstance(mapping, Mapping):
        mapping_doc: dict[str, Any] | None = read_mapping_file(mapping).to_dict()
    elif mapping is not None:
        mapping_doc = mapping_spec(mapping).to_dict()
    else:
        mapping_doc = None
    options = dict(options or {})
    RetargetOptions.from_kwargs(**options)  # validate before starting workers
    settings = settings_hash(spec, mapping_doc, options, out_format)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = expand_inputs(inputs)
    tasks, results = plan_tasks(files, out, spec, mapping_doc, options, settings, out_format)
    todo = []
    for t in tasks:
        done = None if force else finished(t)
        if done is not None:
            results.append(done)
        else:
            todo.append(t)
    pool = pool_kind = None
    t_warm = time.perf_counter()
    if todo and scheduler is None and executor is None and jobs > 1 and len(todo) > 1:
        # started before the progress bar: a forked pool needs a parent without threads
        pool_kind = pool_context().get_start_method()
        pool = start_pool(min(jobs, len(todo)), spec)
    elif todo and scheduler is None and executor is None:
        warm_up(spec)  # so that the first clip's timing is like the others'
    warm_s = time.perf_counter() - t_warm
    bar = _progress(len(files), progress, stream)
    bar.update(len(results))
    try:
        if todo:
            if scheduler is not None:
                results += _run_dask(todo, scheduler, transfer, bar)
            elif executor is not None:
                results += _run_pool(todo, executor, bar)
            elif pool is not None:
                with pool:
                    # longest first: the last clips to finish are short ones (better balance)
                    results += _run_pool(sorted(todo, key=lambda t: -_size(t.input)), pool, bar)
            else:
                for t in todo:
                    r = run_clip(t)
                    results.append(r)
                    _tick(bar, r)
    finally:
        bar.close()
    order = {str(p): i for i, p in enumerate(files)}
    results.sort(key=lambda r: order.get(r["input"], len(order)))
    seconds = time.perf_counter() - t_start
    frames = sum((r.get("report") or {}).get("frames", 0) for r in results if r["status"] == "ok")
    result = BatchResult(results, settings, out, out / REPORT_NAME, seconds, frames,
                         meta={"target": spec.name, "jobs": jobs, "scheduler": _sched_name(scheduler),
                               "transfer": transfer if scheduler is not None else "path",
                               "pool": pool_kind,
                               "warm_up_s": round(warm_s, 4)})
    doc = {"format": FORMAT + "-batch", "format_version": FORMAT_VERSION,
           "target": spec.name, "settings_hash": settings, "options": options,
           "mapping": mapping_doc, **result.meta, "seconds": round(seconds, 3),
           "frames_retargeted": frames,
           # this process: its id and CPU seconds so far (imports and warm-up included)
           "pid": os.getpid(), "process_cpu_s": round(time.process_time(), 4),
           "counts": {s: result.count(s) for s in ("ok", "skipped", "failed")},
           "clips": results}
    atomic_write(result.report_path, json.dumps(doc, indent=2) + "\n")
    return result


def _sched_name(scheduler: Any) -> str | None:
    if scheduler is None or isinstance(scheduler, str):
        return scheduler
    return getattr(getattr(scheduler, "scheduler", None), "address", None) or repr(scheduler)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool, stream):
    if not enabled:
        return _NoBar()
    from tqdm import tqdm  # only with a progress bar (-q runs need not import it)

    return tqdm(total=total, desc="retarget", unit="clip", file=stream or sys.stderr,
                dynamic_ncols=True, mininterval=0.2)


def _tick(bar, r: Mapping[str, Any]) -> None:
    bar.update(1)
    bar.set_postfix_str(f"{Path(r['input']).name}: {r['status']}")


def _run_pool(todo: list[ClipTask], ex: Executor, bar) -> list[dict[str, Any]]:
    futs = {ex.submit(run_clip, t): t for t in todo}
    out = []
    for f in as_completed(futs):
        t = futs[f]
        try:
            r = f.result()
        except Exception as e:  # noqa: BLE001 - a dead worker fails its clip only
            r = _summary(t.input, t.output, "failed", t.settings, None, error=e)
        out.append(r)
        _tick(bar, r)
    return out


def _worker_init(parent_pid: int, spec: TargetSpec, warm: bool = True) -> None:
    """Pool worker set-up: exit as soon as the parent dies (a SIGKILLed ``animik retarget``
    must not leave workers holding its stderr pipe open for good), then warm up (``warm``:
    not needed in a process forked from a warmed-up parent)."""
    watch_parent(parent_pid)
    if warm:
        warm_up(spec)


def watch_parent(parent_pid: int, period_s: float = 0.5) -> threading.Thread:
    """Start a daemon thread that ends this process (``os._exit``) once ``parent_pid`` is no
    longer its parent: the parent died and the process was re-parented. Polling works on every
    POSIX system and, unlike ``PR_SET_PDEATHSIG``, does not depend on which parent thread
    started the process."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(period_s)
        os._exit(1)

    t = threading.Thread(target=watch, name="animik-parent-watch", daemon=True)
    t.start()
    return t


def pool_context() -> multiprocessing.context.BaseContext:
    """The start method of local worker processes: ``fork`` where it is safe and cheap, else
    ``spawn``.

    A spawned worker imports animik and loads numba's compiled kernels again (about a second
    of CPU each, as much as retargeting a few thousand frames); a forked one inherits them from
    the warmed-up parent for a few milliseconds. Fork is used only on Linux and only while the
    parent runs a single Python thread (forking a process with other threads can inherit a
    lock held by one of them); otherwise ``spawn``.
    """
    if sys.platform.startswith("linux") and threading.active_count() == 1 \
            and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def start_pool(jobs: int, spec: TargetSpec) -> ProcessPoolExecutor:
    """A pool of ``jobs`` local worker processes for :func:`run_clip` (:func:`pool_context`;
    a forked pool is warmed up in the parent first, so that every worker inherits the loaded
    kernels and the target skeleton, and the parent's heap is ``gc.freeze()``-d so that the
    workers' garbage collections leave the shared pages alone)."""
    ctx = pool_context()
    forked = ctx.get_start_method() == "fork"
    if forked:
        # A spawned pool runs multiprocessing's resource tracker beside its workers; a forked
        # one needs none (its semaphores are unlinked at once) but starts it all the same, so
        # that both kinds of pool leave the same process tree (tests/retarget/
        # test_batch_orphans.py watches it); it exits with the parent (end of its pipe). Started
        # before the warm-up: its interpreter start (~30 ms of CPU) then runs on the core the
        # parent's warm-up leaves idle rather than beside the workers.
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
        warm_up(spec)
    if forked:
        # Everything the parent holds now (modules, numba's dispatchers, the warmed-up caches)
        # lives on in every worker; frozen out of the garbage collector's generations, a
        # worker's collections no longer walk it, and walking it touched (copied on write)
        # the pages it shares with the parent: ~0.1 s of CPU per worker (gc.freeze's own
        # advice for forking servers).
        gc.freeze()
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init,
                               initargs=(os.getpid(), spec, not forked))
    pool.submit(int)  # a forking pool starts every worker now, before the caller starts threads
    return pool


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _run_dask(todo: list[ClipTask], scheduler: Any, transfer: str, bar) -> list[dict[str, Any]]:
    try:  # an optional dependency (the `dask` extra): imported only when a scheduler is given
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("--scheduler needs Dask distributed: pip install 'distributed>=2024.1'") \
            from e

    own = isinstance(scheduler, str)
    client = Client(scheduler, timeout="30s") if own else scheduler
    try:
        client.run(warm_up, todo[0].target)
        order = sorted(todo, key=lambda t: -_size(t.input))
        futs = {}
        out: list[dict[str, Any]] = []
        for t in order:
            if transfer == "path":
                futs[client.submit(run_clip, t, pure=False)] = t
                continue
            try:
                data = Path(t.input).read_bytes()
            except OSError as e:
                r = _summary(t.input, t.output, "failed", t.settings, None, error=e)
                out.append(r)
                _tick(bar, r)
                continue
            futs[client.submit(run_clip_data, t, data, pure=False)] = t
        for f in dask_completed(list(futs)):
            t = futs[f]
            try:
                res = f.result()
            except Exception as e:  # noqa: BLE001 - a lost worker fails its clip only
                r = _summary(t.input, t.output, "failed", t.settings, None, error=e)
            else:
                if transfer == "path":
                    r = res
                else:
                    data_out, r = res
                    if data_out is not None:
                        try:
                            atomic_write(t.output, data_out)
                            atomic_write(t.sidecar, _sidecar_doc(r))
                        except OSError as e:
                            r = _summary(t.input, t.output, "failed", t.settings,
                                         r.get("input_sha256"), error=e)
            out.append(r)
            _tick(bar, r)
        return out
    finally:
        if own:
            client.close()

