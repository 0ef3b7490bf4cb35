"""The background task runner without GL: progress, cancel, errors, apply on poll only."""

from __future__ import annotations

import threading

import pytest

from animik.app.tasks import Cancelled, TaskRunner


def test_result_is_applied_by_poll_only():
    r = TaskRunner()
    go = threading.Event()
    applied = []

    def work(progress):
        progress(0.5, "half")
        go.wait(10)
        progress(0.25)  # never decreases
        return 42

    t = r.start("job", work, applied.append)
    assert r.start("another", work, applied.append) is None  # one at a time
    assert r.poll() is None and applied == []
    go.set()
    assert t.wait(10)
    assert applied == []  # not from the worker
    assert r.poll() is t and applied == [42] and not r.busy
    assert t.progress == 0.5 and t.message == "half"


def test_cancel_stops_at_the_next_report_and_drops_the_result():
    r = TaskRunner()
    started = threading.Event()
    seen = []

    def work(progress):
        for i in range(10_000):
            progress(i / 10_000)
            seen.append(i)
            started.set()
            threading.Event().wait(0.001)
        return "all"

    t = r.start("job", work, lambda _x: pytest.fail("a cancelled task must not apply"))
    assert started.wait(10)
    t.cancel()
    assert t.wait(10)
    assert isinstance(t.error, Cancelled) and len(seen) < 10_000
    assert r.poll() is t and not r.busy


def test_errors_go_to_fail_on_the_ui_thread():
    r = TaskRunner()
    failed = []

    def work(progress):
        raise ValueError("bad file")

    t = r.start("job", work, lambda _x: None, failed.append)
    assert t.wait(10)
    assert failed == []
    r.poll()
    assert [str(e) for e in failed] == ["bad file"]
    t2 = r.start("apply fails", lambda p: 1, lambda _x: (_ for _ in ()).throw(OSError("disk")),
                 failed.append)
    assert t2.wait(10)
    r.poll()
    assert str(failed[-1]) == "disk"
