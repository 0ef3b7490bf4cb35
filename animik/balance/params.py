"""Physical data of seed E's two-mass model and the MPC's settings, validated.

The two point masses: base CoM ``b`` (mass ``m_b`` at constant height ``l``) and upper-body CoM
``c`` (mass ``m_c`` at constant height ``h``), on flat ground ``z = 0`` (seed E, "Model").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import AnimikError

GRAVITY = 9.81
"""m/s², the value animik uses everywhere (README, "World")."""


class BalanceError(AnimikError, ValueError):
    """Bad balance-controller input: a negative weight, ``N < 1``, ``T <= 0``, a rig without data."""


_RIG_KEYS = ("wheel_contacts", "support_radius", "base_mass", "upper_body_mass", "base_com_height",
             "upper_body_com_height", "max_base_speed", "max_base_acceleration")


def _positive(name: str, value: float, allow_zero: bool = False) -> float:
    v = float(value)
    ok = (v >= 0.0) if allow_zero else (v > 0.0)
    if not (math.isfinite(v) and ok):
        raise BalanceError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, got {value!r}")
    return v


@dataclass(frozen=True)
class RobotModel:
    """Seed E's two-mass robot.

    Attributes:
        base_mass: ``m_b``, kg.
        body_mass: ``m_c``, kg (everything above the base).
        base_height: ``l``, height of the base CoM, m.
        body_height: ``h``, height of the upper-body CoM, m.
        support_radius: ``r``, radius of the circle about ``b`` inside the wheels' support, m.
        wheel_contacts: (K, 2) wheel contact points in the base frame (x forward, y left), m;
            their convex hull is the true support polygon.
        max_speed: base speed bound of R2 (per axis), m/s.
        max_acceleration: base acceleration bound of R2 (per axis), m/s².
        body_offset: ``k_xy`` of R3, bound of ``|c − b|`` per axis, m (0: ``c = b``).
        gravity: m/s².
    """

    base_mass: float
    body_mass: float
    base_height: float
    body_height: float
    support_radius: float
    wheel_contacts: np.ndarray = field(repr=False)
    max_speed: float
    max_acceleration: float
    body_offset: float = 0.10
    gravity: float = GRAVITY

    def __post_init__(self):
        for name in ("base_mass", "body_mass", "base_height", "body_height", "support_radius",
                     "max_speed", "max_acceleration", "gravity"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))
        object.__setattr__(self, "body_offset", _positive("body_offset", self.body_offset, True))
        w = np.array(self.wheel_contacts, dtype=float)
        if w.ndim != 2 or w.shape[0] < 3 or w.shape[1] not in (2, 3) or not np.isfinite(w).all():
            raise BalanceError(f"wheel_contacts must be (K >= 3, 2 or 3) finite points, got shape "
                               f"{w.shape}")
        w = np.ascontiguousarray(w[:, :2])
        w.setflags(write=False)
        object.__setattr__(self, "wheel_contacts", w)

    @property
    def total_mass(self) -> float:
        return self.base_mass + self.body_mass

    @property
    def com_height(self) -> float:
        """Height of the whole robot's CoM, m."""
        return (self.base_mass * self.base_height + self.body_mass * self.body_height) / self.total_mass

    def replace(self, **changes) -> RobotModel:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_rig(cls, skel, body_offset: float = 0.10) -> RobotModel:
        """The model from a rig's ``meta`` (``wheeled20`` carries it).

        Raises:
            BalanceError: the rig lacks one of the balance keys (the message names it).
        """
        meta = skel.meta
        missing = [k for k in _RIG_KEYS if k not in meta]
        if missing:
            raise BalanceError(f"rig {skel.name!r} has no balance data: meta lacks {missing} "
                               f"(wheeled20 carries them)")
        return cls(base_mass=meta["base_mass"], body_mass=meta["upper_body_mass"],
                   base_height=meta["base_com_height"], body_height=meta["upper_body_com_height"],
                   support_radius=meta["support_radius"],
                   wheel_contacts=np.array(meta["wheel_contacts"], dtype=float),
                   max_speed=meta["max_base_speed"], max_acceleration=meta["max_base_acceleration"],
                   body_offset=body_offset)


@dataclass(frozen=True)
class Weights:
    """Objective weights ``α1…α5`` (seed E, ``Q = Σ αi Qi``) and ``ζ_f``.

    Attributes:
        velocity: α1, O1 base velocity tracking.
        position: α2, O2 base position tracking.
        robustness: α3, O3 robustness (``ζ_f ‖p − b‖² + (1 − ζ_f) ‖c − b‖²``).
        jerk: α4, O4 jerk minimisation.
        stability: α5, O5 numerical stability (Tikhonov term on all of ``X``).
        zeta_f: ``ζ_f`` in [0, 1].
    """

    velocity: float = 100.0
    position: float = 100.0
    robustness: float = 10.0
    jerk: float = 1e-4
    stability: float = 1e-6
    zeta_f: float = 0.5

    def __post_init__(self):
        for i, name in enumerate(("velocity", "position", "robustness", "jerk", "stability")):
            v = float(getattr(self, name))
            if not (math.isfinite(v) and v >= 0.0):
                raise BalanceError(f"weight alpha{i + 1} ({name}) must be >= 0 and finite, got "
                                   f"{getattr(self, name)!r}")
            object.__setattr__(self, name, v)
        z = float(self.zeta_f)
        if not (0.0 <= z <= 1.0):
            raise BalanceError(f"zeta_f must be in [0, 1], got {self.zeta_f!r}")
        object.__setattr__(self, "zeta_f", z)


def check_horizon(period: float, steps: int) -> tuple[float, int]:
    """Validate the sample period ``T`` (s) and the number of samples ``N``."""
    if isinstance(steps, bool) or int(steps) != steps or int(steps) < 1:
        raise BalanceError(f"N (horizon samples) must be an integer >= 1, got {steps!r}")
    t = float(period)
    if not (math.isfinite(t) and t > 0.0):
        raise BalanceError(f"T (sample period) must be > 0 s, got {period!r}")
    return t, int(steps)
