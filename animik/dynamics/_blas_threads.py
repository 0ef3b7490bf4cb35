"""One BLAS thread for the clip filter (docs/dynamics.md 6j).

numpy and scipy each bundle an OpenBLAS (their wheels: ``numpy.libs``, ``scipy.libs``), which
by default use every core: a dot product of more than 10,000 entries (numpy's, the interior
point's residuals and duality gap on louise's 15,000 unknowns / 19,000 rows) and scipy's
banded Cholesky's BLAS-3 blocks are split over the threads. On the filter's sizes that only
costs: the second thread spins while it waits, so the process's CPU time doubles or triples
and on a busy machine the wall time grows too (louise's first QP's interior point: 0.62-0.72 s
CPU / 0.94-1.42 s wall with two threads, 0.21 s / 0.41-0.49 s with one).

:func:`single_thread` sets both libraries to one thread for a block of code and restores their
counts afterwards; a library that is not found (another BLAS, another platform) is left alone.
One thread sums a long dot product in another order than two: the QP's answers change in their
last digits on clips that long (louise's written poses by 1e-11), not on shorter ones (no dot
product there is long enough to split).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import threading
from contextlib import contextmanager

_SET = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
        "openblas_set_num_threads64_", "openblas_set_num_threads")
_GET = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
        "openblas_get_num_threads64_", "openblas_get_num_threads")
_libs: list | None = None
_lock = threading.Lock()
_depth = 0  # blocks running under single_thread (nested or in other threads)
_saved: list = []  # (set, count) to restore when the last one ends


def _bundled(module: str) -> list[str]:
    """The OpenBLAS libraries bundled with ``module``'s wheel (``<module>.libs`` beside the
    package on Linux / Windows, ``.dylibs`` inside it on macOS)."""
    try:
        mod = __import__(module)
    except ImportError:  # pragma: no cover - numpy and scipy are dependencies
        return []
    base = os.path.dirname(os.path.abspath(mod.__file__))
    return (sorted(glob.glob(os.path.join(os.path.dirname(base), f"{module}.libs", "*openblas*")))
            + sorted(glob.glob(os.path.join(base, ".dylibs", "*openblas*"))))


def _find() -> list[tuple]:
    """``(get, set)`` of every bundled OpenBLAS found (numpy's, scipy's)."""
    out = []
    for path in _bundled("numpy") + _bundled("scipy"):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        get = next((getattr(lib, n) for n in _GET if hasattr(lib, n)), None)
        put = next((getattr(lib, n) for n in _SET if hasattr(lib, n)), None)
        if get is not None and put is not None:
            get.restype, get.argtypes = ctypes.c_int, []
            put.restype, put.argtypes = None, [ctypes.c_int]
            out.append((get, put))
    return out


def blas_threads() -> list[int]:
    """The thread count of every bundled OpenBLAS found (empty: none found)."""
    global _libs
    if _libs is None:
        _libs = _find()
    return [int(get()) for get, _ in _libs]


@contextmanager
def single_thread():
    """Run the block with the bundled OpenBLAS libraries on one thread; the counts are
    restored when the last block running (in any thread) ends."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            counts = blas_threads()
            _saved = [(put, n) for (_, put), n in zip(_libs, counts, strict=True) if n > 1]
            for put, _ in _saved:
                put(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for put, n in _saved:
                    put(n)
                _saved = []

def one_blas_thread(fn):
    """``fn`` run under :func:`single_thread`."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with single_thread():
            return fn(*args, **kwargs)
    return run
