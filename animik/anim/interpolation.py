"""Interpolants of keyframe tracks (scalars and rotations), vectorised over query times.

Modes (:data:`MODES`), set per key for the segment that starts at that key:

* ``"linear"``: straight line between keys (scalars); **slerp** (constant angular velocity
  along the geodesic) for rotations. C0.
* ``"smooth"``: cubic Hermite segments with continuous first derivative (C1) at keys between
  smooth segments. Scalars use **monotone piecewise-cubic Hermite** tangents (Fritsch–Carlson
  with Fritsch–Butland weighted harmonic means, as SciPy's ``PchipInterpolator``, including
  its one-sided end tangents): no overshoot, so a sampled value never leaves the range of its
  two keys and extremes at keys are flat ("auto-clamped" handles). Rotations use a **cubic
  Hermite in the tangent space** of the segment's first key,
  ``R(u) = R_k exp(v(u))`` with ``v(0) = 0``, ``v(1) = log(R_kᵀ R_k+1)``, and end derivatives set
  from per-key body angular velocities ``ω_k`` through the inverse right Jacobian of SO(3), so
  the angular velocity is continuous at keys. ``ω_k`` is the three-point (Bessel /
  non-uniform Catmull–Rom) estimate ``(h_k d_k-1 + h_k-1 d_k) / (h_k-1 + h_k)`` from the mean
  angular velocities ``d`` of the neighbouring segments; at the first and last key the end
  has zero angular acceleration (``ω_0 = (3 d_0 − ω_1) / 2``, "natural"); with two keys the
  cubic is the slerp.
* ``"step"``: the key's value is held until the next key.

Times before the first key hold the first key's value, after the last key the last one's.
Sampling at a key time returns the key value exactly.
"""

from __future__ import annotations

import numpy as np

from ..rotations import inverse_right_jacobian, matrix_to_rotvec, rotvec_to_matrix

MODES: tuple[str, ...] = ("linear", "smooth", "step")
LINEAR, SMOOTH, STEP = 0, 1, 2
MODE_CODE = {m: i for i, m in enumerate(MODES)}


def locate(times: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segment index and local parameter of query times.

    Args:
        times: ``(K,)`` strictly increasing key times, K >= 2.
        t: ``(T,)`` query times.

    Returns:
        ``(seg (T,) int in [0, K-2], u (T,) in [0, 1])``; exactly 0 at ``times[seg]`` and 1 at
        or after the last key.
    """
    K = times.shape[0]
    seg = np.clip(np.searchsorted(times, t, side="right") - 1, 0, K - 2)
    h = times[seg + 1] - times[seg]
    u = np.clip((t - times[seg]) / h, 0.0, 1.0)
    u = np.where(t >= times[-1], 1.0, u)
    return seg, u


def pchip_slopes(times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Monotone cubic Hermite tangents (SciPy's PCHIP), ``(K, d)`` for values ``(K, d)``."""
    K = times.shape[0]
    y = np.asarray(values, dtype=float)
    if K < 2:
        return np.zeros_like(y)
    h = np.diff(times)[:, None]
    d = np.diff(y, axis=0) / h
    if K == 2:
        return np.repeat(d, 2, axis=0)
    m = np.zeros_like(y)
    w1 = 2 * h[1:] + h[:-1]
    w2 = h[1:] + 2 * h[:-1]
    same = (np.sign(d[:-1]) * np.sign(d[1:])) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        hm = (w1 + w2) / (w1 / d[:-1] + w2 / d[1:])
    m[1:-1] = np.where(same, hm, 0.0)
    m[0] = _pchip_end(h[0], h[1], d[0], d[1])
    m[-1] = _pchip_end(h[-1], h[-2], d[-1], d[-2])
    return m


def _pchip_end(h0, h1, d0, d1):
    m = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)
    m = np.where(np.sign(m) != np.sign(d0), 0.0, m)
    return np.where((np.sign(d0) != np.sign(d1)) & (np.abs(m) > np.abs(3 * d0)), 3 * d0, m)


def hermite(p0, p1, m0, m1, h, u):
    """Cubic Hermite ``p(u)`` on a segment of length ``h`` with end slopes ``m0, m1`` (per time)."""
    u2 = u * u
    u3 = u2 * u
    h00 = 2 * u3 - 3 * u2 + 1
    h10 = u3 - 2 * u2 + u
    h01 = -2 * u3 + 3 * u2
    h11 = u3 - u2
    return h00 * p0 + h10 * h * m0 + h01 * p1 + h11 * h * m1


def eval_scalar(times: np.ndarray, values: np.ndarray, modes: np.ndarray, t: np.ndarray,
                slopes: np.ndarray | None = None) -> np.ndarray:
    """Evaluate scalar tracks.

    Args:
        times: ``(K,)`` key times.
        values: ``(K, d)`` key values.
        modes: ``(K,)`` int mode codes (the last key's is unused).
        t: ``(T,)`` query times.
        slopes: ``(K, d)`` smooth tangents (default :func:`pchip_slopes`).

    Returns:
        ``(T, d)``.
    """
    K = times.shape[0]
    if K == 1:
        return np.repeat(values[:1], t.shape[0], axis=0)
    seg, u = locate(times, t)
    v0 = values[seg]
    v1 = values[seg + 1]
    uu = u[:, None]
    mode = modes[seg]
    out = v0 + uu * (v1 - v0)
    sm = mode == SMOOTH
    if np.any(sm):
        if slopes is None:
            slopes = pchip_slopes(times, values)
        h = (times[seg + 1] - times[seg])[:, None]
        cub = hermite(v0, v1, slopes[seg], slopes[seg + 1], h, uu)
        out = np.where(sm[:, None], cub, out)
    out = np.where((mode == STEP)[:, None], v0, out)
    # Exact key values at key times.
    out = np.where((u == 0.0)[:, None], v0, out)
    return np.where((u == 1.0)[:, None], v1, out)


# ---------------------------------------------------------------------------------- SO(3)
def relative_rotvecs(rots: np.ndarray) -> np.ndarray:
    """``log(R_kᵀ R_k+1)`` for consecutive keys, ``(K-1, 3)``."""
    return matrix_to_rotvec(np.swapaxes(rots[:-1], -1, -2) @ rots[1:])


def angular_velocities(times: np.ndarray, rots: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Per-key body angular velocities ``ω_k`` (rad/s) of the smooth rotation interpolant."""
    K = times.shape[0]
    if K < 2:
        return np.zeros((K, 3))
    if w is None:
        w = relative_rotvecs(rots)
    h = np.diff(times)[:, None]
    d = w / h
    if K == 2:
        return np.repeat(d, 2, axis=0)
    om = np.empty((K, 3))
    om[1:-1] = (h[1:] * d[:-1] + h[:-1] * d[1:]) / (h[1:] + h[:-1])
    om[0] = 1.5 * d[0] - 0.5 * om[1]
    om[-1] = 1.5 * d[-1] - 0.5 * om[-2]
    return om


_MAX_CUBIC_TURN = np.pi - 0.1  # larger segment turns: the inverse Jacobian is ill-conditioned


def eval_rotation(times: np.ndarray, rots: np.ndarray, modes: np.ndarray, t: np.ndarray,
                  cache: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evaluate a rotation track.

    Args:
        times: ``(K,)`` key times.
        rots: ``(K, 3, 3)`` key rotations.
        modes: ``(K,)`` mode codes.
        t: ``(T,)`` query times.
        cache: a dict to keep per-track precomputations in (relative rotation vectors,
            angular velocities).

    Returns:
        ``(rotations (T, 3, 3), seg (T,), u (T,))``.
    """
    K = times.shape[0]
    T = t.shape[0]
    if K == 1:
        return np.repeat(rots[:1], T, axis=0), np.zeros(T, dtype=np.int64), np.zeros(T)
    cache = {} if cache is None else cache
    if "w" not in cache:
        cache["w"] = relative_rotvecs(rots)
    w = cache["w"]
    seg, u = locate(times, t)
    mode = modes[seg]
    ws = w[seg]
    v = ws * u[:, None]  # slerp
    sm = mode == SMOOTH
    if np.any(sm):
        if "omega" not in cache:
            cache["omega"] = angular_velocities(times, rots, w)
            cache["jinv"] = inverse_right_jacobian(w)
        om = cache["omega"]
        h = (times[seg + 1] - times[seg])[:, None]
        m0 = om[seg]
        m1 = np.einsum("tij,tj->ti", cache["jinv"][seg], om[seg + 1])
        uu = u[:, None]
        cub = hermite(0.0, ws, m0, m1, h, uu)
        ok = sm & (np.linalg.norm(ws, axis=-1) < _MAX_CUBIC_TURN)
        v = np.where(ok[:, None], cub, v)
    out = rots[seg] @ rotvec_to_matrix(v)
    step = mode == STEP
    out = np.where(step[:, None, None], rots[seg], out)
    out = np.where((u == 0.0)[:, None, None], rots[seg], out)
    out = np.where((u == 1.0)[:, None, None], rots[seg + 1], out)
    return out, seg, u
