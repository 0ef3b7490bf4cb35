"""The Dope Sheet panel (a tab beside the Timeline): a row of keys per joint track and per
effector-target track, with a summary row on top.

Mouse: click a key to select it (Shift: add / remove), drag on empty space for a box (Shift:
add to the selection), drag selected keys to move them in time (Ctrl+drag: scale them about
the playhead), snapped to frames and applied at release (one undo step); click or drag on the
ruler to move the playhead; wheel: zoom the time axis about the mouse (Shift+wheel: scroll the
rows); middle-drag or the scroll bar under the keys: pan. Keys (with the panel focused):
Delete, Ctrl+C (the selected keys, else the pose at the playhead), Ctrl+V (at the playhead),
A (select all), Home (frame the clip). The panel calls :mod:`animik.app.timeline.dope_sheet`;
what it drew is kept in ``state.editing.dope`` for tests.
"""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from ...anim import TIME_EPS
from ...anim.selection import KeyRef
from .. import timeline as tl
from ..editing_ui import SUMMARY, DopeSheetView, KeyDrag
from ..state import AppState
from ..timeline import dope_sheet as ds
from .onion_controls import draw_onion_controls
from .timeline_panel import (
    BAND,
    BG,
    DIM,
    JOINT,
    PLAYHEAD,
    RULER_BG,
    TARGET,
    TEXT,
    WHOLE,
    _u32,
    draw_frame_ruler,
    draw_key_marks,
)

RULER_H = 20.0
ROW_H = 18.0
LABEL_W = 150.0
SCROLL_H = 10.0
HIT_PX = 6.0
SELECTED = _u32(1.0, 0.62, 0.15)
BOX = _u32(0.45, 0.65, 1.0, 0.25)
BOX_EDGE = _u32(0.45, 0.65, 1.0, 0.9)
GHOST = _u32(1.0, 1.0, 1.0, 0.6)
THUMB = _u32(0.45, 0.47, 0.52)
TRACK = _u32(0.16, 0.17, 0.19)
DENSE = 160  # visible keys in a row above which marks are merged into bars


def draw_dope_sheet_panel(state: AppState) -> None:
    ed = state.editing
    ed.focused = False  # this frame's: the dope sheet's or (drawn next) the graph editor's
    if imgui.begin("Dope Sheet")[0]:
        ed.focused = imgui.is_window_focused(imgui.FocusedFlags_.root_and_child_windows)
        _toolbar(state)
        _sheet(state)
    imgui.end()


def _toolbar(state: AppState) -> None:
    ed = state.editing
    n = len(ds.selection(state))
    imgui.begin_disabled(n == 0)
    if imgui.button("Delete##keys"):
        ds.delete_selected(state)
    imgui.end_disabled()
    imgui.same_line()
    if imgui.button("Copy"):
        ds.copy(state)
    if imgui.is_item_hovered():
        imgui.set_tooltip("copy the selected keys, or the pose at the playhead (Ctrl+C)")
    imgui.same_line()
    imgui.begin_disabled(ed.clipboard is None)
    if imgui.button("Paste"):
        ds.paste(state)
    imgui.end_disabled()
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("paste at the playhead (Ctrl+V)")
    imgui.same_line()
    imgui.set_next_item_width(70)
    _, ed.scale_factor = imgui.input_float("##scale", ed.scale_factor, 0.0, 0.0, "x%.3g")
    ed.scale_factor = float(min(max(ed.scale_factor, 0.01), 100.0))
    imgui.same_line()
    imgui.begin_disabled(n == 0)
    if imgui.button("Scale"):
        ds.scale_selected(state, ed.scale_factor)
    imgui.end_disabled()
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("scale the selected keys in time about the playhead (or Ctrl+drag)")
    imgui.same_line()
    if imgui.button("Frame all"):
        ds.frame_all(state)
    imgui.same_line()
    imgui.text_colored(DIM, f"{n} selected")
    imgui.same_line()
    draw_onion_controls(state)


def _visible_rows(state: AppState, n_fit: int) -> list[tuple[str, str]]:
    rows = ds.rows(state)
    ed = state.editing
    j = state.selected_joint
    if j != ed.followed_joint:  # a joint selected (in the view, the tree): show its row
        ed.followed_joint = j
        names = state.skeleton.joint_names
        row = ("joint", names[j]) if j is not None and 0 <= j < len(names) else None
        if row in rows:
            i = rows.index(row)
            if not ed.row_scroll < i < ed.row_scroll + n_fit:
                ed.row_scroll = i - 1
    first = int(min(max(ed.row_scroll, 0), max(len(rows) - n_fit, 0)))
    ed.row_scroll = first
    if first == 0:
        return rows[:n_fit]
    return [SUMMARY, *rows[1 + first:first + n_fit]]  # the summary row stays on top


def _label(row: tuple[str, str]) -> str:
    if row == SUMMARY:
        return "Summary"
    kind, name = row
    text = name if kind == "joint" else f"@ {name}"
    return text if len(text) <= 21 else text[:20] + "~"


def _sheet(state: AppState) -> None:
    ed = state.editing
    clip = tl.current_clip(state)
    avail = imgui.get_content_region_avail()
    w = max(float(avail.x), 200.0)
    h = max(float(avail.y), RULER_H + SCROLL_H + 2 * ROW_H)
    p0 = imgui.get_cursor_screen_pos()
    imgui.invisible_button("##dopesheet", (w, h), imgui.ButtonFlags_.mouse_button_left
                           | imgui.ButtonFlags_.mouse_button_middle)
    n_fit = max(int((h - RULER_H - SCROLL_H) // ROW_H), 1)
    rows = _visible_rows(state, n_fit)
    t0, t1 = ds.span(state)
    view = DopeSheetView(p0.x + LABEL_W, p0.x + w - 8.0, t0, t1, p0.y, p0.y + h - SCROLL_H,
                         p0.y + RULER_H,
                         [(r, p0.y + RULER_H + ROW_H * (i + 0.5)) for i, r in enumerate(rows)],
                         (p0.x + LABEL_W, p0.y + h - SCROLL_H, p0.x + w - 8.0, p0.y + h))
    ed.dope = view
    _interact(state, clip, view)
    t0, t1 = view.t0, view.t1 = ds.span(state)  # after a zoom / pan this frame
    j = state.selected_joint
    sel_row = ("joint", state.skeleton.joint_names[j]) if j is not None else None
    dl = imgui.get_window_draw_list()
    dl.push_clip_rect((p0.x, p0.y), (p0.x + w, p0.y + h), True)
    dl.add_rect_filled(p0, (p0.x + w, p0.y + h), BG)
    dl.add_rect_filled(p0, (p0.x + w, p0.y + RULER_H), RULER_BG)
    for i, (row, y) in enumerate(view.rows):
        dl.add_rect_filled((p0.x, y - ROW_H / 2), (p0.x + w, y + ROW_H / 2), BAND[i % 2])
        dl.add_text((p0.x + 6, y - 8), TEXT if row != SUMMARY else WHOLE, _label(row))
        if row == sel_row:
            dl.add_rect((p0.x + 1, y - ROW_H / 2), (p0.x + LABEL_W - 4, y + ROW_H / 2), JOINT)
    fps = tl.clip_fps(clip)
    ppf = (view.x1 - view.x0) / max((t1 - t0) * fps, 1e-9)
    f0, f1 = int(np.floor(t0 * fps)), int(np.ceil(t1 * fps))
    dl.push_clip_rect((view.x0 - 4, p0.y), (view.x1 + 4, p0.y + h), True)
    draw_frame_ruler(dl, view.x_of, fps, f0, f1, ppf, p0.y, view.bottom)
    end = tl.clip_end(clip)
    for a, b in ((t0, 0.0), (end, t1)):  # outside the clip: shaded
        if b > a:
            dl.add_rect_filled((view.x_of(a), view.ruler_bottom), (view.x_of(b), view.bottom),
                               _u32(0.0, 0.0, 0.0, 0.35))
    if clip is not None:
        _keys(state, dl, view)
    x = view.x_of(state.doc.time)
    dl.add_line((x, p0.y), (x, view.bottom), PLAYHEAD, 2.0)
    dl.add_triangle_filled((x - 6, p0.y), (x + 6, p0.y), (x, p0.y + 8), PLAYHEAD)
    dl.pop_clip_rect()
    _scroll_bar(state, dl, view, end)
    dl.pop_clip_rect()


def _keys(state: AppState, dl, view: DopeSheetView) -> None:
    ed = state.editing
    sel = ds.selection(state)
    sel_by_row: dict[tuple[str, str], list[float]] = {}
    for k in sel:
        sel_by_row.setdefault((k.kind, k.name), []).append(k.time)
    drag = ed.drag
    moving = drag is not None and drag.moved and drag.kind in ("move", "scale") and sel
    shift = _ghost_time(state, view, drag) if moving else None
    for row, y in view.rows:
        if row == SUMMARY:
            times, full = ds.summary_times(state)
            sel_t = np.array(sorted({k.time for k in sel}))
            sel_m = _member(times, sel_t)
            _marks(dl, view, times[~sel_m & full], y, 6.0, WHOLE)
            _marks(dl, view, times[~sel_m & ~full], y, 4.0, _u32(0.95, 0.55, 0.20))
            _marks(dl, view, times[sel_m], y, 6.0, SELECTED)
            continue
        times = ds.row_times(state, row)
        if not len(times):
            continue
        col = JOINT if row[0] == "joint" else TARGET
        is_sel = _member(times, np.array(sorted(sel_by_row.get(row, []))))
        _marks(dl, view, times[~is_sel], y, 5.0, col)
        _marks(dl, view, times[is_sel], y, 5.5, SELECTED)
        if moving and is_sel.any():
            _marks(dl, view, np.array([shift(t) for t in times[is_sel]]), y, 5.0, GHOST)
    if drag is not None and drag.kind == "box" and drag.moved:
        a, b = (min(drag.x, drag.cx), min(drag.y, drag.cy)), (max(drag.x, drag.cx), max(drag.y, drag.cy))
        dl.add_rect_filled(a, b, BOX)
        dl.add_rect(a, b, BOX_EDGE)
    if moving:
        clip = tl.current_clip(state)
        d = tl.frame_of(clip, shift(0.0) if drag.kind == "move" else 0.0)
        text = f"{d:+d} frames" if drag.kind == "move" else f"x{_scale_factor(state, view, drag):.3g}"
        dl.add_text((drag.cx + 12, drag.cy - 18), SELECTED, text)


def _member(times: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """``(len(times),)`` bool: the times within TIME_EPS of one of the sorted ``chosen``."""
    if not len(chosen) or not len(times):
        return np.zeros(len(times), bool)
    i = np.clip(np.searchsorted(chosen, times), 0, len(chosen) - 1)
    j = np.clip(i - 1, 0, len(chosen) - 1)
    return np.minimum(np.abs(chosen[i] - times), np.abs(chosen[j] - times)) <= TIME_EPS


def _ghost_time(state: AppState, view: DopeSheetView, drag: KeyDrag):
    """Where a moved / scaled key time goes while dragging (snapped like the edit)."""
    clip = tl.current_clip(state)
    fps = tl.clip_fps(clip)
    if drag.kind == "move":
        sel = ds.selection(state)
        dt = max(view.t_of(drag.cx) - view.t_of(drag.x), -min((k.time for k in sel), default=0.0))
        n = round(dt * fps)
        return lambda t: t + n / fps
    f = _scale_factor(state, view, drag)
    p = state.doc.time
    return lambda t: round(max(p + f * (t - p), 0.0) * fps) / fps


def _scale_factor(state: AppState, view: DopeSheetView, drag: KeyDrag) -> float:
    xp = view.x_of(state.doc.time)
    d0 = drag.x - xp
    if abs(d0) < 1.0:
        return 1.0
    return float(max((drag.cx - xp) / d0, 0.01))


def _marks(dl, view: DopeSheetView, times: np.ndarray, y: float, size: float, col: int) -> None:
    if not len(times):
        return
    times = times[(times >= view.t0 - 1e-9) & (times <= view.t1 + 1e-9)]
    if not len(times):
        return
    xs = view.x0 + (view.x1 - view.x0) * (times - view.t0) / max(view.t1 - view.t0, 1e-9)
    draw_key_marks(dl, xs, y, size, col, dense=DENSE)


def _scroll_bar(state: AppState, dl, view: DopeSheetView, end: float) -> None:
    x0, y0, x1, y1 = view.scroll
    dl.add_rect_filled((x0, y0 + 2), (x1, y1 - 1), TRACK, 3.0)
    lo, hi = min(0.0, view.t0), max(end, view.t1)
    a = x0 + (x1 - x0) * (view.t0 - lo) / (hi - lo)
    b = x0 + (x1 - x0) * (view.t1 - lo) / (hi - lo)
    dl.add_rect_filled((a, y0 + 2), (max(b, a + 6), y1 - 1), THUMB, 3.0)


# ---------------------------------------------------------------------- input
def hit_key(state: AppState, view: DopeSheetView, mx: float, my: float
            ) -> tuple[tuple[str, str], list[KeyRef]] | None:
    """The key mark under the mouse: ``(row, its keys)`` (the summary: every key at that time)."""
    for row, y in view.rows:
        if abs(my - y) <= ROW_H / 2:
            times = ds.row_times(state, row)
            if not len(times):
                return None
            xs = view.x0 + (view.x1 - view.x0) * (times - view.t0) / max(view.t1 - view.t0, 1e-9)
            i = int(np.argmin(np.abs(xs - mx)))
            if abs(xs[i] - mx) > HIT_PX:
                return None
            return row, ds.keys_at(state, row, float(times[i]))
    return None


def _interact(state: AppState, clip, view: DopeSheetView) -> None:
    ed = state.editing
    io = imgui.get_io()
    mx, my = imgui.get_mouse_pos()
    hovered = imgui.is_item_hovered()
    if hovered and io.mouse_wheel != 0.0:
        if io.key_shift:
            ed.row_scroll -= int(np.sign(io.mouse_wheel)) * 3
        else:
            ds.zoom(state, 1.25 ** io.mouse_wheel, about=view.t_of(mx))
    if hovered and imgui.is_mouse_clicked(imgui.MouseButton_.middle):
        ed.drag = KeyDrag("pan", mx, my, mx, my, start=view.t0)
        return
    if imgui.is_item_activated() and imgui.is_mouse_clicked(imgui.MouseButton_.left):
        shift, ctrl = io.key_shift, io.key_ctrl
        sx0, sy0, sx1, sy1 = view.scroll
        if my >= sy0:
            ed.drag = KeyDrag("scroll", mx, my, mx, my, start=view.t0)
        elif my < view.ruler_bottom:
            tl.pause(state)
            ed.drag = KeyDrag("scrub", mx, my, mx, my)
            tl.set_time(state, view.t_of(mx))
        else:
            hit = hit_key(state, view, mx, my) if clip is not None else None
            if hit is None:
                ed.drag = KeyDrag("box", mx, my, mx, my, add=shift)
            else:
                _, keys = hit
                cur = set(ds.selection(state))
                if shift:
                    ds.select(state, keys, toggle=True)
                elif not set(keys) <= cur:
                    ds.select(state, keys)
                ed.drag = KeyDrag("scale" if ctrl else "move", mx, my, mx, my)
        return
    drag = ed.drag
    if drag is None:
        return
    down = imgui.is_mouse_down(imgui.MouseButton_.middle if drag.kind == "pan"
                               else imgui.MouseButton_.left)
    if down:
        drag.moved = drag.moved or abs(mx - drag.x) + abs(my - drag.y) > 2.0
        drag.cx, drag.cy = mx, my
        if drag.kind == "scrub":
            t = tl.snap(clip, view.t_of(mx))
            if t != state.doc.time:
                tl.set_time(state, t)
        elif drag.kind == "pan":
            per_px = (view.t1 - view.t0) / max(view.x1 - view.x0, 1.0)
            ds.pan(state, drag.start - (mx - drag.x) * per_px - view.t0)
        elif drag.kind == "scroll":
            end = tl.clip_end(clip)
            lo, hi = min(0.0, view.t0), max(end, view.t1)
            per_px = (hi - lo) / max(view.scroll[2] - view.scroll[0], 1.0)
            ds.pan(state, drag.start + (mx - drag.x) * per_px - view.t0)
        return
    ed.drag = None
    if not drag.moved:
        if drag.kind == "box" and not drag.add:
            ds.select(state, [])
        return
    if drag.kind == "move":
        ds.move_selected(state, view.t_of(drag.cx) - view.t_of(drag.x))
    elif drag.kind == "scale":
        ds.scale_selected(state, _scale_factor(state, view, drag))
    elif drag.kind == "box":
        y0, y1 = sorted((drag.y, drag.cy))
        box_rows = [r for r, y in view.rows if y + ROW_H / 2 >= y0 and y - ROW_H / 2 <= y1]
        ds.box_select(state, box_rows, view.t_of(drag.x), view.t_of(drag.cx), add=drag.add)
