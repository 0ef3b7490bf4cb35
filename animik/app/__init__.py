"""The interactive desktop app: pose a character by dragging effector handles, live FIK.

The only package of animik that imports GL/GUI libraries (pyglet, moderngl, imgui_bundle),
and only lazily: ``import animik.app`` alone loads none of them. :func:`run` opens the window.

Layout: :mod:`.state` (AppState, the undoable Document, History), :mod:`.actions` (every change
of state, the per-frame IK), :mod:`.camera`, :mod:`.geometry` (what is drawn, as arrays),
:mod:`.picking`, :mod:`.controller` (pyglet-style input), :mod:`.gui` (one frame: IK + panels +
render), :mod:`.render` (moderngl), :mod:`.ui` (imgui panels), :mod:`.window` (pyglet).
"""

from __future__ import annotations

from typing import Any


def run(target: str | None = None, **opts: Any) -> int:
    """Open the app window on a scene file, a built-in rig or a BVH file.

    Args:
        target: a scene ``.toml``, a rig ``.toml``, a ``.bvh`` file or a built-in rig name;
            ``None`` opens ``scenes/default.toml`` (body95).
        **opts: ``save_path`` (where Ctrl+S writes; default: the scene file, or
            ``<name>.scene.toml`` in the current folder), ``size`` ``(w, h)`` (1280, 800),
            ``vsync`` (True), ``fps`` (frame-rate cap, 60; 0 = uncapped),
            ``screenshot`` (write a PNG of the window after ``screenshot_frames`` frames and
            quit), ``title``, ``bvh_skeleton`` (a ``.bvh`` opens as its own skeleton even when
            its hierarchy is a built-in rig's; default False: such a file opens as the rig).

    Returns:
        The exit status (0; 3 when the target cannot be opened; 4 when no display).
    """
    from .window import run_window

    return run_window(target, **opts)


__all__ = ["run"]
