"""Onion-skin controls (in the Dope Sheet's toolbar): on / off, ghosts before and after the
playhead, frames between ghosts (``state.editing.onion``; view state, not undone)."""

from __future__ import annotations

from imgui_bundle import imgui

from ..state import AppState
from ..timeline.onion import MAX_GHOSTS


def draw_onion_controls(state: AppState) -> None:
    o = state.editing.onion
    _, o.enabled = imgui.checkbox("Onion", o.enabled)
    if imgui.is_item_hovered():
        imgui.set_tooltip("ghost poses before (warm) and after (cool) the playhead")
    imgui.begin_disabled(not o.enabled)
    for label, attr, lo, hi, tip in (("##before", "before", 0, MAX_GHOSTS, "ghosts before"),
                                     ("##after", "after", 0, MAX_GHOSTS, "ghosts after"),
                                     ("##step", "step", 1, 120, "frames between ghosts")):
        imgui.same_line()
        imgui.set_next_item_width(62)
        fmt = {"before": "%d before", "after": "%d after", "step": "every %d"}[attr]
        _, v = imgui.drag_int(label, getattr(o, attr), 0.1, lo, hi, fmt,
                              imgui.SliderFlags_.always_clamp)
        setattr(o, attr, int(v))
        if imgui.is_item_hovered():
            imgui.set_tooltip(tip + " (drag, or Ctrl+click to type)")
    imgui.end_disabled()
