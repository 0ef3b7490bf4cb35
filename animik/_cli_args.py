"""Range-checked argument types shared by every ``animik`` command.

A bad option value is bad usage: argparse reports it with the option's name and the command
exits with 2, the same in every command (README "Exit codes"). The ranges keep every later
allocation bounded (``--fps 1e9`` would ask for 10⁹ frames a second) and every written number
finite (``--unit 1e-320`` would write infinite offsets).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

#: Frame rates accepted by commands (frames per second).
FPS_RANGE = (1e-3, 10_000.0)
#: BVH units given as metres per file unit.
UNIT_RANGE = (1e-6, 1e6)


def number(lo: float, hi: float, what: str = "a number", lo_open: bool = False
           ) -> Callable[[str], float]:
    """An argparse ``type``: a finite float in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
        if not ok:
            left = "(" if lo_open else "["
            raise argparse.ArgumentTypeError(f"expected {what} in {left}{lo:g}, {hi:g}], got {text!r}")
        return v

    parse.__name__ = what  # argparse names the type in its messages
    return parse


def integer(lo: int, hi: int, what: str = "an integer") -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[lo, hi]``."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"expected {what} in [{lo}, {hi}], got {text!r}")
        return v

    parse.__name__ = what
    return parse


def fps(text: str) -> float:
    """``--fps``: a frame rate in :data:`FPS_RANGE`."""
    return number(*FPS_RANGE, what="a frame rate (frames per second)")(text)


def bvh_unit(text: str) -> str | float:
    """``--unit``: a BVH unit name (or alias) or metres per file unit in :data:`UNIT_RANGE`."""
    from .errors import AnimikError
    from .io.bvh import resolve_unit

    try:
        value: str | float = float(text)
    except ValueError:
        value = text
    if isinstance(value, float):
        value = number(*UNIT_RANGE, what="metres per file unit")(text)
    try:
        resolve_unit(value)
    except AnimikError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return value


# The option types of the commands (one place for their ranges).
iterations = integer(1, 1_000_000, "an iteration count")
frames = integer(0, 1_000_000, "a frame count")
positive_frames = integer(1, 1_000_000, "a frame count")
seed = integer(0, 2**63 - 1, "a seed")
count = integer(1, 100_000, "a count")
batch = integer(1, 10_000_000, "a pose count")
processes = integer(1, 1024, "a process count")
millimetres = number(0.0, 1e6, "millimetres", lo_open=True)
degrees = number(0.0, 180.0, "degrees", lo_open=True)
pixels = number(0.0, 10_000.0, "pixels")


def name_list(valid, what: str = "names") -> Callable[[str], list[str]]:
    """An argparse ``type``: comma-separated names, each one of ``valid``."""
    valid = list(valid)

    def parse(text: str) -> list[str]:
        names = [s.strip() for s in text.split(",") if s.strip()]
        bad = [s for s in names if s not in valid]
        if bad or not names:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {what} from {', '.join(valid)}; got {text!r}")
        return names

    parse.__name__ = what
    return parse
