"""``animik bench app``: frame time of the app while dragging a hand, split into IK, UI, render.

Runs the real app (:class:`animik.app.gui.GuiApp`: per-frame IK, every imgui panel, the 3-D view)
offscreen on an EGL context, and drives it with pyglet-style mouse events: press on the left
hand's handle, drag it around a circle in the view plane (one turn per ``--period`` frames),
release at the end. Each frame is timed to completion (``glFinish``), so "render" includes the
GPU's (llvmpipe's) work, as the window's buffer swap would.

* IK: the solver step of the frame (warm-started FIK by default).
* UI: building the imgui panels (Python + Dear ImGui).
* render: the 3-D view + drawing the UI + finishing the frame.

It also counts, per frame, the forward-kinematics passes the app ran itself (outside the
solver) and the view geometries it built (render and picking share one per frame while nothing
changes), during the drag and while the mouse then moves over the still pose (hover picking).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from .. import _cli_args as _args
from .._table import format_table
from ..errors import AnimikError


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench app``."""
    p = subparsers.add_parser(
        "app", help="app frame time while dragging a hand (IK / UI / render), offscreen",
        description="Frame-time percentiles of the app (IK, UI, render) during a scripted drag "
                    "of body95's left hand, rendered offscreen on EGL (software GL where there "
                    "is no GPU). Needs the app's extras: moderngl, imgui-bundle.")
    p.add_argument("--frames", type=_args.positive_frames, default=600, help="frames to time (default 600)")
    p.add_argument("--warmup", type=_args.frames, default=30, help="untimed frames first (default 30)")
    p.add_argument("--size", default="1280x800", help="window size WxH (default 1280x800)")
    p.add_argument("--scene", default=None,
                   help="scene, rig or BVH to open (default: scenes/default.toml, body95)")
    p.add_argument("--site", default="l_hand", help="effector to drag (default l_hand)")
    p.add_argument("--solver", default=None, help="solver (default: the scene's)")
    p.add_argument("--radius", type=_args.pixels, default=90.0, help="drag circle radius, px")
    p.add_argument("--period", type=_args.positive_frames, default=240, help="frames per turn (default 240)")
    p.add_argument("--view", choices=("mesh", "bones", "xray"), default="mesh",
                   help="draw the character as its skinned mesh (default), bones, or both")
    p.add_argument("--full-redraw", action="store_true",
                   help="redraw the whole UI every frame (no retained panels)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    try:
        w, h = (int(v) for v in str(args.size).lower().split("x"))
    except ValueError:
        raise AnimikError(f"--size must be WxH, got {args.size!r}") from None
    if args.frames < 1:
        raise AnimikError(f"--frames must be at least 1, got {args.frames}")
    res = measure(frames=args.frames, warmup=args.warmup, size=(w, h), scene=args.scene,
                  site=args.site, solver=args.solver, radius=args.radius, period=args.period,
                  retained=not args.full_redraw, view_mode=args.view)
    rows = []
    for part in ("ik", "ui", "render", "total"):
        v = res[part]
        rows.append((part, *[float(np.percentile(v, p)) for p in (50, 90, 95, 99)],
                     float(v.max())))
    print(format_table(["part", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "max ms"], rows,
                       title=f"animik bench app: {res['scene']} {w}x{h}, drag {args.site}, "
                             f"solver {res['solver']}, {args.frames} frames, {res['renderer']}, "
                             f"view {res['view_mode']}, mesh {res['mesh_vertices']} vertices / "
                             f"{res['mesh_faces']} triangles"))
    tot = res["total"]
    print(f"\nframes under 16.7 ms: {100 * np.mean(tot < 1000 / 60):.1f} %   "
          f"mean {1000 / tot.mean():.1f} fps   IK iterations/frame: mean "
          f"{res['iterations'].mean():.1f}, max {int(res['iterations'].max())}   "
          f"effector error: median {np.median(res['error_mm']):.3f} mm, "
          f"max {res['error_mm'].max():.2f} mm   DoF {res['n_dof']}")
    print(f"per frame, dragging: {res['drag_fk']:.2f} FK passes (app side), "
          f"{res['drag_views']:.2f} view builds;  hovering: {res['hover_fk']:.2f} FK passes, "
          f"{res['hover_views']:.2f} view builds")
    return 0


def measure(frames: int = 600, warmup: int = 30, size=(1280, 800), scene=None,
            site: str = "l_hand", solver: str | None = None, radius: float = 90.0,
            period: int = 240, retained: bool = True, view_mode: str = "mesh") -> dict:
    """Drive the app offscreen and time each frame.

    Returns:
        ``{"ik", "ui", "render", "total", "iterations", "error_mm"}`` arrays ``(frames,)`` (ms,
        count, mm), ``scene``, ``solver``, ``renderer``, ``n_dof``, and per frame the app's own
        FK passes and view-geometry builds while dragging (``drag_fk``, ``drag_views``) and
        while hovering over the still pose (``hover_fk``, ``hover_views``), the view mode and
        the drawn mesh's size (``view_mode``, ``mesh_vertices``, ``mesh_faces``; 0 in bones).
    """
    # Lazy: `animik --help` registers this benchmark and must not load GL (imgui, moderngl).
    from . import actions
    from . import keys as K
    from .gui import Offscreen

    state = actions.make_state(scene, size=size)
    actions.set_view_mode(state, view_mode)
    if solver is not None:
        actions.set_solver(state, state.doc.solver.replace(name=solver))
    off = Offscreen(state, size)
    gui = off.gui
    for _ in range(3):
        off.frame()
    gui.retained = retained
    i = state.skeleton.site_index(site)
    p = state.camera.project(state.fk.site_positions[i])
    vx, vy, _, _ = state.view_rect
    x0, y0 = p[0] + vx, size[1] - (p[1] + vy)  # pyglet coordinates
    gui.on_mouse_motion(x0, y0, 0, 0)
    off.frame()
    gui.on_mouse_press(x0, y0, K.LEFT, 0)
    off.frame()
    if state.drag is None:
        raise RuntimeError(f"the scripted press at {x0:.0f}, {y0:.0f} did not grab {site!r}")
    n = warmup + frames
    ik = np.zeros(n)
    ui = np.zeros(n)
    total = np.zeros(n)
    its = np.zeros(n)
    err = np.zeros(n)
    px, py = x0, y0
    dt = 1.0 / 60.0
    stats = state.stats
    fk0 = vb0 = 0
    for f in range(n):
        if f == warmup:
            fk0, vb0 = stats.fk_passes, stats.view_builds
        a = 2 * np.pi * f / period
        x = x0 + radius * np.sin(a)
        y = y0 + 0.6 * radius * (1 - np.cos(a))
        t0 = time.perf_counter()
        gui.on_mouse_drag(x, y, x - px, y - py, K.LEFT, 0)
        t = off.frame(dt)
        off.finish()
        total[f] = 1e3 * (time.perf_counter() - t0)
        ik[f], ui[f] = t.ik, t.ui
        its[f] = state.stats.last_iterations
        err[f] = state.stats.last_error_mm
        px, py = x, y
    drag_fk = (stats.fk_passes - fk0) / frames
    drag_views = (stats.view_builds - vb0) / frames
    gui.on_mouse_release(px, py, K.LEFT, 0)
    off.frame()
    # hover: the mouse moves over the still pose (picking every move), one event a frame
    for _ in range(10):
        off.frame()
    hover = 60
    fk0, vb0 = stats.fk_passes, stats.view_builds
    for f in range(hover):
        gui.on_mouse_motion(px + 0.5 * f, py, 0.5, 0)
        off.frame(dt)
    hover_views = (stats.view_builds - vb0) / hover
    hover_fk = (stats.fk_passes - fk0) / hover
    renderer = off.ctx.info.get("GL_RENDERER", "?")
    mesh = state.doc.mesh
    drawn = mesh is not None and state.view_mode != "bones"
    name = str(scene) if scene is not None else "scenes/default.toml"
    out = {"ik": ik[warmup:], "ui": ui[warmup:], "render": (total - ik - ui)[warmup:],
           "total": total[warmup:], "iterations": its[warmup:], "error_mm": err[warmup:],
           "scene": name, "solver": state.doc.solver.name, "renderer": renderer,
           "n_dof": state.skeleton.n_dof, "drag_fk": drag_fk, "drag_views": drag_views,
           "hover_fk": hover_fk, "hover_views": hover_views, "view_mode": state.view_mode,
           "mesh_vertices": mesh.n_vertices if drawn else 0,
           "mesh_faces": mesh.n_faces if drawn else 0}
    off.release()
    return out
