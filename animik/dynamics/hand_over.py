"""The plant step's hand-over from the floor to supports off it (docs/dynamics.md 5j, "Raw
louise's last frame").

A foot the plant step holds on the floor up to the frame where supports off the floor (a
bike's seat, grips, a raised foot rest) start carrying the body must not be let go *at* that
frame: the hold's ease-out (the foot catching up with the input's, which has already swung up
and away) then starts on the first supported frame, and the check's Savitzky-Golay fit, whose
window reaches back over the edge, reads the ease-out's speed (2-3 m/s on raw louise's right
foot) into the last unsupported frames -- the detector releases the foot there, and that frame
is carried by nothing. The foot is therefore held on into the supported frames by the check's
window (there the floor contact is checked together with the supports, the cone includes the
floor soles), so it lifts off where the supports already carry the body; the same at the end
of a supported stretch (the foot put down before the supports let go). Feet that rest on an
active support there (a foot rest, a pedal under that foot) are not held: the supports carry
them.
"""

from __future__ import annotations

import numpy as np

from ._runs import true_runs


def hold_into_supports(planted: np.ndarray, on_support: np.ndarray, resting: np.ndarray,
                       frames: int) -> np.ndarray:
    """Planted runs that meet a supported stretch, held on into it.

    Args:
        planted: ``(T, A)`` bool, frames where the plant step holds area ``a`` on the floor.
        on_support: ``(T,)`` bool, frames where a support off the floor is active.
        resting: ``(T, A)`` bool, area ``a`` rests on an active support (not held there).
        frames: how many supported frames the hold goes on (the check's window).

    Returns:
        ``(T, A)`` bool, ``planted`` with each run that ends within ``frames`` before a
        supported stretch's first frame held on from its end to ``frames`` into the stretch
        (and each run that starts within ``frames`` after its last frame held from ``frames``
        before it), not over frames where the area rests on a support.
    """
    out = planted.copy()
    T, A = planted.shape
    if frames <= 0 or not on_support.any():
        return out
    for a0, b0 in true_runs(on_support):
        for a in range(A):
            before = np.flatnonzero(planted[max(0, a0 - frames):a0, a])
            if len(before):  # the body steps onto them: held from its last planted frame on
                span = np.arange(max(0, a0 - frames) + before[-1] + 1, min(b0, a0 + frames))
                out[span[~resting[span, a]], a] = True
            after = np.flatnonzero(planted[b0:min(T, b0 + frames), a])
            if len(after):  # ... and off them: held up to its first planted frame
                span = np.arange(max(a0, b0 - frames), b0 + after[0])
                out[span[~resting[span, a]], a] = True
    return out


# how many times the plant step's ease (``blend``) a hold that ends (starts) on supported
# frames eases out (in): the foot, held on the floor while the input's rose on (raw louise's
# right foot 20-25 cm up 0.1 s into the supports), catches up over 0.3 s instead of 0.1 s --
# ~1 m/s instead of 2-3 m/s, and a ninth of the leg's acceleration, which the supports' cone
# must carry
EASE_FACTOR = 3


def ease_frames(on_support: np.ndarray, start: int, end: int, frames: int) -> tuple[int, int]:
    """``(in, out)`` frames over which the plant step eases a hold of frames ``[start, end)``
    in and out: ``frames``, times :data:`EASE_FACTOR` on a side whose end frame is supported
    off the floor (the hand-over; floor-only clips: ``frames`` both)."""
    T = len(on_support)
    f_in = frames * EASE_FACTOR if 0 <= start < T and on_support[start] else frames
    f_out = frames * EASE_FACTOR if 0 < end <= T and on_support[end - 1] else frames
    return f_in, f_out


__all__ = ["ease_frames", "hold_into_supports"]
