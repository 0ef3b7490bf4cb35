"""``python -m animik.app [SCENE|RIG|FILE.bvh] [--save-path P] ...``: run the app."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import run


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The app's command-line options (shared with ``animik [TARGET]``)."""
    p.add_argument("target", nargs="?", default=None,
                   help="a scene .toml, a rig .toml, a .bvh file, a rigged .glb / .gltf "
                        "character or a built-in rig name (default: scenes/default.toml, body95)")
    p.add_argument("--save-path", default=None,
                   help="where Ctrl+S writes the scene (default: the opened scene file, else "
                        "<name>.scene.toml in the current folder)")
    p.add_argument("--size", default="1280x800", help="window size WxH (default 1280x800)")
    p.add_argument("--fps", type=float, default=60.0, help="frame-rate cap (0: uncapped)")
    p.add_argument("--no-vsync", action="store_true", help="do not wait for vertical sync")
    p.add_argument("--screenshot", default=None,
                   help="write a PNG of the window after --screenshot-frames frames and quit")
    p.add_argument("--screenshot-frames", type=int, default=30)
    p.add_argument("--bvh-skeleton", action="store_true",
                   help="open a .bvh as its own skeleton even when its hierarchy is a built-in "
                        "rig's (by default a clip animik retarget --to body95 wrote opens as body95)")


def run_args(args: argparse.Namespace) -> int:
    """Run the app from parsed :func:`add_arguments` options."""
    try:
        w, h = (int(v) for v in str(args.size).lower().split("x"))
        if w < 320 or h < 240:
            raise ValueError
    except ValueError:
        print(f"animik: error: --size must be WxH with W >= 320 and H >= 240, got {args.size!r}",
              file=sys.stderr)
        return 2
    return run(args.target, save_path=args.save_path, size=(w, h), fps=args.fps,
               vsync=not args.no_vsync, screenshot=args.screenshot,
               screenshot_frames=args.screenshot_frames, bvh_skeleton=args.bvh_skeleton)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="animik", description="The animik posing app.")
    add_arguments(p)
    return run_args(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
