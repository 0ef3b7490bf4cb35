"""``animik tune RIG``: tune feedback IK (seed A steps 1–5) for a rig and store the result.

The tuning runs the solver on a seeded dummy target trajectory (random reachable targets for
every site, plus a hand dragged around a circle with the other sites pinned), raises the gain
while the iteration count falls, backs off the step when the response turns unstable, adjusts
the filter constant, and computes the H∞ design of eq 13 (see :mod:`animik.ik.tuning`).

Where it is stored (``--output`` overrides): built-in rigs next to their rig file,
``assets/rigs/NAME.tuning.toml``; other rigs in the user config directory
(``$ANIMIK_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/animik``, else ``~/.config/animik``) as
``tuning/NAME-FINGERPRINT.tuning.toml``. ``solve_ik(..., solver="fik")`` then uses it by default.

Exit codes: 0 success; 2 bad usage; 3 unknown rig or bad input; 4 the file cannot be written.
"""

from __future__ import annotations

import argparse
import time

from .. import _cli_args as _args
from .._table import format_table
from ..ik.autotune import tune
from ..ik.tuning import save_tuning, tuning_path
from ..rigs import load_rig

_EPILOG = """\
exit codes:
  0  success
  2  bad usage (unknown option, missing argument)
  3  bad input (unknown rig, malformed rig file, bad option value)
  4  operating-system error (the tuning file cannot be written: try --output)

examples:
  animik tune fig2                     tune a built-in rig, store assets/rigs/fig2.tuning.toml
  animik tune my_rig.toml --dry-run    tune a rig file, print the result only
  animik tune body95 --mode scalar --output scalar.toml
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik tune``."""
    p = subparsers.add_parser(
        "tune", help="tune feedback IK for a rig and store the result with it",
        description="Tune the feedback IK solver (seed A's constant-gain procedure, automated) "
                    "on a seeded dummy target trajectory, compute the H-infinity design of "
                    "eq 13, print the result and store it where solve_ik finds it.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rig", help="a built-in rig name or a .toml rig file")
    p.add_argument("--mode", choices=("full", "scalar"), default="full",
                   help="gain design to tune: the full gain P = (J V Jᵀ + μI)⁻¹ (default) or the "
                        "source's scalar gain")
    p.add_argument("--problems", type=_args.count, default=40,
                   help="random reachable problems in the dummy trajectory (default 40)")
    p.add_argument("--frames", type=_args.frames, default=60,
                   help="frames of the circle-tracking part (default 60; 0: none)")
    p.add_argument("--seed", type=_args.seed, default=0, help="seed of the dummy trajectory")
    p.add_argument("--no-hinf", action="store_true", help="skip the H-infinity design")
    p.add_argument("--output", "-o", default=None,
                   help="write the tuning to this file instead of the default location")
    p.add_argument("--dry-run", action="store_true", help="print the result, write nothing")
    p.add_argument("--verbose", "-v", action="store_true", help="print every trial")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    """Run ``animik tune``; returns the exit code."""

    skel = load_rig(args.rig)
    t0 = time.perf_counter()
    result = tune(skel, mode=args.mode, n_problems=args.problems, seed=args.seed,
                  tracking_frames=args.frames, hinf=not args.no_hinf, verbose=args.verbose,
                  log=print)
    elapsed = time.perf_counter() - t0
    rows = [(f"option {k}", v) for k, v in result.options.items()]
    rows += [(f"measured {k}", v) for k, v in result.measured.items()]
    rows += [(f"hinf {k}", v) for k, v in result.hinf.items()]
    print(format_table(["field", "value"], rows,
                       title=f"animik tune {skel.name} ({args.mode} gain, {elapsed:.1f} s)"))
    if args.dry_run:
        return 0
    path = save_tuning(skel, result, args.output)
    default = tuning_path(skel)
    note = "" if args.output is None or path.resolve() == default.resolve() else \
        " (not the default location: pass tuning=PATH to solve_ik to use it)"
    print(f"wrote {path}{note}")
    return 0
