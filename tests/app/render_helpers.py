"""An offscreen EGL context with the app's scene renderer, for pixel tests of the 3-D view."""

from __future__ import annotations

import numpy as np
import pytest

from animik.app.geometry import build_view
from animik.app.instances import ViewGeometry

W, H = 705, 751  # the 3-D view of the default layout


@pytest.fixture(scope="module")
def gl():
    import moderngl

    from animik.app.render.scene_renderer import SceneRenderer

    ctx = moderngl.create_standalone_context(backend="egl")
    fbo = ctx.framebuffer(color_attachments=[ctx.texture((W, H), 4)],
                          depth_attachment=ctx.depth_renderbuffer((W, H)))
    renderer = SceneRenderer(ctx)
    yield ctx, fbo, renderer
    renderer.release()
    ctx.release()


def render_view(gl, state, geom: ViewGeometry | None = None) -> np.ndarray:
    """``(H, W, 3)`` uint8, first row at the top (viewport pixel convention)."""
    from animik.app.render.png import read_framebuffer

    ctx, fbo, renderer = gl
    with ctx:  # current again after a test that made its own context (the app fixture)
        fbo.use()
        state.camera.width, state.camera.height = W, H
        renderer.render(state, build_view(state) if geom is None else geom, (0, 0, W, H))
        ctx.finish()
        return read_framebuffer(fbo)


def px(state, point) -> tuple[int, int]:
    """The viewport pixel (column, row) where ``point`` (m) projects."""
    p = state.camera.project(np.asarray(point, float))
    return int(round(p[0] - 0.5)), int(round(p[1] - 0.5))
