"""``animik filter``: seed D's dynamics filter (method A) over a whole clip.

The input poses are the joint targets, feet in contact are pinned where they land, the
centre of mass follows the input's through a capture-point (DCM) reference, and every frame's
floor wrench is checked and, when invalid, replaced by the nearest valid one with the
accelerations re-solved (docs/dynamics.md). The output is written atomically and only when
the filter finished; the report gives the RMS joint change, effector drift and foot skate.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_OS, EXIT_NOT_MET = 0, 2, 3, 4, 5

_EPILOG = """\
exit codes:
  0  the filtered clip is feasible at every frame (written)
  2  bad usage
  3  bad input (malformed BVH, NaN, unknown rig, no contact geometry, bad option values)
  4  operating-system error (file not found, cannot write)
  5  goal not met: the filter diverged (nothing written) or some output frame is still
     infeasible (the complete clip is written, the frames are listed)

examples:
  animik filter walk.bvh -o walk_filtered.bvh
  animik filter walk.bvh -o out.bvh --rig body95 --json report.json
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik filter``."""
    p = subparsers.add_parser(
        "filter", help="make a clip physically feasible (seed D dynamics filter, method A)",
        description="Seed D's dynamics filter over a BVH clip: joint targets from the input, "
                    "feet pinned in contact, invalid floor wrenches corrected (push, ZMP in the "
                    "support polygon, friction) and the accelerations re-solved.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("clip", metavar="IN.bvh")
    p.add_argument("-o", "--output", required=True, metavar="OUT.bvh")
    p.add_argument("--method", default="A", choices=("A", "B"),
                   help="A: check and correct (implemented); B: operational-space inverse "
                        "inertia (not implemented: exits 3)")
    p.add_argument("--rig", default=None, help="retarget onto this rig first")
    p.add_argument("--mu", type=float, default=0.7, help="friction coefficient (default 0.7)")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write the report")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..dynamics.filter import FilterDivergedError, FilterOptions, filter_clip
    from ..io._atomic import atomic_write
    from ..io.bvh import read_bvh
    from ..io.bvh_compat import write_bvh_compatible

    t0 = time.perf_counter()
    opts = FilterOptions(method=args.method, mu=args.mu).checked()
    motion = read_bvh(args.clip)
    if args.rig:
        from ..retarget import retarget
        from ..rigs import load_rig

        motion = retarget(motion, load_rig(args.rig))
    try:
        res = filter_clip(motion, opts)
    except FilterDivergedError as e:
        print(f"animik filter: goal not met: {e}; nothing written", file=sys.stderr)
        return EXIT_NOT_MET
    r = res.report
    bad = [int(i) for i in (~res.check.feasible).nonzero()[0]]
    try:
        write_bvh_compatible(res.motion, args.output)
        if args.json:
            atomic_write(args.json, json.dumps({"input": args.clip, "output": args.output,
                                                "infeasible_frames": bad, **r}, indent=1))
    except OSError as e:
        print(f"animik filter: error: cannot write: {e}", file=sys.stderr)
        return EXIT_OS
    print(f"{args.clip} -> {args.output}: {r['frames']} frames, {r['corrected_frames']} corrected")
    print(f"  feasible frames {r['feasible_frames']} / {r['frames']} (output re-checked), "
          f"{r['feasible_frames_exact']} with the integrator's own accelerations")
    print(f"  RMS joint change {r['rms_joint_change_deg']} deg (max {r['max_joint_change_deg']}), "
          f"root drift mean {r['root_drift_cm']['mean']} cm, max {r['root_drift_cm']['max']} cm")
    worst = max(r["effector_drift"].items(), key=lambda kv: kv[1]["max_cm"], default=None)
    if worst:
        print(f"  largest effector drift: {worst[0]} {worst[1]['max_cm']} cm")
    print("  foot skate (cm, input -> output): " + ", ".join(
        f"{a} {v['input']} -> {v['output']}" for a, v in r["foot_skate_cm"].items()))
    print(f"  filter {r['filter_frames_per_second']:,.0f} frames/s; total {time.perf_counter() - t0:.2f} s")
    if bad:
        print(f"animik filter: goal not met: {len(bad)} frames still infeasible "
              f"(first {bad[:10]})", file=sys.stderr)
        return EXIT_NOT_MET
    return EXIT_OK
