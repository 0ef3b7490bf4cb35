"""Progress reports of the long clip filters (``animik filter``'s bar, the app's Make feasible).

A report is ``progress(fraction, message)``: ``fraction`` in 0..1 of the whole job, ``message``
what it is doing ("pass 2, round 5: 37 of 2998 frames infeasible"). The filters do not know in
advance how many passes and rounds they will run (they stop when nothing is left to fix or no
round improves), so a stage's share is handed out geometrically: step ``k`` of a stage gets
``[1 − r^k, 1 − r^(k+1)]`` of it — the bar moves at every step and never reaches the stage's
end before the stage does. A callback may raise (a cancel) to stop the work.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[float, str | None], object]


def scaled(progress: Progress | None, lo: float, hi: float, prefix: str = "") -> Progress | None:
    """``progress`` of a part running over ``[lo, hi]`` of the whole; its messages prefixed.

    Returns None when ``progress`` is None (the filters then skip their reports).
    """
    if progress is None:
        return None

    def report(fraction: float, message: str | None = None) -> object:
        f = min(max(float(fraction), 0.0), 1.0)
        text = None if message is None else (f"{prefix}{message}" if prefix else message)
        return progress(lo + (hi - lo) * f, text)

    return report


def geometric(k: int, ratio: float = 0.6) -> tuple[float, float]:
    """The share ``[1 − ratio^k, 1 − ratio^(k+1)]`` of step ``k`` (0-based) of a stage whose
    number of steps is not known in advance."""
    return 1.0 - ratio ** k, 1.0 - ratio ** (k + 1)


__all__ = ["Progress", "geometric", "scaled"]
