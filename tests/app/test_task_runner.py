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


def test_a_process_task_started_from_a_script_without_a_main_guard(tmp_path):
    """The worker is a fresh interpreter that imports the job by name: a script that starts a
    process task at its top level (no ``if __name__ == "__main__"``) is not run again in the
    worker (multiprocessing's spawn runs it again and fails: "An attempt has been made to start
    a new process before the current process has finished its bootstrapping phase"). The job's
    reports, result and the worker's own exit come back; a job's error arrives as itself."""
    import subprocess
    import sys

    (tmp_path / "probe_job.py").write_text(
        "def job(n, progress):\n"
        "    for i in range(n):\n"
        "        progress((i + 1) / n, f'step {i + 1}')\n"
        "    return 2 * n\n"
        "def bad(progress):\n"
        "    raise KeyError('nope')\n")
    script = tmp_path / "no_guard.py"
    script.write_text(
        "import json\n"
        "from animik.app.tasks import TaskRunner\n"
        "from probe_job import bad, job\n"
        "print('started', flush=True)\n"
        "r = TaskRunner(); got = []\n"
        "t = r.start_process('probe', job, (5,), got.append)\n"
        "t.wait(120); r.poll(); t.process.wait(60)\n"
        "e = r.start_process('bad', bad, (), got.append, got.append)\n"
        "e.wait(120); r.poll()\n"
        "print(json.dumps([got[0], t.progress, t.message, t.process.returncode,\n"
        "                  type(got[1]).__name__, str(got[1])]))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines.count("started") == 1  # the script ran once, not again in the workers
    assert out.stdout.strip().splitlines()[-1] == '[10, 1.0, "step 5", 0, "KeyError", "\'nope\'"]'
