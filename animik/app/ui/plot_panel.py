"""Live plot (implot) of the effector error and the solver iterations per frame."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ..state import AppState

WINDOW = 300  # frames shown (5 s at 60 fps)


def draw_plot_panel(state: AppState) -> None:
    if imgui.begin("Plot")[0]:
        st = state.stats
        n = min(len(st.error_mm), WINDOW)
        err = np.array(list(st.error_mm)[-n:], float)
        its = np.array(list(st.iterations)[-n:], float)
        imgui.text(f"error {st.last_error_mm:7.3f} mm   iterations {st.last_iterations:3d}   "
                   f"IK {st.ik_ms_recent():5.2f} ms/frame")
        x = np.arange(st.frames - n, st.frames, dtype=float)
        size = imgui.get_content_region_avail()
        flags = implot.Flags_.no_mouse_text | implot.Flags_.no_box_select
        if implot.begin_plot("##live", (-1, max(size.y, 80)), flags):
            auto = implot.AxisFlags_.auto_fit
            implot.setup_axis(implot.ImAxis_.x1, "frame", implot.AxisFlags_.no_label | auto)
            implot.setup_axis(implot.ImAxis_.y1, "error mm", auto | implot.AxisFlags_.range_fit)
            implot.setup_axis(implot.ImAxis_.y2, "iterations",
                              auto | implot.AxisFlags_.opposite | implot.AxisFlags_.range_fit)
            implot.setup_legend(implot.Location_.north_west)
            if n:
                implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)
                implot.plot_line("max error (mm)", x, err)
                implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
                implot.plot_line("iterations", x, its)
            implot.end_plot()
    imgui.end()
