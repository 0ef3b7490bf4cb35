"""The modes' GUI, one line per mode: their entries in the Tools menu and their panels.

Each entry function draws its items inside the open Tools menu (typically "<Mode>..." to open
the mode's panel and "Leave <mode> mode"); each panel function is called every frame and draws
its window when it is open or its mode is current (see :mod:`animik.app.modes`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..state import AppState
from .drive_panel import draw_drive_panel, draw_drive_tools
from .physics_panel import draw_physics_tools
from .retarget_panel import draw_retarget_panel, draw_retarget_tools

#: Tools menu entries, in menu order.
TOOLS_MENU: tuple[Callable[[AppState], None], ...] = (draw_retarget_tools, draw_physics_tools,
                                                       draw_drive_tools)
#: Panels of the modes, drawn every frame after the app's own.
PANELS: tuple[Callable[[AppState], None], ...] = (draw_retarget_panel, draw_drive_panel)


def draw_mode_panels(state: AppState) -> None:
    """Every mode's panel (each decides whether to show)."""
    for draw in PANELS:
        draw(state)
