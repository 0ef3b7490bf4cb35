"""Clip edits: new, duplicate, delete, rename, select, frame rate, length, the interpolation
of new keys. Each is one undo step."""

from __future__ import annotations

import math

from ... import anim
from ...anim import Clip, ClipError
from ..edits import commit as commit_edit
from ..edits import set_doc
from ..state import AppState
from .marks import DEFAULT_FPS, DEFAULT_INTERPOLATION, DEFAULT_LENGTH, current_clip, snap, unique_name
from .playhead import show_time


def _set_clip(state: AppState, clip: Clip) -> None:
    set_doc(state, state.doc.with_clip(clip))


def ensure_clip(state: AppState) -> Clip:
    """The current clip, or a new empty one (2 s at 30 fps, smooth keys, the current pose as
    the base pose of joints without keys)."""
    clip = current_clip(state)
    if clip is not None:
        return clip
    doc = state.doc
    clip = anim.new_clip(doc.skeleton, unique_name(state, "clip"), fps=DEFAULT_FPS, base=doc.q,
                         interpolation=DEFAULT_INTERPOLATION, length=DEFAULT_LENGTH)
    set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips),
                                       time=snap(clip, doc.time)))
    return clip


def new_clip(state: AppState, name: str = "clip") -> Clip:
    """Add an empty clip and make it current (undoable); the playhead goes to 0."""
    doc = state.doc
    clip = anim.new_clip(doc.skeleton, unique_name(state, name), fps=DEFAULT_FPS, base=doc.q,
                         interpolation=DEFAULT_INTERPOLATION, length=DEFAULT_LENGTH)
    state.playing = False
    state.selected_key = None
    set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips), time=0.0))
    commit_edit(state, f"new clip {clip.name}")
    return clip


def duplicate_clip(state: AppState) -> Clip | None:
    clip = current_clip(state)
    if clip is None:
        return None
    doc = state.doc
    copy = anim.rename(clip, unique_name(state, f"{clip.name} copy"))
    clips = list(doc.clips)
    clips.insert(doc.clip + 1, copy)
    set_doc(state, doc.replace(clips=tuple(clips), clip=doc.clip + 1))
    commit_edit(state, f"duplicate clip {clip.name}")
    return copy


def delete_clip(state: AppState) -> bool:
    clip = current_clip(state)
    if clip is None:
        return False
    doc = state.doc
    clips = doc.clips[:doc.clip] + doc.clips[doc.clip + 1:]
    state.playing = False
    state.selected_key = None
    set_doc(state, doc.replace(clips=clips, clip=min(doc.clip, len(clips) - 1)))
    show_time(state, state.doc.time)
    commit_edit(state, f"delete clip {clip.name}")
    return True


def rename_clip(state: AppState, name: str) -> bool:
    clip = current_clip(state)
    name = str(name).strip()
    if clip is None or name == clip.name:
        return False
    if not name:
        state.error("A clip name cannot be empty")
        return False
    if name in {c.name for c in state.doc.clips}:
        state.error(f"There is already a clip named {name!r}")
        return False
    _set_clip(state, anim.rename(clip, name))
    commit_edit(state, f"rename clip {name}")
    return True


def select_clip(state: AppState, index: int) -> bool:
    doc = state.doc
    if not 0 <= index < len(doc.clips) or index == doc.clip:
        return False
    state.playing = False
    state.selected_key = None
    set_doc(state, doc.replace(clip=index))
    show_time(state, doc.time)
    commit_edit(state, f"clip {doc.clips[index].name}")
    return True


def set_clip_fps(state: AppState, fps: float, commit: bool = True) -> bool:
    """The current clip's frame rate (keys keep their times; the playhead snaps to a frame)."""
    clip = current_clip(state)
    if clip is None or not (math.isfinite(fps) and fps > 0) or fps == clip.fps:
        return False
    _set_clip(state, anim.set_fps(clip, float(fps)))
    if commit:
        show_time(state, state.doc.time)
        commit_edit(state, f"frame rate {fps:g}")
    return True


def set_clip_length(state: AppState, length: float, commit: bool = True) -> bool:
    """The current clip's length, s (at least one frame)."""
    clip = current_clip(state)
    if clip is None or not math.isfinite(length):
        return False
    length = max(float(length), 1.0 / clip.fps)
    if clip.fixed_length is not None and abs(length - clip.fixed_length) < 1e-12:
        return False
    _set_clip(state, anim.set_length(clip, length))
    if commit:
        show_time(state, state.doc.time)
        commit_edit(state, f"length {length:g} s")
    return True


def commit_clip_settings(state: AppState, label: str) -> None:
    """End of a continuous edit of the frame rate or length (the widget was released)."""
    show_time(state, state.doc.time)
    commit_edit(state, label)


def set_default_interpolation(state: AppState, mode: str) -> bool:
    """The interpolation of new keys (kept in the clip, saved with it)."""
    clip = ensure_clip(state)
    if mode == clip.interpolation:
        return False
    try:
        _set_clip(state, clip.replace(interpolation=mode))
    except ClipError as e:
        state.error(str(e))
        return False
    commit_edit(state, f"new keys {mode}")
    return True

