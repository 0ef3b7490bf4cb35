"""What plays the robot in the experiments: the two-mass model itself, with disturbances.

The plant integrates the jerks it is given exactly (constant over each period), sampled at
``substeps`` points per period so that the CoP is checked between the MPC's samples too. It is
not the controller's model: it adds

* wheel slip: the base (and with it the whole robot) realises only ``1 − slip`` of every commanded
  base jerk, so its velocity lags the plan (an odometry error: drift in open loop);
* ground noise: a seeded random velocity kick of standard deviation ``kick_std`` (m/s) on the whole
  robot each period;
* pushes: velocity impulses on the upper body at given times (on the whole robot when it is
  rigid, ``c = b``).

With ``full_body`` (:class:`animik.balance.full_body.FullBody`) the plant is the full rig: at
every sample it is posed from ``b``, ``c`` (upper-body CoM over ``c``) and the CoP recorded is
its full-body one (inverse dynamics); the two-mass model's CoP is kept as ``cop_model``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .cop import cop
from .full_body import FullBody
from .horizon import advance
from .params import BalanceError, RobotModel


@dataclass(frozen=True)
class Disturbances:
    """Disturbances of :class:`TwoMassPlant`.

    Attributes:
        slip: fraction of the commanded base jerk lost, in [0, 1).
        kick_std: standard deviation of the per-period velocity kick on the whole robot, m/s.
        pushes: ``((time_s, (dvx, dvy)), ...)`` velocity impulses on the upper body, m/s.
        seed: random seed of the kicks.
    """

    slip: float = 0.0
    kick_std: float = 0.0
    pushes: tuple = ()
    seed: int = 0

    def __post_init__(self):
        if not (0.0 <= float(self.slip) < 1.0):
            raise BalanceError(f"slip must be in [0, 1), got {self.slip!r}")
        if not (float(self.kick_std) >= 0.0):
            raise BalanceError(f"kick_std must be >= 0 m/s, got {self.kick_std!r}")


@dataclass
class PlantSamples:
    """Plant samples: ``t`` (S,), and (S, 2) ``base``, ``base_vel``, ``base_acc``, ``body``,
    ``body_acc``, ``cop`` (the plant's: the full body's with a full-body plant), ``cop_model``
    (the two-mass model's); (S,) ``com_error`` (full body: how far its upper-body CoM is from
    ``c``, 0 for the two-mass plant)."""

    t: list = field(default_factory=list)
    base: list = field(default_factory=list)
    base_vel: list = field(default_factory=list)
    base_acc: list = field(default_factory=list)
    body: list = field(default_factory=list)
    body_acc: list = field(default_factory=list)
    cop: list = field(default_factory=list)
    cop_model: list = field(default_factory=list)
    com_error: list = field(default_factory=list)  # m, |the rig's upper-body CoM - c|

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v, float) for k, v in self.__dict__.items()}


class TwoMassPlant:
    """The two-mass robot as a plant.

    Args:
        model: the robot.
        disturbances: see :class:`Disturbances`.
        rigid: the upper body is carried rigidly (``c = b``, the one-mass experiment).
        base: (2, 3) initial base state (rows x, y; columns pos, vel, acc); default at rest at 0.
        full_body: pose the rig at every sample and record its full-body CoP (see above).
    """

    def __init__(self, model: RobotModel, disturbances: Disturbances | None = None,
                 rigid: bool = False, base: np.ndarray | None = None,
                 full_body: FullBody | None = None):
        self.model = model
        self.dist = disturbances or Disturbances()
        self.rigid = rigid
        self.base = np.zeros((2, 3)) if base is None else np.array(base, float)
        self.body = self.base.copy()
        self.t = 0.0
        self._rng = np.random.default_rng(self.dist.seed)
        self._pushed: set[int] = set()
        self.full_body = full_body
        self._jerks = (np.zeros(2), np.zeros(2))  # (body, base) of the current substep

    def cop(self) -> np.ndarray:
        return cop(self.model, self.base[:, 0], self.base[:, 2], self.body[:, 0], self.body[:, 2])

    def step(self, body_jerk: np.ndarray, base_jerk: np.ndarray, dt: float, substeps: int = 10,
             samples: PlantSamples | None = None) -> None:
        """Advance ``dt`` seconds under constant jerks (2,) each; append samples (not the start)."""
        ub = np.asarray(base_jerk, float) * (1.0 - self.dist.slip)
        uc = ub if self.rigid else np.asarray(body_jerk, float) - self.dist.slip * np.asarray(base_jerk)
        h = dt / substeps
        self._jerks = (uc, ub)
        for _ in range(substeps):
            self.base = advance(self.base, ub, h)
            self.body = advance(self.body, uc, h)
            self.t += h
            if samples is not None:
                self._record(samples)
        kick = self._rng.normal(0.0, self.dist.kick_std, 2) if self.dist.kick_std else np.zeros(2)
        self.base[:, 1] += kick
        self.body[:, 1] += kick
        for i, (when, dv) in enumerate(self.dist.pushes):
            if i not in self._pushed and self.t >= when - 1e-9:
                self._pushed.add(i)
                self.body[:, 1] += np.asarray(dv, float)
                if self.rigid:
                    self.base[:, 1] += np.asarray(dv, float)

    def _record(self, s: PlantSamples) -> None:
        s.t.append(self.t)
        s.base.append(self.base[:, 0].copy())
        s.base_vel.append(self.base[:, 1].copy())
        s.base_acc.append(self.base[:, 2].copy())
        s.body.append(self.body[:, 0].copy())
        s.body_acc.append(self.body[:, 2].copy())
        p = self.cop()
        s.cop_model.append(p)
        err = 0.0
        if self.full_body is not None:
            p, _ = self.full_body.cop(self.body, self.base, *self._jerks)
            err = self.full_body.residual
        s.cop.append(p)
        s.com_error.append(err)
