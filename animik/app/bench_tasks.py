"""``animik bench tasks``: how long a BVH import with key reduction blocks the app's window, on
the UI thread (as before background tasks) and as a background task (the window keeps drawing).

Runs the real app offscreen (EGL): first ``import_bvh`` directly (one frame that lasts the whole
import), then ``import_bvh_async`` while frames are drawn until the task is applied; prints the
frame gaps (the time between two drawn frames) of both.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from .._table import format_table
from ..errors import AnimikError


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench tasks``."""
    p = subparsers.add_parser(
        "tasks", help="window frame gaps during a BVH import: on the UI thread vs in the background",
        description="Imports a BVH with key reduction into the app (offscreen, EGL) twice: on "
                    "the UI thread, and as a background task while frames are drawn; prints "
                    "the frame gaps. Needs the app's extras: moderngl, imgui-bundle.")
    p.add_argument("bvh", help="the BVH file to import")
    p.add_argument("--tolerance", type=float, default=0.5, help="angle tolerance, deg (0.5)")
    p.add_argument("--position-tolerance", type=float, default=5.0,
                   help="position tolerance, mm (5)")
    p.add_argument("--size", default="1280x800", help="window size WxH (default 1280x800)")
    p.set_defaults(func=run)
    return p


def measure(bvh: str | Path, tolerance_deg: float = 0.5, position_mm: float = 5.0,
            size=(1280, 800)) -> dict:
    """Frame gaps (s) of the direct and the background import."""
    from . import actions
    from .gui import Offscreen
    from .timeline import background, import_bvh

    path = Path(bvh)
    if not path.is_file():
        raise AnimikError(f"bench tasks: no BVH file at {path}")
    tol, ptol = math.radians(tolerance_deg), position_mm * 1e-3
    st = actions.make_state(None, size=size)
    off = Offscreen(st, size)
    try:
        for _ in range(5):
            off.frame()
        t0 = time.perf_counter()
        off.frame()
        idle = time.perf_counter() - t0
        t0 = time.perf_counter()
        if not import_bvh(st, path, tol, ptol):
            raise AnimikError(f"bench tasks: cannot import {path}: {st.messages[-1].text}")
        off.frame()
        direct = time.perf_counter() - t0
        actions.undo(st)
        off.frame()
        task = background.import_bvh_async(st, path, tol, ptol)
        gaps = []
        last = start = time.perf_counter()
        while True:
            done = task.done
            off.frame()
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
            if done:
                break
        total = time.perf_counter() - start
        return {"idle": idle, "direct": direct, "background": total, "gaps": np.array(gaps),
                "frames": len(gaps), "clip": st.doc.current_clip.name}
    finally:
        off.release()


def run(args: argparse.Namespace) -> int:
    try:
        w, h = (int(v) for v in str(args.size).lower().split("x"))
    except ValueError:
        raise AnimikError(f"--size must be WxH, got {args.size!r}") from None
    r = measure(args.bvh, args.tolerance, args.position_tolerance, (w, h))
    g = 1e3 * r["gaps"]
    rows = [("UI thread (import_bvh)", 1e3 * r["direct"], 1, 1e3 * r["direct"], 1e3 * r["direct"]),
            ("background task", 1e3 * r["background"], r["frames"], float(np.median(g)),
             float(g.max()))]
    print(format_table(["import", "total ms", "frames drawn", "median gap ms", "max gap ms"], rows,
                       title=f"animik bench tasks: {Path(args.bvh).name} -> clip {r['clip']!r}, "
                             f"{args.tolerance:g} deg / {args.position_tolerance:g} mm, {w}x{h}, "
                             f"idle frame {1e3 * r['idle']:.1f} ms"))
    return 0
