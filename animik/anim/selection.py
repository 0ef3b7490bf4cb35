"""Editing selected keys of a clip: what a dope sheet and a graph editor do.

A key is named by a :class:`KeyRef`: its track (a joint track ``("joint", name)`` or an effector
track ``("site", name)``) and its time. A selection is any collection of them. Every function is
pure: it returns a new :class:`~animik.anim.clip.Clip` (and the selection's new refs where keys
move). Times snap to the clip's frames (``snap=True``); a moved key landing on an unselected
key of its track replaces it, as in Blender's dope sheet.

* :func:`all_keys`, :func:`keys_in_box` (box select over rows and a time range);
* :func:`move_keys` (by ``dt``), :func:`scale_keys` (about a pivot time), :func:`delete_keys`;
* :func:`copy_keys` / :func:`copy_pose` to a :class:`KeyClipboard`, :func:`paste_keys` at a time;
* :func:`set_tangent` / :func:`auto_tangents`: edited slopes of smooth keys (graph editor),
  :func:`key_slopes`: the slopes in effect at a track's keys.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .clip import Clip
from .sampling import sample_pose, track_slopes
from .tracks import TIME_EPS, ClipError, EffectorTrack, JointTrack

JOINT, SITE = "joint", "site"


class KeyRef(NamedTuple):
    """One key of a clip: ``kind`` (``"joint"`` or ``"site"``), the track's joint / site name and
    the key time (s)."""

    kind: str
    name: str
    time: float


def _tracks(clip: Clip) -> dict[tuple[str, str], JointTrack | EffectorTrack]:
    out: dict[tuple[str, str], JointTrack | EffectorTrack] = {
        (JOINT, tr.joint): tr for tr in clip.tracks}
    out.update({(SITE, ef.site): ef for ef in clip.effectors})
    return out


def _with(clip: Clip, tracks: dict[tuple[str, str], JointTrack | EffectorTrack | None]) -> Clip:
    """The clip with tracks replaced (``None``: removed)."""
    jt = [t for (k, _), t in tracks.items() if k == JOINT and t is not None]
    et = [t for (k, _), t in tracks.items() if k == SITE and t is not None]
    return clip.replace(tracks=tuple(jt), effectors=tuple(et))


def all_keys(clip: Clip, tracks: Iterable[tuple[str, str]] | None = None) -> list[KeyRef]:
    """Every key of the clip (or of the ``(kind, name)`` tracks given), track by track."""
    want = None if tracks is None else set(tracks)
    return [KeyRef(kind, name, float(t)) for (kind, name), tr in _tracks(clip).items()
            if want is None or (kind, name) in want for t in tr.times]


def keys_in_box(clip: Clip, tracks: Iterable[tuple[str, str]], t0: float, t1: float) -> list[KeyRef]:
    """The keys of ``tracks`` with times in ``[min(t0, t1), max(t0, t1)]`` (box select)."""
    lo, hi = min(t0, t1) - TIME_EPS, max(t0, t1) + TIME_EPS
    return [k for k in all_keys(clip, tracks) if lo <= k.time <= hi]


def _index(tr: JointTrack | EffectorTrack, t: float) -> int | None:
    i = int(np.argmin(np.abs(tr.times - t)))
    return i if abs(tr.times[i] - t) <= TIME_EPS else None


def _by_track(clip: Clip, keys: Iterable[KeyRef]) -> dict[tuple[str, str], list[int]]:
    """Selected key indices per track; keys the clip does not have raise :class:`ClipError`."""
    tracks = _tracks(clip)
    out: dict[tuple[str, str], list[int]] = {}
    for k in keys:
        tr = tracks.get((k.kind, k.name))
        i = None if tr is None else _index(tr, k.time)
        if i is None:
            raise ClipError(f"clip {clip.name!r}: no key of {k.kind} {k.name!r} at t={k.time:g} s")
        if i not in out.setdefault((k.kind, k.name), []):
            out[(k.kind, k.name)].append(i)
    return out


def _frame(clip: Clip, t: float) -> float:
    return round(t * clip.fps) / clip.fps


def _retime(clip: Clip, keys: Iterable[KeyRef], new_time, what: str) -> tuple[Clip, list[KeyRef]]:
    """Move each selected key to ``new_time(t)``. Per track, a moved key replaces an unselected
    key at its new time; selected keys landing on the same time keep the last (in time) one."""
    sel = _by_track(clip, keys)
    tracks: dict[tuple[str, str], Any] = dict(_tracks(clip))
    out: list[KeyRef] = []
    for tk, idx in sel.items():
        tr = tracks[tk]
        moved_t = np.array([new_time(float(tr.times[i])) for i in idx])
        if not np.all(np.isfinite(moved_t)) or np.any(moved_t < -TIME_EPS):
            raise ClipError(f"clip {clip.name!r}: {what} would put keys before 0 s")
        moved_t = np.maximum(moved_t, 0.0)
        selected = np.zeros(tr.n_keys, dtype=bool)
        selected[idx] = True
        rest = np.flatnonzero(~selected)
        rest = [i for i in rest if np.all(np.abs(moved_t - tr.times[i]) > TIME_EPS)]
        # order: unselected, then the selected by their old time, so a later one wins a tie
        by_time = np.argsort(tr.times[idx], kind="stable")
        order = np.array(rest + [idx[j] for j in by_time], dtype=int)
        times = np.concatenate([tr.times[rest], moved_t[by_time]])
        # de-duplicate equal times, keeping the last of each run
        srt = np.argsort(times, kind="stable")
        times, order = times[srt], order[srt]
        keep = np.append(np.diff(times) > TIME_EPS, True)
        new = tr.take(order[keep], times[keep])
        tracks[tk] = new
        out += [KeyRef(tk[0], tk[1], float(t)) for t in sorted(set(moved_t.tolist()))]
    return _with(clip, tracks), sorted(out)


def move_keys(clip: Clip, keys: Iterable[KeyRef], dt: float, snap: bool = True
              ) -> tuple[Clip, list[KeyRef]]:
    """Move the selected keys by ``dt`` s (snapped to whole frames).

    Returns:
        ``(clip, the moved keys' refs)``.

    Raises:
        ClipError: a key would go before 0 s; a key the clip does not have.
    """
    dt = float(dt)
    if not math.isfinite(dt):
        raise ClipError(f"clip {clip.name!r}: dt must be a finite number of seconds, got {dt!r}")
    if snap:
        dt = round(dt * clip.fps) / clip.fps
    return _retime(clip, keys, (lambda t: _frame(clip, t + dt)) if snap else (lambda t: t + dt),
                   "moving")


def scale_keys(clip: Clip, keys: Iterable[KeyRef], factor: float, pivot: float,
               snap: bool = True) -> tuple[Clip, list[KeyRef]]:
    """Scale the selected keys' times about ``pivot``: ``t' = pivot + factor (t - pivot)``
    (snapped to frames; keys that would go before 0 s stop at 0; keys that land on one frame
    merge, the latest wins).

    Raises:
        ClipError: ``factor`` not a positive finite number.
    """
    factor = float(factor)
    if not (math.isfinite(factor) and factor > 0):
        raise ClipError(f"clip {clip.name!r}: scale factor must be a positive number, got {factor!r}")
    pivot = float(pivot)

    def f(t: float) -> float:
        x = max(pivot + factor * (t - pivot), 0.0)
        return _frame(clip, x) if snap else x

    return _retime(clip, keys, f, "scaling")


def delete_keys(clip: Clip, keys: Iterable[KeyRef]) -> Clip:
    """The clip without the selected keys (tracks left empty are removed)."""
    sel = _by_track(clip, keys)
    tracks: dict[tuple[str, str], Any] = dict(_tracks(clip))
    for tk, idx in sel.items():
        tr = tracks[tk]
        keep = np.ones(tr.n_keys, dtype=bool)
        keep[idx] = False
        tracks[tk] = tr.take(keep) if keep.any() else None
    return _with(clip, tracks)


# ---------------------------------------------------------------------- copy / paste
@dataclass(frozen=True, eq=False)
class KeyClipboard:
    """Copied keys: per track, single-key tracks at times relative to the earliest copied key
    (so pasting at ``t`` puts that key at ``t``)."""

    tracks: tuple[JointTrack | EffectorTrack, ...]

    @property
    def n_keys(self) -> int:
        return sum(tr.n_keys for tr in self.tracks)


def copy_keys(clip: Clip, keys: Iterable[KeyRef]) -> KeyClipboard:
    """Copy the selected keys (values, modes, tangents, targets)."""
    sel = _by_track(clip, keys)
    if not sel:
        raise ClipError(f"clip {clip.name!r}: no keys selected to copy")
    tracks = _tracks(clip)
    t0 = min(float(tracks[tk].times[i]) for tk, idx in sel.items() for i in idx)
    out = []
    for tk, idx in sel.items():
        idx = sorted(idx)
        out.append(tracks[tk].take(idx, tracks[tk].times[idx] - t0))
    return KeyClipboard(tuple(out))


def copy_pose(clip: Clip, t: float, joints: Iterable[str] | None = None) -> KeyClipboard:
    """Copy the pose the joint tracks give at ``t`` (keys or not) as one key per joint.

    Args:
        joints: the joints to copy (default: every joint with a track).
    """
    names = [tr.joint for tr in clip.tracks] if joints is None else list(joints)
    if not names:
        raise ClipError(f"clip {clip.name!r}: no joint tracks to copy a pose from")
    q = sample_pose(clip, np.array([float(t)]))[0]
    skel = clip.skeleton
    modes = {tr.joint: tr.interpolation[0] for tr in clip.tracks}
    return KeyClipboard(tuple(
        JointTrack(nm, [0.0], q[list(skel.joint_dofs(nm))][None], modes.get(nm, clip.interpolation))
        for nm in names))


def paste_keys(clip: Clip, board: KeyClipboard, t: float, snap: bool = True
               ) -> tuple[Clip, list[KeyRef]]:
    """Paste copied keys with their earliest at ``t`` (keys already there are replaced).

    Returns:
        ``(clip, the pasted keys' refs)``.
    """
    t = _frame(clip, float(t)) if snap else float(t)
    if not math.isfinite(t) or t < 0:
        raise ClipError(f"clip {clip.name!r}: paste time must be >= 0 s, got {t!r}")
    tracks: dict[tuple[str, str], Any] = dict(_tracks(clip))
    out: list[KeyRef] = []
    for part in board.tracks:
        kind, name = (JOINT, part.joint) if isinstance(part, JointTrack) else (SITE, part.site)
        # validate the name against this clip's skeleton (a board may come from another clip)
        (clip.track if kind == JOINT else clip.effector)(name)
        times = part.times + t
        if snap:
            times = np.round(times * clip.fps) / clip.fps
        part = part.replace(times=times)
        old = tracks.get((kind, name))
        tracks[(kind, name)] = part if old is None else _merge(old, part)
        out += [KeyRef(kind, name, float(x)) for x in times]
    return _with(clip, tracks), sorted(out)


def _merge(old, new):
    """Keys of ``new`` added to ``old`` (replacing ``old``'s keys at the same times)."""
    keep = [i for i in range(old.n_keys) if np.all(np.abs(new.times - old.times[i]) > TIME_EPS)]
    if isinstance(old, JointTrack):
        if old.values.shape[1] != new.values.shape[1]:
            raise ClipError(f"cannot paste keys of {new.values.shape[1]} DoFs on joint "
                            f"{old.joint!r} with {old.values.shape[1]}")
        a, b = old.take(keep), new
        times = np.concatenate([a.times, b.times])
        o = np.argsort(times, kind="stable")
        tan = None
        if a.tangents is not None or b.tangents is not None:
            def tt(x):
                return np.full(x.values.shape, np.nan) if x.tangents is None else x.tangents
            tan = np.concatenate([tt(a), tt(b)])[o]
        return JointTrack(old.joint, times[o], np.concatenate([a.values, b.values])[o],
                          tuple(np.array(a.interpolation + b.interpolation)[o]), tan)
    if (old.rotations is None) != (new.rotations is None):
        raise ClipError(f"cannot paste {'oriented' if new.rotations is not None else 'position'} "
                        f"target keys on the track of site {old.site!r}")
    a, b = old.take(keep), new
    times = np.concatenate([a.times, b.times])
    o = np.argsort(times, kind="stable")
    rots = None if a.rotations is None else np.concatenate([a.rotations, b.rotations])[o]
    return EffectorTrack(old.site, times[o], np.concatenate([a.positions, b.positions])[o], rots,
                         tuple(np.array(a.interpolation + b.interpolation)[o]), old.pinned,
                         old.weight)


# ---------------------------------------------------------------------- tangents
def key_slopes(clip: Clip, joint: str) -> np.ndarray:
    """``(K, d)`` slopes (DoF units per s) at a joint track's keys as the smooth interpolant
    uses them: the edited tangents, else the automatic ones."""
    tr = clip.track(joint)
    if tr is None:
        raise ClipError(f"clip {clip.name!r}: joint {joint!r} has no track")
    return track_slopes(tr)


def set_tangent(clip: Clip, joint: str, t: float, column: int, slope: float) -> Clip:
    """Edit the slope of one DoF (``column`` of the joint's DoFs) at the key at ``t``.

    The key and the key before it become smooth (the tangent shapes the segments on both
    sides). In a rotation group the group's other DoFs at that key get their current slopes as
    edited tangents, so only the edited DoF's curve changes shape at that key.

    Raises:
        ClipError: no key at ``t``; a bad column or slope.
    """
    tr = clip.track(joint)
    if tr is None:
        raise ClipError(f"clip {clip.name!r}: joint {joint!r} has no track")
    k = _index(tr, float(t))
    if k is None:
        raise ClipError(f"clip {clip.name!r}: joint {joint!r} has no key at t={t:g} s")
    d = tr.values.shape[1]
    if not (isinstance(column, (int, np.integer)) and 0 <= column < d):
        raise ClipError(f"clip {clip.name!r}: joint {joint!r} has DoF columns 0..{d - 1}, got "
                        f"{column!r}")
    slope = float(slope)
    if not math.isfinite(slope):
        raise ClipError(f"clip {clip.name!r}: slope must be finite, got {slope!r}")
    tan = np.full(tr.values.shape, np.nan) if tr.tangents is None else tr.tangents.copy()
    tan[k] = np.where(np.isnan(tan[k]), track_slopes(tr)[k], tan[k])
    tan[k, column] = slope
    modes = list(tr.interpolation)
    modes[k] = "smooth"
    if k > 0:
        modes[k - 1] = "smooth"
    new = tr.replace(tangents=tan, interpolation=tuple(modes))
    return clip.replace(tracks=tuple(new if x is tr else x for x in clip.tracks))


def auto_tangents(clip: Clip, joint: str, times: Iterable[float] | None = None) -> Clip:
    """Back to automatic slopes at the keys at ``times`` (default: every key) of a joint."""
    tr = clip.track(joint)
    if tr is None:
        raise ClipError(f"clip {clip.name!r}: joint {joint!r} has no track")
    if tr.tangents is None:
        return clip
    tan = tr.tangents.copy()
    if times is None:
        tan[:] = np.nan
    else:
        for t in times:
            k = _index(tr, float(t))
            if k is None:
                raise ClipError(f"clip {clip.name!r}: joint {joint!r} has no key at t={t:g} s")
            tan[k] = np.nan
    new = tr.replace(tangents=tan)
    return clip.replace(tracks=tuple(new if x is tr else x for x in clip.tracks))


__all__ = ["JOINT", "SITE", "KeyClipboard", "KeyRef", "all_keys", "auto_tangents", "copy_keys",
           "copy_pose", "delete_keys", "key_slopes", "keys_in_box", "move_keys", "paste_keys",
           "scale_keys", "set_tangent"]
