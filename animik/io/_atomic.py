"""Atomic file writing: a failed export never leaves a truncated file or clobbers the old one.

The temporary file sits beside the destination, hidden, named
``.<name>.<host>-<pid>.<random>.tmp``. A process killed mid-write (SIGKILL: no clean-up runs)
leaves it behind; the next write into the same folder from this machine removes every such
file whose writing process no longer exists (once per folder and process).
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
import zlib
from pathlib import Path

#: This machine, in temporary names: only its own dead writers' files are ever removed (a
#: shared network folder may hold another machine's write in progress).
_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"
_STALE = re.compile(r"^\..+\.(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)\.[^./]+\.tmp$")
_SWEPT: set[str] = set()


def atomic_write(path: str | os.PathLike, data: str | bytes, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, fsync,
    ``os.replace``); the temporary file is removed on any failure.

    Args:
        path: destination file.
        data: text (encoded with ``encoding``, newlines written as given) or bytes.

    Returns:
        The destination as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    folder = path.parent if str(path.parent) else Path(".")
    remove_stale_temporaries(folder)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_HOST}-{os.getpid()}.", suffix=".tmp",
                               dir=folder)
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would (or the old file's).
        try:
            mode = os.stat(path).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def remove_stale_temporaries(folder: str | os.PathLike, force: bool = False) -> list[Path]:
    """Remove the temporary files of :func:`atomic_write` in ``folder`` left by processes of
    this machine that no longer exist (killed mid-write). Done once per folder per process
    unless ``force``; never raises (a folder that cannot be listed is skipped).

    Returns:
        The files removed.
    """
    key = os.path.abspath(folder)
    if key in _SWEPT and not force:
        return []
    _SWEPT.add(key)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        m = _STALE.match(e.name)
        if m is None or m["host"] != _HOST or _pid_alive(int(m["pid"])):
            continue
        try:
            os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            pass
    return removed


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # exists (another user's) / not a pid we can judge: leave it
    return True
