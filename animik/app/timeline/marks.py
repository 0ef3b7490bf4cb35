"""The timeline's queries: the current clip, its frames and end, snapping, timeline rows and
the key marks (cached per clip: clips are immutable). No state changes here."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from ... import anim
from ...anim import Clip
from ..state import AppState
from ..ui_state import ALL_TRACKS

DEFAULT_FPS = 30.0
DEFAULT_LENGTH = 2.0  # s, of a new clip
DEFAULT_INTERPOLATION = "smooth"
ALL, TARGETS = ALL_TRACKS, "@targets"  # timeline rows: every track / the effector tracks (else a joint)


def current_clip(state: AppState) -> Clip | None:
    return state.doc.current_clip


def clip_fps(clip: Clip | None) -> float:
    return DEFAULT_FPS if clip is None else clip.fps


def clip_end(clip: Clip | None) -> float:
    """The timeline's end, s: the clip length (a new or zero-length clip: 2 s)."""
    if clip is None:
        return DEFAULT_LENGTH
    n = clip.length
    return n if n > 0 else DEFAULT_LENGTH


def last_frame(clip: Clip | None) -> int:
    return int(math.floor(clip_end(clip) * clip_fps(clip) + 1e-6))


def snap(clip: Clip | None, t: float) -> float:
    """The frame time ``i / fps`` nearest ``t`` within the timeline."""
    fps = clip_fps(clip)
    i = int(np.clip(round(float(t) * fps), 0, last_frame(clip)))
    return i / fps


def frame_of(clip: Clip | None, t: float) -> int:
    return int(round(float(t) * clip_fps(clip)))


def unique_name(state: AppState, base: str) -> str:
    names = {c.name for c in state.doc.clips}
    base = base.strip() or "clip"
    if base not in names:
        return base
    k = 2
    while f"{base} {k}" in names:
        k += 1
    return f"{base} {k}"


def row_selection(clip: Clip, row: str) -> dict:
    """``joints`` / ``sites`` keyword arguments of the anim edit functions for a timeline row."""
    if row == ALL:
        return {}
    if row == TARGETS:
        return {"joints": (), "sites": [ef.site for ef in clip.effectors]}
    return {"joints": [row]}


@dataclass(frozen=True)
class Marks:
    """Key marks of a clip for the timeline.

    Attributes:
        times: ``(K,)`` distinct key times of every track, s.
        whole: ``(K,)`` bool: every joint with DoFs has a key there (a whole-pose key).
        joint_times: ``(K,)`` bool: some joint track has a key there.
        target_times: ``(E,)`` distinct key times of the effector tracks.
    """

    times: np.ndarray
    whole: np.ndarray
    joint_times: np.ndarray
    target_times: np.ndarray


_MARKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def marks(clip: Clip) -> Marks:
    """The clip's key marks (cached: clips are immutable)."""
    m = _MARKS.get(clip)
    if m is None:
        times = anim.key_times(clip)
        count = np.zeros(len(times), dtype=int)
        for tr in clip.tracks:
            idx = np.clip(np.searchsorted(times, tr.times - anim.TIME_EPS), 0, max(len(times) - 1, 0))
            count[idx] += 1
        skel = clip.skeleton
        keyable = sum(1 for j in range(skel.n_joints) if len(skel.joint_dofs(j)))
        target = anim.key_times(clip, joints=(), sites=[ef.site for ef in clip.effectors]) \
            if clip.effectors else np.zeros(0)
        m = Marks(times, count == keyable, count > 0, target)
        _MARKS[clip] = m
    return m


def row_times(clip: Clip, row: str) -> np.ndarray:
    """Key times of a timeline row."""
    if row == ALL:
        return marks(clip).times
    if row == TARGETS:
        return marks(clip).target_times
    tr = clip.track(row)
    return np.zeros(0) if tr is None else tr.times


def key_interpolation(clip: Clip, t: float, row: str) -> str | None:
    """The interpolation of the keys at ``t`` in a row (``"mixed"`` when they differ), or None."""
    modes = set()
    sel = row_selection(clip, row)
    joints = sel.get("joints")
    sites = sel.get("sites")
    for tr in clip.tracks:
        if joints is None or tr.joint in joints:
            k = np.flatnonzero(np.abs(tr.times - t) <= anim.TIME_EPS)
            modes.update(tr.interpolation[int(i)] for i in k)
    for ef in clip.effectors:
        if (joints is None and sites is None) or (sites is not None and ef.site in sites):
            k = np.flatnonzero(np.abs(ef.times - t) <= anim.TIME_EPS)
            modes.update(ef.interpolation[int(i)] for i in k)
    if not modes:
        return None
    return modes.pop() if len(modes) == 1 else "mixed"

