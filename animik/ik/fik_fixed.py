"""Feedback IK, fixed sampling interval (eqs 9a–9c): registry entry for ``solver="fik_fixed"``."""

from .fik import DEFAULTS_FIXED as DEFAULTS
from .fik import solve_fixed as solve

__all__ = ["DEFAULTS", "solve"]
