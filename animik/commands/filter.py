"""``animik filter``: seed D's dynamics filter (method A) over a whole clip.

Method A over the clip (:mod:`animik.dynamics.correct`): every frame's floor wrench is
evaluated as ``animik feasibility`` evaluates the written clip, invalid ones are replaced by
the nearest valid wrench and one least-squares correction of the root translation and an
upper-body lean reaches them, iterated against the independent check. The output is written
atomically and only when every frame passes; otherwise nothing is written (exit 5).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from ..dynamics.correct import correct_clip
from ..dynamics.filter import FilterOptions
from ..io._atomic import atomic_write
from ..io.bvh import read_bvh
from ..io.bvh_compat import write_bvh_compatible
from ..retarget import retarget
from ..rigs import load_rig

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_OS, EXIT_NOT_MET = 0, 2, 3, 4, 5

_EPILOG = """\
exit codes:
  0  the filtered clip is feasible at every frame (written)
  2  bad usage
  3  bad input (malformed BVH, NaN, unknown rig, no contact geometry, bad option values)
  4  operating-system error (file not found, cannot write)
  5  goal not met: some frame of the corrected clip is still infeasible (nothing written,
     the frames are listed)

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
                   help="A: check and correct, over the whole clip (animik.dynamics.correct); "
                        "B: operational-space inverse inertia (not implemented: exits 3)")
    p.add_argument("--rig", default=None, help="retarget onto this rig first")
    p.add_argument("--mu", type=float, default=0.7, help="friction coefficient (default 0.7)")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write the report")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    opts = FilterOptions(mu=args.mu).checked()
    if args.method == "B":
        print("animik filter: error: --method B (seed D's operational-space inverse inertia) is "
              "not implemented; use --method A", file=sys.stderr)
        return EXIT_DATA
    motion = read_bvh(args.clip)
    if args.rig:
        motion = retarget(motion, load_rig(args.rig))
    res = correct_clip(motion, opts)
    bad = [int(i) for i in (~res.check.feasible).nonzero()[0]]
    dq = res.motion.q - motion.q
    root = int(np.flatnonzero(motion.skeleton.parents < 0)[0])
    rot = motion.skeleton.dof_type == 0
    rot[list(motion.skeleton.joint_dofs(root))] = False
    rms = float(np.degrees(np.sqrt(np.mean(dq[:, rot] ** 2)))) if rot.any() else 0.0
    T = motion.n_frames
    print(f"{args.clip}{' -> ' + args.rig if args.rig else ''}: {T} frames; infeasible frames "
          f"per round {[h[0] for h in res.history]}")
    print(f"  RMS joint change {rms:.3f} deg, root shift max "
          f"{100 * np.abs(dq[:, ~rot]).max():.2f} cm; filter {T / res.seconds:,.0f} frames/s, "
          f"total {time.perf_counter() - t0:.2f} s")
    if bad:
        print(f"animik filter: goal not met: {len(bad)} frames still infeasible (first "
              f"{bad[:10]}); nothing written", file=sys.stderr)
        return EXIT_NOT_MET
    try:
        write_bvh_compatible(res.motion, args.output)
        if args.json:
            atomic_write(args.json, json.dumps({"input": args.clip, "output": args.output,
                                                "rms_joint_change_deg": rms,
                                                "history": res.history,
                                                "seconds": res.seconds}, indent=1))
    except OSError as e:
        print(f"animik filter: error: cannot write: {e}", file=sys.stderr)
        return EXIT_OS
    return EXIT_OK
