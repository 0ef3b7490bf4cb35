"""Long edits off the UI thread: a worker thread with a progress callback, polled every frame.

A :class:`Task` runs ``work(progress)`` in a daemon thread; ``progress(fraction, message)``
records how far it got and raises :class:`Cancelled` once :meth:`Task.cancel` was called, so
the work stops at its next report. The document is never touched from the worker: when the
task has finished, :meth:`TaskRunner.poll` (called by the app at the start of each frame, on
the UI thread) hands the result to ``apply(result)``, which changes the document as one undo
step. An error in the work goes to ``fail(exception)`` (the app's error banner). One task runs
at a time; the UI shows its label, a progress bar and a Cancel button
(:mod:`animik.app.ui.task_bar`).

:meth:`TaskRunner.start_process` runs a long numeric job in a **worker process** instead
(:class:`ProcessTask`: a fresh ``python -c`` that imports this module, so, unlike
multiprocessing's ``spawn``, the app's main script is never run again in it). A job that holds
the interpreter (numba kernels, Python loops) in a thread slows the window's drawing; in a
process it does not, it runs at a lower priority (:data:`WORKER_NICE`), and Cancel ends the
process at once instead of at the job's next report. The job is a module-level function
``fn(*args, progress=...)``; it goes to the worker, and its reports, its result or its error
(pickled; an error that does not pickle arrives as a :class:`WorkerError` with its text) come
back, as ``multiprocessing.connection`` messages over two pipes, written and read by a small
thread of this process that blocks on them (it holds the interpreter only to pickle and store).
A worker that dies without an answer is a :class:`WorkerError`, never a hang.

No GL or GUI import here: tests drive the runner headless.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from types import MappingProxyType
from typing import Any

from ..errors import AnimikError

#: the worker's niceness increment: on a busy machine the window's drawing gets the CPU a little
#: before it (a nice-2 process has ~2/3 of a nice-0 one's share). It was 10: with five other
#: jobs' processes on the 2-core machine (load 13-19) Make feasible's worker got 6 % of a CPU
#: (17 s in 300 s; the CLI needs ~45 s) and reached 5 % of louise in 5 min while the window,
#: drawing every tick for the progress bar, ran at 29 fps. The window now draws a running
#: task's bar at pacing.TASK_FPS, so it needs far less of the CPU it was protected for.
WORKER_NICE = 2


def _mappingproxy(d: dict) -> MappingProxyType:
    return MappingProxyType(d)


# animik's immutable data (a Skeleton's meta, a Clip's meta) holds read-only mappings, which
# pickle does not know; for the worker pipe only, they travel as dicts and are frozen again
ForkingPickler.register(MappingProxyType, lambda m: (_mappingproxy, (dict(m),)))


class Cancelled(AnimikError):
    """The task was cancelled (raised inside the work by its progress callback)."""


class WorkerError(AnimikError):
    """A worker process failed: its error could not be sent back as itself, or it exited
    without an answer (killed, crashed). ``details``: the worker's traceback, if any."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


Progress = Callable[..., None]  # progress(fraction in [0, 1], message: str | None = None)


@dataclass(eq=False)
class Task:
    """One background task.

    Attributes:
        label: what it does ("Import walk.bvh").
        progress: fraction done, 0..1 (written by the worker).
        message: the worker's last message.
        result: the work's return value once done.
        error: the exception the work raised, if any.
        started: ``time.monotonic()`` at the start.
    """

    label: str
    work: Callable[[Progress], Any]
    apply: Callable[[Any], None]
    fail: Callable[[BaseException], None] | None = None
    progress: float = 0.0
    message: str = ""
    result: Any = None
    error: BaseException | None = None
    started: float = field(default_factory=time.monotonic)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def report(self, fraction: float, message: str | None = None) -> None:
        """The worker's progress callback: records ``fraction`` (clamped into 0..1, never
        decreasing) and raises :class:`Cancelled` when the task was cancelled."""
        if self._cancel.is_set():
            raise Cancelled(f"{self.label}: cancelled")
        self.progress = max(self.progress, min(max(float(fraction), 0.0), 1.0))
        if message is not None:
            self.message = str(message)

    def cancel(self) -> None:
        """Ask the work to stop at its next progress report (its result is then dropped)."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        """The work has returned or raised."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the work has returned (tests, scripts); True when it has."""
        return self._done.wait(timeout)

    def _run(self) -> None:
        try:
            self.result = self.work(self.report)
        except BaseException as e:  # noqa: BLE001 - handed to the UI thread, not lost
            self.error = e
        finally:
            self._done.set()


def _portable(e: BaseException) -> BaseException:
    """``e`` if it survives pickling (its type and message reach the app), else a
    :class:`WorkerError` with its type, text and traceback."""
    try:
        back = pickle.loads(pickle.dumps(e))
        if type(back) is type(e) and str(back) == str(e):
            return e
    except Exception:  # noqa: BLE001 - any failure to round-trip: sent as text
        pass
    tb = "".join(traceback.format_exception(e))
    return WorkerError(f"{type(e).__name__}: {e}", tb)


def _worker_main(conn, fn: Callable[..., Any], args: tuple, nice: int = 0) -> None:
    """The worker process: ``fn(*args, progress=report)``; every report, then the result or
    the error, sent over ``conn``. ``nice``: added to the process's niceness first (the
    window's process gets the CPU before the worker when both want it)."""
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:  # not permitted here: run at the normal priority
            pass

    def report(fraction: float, message: str | None = None) -> None:
        conn.send(("progress", float(fraction), None if message is None else str(message)))

    try:
        try:
            out = ("result", fn(*args, progress=report))
        except BaseException as e:  # noqa: BLE001 - every error goes back to the app
            out = ("error", _portable(e))
        try:
            conn.send(out)
        except Exception as e:  # noqa: BLE001 - a result that does not pickle
            conn.send(("error", _portable(e)))
    finally:
        conn.close()


def _end_worker(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()


def _worker_entry(job_fd: int, out_fd: int) -> None:
    """The worker process's entry (``python -c``): the job ``(fn, args, nice)`` read from
    ``job_fd``, run by :func:`_worker_main` with its messages to ``out_fd``."""
    with Connection(job_fd, writable=False) as job:
        fn, args, nice = job.recv()
    _worker_main(Connection(out_fd, readable=False), fn, args, nice)


@dataclass(eq=False)
class ProcessTask(Task):
    """A :class:`Task` whose work runs in a worker process (:meth:`TaskRunner.start_process`).
    :meth:`cancel` ends the process (SIGTERM, then SIGKILL if it has not gone within a
    second); the result is then dropped."""

    _process: subprocess.Popen | None = field(default=None, repr=False)
    _conn: Connection | None = field(default=None, repr=False)
    _job: tuple[Connection, tuple] | None = field(default=None, repr=False)

    @property
    def process(self) -> subprocess.Popen:
        """The worker process (tests: ``pid``, ``poll()``, ``returncode``)."""
        return self._process

    def cancel(self) -> None:
        self._cancel.set()
        p = self._process
        if p is not None and p.poll() is None:
            p.terminate()

    def _run(self) -> None:
        """The reader thread: sends the job (the worker reads it once it has started, which
        takes a second or two: not on the UI thread), then reads the worker's messages until
        its answer or the pipe's end."""
        answered = False
        try:
            conn, job = self._job
            self._job = None
            try:
                with conn:
                    conn.send(job)
            except OSError:  # the worker died (or was cancelled) before reading its job
                pass
            while not answered:
                try:
                    kind, *rest = self._conn.recv()
                except (EOFError, OSError):
                    break  # the worker is gone
                if kind == "progress":
                    self.progress = max(self.progress, min(max(rest[0], 0.0), 1.0))
                    if rest[1] is not None:
                        self.message = rest[1]
                elif kind == "result":
                    self.result, answered = rest[0], True
                else:
                    self.error, answered = rest[0], True
        except BaseException as e:  # noqa: BLE001 - an unreadable message: reported
            self.error, answered = e, True
        finally:
            self._conn.close()
            p = self._process
            if answered:  # the answer is in: the worker's own exit need not be waited for
                self._done.set()
            # cancelled or gone: SIGTERM not honoured within a second is a SIGKILL; after an
            # answer the worker is given time to shut its interpreter down
            try:
                p.wait(30.0 if answered else 1.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if not answered and not self.cancelled:
                self.error = WorkerError(f"{self.label}: the worker process exited without an "
                                         f"answer (exit code {p.returncode})")
            self._done.set()


@dataclass
class TaskRunner:
    """The app's background tasks: at most one running; finished ones applied by :meth:`poll`.

    Attributes:
        current: the running (or finished, not yet applied) task, or None.
        finished: how many tasks were applied, failed or cancelled (tests).
    """

    current: Task | None = None
    finished: int = 0

    @property
    def busy(self) -> bool:
        return self.current is not None

    def start(self, label: str, work: Callable[[Progress], Any], apply: Callable[[Any], None],
              fail: Callable[[BaseException], None] | None = None) -> Task | None:
        """Start ``work`` in a worker thread (None when another task is running)."""
        if self.current is not None:
            return None
        task = Task(label, work, apply, fail)
        task._thread = threading.Thread(target=task._run, name=f"animik task: {label}", daemon=True)
        self.current = task
        task._thread.start()
        return task

    def start_process(self, label: str, fn: Callable[..., Any], args: tuple,
                      apply: Callable[[Any], None],
                      fail: Callable[[BaseException], None] | None = None,
                      nice: int = WORKER_NICE) -> ProcessTask | None:
        """Start ``fn(*args, progress=...)`` in a worker process (None when another task is
        running). ``fn`` must be importable by name (a module-level function) and ``args``
        picklable; the result is pickled back and handed to ``apply`` by :meth:`poll`.
        ``nice``: the worker's niceness increment (:data:`WORKER_NICE`)."""
        if self.current is not None:
            return None
        # a fresh interpreter (no fork of a process with GL and threads; not multiprocessing's
        # spawn, which runs the parent's main script again in the child)
        job_r, job_w = os.pipe()
        out_r, out_w = os.pipe()
        code = f"from animik.app.tasks import _worker_entry; _worker_entry({job_r}, {out_w})"
        try:
            proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(job_r, out_w),
                                    stdin=subprocess.DEVNULL)
        except OSError:
            for fd in (job_r, job_w, out_r, out_w):
                os.close(fd)
            raise
        os.close(job_r)
        os.close(out_w)  # the worker holds the only writing end: its exit ends the pipe
        # the app quitting ends its worker (a worker whose app died ends at its next report:
        # the pipe is gone)
        atexit.register(_end_worker, proc)
        task = ProcessTask(label, lambda _: None, apply, fail)
        task._process, task._conn = proc, Connection(out_r, writable=False)
        task._job = (Connection(job_w, readable=False), (fn, args, nice))
        task._thread = threading.Thread(target=task._run, name=f"animik task reader: {label}",
                                        daemon=True)
        self.current = task
        task._thread.start()
        return task

    def cancel(self) -> None:
        if self.current is not None:
            self.current.cancel()

    def poll(self) -> Task | None:
        """On the UI thread, once per frame: apply the finished task. Returns the task that
        finished (applied, failed or cancelled), else None."""
        task = self.current
        if task is None or not task.done:
            return None
        self.current = None
        self.finished += 1
        if task.cancelled or isinstance(task.error, Cancelled):
            return task
        if task.error is not None:
            if task.fail is None:
                raise task.error
            task.fail(task.error)
            return task
        try:
            task.apply(task.result)
        except Exception as e:  # applying failed (e.g. an unreadable result): report it
            if task.fail is None:
                raise
            task.error = e
            task.fail(e)
        return task

    def run_now(self, task_label: str, work: Callable[[Progress], Any],
                apply: Callable[[Any], None]) -> Any:
        """Run a task to the end on this thread (scripts and tests without a frame loop)."""
        t = Task(task_label, work, apply)
        t._run()
        if t.error is not None:
            raise t.error
        apply(t.result)
        return t.result


__all__ = ["Cancelled", "ProcessTask", "Progress", "Task", "TaskRunner", "WorkerError"]
