"""The pyglet window: GL 3.3 core context, event wiring and the frame loop.

Only this module imports ``pyglet.window`` (which needs a display). The app itself is
:class:`animik.app.gui.GuiApp`; this module forwards pyglet's events to it unchanged, draws a
frame on every ``on_draw`` and copies the app's canvas to the screen.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

from . import actions
from . import keys as K
from .compile_progress import warm_kernels
from .render.png import read_framebuffer, write_png

EXIT_DATA, EXIT_OS = 3, 4


def run_window(target: str | None = None, save_path: str | Path | None = None,
               size: tuple[int, int] = (1280, 800), vsync: bool = True, fps: float = 60.0,
               screenshot: str | Path | None = None, screenshot_frames: int = 30,
               title: str | None = None, **unknown: Any) -> int:
    """Open the window and run until it is closed (see :func:`animik.app.run`)."""
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; expected save_path, size, vsync, "
                        "fps, screenshot, screenshot_frames, title")
    try:
        state = actions.make_state(target, save_path=save_path, size=tuple(size))
    except actions.USER_ERRORS as e:
        print(f"animik: error: cannot open {target if target is not None else 'the default scene'}:"
              f" {actions.describe(e)}", file=sys.stderr)
        return EXIT_DATA
    warm_kernels()  # numba compiles here, with progress, not on the first drag (issue 15)

    import pyglet

    pyglet.options["debug_gl"] = False  # pyglet's own glGetError checks cost time; we use moderngl
    try:
        import pyglet.window
    except Exception as e:  # NoSuchDisplayException and friends
        print(f"animik: error: cannot open a window: {e} (is DISPLAY set? for tests use Xvfb)",
              file=sys.stderr)
        return EXIT_OS
    import moderngl

    from .gui import GuiApp

    config = pyglet.gl.Config(major_version=3, minor_version=3, forward_compatible=True,
                              depth_size=24, double_buffer=True)
    try:
        window = pyglet.window.Window(int(size[0]), int(size[1]), caption=title or _title(state),
                                      resizable=True, config=config, vsync=vsync,
                                      file_drops=True)
    except (pyglet.window.NoSuchDisplayException, pyglet.gl.ContextException) as e:
        print(f"animik: error: cannot open an OpenGL 3.3 window: {e}", file=sys.stderr)
        return EXIT_OS
    ctx = moderngl.create_context()
    fbw, _ = window.get_framebuffer_size()
    gui = GuiApp(ctx, state, window.get_size(), fb_scale=fbw / max(window.width, 1))
    handler = _Handlers(gui, window)
    window.push_handlers(handler)

    frames = [0]
    shot = Path(screenshot) if screenshot is not None else None

    def on_draw():
        gui.frame()
        gui.present(ctx.screen)
        frames[0] += 1
        cap = title or _title(state)
        if cap != handler.caption:
            handler.caption = cap
            window.set_caption(cap)
        if state.quit_requested:
            pyglet.app.exit()  # closing the window inside on_draw upsets pyglet's loop
        elif shot is not None and frames[0] == screenshot_frames:
            write_png(shot, read_framebuffer(gui.canvas()))
            pyglet.app.exit()

    window.push_handlers(on_draw=on_draw)

    def stop(*_):
        # SIGTERM / SIGINT (e.g. a test killing the app): leave the loop cleanly; files are
        # only written by Ctrl+S, atomically, so nothing is left half-written
        pyglet.app.exit()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    pyglet.app.run(interval=1.0 / fps if fps and fps > 0 else 0)
    try:
        gui.release()
        window.close()
    except Exception:  # the context may already be gone with the window
        pass
    return 0


def _title(state) -> str:
    name = state.doc.name or state.skeleton.name
    where = state.scene_path.name if state.scene_path is not None else state.doc.rig
    return f"animik - {name} ({where})"


class _Handlers:
    """pyglet event handlers: everything goes to the GuiApp; Esc must not close the window."""

    def __init__(self, gui, window):
        self.gui = gui
        self.window = window
        self.caption = ""

    def on_key_press(self, symbol, modifiers):
        self.gui.on_key_press(symbol, modifiers)
        if symbol == K.ESCAPE:
            return True  # EVENT_HANDLED: pyglet's default closes the window on Esc

    def on_key_release(self, symbol, modifiers):
        self.gui.on_key_release(symbol, modifiers)

    def on_text(self, text):
        self.gui.on_text(text)

    def on_mouse_motion(self, x, y, dx, dy):
        self.gui.on_mouse_motion(x, y, dx, dy)

    def on_mouse_press(self, x, y, button, modifiers):
        self.gui.on_mouse_press(x, y, button, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self.gui.on_mouse_release(x, y, button, modifiers)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.gui.on_mouse_drag(x, y, dx, dy, buttons, modifiers)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.gui.on_mouse_scroll(x, y, scroll_x, scroll_y)

    def on_mouse_leave(self, x, y):
        self.gui.on_mouse_leave(x, y)

    def on_file_drop(self, x, y, paths):
        self.gui.on_file_drop(x, y, paths)

    def on_deactivate(self):
        # key releases are not seen while unfocused: forget held axis keys
        self.gui.state.keys_down.clear()

    def on_resize(self, width, height):
        fbw, _ = self.window.get_framebuffer_size()
        self.gui.fb_scale = fbw / max(width, 1)
        self.gui.resize(width, height)
