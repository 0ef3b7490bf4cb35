"""Environment supports as data: contacts that are not the floor (docs/dynamics.md section 5f).

A **support** is a named contact area touching one body part (or fixed in the world), with a
normal and a friction coefficient, active over stated frames:

- ``seat`` -- a patch under the pelvis: pushes only (along its normal), friction ``mu``;
- ``foot_rest`` (``pedal``: the same physics, the name says it moves) -- the sole on a surface
  that may move with it: pushes only along the sole normal, friction ``mu``;
- ``hold`` -- a hand grip: the force may push or pull, each world component at most
  ``max_force`` N (a box); no moment is transmitted (a conservative grip).

Points and the normal are given in the frame of ``joint`` (``"world"``: fixed in the world).
A support on a body part moves with it: the check cannot ask whether such a seat stays put
(``animik feasibility`` reports its travel and warns when a body-frame seat or foot rest
travels). A **world** support may name the body part resting on it (``on``, with ``on_points``
in that part's frame, one per support point): it is then a fixed surface the body touches,
like the floor -- a point pushes only while the body's point is within ``tolerance`` m of the
surface along the normal (and within ``slide`` m of the support point across it), at the body
point projected onto the surface; a body point more than ``tolerance`` *through* the surface is
infeasible (reason ``through support``); a world hold grips only while the hand is within
``tolerance`` of it, at the hand. ``animik filter --supports auto`` emits the seat, the
handlebar grips and still foot rests this way (:func:`animik.dynamics.offfloor.infer_supports`).
On frames where a support is active the contact-wrench-cone check (:mod:`animik.dynamics.cone`)
replaces the ZMP check.

JSON file (``--supports FILE.json``)::

    {"supports": [
      {"name": "saddle", "kind": "seat", "joint": "pelvis",
       "points": [[0.05, 0.08, -0.1], ...], "normal": [0, 0, 1], "mu": 0.7,
       "frames": [[859, 2997]]},
      {"name": "saddle_w", "kind": "seat", "joint": "world", "points": [[0.3, -0.5, 1.0]],
       "normal": [0, 0, 1], "on": "pelvis", "on_points": [[0, 0, -0.1]], "tolerance": 0.03},
      {"name": "left_grip", "kind": "hold", "joint": "l_wrist", "points": [[0, 0, 0]],
       "max_force": 300}
    ]}

``frames``: inclusive ``[first, last]`` ranges (absent: the whole clip); ``mu`` defaults to the
check's; ``normal`` is required for seats and foot rests; ``on`` / ``on_points`` only with
``"joint": "world"``; ``tolerance`` (default 0.03 m) and ``slide`` (default 0.1 m) with ``on``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..errors import AnimikError, names_hint
from ..kinematics import forward_kinematics
from ..skeleton import Skeleton

KINDS = ("seat", "foot_rest", "pedal", "hold")
PUSH_KINDS = ("seat", "foot_rest", "pedal")
_KEYS = {"name", "kind", "joint", "points", "normal", "mu", "max_force", "frames", "on",
         "on_points", "tolerance", "slide"}
#: m, default contact distance of a world support the body rests on (along its normal)
TOLERANCE = 0.03
#: m, default reach across the normal between a body point and its support point
SLIDE = 0.10


class SupportError(AnimikError, ValueError):
    """A malformed support (the message names the key)."""


@dataclass(frozen=True)
class Support:
    """One support (module docstring).

    Attributes:
        name: unique name. kind: one of :data:`KINDS`.
        joint: index of the body part it touches, ``-1`` for a support fixed in the world.
        points: ``(k, 3)`` m in the joint's frame (the world's when ``joint == -1``).
        normal: ``(3,)`` unit, same frame (pushing kinds; ignored by holds).
        mu: friction coefficient (pushing kinds). max_force: N per world axis (holds).
        frames: ``((first, last), ...)`` inclusive frame ranges, or ``None`` (every frame).
        body: for a world support (``joint == -1``), the body part resting on it (``-1``: none,
            the support always touches).
        body_points: ``(k, 3)`` m in ``body``'s frame, the body's point on each support point.
        tolerance: m, contact distance along the normal (holds: the hand's distance).
        slide: m, the largest distance across the normal between a body point and its support
            point (beyond: off the support).
    """

    name: str
    kind: str
    joint: int
    points: np.ndarray
    normal: np.ndarray
    mu: float
    max_force: float
    frames: tuple[tuple[int, int], ...] | None = None
    body: int = -1
    body_points: np.ndarray | None = None
    tolerance: float = TOLERANCE
    slide: float = SLIDE

    @property
    def touches(self) -> bool:
        """A world support with a body part resting on it (contact decided by distance)."""
        return self.joint < 0 and self.body >= 0

    @property
    def grips(self) -> bool:
        return self.kind == "hold"

    def active(self, T: int) -> np.ndarray:
        """``(T,)`` bool: the frames where the support is active."""
        if self.frames is None:
            return np.ones(T, dtype=bool)
        m = np.zeros(T, dtype=bool)
        for a, b in self.frames:
            m[max(0, a):min(T, b + 1)] = True
        return m

    def to_dict(self, skel: Skeleton) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name, "kind": self.kind,
            "joint": "world" if self.joint < 0 else skel.joint_names[self.joint],
            "points": np.round(self.points, 5).tolist()}
        if self.grips:
            d["max_force"] = round(self.max_force, 3)
        else:
            d["normal"] = np.round(self.normal, 6).tolist()
            d["mu"] = self.mu
        if self.frames is not None:
            d["frames"] = [[int(a), int(b)] for a, b in self.frames]
        if self.touches:
            d["on"] = skel.joint_names[self.body]
            d["on_points"] = np.round(self.body_points, 5).tolist()
            d["tolerance"] = self.tolerance
            d["slide"] = self.slide
        return d


class SupportFrames(NamedTuple):
    """Supports evaluated at the frames of a batch (world coordinates).

    Attributes:
        active: ``(B, S)`` bool per support.
        push_points, push_normals: ``(B, P, 3)`` points and unit normals of the pushing kinds.
        push_mu: ``(P,)``. push_support: ``(P,)`` int, the support of each point.
        grip_points: ``(B, H, 3)``. grip_bound: ``(H,)`` N. grip_support: ``(H,)`` int.
        names: the supports' names.
        push_touch: ``(B, P)`` bool, the point touches (always, unless its support is a world
            surface with a body part on it: then the body point is within the tolerance).
        grip_touch: ``(B, H)`` bool, likewise for grips.
        sunk: ``(B, S)`` bool, a body point more than the tolerance through the support.
        gap: ``(B, P)`` m, the body point's distance from the surface along the normal (NaN
            where the support has no body part on it).
    """

    active: np.ndarray
    push_points: np.ndarray
    push_normals: np.ndarray
    push_mu: np.ndarray
    push_support: np.ndarray
    grip_points: np.ndarray
    grip_bound: np.ndarray
    grip_support: np.ndarray
    names: tuple[str, ...]
    push_touch: np.ndarray | None = None
    grip_touch: np.ndarray | None = None
    sunk: np.ndarray | None = None
    gap: np.ndarray | None = None


@dataclass(frozen=True)
class SupportSet:
    """The supports of a clip, and where they came from (``"auto"``, ``"file:..."``)."""

    supports: tuple[Support, ...]
    source: str = ""

    def __len__(self) -> int:
        return len(self.supports)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.supports)

    def active(self, T: int) -> np.ndarray:
        """``(T, S)`` bool."""
        return np.stack([s.active(T) for s in self.supports], axis=1) if self.supports \
            else np.zeros((T, 0), dtype=bool)

    def at(self, skel: Skeleton, q: np.ndarray, frames: np.ndarray | None = None,
           fk=None) -> SupportFrames:
        """World points and normals at poses ``q (B, n_dof)``; ``frames (B,)`` are their clip
        frame numbers (default ``0..B-1``) for the activity ranges; ``fk``: the poses' forward
        kinematics when the caller has it (the clip check: one pass for everything)."""
        B = q.shape[0]
        frames = np.arange(B) if frames is None else np.asarray(frames)
        T = int(frames.max()) + 1 if B else 0
        act = self.active(T)[frames] if B else np.zeros((0, len(self)), dtype=bool)
        if fk is None and self.supports:
            fk = forward_kinematics(skel, q)
        pp, pn, pm, ps, gp, gb, gs = [], [], [], [], [], [], []
        pt, gt, gap = [], [], []
        sunk = np.zeros((B, len(self)), dtype=bool)

        def body_world(s: Support) -> np.ndarray:
            R = fk.joint_rotations[:, s.body]
            return fk.joint_positions[:, s.body, None] + np.einsum("bij,kj->bki", R, s.body_points)

        for i, s in enumerate(self.supports):
            if s.joint < 0:
                pts = np.broadcast_to(s.points, (B,) + s.points.shape)
                nrm = np.broadcast_to(s.normal, (B, 3))
            else:
                R = fk.joint_rotations[:, s.joint]
                pts = fk.joint_positions[:, s.joint, None] + np.einsum("bij,kj->bki", R, s.points)
                nrm = R @ s.normal
            k = len(s.points)
            touch = np.ones((B, k), dtype=bool)
            g = np.full((B, k), np.nan)
            if s.touches:
                bw = body_world(s)  # (B, k, 3) the body's points
                d = bw - pts
                if s.grips:  # the hand holds the grip while it is at it, the force acts there
                    touch = np.linalg.norm(d, axis=2) <= s.tolerance
                    pts = bw
                else:  # a surface: like the floor, the body point projected onto it
                    g = d @ s.normal
                    across = np.linalg.norm(d - g[..., None] * s.normal, axis=2) <= s.slide
                    touch = across & (np.abs(g) <= s.tolerance)
                    sunk[:, i] = (across & (g < -s.tolerance)).any(axis=1)
                    pts = bw - g[..., None] * s.normal
            if s.grips:
                gp.append(pts)
                gb += [s.max_force] * k
                gs += [i] * k
                gt.append(touch)
            else:
                pp.append(pts)
                pn.append(np.broadcast_to(nrm[:, None], (B, k, 3)))
                pm += [s.mu] * k
                ps += [i] * k
                pt.append(touch)
                gap.append(g)
        z3 = np.zeros((B, 0, 3))
        z0 = np.zeros((B, 0), dtype=bool)
        return SupportFrames(act, np.concatenate(pp, axis=1) if pp else z3,
                             np.concatenate(pn, axis=1) if pn else z3, np.array(pm, dtype=float),
                             np.array(ps, dtype=np.int64), np.concatenate(gp, axis=1) if gp else z3,
                             np.array(gb, dtype=float), np.array(gs, dtype=np.int64), self.names,
                             np.concatenate(pt, axis=1) if pt else z0,
                             np.concatenate(gt, axis=1) if gt else z0, sunk & act,
                             np.concatenate(gap, axis=1) if gap else np.zeros((B, 0)))

    def resting(self, skel: Skeleton, point_joint: np.ndarray, point_area: np.ndarray,
                T: int) -> np.ndarray:
        """``(T, A)`` bool: contact area ``a`` (its points fixed to ``point_joint``, grouped by
        ``point_area``) rests on an active support at frame ``t`` -- the support's body part
        (its ``joint``, or ``body`` for a world support) is the area's first joint or below it
        (a foot rest or pedal under that foot; not a seat, whose pelvis is above every foot)."""
        A = int(point_area.max()) + 1 if len(point_area) else 0
        out = np.zeros((T, A), dtype=bool)
        act = self.active(T)
        for a in range(A):
            j0 = int(point_joint[np.flatnonzero(point_area == a)[0]])
            for i, s in enumerate(self.supports):
                part = s.body if s.joint < 0 else s.joint
                if part >= 0 and skel.joint_ancestor_mask[part, j0]:
                    out[:, a] |= act[:, i]
        return out

    def to_dict(self, skel: Skeleton) -> dict[str, Any]:
        return {"source": self.source, "supports": [s.to_dict(skel) for s in self.supports]}


def _finite_vec(v: Any, key: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise SupportError(f"{key} must be numbers, got {v!r}") from None
    if shape is not None and a.shape != shape:
        raise SupportError(f"{key} must have shape {shape}, got {a.shape}")
    if not np.isfinite(a).all():
        raise SupportError(f"{key} must be finite, got {v!r}")
    return a


def _positive(v: Any, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise SupportError(f"{key} must be a positive finite number, got {v!r}")
    return float(v)


def support_from_dict(d: Any, skel: Skeleton, mu: float, where: str = "support",
                      n_frames: int | None = None) -> Support:
    """One :class:`Support` from its JSON form (module docstring); errors name ``where.key``."""
    if not isinstance(d, Mapping):
        raise SupportError(f"{where} must be an object, got {type(d).__name__}")
    extra = set(d) - _KEYS
    if extra:
        raise SupportError(f"{where} has unknown keys {sorted(extra)}; allowed {sorted(_KEYS)}")
    name = d.get("name")
    if not isinstance(name, str) or not name:
        raise SupportError(f"{where}.name must be a non-empty string, got {name!r}")
    kind = d.get("kind")
    if kind not in KINDS:
        raise SupportError(f"{where}.kind must be one of {list(KINDS)}, got {kind!r}")
    jn = d.get("joint")
    if jn == "world":
        j = -1
    elif isinstance(jn, str) and jn in skel.joint_names:
        j = skel.joint_names.index(jn)
    else:
        raise SupportError(f"{where}.joint: unknown joint {jn!r} of {skel.name!r} (or \"world\"); "
                           f"joints are {names_hint(skel.joint_names)}")
    if "points" not in d:
        raise SupportError(f"{where}.points is required: [[x, y, z], ...] m in the joint's frame")
    pts = _finite_vec(d["points"], f"{where}.points")
    if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) == 0:
        raise SupportError(f"{where}.points must be a list of [x, y, z], got shape {pts.shape}")
    normal = np.array([0.0, 0.0, 1.0])
    mu_s, bound = float(mu), float("inf")
    if kind == "hold":
        if "max_force" not in d:
            raise SupportError(f"{where}.max_force (N per world axis) is required for a hold")
        bound = _positive(d["max_force"], f"{where}.max_force")
    else:
        if "normal" not in d:
            raise SupportError(f"{where}.normal is required for a {kind}")
        normal = _finite_vec(d["normal"], f"{where}.normal", (3,))
        nn = float(np.linalg.norm(normal))
        if nn < 1e-9:
            raise SupportError(f"{where}.normal must be a non-zero vector, got {d['normal']!r}")
        normal = normal / nn
        if "mu" in d:
            mu_s = _positive(d["mu"], f"{where}.mu")
    frames = None
    if d.get("frames") is not None:
        fr = d["frames"]
        ok = isinstance(fr, Sequence) and all(
            isinstance(r, Sequence) and len(r) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in r) for r in fr)
        if not ok:
            raise SupportError(f"{where}.frames must be [[first, last], ...] frame numbers, got "
                               f"{fr!r}")
        for a, b in fr:
            if a < 0 or b < a or (n_frames is not None and b >= n_frames):
                raise SupportError(f"{where}.frames: range [{a}, {b}] is not within 0.."
                                   f"{'' if n_frames is None else n_frames - 1} (first <= last)")
        frames = tuple((int(a), int(b)) for a, b in fr)
    body, bpts, tol, slide = -1, None, TOLERANCE, SLIDE
    if "on" in d or "on_points" in d:
        if j >= 0:
            raise SupportError(f"{where}.on is only for a support fixed in the world "
                               f"(\"joint\": \"world\"), got joint {jn!r}")
        on = d.get("on")
        if not isinstance(on, str) or on not in skel.joint_names:
            raise SupportError(f"{where}.on: unknown joint {on!r} of {skel.name!r} (the body part "
                               f"resting on the support); joints are {names_hint(skel.joint_names)}")
        body = skel.joint_names.index(on)
        if "on_points" not in d:
            raise SupportError(f"{where}.on_points is required with on: [[x, y, z], ...] m in "
                               f"{on!r}'s frame, one per point")
        bpts = _finite_vec(d["on_points"], f"{where}.on_points")
        if bpts.shape != pts.shape:
            raise SupportError(f"{where}.on_points must have one [x, y, z] per point "
                               f"({pts.shape}), got shape {bpts.shape}")
        if "tolerance" in d:
            tol = _positive(d["tolerance"], f"{where}.tolerance")
        if "slide" in d:
            slide = _positive(d["slide"], f"{where}.slide")
    elif "tolerance" in d or "slide" in d:
        raise SupportError(f"{where}.tolerance / slide need on and on_points (a world support "
                           f"the body rests on)")
    return Support(name, kind, j, pts, normal, mu_s, bound, frames, body, bpts, tol, slide)


def supports_from_dict(d: Any, skel: Skeleton, mu: float, n_frames: int | None = None,
                       source: str = "") -> SupportSet:
    """A :class:`SupportSet` from ``{"supports": [...]}``."""
    if not isinstance(d, Mapping) or not isinstance(d.get("supports"), list):
        raise SupportError('a supports file is {"supports": [{...}, ...]}')
    out = [support_from_dict(s, skel, mu, f"supports[{i}]", n_frames)
           for i, s in enumerate(d["supports"])]
    names = [s.name for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SupportError(f"supports: names must be unique, repeated {dup}")
    return SupportSet(tuple(out), source)


def load_supports(path: str | os.PathLike, skel: Skeleton, mu: float,
                  n_frames: int | None = None) -> SupportSet:
    """Read a supports JSON file (module docstring). OSError when it cannot be read."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise SupportError(f"{os.fspath(path)}: not JSON ({e})") from None
    return supports_from_dict(d, skel, mu, n_frames, source=f"file:{os.fspath(path)}")


__all__ = ["KINDS", "SLIDE", "TOLERANCE", "Support", "SupportError", "SupportFrames",
           "SupportSet", "load_supports", "support_from_dict", "supports_from_dict"]
