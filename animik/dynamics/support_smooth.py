"""Frames carried by supports that the contact wrench cone cannot carry: local smoothing.

On a supported stretch (a seat, pedals, holds: :mod:`animik.dynamics.supports`) the floor
correction of method A has nothing to move (its modes shift the root over the floor's support
polygon). What the cone check rejects there on real mocap are **single-frame spikes** of the
capture (louise.bvh: 2-3 body weights of horizontal force for one or two frames, a marker
jump the Savitzky-Golay window turns into an acceleration) and the clip's last frames (the
fit's edge). Those are smoothed locally: the poses around each rejected frame are blended
toward a Gaussian low-pass of the clip (``scipy.ndimage.gaussian_filter1d``, rotation DoFs
unwrapped, the clip's ends extended by their last pose), with a weight that is 1 over the
frame +- ``half`` s and eases to 0 over ``taper`` s, the low-pass widening per round until the
check passes (or ``rounds`` are used; the round with the fewest rejected frames is kept). Only
supported frames move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..motion import Motion
from .clip import DEFAULT_WINDOW, check_clip
from .contacts import ContactModel, contact_model_for_clip
from .supports import SupportSet


class SmoothResult(NamedTuple):
    """``motion``: the smoothed clip; ``changed``: ``(T,)`` bool frames that moved;
    ``rounds``: infeasible supported frames before each round (and after the last); the
    returned clip is the round with the fewest."""

    motion: Motion
    changed: np.ndarray
    rounds: list[int]


def smooth_supported(motion: Motion, supports: SupportSet, mu: float = 0.7,
                     window: float = DEFAULT_WINDOW, contacts: ContactModel | None = None,
                     half: float = 0.05, taper: float = 0.1, sigma0: float = 0.02,
                     rounds: int = 6) -> SmoothResult:
    """Smooth the supported frames the cone check rejects (module docstring).

    Args:
        motion: the clip. supports: its supports. mu, window: as the check.
        half: s, fully smoothed either side of a rejected frame. taper: s, the blend out.
        sigma0: s, the low-pass's standard deviation in the first round (doubled per round).
        rounds: at most this many rounds.
    """
    from scipy.ndimage import gaussian_filter1d

    skel, fps = motion.skeleton, float(motion.fps)
    cm = contacts or contact_model_for_clip(skel, motion.q)
    q0 = np.array(motion.q, dtype=float)
    T = len(q0)
    rot = skel.dof_type == 0
    qu = q0.copy()
    qu[:, rot] = np.unwrap(q0[:, rot], axis=0)
    on = supports.active(T).any(axis=1)
    q = qu.copy()
    hist: list[int] = []
    nh, nt = max(1, int(round(half * fps))), max(1, int(round(taper * fps)))
    ramp = 0.5 - 0.5 * np.cos(np.pi * (np.arange(1, nt + 1) / (nt + 1)))  # 0 -> 1
    kernel = np.concatenate([ramp, np.ones(2 * nh + 1), ramp[::-1]])
    done = np.zeros(T, dtype=bool)
    sigma = sigma0 * fps
    best = (T + 1, q, done)
    for _ in range(rounds + 1):
        chk = check_clip(Motion(skel, q, fps), mu=mu, window=window, contacts=cm,
                         supports=supports)
        bad = on & ~chk.feasible
        hist.append(int(bad.sum()))
        if hist[-1] < best[0]:
            best = (hist[-1], q, done.copy())
        if not bad.any() or len(hist) > rounds:
            break
        w = np.minimum(np.convolve(bad.astype(float), kernel, mode="same"), 1.0)
        w = np.where(on, w, 0.0)[:, None]
        qs = gaussian_filter1d(q, sigma, axis=0, mode="nearest")
        q = q + w * (qs - q)
        done |= w[:, 0] > 0
        sigma *= 2.0
    _, q, done = best  # the round with the fewest rejected frames (wider is not always better)
    q = q.copy()
    q[:, rot] = q0[:, rot] + (q[:, rot] - qu[:, rot])  # back to the input's angle branch
    return SmoothResult(Motion(skel, q, fps, dict(motion.meta)), done, hist)


__all__ = ["SmoothResult", "smooth_supported"]
