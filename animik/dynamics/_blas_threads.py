"""One BLAS thread for the clip filter (docs/dynamics.md 6j).

numpy and scipy each bundle an OpenBLAS (their wheels: ``numpy.libs``, ``scipy.libs``), which
by default use every core: a dot product of more than 10,000 entries (numpy's, the interior
point's residuals and duality gap on louise's 15,000 unknowns / 19,000 rows) and scipy's
banded Cholesky's BLAS-3 blocks are split over the threads. On the filter's sizes that only
costs: the second thread spins while it waits, so the process's CPU time doubles or triples
and on a busy machine the wall time grows too (louise's first QP's interior point: 0.62-0.72 s
CPU / 0.94-1.42 s wall with two threads, 0.21 s / 0.41-0.49 s with one).

:func:`single_thread` sets every BLAS the process has loaded to one thread for a block of code
and restores their counts when the last such block ends (blocks may nest, or run in several
threads at once). The libraries are found and set by ``threadpoolctl`` (scikit-learn's; it
knows OpenBLAS, MKL and BLIS on every platform). One thread sums a long dot product in another
order than two: the QP's answers change in their last digits on clips that long (louise's
written poses by 1e-11), not on shorter ones (no dot product there is long enough to split).
"""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_depth = 0  # blocks running under single_thread (nested or in other threads)
_limit = None  # threadpoolctl's limiter of the outermost block: restores the counts


def blas_threads() -> list[int]:
    """The thread count of every BLAS library loaded (empty: none found)."""
    return [int(i["num_threads"]) for i in ThreadpoolController().select(user_api="blas").info()]


@contextmanager
def single_thread():
    """Run the block with every loaded BLAS on one thread; the counts are restored when the
    last block running (in any thread) ends."""
    global _depth, _limit
    with _lock:
        if _depth == 0:
            # the libraries loaded now (scipy's is loaded with scipy.linalg, after numpy's)
            _limit = ThreadpoolController().select(user_api="blas").limit(limits=1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _limit.restore_original_limits()
                _limit = None


def one_blas_thread(fn):
    """``fn`` run under :func:`single_thread`."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with single_thread():
            return fn(*args, **kwargs)
    return run
