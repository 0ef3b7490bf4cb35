"""``animik feasibility``: seed D's physical checks at every frame of a clip.

Reads a BVH clip (optionally retargets it onto a rig), reconstructs velocities and
accelerations (Savitzky-Golay), runs inverse dynamics on all frames at once, detects foot
contacts and checks per frame that the floor can supply the needed wrench: the normal force
pushes, the ZMP lies inside the support polygon, the friction ratio stays below ``mu``.
Frames carried by supports off the floor (``--supports``: a seat, hand holds, pedals) are
checked with the contact wrench cone instead (:mod:`animik.dynamics.cone`). Prints a
per-frame table and a summary, writes JSON and PNG plots. See docs/dynamics.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .. import _cli_args as _args
from .._table import format_table
from ..dynamics.clip import DEFAULT_WINDOW, check_clip
from ..dynamics.offfloor import held_off_floor, resolve_supports
from ..dynamics.report import plot_png, summary, table_rows, to_dict
from ..dynamics.zmp import check_mu
from ..io._atomic import atomic_write
from ..io.bvh import read_bvh
from ..retarget import retarget
from ..rigs import load_rig
from ._model import MODEL_HELP, with_model

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_OS, EXIT_NOT_MET = 0, 2, 3, 4, 5

_EPILOG = """\
exit codes:
  0  every frame is feasible
  2  bad usage
  3  bad input (malformed BVH, NaN, unknown rig, rig without contact geometry, mu <= 0)
  4  operating-system error (file not found, cannot write an output)
  5  some frame is infeasible (the report and plots are still written); a body through a
     world-fixed seat or foot rest ("through support") is infeasible
  a seat or foot rest fixed to a body part that travels more than 5 cm in the world is a
  warning (support_warnings in --json), not exit 5: the wrench check holds for a support that
  moves (a platform, a swing); only the file's author knows whether it did

examples:
  animik feasibility walk.bvh
  animik feasibility walk.bvh --rig body95 --json walk.json --plot walk.png
  animik feasibility walk.bvh --mu 0.5 --every 1
  animik feasibility walk_body95_filtered.bvh --model body95
  animik feasibility louise.bvh --supports auto      (a seat, holds, pedals where held off the floor)
  animik feasibility ride.bvh --supports bike.json   (the user's supports, docs/dynamics.md 5f)
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik feasibility``."""
    p = subparsers.add_parser(
        "feasibility", help="check a clip's physical feasibility frame by frame (ZMP, friction)",
        description="Inverse dynamics of every frame of a BVH clip, and seed D's three contact "
                    "checks: the floor pushes, the ZMP is inside the support polygon, the "
                    "friction ratio is below mu. Per-frame table, summary, JSON, PNG plots.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("clip", metavar="CLIP.bvh")
    p.add_argument("--rig", default=None,
                   help="retarget onto this rig first (built-in name or rig .toml)")
    p.add_argument("--model", default=None, metavar="RIG|file", help=MODEL_HELP)
    p.add_argument("--mu", type=_args.number(0.0, 10.0, "a friction coefficient", lo_open=True),
                   default=0.7, help="friction coefficient (default 0.7)")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write the full report")
    p.add_argument("--plot", default=None, metavar="OUT.png",
                   help="write the plots (ZMP path over support polygons, margin, torques)")
    p.add_argument("--every", type=_args.integer(0, 10**7, "a row step"), default=None, metavar="N",
                   help="print every N-th frame (default: about 30 rows); 0 prints no table")
    p.add_argument("--window", type=_args.number(0.0, 10.0, "a window in seconds", lo_open=True),
                   default=None, metavar="S",
                   help="Savitzky-Golay window for velocities/accelerations (default 0.1 s)")
    p.add_argument("--floor", type=_args.number(-1e3, 1e3, "a height in metres"), default=None,
                   metavar="Z",
                   help="floor height in metres (default: estimated from the feet)")
    p.add_argument("--supports", default="auto", metavar="auto|floor|FILE.json",
                   help="contacts off the floor: auto (default) infers a seat, hand holds and "
                        "pedals over the stretches held still with no foot near the floor; floor: "
                        "the floor only; FILE.json: your supports (docs/dynamics.md 5f). Frames "
                        "with a support get the contact-wrench-cone check")
    p.set_defaults(func=run)
    return p


def _spans(mask) -> str:
    d = [i for i in range(len(mask)) if mask[i] and (i == 0 or not mask[i - 1])]
    e = [i for i in range(len(mask)) if mask[i] and (i + 1 == len(mask) or not mask[i + 1])]
    return ", ".join(f"{a}-{b}" for a, b in zip(d, e, strict=True)) or "none"


def _where(skel, s) -> str:
    """What a support is fixed to: a body part, the world, or the world with a part on it."""
    if s.joint >= 0:
        return skel.joint_names[s.joint]
    return f"world, {skel.joint_names[s.body]} on it" if s.touches else "world"


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    if args.every is not None and args.every < 0:
        print("animik feasibility: error: --every must be >= 0", file=sys.stderr)
        return EXIT_USAGE
    check_mu(args.mu)  # fail before reading / retargeting
    if args.rig and args.model:
        print("animik feasibility: error: --rig and --model exclude each other", file=sys.stderr)
        return EXIT_USAGE
    motion = read_bvh(args.clip)
    model = None
    if args.rig:
        motion = retarget(motion, load_rig(args.rig))
    else:
        motion, model = with_model(motion, args.model, "feasibility")
    supports = resolve_supports(args.supports, motion, floor=args.floor, mu=args.mu,
                                clip_path=args.clip)
    t1 = time.perf_counter()
    res = check_clip(motion, mu=args.mu, floor=args.floor,
                     window=DEFAULT_WINDOW if args.window is None else args.window,
                     supports=supports)
    t2 = time.perf_counter()
    T = len(res.feasible)
    every = args.every if args.every is not None else max(1, T // 30)
    name = Path(args.clip).name + (f" -> {args.rig}" if args.rig else "") + (
        f" (model {model})" if model else "")
    if every:
        headers, rows = table_rows(res, motion, every)
        print(format_table(headers, rows, title=f"animik feasibility: {name} (every {every}. frame)"))
    s = summary(res, motion)
    ranges = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in s["infeasible_ranges"][:12])
    more = " ..." if len(s["infeasible_ranges"]) > 12 else ""
    print(f"{name}: {T} frames at {res.fps:g} fps, floor z = {res.floor:.3f} m, mu = {res.mu:g}, "
          f"contact areas {', '.join(s['contact_areas'])}")
    print(f"  infeasible frames: {s['infeasible_frames']} / {T}"
          + (f" ({ranges}{more})" if ranges else ""))
    print("  by reason: " + ", ".join(f"{k} {v}" for k, v in s["reasons"].items())
          + f"; flight frames {s['flight_frames']}")
    print(f"  min ZMP margin {s['min_margin_m']} m, max friction ratio {s['max_friction_ratio']}, "
          f"peak torque {s['peak_torque_nm']} N m ({s['peak_torque_dof']}, frame "
          f"{s['peak_torque_frame']})")
    if supports is not None:
        sup = res.check.support_active
        print(f"  supports ({supports.source}): " + "; ".join(
            f"{x.name} ({x.kind} on {_where(motion.skeleton, x)}"
            f", frames {_spans(sup[:, i])})" for i, x in enumerate(supports.supports)))
        print(f"  frames checked by the contact wrench cone: {int(sup.any(axis=1).sum())}, "
              f"infeasible {s['reasons'].get('outside wrench cone', 0)}, max residual "
              f"{s['max_cone_residual']} body weights")
        print("  support travel in the world over its frames (cm; 0: fixed in the world): "
              + ", ".join(f"{k} {v}" for k, v in s["support_travel_cm"].items()))
        if s["support_contact"]:
            print("  body on the world supports: " + "; ".join(
                f"{k} touching {100 * v['touch_share']:.0f} %" + (
                    f", through up to {v['max_through_cm']} cm ({v['frames_through']} frames "
                    f"beyond the tolerance)" if "max_through_cm" in v else "")
                for k, v in s["support_contact"].items()))
        for w in s["support_warnings"]:
            print(f"  warning: {w}")
    held = held_off_floor(motion, floor=res.floor) if not s["feasible"] and supports is None \
        else []
    if held:
        print("  held still with no foot near the floor (a seat, a bike, a rail? the check knows "
              "only the floor): " + ", ".join(f"frames {a}-{b - 1}" for a, b in held))
    print(f"  check {t2 - t1:.3f} s ({T / max(t2 - t1, 1e-9):,.0f} frames/s); read"
          f"{' + retarget' if args.rig else ''} {t1 - t0:.3f} s")
    try:
        if args.json:
            report = {**to_dict(res, motion, str(args.clip)),
                      "held_off_floor_frames": [[a, b - 1] for a, b in held]}
            atomic_write(args.json, json.dumps(report, indent=1))
            print(f"  json: {args.json}")
        if args.plot:
            plot_png(res, motion, args.plot, title=f"{name}: feasibility (mu = {res.mu:g})")
            print(f"  plot: {args.plot}")
    except OSError as e:
        print(f"animik feasibility: error: cannot write: {e}", file=sys.stderr)
        return EXIT_OS
    return EXIT_OK if s["feasible"] else EXIT_NOT_MET
