"""``animik filter``: seed D's dynamics filter (method A, or B) over a whole clip.

Method A over the clip (:mod:`animik.dynamics.correct`): every frame's floor wrench is
evaluated as ``animik feasibility`` evaluates the written clip, invalid ones are replaced by
the nearest valid wrench and one least-squares correction of the root translation and an
upper-body lean reaches them, iterated against the independent check. The output is written
atomically and only when every frame passes; otherwise nothing is written (exit 5).
Method B (:mod:`animik.dynamics.method_b_track`) simulates the body on contact springs and
dampers tracking method A's planted clip (its feasible floor wrench fed forward); the same
check and the same contract apply to its output, and the report also gives its distance
from A's clip.

Frames carried by supports off the floor (``--supports``, default ``auto``: a seat, hand
holds, pedals where the body is held still with no foot near the floor; method A only) are
checked with the contact wrench cone, get their capture spikes smoothed
(:mod:`animik.dynamics.support_smooth`) and no floor correction; the supports used are written
next to the output (``OUT.supports.json``), where ``animik feasibility`` finds them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time

import numpy as np

from .. import _cli_args as _args
from ..dynamics.clip import check_clip
from ..dynamics.correct import correct_clip, plant_and_correct
from ..dynamics.filter import FilterDivergedError, FilterOptions
from ..dynamics.method_b_track import method_b_tracking
from ..dynamics.offfloor import held_off_floor, resolve_supports, supports_sidecar
from ..dynamics.support_smooth import smooth_supported
from ..io._atomic import atomic_write
from ..io.bvh import read_bvh
from ..io.bvh_compat import write_bvh_compatible
from ..kinematics import forward_kinematics
from ..retarget import retarget
from ..rigs import load_rig
from ._model import MODEL_HELP, with_model

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_OS, EXIT_NOT_MET = 0, 2, 3, 4, 5

_EPILOG = """\
exit codes:
  0  the filtered clip is feasible at every frame (written)
  2  bad usage
  3  bad input (malformed BVH, NaN, unknown rig, no contact geometry, bad option values)
  4  operating-system error (file not found, cannot write)
  5  goal not met: some frame of the corrected clip is still infeasible (no clip written;
     the frames are listed, and --json still writes the report); with --method B also
     when the simulated body falls (diverges) or method A's clip it tracks is infeasible

examples:
  animik filter walk.bvh -o walk_filtered.bvh
  animik filter walk.bvh -o out.bvh --rig body95 --json report.json
  animik filter louise.bvh -o out.bvh --rig body95 --plant
  animik filter ret/louise.bvh -o out.bvh --model body95 --plant   (after animik retarget --to body95)
  animik filter ride.bvh -o out.bvh --supports bike.json   (a seat, holds, pedals of your own)
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik filter``."""
    p = subparsers.add_parser(
        "filter", help="make a clip physically feasible (seed D dynamics filter, method A or B)",
        description="Seed D's dynamics filter (method A over the whole clip): every frame's floor "
                    "wrench checked as `animik feasibility` checks it (push, ZMP in the support "
                    "polygon, friction) and one sparse QP on the root translation and a trunk lean "
                    "makes the invalid ones valid, repeated until the re-check passes. Writes the "
                    "clip only if every frame passes.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("clip", metavar="IN.bvh")
    p.add_argument("-o", "--output", required=True, metavar="OUT.bvh")
    p.add_argument("--method", default="A", choices=("A", "B"),
                   help="A: check and correct, over the whole clip (animik.dynamics.correct); "
                        "B: operational-space inverse inertia with contact springs and "
                        "dampers, simulated on method A's planted clip "
                        "(animik.dynamics.method_b_track)")
    p.add_argument("--rig", default=None, help="retarget onto this rig first")
    p.add_argument("--model", default=None, metavar="RIG|file", help=MODEL_HELP)
    p.add_argument("--mu", type=_args.number(0.0, 10.0, "a friction coefficient", lo_open=True),
                   default=0.7, help="friction coefficient (default 0.7)")
    p.add_argument("--plant", action="store_true",
                   help="method A: first give infeasible frames without a detected contact a "
                        "planted support (the foot held on the floor by leg IK, a carried body "
                        "moved against its support; animik.dynamics.plant)")
    p.add_argument("--supports", default="auto", metavar="auto|floor|FILE.json",
                   help="contacts off the floor (method A): auto (default) infers a seat, hand "
                        "holds and pedals over the stretches held still with no foot near the "
                        "floor; floor: the floor only (such a clip is refused); FILE.json: your "
                        "supports (docs/dynamics.md 5f). Frames with a support are checked with "
                        "the contact wrench cone and get no floor correction")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write the report")
    p.set_defaults(func=run)
    return p


@contextlib.contextmanager
def _progress_bar():
    """A progress bar on stderr for method A (only on a terminal: tqdm stays silent when
    stderr is a pipe or a file), fed by the filter's ``progress(fraction, message)``."""
    from tqdm import tqdm

    with tqdm(total=1000, desc="filter", file=sys.stderr, disable=None, leave=False,
              dynamic_ncols=True, mininterval=0.2,
              bar_format="{desc} {percentage:3.0f}%|{bar}| {elapsed}{postfix}") as bar:

        def progress(fraction: float, message: str | None = None) -> None:
            n = int(1000 * min(max(fraction, 0.0), 1.0))
            if n > bar.n:
                bar.update(n - bar.n)
            if message:
                bar.set_postfix_str(message, refresh=False)

        yield progress


def _ranges(frames: list[int]) -> str:
    out, start = [], None
    for i, f in enumerate(frames):
        if start is None:
            start = f
        if i + 1 == len(frames) or frames[i + 1] != f + 1:
            out.append(f"{start}-{f}" if f != start else f"{start}")
            start = None
    return ", ".join(out[:12]) + (" ..." if len(out) > 12 else "")


def _not_met(args: argparse.Namespace, error: str, extra: dict | None = None) -> int:
    """Exit 5 with nothing written but the ``--json`` report saying why."""
    if args.json:
        try:
            atomic_write(args.json, json.dumps({"input": args.clip, "output": args.output,
                                                "written": False, "error": error,
                                                **(extra or {})}, indent=1))
        except OSError as err:
            print(f"animik filter: error: cannot write: {err}", file=sys.stderr)
            return EXIT_OS
    return EXIT_NOT_MET


def _tracking_report(motion, tracked) -> dict:
    """Method B's distance from the method A clip it tracked (the report's RMS joint change
    is from the input)."""
    skel = motion.skeleton
    a, b = tracked.reference.motion.q, tracked.result.motion.q
    root = int(np.flatnonzero(skel.parents < 0)[0])
    rot = skel.dof_type == 0
    rot[list(skel.joint_dofs(root))] = False
    d = np.angle(np.exp(1j * (b[:, rot] - a[:, rot])))
    pa = forward_kinematics(skel, a).joint_positions[:, root]
    pb = forward_kinematics(skel, b).joint_positions[:, root]
    dr = np.linalg.norm(pb - pa, axis=1)
    return {"reference": "method A (--plant)",
            "reference_infeasible_frames": int((~tracked.reference.check.feasible).sum()),
            "rms_joint_change_from_a_deg": round(float(np.degrees(np.sqrt(np.mean(d ** 2)))), 4),
            "max_joint_change_from_a_deg": round(float(np.degrees(np.abs(d).max())), 3),
            "root_from_a_cm": {"rms": round(float(np.sqrt(np.mean(dr ** 2))) * 100, 3),
                               "max": round(float(dr.max()) * 100, 3)},
            "max_point_deviation_mm": round(tracked.max_point_deviation * 1000, 2),
            "unpushable_wrench_max_weights": round(float(tracked.projection.max()), 4)}


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    opts = FilterOptions(mu=args.mu).checked()
    if args.rig and args.model:
        print("animik filter: error: --rig and --model exclude each other", file=sys.stderr)
        return EXIT_USAGE
    if args.method == "B" and args.supports not in ("auto", "floor"):
        # method B simulates on floor springs only: a supports file would be silently ignored
        print("animik filter: error: --supports FILE works with method A only (method B "
              "simulates on the floor's springs)", file=sys.stderr)
        return EXIT_USAGE
    motion = read_bvh(args.clip)
    model = None
    if args.rig:
        motion = retarget(motion, load_rig(args.rig))
    else:
        motion, model = with_model(motion, args.model, "filter")
    # method B simulates on floor springs only: it keeps the floor-only contract
    supports = resolve_supports(args.supports if args.method == "A" else "floor", motion,
                                mu=args.mu)
    held = held_off_floor(motion) if supports is None else []  # a seat, a bike, a rail
    if held:
        spans = ", ".join(f"{a / motion.fps:.2f}-{b / motion.fps:.2f} s (frames {a}-{b - 1})"
                          for a, b in held)
        msg = (f"the body is held still with no foot near the floor over {spans}: something "
               "that is not the floor carries it (a seat, a bike, a rail?); the check knows only "
               "floor contacts, so no correction can make those frames feasible")
        print(f"animik filter: goal not met: {msg}; nothing written", file=sys.stderr)
        return _not_met(args, msg, {"held_off_floor_frames": [[a, b - 1] for a, b in held]})
    # B: seed D method B (contact springs, inverse inertia), simulated (animik.dynamics.method_b)
    planted, plants, tracked = None, [], None
    src, smoothed = motion, None
    if supports is not None:  # capture spikes on supported frames: smoothed locally first
        smoothed = smooth_supported(motion, supports, opts.mu, opts.window)
        src = smoothed.motion
    try:
        if args.method == "A":
            with _progress_bar() as progress:
                if args.plant:
                    res, plants = plant_and_correct(src, opts, supports=supports,
                                                    progress=progress)
                    planted = plants[0]
                else:
                    res = correct_clip(src, opts, supports=supports, progress=progress)
            if smoothed is not None:  # the report compares with the input clip
                res.input_check = check_clip(motion, mu=opts.mu, window=opts.window,
                                             contacts=res.check.contacts, supports=supports)
        else:
            with _progress_bar() as progress:
                tracked = method_b_tracking(motion, opts, progress=progress)
            res = tracked.result
    except FilterDivergedError as e:  # method B's body fell: goal not met, nothing written
        print(f"animik filter: goal not met: {e}; nothing written", file=sys.stderr)
        return _not_met(args, str(e))
    r = res.report(motion)
    if supports is not None:
        on = res.check.check.support_active.any(axis=1)
        r["supports"] = supports.to_dict(motion.skeleton)
        r["support_frames"] = int(on.sum())
        r["support_frames_infeasible"] = int((on & ~res.check.feasible).sum())
        r["support_smoothing"] = {"rounds": smoothed.rounds,
                                  "frames_changed": int(smoothed.changed.sum())}
        print(f"  supports ({supports.source}): {', '.join(supports.names)} on {int(on.sum())} "
              f"frames (contact-wrench-cone check), {r['support_frames_infeasible']} infeasible; "
              f"smoothed {int(smoothed.changed.sum())} supported frames first (rejected per "
              f"round {smoothed.rounds})")
    if planted is not None:
        r["planted"] = {"passes": len(plants), "frames_without_contact": planted.frames,
                        "planted_frames_per_area": [int(sum(p.planted[:, a].sum() for p in plants))
                                                    for a in range(planted.planted.shape[1])],
                        "root_shift_max_cm": round(float(max(np.abs(p.root_shift).max()
                                                             for p in plants)) * 100, 3),
                        "transient_frames_held": int(planted.frozen.sum())}
        pr = r["planted"]
        og = planted.overground  # a treadmill or a raised stance brought to the floor
        if og is not None and (og.sections or og.raised):
            sec = [[round(a / motion.fps, 2), round(b / motion.fps, 2)] for a, b in og.sections]
            pr["overground"] = {
                "belt_sections_s": sec,
                "raised_s": [[round(a / motion.fps, 2), round(b / motion.fps, 2)]
                             for a, b in og.raised],
                "belt_speed_max_m_s": round(float(np.hypot(*og.belt.T).max()), 3),
                "lowered_max_cm": round(float(og.surface.max()) * 100, 2)}
            ov = pr["overground"]
            print(f"  overground: belt sections {sec} s (up to {ov['belt_speed_max_m_s']} m/s),"
                  f" raised stances {ov['raised_s']} s, lowered up to {ov['lowered_max_cm']} cm")
        print(f"  planted ({len(plants)} passes): {planted.frames} infeasible frames without "
              f"contact; frames held per area {pr['planted_frames_per_area']}; root moved up to "
              f"{pr['root_shift_max_cm']} cm; {pr['transient_frames_held']} start/end transient "
              f"frames held still")
    if tracked is not None:
        r["method_b"] = _tracking_report(motion, tracked)
        mb = r["method_b"]
        print(f"  method B tracked method A's planted clip: RMS joint change from A's clip "
              f"{mb['rms_joint_change_from_a_deg']} deg (max {mb['max_joint_change_from_a_deg']}), "
              f"root from A's {mb['root_from_a_cm']['rms']} cm RMS (max "
              f"{mb['root_from_a_cm']['max']}); contact points within "
              f"{mb['max_point_deviation_mm']} mm of A's")
    T = r["frames"]
    print(f"{args.clip}{' -> ' + args.rig if args.rig else ''}: {T} frames; infeasible frames "
          f"{r['infeasible_frames_input']} in the input, per round {r['rounds']}")
    print(f"  RMS joint change {r['rms_joint_change_deg']} deg (max {r['max_joint_change_deg']}), "
          f"root shift mean {r['root_shift_cm']['mean']} cm, max {r['root_shift_cm']['max']} cm")
    worst = max(r["effector_drift"].items(), key=lambda kv: kv[1]["max_cm"], default=None)
    if worst:
        print(f"  largest effector drift: {worst[0]} {worst[1]['max_cm']} cm")
    print("  foot skate (cm, input -> output): " + ", ".join(
        f"{a} {v['input']} -> {v['output']}" for a, v in r["foot_skate_cm"].items()))
    j = r["jitter"]
    print(f"  jitter (2nd difference of output - input, RMS / max per frame): root "
          f"{j['root_mm']['rms']} / {j['root_mm']['max']} mm, trunk {j['trunk_deg']['rms']} / "
          f"{j['trunk_deg']['max']} deg (the input itself: root {j['input_root_mm']['rms']} mm, "
          f"trunk {j['input_trunk_deg']['rms']} deg)")
    lim_in, lim_out = r["joint_limits"]["input"], r["joint_limits"]["output"]
    if lim_out["frames_outside"] > lim_in["frames_outside"]:
        print(f"animik filter: warning: the corrected clip leaves {motion.skeleton.name}'s joint "
              f"limits on {lim_out['frames_outside']} of {r['frames']} frames (the input on "
              f"{lim_in['frames_outside']}; at most {lim_out['max_excess_deg']} deg, "
              f"{lim_out['dof']}): the filter binds the limits of the DoFs it moves (the "
              "trunk's lean, the legs' IK, method B's joints); this one it did not "
              "(docs/dynamics.md section 8)", file=sys.stderr)
    print(f"  filter {r['filter_frames_per_second']:,.0f} frames/s; total "
          f"{time.perf_counter() - t0:.2f} s")
    ok = not r["infeasible_frames"]
    try:
        if ok:
            side = supports_sidecar(args.output)
            if supports is not None:  # the supports the written clip was checked with
                atomic_write(side, json.dumps(supports.to_dict(motion.skeleton), indent=1))
                print(f"  supports: {side} (animik feasibility --supports auto reads it)")
            elif side.exists():  # a stale file of an earlier run would mislead the check
                side.unlink()
            write_bvh_compatible(res.motion, args.output)
        if args.json:  # the report is written either way: it says why nothing was written
            atomic_write(args.json, json.dumps({"input": args.clip, "output": args.output,
                                                "written": ok, **r}, indent=1))
    except OSError as e:
        print(f"animik filter: error: cannot write: {e}", file=sys.stderr)
        return EXIT_OS
    if not ok:
        bad = r["infeasible_list"]
        print(f"animik filter: goal not met: {len(bad)} frames still infeasible ({_ranges(bad)}), "
              f"{r['infeasible_without_contact']} of them carried by nothing (no floor contact "
              f"detected, no support active: a ballistic body would be needed); nothing written",
              file=sys.stderr)
        return EXIT_NOT_MET
    return EXIT_OK
