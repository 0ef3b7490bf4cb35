"""Shared pieces of the fuzz tests (issue 15): the bound every case runs under, the
interesting values mutations plant, and the per-reader tallies the tests print."""

from __future__ import annotations

import signal
import tracemalloc
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, settings

from animik.errors import AnimikError

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"

#: Wall-clock bound of one case: far above any clean case (a few ms to ~0.5 s), so only a hang
#: or a blow-up reaches it. Memory bound: traced peak of one case (inputs are a few kB).
CASE_SECONDS = 30
CASE_BYTES = 256 * 2**20

#: One budget for every fuzz test: a fixed number of cases, no example database (CI starts
#: fresh), no per-example deadline (the bound above catches hangs without timing flakiness).
FUZZ = settings(max_examples=300, deadline=None, database=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

TALLY: dict[str, Counter] = {}


class Hang(Exception):
    """A case exceeded CASE_SECONDS."""


@contextmanager
def bounded(seconds: float = CASE_SECONDS, max_bytes: int = CASE_BYTES):
    """Run a case under a wall-clock alarm and a traced-memory bound (main thread only)."""

    def on_alarm(signum, frame):
        raise Hang(f"no result within {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    tracemalloc.start()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak <= max_bytes, f"a case peaked at {peak / 2**20:.0f} MiB"


def run_case(reader: str, fn, check_valid=None):
    """``fn()`` must return a valid result (checked by ``check_valid``) or raise an
    AnimikError, within the bound; tallies the outcome under ``reader``."""
    tally = TALLY.setdefault(reader, Counter())
    tally["cases"] += 1
    with bounded():
        try:
            result = fn()
        except AnimikError:
            tally["clean errors"] += 1
            return None
    if check_valid is not None:
        check_valid(result)
    tally["valid results"] += 1
    return result


def report(reader: str) -> str:
    t = TALLY.get(reader, Counter())
    return (f"fuzz {reader}: {t['cases']} cases, {t['clean errors']} clean errors, "
            f"{t['valid results']} valid results")


#: Values that broke readers before (issue 15) or sit on a boundary.
INTERESTING_NUMBERS = [b"0", b"-0", b"1", b"-1", b"1e308", b"-1e308", b"1e-320", b"nan", b"inf",
                       b"-inf", b"1e999", b"1000000000000", b"4294967296", b"999999999999999",
                       b"0.0000001", b"1e5", b"1e6", b"1e9", b"0x10", b"1_0", b"1e", b"."]
INTERESTING_TOKENS = INTERESTING_NUMBERS + [
    b"{", b"}", b"JOINT", b"ROOT", b"End Site", b"CHANNELS", b"CHANNELS 6", b"OFFSET", b"MOTION",
    b"Frames:", b"Frame Time:", b"HIERARCHY", b"\n", b"\r", b"\r\n", b"\t", b"\x00", b"\xff",
    b"\xef\xbb\xbf", b" ", b"Xrotation", b"Zposition",
]
