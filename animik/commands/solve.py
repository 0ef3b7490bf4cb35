"""``animik solve``: solve IK for a rig from a JSON file of targets, write the pose as JSON.

Targets file::

    {
      "targets": {
        "l_hand": [0.3, 0.4, 1.2],                                   # position only, m
        "r_sole": {"position": [0.1, -0.1, 0.0],
                   "rotation": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]},   # or "quat_wxyz": [w, x, y, z]
      },
      "pinned": ["l_sole"],                # optional: sites held where they are in the start pose
      "weights": {"l_hand": 2.0}           # optional: per-site weights (> 0)
    }

Start pose file (``--q0``; default: the rig's rest pose): ``{"q": {dof_name: value}}`` (DoFs not
listed keep their rest value; the output of ``animik solve`` is a valid ``--q0``),
``{"q": [v0, v1, ...]}`` (all DoFs, rig order) or a bare list. Rad for rotations, m for
translations.

Output (``--out``, written atomically; ``-`` prints it on stdout)::

    {"rig": ..., "solver": ..., "converged": true, "iterations": 12, "reason": "converged",
     "error_m": {site: m}, "angle_error_rad": {site: rad}, "q": {dof_name: value}}

Exit codes: 0 converged; 3 bad input (malformed JSON, unknown rig / site / DoF / solver, bad
option value); 4 file-system error; **5 the solver did not converge** (the best pose found is
still written).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

import numpy as np

from .. import _cli_args as _args
from .._table import format_table
from ..errors import FileFormatError, ShapeError
from ..ik import SOLVERS, solve_ik
from ..io._atomic import atomic_write
from ..rigs import load_rig

EXIT_NOT_CONVERGED = 5

_EPILOG = """\
exit codes:
  0  converged (every target within tolerance)
  2  bad usage (unknown option, missing argument)
  3  bad input (malformed JSON, unknown rig, site, DoF or solver, bad option value)
  4  operating-system error (file not found, permission denied)
  5  not converged: the best pose found is still written

example:
  animik solve body95 --targets targets.json --solver dls --out pose.json
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik solve``."""
    p = subparsers.add_parser(
        "solve", help="solve IK for effector targets from a JSON file",
        description="Solve inverse kinematics for a rig (built-in name or rig file) and targets "
                    "from a JSON file; print a summary and write the pose as JSON. See "
                    "animik.commands.solve for the file formats.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rig", help="built-in rig name or rig file (.toml / .bvh)")
    p.add_argument("--targets", required=True, metavar="JSON",
                   help='targets file: {"targets": {site: [x, y, z] | {"position", "rotation" | '
                        '"quat_wxyz"}}, "pinned": [...], "weights": {...}}')
    p.add_argument("--solver", default="fik", choices=sorted(SOLVERS), metavar="SOLVER",
                   help="IK solver (default fik; baselines: dls, pinv, jt, jt_speculative, "
                        "approx_inverse)")
    p.add_argument("--q0", default=None, metavar="JSON",
                   help='start pose: {"q": {dof: value}} (default: the rest pose)')
    p.add_argument("--out", default=None, metavar="JSON",
                   help="write the result pose here (atomically); '-' prints it on stdout")
    p.add_argument("--max-iterations", type=_args.iterations, default=None, metavar="N",
                   help="iteration cap (default: the solver's)")
    p.add_argument("--tol", type=_args.millimetres, default=None, metavar="MM",
                   help="position tolerance in millimetres (default 1)")
    p.add_argument("--tol-deg", type=_args.degrees, default=None, metavar="DEG",
                   help="orientation tolerance in degrees (default 0.57, i.e. 0.01 rad)")
    p.set_defaults(func=run)
    return p


def _read_json(path: str, what: str) -> Any:
    with open(path, encoding="utf-8") as f:  # OSError -> exit 4
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise FileFormatError(f"{what} file {path!r}: invalid JSON at line {e.lineno} column "
                              f"{e.colno}: {e.msg}") from None


def parse_targets(doc: Any, path: str = "targets") -> tuple[dict, list[str], dict[str, float]]:
    """``(targets, pinned, weights)`` from a parsed targets document (see module docstring).

    Raises:
        FileFormatError: wrong structure (the message says where).
    """
    if not isinstance(doc, dict) or "targets" not in doc:
        raise FileFormatError(f"{path}: expected a JSON object with a \"targets\" object")
    unknown = sorted(set(doc) - {"targets", "pinned", "weights"})
    if unknown:
        raise FileFormatError(f"{path}: unknown key(s) {unknown}; expected \"targets\", "
                              "\"pinned\", \"weights\"")
    raw = doc["targets"]
    if not isinstance(raw, dict):
        raise FileFormatError(f"{path}: \"targets\" must be an object {{site: target}}")
    targets: dict[str, Any] = {}
    for site, tgt in raw.items():
        if isinstance(tgt, list):
            targets[site] = tgt
        elif isinstance(tgt, dict):
            bad = sorted(set(tgt) - {"position", "rotation", "quat_wxyz"})
            if bad or "position" not in tgt:
                raise FileFormatError(
                    f"{path}: target {site!r} must have \"position\" and optionally \"rotation\" "
                    f"(3x3) or \"quat_wxyz\" (4), got keys {sorted(tgt)}")
            if "rotation" in tgt and "quat_wxyz" in tgt:
                raise FileFormatError(f"{path}: target {site!r}: give \"rotation\" or "
                                      "\"quat_wxyz\", not both")
            rot = tgt.get("rotation", tgt.get("quat_wxyz"))
            targets[site] = tgt["position"] if rot is None else (tgt["position"], rot)
        else:
            raise FileFormatError(f"{path}: target {site!r} must be [x, y, z] or an object "
                                  f"with \"position\", got {type(tgt).__name__}")
    pinned = doc.get("pinned", [])
    if not isinstance(pinned, list) or not all(isinstance(s, str) for s in pinned):
        raise FileFormatError(f"{path}: \"pinned\" must be a list of site names")
    weights = doc.get("weights", {})
    if not isinstance(weights, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in weights.values()):
        raise FileFormatError(f"{path}: \"weights\" must be an object {{site: number}}")
    return targets, pinned, weights


def parse_pose(doc: Any, skel, path: str = "q0"):
    """A pose ``(n,)`` from a parsed pose document (see module docstring)."""
    q = doc.get("q") if isinstance(doc, dict) and "q" in doc else doc
    if isinstance(q, dict):
        out = np.array(skel.rest_q, dtype=float)
        for name, val in q.items():
            k = skel.dof_index(name)  # UnknownNameError lists the valid names
            if isinstance(val, bool) or not isinstance(val, (int, float)):
                raise FileFormatError(f"{path}: value of DoF {name!r} must be a number, got {val!r}")
            out[k] = float(val)
        return skel.check_q(out, path)
    if isinstance(q, list):
        try:
            arr = np.asarray(q, dtype=float)
        except (TypeError, ValueError):
            raise FileFormatError(f"{path}: \"q\" must be a list of numbers") from None
        if arr.shape != (skel.n_dof,):
            raise ShapeError(f"{path}: \"q\" must have {skel.n_dof} values (DoFs of "
                             f"{skel.name!r}), got shape {arr.shape}")
        return skel.check_q(arr, path)
    raise FileFormatError(f"{path}: expected {{\"q\": {{dof: value}}}}, {{\"q\": [...]}} or a list")


def result_document(rig: str, skel, result) -> dict:
    """The JSON-serialisable output of one solve."""
    return {
        "rig": rig,
        "solver": result.solver,
        "converged": bool(result.converged),
        "iterations": int(result.iterations),
        "reason": result.reason,
        "error_m": {k: float(v) for k, v in result.error.items()},
        "angle_error_rad": {k: float(v) for k, v in result.angle_error.items()},
        "q": skel.q_dict(result.q),
    }


def run(args: argparse.Namespace) -> int:
    """Run ``animik solve``; returns the exit code.

    The report line gives the solve time (a warm run of the same solve) and the start-up time
    apart: loading the rig and the targets and numba's kernels on the first call.
    """
    t_start = time.perf_counter()
    skel = load_rig(args.rig)
    targets, pinned, weights = parse_targets(_read_json(args.targets, "targets"), args.targets)
    q0 = parse_pose(_read_json(args.q0, "q0"), skel, args.q0) if args.q0 else skel.rest_q
    options: dict[str, Any] = {}
    if args.max_iterations is not None:
        options["max_iterations"] = args.max_iterations
    if args.tol is not None:
        options["tol_position"] = args.tol * 1e-3
    if args.tol_deg is not None:
        options["tol_rotation"] = math.radians(args.tol_deg)
    # The first call loads (or compiles) numba's kernels: that is start-up, not solve time
    # (issue 13 item 9). The same solve is run again, warm, to time the solve itself; it is
    # deterministic and gives the same result.
    result = solve_ik(skel, q0, targets, solver=args.solver, weights=weights, pinned=pinned,
                      **options)
    t1 = time.perf_counter()
    solve_ik(skel, q0, targets, solver=args.solver, weights=weights, pinned=pinned, **options)
    t2 = time.perf_counter()
    solve_ms = (t2 - t1) * 1e3
    # Everything before the first solve's end, less one solve. When the kernels were already
    # loaded in this process the two solves take the same time up to noise, and the warm one
    # can be the slower: start-up is then zero, not a negative number.
    startup_ms = max(0.0, (t1 - t_start) * 1e3 - solve_ms)
    doc = result_document(args.rig, skel, result)
    text = json.dumps(doc, indent=2) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
        report = sys.stderr
    else:
        if args.out is not None:
            atomic_write(args.out, text)
        report = sys.stdout
    rows = []
    for site, err in result.error.items():
        kind = "pinned" if site in pinned else "target"
        ang = result.angle_error.get(site)
        rows.append((site, kind, err * 1e3, "-" if ang is None else math.degrees(ang)))
    status = "converged" if result.converged else f"NOT converged ({result.reason})"
    print(format_table(
        ["site", "kind", "error mm", "angle error deg"], rows,
        title=f"animik solve: rig {args.rig}, solver {result.solver}: {status} in "
              f"{result.iterations} iterations; solve {solve_ms:.2f} ms, start-up "
              f"{startup_ms:.0f} ms (rig, kernels)"), file=report)
    if args.out not in (None, "-"):
        print(f"wrote {args.out}", file=report)
    return 0 if result.converged else EXIT_NOT_CONVERGED
