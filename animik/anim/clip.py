"""Keyframe clips: immutable joint tracks and effector-target tracks on a skeleton.

The design follows three.js ``src/animation`` (``KeyframeTrack`` / ``AnimationClip`` /
interpolants) with animik's conventions: SI units, read-only arrays, pure functions.

* A :class:`JointTrack` keys **all DoFs of one joint** at key times ``(K,)`` with values
  ``(K, d)`` (``d`` = the joint's DoF count) and a per-key interpolation mode. A key of the
  whole pose is a key in every joint's track; a key of a selected joint only touches its track.
  Rotation DoFs of a joint that form a rotation group (2 or 3 orthogonal rotation axes,
  :mod:`animik.joints`) are interpolated as a rotation — slerp for ``"linear"``, a C1
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
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..cache import cache_of
from ..errors import UnknownNameError, names_hint
from ..ik import SOLVERS
from ..motion import Motion
from ..skeleton import Skeleton, freeze
from .ik import solve_clip_ik
from .interpolation import MODE_CODE, MODES
from .sampling import sample_effector, sample_joint_track, sample_pose
from .tracks import (
    TIME_EPS,
    ClipError,
    EffectorTrack,
    IKSettings,
    JointTrack,
    _array,
    _check_fps,
    _joint_index,
    _site_index,
    distinct_times,
    ik_dof_mask,
)

#: The most frames :meth:`Clip.frame_times` gives (sampling, export): bounded memory.
MAX_FRAMES = 1_000_000


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
        x = self.length * fps
        if not x <= MAX_FRAMES:  # also NaN: a sampled clip is bounded memory
            raise ClipError(f"clip {self.name!r}: {self.length:g} s at {fps:g} fps is {x:.4g} "
                            f"frames (at most {MAX_FRAMES} are sampled)")
        n = int(math.floor(x + 1e-6)) + 1
        return np.arange(n) / fps

    @property
    def key_times(self) -> np.ndarray:
        """Sorted distinct key times of all tracks (see :func:`animik.anim.edit.key_times`)."""
        return distinct_times([tr.times for tr in self.tracks] + [ef.times for ef in self.effectors])

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
        cache = cache_of(self).setdefault("motions", {})
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
def check_finite(clip: Clip, q: np.ndarray) -> None:
    """Raise :class:`ClipError` naming the clip, frame and DoF if ``q (T, n)`` has NaN / inf."""
    bad = ~np.isfinite(q)
    if np.any(bad):
        f, k = np.argwhere(bad)[0]
        raise ClipError(f"clip {clip.name!r}: sampled pose has NaN or infinite values (first at "
                        f"sample {int(f)}, DoF {clip.skeleton.dof_names[int(k)]!r})")


__all__ = ["TIME_EPS", "Clip", "ClipError", "EffectorTrack", "IKSettings", "JointTrack",
           "check_finite", "ik_dof_mask", "sample_effector", "sample_joint_track", "sample_pose"]
