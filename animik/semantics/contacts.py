"""Foot contacts: detection on the source motion, and holding the target's feet during them.

**Detection** (:func:`detect_contacts`) works on the foot points the source motion asks of the
target (in metres, after scaling, relative to the ground the retargeter estimated from the clip,
so thresholds do not depend on the file's unit or the performer's size): a foot *enters*
contact when its height above the ground is below ``height`` **and** its horizontal speed below
``speed``, and *leaves* it when the height exceeds ``release_height`` **or** the speed exceeds
``release_speed`` (hysteresis). Gaps shorter than ``min_gap`` between two contacts are closed,
then contacts shorter than ``min_duration`` are dropped. :class:`OnlineContactDetector` is the
causal form (hysteresis only) for pose-by-pose use.

**Holding** (:func:`hold_foot`, one frame, state passed in and returned): at the start of a
contact the foot target is frozen at its horizontal position and put on the ground (its sole
height ``h_sole`` above ``z = 0``; the vertical part eases down over ``blend_in`` frames); it
stays there until the contact ends — only rising, without sliding, by as much as the source
foot rises above the contact band ``height`` (the heel lifting before toe-off) — then blends
back to the free trajectory over ``blend_out`` frames (smoothstep). Outside contacts the target
is clamped to ``z ≥ h_sole``: **never below the ground**.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ContactParams:
    """Thresholds of contact detection (m, m/s, s).

    Attributes:
        height: enter contact below this height above the ground (m).
        speed: ... and below this horizontal speed (m/s).
        release_height: leave contact above this height (m).
        release_speed: ... or above this horizontal speed (m/s).
        min_duration: drop contacts shorter than this (s).
        min_gap: close gaps between contacts shorter than this (s).
        blend_in: seconds over which the foot eases down onto the ground at contact start.
        blend_out: seconds over which the foot returns to its free trajectory after a contact.
    """

    height: float = 0.04
    speed: float = 0.35
    release_height: float = 0.07
    release_speed: float = 0.6
    min_duration: float = 0.08
    min_gap: float = 0.05
    blend_in: float = 0.05
    blend_out: float = 0.12

    def frames(self, seconds: float, fps: float) -> int:
        return max(int(round(seconds * fps)), 0)


def horizontal_speed(p: np.ndarray, fps: float) -> np.ndarray:
    """Horizontal speed ``(T, ...)`` m/s of points ``p (T, ..., 3)`` (central differences)."""
    if p.shape[0] < 2:
        return np.zeros(p.shape[:-1])
    v = np.gradient(p[..., :2], 1.0 / fps, axis=0)
    return np.linalg.norm(v, axis=-1)


def estimate_ground(feet: np.ndarray, speed: np.ndarray, params: ContactParams = ContactParams(),
                    max_slope: float = 0.05) -> np.ndarray:
    """The floor of a clip as a plane ``z = a + b x + c y`` through its stationary low feet.

    Candidates are, per frame, the lowest foot if it moves slower than ``params.speed``; the
    plane starts at the 10th percentile of the lowest heights and is refitted three times
    (least squares) to the candidates within ``params.height`` of it. A tilt is kept only when
    the feet cover at least 1 m and it is below ``max_slope`` (mocap floors are often slightly
    tilted; ramps and stairs are not planes); else the floor is level.

    Args:
        feet: ``(T, F, 3)`` foot points (sole heights already subtracted from z), m.
        speed: ``(T, F)`` their horizontal speeds, m/s.

    Returns:
        ``(3,)`` ``(a, b, c)``.
    """
    T = feet.shape[0]
    if T == 0 or feet.shape[1] == 0:
        return np.zeros(3)
    low = np.argmin(feet[..., 2], axis=1)
    pts = feet[np.arange(T), low]
    still = speed[np.arange(T), low] < params.speed
    if still.sum() >= 3:
        pts = pts[still]
    plane = np.array([float(np.percentile(pts[:, 2], 10.0)), 0.0, 0.0])
    span = np.ptp(pts[:, :2], axis=0) if len(pts) else np.zeros(2)
    if len(pts) < 10 or float(np.hypot(*span)) < 1.0:
        return plane
    for _ in range(3):
        r = pts[:, 2] - (plane[0] + pts[:, :2] @ plane[1:])
        keep = np.abs(r) < params.height
        if keep.sum() < 10:
            break
        X = np.column_stack([np.ones(int(keep.sum())), pts[keep, :2]])
        fit = np.linalg.lstsq(X, pts[keep, 2], rcond=None)[0]
        if np.hypot(fit[1], fit[2]) > max_slope:
            break
        plane = fit
    return plane


def _phases(flags: np.ndarray) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of the True runs of a 1-D bool array (stop exclusive)."""
    d = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(), strict=True))


def detect_contacts(height: np.ndarray, speed: np.ndarray, fps: float,
                    params: ContactParams = ContactParams()) -> np.ndarray:
    """Contact flags ``(T, F)`` from foot heights above the ground ``(T, F)`` (m) and horizontal
    speeds ``(T, F)`` (m/s) — see the module docstring."""
    T, F = height.shape
    flags = np.zeros((T, F), dtype=bool)
    for f in range(F):
        on = False
        h, v = height[:, f], speed[:, f]
        for t in range(T):
            if on:
                on = not (h[t] > params.release_height or v[t] > params.release_speed)
            else:
                on = bool(h[t] < params.height and v[t] < params.speed)
            flags[t, f] = on
        gap = params.frames(params.min_gap, fps)
        ph = _phases(flags[:, f])
        for (_, a1), (b0, _) in zip(ph, ph[1:], strict=False):
            if b0 - a1 < gap:
                flags[a1:b0, f] = True
        shortest = params.frames(params.min_duration, fps)
        for a0, a1 in _phases(flags[:, f]):
            if a1 - a0 < shortest:
                flags[a0:a1, f] = False
    return flags


def contact_phases(flags: np.ndarray) -> list[list[tuple[int, int]]]:
    """Per foot, the ``(start, stop)`` frame ranges of its contacts."""
    return [_phases(flags[:, f]) for f in range(flags.shape[1])]


@dataclass(frozen=True)
class FootState:
    """Holding state of one foot (immutable; :func:`hold_foot` returns a new one).

    Attributes:
        in_contact: the foot was held on the previous frame.
        anchor: ``(3,)`` where it is held (m).
        last: ``(3,)`` the target given on the previous frame.
        blend_in: frames left of easing down; ``blend_out``: frames left of blending back.
        blend_from: ``(3,)`` start of the blend back.
    """

    in_contact: bool = False
    anchor: tuple[float, float, float] = (0.0, 0.0, 0.0)
    last: tuple[float, float, float] | None = None
    blend_in: int = 0
    blend_out: int = 0
    blend_from: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _smoothstep(w: float) -> float:
    return w * w * (3.0 - 2.0 * w)


def hold_foot(contact: bool, free: np.ndarray, state: FootState, h_sole: float,
              n_in: int, n_out: int, band: float = 0.0) -> tuple[np.ndarray, FootState]:
    """The foot target of one frame and the next state (see the module docstring).

    Args:
        contact: the foot is in contact on this frame.
        free: ``(3,)`` the target the source motion asks for (m).
        state: the previous frame's :class:`FootState`.
        h_sole: height of the foot's site above the sole (m): the target's lowest z.
        n_in, n_out: blend-in / blend-out lengths in frames.
        band: heights up to this above the ground count as standing (m); above it, a held foot
            rises with the source (the heel lifting at the end of a step) without sliding.
    """
    x, y, z = float(free[0]), float(free[1]), float(free[2])
    if contact:
        if not state.in_contact:
            anchor = (x, y, h_sole)
            left = n_in
            if state.blend_out > 0 and state.last is not None:
                # re-contact while blending back: hold where the foot is now
                anchor = (state.last[0], state.last[1], h_sole)
        else:
            anchor = state.anchor
            left = state.blend_in
        lift = h_sole + max(z - h_sole - band, 0.0)
        if left > 0:
            w = left / (n_in + 1.0)
            tz = max(lift, h_sole + (z - h_sole) * w)
            left -= 1
        else:
            tz = lift
        out = (anchor[0], anchor[1], tz)
        return np.array(out), FootState(True, anchor, out, left, 0, state.blend_from)
    left, start = state.blend_out, state.blend_from
    if state.in_contact:
        left, start = n_out, state.last if state.last is not None else state.anchor
    if left > 0:
        w = _smoothstep(1.0 - left / (n_out + 1.0))
        out = [start[0] + (x - start[0]) * w, start[1] + (y - start[1]) * w,
               start[2] + (z - start[2]) * w]
        left -= 1
    else:
        out = [x, y, z]
    out[2] = max(out[2], h_sole)
    t = (out[0], out[1], out[2])
    return np.array(t), FootState(False, state.anchor, t, 0, left, start)


class OnlineContactDetector:
    """Causal contact detection (hysteresis, no look-ahead) for pose-by-pose retargeting.

    Its state is the pair ``(flags, previous positions)``, passed in and returned.
    """

    def __init__(self, params: ContactParams, fps: float):
        self.params = params
        self.fps = float(fps)

    def update(self, height: np.ndarray, position: np.ndarray, prev_flags: np.ndarray | None,
               prev_position: np.ndarray | None) -> np.ndarray:
        """Flags ``(F,)`` for heights ``(F,)`` and positions ``(F, 3)`` of this frame."""
        p = self.params
        if prev_position is None:
            speed = np.zeros(len(height))
        else:
            speed = np.linalg.norm((position - prev_position)[:, :2], axis=-1) * self.fps
        prev = np.zeros(len(height), dtype=bool) if prev_flags is None else prev_flags
        enter = (height < p.height) & (speed < p.speed)
        leave = (height > p.release_height) | (speed > p.release_speed)
        return np.where(prev, ~leave, enter)
