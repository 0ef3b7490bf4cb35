"""Balance of a humanoid on an omnidirectional wheeled base: seed E's two-mass linear MPC.

Numeric only (no GL). Pieces: :mod:`.params` (robot model, weights), :mod:`.horizon` (jerk ->
position/velocity/acceleration over the horizon), :mod:`.cop` (CoP, octagon, support, ζ),
:mod:`.mpc` (the QP, one cycle), :mod:`.qp` (solvers), :mod:`.plant` (the two-mass plant with
disturbances), :mod:`.experiments` (seed E's four experiments). Docs: ``docs/balance.md``.
"""

from .cop import cop, octagon_normals, support_margin, support_polygon, zeta
from .horizon import Horizon, advance, step_matrices
from .mpc import BalanceMPC, MPCResult
from .params import BalanceError, RobotModel, Weights
from .plant import Disturbances, TwoMassPlant

__all__ = ["BalanceError", "BalanceMPC", "Disturbances", "Horizon", "MPCResult", "RobotModel",
           "TwoMassPlant", "Weights", "advance", "cop", "octagon_normals", "step_matrices",
           "support_margin", "support_polygon", "zeta"]
