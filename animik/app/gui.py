"""One frame of the app: IK update, imgui panels, 3-D render and imgui render, on any moderngl
context (a pyglet window, an EGL standalone context, pyglet headless).

:class:`GuiApp` also exposes pyglet-style input handlers (``on_mouse_press(x, y, button,
modifiers)`` ...): the window pushes them as pyglet handlers and tests call them with
synthetic events, so both go through the same code. Each event goes to imgui first; the
viewport controller gets it when imgui does not want it (or when a viewport drag is under way).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from imgui_bundle import imgui, implot

from . import documents, modes
from . import keys as K
from .controller import ViewportController
from .framing import follow_playback
from .geometry import view_geometry
from .imgui_input import ImguiInput
from .pacing import FramePacer
from .picking import hover_label
from .render.imgui_renderer import ImguiRenderer
from .render.png import read_framebuffer, write_png
from .render.scene_renderer import SceneRenderer
from .state import AppState
from .timeline import dope_sheet
from .ui.chrome import (
    draw_help_window,
    draw_menu_bar,
    draw_messages,
    draw_status_bar,
    draw_view_hint,
    setup_layout,
)
from .ui.dope_sheet_panel import draw_dope_sheet_panel
from .ui.files import draw_file_browser_panel, open_browser
from .ui.graph_panel import draw_graph_panel
from .ui.mode_panels import draw_mode_panels
from .ui.panels import (
    draw_context_menu,
    draw_effectors_panel,
    draw_joint_panel,
    draw_skeleton_panel,
)
from .ui.physics_panel import draw_physics_panel
from .ui.plot_panel import draw_plot_panel
from .ui.solver_panel import draw_solver_panel
from .ui.task_bar import draw_task_bar
from .ui.timeline_panel import draw_timeline_panel

FONT_SIZE = 15.0
PANEL_BG = (0.11, 0.12, 0.14)


@dataclass
class FrameTimes:
    """Milliseconds spent in one frame, by part."""

    ik: float = 0.0
    ui: float = 0.0
    render: float = 0.0

    @property
    def total(self) -> float:
        return self.ik + self.ui + self.render


def _font_path() -> Path | None:
    import imgui_bundle

    p = Path(imgui_bundle.__file__).parent / "assets" / "fonts" / "Roboto" / "Roboto-Regular.ttf"
    return p if p.is_file() else None


class GuiApp:
    """The whole app on a moderngl context.

    Args:
        ctx: the moderngl context (its current framebuffer is drawn into, see :meth:`frame`).
        state: the app state.
        size: window size in pixels ``(w, h)``.
        fb_scale: framebuffer pixels per window pixel (HiDPI).
    """

    def __init__(self, ctx, state: AppState, size: tuple[int, int], fb_scale: float = 1.0):
        self.ctx = ctx
        self.state = state
        self.imgui_ctx = imgui.create_context()
        self.implot_ctx = implot.create_context()
        io = imgui.get_io()
        io.set_ini_filename(None)  # the layout is rebuilt each start: no imgui.ini litter
        io.config_flags |= imgui.ConfigFlags_.docking_enable
        io.config_windows_move_from_title_bar_only = True
        # frames are drawn on demand (pacing.py): the text cursor does not blink (blinking
        # would need frames). Typed characters are not trickled one per frame (see
        # on_key_press): that lagged typing by seconds under software GL
        io.config_input_text_cursor_blink = False
        font = _font_path()
        if font is not None:
            io.fonts.add_font_from_file_ttf(str(font), FONT_SIZE)
        self._style()
        self.fb_scale = fb_scale
        self.input = ImguiInput(size[1])
        self.resize(*size)
        self.imgui_renderer = ImguiRenderer(ctx)
        self.scene_renderer = SceneRenderer(ctx)
        self.controller = ViewportController(state, file_browser=lambda m: open_browser(state, m))
        self.layout_done = False
        self.retained = True  # redraw only the UI that changed (see ImguiRenderer.plan)
        self._canvas = None
        self._canvas_color = None
        self.last = FrameTimes()
        self._t_last = time.perf_counter()
        self.pacer = FramePacer()
        self._typed: set[int] = set()  # printable keys held whose press imgui did not get

    def _style(self) -> None:
        imgui.style_colors_dark()
        st = imgui.get_style()
        st.window_rounding = 4.0
        st.frame_rounding = 3.0
        st.grab_rounding = 3.0
        st.window_border_size = 1.0
        st.frame_padding = (6.0, 4.0)
        st.item_spacing = (8.0, 5.0)
        st.indent_spacing = 12.0  # body95's tree is ten joints deep
        # opaque backgrounds: nothing of the 3-D view or of older frames shows through panels
        st.set_color_(imgui.Col_.window_bg, (*PANEL_BG, 1.0))
        st.set_color_(imgui.Col_.popup_bg, (0.09, 0.10, 0.12, 1.0))
        st.set_color_(imgui.Col_.menu_bar_bg, (0.15, 0.16, 0.18, 1.0))
        st.set_color_(imgui.Col_.title_bg_active, (0.18, 0.30, 0.46, 1.0))
        st.set_color_(imgui.Col_.tab_selected, (0.22, 0.38, 0.58, 1.0))

    # ---------------------------------------------------------------- window events
    def resize(self, width: int, height: int) -> None:
        io = imgui.get_io()
        io.display_size = (float(width), float(height))
        io.display_framebuffer_scale = (self.fb_scale, self.fb_scale)
        self.state.window_size = (int(width), int(height))
        self.input.on_resize(width, height)
        if hasattr(self, "pacer"):
            self.pacer.request()

    on_resize = resize

    def _imgui_wants_mouse(self) -> bool:
        return bool(imgui.get_io().want_capture_mouse)

    def on_mouse_motion(self, x, y, dx, dy):
        self.input.on_mouse_motion(x, y, dx, dy)
        self.pacer.request()
        if self._imgui_wants_mouse() and self.controller.mode is None:
            s = self.state
            s.hover_site = s.hover_joint = s.hover_ring = None
            return
        self.controller.on_mouse_motion(x, y, dx, dy)

    def on_mouse_press(self, x, y, button, modifiers):
        stale_pos = tuple(imgui.get_io().mouse_pos)  # the cursor the last frame saw
        self.input.on_mouse_press(x, y, button, modifiers)
        self.pacer.request()
        if not self._imgui_wants_mouse() or self._fresh_press_in_view(x, y, stale_pos):
            self.controller.on_mouse_press(x, y, button, modifiers)

    def _fresh_press_in_view(self, x, y, stale_pos) -> bool:
        """A press at a cursor position no frame has seen yet (moved there and clicked within
        one frame, as xdotool or a quick hand does) inside the 3-D view goes to the view.

        ``want_capture_mouse`` is computed by the last frame for the last frame's cursor: after
        a move from a panel into the view it still says "the UI wants the mouse", and a quick
        click would be lost. Popups and an active widget still take the press.
        """
        cx, cy = float(x), float(self.state.window_size[1] - y)
        if abs(stale_pos[0] - cx) <= 0.5 and abs(stale_pos[1] - cy) <= 0.5:
            return False
        if imgui.is_any_item_active() or imgui.is_popup_open(
                "", imgui.PopupFlags_.any_popup_id):
            return False
        return self.controller.in_view(x, y)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.input.on_mouse_drag(x, y, dx, dy, buttons, modifiers)
        self.pacer.request()
        self.controller.on_mouse_drag(x, y, dx, dy, buttons, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self.input.on_mouse_release(x, y, button, modifiers)
        self.pacer.request()
        self.controller.on_mouse_release(x, y, button, modifiers)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.input.on_mouse_scroll(x, y, scroll_x, scroll_y)
        self.pacer.request()
        if not self._imgui_wants_mouse():
            self.controller.on_mouse_scroll(x, y, scroll_x, scroll_y)

    def on_mouse_leave(self, x, y):
        self.input.on_mouse_leave(x, y)
        self.pacer.request()

    def _typing(self, symbol: int, modifiers: int) -> bool:
        """A printable key typed into a text field: imgui gets its character (on_text), not
        the key. imgui spreads a key's down / up and the characters queued with them over
        several frames ("input trickling", which keeps quick clicks apart at low frame rates);
        with only characters in the queue a whole burst of typing lands in the next frame."""
        return (bool(imgui.get_io().want_text_input) and 32 <= symbol < 127
                and not modifiers & (K.MOD_CTRL | K.MOD_ALT | K.MOD_COMMAND))

    def on_key_press(self, symbol, modifiers):
        if self._typing(symbol, modifiers):
            self._typed.add(symbol)
        else:
            self.input.on_key_press(symbol, modifiers)
        self.pacer.request()
        io = imgui.get_io()
        ctrl = modifiers & (K.MOD_CTRL | K.MOD_COMMAND)
        if io.want_text_input and not (ctrl and symbol == K.S):
            return
        if symbol == K.F1:
            self.state.show_help = not self.state.show_help
            return
        if ctrl and symbol == K.Q:
            self.state.quit_requested = True
            return
        if self.state.editing.focused and self._editor_key(symbol, modifiers):
            return
        self.controller.on_key_press(symbol, modifiers)

    def _editor_key(self, symbol, modifiers) -> bool:
        """Keys of the dope sheet / graph editor when one of them has the keyboard."""
        s = self.state
        ctrl = modifiers & (K.MOD_CTRL | K.MOD_COMMAND)
        if symbol in (K.DELETE, K.BACKSPACE) and dope_sheet.selection(s):
            dope_sheet.delete_selected(s)
        elif ctrl and symbol == K.C:
            dope_sheet.copy(s)
        elif ctrl and symbol == K.V:
            dope_sheet.paste(s)
        elif symbol == K.A and not modifiers:
            dope_sheet.select(s, [k for r in dope_sheet.rows(s)[1:] for k in dope_sheet.row_keys(s, r)])
        elif symbol == K.HOME and not modifiers:
            dope_sheet.frame_all(s)
            s.editing.graph_range = None
        else:
            return False
        return True

    def on_key_release(self, symbol, modifiers):
        if symbol in self._typed:
            self._typed.discard(symbol)
        else:
            self.input.on_key_release(symbol, modifiers)
        self.pacer.request()
        self.controller.on_key_release(symbol, modifiers)

    def on_text(self, text):
        self.input.on_text(text)
        self.pacer.request()

    def on_file_drop(self, x, y, paths):
        """A file dropped onto the window: open it (errors become a message)."""
        self.pacer.request()
        if paths:
            documents.open_into(self.state, paths[0])

    # ---------------------------------------------------------------- frame
    def build_ui(self) -> None:
        """All panels (between imgui.new_frame and imgui.render)."""
        s = self.state
        draw_menu_bar(s)
        draw_status_bar(s)
        vp = imgui.get_main_viewport()
        dock_id = imgui.get_id("MainDock")
        if not self.layout_done:
            setup_layout(dock_id, vp.work_size)
            self.layout_done = True
        imgui.dock_space_over_viewport(dock_id, vp, imgui.DockNodeFlags_.passthru_central_node)
        node = imgui.internal.dock_builder_get_central_node(dock_id)
        if node is not None:
            s.view_rect = (int(node.pos.x - vp.pos.x), int(node.pos.y - vp.pos.y),
                           max(int(node.size.x), 1), max(int(node.size.y), 1))
        draw_skeleton_panel(s)
        draw_joint_panel(s)
        draw_timeline_panel(s)
        draw_dope_sheet_panel(s)
        draw_graph_panel(s)
        draw_solver_panel(s)
        draw_effectors_panel(s)
        draw_plot_panel(s)
        draw_physics_panel(s)
        draw_mode_panels(s)
        draw_context_menu(s)
        draw_file_browser_panel(s)
        draw_help_window(s)
        draw_messages(s)
        draw_view_hint(s)
        draw_task_bar(s)
        self._hover_tooltip()

    def _hover_tooltip(self) -> None:
        """The name of the handle, gizmo ring / arrow or joint under the cursor."""
        s = self.state
        if s.drag is not None or self.controller.mode is not None or self._imgui_wants_mouse():
            return
        text = hover_label(s)
        if text:
            imgui.set_tooltip(text)

    def canvas(self):
        """The framebuffer the app draws into (kept between frames, so unchanged panels need
        not be drawn again); :meth:`present` copies it to the screen."""
        W, H = self.state.window_size
        size = (max(int(W * self.fb_scale), 1), max(int(H * self.fb_scale), 1))
        if self._canvas is None or self._canvas.size != size:
            if self._canvas is not None:
                for a in (*self._canvas.color_attachments, self._canvas.depth_attachment):
                    a.release()
                self._canvas.release()
                self._canvas_color.release()
            ctx = self.ctx
            color = ctx.texture(size, 4)
            self._canvas = ctx.framebuffer(color_attachments=[color],
                                           depth_attachment=ctx.depth_renderbuffer(size))
            # colour only: blitting depth to a screen whose depth format differs fails
            self._canvas_color = ctx.framebuffer(color_attachments=[color])
            self.imgui_renderer._last_layout = None  # a new canvas holds nothing: draw it all
        return self._canvas

    def frame(self, dt: float | None = None) -> FrameTimes:
        """Update and draw one frame into :meth:`canvas`.

        Args:
            dt: seconds since the last frame (measured when None).

        Returns:
            The frame's :class:`FrameTimes` (ms).
        """
        now = time.perf_counter()
        if dt is None:
            dt = now - self._t_last
        self._t_last = now
        s = self.state
        imgui.set_current_context(self.imgui_ctx)  # several GuiApps may live in one process
        implot.set_current_context(self.implot_ctx)
        t0 = time.perf_counter()
        s.editing.tasks.poll()  # a finished background task changes the document here
        modes.update(s, dt)  # the current mode's frame: the IK, playback, a retarget step
        follow_playback(s)  # camera follow (View › Follow during playback)
        t1 = time.perf_counter()
        io = imgui.get_io()
        io.delta_time = max(float(dt), 1e-4)
        self.input.new_frame()
        imgui.new_frame()
        self.build_ui()
        imgui.render()
        draw_data = imgui.get_draw_data()
        t2 = time.perf_counter()
        canvas = self.canvas()
        canvas.use()
        sc = self.fb_scale
        fbh = canvas.size[1]
        x, y, w, h = s.view_rect
        cam = s.camera
        cam.width, cam.height = w, h
        live = (float(x), float(y), float(x + w), float(y + h)) if self.retained else None
        clear, lists = self.imgui_renderer.plan(draw_data, live)
        if clear is None:  # repaint everything
            self.ctx.scissor = None
            canvas.clear(*PANEL_BG, 1.0, depth=1.0)
        else:  # repaint the UI regions that changed (see ImguiRenderer.plan)
            for x0, y0, x1, y1 in clear:
                r = (int(x0 * sc), int(fbh - y1 * sc), int((x1 - x0) * sc), int((y1 - y0) * sc))
                canvas.clear(*PANEL_BG, 1.0, viewport=r)
        rect = (int(x * sc), int(fbh - (y + h) * sc), int(w * sc), int(h * sc))
        self.scene_renderer.render(s, view_geometry(s), rect)
        self.imgui_renderer.render(draw_data, fb_height=fbh, lists=lists)
        t3 = time.perf_counter()
        self.last = FrameTimes(1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2))
        s.stats.tick(self.last.total)
        self.pacer.after_frame(s)
        return self.last

    def wants_frame(self) -> bool:
        """Whether the next loop tick should draw (see :mod:`animik.app.pacing`)."""
        return self.pacer.wants_frame(self.state)

    def present(self, target) -> None:
        """Copy the canvas to ``target`` (the window's screen framebuffer)."""
        self.canvas()
        self.ctx.scissor = None
        self.ctx.copy_framebuffer(target, self._canvas_color)

    def release(self) -> None:
        self.imgui_renderer.release()
        self.scene_renderer.release()
        implot.destroy_context(self.implot_ctx)
        imgui.destroy_context(self.imgui_ctx)


class Offscreen:
    """A :class:`GuiApp` on an EGL standalone context (tests, benchmarks, screenshots without a
    display). Pixels are read from the app's canvas."""

    def __init__(self, state: AppState, size: tuple[int, int] = (1280, 800), ctx=None):
        import moderngl

        self.ctx = ctx or moderngl.create_standalone_context(backend="egl")
        self.gui = GuiApp(self.ctx, state, size)
        self.state = state
        self.size = size

    def frame(self, dt: float = 1.0 / 60.0) -> FrameTimes:
        return self.gui.frame(dt)

    def finish(self) -> None:
        self.ctx.finish()

    def pixels(self):
        """``(H, W, 3)`` uint8 of the last frame, first row at the top."""
        return read_framebuffer(self.gui.canvas())

    def screenshot(self, path) -> None:
        write_png(path, self.pixels())

    def release(self) -> None:
        self.gui.release()
