"""The dope sheet's actions (no GUI): select keys (click, shift-click, box), move and scale the
selected keys in time (snapped to frames), delete them, copy and paste keys or poses at the
playhead, and the time window's zoom and pan.

Every key edit is one undo step (:func:`animik.app.edits.commit`); the selection and the time
window are view state (``state.editing``) and are not undone. The edits are the pure functions
of :mod:`animik.anim.selection`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ...anim import selection as ks
from ...anim.selection import KeyRef
from ...anim.tracks import TIME_EPS, distinct_times
from ...cache import cached
from ..editing_ui import SUMMARY
from ..edits import USER_ERRORS, commit
from ..state import AppState
from .clips import _set_clip
from .marks import clip_end, current_clip, frame_of
from .playhead import show_time

Row = tuple[str, str]
MIN_SPAN = 0.05  # s: the most the time window zooms in


def rows(state: AppState) -> list[Row]:
    """The dope sheet's rows: the summary, then a row per joint track and per effector track."""
    clip = current_clip(state)
    if clip is None:
        return [SUMMARY]
    return [SUMMARY, *[(ks.JOINT, tr.joint) for tr in clip.tracks],
            *[(ks.SITE, ef.site) for ef in clip.effectors]]


def _track_times(clip) -> dict[Row, np.ndarray]:
    """``{(kind, name): key times}`` of every track (cached per clip: clips are immutable)."""
    return cached(clip, "app.dope_sheet.times", lambda: {
        **{(ks.JOINT, tr.joint): tr.times for tr in clip.tracks},
        **{(ks.SITE, ef.site): ef.times for ef in clip.effectors}})


def summary_times(state: AppState) -> tuple[np.ndarray, np.ndarray]:
    """``(times, whole)`` of the summary row: the distinct key times and whether every track
    has a key there (cached per clip)."""
    clip = current_clip(state)
    if clip is None:
        return np.zeros(0), np.zeros(0, bool)

    def build():
        tt = list(_track_times(clip).values())
        times = distinct_times(tt)
        count = np.zeros(len(times), int)
        for t in tt:
            i = np.clip(np.searchsorted(times, t - TIME_EPS), 0, len(times) - 1)
            count[i] += 1
        return times, count == len(tt)

    return cached(clip, "app.dope_sheet.summary", build)


def row_times(state: AppState, row: Row) -> np.ndarray:
    """The key times of a row (the summary row: every distinct key time)."""
    clip = current_clip(state)
    if clip is None:
        return np.zeros(0)
    if row == SUMMARY:
        return summary_times(state)[0]
    return _track_times(clip).get(row, np.zeros(0))


def row_keys(state: AppState, row: Row) -> list[KeyRef]:
    """Every key of a row (the summary row: every key of the clip)."""
    clip = current_clip(state)
    if clip is None:
        return []
    return ks.all_keys(clip, None if row == SUMMARY else [row])


def _has(clip, k: KeyRef) -> bool:
    t = _track_times(clip).get((k.kind, k.name))
    if t is None or not len(t):
        return False
    i = int(np.clip(np.searchsorted(t, k.time), 1, len(t) - 1)) if len(t) > 1 else 0
    return min(abs(t[i] - k.time), abs(t[max(i - 1, 0)] - k.time)) <= TIME_EPS


def selection(state: AppState) -> list[KeyRef]:
    """The selected keys the current clip has (a selection outlives undo; stale refs drop)."""
    clip = current_clip(state)
    if clip is None or not state.editing.selection:
        return []
    return sorted(k for k in state.editing.selection if _has(clip, k))


def select(state: AppState, keys: Iterable[KeyRef], add: bool = False, toggle: bool = False) -> None:
    """Select ``keys`` (replacing the selection; ``add``: added to it; ``toggle``: flipped)."""
    keys = set(keys)
    cur = set(selection(state)) if (add or toggle) else set()
    if toggle:
        cur ^= keys
    else:
        cur |= keys
    state.editing.selection = frozenset(cur)
    state.selected_key = None  # the timeline's single key selection gives way


def keys_at(state: AppState, row: Row, t: float) -> list[KeyRef]:
    """The keys of a row at time ``t`` (the summary row: of every track)."""
    clip = current_clip(state)
    if clip is None:
        return []
    tracks = _track_times(clip)
    rows_ = list(tracks) if row == SUMMARY else [row]
    out = []
    for r in rows_:
        times = tracks.get(r, np.zeros(0))
        hit = times[np.abs(times - t) <= TIME_EPS]
        out += [KeyRef(r[0], r[1], float(x)) for x in hit]
    return out


def box_select(state: AppState, box_rows: Iterable[Row], t0: float, t1: float,
               add: bool = False) -> int:
    """Select the keys of ``box_rows`` between ``t0`` and ``t1`` (the summary row stands for
    every track). Returns how many keys are selected."""
    clip = current_clip(state)
    if clip is None:
        return 0
    box_rows = list(box_rows)
    tracks = None if SUMMARY in box_rows else box_rows
    if tracks is None:
        tracks = [r for r in rows(state) if r != SUMMARY]
    select(state, ks.keys_in_box(clip, tracks, t0, t1), add=add)
    return len(state.editing.selection)


def _edit(state: AppState, fn, label: str) -> bool:
    clip = current_clip(state)
    sel = selection(state)
    if clip is None or not sel:
        state.info("Select keys first (click a key, shift-click, or drag a box in the dope sheet)")
        return False
    try:
        out = fn(clip, sel)
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    new, refs = out if isinstance(out, tuple) else (out, [])
    state.playing = False
    _set_clip(state, new)
    state.editing.selection = frozenset(refs)
    show_time(state, state.doc.time)
    commit(state, label)
    return True


def move_selected(state: AppState, dt: float) -> bool:
    """Move the selected keys by ``dt`` s (whole frames; keys they land on are replaced)."""
    clip = current_clip(state)
    if clip is None:
        return False
    sel = selection(state)
    if sel:  # not before 0 s: the earliest selected key stops there
        dt = max(dt, -min(k.time for k in sel))
    n = frame_of(clip, dt)
    if n == 0:
        return False
    return _edit(state, lambda c, s: ks.move_keys(c, s, n / c.fps),
                 f"move {len(sel)} key{'s' * (len(sel) != 1)} by {n:+d} frames")


def scale_selected(state: AppState, factor: float, pivot: float | None = None) -> bool:
    """Scale the selected keys' times by ``factor`` about ``pivot`` (default: the playhead)."""
    p = state.doc.time if pivot is None else float(pivot)
    return _edit(state, lambda c, s: ks.scale_keys(c, s, factor, p),
                 f"scale keys x{factor:g} about frame {frame_of(current_clip(state), p)}")


def delete_selected(state: AppState) -> bool:
    """Delete the selected keys."""
    n = len(selection(state))
    return _edit(state, lambda c, s: ks.delete_keys(c, s), f"delete {n} key{'s' * (n != 1)}")


def copy(state: AppState) -> bool:
    """Copy the selected keys; with none selected, the pose at the playhead (every joint track's
    value there, keyed or interpolated)."""
    clip = current_clip(state)
    if clip is None:
        state.info("No clip to copy from")
        return False
    sel = selection(state)
    try:
        board = ks.copy_keys(clip, sel) if sel else ks.copy_pose(clip, state.doc.time)
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    state.editing.clipboard = board
    what = f"{board.n_keys} keys" if sel else f"the pose at frame {frame_of(clip, state.doc.time)}"
    state.info(f"Copied {what}")
    return True


def paste(state: AppState) -> bool:
    """Paste the copied keys with the earliest at the playhead (replacing keys there)."""
    clip = current_clip(state)
    board = state.editing.clipboard
    if clip is None or board is None:
        state.info("Nothing to paste: copy keys or a pose first (Ctrl+C in the dope sheet)")
        return False
    t = state.doc.time
    try:
        new, refs = ks.paste_keys(clip, board, t)
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    state.playing = False
    _set_clip(state, new)
    state.editing.selection = frozenset(refs)
    show_time(state, t)
    commit(state, f"paste {board.n_keys} keys at frame {frame_of(new, t)}")
    return True


# ---------------------------------------------------------------------- time window
def span(state: AppState) -> tuple[float, float]:
    """``(t0, t1)``: the times at the editors' left and right edges."""
    end = clip_end(current_clip(state))
    return state.editing.window.span(end)


def zoom(state: AppState, factor: float, about: float | None = None) -> None:
    """Zoom the time window by ``factor`` (> 1: in) about time ``about`` (default: the middle)."""
    t0, t1 = span(state)
    c = 0.5 * (t0 + t1) if about is None else float(about)
    n = max((t1 - t0) / factor, MIN_SPAN)
    w = state.editing.window
    w.length = n
    w.start = c - (c - t0) * n / (t1 - t0)


def pan(state: AppState, dt: float) -> None:
    """Shift the time window by ``dt`` s."""
    t0, t1 = span(state)
    w = state.editing.window
    w.length = t1 - t0
    w.start = t0 + float(dt)


def frame_all(state: AppState) -> None:
    """The time window back to the whole clip."""
    w = state.editing.window
    w.start, w.length = 0.0, None


__all__ = ["MIN_SPAN", "box_select", "copy", "delete_selected", "frame_all", "keys_at",
           "move_selected", "pan", "paste", "row_keys", "row_times", "rows", "scale_selected",
           "select", "selection", "span", "summary_times", "zoom"]
