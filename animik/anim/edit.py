"""Pure edit functions on clips: each returns a new :class:`~animik.anim.clip.Clip`.

Selections: ``joints`` and ``sites`` are names (or indices) of the tracks to act on. ``None``
for both means every track; giving one of them restricts the edit to those tracks (pass
``joints=()`` to act on effector tracks only). Two key times closer than
:data:`~animik.anim.clip.TIME_EPS` are the same key. An editor drives a timeline with
:func:`key_times`, :func:`next_key_time` / :func:`previous_key_time`, :func:`add_key` (the
current pose, all joints or the selected ones), :func:`move_key`, :func:`delete_key`,
:func:`set_interpolation`, :func:`set_length` and :func:`set_fps`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..rotations import quat_to_matrix
from ..skeleton import Skeleton
from .clip import Clip
from .interpolation import MODE_CODE, MODES
from .tracks import TIME_EPS, ClipError, EffectorTrack, IKSettings, JointTrack, distinct_times
from .tracks import _array as _check_array
from .tracks import _joint_index as _joint
from .tracks import _site_index as _site


def new_clip(skeleton: Skeleton, name: str = "clip", fps: float = 30.0, base: Any = None,
             interpolation: str = "linear", length: float | None = None) -> Clip:
    """An empty clip (add keys with :func:`add_key`)."""
    return Clip(skeleton, name=name, fps=fps, base=base, interpolation=interpolation,
                fixed_length=length)


def _time(clip: Clip, t: Any, what: str = "t") -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(t)):
        raise ClipError(f"clip {clip.name!r}: {what} must be a finite number of seconds, got {t!r}")
    if float(t) < 0:
        raise ClipError(f"clip {clip.name!r}: {what} must be >= 0 s, got {t!r}")
    return float(t)


def _mode(clip: Clip, interpolation: str | None) -> str:
    mode = clip.interpolation if interpolation is None else interpolation
    if mode not in MODE_CODE:
        raise ClipError(f"clip {clip.name!r}: unknown interpolation {mode!r}; expected one of "
                        f"{list(MODES)}")
    return mode


def _joint_names(clip: Clip, joints: Iterable[str | int] | str | int | None,
                 keyable: bool = False) -> list[str]:
    skel = clip.skeleton
    if joints is None:
        names = [nm for j, nm in enumerate(skel.joint_names) if len(skel.joint_dofs(j))] \
            if keyable else [tr.joint for tr in clip.tracks]
        return names
    if isinstance(joints, (str, int, np.integer)):
        joints = [joints]
    out = []
    for jt in joints:
        j = _joint(skel, jt, f"clip {clip.name!r}")
        if keyable and len(skel.joint_dofs(j)) == 0:
            raise ClipError(f"clip {clip.name!r}: joint {skel.joint_names[j]!r} has no DoFs and "
                            "cannot be keyed")
        out.append(skel.joint_names[j])
    return out


def _site_names(clip: Clip, sites: Iterable[str | int] | str | int | None) -> list[str]:
    if sites is None:
        return [ef.site for ef in clip.effectors]
    if isinstance(sites, (str, int, np.integer)):
        sites = [sites]
    return [clip.skeleton.site_names[_site(clip.skeleton, s, f"clip {clip.name!r}")]
            for s in sites]


def _selection(clip: Clip, joints, sites) -> tuple[list[str], list[str]]:
    if joints is None and sites is None:
        return _joint_names(clip, None), _site_names(clip, None)
    return (_joint_names(clip, joints) if joints is not None else [],
            _site_names(clip, sites) if sites is not None else [])


def _insert(times: np.ndarray, t: float) -> tuple[int, bool]:
    """Index where key time ``t`` goes and whether it replaces an existing key."""
    i = int(np.searchsorted(times, t))
    for k in (i - 1, i):
        if 0 <= k < len(times) and abs(times[k] - t) <= TIME_EPS:
            return k, True
    return i, False


def _put(times: np.ndarray, rows: np.ndarray, modes: tuple[str, ...], t: float, row: np.ndarray,
         mode: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    k, same = _insert(times, t)
    modes_l = list(modes)
    if same:
        rows = rows.copy()
        rows[k] = row
        modes_l[k] = mode
        return times, rows, tuple(modes_l)
    times = np.insert(times, k, t)
    rows = np.insert(rows, k, row, axis=0)
    modes_l.insert(k, mode)
    return times, rows, tuple(modes_l)


# ---------------------------------------------------------------------- joint keys
def add_key(clip: Clip, t: float, q: Any, joints: Iterable[str | int] | str | int | None = None,
            interpolation: str | None = None) -> Clip:
    """Key a pose at time ``t``: every joint with DoFs, or only the selected ``joints``.

    Args:
        clip: the clip.
        t: key time, s (>= 0). A key already at ``t`` is replaced.
        q: ``(n_dof,)`` full pose; the keyed joints take their DoFs from it.
        joints: joint names/indices to key (``None``: the whole pose).
        interpolation: mode of the new keys (default ``clip.interpolation``).

    Raises:
        ClipError: bad time, pose shape or NaN; UnknownNameError: unknown joint.
    """
    t = _time(clip, t)
    skel = clip.skeleton
    q = _check_array(q, (skel.n_dof,), f"clip {clip.name!r}: add_key", "q")
    mode = _mode(clip, interpolation)
    names = _joint_names(clip, joints, keyable=True)
    return _key_joints(clip, t, {nm: q[list(skel.joint_dofs(nm))] for nm in names}, mode)


def set_joint_key(clip: Clip, joint: str | int, t: float, values: Any,
                  interpolation: str | None = None) -> Clip:
    """Key one joint at ``t`` from the values of its own DoFs ``(d,)`` (joint DoF order)."""
    t = _time(clip, t)
    skel = clip.skeleton
    name = _joint_names(clip, joint, keyable=True)[0]
    d = len(skel.joint_dofs(name))
    v = _check_array(values, (d,), f"clip {clip.name!r}: key of joint {name!r}", "values")
    return _key_joints(clip, t, {name: v}, _mode(clip, interpolation))


def _key_joints(clip: Clip, t: float, values: Mapping[str, np.ndarray], mode: str) -> Clip:
    by_joint = {tr.joint: tr for tr in clip.tracks}
    for name, v in values.items():
        tr = by_joint.get(name)
        if tr is None:
            by_joint[name] = JointTrack(name, [t], v[None, :], (mode,))
        else:
            times, rows, modes = _put(tr.times, tr.values, tr.interpolation, t, v, mode)
            tan = None
            if tr.tangents is not None:  # a new or replaced key gets automatic tangents
                auto = np.full(v.shape, np.nan)
                tan = _put(tr.times, tr.tangents, tr.interpolation, t, auto, mode)[1]
            by_joint[name] = JointTrack(name, times, rows, modes, tan)
    return clip.replace(tracks=tuple(by_joint.values()))


# ---------------------------------------------------------------------- effector keys
def add_effector_key(clip: Clip, site: str | int, t: float, position: Any, rotation: Any = None,
                     interpolation: str | None = None, pinned: bool | None = None,
                     weight: float | None = None) -> Clip:
    """Key an IK target of an effector site at ``t``.

    Args:
        site: site name or index.
        t: key time, s.
        position: ``(3,)`` m, world.
        rotation: ``(3, 3)`` world_from_site or a wxyz quaternion ``(4,)``; a track keeps
            rotations on all keys or on none.
        interpolation: mode of the new key (default ``clip.interpolation``).
        pinned, weight: set for the whole track (default: the track's, else False / 1).

    Raises:
        ClipError: bad values, a rotation on a position-only track or the reverse;
            UnknownNameError: unknown site.
    """
    t = _time(clip, t)
    name = _site_names(clip, site)[0]
    where = f"clip {clip.name!r}: key of site {name!r}"
    pos = _check_array(position, (3,), where, "position")
    rot = None
    if rotation is not None:
        r = np.asarray(rotation, dtype=float)
        if r.shape == (4,):
            if not np.all(np.isfinite(r)) or np.linalg.norm(r) < 1e-9:
                raise ClipError(f"{where}: quaternion must be finite and non-zero")
            r = quat_to_matrix(r)
        rot = _check_array(r, (3, 3), where, "rotation")
    mode = _mode(clip, interpolation)
    by_site = {ef.site: ef for ef in clip.effectors}
    ef = by_site.get(name)
    if ef is None:
        by_site[name] = EffectorTrack(name, [t], pos[None], None if rot is None else rot[None],
                                      (mode,), bool(pinned) if pinned is not None else False,
                                      1.0 if weight is None else weight)
    else:
        if (rot is None) != (ef.rotations is None):
            have = "position-only" if ef.rotations is None else "position and rotation"
            raise ClipError(f"{where}: the track has {have} keys; a key must match")
        times, pos_rows, modes = _put(ef.times, ef.positions, ef.interpolation, t, pos, mode)
        rots = None
        if rot is not None:
            k, same = _insert(ef.times, t)
            rots = ef.rotations.copy()
            rots = np.concatenate([rots[:k], rot[None], rots[k + 1 if same else k:]])
        by_site[name] = EffectorTrack(name, times, pos_rows, rots, modes,
                                      ef.pinned if pinned is None else pinned,
                                      ef.weight if weight is None else weight)
    return clip.replace(effectors=tuple(by_site.values()))


def set_effector(clip: Clip, site: str | int, pinned: bool | None = None,
                 weight: float | None = None) -> Clip:
    """Change the ``pinned`` flag or weight of an effector track."""
    name = _site_names(clip, site)[0]
    ef = clip.effector(name)
    if ef is None:
        raise ClipError(f"clip {clip.name!r}: site {name!r} has no effector track")
    new = ef.replace(pinned=ef.pinned if pinned is None else pinned,
                     weight=ef.weight if weight is None else weight)
    return clip.replace(effectors=tuple(new if e is ef else e for e in clip.effectors))


# ---------------------------------------------------------------------- delete / move
def delete_key(clip: Clip, t: float, joints=None, sites=None) -> Clip:
    """Delete the keys at time ``t`` in the selected tracks (tracks left empty are removed).

    Raises:
        ClipError: no selected track has a key at ``t``.
    """
    t = _time(clip, t)
    jn, sn = _selection(clip, joints, sites)
    tracks, effs, found = [], [], False
    for tr in clip.tracks:
        k, same = _insert(tr.times, t)
        if tr.joint in jn and same:
            found = True
            if tr.n_keys > 1:
                tracks.append(tr.take(np.arange(tr.n_keys) != k))
        else:
            tracks.append(tr)
    for ef in clip.effectors:
        k, same = _insert(ef.times, t)
        if ef.site in sn and same:
            found = True
            if ef.n_keys > 1:
                keep = np.arange(ef.n_keys) != k
                effs.append(EffectorTrack(ef.site, ef.times[keep], ef.positions[keep],
                                          None if ef.rotations is None else ef.rotations[keep],
                                          tuple(np.array(ef.interpolation)[keep]), ef.pinned,
                                          ef.weight))
        else:
            effs.append(ef)
    if not found:
        raise ClipError(f"clip {clip.name!r}: no key at t={t:g} s in the selected tracks")
    return clip.replace(tracks=tuple(tracks), effectors=tuple(effs))


def move_key(clip: Clip, t_from: float, t_to: float, joints=None, sites=None) -> Clip:
    """Move the keys at ``t_from`` to ``t_to`` in the selected tracks (replacing keys there).

    Raises:
        ClipError: no selected track has a key at ``t_from``; bad times.
    """
    t_from = _time(clip, t_from, "t_from")
    t_to = _time(clip, t_to, "t_to")
    jn, sn = _selection(clip, joints, sites)
    tracks, effs, found = [], [], False
    for tr in clip.tracks:
        k, same = _insert(tr.times, t_from)
        if tr.joint in jn and same:
            found = True
            rest = tr.take(np.arange(tr.n_keys) != k)
            times, rows, modes = _put(rest.times, rest.values, rest.interpolation, t_to,
                                      tr.values[k], tr.interpolation[k])
            tan = None
            if tr.tangents is not None:
                tan = _put(rest.times, tr.tangents[np.arange(tr.n_keys) != k], rest.interpolation,
                           t_to, tr.tangents[k], tr.interpolation[k])[1]
            tracks.append(JointTrack(tr.joint, times, rows, modes, tan))
        else:
            tracks.append(tr)
    for ef in clip.effectors:
        k, same = _insert(ef.times, t_from)
        if ef.site in sn and same:
            found = True
            keep = np.arange(ef.n_keys) != k
            times, pos, modes = ef.times[keep], ef.positions[keep], tuple(
                np.array(ef.interpolation)[keep])
            rots = None if ef.rotations is None else ef.rotations[keep]
            k2, same2 = _insert(times, t_to)
            times, pos, modes = _put(times, pos, modes, t_to, ef.positions[k], ef.interpolation[k])
            if rots is not None:
                rots = np.concatenate([rots[:k2], ef.rotations[k][None], rots[k2 + 1 if same2 else k2:]])
            effs.append(EffectorTrack(ef.site, times, pos, rots, modes, ef.pinned, ef.weight))
        else:
            effs.append(ef)
    if not found:
        raise ClipError(f"clip {clip.name!r}: no key at t={t_from:g} s in the selected tracks")
    return clip.replace(tracks=tuple(tracks), effectors=tuple(effs))


def remove_tracks(clip: Clip, joints: Iterable[str | int] | str | int = (),
                  sites: Iterable[str | int] | str | int = ()) -> Clip:
    """Remove whole tracks (the joints fall back to :attr:`Clip.base`)."""
    jn = set(_joint_names(clip, joints))
    sn = set(_site_names(clip, sites))
    return clip.replace(tracks=tuple(tr for tr in clip.tracks if tr.joint not in jn),
                        effectors=tuple(ef for ef in clip.effectors if ef.site not in sn))


def set_interpolation(clip: Clip, mode: str, joints=None, sites=None,
                      times: Sequence[float] | None = None) -> Clip:
    """Set the interpolation mode of keys (all keys of the selected tracks, or those at ``times``).

    Also sets ``clip.interpolation`` (the mode of new keys) when no selection is given.
    """
    mode = _mode(clip, mode)
    jn, sn = _selection(clip, joints, sites)
    sel_t = None if times is None else [_time(clip, x, "times") for x in times]

    def modes_for(tr) -> tuple[str, ...]:
        out = list(tr.interpolation)
        for k, tk in enumerate(tr.times):
            if sel_t is None or any(abs(tk - x) <= TIME_EPS for x in sel_t):
                out[k] = mode
        return tuple(out)

    tracks = tuple(tr.replace(interpolation=modes_for(tr)) if tr.joint in jn else tr
                   for tr in clip.tracks)
    effs = tuple(ef.replace(interpolation=modes_for(ef)) if ef.site in sn else ef
                 for ef in clip.effectors)
    changes: dict[str, Any] = {"tracks": tracks, "effectors": effs}
    if joints is None and sites is None and times is None:
        changes["interpolation"] = mode
    return clip.replace(**changes)


# ---------------------------------------------------------------------- clip settings
def set_fps(clip: Clip, fps: float) -> Clip:
    """The clip with another frame rate (keys keep their times)."""
    return clip.replace(fps=fps)


def set_length(clip: Clip, length: float | None) -> Clip:
    """The clip with a fixed length in s (``None``: the last key time)."""
    return clip.replace(fixed_length=length)


def set_base(clip: Clip, base: Any) -> Clip:
    """The clip with another pose for DoFs without a track."""
    return clip.replace(base=base)


def set_ik(clip: Clip, solver: str | None = None, options: Mapping[str, Any] | None = None,
           dofs: Sequence[str] | None | bool = False) -> Clip:
    """The clip with other IK settings (``dofs=False`` keeps the current restriction)."""
    ik = clip.ik
    return clip.replace(ik=IKSettings(ik.solver if solver is None else solver,
                                      ik.options if options is None else options,
                                      ik.dofs if dofs is False else dofs))


def rename(clip: Clip, name: str) -> Clip:
    return clip.replace(name=name)


# ---------------------------------------------------------------------- navigation
def key_times(clip: Clip, joints=None, sites=None) -> np.ndarray:
    """Sorted distinct key times (s) of the selected tracks (default: all)."""
    jn, sn = _selection(clip, joints, sites)
    return distinct_times([tr.times for tr in clip.tracks if tr.joint in jn]
                          + [ef.times for ef in clip.effectors if ef.site in sn])


def next_key_time(clip: Clip, t: float, joints=None, sites=None) -> float | None:
    """The first key time after ``t`` (by more than :data:`TIME_EPS`), or ``None``."""
    ts = key_times(clip, joints, sites)
    after = ts[ts > float(t) + TIME_EPS]
    return float(after[0]) if len(after) else None


def previous_key_time(clip: Clip, t: float, joints=None, sites=None) -> float | None:
    """The last key time before ``t`` (by more than :data:`TIME_EPS`), or ``None``."""
    ts = key_times(clip, joints, sites)
    before = ts[ts < float(t) - TIME_EPS]
    return float(before[-1]) if len(before) else None


def frame_of(clip: Clip, t: float) -> int:
    """The frame nearest time ``t`` at the clip's frame rate."""
    return int(round(float(t) * clip.fps))


def clip_from_poses(skeleton: Skeleton, times: Sequence[float], poses: Any, name: str = "clip",
                    fps: float = 30.0, interpolation: str = "linear",
                    joints: Iterable[str] | None = None) -> Clip:
    """A clip keying whole poses ``(K, n)`` at ``times (K,)`` (all joints, or only ``joints``)."""
    clip = new_clip(skeleton, name=name, fps=fps, interpolation=interpolation)
    t = np.asarray(times, dtype=float)
    try:
        q = np.asarray(poses, dtype=float)
    except (TypeError, ValueError):
        raise ClipError(f"clip {name!r}: poses must be numbers") from None
    if t.ndim != 1 or q.shape != (t.shape[0], skeleton.n_dof):
        raise ClipError(f"clip {name!r}: poses must have shape ({t.shape[0] if t.ndim == 1 else 'K'}, "
                        f"{skeleton.n_dof}) for times of shape (K,), got poses {q.shape} and times "
                        f"{t.shape}")
    names = _joint_names(clip, joints, keyable=True)
    tracks = []
    for nm in names:
        cols = list(skeleton.joint_dofs(nm))
        tracks.append(JointTrack(nm, t, q[:, cols], interpolation))
    return clip.replace(tracks=tuple(tracks))


__all__ = ["add_effector_key", "add_key", "clip_from_poses", "delete_key", "frame_of",
           "key_times", "move_key", "new_clip", "next_key_time", "previous_key_time",
           "remove_tracks", "rename", "set_base", "set_effector", "set_fps", "set_ik",
           "set_interpolation", "set_joint_key", "set_length"]
