"""Validation of solver options: scalars in a range, choices, per-DoF arrays or mappings.

Shared by the solvers (:mod:`animik.ik.fik`) and their null-space tasks
(:mod:`animik.ik.nullspace`); it imports no solver, so both can use it. Errors follow the
package's taxonomy (:mod:`animik.errors`): a bad scalar option or choice is an
:class:`~animik.errors.OptionError`, a per-DoF array of the wrong shape a
:class:`~animik.errors.ShapeError`, NaN / infinite or negative per-DoF values a
:class:`~animik.errors.ValueRangeError`, an unknown DoF name an
:class:`~animik.errors.UnknownNameError`; each message names the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import OptionError, ShapeError, UnknownNameError, ValueRangeError, names_hint
from ..skeleton import Skeleton


def check_real(name: str, value: Any, lo: float | None = None, hi: float | None = None,
               lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real option within ``[lo, hi]`` (``(`` / ``)`` where open), as a float.

    Raises:
        OptionError: not a number (a bool is not), not finite, or outside the range.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a number, got {value!r}") from None
    bad = not np.isfinite(v)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        bad = True
    if hi is not None and (v > hi or (hi_open and v == hi)):
        bad = True
    if bad or isinstance(value, bool):
        lb = "(" if lo_open else "["
        rb = ")" if hi_open else "]"
        rng = f"{lb}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{rb}"
        raise OptionError(f"{name} must be a finite number in {rng}, got {value!r}")
    return v


def check_choice(name: str, value: Any, choices) -> str:
    """One of ``choices`` (strings), else an :class:`OptionError` listing them."""
    if not isinstance(value, str) or value not in choices:
        raise OptionError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def per_dof(skel: Skeleton, name: str, value: Any, default: float,
            positive: bool = False, allow_zero: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """An ``(n,)`` per-DoF option given as an array or ``{dof name: value}``.

    Returns:
        ``(values (n,), given (n,) bool)`` — ``given`` marks the DoFs named in a mapping (all
        True for an array).

    Raises:
        ShapeError: not an array of numbers, or the wrong length.
        ValueRangeError: non-finite or (``positive``) negative (or zero) values.
        OptionError: a mapping value that is not a finite number.
        UnknownNameError: an unknown DoF name (valid names listed).
    """
    n = skel.n_dof
    out = np.full(n, float(default))
    given = np.zeros(n, dtype=bool)
    if isinstance(value, Mapping):
        for key, val in value.items():
            try:
                i = skel.dof_index(key)
            except (UnknownNameError, KeyError, IndexError):
                raise UnknownNameError(
                    f"{name}: unknown DoF {key!r}; DoFs of {skel.name!r} are "
                    f"{names_hint(skel.dof_names)}") from None
            out[i] = check_real(f"{name}[{key!r}]", val)
            given[i] = True
    else:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"{name} must be an array of shape ({n},) or a mapping of DoF name "
                             f"to value, got {type(value).__name__}") from None
        if arr.shape != (n,):
            raise ShapeError(f"{name} must have shape ({n},) (DoFs of {skel.name!r}) or be a "
                             f"mapping of DoF name to value, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueRangeError(f"{name} contains NaN or infinite values")
        out[:] = arr
        given[:] = True
    if positive:
        bad = (out < 0) | ((out == 0) & (not allow_zero))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueRangeError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, "
                                  f"got {out[i]!r} for DoF {skel.dof_names[i]!r}")
    return out, given
