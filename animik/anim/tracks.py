"""Clip building blocks: joint tracks, effector tracks, IK settings and their validation.

:class:`~animik.anim.clip.Clip` holds these; :mod:`animik.anim.sampling` evaluates them. Conventions
as in :mod:`animik.anim.clip`: times in s from 0, SI values, read-only arrays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import AnimikError, UnknownNameError, names_hint
from ..skeleton import Skeleton, freeze
from .interpolation import MODE_CODE, MODES

#: Two key times closer than this (s) are the same key.
TIME_EPS = 1e-7


class ClipError(AnimikError, ValueError):
    """A clip cannot be built, edited, sampled or exported; the message names the clip."""


def _ro(a: Any) -> np.ndarray:
    out = np.array(a, dtype=float)
    out.setflags(write=False)
    return out


def _modes(interpolation: str | Sequence[str], K: int, where: str) -> tuple[str, ...]:
    if isinstance(interpolation, str):
        interpolation = (interpolation,) * K
    modes = tuple(str(m) for m in interpolation)
    if len(modes) != K:
        raise ClipError(f"{where}: interpolation must be one mode or {K} modes (one per key), "
                        f"got {len(modes)}")
    for m in modes:
        if m not in MODE_CODE:
            raise ClipError(f"{where}: unknown interpolation {m!r}; expected one of {list(MODES)}")
    return modes


def _times(times: Any, where: str) -> np.ndarray:
    try:
        t = np.array(times, dtype=float)
    except (TypeError, ValueError):
        raise ClipError(f"{where}: times must be numbers, got {times!r}") from None
    if t.ndim != 1 or t.shape[0] == 0:
        raise ClipError(f"{where}: times must have shape (K,) with K >= 1, got {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ClipError(f"{where}: times contain NaN or infinite values")
    if t[0] < 0:
        raise ClipError(f"{where}: key times must be >= 0 s, got {t[0]!r}")
    if np.any(np.diff(t) <= TIME_EPS):
        raise ClipError(f"{where}: key times must be strictly increasing (more than {TIME_EPS} s "
                        "apart)")
    t.setflags(write=False)
    return t


def _array(v: Any, shape: tuple, where: str, what: str) -> np.ndarray:
    try:
        a = np.array(v, dtype=float)
    except (TypeError, ValueError):
        raise ClipError(f"{where}: {what} must be numbers") from None
    want = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    if a.shape != shape:
        raise ClipError(f"{where}: {what} must have shape {want}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0].tolist()
        raise ClipError(f"{where}: {what} contain NaN or infinite values (first at index {bad})")
    a.setflags(write=False)
    return a


def _tangents(v: Any, shape: tuple[int, int], where: str) -> np.ndarray | None:
    """Validated read-only ``(K, d)`` tangents (NaN: automatic), or None when all automatic."""
    if v is None:
        return None
    try:
        a = np.array(v, dtype=float)
    except (TypeError, ValueError):
        raise ClipError(f"{where}: tangents must be numbers (NaN for automatic)") from None
    if a.shape != shape:
        raise ClipError(f"{where}: tangents must have shape {shape} (one slope per key and DoF), "
                        f"got {a.shape}")
    if np.any(np.isinf(a)):
        raise ClipError(f"{where}: tangents must be finite slopes or NaN (automatic), got inf")
    if np.all(np.isnan(a)):
        return None
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class JointTrack:
    """Keys of all DoFs of one joint.

    Attributes:
        joint: joint name.
        times: ``(K,)`` key times, s, strictly increasing, >= 0.
        values: ``(K, d)`` DoF values (rad / m) in the joint's DoF order.
        interpolation: ``K`` modes (``"linear"``, ``"smooth"``, ``"step"``), each for the
            segment that starts at its key (a single string is broadcast).
        tangents: ``(K, d)`` edited slopes (DoF units per s) of smooth segments at the keys, NaN
            where automatic (the monotone PCHIP slope), or ``None`` (all automatic). A key's
            slope is shared by the segments on both sides, so the curve stays C1 there. Segments
            of a rotation group touching an edited tangent are interpolated per DoF (the graph
            editor's curves are then exactly what plays; see :mod:`animik.anim.sampling`).
    """

    joint: str
    times: np.ndarray
    values: np.ndarray
    interpolation: tuple[str, ...] | str = "linear"
    tangents: np.ndarray | None = None

    def __post_init__(self) -> None:
        where = f"track of joint {self.joint!r}"
        t = _times(self.times, where)
        try:
            v = np.array(self.values, dtype=float)
        except (TypeError, ValueError):
            raise ClipError(f"{where}: values must be numbers") from None
        if v.ndim != 2 or v.shape[0] != t.shape[0]:
            raise ClipError(f"{where}: values must have shape ({t.shape[0]}, n_joint_dofs) for "
                            f"{t.shape[0]} key times, got {v.shape}")
        v = _array(v, v.shape, where, "values")
        object.__setattr__(self, "joint", str(self.joint))
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "interpolation", _modes(self.interpolation, t.shape[0], where))
        object.__setattr__(self, "tangents", _tangents(self.tangents, v.shape, where))

    @property
    def n_keys(self) -> int:
        return int(self.times.shape[0])

    def take(self, keep: Any, times: Any = None) -> JointTrack:
        """The track with only the keys ``keep`` (indices or a boolean mask), tangents kept;
        ``times``: their new times (default: their own)."""
        idx = np.arange(self.n_keys)[keep]
        return JointTrack(self.joint, self.times[idx] if times is None else times, self.values[idx],
                          tuple(self.interpolation[i] for i in idx),
                          None if self.tangents is None else self.tangents[idx])

    def replace(self, **changes: Any) -> JointTrack:
        return replace(self, **changes)


@dataclass(frozen=True, eq=False)
class EffectorTrack:
    """Keyed IK targets of one effector site.

    Attributes:
        site: site name.
        times: ``(K,)`` key times, s.
        positions: ``(K, 3)`` target positions, m, world (Z up).
        rotations: ``(K, 3, 3)`` target rotations (world_from_site) or ``None`` (position only).
        interpolation: ``K`` modes (rotations: slerp / SO(3) cubic / step).
        pinned: a pin (the effector is held at the keyed positions) rather than a goal.
        weight: IK task weight (> 0).
    """

    site: str
    times: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray | None = None
    interpolation: tuple[str, ...] | str = "linear"
    pinned: bool = False
    weight: float = 1.0

    def __post_init__(self) -> None:
        where = f"effector track of site {self.site!r}"
        t = _times(self.times, where)
        K = t.shape[0]
        object.__setattr__(self, "site", str(self.site))
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "positions", _array(self.positions, (K, 3), where, "positions"))
        if self.rotations is not None:
            r = _array(self.rotations, (K, 3, 3), where, "rotations")
            err = np.abs(r @ np.swapaxes(r, -1, -2) - np.eye(3)).max(axis=(-1, -2))
            if np.any(err > 1e-6) or np.any(np.linalg.det(r) < 0):
                k = int(np.argmax((err > 1e-6) | (np.linalg.det(r) < 0)))
                raise ClipError(f"{where}: rotations[{k}] is not a rotation matrix")
            object.__setattr__(self, "rotations", r)
        object.__setattr__(self, "interpolation", _modes(self.interpolation, K, where))
        w = float(self.weight)
        if not (math.isfinite(w) and w > 0):
            raise ClipError(f"{where}: weight must be a positive number, got {self.weight!r}")
        object.__setattr__(self, "weight", w)
        object.__setattr__(self, "pinned", bool(self.pinned))

    @property
    def n_keys(self) -> int:
        return int(self.times.shape[0])

    def take(self, keep: Any, times: Any = None) -> EffectorTrack:
        """The track with only the keys ``keep`` (indices or a boolean mask); ``times``: their
        new times (default: their own)."""
        idx = np.arange(self.n_keys)[keep]
        return EffectorTrack(self.site, self.times[idx] if times is None else times,
                             self.positions[idx],
                             None if self.rotations is None else self.rotations[idx],
                             tuple(self.interpolation[i] for i in idx), self.pinned, self.weight)

    def replace(self, **changes: Any) -> EffectorTrack:
        return replace(self, **changes)


@dataclass(frozen=True)
class IKSettings:
    """How a clip with effector tracks is solved.

    Attributes:
        solver: a solver of :data:`animik.ik.SOLVERS` (default ``"fik"``).
        options: solver options (tolerances, gains...). ``state`` is managed frame to frame;
            for FIK, ``reference`` defaults to the pose sampled from the joint tracks.
        dofs: names of the joints or DoFs IK may move (``None``: all); the others follow the
            joint tracks. Needs ``solver="fik"`` or ``"fik_fixed"`` (per-DoF gains).
    """

    solver: str = "fik"
    options: Mapping[str, Any] = field(default_factory=dict)
    dofs: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.solver, str):
            raise ClipError(f"IK solver must be a solver name, got {self.solver!r}")
        object.__setattr__(self, "options", freeze(dict(self.options)))
        if self.dofs is not None:
            if isinstance(self.dofs, str):
                raise ClipError("IK dofs must be a list of joint or DoF names, got a string")
            object.__setattr__(self, "dofs", tuple(str(d) for d in self.dofs))


def _check_fps(fps: Any, name: str) -> float:
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(fps)) or float(fps) <= 0:
        raise ClipError(f"clip {name!r}: fps must be a positive number, got {fps!r}")
    return float(fps)


def _joint_index(skel: Skeleton, joint: str | int, where: str) -> int:
    return _named_index(skel, "joint", joint, where)


def _site_index(skel: Skeleton, site: str | int, where: str) -> int:
    return _named_index(skel, "site", site, where)


def _named_index(skel: Skeleton, kind: str, name: str | int, where: str) -> int:
    """Index of joint or site ``name``; the error names the clip (``where``) and lists the names."""
    index, names = ((skel.joint_index, skel.joint_names) if kind == "joint"
                    else (skel.site_index, skel.site_names))
    try:
        return index(name)
    except UnknownNameError:
        raise UnknownNameError(f"{where}: unknown {kind} {name!r} in skeleton {skel.name!r}; "
                               f"{kind}s are {names_hint(names)}") from None


def ik_dof_mask(skel: Skeleton, names: Iterable[str], where: str = "IK dofs") -> np.ndarray:
    """``(n,)`` bool of the DoFs named (DoF names, or joint names for all their DoFs)."""
    mask = np.zeros(skel.n_dof, dtype=bool)
    for nm in names:
        if nm in skel.dof_names:
            mask[skel.dof_index(nm)] = True
        elif nm in skel.joint_names:
            mask[list(skel.joint_dofs(nm))] = True
        else:
            raise UnknownNameError(f"{where}: {nm!r} is neither a joint nor a DoF of "
                                   f"{skel.name!r}; joints are {names_hint(skel.joint_names)}")
    return mask



def distinct_times(times: Iterable[np.ndarray]) -> np.ndarray:
    """Sorted key times (s) of several tracks, keys closer than :data:`TIME_EPS` merged."""
    ts = list(times)
    if not ts:
        return np.zeros(0)
    allt = np.sort(np.concatenate(ts))
    keep = np.concatenate([[True], np.diff(allt) > TIME_EPS])
    return allt[keep]


__all__ = ["TIME_EPS", "ClipError", "EffectorTrack", "IKSettings", "JointTrack", "distinct_times",
           "ik_dof_mask"]
