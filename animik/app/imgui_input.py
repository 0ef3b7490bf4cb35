"""pyglet-style events -> Dear ImGui input events (``io.add_*_event``), without importing pyglet.

The window calls these with pyglet's arguments; tests and the offscreen harness call them the
same way. Mouse y is flipped (pyglet's origin is bottom-left, imgui's top-left).
"""

from __future__ import annotations

from collections.abc import Callable

from imgui_bundle import imgui

from . import keys as K


def _key_map() -> dict[int, int]:
    Key = imgui.Key
    m = {
        K.TAB: Key.tab, K.BACKSPACE: Key.backspace, K.RETURN: Key.enter, K.ESCAPE: Key.escape,
        K.INSERT: Key.insert, K.DELETE: Key.delete, K.SPACE: Key.space, K.HOME: Key.home,
        K.END: Key.end, K.PAGEUP: Key.page_up, K.PAGEDOWN: Key.page_down,
        K.LEFT_ARROW: Key.left_arrow, K.RIGHT_ARROW: Key.right_arrow, K.UP_ARROW: Key.up_arrow,
        K.DOWN_ARROW: Key.down_arrow, K.NUM_ENTER: Key.keypad_enter,
        K.LCTRL: Key.left_ctrl, K.RCTRL: Key.right_ctrl, K.LSHIFT: Key.left_shift,
        K.RSHIFT: Key.right_shift, K.LALT: Key.left_alt, K.RALT: Key.right_alt,
        K.LCOMMAND: Key.left_super, K.RCOMMAND: Key.right_super,
        K.MINUS: Key.minus, K.EQUAL: Key.equal, K.PERIOD: Key.period, K.COMMA: Key.comma,
        K.SLASH: Key.slash, K.SEMICOLON: Key.semicolon, K.APOSTROPHE: Key.apostrophe,
        K.BRACKETLEFT: Key.left_bracket, K.BRACKETRIGHT: Key.right_bracket,
        K.BACKSLASH: Key.backslash, K.GRAVE: Key.grave_accent,
    }
    for i in range(26):
        m[K.A + i] = getattr(Key, chr(ord("a") + i))
    for i in range(10):
        m[48 + i] = getattr(Key, f"_{i}")
        m[K.NUM_0 + i] = getattr(Key, f"keypad{i}")
    for i in range(12):
        m[K.F1 + i] = getattr(Key, f"f{i + 1}")
    return m


_BUTTONS = {K.LEFT: 0, K.RIGHT: 1, K.MIDDLE: 2}


class ImguiInput:
    """Feeds imgui's io from pyglet-style handler calls."""

    def __init__(self, height: int):
        self.io = imgui.get_io()
        self.height = height
        self.keys = _key_map()
        # A button event at a position imgui has not had a frame at waits for the next frame
        # (and so does everything after it): imgui decides what is under the mouse a frame
        # late, so a move and a click arriving together (the window drawn on demand, asleep
        # when they came) clicked nothing.
        self._pos: tuple[float, float] | None = None  # the last position given to imgui
        self._frame_pos: tuple[float, float] | None = None  # the position at the last frame
        self._pending: list[Callable[[], None]] = []  # held back during this frame
        self._ready: list[Callable[[], None]] = []  # held back in the last: go next frame

    def new_frame(self) -> None:
        """Before ``imgui.new_frame``: the events held back a frame ago go in now; those held
        since wait for the next frame (imgui sees the position alone first)."""
        self._frame_pos = self._pos
        ready, self._ready, self._pending = self._ready, self._pending, []
        for event in ready:
            event()

    def _held(self, event: Callable[[], None], button: bool = False) -> None:
        if self._pending or self._ready or (button and self._pos != self._frame_pos):
            self._pending.append(event)
        else:
            event()

    def _pos_event(self, x: float, y: float) -> None:
        self._pos = (x, y)
        self.io.add_mouse_pos_event(x, y)

    def _mods(self, modifiers: int) -> None:
        io = self.io
        io.add_key_event(imgui.Key.mod_ctrl, bool(modifiers & K.MOD_CTRL))
        io.add_key_event(imgui.Key.mod_shift, bool(modifiers & K.MOD_SHIFT))
        io.add_key_event(imgui.Key.mod_alt, bool(modifiers & K.MOD_ALT))
        io.add_key_event(imgui.Key.mod_super, bool(modifiers & K.MOD_COMMAND))

    def on_mouse_motion(self, x, y, dx=0, dy=0):
        p = (float(x), float(self.height - y))
        self._held(lambda: self._pos_event(*p))

    def on_mouse_press(self, x, y, button, modifiers=0):
        self._mods(modifiers)
        self.on_mouse_motion(x, y)
        if button in _BUTTONS:
            b = _BUTTONS[button]
            self._held(lambda: self.io.add_mouse_button_event(b, True), button=True)

    def on_mouse_release(self, x, y, button, modifiers=0):
        self.on_mouse_motion(x, y)
        if button in _BUTTONS:
            b = _BUTTONS[button]
            self._held(lambda: self.io.add_mouse_button_event(b, False), button=True)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers=0):
        self.on_mouse_motion(x, y)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.io.add_mouse_wheel_event(float(scroll_x), float(scroll_y))

    def on_mouse_leave(self, x, y):
        self._held(lambda: self._pos_event(-3.4e38, -3.4e38))

    def on_key_press(self, symbol, modifiers=0):
        self._mods(modifiers)
        k = self.keys.get(symbol)
        if k is not None:
            self.io.add_key_event(k, True)

    def on_key_release(self, symbol, modifiers=0):
        k = self.keys.get(symbol)
        if k is not None:
            self.io.add_key_event(k, False)
        # pyglet may still report the released modifier in ``modifiers``
        released = {K.LCTRL: K.MOD_CTRL, K.RCTRL: K.MOD_CTRL, K.LSHIFT: K.MOD_SHIFT,
                    K.RSHIFT: K.MOD_SHIFT, K.LALT: K.MOD_ALT, K.RALT: K.MOD_ALT,
                    K.LCOMMAND: K.MOD_COMMAND, K.RCOMMAND: K.MOD_COMMAND}.get(symbol, 0)
        self._mods(modifiers & ~released)

    def on_text(self, text: str):
        for ch in text:
            self.io.add_input_character(ord(ch))

    def on_resize(self, width, height):
        self.height = height
