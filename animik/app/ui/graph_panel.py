"""The Graph Editor panel (a tab beside the Timeline): per-DoF curves of the current clip.

Left: the keyed joints and their DoFs (click one to show it, Ctrl+click to add / remove;
nothing chosen: the selected joint's DoFs). Right: the curves (degrees for rotations, metres
for translations) with their keys as points. Click a key to select it; drag it to change its
value and time (snapped to frames); the selected key shows its tangent handles: drag one to
set the key's slope (the key becomes smooth; the curve stays C1 there). Auto / Flat set the
selected key's tangents. Wheel: zoom the time axis (Ctrl+wheel: the value axis), middle-drag:
pan, Frame all: fit the curves. Every edit is one undo step, applied at release (the curve is
previewed while dragging). What it drew is kept in ``state.editing.graph`` for tests.
"""

from __future__ import annotations

import math

import numpy as np
from imgui_bundle import imgui

from ...anim import Clip
from ...anim import selection as ks
from .. import timeline as tl
from ..editing_ui import GraphView, KeyDrag
from ..state import AppState
from ..timeline import dope_sheet as ds
from ..timeline import graph_editor as ge
from .timeline_panel import BG, DIM, PLAYHEAD, TEXT, _tick_step, _u32

LIST_W = 190.0
RULER_H = 18.0
KEY_PX = 4.0
HIT_PX = 7.0
HANDLE_PX = 45.0  # tangent handle length on screen
SELECTED = _u32(1.0, 0.62, 0.15)
HANDLE = _u32(0.95, 0.95, 0.95)
GRID = _u32(0.22, 0.23, 0.26)
ZERO = _u32(0.35, 0.36, 0.40)


def draw_graph_panel(state: AppState) -> None:
    ed = state.editing
    if imgui.begin("Graph Editor")[0]:
        if imgui.is_window_focused(imgui.FocusedFlags_.root_and_child_windows):
            ed.focused = True
        clip = tl.current_clip(state)
        _toolbar(state, clip)
        avail = imgui.get_content_region_avail()
        imgui.begin_child("##graphdofs", (LIST_W, avail.y), imgui.ChildFlags_.borders)
        _dof_list(state, clip)
        imgui.end_child()
        imgui.same_line()
        _plot(state, clip)
    imgui.end()


def _toolbar(state: AppState, clip: Clip | None) -> None:
    ed = state.editing
    key = _selected_key(state, clip)
    if imgui.button("Frame all##graph"):
        ds.frame_all(state)
        ed.graph_range = None
    imgui.same_line()
    imgui.begin_disabled(key is None)
    if imgui.button("Auto"):
        ge.auto_tangent(state, key[:2], key[2])
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("automatic (monotone) tangents at the selected key")
    imgui.same_line()
    if imgui.button("Flat"):
        ge.set_tangent(state, key[:2], key[2], 0.0)
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("zero slope at the selected key (ease in / out)")
    imgui.end_disabled()
    imgui.same_line()
    if key is not None and clip is not None:
        c = key[:2]
        s = ge.unit_scale(state, c)
        kt, kv, km = ge.curve_keys(clip, c)
        i = int(np.argmin(np.abs(kt - key[2])))
        unit = "deg" if s != 1.0 else "m"
        imgui.text_colored(DIM, f"{ge.dof_name(state, c)}  frame {tl.frame_of(clip, kt[i])}  "
                                f"{kv[i] * s:.4g} {unit}  slope {km[i] * s:.4g} {unit}/s")
    else:
        imgui.text_colored(DIM, "click a key; drag it or its tangent handles")


def _dof_list(state: AppState, clip: Clip | None) -> None:
    if clip is None or not clip.tracks:
        imgui.text_colored(DIM, "no keyed joints")
        return
    shown = set(ge.curves(state))
    skel = state.skeleton
    ctrl = imgui.get_io().key_ctrl
    sel_j = state.selected_joint
    for tr in clip.tracks:
        j = skel.joint_index(tr.joint)
        flags = imgui.TreeNodeFlags_.default_open if j == sel_j else 0
        follow = sel_j is not None and j == sel_j and state.editing.graph_followed != sel_j
        if follow:  # a joint newly selected (view, tree): open its node and scroll to it
            imgui.set_next_item_open(True, imgui.Cond_.always)
        opened = imgui.tree_node_ex(f"{tr.joint}##g{j}", flags)
        if follow:
            imgui.set_scroll_here_y(0.1)
            state.editing.graph_followed = sel_j
        if opened:
            for c, k in enumerate(skel.joint_dofs(j)):
                col = ge.PALETTE[c % len(ge.PALETTE)]
                imgui.push_style_color(imgui.Col_.text, (*col, 1.0))
                if imgui.selectable(f"{skel.dof_names[k]}##g{j}_{c}", (tr.joint, c) in shown)[0]:
                    ge.toggle_curve(state, (tr.joint, c), add=ctrl)
                imgui.pop_style_color()
            imgui.tree_pop()


def _selected_key(state: AppState, clip: Clip | None):
    key = state.editing.graph_key
    if key is None or clip is None or key[:2] not in ge.curves(state):
        return None
    tr = clip.track(key[0])
    if tr is None or np.min(np.abs(tr.times - key[2])) > 1e-7:
        return None
    return key


def _preview(state: AppState, clip: Clip, view: GraphView) -> Clip:
    """The clip as the drag in progress would leave it (drawn while dragging)."""
    d = state.editing.drag
    if d is None or not d.moved or d.key is None or d.kind not in ("value", "tangent"):
        return clip
    c = d.key[:2]
    s = ge.unit_scale(state, c)
    try:
        if d.kind == "value":
            return ge.edited_key(clip, c, d.key[2], view.t_of(d.cx), view.v_of(d.cy) / s)
        return ks.set_tangent(clip, c[0], d.key[2], c[1], _drag_slope(state, view, d) / s)
    except Exception:
        return clip


def _drag_slope(state: AppState, view: GraphView, d: KeyDrag) -> float:
    """Slope (display units per s) of the handle from the key to the mouse."""
    clip = tl.current_clip(state)
    c = d.key[:2]
    s = ge.unit_scale(state, c)
    kt, kv, _ = ge.curve_keys(clip, c)
    i = int(np.argmin(np.abs(kt - d.key[2])))
    dt = view.t_of(d.cx) - kt[i]
    dv = view.v_of(d.cy) - kv[i] * s
    if abs(dt) < 1e-6:
        dt = math.copysign(1e-6, dt if dt != 0 else 1.0)
    return float(dv / dt)


def _plot(state: AppState, clip: Clip | None) -> None:
    ed = state.editing
    avail = imgui.get_content_region_avail()
    w, h = max(float(avail.x), 100.0), max(float(avail.y), 60.0)
    p0 = imgui.get_cursor_screen_pos()
    imgui.invisible_button("##graph", (w, h), imgui.ButtonFlags_.mouse_button_left
                           | imgui.ButtonFlags_.mouse_button_middle)
    t0, t1 = ds.span(state)
    if ed.graph_range is None and clip is not None:
        v0, v1 = ge.value_range(state, clip, t0, t1)
    else:
        v0, v1 = ed.graph_range or (-1.0, 1.0)
    view = GraphView(p0.x + 48.0, p0.x + w - 8.0, p0.y + RULER_H, p0.y + h - 6.0, t0, t1, v0, v1)
    ed.graph = view
    if clip is not None:
        _interact(state, clip, view)
        if ed.graph is not view:  # zoomed / panned: this frame's view
            view = ed.graph
    dl = imgui.get_window_draw_list()
    dl.push_clip_rect((p0.x, p0.y), (p0.x + w, p0.y + h), True)
    dl.add_rect_filled(p0, (p0.x + w, p0.y + h), BG)
    _grid(state, dl, view, clip, p0)
    if clip is not None:
        shown = _preview(state, clip, view)
        dl.push_clip_rect((view.x0, view.y0), (view.x1, view.y1), True)
        sel = _selected_key(state, clip)
        for i, c in enumerate(ge.curves(state)):
            _curve(state, dl, view, shown, c, ge.PALETTE[c[1] % len(ge.PALETTE)], sel)
            del i
        x = view.x_of(state.doc.time)
        dl.add_line((x, view.y0), (x, view.y1), PLAYHEAD, 1.5)
        dl.pop_clip_rect()
        if not ge.curves(state):
            dl.add_text((view.x0 + 10, view.y0 + 10), TEXT,
                        "select a keyed joint (in the view or the list) to see its curves")
    dl.pop_clip_rect()


def _grid(state: AppState, dl, view: GraphView, clip, p0) -> None:
    fps = tl.clip_fps(clip)
    ppf = (view.x1 - view.x0) / max((view.t1 - view.t0) * fps, 1e-9)
    step = _tick_step(ppf, 56.0)
    f0, f1 = int(np.floor(view.t0 * fps)), int(np.ceil(view.t1 * fps))
    for f in range(f0 - f0 % step, f1 + 1, step):
        x = view.x_of(f / fps)
        if view.x0 <= x <= view.x1:
            dl.add_line((x, view.y0), (x, view.y1), GRID)
            dl.add_text((x + 3, p0.y + 1), TEXT, str(f))
    span = view.v1 - view.v0
    raw = span / max((view.y1 - view.y0) / 40.0, 1.0)
    mag = 10 ** math.floor(math.log10(max(raw, 1e-9)))
    vstep = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    v = math.ceil(view.v0 / vstep) * vstep
    while v <= view.v1:
        y = view.y_of(v)
        dl.add_line((view.x0, y), (view.x1, y), ZERO if abs(v) < 1e-12 else GRID)
        dl.add_text((p0.x + 2, y - 8), TEXT, f"{v:.4g}")
        v += vstep
    del state


def _curve(state: AppState, dl, view: GraphView, clip: Clip, c, rgb, sel) -> None:
    s = ge.unit_scale(state, c)
    col = _u32(*rgb)
    n = int(max(min(view.x1 - view.x0, 1200), 2) // 2)
    t = np.linspace(view.t0, view.t1, n)
    v = ge.sample_curve(clip, c, t) * s
    pts = [(float(x), float(y)) for x, y in zip(
        view.x0 + (view.x1 - view.x0) * (t - view.t0) / (view.t1 - view.t0),
        [view.y_of(x) for x in v], strict=True)]
    dl.add_polyline(pts, col, flags=0, thickness=1.6)
    kt, kv, km = ge.curve_keys(clip, c)
    inside = (kt >= view.t0 - 1e-9) & (kt <= view.t1 + 1e-9)
    if inside.sum() > 400:  # a key per frame: the curve says it all
        return
    for tk, vk in zip(kt[inside], kv[inside], strict=True):
        x, y = view.x_of(tk), view.y_of(vk * s)
        is_sel = sel is not None and sel[:2] == c and abs(sel[2] - tk) < 1e-7
        r = KEY_PX + (1.0 if is_sel else 0.0)
        dl.add_rect_filled((x - r, y - r), (x + r, y + r), SELECTED if is_sel else col)
        if is_sel:
            i = int(np.argmin(np.abs(kt - tk)))
            for a, b in handle_points(view, tk, vk * s, km[i] * s):
                dl.add_line((x, y), (a, b), HANDLE, 1.2)
                dl.add_circle_filled((a, b), 4.0, HANDLE)


def handle_points(view: GraphView, t: float, v: float, slope: float) -> list[tuple[float, float]]:
    """The two tangent handles of a key (display units): ``HANDLE_PX`` from it on screen."""
    x, y = view.x_of(t), view.y_of(v)
    dx = view.x_of(t + 1.0) - view.x_of(t)  # px per s
    dy = view.y_of(v + slope) - view.y_of(v)  # px per s along the tangent
    n = math.hypot(dx, dy)
    ux, uy = dx / n, dy / n
    return [(x + HANDLE_PX * ux, y + HANDLE_PX * uy), (x - HANDLE_PX * ux, y - HANDLE_PX * uy)]


def hit(state: AppState, clip: Clip, view: GraphView, mx: float, my: float):
    """``("tangent" | "value", (joint, column, key time))`` under the mouse, or None."""
    sel = _selected_key(state, clip)
    if sel is not None:
        c = sel[:2]
        s = ge.unit_scale(state, c)
        kt, kv, km = ge.curve_keys(clip, c)
        i = int(np.argmin(np.abs(kt - sel[2])))
        for a, b in handle_points(view, kt[i], kv[i] * s, km[i] * s):
            if math.hypot(a - mx, b - my) <= HIT_PX:
                return "tangent", sel
    best = None
    for c in ge.curves(state):
        s = ge.unit_scale(state, c)
        kt, kv, _ = ge.curve_keys(clip, c)
        xs = np.array([view.x_of(t) for t in kt])
        ys = np.array([view.y_of(v * s) for v in kv])
        d = np.hypot(xs - mx, ys - my)
        i = int(np.argmin(d))
        if d[i] <= HIT_PX and (best is None or d[i] < best[0]):
            best = (float(d[i]), (c[0], c[1], float(kt[i])))
    return None if best is None else ("value", best[1])


def _interact(state: AppState, clip: Clip, view: GraphView) -> None:
    ed = state.editing
    io = imgui.get_io()
    mx, my = imgui.get_mouse_pos()
    if imgui.is_item_hovered() and io.mouse_wheel != 0.0:
        f = 1.25 ** io.mouse_wheel
        if io.key_ctrl:
            v = view.v_of(my)
            ed.graph_range = (v - (v - view.v0) / f, v + (view.v1 - v) / f)
        else:
            ds.zoom(state, f, about=view.t_of(mx))
            ed.graph_range = (view.v0, view.v1)
        _refresh(state, view)
        return
    if imgui.is_item_hovered() and imgui.is_mouse_clicked(imgui.MouseButton_.middle):
        ed.drag = KeyDrag("gpan", mx, my, mx, my, start=view.t0)
        ed.graph_range = (view.v0, view.v1)
        return
    if imgui.is_item_activated() and imgui.is_mouse_clicked(imgui.MouseButton_.left):
        h = hit(state, clip, view, mx, my)
        if h is None:
            ed.graph_key = None
            ed.drag = None
            return
        kind, key = h
        ed.graph_key = key
        ed.drag = KeyDrag(kind, mx, my, mx, my, key=key)
        return
    d = ed.drag
    if d is None or d.kind not in ("value", "tangent", "gpan"):
        return
    button = imgui.MouseButton_.middle if d.kind == "gpan" else imgui.MouseButton_.left
    if imgui.is_mouse_down(button):
        d.moved = d.moved or abs(mx - d.x) + abs(my - d.y) > 2.0
        if d.kind == "gpan" and (mx, my) != (d.cx, d.cy):
            per_px_t = (view.t1 - view.t0) / max(view.x1 - view.x0, 1.0)
            per_px_v = (view.v1 - view.v0) / max(view.y1 - view.y0, 1.0)
            ds.pan(state, -(mx - d.cx) * per_px_t)
            ed.graph_range = (view.v0 + (my - d.cy) * per_px_v, view.v1 + (my - d.cy) * per_px_v)
            _refresh(state, view)
        d.cx, d.cy = mx, my
        return
    ed.drag = None
    if not d.moved or d.kind == "gpan":
        return
    c = d.key[:2]
    s = ge.unit_scale(state, c)
    ed.graph_range = (view.v0, view.v1)  # keep the view still after the edit
    if d.kind == "value":
        t_to = view.t_of(d.cx)
        if ge.move_key(state, c, d.key[2], t_to, view.v_of(d.cy) / s):
            ed.graph_key = (c[0], c[1], round(max(t_to, 0.0) * clip.fps) / clip.fps
                            if abs(t_to - d.key[2]) * clip.fps >= 0.5 else d.key[2])
    else:
        ge.set_tangent(state, c, d.key[2], _drag_slope(state, view, d) / s)


def _refresh(state: AppState, view: GraphView) -> None:
    t0, t1 = ds.span(state)
    v0, v1 = state.editing.graph_range or (view.v0, view.v1)
    state.editing.graph = GraphView(view.x0, view.x1, view.y0, view.y1, t0, t1, v0, v1)
