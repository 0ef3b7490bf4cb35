"""The Drive panel (drive mode, :mod:`animik.app.modes.drive`): controls, figures, live plot of
ζ and the CoP margin; and its Tools menu entry (listed in :mod:`animik.app.ui.mode_panels`)."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ..modes import drive as drive_mode
from ..state import AppState


def draw_drive_tools(state: AppState) -> None:
    """Tools › Drive (balance MPC): on / off (rigs with balance data only)."""
    on = drive_mode.current(state) is not None
    if imgui.menu_item_simple("Drive (balance MPC)", "", on, drive_mode.can_drive(state)):
        if on:
            drive_mode.leave(state)
        else:
            drive_mode.enter(state)


def draw_drive_panel(state: AppState) -> None:
    """The Drive panel, drawn while the document is in drive mode."""
    sess = drive_mode.current(state)
    if sess is None:
        return
    x, y, w, h = state.view_rect
    # first use: bottom-left of the 3-D view, large enough for the plot to be read
    imgui.set_next_window_pos((x + 8, y + h - 8), imgui.Cond_.first_use_ever, (0.0, 1.0))
    imgui.set_next_window_size((430, 350), imgui.Cond_.first_use_ever)
    if imgui.begin("Drive")[0]:
        _, base = sess.current()
        speed = float(np.hypot(base[0, 1], base[1, 1]))
        margin = drive_mode.octagon_margin(sess)
        imgui.text(f"speed {speed:4.2f} m/s   yaw {np.degrees(sess.yaw):6.1f} deg")
        imgui.text(f"CoP margin {1e3 * margin:6.1f} mm (octagon)   "
                   f"{1e3 * drive_mode.support_margin_now(sess):6.1f} mm (wheels)")
        gap = float(np.linalg.norm(sess.cop() - sess.model_cop()))
        imgui.text(f"full-body CoP {1e3 * gap:5.1f} mm from the two-mass model's   "
                   f"lean error {1e3 * sess.full_body.residual:4.1f} mm")
        zeta = sess.zeta_hist[-1] if sess.zeta_hist else 0.0
        imgui.text(f"zeta {zeta:4.2f}   MPC {sess.last_ms:5.2f} ms ({sess.mpc.solver})   "
                   f"cycles {sess.cycles}")
        if sess.last_status != "optimal":
            imgui.text_colored(imgui.ImVec4(1.0, 0.4, 0.3, 1.0), f"best effort: {sess.last_status}")
        elif sess.infeasible_cycles:
            imgui.text(f"infeasible cycles so far: {sess.infeasible_cycles}")
        imgui.set_next_item_width(140)
        _, sess.speed = imgui.slider_float("key speed m/s", sess.speed, 0.1,
                                           float(sess.model.max_speed), "%.2f")
        if imgui.button("Stop recording" if sess.recording else "Record clip"):
            if sess.recording:
                drive_mode.stop_recording(state)
            else:
                drive_mode.start_recording(state)
        imgui.same_line()
        _, sess.follow = imgui.checkbox("camera follows", sess.follow)
        imgui.same_line()
        if imgui.button("Leave drive mode"):
            drive_mode.leave(state)
            imgui.end()
            return
        imgui.text_disabled("arrows/WASD move, Q/E turn, Shift fast, Ctrl+click floor: goal")
        n = len(sess.t_hist)
        size = imgui.get_content_region_avail()
        flags = implot.Flags_.no_mouse_text | implot.Flags_.no_box_select
        if implot.begin_plot("##drive", (-1, max(size.y, 80)), flags):
            auto = implot.AxisFlags_.auto_fit
            implot.setup_axis(implot.ImAxis_.x1, "t (s)", auto)
            implot.setup_axis(implot.ImAxis_.y1, "zeta", implot.AxisFlags_.lock_min)
            implot.setup_axis_limits(implot.ImAxis_.y1, 0.0, 1.2)
            implot.setup_axis(implot.ImAxis_.y2, "CoP margin mm",
                              auto | implot.AxisFlags_.opposite | implot.AxisFlags_.range_fit)
            implot.setup_legend(implot.Location_.north_west)
            if n:
                t = np.array(sess.t_hist, float)
                implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)
                implot.plot_line("zeta", t, np.array(sess.zeta_hist, float))
                implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
                implot.plot_line("CoP margin (mm)", t, 1e3 * np.array(sess.margin_hist, float))
            implot.end_plot()
    imgui.end()
