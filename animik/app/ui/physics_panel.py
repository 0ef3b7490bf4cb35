"""Physics panel: the floor wrench the pose on screen needs, seed D's three checks, and a live
plot of the ZMP margin (see :mod:`animik.app.physics`); physics mode on / off (drags stay
feasible, :mod:`animik.app.modes.physics`) and "Make feasible" for the current clip."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ..modes import physics as pm
from ..physics import physics_of
from ..state import AppState

GREEN = imgui.ImVec4(0.35, 0.9, 0.4, 1.0)
RED = imgui.ImVec4(1.0, 0.35, 0.3, 1.0)


def draw_physics_panel(state: AppState) -> None:
    pv = physics_of(state)
    if imgui.begin("Physics")[0]:
        _, pv.show = imgui.checkbox("show COM, support polygon, ZMP, force", pv.show)
        _mode_controls(state)
        imgui.set_next_item_width(120)
        changed, mu = imgui.slider_float("friction mu", pv.mu, 0.05, 1.5, "%.2f")
        if changed:
            pv.mu = float(mu)
        if pv.error:
            imgui.text_wrapped(pv.error)
        elif pv.show and pv.com is not None:
            contact = [n for n, on in zip(pv.area_names, pv.in_contact, strict=False) if on]
            if pv.on_supports:
                imgui.text_wrapped(f"contact: {', '.join(contact) + ' + ' if contact else ''}"
                                   f"supports {', '.join(pv.on_supports)} (wrench cone)")
            else:
                imgui.text(f"contact: {', '.join(contact) if contact else 'none (flight)'}")
            imgui.text_colored(GREEN if pv.feasible else RED,
                               "feasible" if pv.feasible else f"infeasible: {pv.reasons}")
            m = "-" if not np.isfinite(pv.margin) else f"{100 * pv.margin:6.1f} cm"
            r = "-" if not np.isfinite(pv.ratio) else f"{pv.ratio:5.2f}"
            imgui.text(f"ZMP margin {m}   F_z {pv.normal:7.1f} N   |F_t|/F_z {r}")
            n = len(pv.margins)
            if n:
                y = np.array(pv.margins, float)
                x = np.arange(n, dtype=float)
                size = imgui.get_content_region_avail()
                flags = implot.Flags_.no_mouse_text | implot.Flags_.no_box_select
                if implot.begin_plot("##margin", (-1, max(size.y, 80)), flags):
                    auto = implot.AxisFlags_.auto_fit
                    implot.setup_axis(implot.ImAxis_.x1, "frame", implot.AxisFlags_.no_label | auto)
                    implot.setup_axis(implot.ImAxis_.y1, "ZMP margin cm",
                                      auto | implot.AxisFlags_.range_fit)
                    implot.plot_line("margin (cm)", x, y)
                    implot.plot_line("edge", np.array([0.0, max(n - 1, 1)]), np.zeros(2))
                    implot.end_plot()
    imgui.end()


def _mode_controls(state: AppState) -> None:
    on = isinstance(state.doc.mode, pm.PhysicsData)
    changed, want = imgui.checkbox("physics mode (drags stay feasible)", on)
    if changed:
        pm.enter(state) if want else pm.leave(state)
    clip = state.doc.current_clip
    imgui.begin_disabled(clip is None or clip.is_empty)
    if imgui.button("Make feasible"):
        pm.make_feasible_async(state)
    imgui.end_disabled()
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("Run the current clip through seed D's filter and add the result "
                          "as a new clip (yours is kept)")
    if on:
        ui = pm.session(state)
        if ui.error:
            imgui.text_wrapped(ui.error)
        else:
            imgui.text(f"frames {ui.steps}: corrected {ui.corrected}, infeasible "
                       f"{ui.infeasible}   filter {ui.filter_ms:5.2f} ms")
    bad = pm.infeasible_frames(state) if clip is not None and pv_show(state) else None
    if bad is not None:
        imgui.text_colored(GREEN if not bad.any() else RED,
                           f"clip {clip.name!r}: {int(bad.sum())} of {len(bad)} frames infeasible")


def pv_show(state: AppState) -> bool:
    return physics_of(state).show or isinstance(state.doc.mode, pm.PhysicsData)


def draw_physics_tools(state: AppState) -> None:
    """Physics's entries of the Tools menu (drawn inside the open menu)."""
    on = isinstance(state.doc.mode, pm.PhysicsData)
    if imgui.menu_item_simple("Physics mode (feasible drag)", "", on):
        pm.leave(state) if on else pm.enter(state)
    clip = state.doc.current_clip
    if imgui.menu_item_simple("Make clip feasible", "", False,
                              clip is not None and not clip.is_empty):
        pm.make_feasible_async(state)
