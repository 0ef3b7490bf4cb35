"""``animik balance experiment 1|2|3|4``: seed E's corner experiments on the two-mass plant.

Exit codes: 0 success; 2 bad usage; 3 bad input (unknown experiment, rig without balance data,
bad solver); 4 the output cannot be written.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from .. import _cli_args as _args
from .._table import format_table
from ..balance.experiments import EXPERIMENTS, PLANTS, run_experiment
from ..balance.full_body import METHODS
from ..balance.params import BalanceError, RobotModel, Weights, check_horizon
from ..io._atomic import atomic_write
from ..rigs import load_rig

_EPILOG = """\
experiments (seed E; horizon 2 s, T = 100 ms, N = 20; a constant-velocity reference that turns
by 90 degrees at t = 5 s):
  1  tracking first: alpha1 = alpha2 = 100, alpha3 = 10, alpha4 = 1e-4 (the base anticipates)
  2  robustness first: alpha3 = 500000 (CoP near the base, worse tracking at the corner)
  3  one-mass model at high speed, against the two-mass model in the same setting
  4  open loop, against the closed loop

exit codes:
  0  success
  2  bad usage
  3  bad input (unknown experiment, rig without balance data, unknown solver)
  4  operating-system error (the output cannot be written)

examples:
  animik balance experiment 1 --json e1.json --plot e1.png
  animik balance experiment 3 --solver quadprog
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik balance``."""
    p = subparsers.add_parser(
        "balance", help="seed E's balance MPC for the wheeled humanoid: experiments",
        description="Seed E's two-mass linear MPC (CoP in an octagon about the base) on the "
                    "wheeled20 robot. `experiment N` runs one of the seed's four experiments on "
                    "the two-mass plant with disturbances and prints its figures.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="balance_command", metavar="ACTION", required=True)
    e = sub.add_parser("experiment", help="run experiment 1, 2, 3 or 4",
                       description="Run one of seed E's four experiments; print its figures.",
                       epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("number", type=int, choices=(1, 2, 3, 4), help="1, 2, 3 or 4")
    e.add_argument("--json", default=None, metavar="OUT", help="write the figures as JSON")
    e.add_argument("--plot", default=None, metavar="OUT.png",
                   help="write a plot: paths, CoP-to-base distance and zeta over time")
    e.add_argument("--rig", default="wheeled20", help="a rig with balance data (default wheeled20)")
    e.add_argument("--solver", default=None,
                   help="QP solver: daqp, quadprog, proxqp, osqp (default: the first installed)")
    for i, what in enumerate(("base velocity tracking", "base position tracking", "robustness",
                              "jerk", "numerical stability"), start=1):
        e.add_argument(f"--alpha{i}", type=_args.number(0.0, 1e12, "a weight (>= 0)"), default=None,
                       help=f"override the experiment's weight of O{i} ({what})")
    e.add_argument("--period", type=_args.number(0.0, 10.0, "a period in seconds", lo_open=True),
                   default=None, help="T in s (default 0.1)")
    e.add_argument("--steps", type=_args.integer(1, 1000, "a horizon length"), default=None,
                   help="N, horizon samples (default 20)")
    e.add_argument("--speed", type=_args.number(0.0, 10.0, "a speed in m/s"), default=None,
                   help="reference speed, m/s")
    e.add_argument("--plant", choices=PLANTS, default="two-mass",
                   help="what plays the robot: the two-mass model (default) or the full rig "
                        "posed from it, its CoP from full-body inverse dynamics")
    e.add_argument("--pose", choices=METHODS, default="leg",
                   help="full-body plant: the upper-body CoM put over c by the leg (Newton on "
                        "knee pitch and hip roll, default) or by the IK centre-of-mass task "
                        "(every DoF but the base's)")
    e.set_defaults(func=run)
    return p


_SHOWN = ["tracking_rmse_m", "corner_tracking_rmse_m", "max_cop_base_distance_m", "max_zeta",
          "min_support_margin_m", "cop_outside_samples", "cop_undefined_samples", "anticipation_s",
          "final_position_error_m", "base_jerk_rms_m_s3", "cycle_ms_median", "cycle_ms_p99",
          "infeasible_cycles", "cop_model_gap_max_m", "cop_model_gap_rms_m",
          "com_error_max_m", "com_unreached_samples"]


def run(args) -> int:
    """Run ``animik balance experiment``; returns the exit code."""
    if args.number not in EXPERIMENTS:
        raise BalanceError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {args.number}")
    skel = load_rig(args.rig)
    model = RobotModel.from_rig(skel)
    exp = _configure(EXPERIMENTS[args.number], args)
    runs = run_experiment(args.number, model, solver=args.solver, experiment=exp,
                          plant=args.plant, skeleton=skel, pose=args.pose)
    pose = f", pose {args.pose}" if args.plant == "full-body" else ""
    cols = [f"{r.metrics['model']}, {r.metrics['loop']} loop" for r in runs]
    rows = [(k, *[_fmt(r.metrics[k]) for r in runs]) for k in _SHOWN]
    print(format_table(["figure", *cols], rows,
                       title=f"animik balance experiment {args.number}: {exp.title} "
                             f"(speed {exp.speed} m/s, solver {runs[0].metrics['solver']}, "
                             f"{args.plant} plant{pose})"))
    if args.json:
        payload = dict(runs[0].metrics)
        if len(runs) > 1:
            payload["comparison"] = runs[1].metrics
        atomic_write(args.json, json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.plot:
        from ..balance.plot import plot_runs  # matplotlib: only when a plot is asked for

        plot_runs(runs, args.plot, f"seed E experiment {args.number}: {exp.title}")
        print(f"wrote {args.plot}")
    return 0


def _configure(exp, args):
    """The experiment with the command line's overrides (validated by Weights / Horizon)."""
    names = ("velocity", "position", "robustness", "jerk", "stability")
    changes = {n: getattr(args, f"alpha{i}") for i, n in enumerate(names, start=1)
               if getattr(args, f"alpha{i}") is not None}
    weights = exp.weights
    if changes:
        w = {n: getattr(weights, n) for n in names} | changes
        weights = Weights(**w, zeta_f=weights.zeta_f)
    period = exp.period if args.period is None else args.period
    steps = exp.steps if args.steps is None else args.steps
    check_horizon(period, steps)
    speed = exp.speed if args.speed is None else args.speed
    if not speed > 0:
        raise BalanceError(f"--speed must be > 0 m/s, got {speed}")
    return replace(exp, weights=weights, period=float(period), steps=int(steps), speed=float(speed))


def _fmt(v):
    return round(v, 4) if isinstance(v, float) else v
