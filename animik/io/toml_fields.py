"""Checks of parsed TOML values, shared by the readers of TOML documents (scenes, clips).

A reader subclasses :class:`FieldReader` and provides :meth:`FieldReader.fail`, which builds the
error that names its file or clip; the checks then raise it with the offending key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import AnimikError


class FieldReader:
    """Type checks of TOML values with errors that name where the value sits."""

    def fail(self, where: str, problem: str) -> AnimikError:  # pragma: no cover - abstract
        """The error to raise for ``problem`` at ``where`` (a key path such as ``[scene] rig``)."""
        raise NotImplementedError

    def table(self, v: Any, where: str, allowed: set[str]) -> Mapping:
        """``v`` if it is a table whose keys are all in ``allowed``."""
        if not isinstance(v, Mapping):
            raise self.fail(where, f"must be a table, got {type(v).__name__}")
        unknown = sorted(set(v) - allowed)
        if unknown:
            raise self.fail(where, f"unknown key{'s' if len(unknown) > 1 else ''} "
                                   f"{', '.join(map(repr, unknown))}; allowed: {sorted(allowed)}")
        return v

    def number(self, v: Any, where: str) -> float:
        """``v`` as a float if it is a finite number (not a bool)."""
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.fail(where, f"must be a finite number, got {v!r}")
        return float(v)


__all__ = ["FieldReader"]
