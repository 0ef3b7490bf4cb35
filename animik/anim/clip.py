"""Keyframe clips: immutable joint tracks and effector-target tracks on a skeleton.

The design follows three.js ``src/animation`` (``KeyframeTrack`` / ``AnimationClip`` /
interpolants) with animik's conventions: SI units, read-only arrays, pure functions.

* A :class:`JointTrack` keys **all DoFs of one joint** at key times ``(K,)`` with values
  ``(K, d)`` (``d`` = the joint's DoF count) and a per-key interpolation mode. A key of the
  whole pose is a key in every joint's track; a key of a selected joint only touches its track.
  Rotation DoFs of a joint that form a rotation group (2 or 3 orthogonal rotation axes,
  :mod:`animik.anim.joints`) are interpolated as a rotation — slerp for ``"linear"``, a C1
  cubic on SO(3) for ``"smooth"`` — and converted back to the joint's own DoF order on the
  branch nearest the keys (no 2π jumps, no Euler-gimbal artefacts); other DoFs are interpolated
  one by one (:mod:`animik.anim.interpolation`). A segment whose keys differ by more than π in
  a DoF of the group is a deliberate wind-up (e.g. a 270° spin): it is interpolated per DoF,
  as slerp would take the short way round.
* An :class:`EffectorTrack` keys a target for one effector site: positions ``(K, 3)`` m
  (world, Z up), optionally rotations ``(K, 3, 3)`` (world_from_site), a ``pinned`` flag (a pin
  holds the effector at the keyed positions; for IK it is a target like the others) and a
  weight. When a clip has effector tracks, :meth:`Clip.sample` solves IK at every sampled time
  for the interpolated targets (:mod:`animik.anim.ik`), warm-started frame to frame, with the
  pose sampled from the joint tracks as the start and null-space reference.
* A :class:`Clip` holds the tracks, a frame rate, an optional fixed length, the pose of DoFs
  without a track (``base``, default the rest pose) and the IK settings. Edit clips with the
  pure functions of :mod:`animik.anim.edit`, which return new clips.

Times are seconds from 0. Sampled poses are clipped into the joint limits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import AnimikError, UnknownNameError, names_hint
from ..motion import Motion
from ..skeleton import Skeleton, freeze
from .interpolation import MODE_CODE, MODES, STEP, eval_rotation, eval_scalar, locate, pchip_slopes
from .joints import JointLayout, dof_rotation_product, group_angles, joint_layouts, tb_angles

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


@dataclass(frozen=True, eq=False)
class JointTrack:
    """Keys of all DoFs of one joint.

    Attributes:
        joint: joint name.
        times: ``(K,)`` key times, s, strictly increasing, >= 0.
        values: ``(K, d)`` DoF values (rad / m) in the joint's DoF order.
        interpolation: ``K`` modes (``"linear"``, ``"smooth"``, ``"step"``), each for the
            segment that starts at its key (a single string is broadcast).
    """

    joint: str
    times: np.ndarray
    values: np.ndarray
    interpolation: tuple[str, ...] | str = "linear"

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

    @property
    def n_keys(self) -> int:
        return int(self.times.shape[0])

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


@dataclass(frozen=True, eq=False)
class Clip:
    """An immutable keyframe clip on a skeleton.

    Attributes:
        skeleton: the skeleton.
        tracks: joint tracks, at most one per joint, sorted by joint index.
        effectors: effector tracks, at most one per site, sorted by site index.
        fps: frame rate of :meth:`to_motion` and of frame snapping in an editor (> 0).
        name: clip name.
        fixed_length: the clip length in s, or ``None`` for the last key time (:attr:`length`).
        base: ``(n_dof,)`` values of DoFs without a track (default: the rest pose).
        ik: :class:`IKSettings` for effector tracks.
        interpolation: default mode of keys added by :mod:`animik.anim.edit`.
        meta: read-only free-form metadata.

    Raises:
        ClipError: bad values, shapes, names; the message names the clip and the track.
        UnknownNameError: a track for a joint or site the skeleton does not have.
    """

    skeleton: Skeleton
    tracks: tuple[JointTrack, ...] = ()
    effectors: tuple[EffectorTrack, ...] = ()
    fps: float = 30.0
    name: str = "clip"
    fixed_length: float | None = None
    base: np.ndarray | None = None
    ik: IKSettings = field(default_factory=IKSettings)
    interpolation: str = "linear"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        skel = self.skeleton
        if not isinstance(skel, Skeleton):
            raise ClipError(f"clip {self.name!r}: skeleton must be a Skeleton, got "
                            f"{type(skel).__name__}")
        object.__setattr__(self, "name", str(self.name))
        where = f"clip {self.name!r}"
        fps = self.fps
        if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(fps)) or float(fps) <= 0:
            raise ClipError(f"{where}: fps must be a positive number, got {fps!r}")
        object.__setattr__(self, "fps", float(fps))
        if self.fixed_length is not None:
            ln = self.fixed_length
            if isinstance(ln, bool) or not isinstance(ln, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(float(ln)) or float(ln) < 0:
                raise ClipError(f"{where}: length must be a number >= 0 s, got {ln!r}")
            object.__setattr__(self, "fixed_length", float(ln))
        base = skel.rest_q if self.base is None else self.base
        object.__setattr__(self, "base", _array(base, (skel.n_dof,), where, "base pose"))
        if self.interpolation not in MODE_CODE:
            raise ClipError(f"{where}: unknown interpolation {self.interpolation!r}; expected one "
                            f"of {list(MODES)}")
        tracks = []
        seen: dict[int, str] = {}
        for tr in self.tracks:
            if not isinstance(tr, JointTrack):
                raise ClipError(f"{where}: tracks must hold JointTrack objects, got {tr!r}")
            j = _joint_index(skel, tr.joint, where)
            if j in seen:
                raise ClipError(f"{where}: two tracks for joint {tr.joint!r}")
            seen[j] = tr.joint
            d = len(skel.joint_dofs(j))
            if d == 0:
                raise ClipError(f"{where}: joint {tr.joint!r} has no DoFs and cannot be keyed")
            if tr.values.shape[1] != d:
                raise ClipError(f"{where}: track of joint {tr.joint!r}: values must have shape "
                                f"({tr.n_keys}, {d}) (one column per DoF: "
                                f"{[skel.dof_names[k] for k in skel.joint_dofs(j)]}), got "
                                f"{tr.values.shape}")
            tracks.append((j, tr))
        object.__setattr__(self, "tracks", tuple(tr for _, tr in sorted(tracks, key=lambda x: x[0])))
        effs = []
        seen_s: set[int] = set()
        for ef in self.effectors:
            if not isinstance(ef, EffectorTrack):
                raise ClipError(f"{where}: effectors must hold EffectorTrack objects, got {ef!r}")
            s = _site_index(skel, ef.site, where)
            if s in seen_s:
                raise ClipError(f"{where}: two effector tracks for site {ef.site!r}")
            seen_s.add(s)
            effs.append((s, ef))
        object.__setattr__(self, "effectors", tuple(e for _, e in sorted(effs, key=lambda x: x[0])))
        if not isinstance(self.ik, IKSettings):
            raise ClipError(f"{where}: ik must be an IKSettings, got {type(self.ik).__name__}")
        from ..ik import SOLVERS

        if self.ik.solver not in SOLVERS:
            raise UnknownNameError(f"{where}: unknown IK solver {self.ik.solver!r}; solvers are "
                                   f"{names_hint(SOLVERS)}")
        if self.ik.dofs is not None:
            ik_dof_mask(skel, self.ik.dofs, where)
        object.__setattr__(self, "meta", freeze(dict(self.meta)))

    # ------------------------------------------------------------------ properties
    @property
    def is_empty(self) -> bool:
        """No keys at all (nothing to sample or export)."""
        return not self.tracks and not self.effectors

    @property
    def last_key_time(self) -> float:
        """Time of the last key of any track (0 when the clip is empty)."""
        ends = [tr.times[-1] for tr in self.tracks] + [ef.times[-1] for ef in self.effectors]
        return float(max(ends, default=0.0))

    @property
    def length(self) -> float:
        """Clip length in s: :attr:`fixed_length` if set, else the last key time."""
        return self.last_key_time if self.fixed_length is None else self.fixed_length

    @property
    def n_frames(self) -> int:
        """Frames of :meth:`to_motion`: ``0, 1/fps, ...`` up to the length (inclusive)."""
        return int(math.floor(self.length * self.fps + 1e-6)) + 1

    def frame_times(self, fps: float | None = None) -> np.ndarray:
        """``(n_frames,)`` frame times ``i / fps`` over the clip length."""
        fps = self.fps if fps is None else _check_fps(fps, self.name)
        n = int(math.floor(self.length * fps + 1e-6)) + 1
        return np.arange(n) / fps

    @property
    def key_times(self) -> np.ndarray:
        """Sorted distinct key times of all tracks (see :func:`animik.anim.edit.key_times`)."""
        from .edit import key_times

        return key_times(self)

    def track(self, joint: str | int) -> JointTrack | None:
        """The track of a joint, or ``None``."""
        name = self.skeleton.joint_names[_joint_index(self.skeleton, joint, f"clip {self.name!r}")]
        return next((tr for tr in self.tracks if tr.joint == name), None)

    def effector(self, site: str | int) -> EffectorTrack | None:
        """The effector track of a site, or ``None``."""
        name = self.skeleton.site_names[_site_index(self.skeleton, site, f"clip {self.name!r}")]
        return next((ef for ef in self.effectors if ef.site == name), None)

    def replace(self, **changes: Any) -> Clip:
        """A copy with fields replaced (validated again)."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ sampling
    def sample(self, times: Any, ik: bool = True) -> np.ndarray:
        """Poses at the given times.

        Args:
            times: ``(T,)`` times in s (any order; a scalar gives ``(1, n)``).
            ik: solve IK for the effector tracks (when there are any). IK runs over the times in
                increasing order, each solve warm-started from the previous one, so a time's
                pose can differ within the IK tolerance depending on the times requested.

        Returns:
            ``(T, n_dof)`` poses within the joint limits.

        Raises:
            ClipError: non-finite times.
        """
        t = self._check_times(times)
        q = sample_pose(self, t)
        if ik and self.effectors:
            from .ik import solve_clip_ik

            q = solve_clip_ik(self, t, q).q
        return q

    def sample_targets(self, times: Any) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
        """Interpolated effector targets: ``{site: (positions (T, 3), rotations (T, 3, 3) | None)}``."""
        t = self._check_times(times)
        return {ef.site: sample_effector(ef, t) for ef in self.effectors}

    def to_motion(self, fps: float | None = None) -> Motion:
        """The clip sampled at ``fps`` (default :attr:`fps`) over its length.

        Raises:
            ClipError: the clip has no keys, or sampling gave non-finite values.
        """
        if self.is_empty:
            raise ClipError(f"clip {self.name!r} is empty (no keys): nothing to sample")
        fps = self.fps if fps is None else _check_fps(fps, self.name)
        cache = _cache(self).setdefault("motions", {})
        if fps not in cache:  # the clip is immutable: sample (and solve IK) once per rate
            q = self.sample(self.frame_times(fps))
            check_finite(self, q)
            cache[fps] = Motion(self.skeleton, q, fps, meta={"clip": self.name, **dict(self.meta)})
        return cache[fps]

    def _check_times(self, times: Any) -> np.ndarray:
        try:
            t = np.atleast_1d(np.asarray(times, dtype=float))
        except (TypeError, ValueError):
            raise ClipError(f"clip {self.name!r}: times must be numbers, got {times!r}") from None
        if t.ndim != 1:
            raise ClipError(f"clip {self.name!r}: times must have shape (T,), got {t.shape}")
        if not np.all(np.isfinite(t)):
            raise ClipError(f"clip {self.name!r}: times contain NaN or infinite values")
        return t

    def __repr__(self) -> str:
        return (f"Clip({self.name!r} on {self.skeleton.name!r}: {len(self.tracks)} joint tracks, "
                f"{len(self.effectors)} effector tracks, {self.length:g} s at {self.fps:g} fps)")


# ---------------------------------------------------------------------- helpers
def _check_fps(fps: Any, name: str) -> float:
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(fps)) or float(fps) <= 0:
        raise ClipError(f"clip {name!r}: fps must be a positive number, got {fps!r}")
    return float(fps)


def check_finite(clip: Clip, q: np.ndarray) -> None:
    """Raise :class:`ClipError` naming the clip, frame and DoF if ``q (T, n)`` has NaN / inf."""
    bad = ~np.isfinite(q)
    if np.any(bad):
        f, k = np.argwhere(bad)[0]
        raise ClipError(f"clip {clip.name!r}: sampled pose has NaN or infinite values (first at "
                        f"sample {int(f)}, DoF {clip.skeleton.dof_names[int(k)]!r})")


def _joint_index(skel: Skeleton, joint: str | int, where: str) -> int:
    try:
        return skel.joint_index(joint)
    except UnknownNameError:
        raise UnknownNameError(f"{where}: unknown joint {joint!r} in skeleton {skel.name!r}; "
                               f"joints are {names_hint(skel.joint_names)}") from None


def _site_index(skel: Skeleton, site: str | int, where: str) -> int:
    try:
        return skel.site_index(site)
    except UnknownNameError:
        raise UnknownNameError(f"{where}: unknown site {site!r} in skeleton {skel.name!r}; "
                               f"sites are {names_hint(skel.site_names)}") from None


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


def _cache(obj: Any) -> dict:
    try:
        return obj.__dict__["_anim_cache"]
    except KeyError:
        c: dict = {}
        obj.__dict__["_anim_cache"] = c
        return c


def _mode_codes(track: JointTrack | EffectorTrack) -> np.ndarray:
    c = _cache(track)
    if "modes" not in c:
        c["modes"] = np.array([MODE_CODE[m] for m in track.interpolation], dtype=np.int8)
    return c["modes"]


def sample_pose(clip: Clip, t: np.ndarray) -> np.ndarray:
    """Poses ``(T, n)`` from the joint tracks only (no IK), clipped into the limits."""
    skel = clip.skeleton
    q = np.tile(clip.base, (t.shape[0], 1))
    layouts = joint_layouts(skel)
    for tr in clip.tracks:
        lay = layouts[skel.joint_index(tr.joint)]
        q[:, lay.dofs] = sample_joint_track(skel, lay, tr, t)
    return np.clip(q, skel.lower, skel.upper)


def sample_joint_track(skel: Skeleton, lay: JointLayout, tr: JointTrack, t: np.ndarray) -> np.ndarray:
    """Values ``(T, d)`` of one joint track."""
    c = _cache(tr)
    modes = _mode_codes(tr)
    if "slopes" not in c:
        c["slopes"] = pchip_slopes(tr.times, tr.values)
    per = eval_scalar(tr.times, tr.values, modes, t, c["slopes"])
    g = lay.group
    if g is None or tr.n_keys == 1:
        return per
    plan = _group_plan(skel, lay, tr)
    seg, u = locate(tr.times, t)
    use = (plan["kind"][seg] > 0) & (modes[seg] != STEP) & (u > 0.0) & (u < 1.0)
    if not np.any(use):
        return per
    idx = np.flatnonzero(use)
    cols = g.dofs - lay.dofs[0]
    rot, _, _ = eval_rotation(tr.times, plan["rots"], modes, t[idx], plan["rot_cache"])
    ref = per[np.ix_(idx, cols)]
    tracked = np.flatnonzero(plan["kind"][seg[idx]] == 2)
    if len(tracked):
        # Reference followed along the path: linear in the segment's sub-sample grid.
        grids = plan["grid_array"][plan["grid_index"][seg[idx[tracked]]]]  # (m, N + 1, k)
        x = u[idx[tracked]] * (grids.shape[1] - 1)
        lo_i = np.minimum(x.astype(np.int64), grids.shape[1] - 2)
        f = (x - lo_i)[:, None]
        rows = np.arange(len(tracked))
        ref[tracked] = grids[rows, lo_i] + f * (grids[rows, lo_i + 1] - grids[rows, lo_i])
    out = per.copy()
    out[np.ix_(idx, cols)] = group_angles(g, rot, ref, skel.lower[g.dofs], skel.upper[g.dofs])
    return out


_TRACK_STEPS = 128  # sub-samples of a segment whose rotation path is followed step by step
_NEAR_LOCK = 0.26  # cos(middle angle) below this (~75°) on a segment: follow its path


def _group_plan(skel: Skeleton, lay: JointLayout, tr: JointTrack) -> dict:
    """Per segment: 0 per-DoF, 1 rotation with the per-DoF value as reference, 2 rotation with a
    reference followed along the path (near gimbal lock or large swings)."""
    c = _cache(tr)
    if "plan" in c:
        return c["plan"]
    g = lay.group
    cols = g.dofs - lay.dofs[0]
    vals = tr.values[:, cols]
    modes = _mode_codes(tr)
    rots = dof_rotation_product(g.axes, vals)
    rot_cache: dict = {}
    K = tr.n_keys
    kind = np.ones(K - 1, dtype=np.int8)
    delta = np.abs(np.diff(vals, axis=0)).max(axis=1)
    kind[delta > np.pi] = 0  # a wind-up: slerp would take the short way round
    kind[modes[:-1] == STEP] = 0
    lo, hi = skel.lower[g.dofs], skel.upper[g.dofs]
    grids: dict[int, np.ndarray] = {}
    cand = np.flatnonzero(kind == 1)
    if len(cand):
        # Coarse check of every segment: near gimbal lock or with jumps between sub-samples the
        # per-DoF reference is not good enough.
        us = np.linspace(0.0, 1.0, 11)
        h = tr.times[cand + 1] - tr.times[cand]
        tt = (tr.times[cand][:, None] + us[None, :] * h[:, None]).ravel()
        tt[10::11] = tr.times[cand + 1]
        r, _, _ = eval_rotation(tr.times, rots, modes, tt, rot_cache)
        if "slopes" not in _cache(tr):
            _cache(tr)["slopes"] = pchip_slopes(tr.times, tr.values)
        per = eval_scalar(tr.times, tr.values, modes, tt, _cache(tr)["slopes"])[:, cols]
        ang = group_angles(g, r, per, lo, hi).reshape(len(cand), 11, g.k)
        jump = np.abs(np.diff(ang, axis=1)).max(axis=(1, 2))
        hard = jump > 1.0
        if g.k == 3:
            m = g.basis.T @ r @ g.basis
            cb = np.hypot(m[..., 0, 0], m[..., 0, 1]).reshape(len(cand), 11)
            hard |= cb.min(axis=1) < _NEAR_LOCK
        hard_segs = cand[hard]
        if len(hard_segs):
            grid_vals, ok = _follow(g, rots, tr, modes, hard_segs, cols, lo, hi, rot_cache)
            for i, s in enumerate(hard_segs):
                if ok[i]:
                    kind[s] = 2
                    grids[int(s)] = grid_vals[i]
                else:
                    kind[s] = 0
    grid_index = np.full(K - 1, -1, dtype=np.int64)
    for i, s in enumerate(sorted(grids)):
        grid_index[s] = i
    grid_array = np.stack([grids[s] for s in sorted(grids)]) if grids else np.zeros((0, 2, g.k))
    plan = {"kind": kind, "rots": rots, "rot_cache": rot_cache, "grid_index": grid_index,
            "grid_array": grid_array}
    c["plan"] = plan
    return plan


def _follow(g, rots, tr: JointTrack, modes, segs: np.ndarray, cols: np.ndarray, lo, hi,
            rot_cache) -> tuple[np.ndarray, np.ndarray]:
    """DoF values along segments ``segs`` followed step by step from their first key.

    Returns:
        ``(grids (S, N + 1, k), ok (S,))``; ``ok`` is False where the path does not arrive at
        the next key's values (the keys' Euler branches disagree with the rotation path, so the
        segment is interpolated per DoF).
    """
    S = len(segs)
    t0, t1 = tr.times[segs], tr.times[segs + 1]
    us = np.linspace(0.0, 1.0, _TRACK_STEPS + 1)
    tt = t0[:, None] + us[None, :] * (t1 - t0)[:, None]
    tt[:, -1] = t1
    r, _, _ = eval_rotation(tr.times, rots, modes, tt.ravel(), rot_cache)
    r = r.reshape(S, len(us), 3, 3)
    start = tr.values[np.ix_(segs, cols)]
    end = tr.values[np.ix_(segs + 1, cols)]
    out = np.empty((S, len(us), g.k))
    prev = start
    canon = g.basis.T @ r @ g.basis if g.k == 3 else None
    for i in range(len(us)):
        if g.k == 3:
            prev = tb_angles(canon[:, i], g.signs, prev, lo, hi)
        else:
            prev = group_angles(g, r[:, i], prev, lo, hi)
        out[:, i] = prev
    ok = np.max(np.abs(out[:, -1] - end), axis=1) <= 1e-6
    out[:, 0], out[:, -1] = start, end
    return out, ok


def sample_effector(ef: EffectorTrack, t: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Target positions ``(T, 3)`` and rotations ``(T, 3, 3)`` (or ``None``) of an effector track."""
    c = _cache(ef)
    modes = _mode_codes(ef)
    if "slopes" not in c:
        c["slopes"] = pchip_slopes(ef.times, ef.positions)
    pos = eval_scalar(ef.times, ef.positions, modes, t, c["slopes"])
    if ef.rotations is None:
        return pos, None
    rot, _, _ = eval_rotation(ef.times, ef.rotations, modes, t, c.setdefault("rot", {}))
    return pos, rot


__all__ = ["TIME_EPS", "Clip", "ClipError", "EffectorTrack", "IKSettings", "JointTrack",
           "check_finite", "ik_dof_mask", "sample_effector", "sample_joint_track", "sample_pose"]
