"""Retarget mode as an app :class:`~animik.app.modes.base.Mode`: its per-frame update, its view,
its keys and what a released drag becomes."""

from __future__ import annotations

from typing import ClassVar

from ... import keys as K
from ...instances import ViewGeometry
from ...state import AppState, Drag
from ..base import Mode
from ..pose import timeline_keys
from .edits import end_drag, pin
from .playback import set_playing, step_frames, update
from .session import NAME, current
from .view import decorate_view


class RetargetMode(Mode):
    """A BVH retargeted onto the rig every frame, edits layered on it (``Document.mode`` is a
    :class:`~animik.app.modes.retarget.session.RetargetLink`)."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Retarget"

    def update(self, state: AppState, dt: float) -> None:
        update(state, dt)

    def decorate_view(self, state: AppState, geom: ViewGeometry) -> ViewGeometry:
        return decorate_view(state, geom)

    def view_key(self, state: AppState) -> tuple:
        link = current(state)
        return () if link is None else (link.session.frame,)

    def on_key_press(self, state: AppState, symbol: int, modifiers: int) -> bool:
        """Space play / pause, ``,`` ``.`` (or ``[`` ``]``) previous / next frame (Shift: 10
        frames), P pin the selected (or hovered) hand / foot / head from this frame on, or free
        it; other keys as in the pose mode (K keys the pose, N auto-key...)."""
        link = current(state)
        if link is None or modifiers & (K.MOD_CTRL | K.MOD_COMMAND | K.MOD_ALT):
            return timeline_keys(state, symbol, modifiers)
        if symbol == K.SPACE:
            set_playing(state, not link.session.playing)
            return True
        site = state.selected_site or state.hover_site
        if symbol == K.P and site in link.session.editable and state.drag is None:
            pin(state, site)
            return True
        step = {K.COMMA: -1, K.BRACKETLEFT: -1, K.PERIOD: 1, K.BRACKETRIGHT: 1}.get(symbol)
        if step is not None and state.drag is None:
            link.session.playing = False
            step_frames(state, 10 * step if modifiers & K.MOD_SHIFT else step)
            return True
        return timeline_keys(state, symbol, modifiers)

    def end_drag(self, state: AppState, drag: Drag) -> bool:
        """The drag becomes an offset on the motion, is cleared, or pins (the panel's choice)."""
        end_drag(state, drag)
        return True


__all__ = ["RetargetMode"]
