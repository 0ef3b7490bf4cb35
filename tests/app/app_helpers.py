"""Helpers of the app tests: app states on the built-in scenes, world points to pyglet window
coordinates. (Not a conftest.py: tests/conftest.py is imported by name from other folders.)"""

from __future__ import annotations

import numpy as np

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


