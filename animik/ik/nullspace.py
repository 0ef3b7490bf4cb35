"""Null-space tasks of feedback IK (seed A, eqs 9f–9j): joint-limit avoidance, reference poses.

A null-space task asks for a joint motion ``dq0`` that should not disturb the effectors. For a
joint ``k`` with a desired value ``bq(k)``::

    dq0(k) = gain · (bq(k) − q(k)),   gain > 0                      (seed A)

FIK removes the part of ``dq0`` that would move the effectors with a second filter, without a
pseudo-inverse::

    bdq   = V Jᵀ(q) P bz                                             (9f)
    bz   ← bz + h (A bz − J(q) bdq) + h J(q) dq0                     (9j)
    dq_full = dq − bdq + dq0

At the filter's fixed point ``J bdq = J dq0``: ``dq0 − bdq`` moves no effector. Reconstruction
choices (docs/fik.md): ``V`` appears in 9f (the source writes ``Jᵀ P bz``) so that ``bdq``
cancels ``J dq0`` exactly when ``P = (J V Jᵀ)⁻¹`` with per-DoF gains; the bz filter uses
``h = 1`` and ``A = null_A`` (default 0, a pure integrator: with a stale or damped ``P`` the
integrator still drives the effector leak ``J (dq0 − bdq)`` to zero over the iterations, and
``bz`` is carried across frames in the solver state); bz is updated before ``bdq`` is taken
from it, so the cancellation matches this iteration's ``dq0``.

Tasks (solver options of ``solver="fik"`` / ``"fik_fixed"``; any number are summed):

* ``limits=True`` (default): ``bq`` = centre of each finite range, ``gain = limit_gain``,
  active in the outer ``limit_margin`` fraction of each half-range (quadratic ramp; the source
  centres everywhere, ``limit_margin >= 1``). Independently of it every iterate is projected
  into the limits and a DoF on a limit is frozen (its V zeroed) while the step pushes outward:
  **no returned pose is ever outside the limits**.
* ``reference=bq`` (an ``(n,)`` pose or ``{dof name: value}``: the rest pose, a value the user
  holds, a source-motion frame when retargeting), ``reference_gain``, ``reference_weights``
  (per DoF, ``(n,)`` or ``{dof: weight}``; default 1 for the DoFs the reference names). With a
  reference the solver iterates until the null-space motion ``max |dq0 − bdq|`` is below
  ``null_tol`` as well as the effectors being within tolerance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import OptionError, ValueRangeError
from ..skeleton import Skeleton
from .options import check_real, per_dof


def limit_centre_halfwidth(skel: Skeleton) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half-width of every DoF range (``half = 0`` where a limit is infinite).

    Returns:
        ``(centre (n,), half (n,))`` in rad or m.
    """
    lo, hi = skel.lower, skel.upper
    fin = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
    centre = np.where(fin, 0.5 * (np.where(fin, lo, 0.0) + np.where(fin, hi, 0.0)), 0.0)
    half = np.where(fin, 0.5 * (np.where(fin, hi, 0.0) - np.where(fin, lo, 0.0)), 0.0)
    return np.ascontiguousarray(centre), np.ascontiguousarray(half)


def reference_task(skel: Skeleton, reference: Any, gain: Any,
                   weights: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Validated reference pose task: ``(bq (n,), gain·weight (n,))`` or ``(None, None)``.

    Args:
        skel: the skeleton.
        reference: ``None``, an ``(n,)`` pose or ``{dof name: value}`` (rad / m). Values
            outside the limits are clipped into them (the task can only pull to a reachable
            value).
        gain: ``reference_gain``, 1/iteration, in (0, 1].
        weights: ``None``, ``(n,)`` or ``{dof name: weight}`` (>= 0).

    Raises:
        ShapeError, ValueRangeError, OptionError: bad shapes, values or option values (the
            message names the option).
        UnknownNameError: unknown DoF names (valid names listed).
    """
    if reference is None:
        if weights is not None:
            raise OptionError("reference_weights given without a reference")
        return None, None
    g = check_real("reference_gain", gain, 0.0, 1.0, lo_open=True)
    if isinstance(reference, Mapping):
        bq, given = per_dof(skel, "reference", reference, 0.0)
    else:
        bq, given = per_dof(skel, "reference", reference, 0.0)
    bq = np.clip(bq, skel.lower, skel.upper)
    if weights is None:
        w = given.astype(float)
    else:
        w, _ = per_dof(skel, "reference_weights", weights, 0.0, positive=True)
        w = np.where(given, w, 0.0)
    if not np.any(w > 0):
        raise ValueRangeError("reference task has no DoF with a positive weight")
    return np.ascontiguousarray(bq), np.ascontiguousarray(g * w)


def rest_reference(skel: Skeleton) -> np.ndarray:
    """The rest pose as a reference ``bq`` ``(n,)`` (``reference=rest_reference(skel)``)."""
    return np.array(skel.rest_q, dtype=float)
