"""Issue 15 item 10: a SIGKILLed `animik retarget --jobs 2` leaves no pool worker (nor the
resource tracker) behind holding the caller's stderr pipe: they exit when their parent dies."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from rt_helpers import write_test_clip

from animik.retarget.batch import watch_parent

#: Hang detector, not a speed threshold: the workers poll every 0.5 s.
WAIT_S = 120


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_pool_workers_exit_when_the_parent_is_killed(tmp_path):
    clips = [write_test_clip(tmp_path / f"c{i}.bvh", frames=3000, seed=i) for i in range(4)]
    cmd = [sys.executable, "-m", "animik.cli", "retarget", *map(str, clips), "--to", "fig2",
           "--out", str(tmp_path / "out"), "--jobs", "2", "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT_S
    kids: list[int] = []
    while time.monotonic() < deadline and len([k for k in kids if _alive(k)]) < 3:
        kids = _children(proc.pid)  # two workers + the resource tracker
        time.sleep(0.2)
    assert len(kids) >= 2, f"the pool never started: children {kids}"
    time.sleep(1.0)  # the workers are past their set-up
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # EOF on stderr: every process holding the pipe has exited.
    fd = proc.stderr.fileno()
    eof = False
    while time.monotonic() < deadline and not eof:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready and not os.read(fd, 65536):
            eof = True
    while time.monotonic() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.2)
    leftover = [k for k in kids if _alive(k)]
    for k in leftover:  # never leave them running, even when the test fails
        os.kill(k, signal.SIGKILL)
    assert eof and not leftover, f"still running after the parent died: {leftover}"


def test_watch_parent_ends_an_orphan(tmp_path):
    """The watchdog itself: a grandchild whose parent exits ends on its own."""
    flag = tmp_path / "pid"
    code = ("import os, sys, time\n"
            "from animik.retarget.batch import watch_parent\n"
            "if os.fork() == 0:\n"
            "    watch_parent(os.getppid(), 0.05)\n"
            f"    open({str(flag)!r}, 'w').write(str(os.getpid()))\n"
            "    time.sleep(600)\n"
            "else:\n"
            "    time.sleep(1.0)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=WAIT_S)
    pid = int(flag.read_text())
    deadline = time.monotonic() + WAIT_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive
    assert callable(watch_parent)
