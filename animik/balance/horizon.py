"""Piecewise-constant jerk over a horizon: the lower-triangular relations of seed E.

Per axis and per mass the state is ``s = (x, ẋ, ẍ)`` and the control is the jerk ``u`` held over
one period ``T`` (a third-order polynomial trajectory, so acceleration and the CoP are
continuous). One period (exact for constant jerk)::

    s_{k+1} = A s_k + B u_k,   A = [[1, T, T²/2], [0, 1, T], [0, 0, 1]],   B = [T³/6, T²/2, T]

Over ``N`` periods the samples ``k = 1..N`` stack as ``X = P_s s_0 + P_u U`` with ``P_u``
lower-triangular (seed E's "explicit Euler relations"). Entry ``(k, j)`` of ``P_u`` with
``i = k − 1 − j ≥ 0`` is ``T³(1 + 3i + 3i²)/6`` (position), ``T²(1 + 2i)/2`` (velocity), ``T``
(acceleration).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import check_horizon


def step_matrices(period: float) -> tuple[np.ndarray, np.ndarray]:
    """``A`` (3, 3) and ``B`` (3,) of one period ``T`` (s) of constant jerk."""
    t, _ = check_horizon(period, 1)
    a = np.array([[1.0, t, t * t / 2], [0.0, 1.0, t], [0.0, 0.0, 1.0]])
    b = np.array([t ** 3 / 6, t * t / 2, t])
    return a, b


@dataclass(frozen=True)
class Horizon:
    """The horizon matrices for ``N`` samples of period ``T``.

    Attributes:
        period: ``T``, s.
        steps: ``N``.
        pos_s, vel_s, acc_s: (N, 3) maps from the initial state ``(x, ẋ, ẍ)``.
        pos_u, vel_u, acc_u: (N, N) lower-triangular maps from the jerks ``U``.
    """

    period: float
    steps: int
    pos_s: np.ndarray
    vel_s: np.ndarray
    acc_s: np.ndarray
    pos_u: np.ndarray
    vel_u: np.ndarray
    acc_u: np.ndarray

    @classmethod
    def build(cls, period: float, steps: int) -> Horizon:
        t, n = check_horizon(period, steps)
        k = np.arange(1, n + 1, dtype=float)
        ones, zeros = np.ones(n), np.zeros(n)
        pos_s = np.stack([ones, k * t, (k * t) ** 2 / 2], axis=1)
        vel_s = np.stack([zeros, ones, k * t], axis=1)
        acc_s = np.stack([zeros, zeros, ones], axis=1)
        i = np.subtract.outer(np.arange(n), np.arange(n)).astype(float)  # k-1-j for row k, col j
        lower = i >= 0
        pos_u = np.where(lower, t ** 3 * (1 + 3 * i + 3 * i * i) / 6, 0.0)
        vel_u = np.where(lower, t * t * (1 + 2 * i) / 2, 0.0)
        acc_u = np.where(lower, t, 0.0)
        mats = [pos_s, vel_s, acc_s, pos_u, vel_u, acc_u]
        for m in mats:
            m.setflags(write=False)
        return cls(t, n, *mats)

    def predict(self, state: np.ndarray, jerks: np.ndarray) -> np.ndarray:
        """Samples ``k = 1..N`` of position, velocity, acceleration: (N, 3).

        Args:
            state: (3,) initial ``(x, ẋ, ẍ)``.
            jerks: (N,) jerks, one per period.
        """
        s = np.asarray(state, float)
        u = np.asarray(jerks, float)
        return np.stack([self.pos_s @ s + self.pos_u @ u, self.vel_s @ s + self.vel_u @ u,
                         self.acc_s @ s + self.acc_u @ u], axis=1)


def advance(state: np.ndarray, jerk: np.ndarray | float, dt: float) -> np.ndarray:
    """Exact state after ``dt`` seconds of constant jerk; ``state`` (..., 3), ``jerk`` (...)."""
    s = np.asarray(state, float)
    u = np.asarray(jerk, float)
    x, v, a = s[..., 0], s[..., 1], s[..., 2]
    return np.stack([x + v * dt + a * dt * dt / 2 + u * dt ** 3 / 6,
                     v + a * dt + u * dt * dt / 2, a + u * dt], axis=-1)
