"""The Timeline panel (docked at the bottom): clips, transport, keying and the key marks.

Three rows of widgets and a track view:

* clip bar: the current clip (combo), New / Duplicate / Delete, its name, frame rate, length and
  the interpolation of new keys;
* transport: start, previous key, play / pause, next key, end, loop, the frame and time; Key
  pose (K), Key joint (Shift+K), Key targets (Alt+K), Auto-key; the selected key's
  interpolation and Delete;
* track view: a frame ruler, the playhead (red; click or drag anywhere off a mark to scrub),
  and a row of key marks per track group: "keys" (every track: a large gold diamond is a
  whole-pose key, a small orange one a key of some joints only), the selected joint's keys
  (cyan) and the effector-target keys (green). Click a mark to select it and go there, drag it
  to move the keys (one undo step, at release), right-click it for its menu (interpolation,
  delete). With the physics overlay on (or in physics mode) red marks under the ruler are the
  clip's frames that fail seed D's checks.

The panel only calls :mod:`animik.app.timeline`; what it last drew is kept in
``state.timeline_view`` (a :class:`TimelineView`) so tests and the window tests can click on
frames and marks.
"""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from ...anim import MODES, TIME_EPS
from .. import timeline as tl
from ..modes.physics import PhysicsData, infeasible_frames
from ..physics import physics_of
from ..state import AppState
from ..timeline import dope_sheet
from ..ui_state import TimelineDrag, TimelineView

RULER_H = 20.0
ROW_H = 20.0
LABEL_W = 118.0
HIT_PX = 7.0
DIM = (0.65, 0.67, 0.70, 1.0)


def _u32(r: float, g: float, b: float, a: float = 1.0) -> int:
    """IM_COL32 packing (no style alpha: the colours are the same every frame)."""
    return (int(a * 255) << 24) | (int(b * 255) << 16) | (int(g * 255) << 8) | int(r * 255)


BG = _u32(0.08, 0.09, 0.10)
BAND = (_u32(0.13, 0.14, 0.16), _u32(0.11, 0.12, 0.14))
RULER_BG = _u32(0.16, 0.17, 0.19)
TICK = _u32(0.45, 0.47, 0.50, 0.8)
TICK_MINOR = _u32(0.30, 0.31, 0.34, 0.8)
TEXT = _u32(0.75, 0.77, 0.80)
OUTSIDE = _u32(0.0, 0.0, 0.0, 0.35)
PLAYHEAD = _u32(0.95, 0.25, 0.22)
WHOLE = _u32(0.98, 0.82, 0.30)
PARTIAL = _u32(0.95, 0.55, 0.20)
JOINT = _u32(0.30, 0.82, 0.95)
TARGET = _u32(0.45, 0.92, 0.55)
SELECTED = _u32(1.0, 1.0, 1.0)
GHOST = _u32(1.0, 1.0, 1.0, 0.55)
INFEASIBLE = _u32(0.95, 0.15, 0.12)


def draw_timeline_panel(state: AppState) -> None:
    if imgui.begin("Timeline")[0]:
        _clip_bar(state)
        _transport_bar(state)
        _tracks(state)
        _key_menu(state)
    imgui.end()


# ---------------------------------------------------------------------- clip bar
def _clip_bar(state: AppState) -> None:
    doc = state.doc
    clip = doc.current_clip
    imgui.set_next_item_width(170)
    if imgui.begin_combo("##clip", clip.name if clip is not None else "(no clip)"):
        for i, c in enumerate(doc.clips):
            if imgui.selectable(f"{c.name}##{i}", i == doc.clip)[0]:
                tl.select_clip(state, i)
        imgui.end_combo()
    if imgui.is_item_hovered():
        imgui.set_tooltip("the clip being edited and played")
    imgui.same_line()
    if imgui.button("New"):
        tl.new_clip(state)
    imgui.same_line()
    imgui.begin_disabled(clip is None)
    if imgui.button("Duplicate"):
        tl.duplicate_clip(state)
    imgui.same_line()
    if imgui.button("Delete##clip"):
        tl.delete_clip(state)
    imgui.same_line()
    imgui.set_next_item_width(150)
    name = clip.name if clip is not None else ""
    buf = state.rename_buffer
    _, text = imgui.input_text("##clipname", name if buf is None else buf)
    state.rename_buffer = text if imgui.is_item_active() else None
    if imgui.is_item_deactivated_after_edit():
        tl.rename_clip(state, text)
    if imgui.is_item_hovered():
        imgui.set_tooltip("rename the clip (Enter)")
    clip = state.doc.current_clip
    imgui.same_line()
    imgui.set_next_item_width(95)
    ch, fps = imgui.drag_float("##fps", clip.fps if clip else tl.DEFAULT_FPS, 0.2, 1.0, 240.0,
                               "%.4g fps", imgui.SliderFlags_.always_clamp)
    if ch and clip is not None:
        tl.set_clip_fps(state, round(float(fps), 3), commit=False)
    if imgui.is_item_deactivated_after_edit():
        tl.commit_clip_settings(state, "frame rate")
    if imgui.is_item_hovered():
        imgui.set_tooltip("frame rate of playback and export (drag, or Ctrl+click to type)")
    clip = state.doc.current_clip
    imgui.same_line()
    imgui.set_next_item_width(95)
    ch, length = imgui.drag_float("##length", clip.length if clip else tl.DEFAULT_LENGTH, 0.02,
                                  0.0, 3600.0, "%.2f s", imgui.SliderFlags_.always_clamp)
    if ch and clip is not None:
        tl.set_clip_length(state, float(length), commit=False)
    if imgui.is_item_deactivated_after_edit():
        tl.commit_clip_settings(state, "clip length")
    if imgui.is_item_hovered():
        imgui.set_tooltip("clip length (drag, or Ctrl+click to type)")
    imgui.end_disabled()
    imgui.same_line()
    imgui.text_colored(DIM, "new keys")
    imgui.same_line()
    imgui.set_next_item_width(90)
    mode = clip.interpolation if clip is not None else tl.DEFAULT_INTERPOLATION
    ch, m = imgui.combo("##newkeys", list(MODES).index(mode), list(MODES))
    if ch:
        tl.set_default_interpolation(state, MODES[m])
    if imgui.is_item_hovered():
        imgui.set_tooltip("interpolation of new keys: linear, smooth (C1, no overshoot) or step")


# ---------------------------------------------------------------------- transport and keys
def _button(label: str, tip: str, enabled: bool = True) -> bool:
    imgui.begin_disabled(not enabled)
    pressed = imgui.button(label)
    imgui.end_disabled()
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip(tip)
    return pressed


def _transport_bar(state: AppState) -> None:
    clip = state.doc.current_clip
    has_keys = clip is not None and not clip.is_empty
    if _button("|<", "start (Shift+,)"):
        tl.pause(state)
        tl.jump(state, -2)
    imgui.same_line()
    if _button("<<", "previous key (, or [)", has_keys):
        tl.pause(state)
        tl.jump(state, -1)
    imgui.same_line()
    if _button("Pause" if state.playing else "Play ", "play / pause (Space)", has_keys):
        tl.toggle_play(state)
    imgui.same_line()
    if _button(">>", "next key (. or ])", has_keys):
        tl.pause(state)
        tl.jump(state, 1)
    imgui.same_line()
    if _button(">|", "end (Shift+.)"):
        tl.pause(state)
        tl.jump(state, 2)
    imgui.same_line()
    _, state.loop = imgui.checkbox("Loop", state.loop)
    imgui.same_line()
    f = tl.frame_of(clip, state.doc.time)
    imgui.text(f"frame {f:4d} / {tl.last_frame(clip)}   {state.doc.time:6.2f} s")
    imgui.same_line(0, 24)
    if _button("Key pose", "key the whole pose at the playhead (K)"):
        tl.key_pose(state)
    imgui.same_line()
    j = state.selected_joint
    joint_ok = j is not None and 0 <= j < state.skeleton.n_joints and len(state.skeleton.joint_dofs(j))
    if _button("Key joint", "key the selected joint (Shift+K)", joint_ok):
        tl.key_joint(state)
    imgui.same_line()
    any_active = any(e.active for e in state.doc.effectors)
    if _button("Key targets", "key the targets of the constrained effectors (Alt+K): the clip "
                              "becomes IK-driven", any_active):
        tl.key_targets(state)
    imgui.same_line()
    _, state.auto_key = imgui.checkbox("Auto-key", state.auto_key)
    if imgui.is_item_hovered():
        imgui.set_tooltip("dragging a handle keys the resulting pose (and the target, if the clip "
                          "has a target track for it); editing a DoF keys its joint (N)")
    sk = _valid_selected_key(state)
    if sk is not None:
        t, row = sk
        imgui.same_line(0, 24)
        what = "keys" if row == tl.ALL else ("targets" if row == tl.TARGETS else row)
        imgui.text_colored(DIM, f"{what} @ {tl.frame_of(clip, t)}")
        imgui.same_line()
        imgui.set_next_item_width(90)
        cur = tl.key_interpolation(clip, t, row) or "mixed"
        items = [*MODES, "mixed"] if cur == "mixed" else list(MODES)
        ch, m = imgui.combo("##keyinterp", items.index(cur), items)
        if ch and items[m] in MODES and items[m] != cur:
            tl.set_key_interpolation(state, items[m])
        if imgui.is_item_hovered():
            imgui.set_tooltip("interpolation of the segment starting at the selected key")
        imgui.same_line()
        if _button("Delete key", "delete the selected key (Del)"):
            tl.delete_key(state)


def _valid_selected_key(state: AppState) -> tuple[float, str] | None:
    sk = state.selected_key
    clip = state.doc.current_clip
    if sk is None or clip is None:
        return None
    times = tl.row_times(clip, sk[1])
    if not len(times) or np.min(np.abs(times - sk[0])) > TIME_EPS:
        state.selected_key = None
        return None
    return sk


# ---------------------------------------------------------------------- track view
def _rows(state: AppState) -> list[tuple[str, str]]:
    rows = [(tl.ALL, "keys")]
    skel = state.skeleton
    j = state.selected_joint
    if j is not None and 0 <= j < skel.n_joints and len(skel.joint_dofs(j)):
        rows.append((skel.joint_names[j], skel.joint_names[j]))
    clip = state.doc.current_clip
    if clip is not None and clip.effectors:
        rows.append((tl.TARGETS, "targets"))
    return rows


def _diamond(dl, x: float, y: float, s: float, col: int) -> None:
    dl.add_quad_filled((x, y - s), (x + s, y), (x, y + s), (x - s, y), col)


def _marks(dl, view: TimelineView, times: np.ndarray, y: float, size: float, col: int) -> None:
    if not len(times):
        return
    times = np.asarray(times)
    times = times[(times >= view.start - 1e-9) & (times <= view.end + 1e-9)]
    if not len(times):
        return
    draw_key_marks(dl, view.x_of(times), y, size, col)


def draw_key_marks(dl, xs: np.ndarray, y: float, size: float, col: int, dense: int = 64) -> None:
    """Key marks at screen x ``xs`` on the row at ``y``: diamonds, or, above ``dense`` marks (a
    clip from mocap, a key per frame), marks closer than 3 px merged into bars so the draw calls
    stay few whatever the key count (the timeline and the dope sheet)."""
    if len(xs) <= dense:
        for x in xs.tolist():
            _diamond(dl, x, y, size, col)
        return
    xs = np.unique(np.round(xs))
    brk = np.flatnonzero(np.diff(xs) > 3.0)
    starts = np.concatenate([[0], brk + 1])
    ends = np.concatenate([brk, [len(xs) - 1]])
    h = 0.6 * size
    for a, b in zip(xs[starts].tolist(), xs[ends].tolist(), strict=True):
        if b - a < 1.0:
            _diamond(dl, a, y, size, col)
        else:
            dl.add_rect_filled((a - h, y - h), (b + h, y + h), col)


def _infeasible_marks(state: AppState, dl, view: TimelineView, y: float) -> None:
    """Red marks under the ruler at the frames of the clip that fail seed D's checks (when the
    physics overlay is on or in physics mode; computed once per clip, batched)."""
    if not (physics_of(state).show or isinstance(state.doc.mode, PhysicsData)):
        return
    bad = infeasible_frames(state)
    if bad is None or not bad.any():
        return
    half = max(0.5 * (view.x1 - view.x0) / max((view.end - view.start) * view.fps, 1.0), 1.0)
    for f in np.flatnonzero(bad):
        x = view.x_of(f / view.fps)
        dl.add_rect_filled((x - half, y - 5), (x + half, y), INFEASIBLE)


def _tick_step(px_per_frame: float, min_px: float) -> int:
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 3000, 6000, 12000):
        if step * px_per_frame >= min_px:
            return step
    return 30000


def draw_frame_ruler(dl, x_of, fps: float, f0: int, f1: int, px_per_frame: float, top: float,
                     bottom: float) -> None:
    """Frames ``f0..f1`` on a ruler at ``top``: labelled ticks at least 48 px apart (their lines
    down to ``bottom``) and minor ticks between (the timeline's and the dope sheet's)."""
    step, minor = _tick_step(px_per_frame, 48.0), _tick_step(px_per_frame, 8.0)
    if minor < step:
        for f in range(f0 - f0 % minor, f1 + 1, minor):
            x = x_of(f / fps)
            dl.add_line((x, top + RULER_H - 5), (x, top + RULER_H), TICK_MINOR)
    for f in range(f0 - f0 % step, f1 + 1, step):
        x = x_of(f / fps)
        dl.add_line((x, top + RULER_H - 9), (x, bottom), TICK_MINOR)
        dl.add_text((x + 3, top + 2), TEXT, str(f))


def _tracks(state: AppState) -> None:
    clip = state.doc.current_clip
    rows = _rows(state)
    avail = imgui.get_content_region_avail()
    w = max(float(avail.x), 120.0)
    h = max(RULER_H + ROW_H * len(rows) + 4, float(avail.y))
    p0 = imgui.get_cursor_screen_pos()
    imgui.invisible_button("##tracks", (w, h), imgui.ButtonFlags_.mouse_button_left
                           | imgui.ButtonFlags_.mouse_button_right)
    fps = tl.clip_fps(clip)
    _zoom_pan(state, p0.x + LABEL_W, p0.x + w - 12.0)
    start, end = dope_sheet.span(state)  # zoomed and panned with the dope sheet (the wheel)
    view = TimelineView(p0.x + LABEL_W, p0.x + w - 12.0, p0.y, p0.y + h, end, fps,
                        [(r, p0.y + RULER_H + ROW_H * (i + 0.5)) for i, (r, _) in enumerate(rows)],
                        start)
    state.timeline_view = view
    _interact(state, clip, view)
    dl = imgui.get_window_draw_list()
    dl.add_rect_filled(p0, (p0.x + w, p0.y + h), BG)
    dl.add_rect_filled(p0, (p0.x + w, p0.y + RULER_H), RULER_BG)
    for i, (_, label) in enumerate(rows):
        y = p0.y + RULER_H + ROW_H * i
        dl.add_rect_filled((p0.x, y), (p0.x + w, y + ROW_H), BAND[i % 2])
        dl.add_text((p0.x + 6, y + 2), TEXT, label if len(label) <= 16 else label[:15] + "~")
    # frame ruler: labelled ticks at least 48 px apart, minor ticks between
    n = tl.last_frame(clip)
    ppf = (view.x1 - view.x0) / max((end - start) * fps, 1e-9)
    f0 = max(int(np.floor(start * fps)), 0)
    f1 = min(int(np.ceil(end * fps)), n)
    dl.add_text((p0.x + 6, p0.y + 2), TEXT, "frame")
    dl.push_clip_rect((view.x0 - 8, p0.y), (view.x1 + 12, p0.y + h), True)
    draw_frame_ruler(dl, view.x_of, fps, f0, f1, ppf, p0.y, p0.y + h)
    if clip is not None:
        m = tl.marks(clip)
        y_all = view.rows[0][1]
        _marks(dl, view, m.times[~m.whole], y_all, 4.0, PARTIAL)
        _marks(dl, view, m.times[m.whole], y_all, 6.0, WHOLE)
        for row, y in view.rows[1:]:
            _marks(dl, view, tl.row_times(clip, row), y, 5.0, TARGET if row == tl.TARGETS else JOINT)
        sk = _valid_selected_key(state)
        if sk is not None and any(r == sk[1] for r, _ in view.rows):
            x, y = view.x_of(sk[0]), view.row_y(sk[1])
            dl.add_quad((x, y - 8), (x + 8, y), (x, y + 8), (x - 8, y), SELECTED, 2.0)
        drag = state.timeline
        if isinstance(drag, TimelineDrag) and drag.kind == "key" and drag.moved \
                and any(r == drag.row for r, _ in view.rows):
            x, y = view.x_of(drag.to), view.row_y(drag.row)
            _diamond(dl, x, y, 6.0, GHOST)
            dl.add_line((view.x_of(drag.t), y), (x, y), GHOST)
        if clip.length > 0 and clip.last_key_time > clip.length + TIME_EPS:  # keys past the end
            dl.add_text((view.x1 - 90, p0.y + 2), PARTIAL, "keys past end")
        _infeasible_marks(state, dl, view, p0.y + RULER_H)
    x = view.x_of(state.doc.time)
    dl.add_line((x, p0.y), (x, p0.y + h), PLAYHEAD, 2.0)
    dl.add_triangle_filled((x - 6, p0.y), (x + 6, p0.y), (x, p0.y + 8), PLAYHEAD)
    dl.pop_clip_rect()


def _zoom_pan(state: AppState, x0: float, x1: float) -> None:
    """Wheel over the tracks: zoom the time axis about the mouse; middle-drag: pan (the time
    window is the dope sheet's, :mod:`animik.app.timeline.dope_sheet`)."""
    if not imgui.is_item_hovered():
        return
    io = imgui.get_io()
    mx = imgui.get_mouse_pos().x
    t0, t1 = dope_sheet.span(state)
    per_px = (t1 - t0) / max(x1 - x0, 1.0)
    if io.mouse_wheel != 0.0:
        dope_sheet.zoom(state, 1.25 ** io.mouse_wheel, about=t0 + (mx - x0) * per_px)
    if imgui.is_mouse_dragging(imgui.MouseButton_.middle, 0.0) and io.mouse_delta.x != 0.0:
        dope_sheet.pan(state, -io.mouse_delta.x * per_px)


def _hit(clip, view: TimelineView, mx: float, my: float) -> tuple[float, str] | None:
    """The key mark under the mouse: ``(time, row)``, or None."""
    if clip is None:
        return None
    for row, y in view.rows:
        if abs(my - y) <= ROW_H / 2:
            times = tl.row_times(clip, row)
            if not len(times):
                return None
            xs = view.x_of(times)
            i = int(np.argmin(np.abs(xs - mx)))
            return (float(times[i]), row) if abs(xs[i] - mx) <= HIT_PX else None
    return None


def _interact(state: AppState, clip, view: TimelineView) -> None:
    mx, my = imgui.get_mouse_pos()
    drag = state.timeline if isinstance(state.timeline, TimelineDrag) else None
    if imgui.is_item_activated():
        hit = _hit(clip, view, mx, my)
        if imgui.is_mouse_clicked(imgui.MouseButton_.right):
            state.timeline = None
            if hit is not None:
                state.selected_key = hit
                imgui.open_popup("##keymenu")
            return
        tl.pause(state)
        if hit is not None:
            state.selected_key = hit
            state.timeline = TimelineDrag("key", hit[0], hit[1], hit[0])
        else:
            state.timeline = TimelineDrag("scrub")
            tl.set_time(state, view.t_of(mx))
        return
    if drag is None:
        return
    if imgui.is_item_active():
        if drag.kind == "scrub":
            t = tl.snap(clip, view.t_of(mx))
            if t != state.doc.time:
                tl.set_time(state, t)
        else:
            drag.to = tl.snap(clip, view.t_of(mx))
            drag.moved = drag.moved or abs(drag.to - drag.t) > TIME_EPS
    elif imgui.is_item_deactivated() or not imgui.is_mouse_down(imgui.MouseButton_.left):
        state.timeline = None
        if drag.kind == "key":
            if drag.moved and abs(drag.to - drag.t) > TIME_EPS:
                tl.move_key(state, drag.t, drag.to, drag.row)
            else:  # a click on a mark: go there
                tl.set_time(state, drag.t)


def _key_menu(state: AppState) -> None:
    if imgui.begin_popup("##keymenu"):
        sk = _valid_selected_key(state)
        clip = state.doc.current_clip
        if sk is None or clip is None:
            imgui.close_current_popup()
        else:
            t, row = sk
            what = "keys" if row == tl.ALL else ("targets" if row == tl.TARGETS else row)
            imgui.text_colored(DIM, f"{what} at frame {tl.frame_of(clip, t)} ({t:.3f} s)")
            imgui.separator()
            cur = tl.key_interpolation(clip, t, row)
            for mode in MODES:
                if imgui.menu_item_simple(mode, "", cur == mode):
                    tl.set_key_interpolation(state, mode)
            imgui.separator()
            if imgui.menu_item_simple("Go to key"):
                tl.set_time(state, t)
            if imgui.menu_item_simple("Delete key", "Del"):
                tl.delete_key(state)
        imgui.end_popup()
