"""Helpers of the app tests: app states on the built-in scenes, world points to pyglet window
coordinates. (Not a conftest.py: tests/conftest.py is imported by name from other folders.)"""

from __future__ import annotations

import numpy as np
import pytest

from animik.app import actions
from animik.app.state import AppState

SIZE = (1280, 800)


def make_state(target=None, **kw) -> AppState:
    st = actions.make_state(target, size=SIZE, **kw)
    # a fixed viewport (what the docked layout gives at 1280x800) so tests without imgui agree
    st.view_rect = (270, 23, 705, 751)
    st.camera.width, st.camera.height = 705, 751
    return st


def window_xy(state: AppState, point) -> tuple[float, float]:
    """pyglet window coordinates (origin bottom-left) of a world point."""
    p = state.camera.project(np.asarray(point, float))
    x, y, _, _ = state.view_rect
    return float(p[0] + x), float(state.window_size[1] - (p[1] + y))


def site_xy(state: AppState, site: str) -> tuple[float, float]:
    return window_xy(state, state.fk.site_positions[state.skeleton.site_index(site)])




# ---------------------------------------------------------------------- driving a GuiApp
def gui_key(off, symbol: int, modifiers: int = 0) -> None:
    """Press and release a key through the GuiApp (imgui first, then the viewport)."""
    off.gui.on_key_press(symbol, modifiers)
    off.frame()
    off.gui.on_key_release(symbol, modifiers)
    off.frame()


def gui_click(off, x: float, y: float, button: int = 1, modifiers: int = 0) -> None:
    """Click at window pixel ``(x, y)`` (origin top-left), one event per frame as in a window."""
    g = off.gui
    py = off.size[1] - y
    g.on_mouse_motion(x, py, 0, 0)
    off.frame()
    g.on_mouse_press(x, py, button, modifiers)
    off.frame()
    g.on_mouse_release(x, py, button, modifiers)
    off.frame()


def gui_drag(off, start, end, steps: int = 10, modifiers: int = 0, top_left: bool = False) -> None:
    """Left-drag from ``start`` to ``end`` (pyglet coordinates, or window pixels with
    ``top_left``), a frame per event."""
    g = off.gui
    (x0, y0), (x1, y1) = start, end
    if top_left:
        y0, y1 = off.size[1] - y0, off.size[1] - y1
    g.on_mouse_motion(x0, y0, 0, 0)
    off.frame()
    g.on_mouse_press(x0, y0, 1, modifiers)
    off.frame()
    px, py = x0, y0
    for i in range(1, steps + 1):
        x, y = x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps
        g.on_mouse_drag(x, y, x - px, y - py, 1, modifiers)
        px, py = x, y
        off.frame()
    g.on_mouse_release(x1, y1, 1, modifiers)
    off.frame()


@pytest.fixture
def app():
    """The whole app offscreen (EGL) on the default scene, laid out and ready for events.

    Test modules import it (``from app_helpers import app``) to use it as a fixture.
    """
    from animik.app.gui import Offscreen

    off = Offscreen(make_state(None), SIZE)
    for _ in range(3):  # imgui lays windows out over the first frames
        off.frame()
    yield off
    off.release()


class FakeClock:
    """A clock the window loop's pacer reads (``FramePacer(clock=...)``), moved by hand."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def settle(off, clock, frames=400, dt=1.0 / 60.0) -> int:
    """Run the window loop's rule for ``frames`` ticks of ``dt`` on ``clock``: draw a frame
    only when the app wants one. Returns the number of frames drawn."""
    drawn = 0
    for _ in range(frames):
        clock.t += dt
        if off.gui.wants_frame():
            off.frame(dt)
            drawn += 1
    return drawn
