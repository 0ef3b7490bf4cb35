"""``animik bench balance``: one cycle of seed E's MPC (N = 20) with each QP solver.

The inputs are the MPC's inputs recorded along closed-loop runs of the corner experiment
(experiment 1's setting, and experiment 3's high-speed two-mass run where constraints are
active), replayed through each solver cold and warm started. A cycle is what the controller
does every period: the linear term and the bounds from the measured state, then the solve.
Agreement: the largest distance between each solver's planned base and body paths and the
first solver's, over every cycle.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import replace

import numpy as np

from .._table import format_table
from ..balance import BalanceMPC, Horizon, RobotModel
from ..balance.experiments import EXPERIMENTS, run
from ..balance.qp import available_solvers
from ..errors import AnimikError
from ..rigs import load_rig


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench balance``."""
    p = subparsers.add_parser(
        "balance", help="one MPC cycle of seed E's balance controller, per QP solver",
        description="Time one cycle of the balance MPC (N = 20, 80 jerks, 280 two-sided rows) "
                    "with every installed QP solver, cold and warm started, on inputs recorded "
                    "along closed-loop corner runs; check the solvers agree.")
    p.add_argument("--repeats", type=int, default=3, help="replays of the recorded cycles (default 3)")
    p.add_argument("--steps", type=int, default=20, help="horizon N (default 20)")
    p.set_defaults(func=run_cli)
    return p


def record_inputs(model, steps: int = 20) -> list[tuple]:
    """MPC inputs along experiment 1 and experiment 3's two-mass run (closed loop)."""
    inputs: list[tuple] = []
    run(replace(EXPERIMENTS[1], steps=steps), model, record=inputs)
    run(replace(EXPERIMENTS[3], steps=steps), model, one_mass=False, record=inputs)
    return inputs


def bench(repeats: int = 3, steps: int = 20) -> tuple[list[tuple], int]:
    """Rows ``(solver, warm, median_ms, p99_ms, max_ms, agreement_mm, failed, cycles)``."""
    model = RobotModel.from_rig(load_rig("wheeled20"))
    hi_acc = model.replace(max_acceleration=3.0)  # experiment 3's setting
    inputs = record_inputs(model, steps)
    n1 = len(inputs) // 2
    hz = Horizon.build(0.1, steps)

    def paths(res, body, base):
        return np.stack([hz.predict(base[a], res.base_jerk[:, a])[:, 0] for a in (0, 1)]
                        + [hz.predict(body[a], res.body_jerk[:, a])[:, 0] for a in (0, 1)])

    rows, reference = [], None
    for solver in available_solvers():
        for warm in (False, True):
            times, plans, failed = [], [], 0
            for rep in range(repeats):
                mpcs = [BalanceMPC(model, steps=steps, solver=solver, warm_start=warm),
                        BalanceMPC(hi_acc, steps=steps, solver=solver, warm_start=warm)]
                for i, (body, base, vref, pref) in enumerate(inputs):
                    mpc = mpcs[0 if i < n1 else 1]
                    if i == n1:
                        mpc.reset()
                    t0 = time.perf_counter()
                    res = mpc.solve(body, base, vref, pref)
                    times.append(time.perf_counter() - t0)
                    if rep == 0:
                        failed += not res.feasible
                        plans.append(paths(res, body, base))
            plans = np.array(plans)
            if reference is None:
                reference = plans
            agree_mm = float(np.abs(plans - reference).max() * 1e3)
            ms = np.array(times) * 1e3
            rows.append((solver, "warm" if warm else "cold", float(np.median(ms)),
                         float(np.percentile(ms, 99)), float(ms.max()), agree_mm, failed,
                         len(inputs)))
    return rows, len(inputs)


def run_cli(args) -> int:
    if args.repeats < 1:
        raise AnimikError(f"--repeats must be at least 1, got {args.repeats}")
    if args.steps < 1:
        raise AnimikError(f"--steps (N) must be at least 1, got {args.steps}")
    rows, n = bench(args.repeats, args.steps)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    table = [(s, w, round(med, 3), round(p99, 3), round(mx, 3), f"{agree:.2g}", f, c)
             for s, w, med, p99, mx, agree, f, c in rows]
    print(format_table(
        ["solver", "start", "median ms", "p99 ms", "max ms", "max path diff vs first (mm)",
         "infeasible", "cycles"], table,
        title=f"animik bench balance: one MPC cycle, N = {args.steps} ({4 * args.steps} jerks), "
              f"{n} recorded cycles x {args.repeats} "
              f"({platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {load:.1f}, "
              f"Python {platform.python_version()})"))
    return 0
