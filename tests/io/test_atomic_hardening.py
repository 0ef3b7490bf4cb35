"""Issue 15 items 9 and 10: `animik tune` writes through the atomic writer (no fixed `.tmp`
name, fsync, clean-up on failure), and the hidden temporaries of a writer killed mid-write
(SIGKILL) are removed by the next write into that folder."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from animik.ik import tuning
from animik.io import _atomic
from animik.io._atomic import atomic_write, remove_stale_temporaries


def _tuning():
    return tuning.FIKTuning(rig="mine", fingerprint="0" * 16, options={"A": 0.5})


def test_write_tuning_full_disk_leaves_nothing(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_atomic.os, "fsync", full)
    with pytest.raises(OSError, match="space"):
        tuning.write_tuning(_tuning(), tmp_path / "x.tuning.toml")
    assert list(tmp_path.iterdir()) == []


def test_write_tuning_uses_a_unique_temporary(tmp_path, monkeypatch):
    made = []
    real = _atomic.tempfile.mkstemp

    def spy(*a, **k):
        fd, name = real(*a, **k)
        made.append(name)
        return fd, name

    monkeypatch.setattr(_atomic.tempfile, "mkstemp", spy)
    p = tmp_path / "x.tuning.toml"
    tuning.write_tuning(_tuning(), p)
    tuning.write_tuning(_tuning(), p)
    assert len(made) == 2 and made[0] != made[1]
    assert not p.with_name(p.name + ".tmp").exists()
    assert tuning.read_tuning(p).options["A"] == 0.5
    assert [q.name for q in tmp_path.iterdir()] == ["x.tuning.toml"]


def test_temporaries_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    code = ("import os, time\n"
            "import animik.io._atomic as a\n"
            "a.os.fsync = lambda fd: time.sleep(600)\n"
            f"a.atomic_write({str(tmp_path / 'big.bin')!r}, b'x' * 1000)\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not [p for p in tmp_path.iterdir()
                                                if p.name.endswith(".tmp")]:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stale = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1 and stale[0].name.startswith(".big.bin.")
    # A live writer's temporary (this process) is left alone.
    live = tmp_path / f".other.bin.{_atomic._HOST}-{os.getpid()}.abc.tmp"
    live.write_bytes(b"")
    # An unrelated hidden file that merely ends in .tmp is never touched.
    user = tmp_path / ".notes.tmp"
    user.write_bytes(b"")
    atomic_write(tmp_path / "next.bin", b"ok")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["next.bin", live.name, user.name])
    assert remove_stale_temporaries(tmp_path, force=True) == []
