"""Dear ImGui draw data rendered with moderngl (no PyOpenGL needed).

Works in a pyglet window, in an EGL standalone context and in pyglet's headless mode alike.
Implements imgui 1.92's texture protocol (``RendererHasTextures``): the font atlas and other
textures are created, updated and destroyed on imgui's request
(``imgui.get_platform_io().textures``).
"""

from __future__ import annotations

import ctypes
import zlib

import numpy as np
from imgui_bundle import imgui

from .shaders import program

_VERT = np.dtype([("pos", "<f4", 2), ("uv", "<f4", 2), ("col", "u1", 4)])


class ImguiRenderer:
    """Renders ``imgui.get_draw_data()`` into the currently bound moderngl framebuffer."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.prog = program(ctx, "imgui")
        self.vbo = ctx.buffer(reserve=1 << 20, dynamic=True)
        self.ibo = ctx.buffer(reserve=1 << 19, dynamic=True)
        self.vao = self._make_vao()
        self.textures: dict[int, object] = {}
        self._last_layout: list = []
        self._last_keys: list = []
        io = imgui.get_io()
        io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
        pio = imgui.get_platform_io()
        size = int(ctx.info.get("GL_MAX_TEXTURE_SIZE", 4096))
        pio.renderer_texture_max_width = size
        pio.renderer_texture_max_height = size

    def _make_vao(self):
        assert imgui.VERTEX_SIZE == 20 and imgui.INDEX_SIZE == 4
        return self.ctx.vertex_array(
            self.prog, [(self.vbo, "2f 2f 4f1", "in_position", "in_uv", "in_color")],
            index_buffer=self.ibo, index_element_size=4)

    # ---------------------------------------------------------------- textures
    def _update_textures(self) -> None:
        for tex in imgui.get_platform_io().textures:
            if tex.status != imgui.ImTextureStatus.ok:
                self._update_texture(tex)

    def _update_texture(self, tex) -> None:
        st = tex.status
        if st == imgui.ImTextureStatus.want_create:
            pixels = np.ascontiguousarray(tex.get_pixels_array())
            t = self.ctx.texture((tex.width, tex.height), 4, pixels.tobytes())
            t.repeat_x = t.repeat_y = False
            # glyphs are baked at their display size and drawn on whole pixels: nearest
            # sampling looks the same and is much cheaper on software GL
            t.filter = (self.ctx.NEAREST, self.ctx.NEAREST)
            self.textures[t.glo] = t
            tex.set_tex_id(t.glo)
            tex.status = imgui.ImTextureStatus.ok
        elif st == imgui.ImTextureStatus.want_updates:
            t = self.textures.get(tex.tex_id)
            if t is None:
                tex.status = imgui.ImTextureStatus.want_create
                self._update_texture(tex)
                return
            full = np.asarray(tex.get_pixels_array()).reshape(tex.height, tex.width, 4)
            for r in tex.updates:
                sub = np.ascontiguousarray(full[r.y:r.y + r.h, r.x:r.x + r.w])
                t.write(sub.tobytes(), viewport=(r.x, r.y, r.w, r.h))
            tex.status = imgui.ImTextureStatus.ok
        elif st == imgui.ImTextureStatus.want_destroy:
            t = self.textures.pop(tex.tex_id, None)
            if t is not None:
                t.release()
            tex.set_tex_id(0)
            tex.status = imgui.ImTextureStatus.destroyed

    # ---------------------------------------------------------------- drawing
    def plan(self, draw_data, live_rect: tuple[float, float, float, float] | None = None):
        """Decide what to draw this frame: ``(clear, [(list, clip region or None)])``.

        Software GL fills pixels slowly, and most of the UI is the same from one frame to the
        next. When the target framebuffer keeps its pixels between frames (the app draws into
        its own canvas), only *dirty regions* are repainted: ``live_rect`` (the 3-D view,
        redrawn every frame; display pixels ``(x0, y0, x1, y1)``) and the extents of the draw
        lists that changed (their vertex or index bytes), merged until disjoint. Each dirty
        region outside the 3-D view is cleared (``clear``: regions in display pixels; the
        caller clears them before drawing the 3-D view), then every draw list overlapping a
        region is drawn clipped to it, in order, so the region is painted from scratch and
        nothing is blended twice.

        Anything else (a window moved or resized, a popup opened or closed, a changed region
        reaching into the 3-D view or covering much of the display) repaints everything:
        ``clear`` is ``None`` (clear the whole canvas) and every list is drawn whole.
        ``live_rect=None`` always does that.
        """
        lists = []
        ds = imgui.get_io().display_size
        dw, dh = float(ds.x), float(ds.y)
        for cl in draw_data.cmd_lists:
            vsize = cl.vtx_buffer.size() * imgui.VERTEX_SIZE
            isize = cl.idx_buffer.size() * imgui.INDEX_SIZE
            if vsize == 0 or isize == 0:
                continue
            vb = ctypes.string_at(cl.vtx_buffer.data_address(), vsize)
            ib = ctypes.string_at(cl.idx_buffer.data_address(), isize)
            x0 = y0 = np.inf
            x1 = y1 = -np.inf
            cmds = []
            for cmd in cl.cmd_buffer:
                r = cmd.clip_rect
                x0, y0 = min(x0, r.x), min(y0, r.y)
                x1, y1 = max(x1, r.z), max(y1, r.w)
                cmds.append((r.x, r.y, r.z, r.w, cmd.tex_ref.get_tex_id(), cmd.elem_count,
                             cmd.idx_offset))
            # extent: the vertices (clip rects are often the whole display), within the clips
            pos = np.frombuffer(vb, dtype=_VERT)["pos"]
            lo, hi = pos.min(axis=0), pos.max(axis=0)
            bb = (max(x0, float(np.floor(lo[0])), 0.0), max(y0, float(np.floor(lo[1])), 0.0),
                  min(x1, float(np.ceil(hi[0])), dw), min(y1, float(np.ceil(hi[1])), dh))
            key = zlib.crc32(ib, zlib.crc32(vb))
            lists.append((key, bb, vb, ib, cmds))
        layout = [bb for _, bb, *_ in lists]
        old = self._last_keys
        full = live_rect is None or layout != self._last_layout or len(old) != len(lists)
        self._last_layout = layout
        self._last_keys = [k for k, *_ in lists]
        everything = None, [(item, None) for item in lists]
        if full:
            return everything
        changed = [item[1] for item, k_old in zip(lists, old, strict=True) if item[0] != k_old]
        regions = _merge([c for c in changed if not _contains(live_rect, c)])
        if any(_overlap(r, live_rect) for r in regions) \
                or sum(_area(r) for r in regions) > 0.5 * dw * dh:
            return everything
        out = []
        for item in lists:
            for r in (live_rect, *regions):
                if _overlap(item[1], r):
                    out.append((item, _inter(item[1], r)))
        return regions, out

    def render(self, draw_data, fb_height: int | None = None, lists=None) -> None:
        """Draw ``draw_data`` (or the ``lists`` chosen by :meth:`plan`) with the display's
        top-left at the framebuffer's top-left."""
        self._update_textures()
        io = imgui.get_io()
        dw, dh = io.display_size.x, io.display_size.y
        sx, sy = io.display_framebuffer_scale.x, io.display_framebuffer_scale.y
        fbw, fbh = int(dw * sx), int(dh * sy)
        if fbw <= 0 or fbh <= 0 or draw_data is None:
            return
        if lists is None:
            lists = self.plan(draw_data, None)[1]
        if fb_height is None:
            fb_height = fbh
        ctx = self.ctx
        ctx.enable_only(ctx.BLEND)
        ctx.blend_func = (ctx.SRC_ALPHA, ctx.ONE_MINUS_SRC_ALPHA, ctx.ONE, ctx.ONE_MINUS_SRC_ALPHA)
        ctx.blend_equation = ctx.FUNC_ADD
        ctx.viewport = (0, fb_height - fbh, fbw, fbh)
        ox, oy = draw_data.display_pos.x, draw_data.display_pos.y
        proj = np.array([
            [2.0 / dw, 0.0, 0.0, 0.0],
            [0.0, -2.0 / dh, 0.0, 0.0],
            [0.0, 0.0, -1.0, 0.0],
            [-1.0 - 2.0 * ox / dw, 1.0 + 2.0 * oy / dh, 0.0, 1.0],
        ], dtype="f4")
        self.prog["u_proj"].write(proj.tobytes())
        self.prog["u_texture"].value = 0
        for (_key, _bb, vb, ib, cmds), region in lists:
            grew = False
            if len(vb) > self.vbo.size:
                self.vbo.orphan(max(len(vb), 2 * self.vbo.size))
                grew = True
            if len(ib) > self.ibo.size:
                self.ibo.orphan(max(len(ib), 2 * self.ibo.size))
                grew = True
            if grew:
                self.vao.release()
                self.vao = self._make_vao()
            self.vbo.write(vb)
            self.ibo.write(ib)
            for x0, y0, x1, y1, tex_id, count, first in cmds:
                if region is not None:
                    x0, y0 = max(x0, region[0]), max(y0, region[1])
                    x1, y1 = min(x1, region[2]), min(y1, region[3])
                x0, y0 = (x0 - ox) * sx, (y0 - oy) * sy
                x1, y1 = (x1 - ox) * sx, (y1 - oy) * sy
                if x1 <= x0 or y1 <= y0:
                    continue
                tex = self.textures.get(tex_id)
                if tex is not None:
                    tex.use(0)
                ctx.scissor = (int(x0), int(fb_height - y1), int(x1 - x0), int(y1 - y0))
                # 32-bit indices: imgui never needs a vertex offset (no RendererHasVtxOffset)
                self.vao.render(vertices=count, first=first)
        ctx.scissor = None
        ctx.disable(ctx.BLEND)

    def release(self) -> None:
        for tex in imgui.get_platform_io().textures:
            if tex.status == imgui.ImTextureStatus.ok:
                tex.status = imgui.ImTextureStatus.want_destroy
                self._update_texture(tex)
        for t in self.textures.values():
            t.release()
        self.textures.clear()
        self.vao.release()
        self.vbo.release()
        self.ibo.release()


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inter(a, b) -> tuple[float, float, float, float]:
    return (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))


def _merge(rects: list) -> list:
    """Rectangles merged (into bounding boxes) until no two overlap."""
    rects = [tuple(r) for r in rects]
    merged = True
    while merged:
        merged = False
        for i in range(len(rects)):
            for j in range(i + 1, len(rects)):
                a, b = rects[i], rects[j]
                if _overlap(a, b):
                    rects[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del rects[j]
                    merged = True
                    break
            if merged:
                break
    return rects


def _contains(a, b) -> bool:
    """Rectangle ``a`` contains ``b``."""
    return a[0] <= b[0] and a[1] <= b[1] and a[2] >= b[2] and a[3] >= b[3]


def _area(a) -> float:
    return max(a[2] - a[0], 0.0) * max(a[3] - a[1], 0.0)
