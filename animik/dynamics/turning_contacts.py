"""The contact detector's speed of a **turning** foot: the speed of its pivot, not of its mean.

A pirouette turns on the ball of one foot at ~2 turns/s. The detector
(:func:`animik.semantics.contacts.detect_contacts`) lets a foot go when its horizontal speed
passes ``release_speed`` (0.6 m/s), and :func:`animik.dynamics.clip.detect_clip_contacts` gave
it the speed of the mean of the area's points: on a sole turning at 12 rad/s about its ball,
that mean circles 5-10 cm away and moves at ~1 m/s although the point the foot stands on
stands still. Measured on the raw cmu_daz pirouette (docs/dynamics.md 5j, "The raw
pirouette"): the spinning foot's mean 0.5-2 m/s, its pivot 0-0.6 m/s; the check called the
whole spin a flight.

Here, on frames where an area turns about the vertical faster than :data:`TURN_RATE` (averaged
over :data:`TURN_WINDOW`), its
speed is the speed of its **pivot** — the point of its footprint (the convex hull of its points
on the floor plane) that moves least under the fitted planar rigid motion (2-D Kabsch between
the frames before and after, as :func:`animik.dynamics.plant.support_motion_2d`; the pivot is
the instantaneous centre when it lies under the sole). A foot that slides or is carried still
moves its pivot (a translation moves every point alike), so only a turn in place is kept in
contact. Every other frame keeps the mean's speed bit for bit: walking feet turn about the
vertical at 2-7 rad/s averaged (the body95 retargets' and the other raw clips' checks are
unchanged bit for bit).
"""

from __future__ import annotations

import numpy as np

from . import _support

#: rad/s about the vertical, averaged over :data:`TURN_WINDOW`: a pirouette's foot turns at
#: 12-15 (raw and body95); walking feet reach 2-3.3, raw Mixamo's 5.4, louise's pedalling feet 6.8
#: (their projected soles change shape as the feet pitch: the fitted turn flickers to 4-7 rad/s
#: over a tenth of a second, which the window averages away)
TURN_RATE = 8.0
TURN_WINDOW = 0.25  # s


def _turns(X: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per frame the least-squares planar turn ``th (T,)`` between the frames before and after
    (central; one-sided at the ends), the centroids ``c (T, 2)`` and the frame pairs."""
    T = X.shape[0]
    c = X.mean(axis=1)
    i0 = np.r_[0, np.arange(T - 2), T - 2]
    i1 = np.r_[1, np.arange(2, T), T - 1]
    a, b = X[i0] - c[i0, None], X[i1] - c[i1, None]
    cross = (a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]).sum(axis=1)
    dot = (a * b).sum(axis=(1, 2))
    return np.arctan2(cross, dot), c, i0, i1


def turning_speed(points: np.ndarray, point_area: np.ndarray, n_areas: int, fps: float,
                  speed: np.ndarray, turn_rate: float = TURN_RATE) -> np.ndarray:
    """The detector's horizontal speed per area, with turning frames given their pivot's speed.

    Args:
        points: ``(T, P, 3)`` world contact points, m.
        point_area: ``(P,)`` area of each point.
        n_areas: ``A``.
        fps: frames per second.
        speed: ``(T, A)`` m/s, the speed the detector would use (the mean's).
        turn_rate: rad/s; frames whose area turns slower keep ``speed``.

    Returns:
        ``(T, A)`` m/s: ``min(speed, |v_pivot|)`` where the area's turn rate averaged over
        :data:`TURN_WINDOW` exceeds ``turn_rate`` (a sustained turn, not a flicker), else
        ``speed``.
    """
    out = np.array(speed, dtype=float, copy=True)
    T = points.shape[0]
    if T < 2:
        return out
    for a in range(n_areas):
        X = np.ascontiguousarray(points[:, point_area == a, :2], dtype=float)
        if X.shape[1] < 2:
            continue
        th, c, i0, i1 = _turns(X, fps)
        w = th / ((i1 - i0) / fps)
        n = max(int(round(TURN_WINDOW * fps)), 1)
        sustained = np.abs(np.convolve(w, np.ones(n) / n, mode="same")) > turn_rate
        hull = np.empty((X.shape[1], 2))
        near = np.empty(2)
        for t in np.flatnonzero(sustained & (np.abs(th) > 1e-9)):
            co, si = np.cos(th[t]), np.sin(th[t])
            R = np.array([[co, -si], [si, co]])
            r = np.linalg.solve(np.eye(2) - R, c[i1[t]] - R @ c[i0[t]])  # the fixed point
            k = _support.hull(X[t], hull)
            if k == 0:
                continue
            _support.signed_distance(hull[:k], k, r[0], r[1], near)
            v = abs(w[t]) * float(np.hypot(*(near - r)))  # |w J (pivot - r)|
            out[t, a] = min(out[t, a], v)
    return out
