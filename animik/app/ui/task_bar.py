"""The running background task (:mod:`animik.app.tasks`): a small window over the bottom of the
3-D view with its label, a progress bar, the elapsed time, Cancel and the work's last message."""

from __future__ import annotations

import time

from imgui_bundle import imgui

from ..state import AppState

WIDTH = 380.0


def draw_task_bar(state: AppState) -> None:
    task = state.editing.tasks.current
    if task is None:
        return
    x, y, w, h = state.view_rect
    imgui.set_next_window_pos((x + (w - WIDTH) / 2, y + h - 104), imgui.Cond_.always)
    imgui.set_next_window_size((WIDTH, 0), imgui.Cond_.always)
    flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move
             | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_docking
             | imgui.WindowFlags_.no_focus_on_appearing)
    if imgui.begin("##task", None, flags)[0]:
        dt = time.monotonic() - task.started
        imgui.text(f"{task.label}  ({dt:.1f} s)")
        imgui.progress_bar(task.progress, (WIDTH - 95, 0), f"{100 * task.progress:.0f} %")
        imgui.same_line()
        imgui.begin_disabled(task.cancelled)
        if imgui.button("Cancel##task", (70, 0)):
            task.cancel()
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        state.ui_rects["task_cancel"] = (a.x, a.y, b.x, b.y)
        imgui.end_disabled()
        if task.message:  # on its own line: a filter's "pass 2, round 5: 37 of 2998 ..."
            imgui.push_text_wrap_pos(0.0)
            imgui.text_disabled(task.message)
            imgui.pop_text_wrap_pos()
    imgui.end()
