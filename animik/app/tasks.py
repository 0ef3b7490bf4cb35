"""Long edits off the UI thread: a worker thread with a progress callback, polled every frame.

A :class:`Task` runs ``work(progress)`` in a daemon thread; ``progress(fraction, message)``
records how far it got and raises :class:`Cancelled` once :meth:`Task.cancel` was called, so
the work stops at its next report. The document is never touched from the worker: when the
task has finished, :meth:`TaskRunner.poll` (called by the app at the start of each frame, on
the UI thread) hands the result to ``apply(result)``, which changes the document as one undo
step. An error in the work goes to ``fail(exception)`` (the app's error banner). One task runs
at a time; the UI shows its label, a progress bar and a Cancel button
(:mod:`animik.app.ui.task_bar`).

No GL or GUI import here: tests drive the runner headless.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import AnimikError


class Cancelled(AnimikError):
    """The task was cancelled (raised inside the work by its progress callback)."""


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


__all__ = ["Cancelled", "Progress", "Task", "TaskRunner"]
