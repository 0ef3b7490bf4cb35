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
               title: str | None = None, bvh_skeleton: bool = False, **unknown: Any) -> int:
    """Open the window and run until it is closed (see :func:`animik.app.run`)."""
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; expected save_path, size, vsync, "
                        "fps, screenshot, screenshot_frames, title, bvh_skeleton")
    try:
        state = actions.make_state(target, save_path=save_path, size=tuple(size),
                                   bvh_skeleton=bvh_skeleton)
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
    pace = _Pace(pyglet.clock, lambda dt: tick(dt), 1.0 / fps if fps and fps > 0 else 0.0)
    handler = _Handlers(gui, window, pace.wake)
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

    def tick(dt):
        # draw only when the app wants a frame (input, a change, playback, the IK converging;
        # see pacing.py) or a screenshot is pending; else poll slowly, using no CPU
        if gui.wants_frame() or (shot is not None and frames[0] < screenshot_frames):
            window.draw(dt)
            pace.wake()
        elif not state.editing.tasks.busy:
            pace.sleep()
        # else a background task runs: keep the frame interval's ticks (a cheap check each),
        # so its bar is drawn at pacing.TASK_FPS, not at the idle poll's 4 frames a second

    def stop(*_):
        # SIGTERM / SIGINT (e.g. a test killing the app): leave the loop cleanly; files are
        # only written by Ctrl+S, atomically, so nothing is left half-written
        pyglet.app.exit()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    pace.wake()
    pyglet.app.run(interval=None)  # frames on demand: tick() above decides
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


class _Pace:
    """The loop's tick schedule: every frame interval while the app is awake, every
    :data:`IDLE_POLL_S` while it sleeps (a cheap check, no drawing); input wakes it at once."""

    IDLE_POLL_S = 0.25

    def __init__(self, clock, tick, interval: float):
        self.clock, self.tick, self.interval = clock, tick, interval
        self.fast: bool | None = None

    def wake(self) -> None:
        if self.fast is not True:
            self.clock.unschedule(self.tick)
            if self.interval > 0:
                self.clock.schedule_interval(self.tick, self.interval)
            else:
                self.clock.schedule(self.tick)
            self.fast = True

    def sleep(self) -> None:
        if self.fast is not False:
            self.clock.unschedule(self.tick)
            self.clock.schedule_interval_soft(self.tick, self.IDLE_POLL_S)
            self.fast = False


class _Handlers:
    """pyglet event handlers: everything goes to the GuiApp (which notes the input: frames
    follow) and wakes the loop; Esc must not close the window."""

    def __init__(self, gui, window, wake=lambda: None):
        self.gui = gui
        self.window = window
        self.caption = ""
        self._wake = wake

    def on_expose(self):
        self._wake()
        self.gui.pacer.request()

    def on_key_press(self, symbol, modifiers):
        self._wake()
        self.gui.on_key_press(symbol, modifiers)
        if symbol == K.ESCAPE:
            return True  # EVENT_HANDLED: pyglet's default closes the window on Esc

    def on_key_release(self, symbol, modifiers):
        self._wake()
        self.gui.on_key_release(symbol, modifiers)

    def on_text(self, text):
        self._wake()
        self.gui.on_text(text)

    def on_mouse_motion(self, x, y, dx, dy):
        self._wake()
        self.gui.on_mouse_motion(x, y, dx, dy)

    def on_mouse_press(self, x, y, button, modifiers):
        self._wake()
        self.gui.on_mouse_press(x, y, button, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self._wake()
        self.gui.on_mouse_release(x, y, button, modifiers)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self._wake()
        self.gui.on_mouse_drag(x, y, dx, dy, buttons, modifiers)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self._wake()
        self.gui.on_mouse_scroll(x, y, scroll_x, scroll_y)

    def on_mouse_leave(self, x, y):
        self._wake()
        self.gui.on_mouse_leave(x, y)

    def on_file_drop(self, x, y, paths):
        self._wake()
        self.gui.on_file_drop(x, y, paths)

    def on_deactivate(self):
        self._wake()
        # key releases are not seen while unfocused: forget held axis keys
        self.gui.state.keys_down.clear()

    def on_resize(self, width, height):
        self._wake()
        fbw, _ = self.window.get_framebuffer_size()
        self.gui.fb_scale = fbw / max(width, 1)
        self.gui.resize(width, height)
