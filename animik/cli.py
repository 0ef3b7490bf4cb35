"""The ``animik`` command.

Exit codes: 0 success; 1 unexpected internal error (a bug: please report it); 2 bad usage
(unknown option, missing argument); 3 bad input data (malformed or unsupported file, unknown
rig or name); 4 operating-system error (file not found, permission denied, disk full); 5 the
computation finished without meeting its goal (e.g. IK did not converge).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import platform
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import _cli_args as _args
from ._table import format_table
from ._version import __version__
from .errors import AnimikError
from .io.bvh import resolve_unit
from .io.bvh_compat import write_bvh_compatible
from .io.gltf import write_glb
from .io.mjcf import write_mjcf
from .io.rigfile import write_rig
from .io.urdf import write_urdf
from .kinematics import forward_kinematics, joint_positions, standing_height
from .motion import Motion
from .rigs import list_rigs, load_rig, resolve_rig

EXIT_OK, EXIT_BUG, EXIT_USAGE, EXIT_DATA, EXIT_OS, EXIT_NOT_MET = 0, 1, 2, 3, 4, 5

# Plug-in command modules. Each defines ``add_parser(subparsers)`` that registers its parser and
# sets ``func=run`` with ``parser.set_defaults(func=...)``; ``run(args) -> int`` imports what it
# needs lazily (``animik --help`` must stay fast and GL-free).
_COMMAND_MODULES: list[str] = [
    "animik.commands.solve", "animik.commands.tune", "animik.commands.export",
    "animik.commands.retarget", "animik.commands.feasibility", "animik.commands.filter",
    "animik.commands.balance",
    "animik.commands.warmup",
]
_BENCH_MODULES: list[str] = ["animik.bench.ik", "animik.app.bench", "animik.app.bench_tasks",
                               "animik.bench.retarget", "animik.bench.dynamics",
                               "animik.bench.balance", "animik.bench.fidelity",
                               "animik.bench.posing"]

_EPILOG = """\
exit codes:
  0  success
  1  internal error (a bug: please report it with the command you ran)
  2  bad usage (unknown option, missing argument, option value out of range)
  3  bad input data (malformed or unsupported file, unknown rig, joint or site name)
  4  operating-system error (file not found, permission denied, disk full)
  5  the computation finished without meeting its goal (e.g. `animik solve` did not
     converge: the best-effort pose is still written)

examples:
  animik                               open the app on the default scene (body95)
  animik fig2                          open the app on a built-in rig
  animik rigs                          list the built-in rigs
  animik info walk.bvh                 summarise a BVH file
  animik convert walk.bvh walk.urdf    export the BVH skeleton as URDF
  animik convert body95 body95.xml     export a built-in rig as MuJoCo MJCF
  animik convert walk.bvh walk.glb     BVH clip -> glTF binary (and back)
  animik bench kinematics              time FK + Jacobians (add --no-peers to skip peers)
"""


def _plugin_name(module: str) -> str:
    """The command a plug-in module registers: its last name (``animik.commands.retarget``)."""
    return module.rsplit(".", 1)[1]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``animik`` argument parser.

    Args:
        only: build it for this plug-in command only (the other plug-in and bench modules
            are not imported: ``animik retarget ...`` need not import the dynamics and the
            benchmarks, ~0.3 s of its start-up); ``None``: every command.
    """
    p = argparse.ArgumentParser(
        prog="animik",
        description="Pose and animate articulated characters with feedback inverse kinematics.\n\n"
                    "  animik [SCENE|RIG|FILE.bvh] [app options]   open the app (see `animik app -h`)\n"
                    "  animik COMMAND [options]                    run a command",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )

    p.add_argument("--version", action="version", version=f"animik {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    from .app.__main__ import add_arguments as add_app_arguments

    sp = sub.add_parser(
        "app", help="open the posing app (also: `animik [SCENE|RIG|FILE.bvh]`)",
        description="Open the interactive posing app on a scene .toml, a rig .toml, a .bvh file, "
                    "a rigged .glb / .gltf character or a built-in rig name (default: "
                    "scenes/default.toml). `animik` with no "
                    "command, or with a file or rig name first, does the same.")
    add_app_arguments(sp)

    sp = sub.add_parser("rigs", help="list the built-in rigs with joint, DoF and site counts",
                        description="List the built-in rigs (load them by name anywhere a rig "
                                    "is expected).")
    sp.add_argument("--verbose", "-v", action="store_true", help="also list DoF and site names")

    sp = sub.add_parser("info", help="summarise a BVH file, rig file or built-in rig",
                        description="Print a summary of a BVH file (joints, channels, frames, "
                                    "frame rate, units, size) or of a rig.")
    sp.add_argument("file", help="a .bvh or rig .toml file, or a built-in rig name")

    sp = sub.add_parser(
        "convert", help="convert between formats by file extension",
        description="Convert by extension. Inputs: .bvh or .glb (a motion), .toml rig file or "
                    "built-in rig name. Outputs: .bvh, .glb (glTF 2.0 binary: skinned skeleton + "
                    "animation), .urdf, .xml / .mjcf (MuJoCo), .toml (rig file). A rig written to "
                    ".bvh or .glb becomes a one-frame motion in its rest pose. Files are "
                    "written atomically: a failed conversion leaves no partial output.")
    sp.add_argument("input")
    sp.add_argument("output")
    sp.add_argument("--unit", type=_args.bvh_unit, default=None,
                    help="BVH output unit: m, cm, mm, inch, cmu or metres per unit (default: "
                         "the input file's unit, else cm)")
    sp.add_argument("--compact", action="store_true",
                    help="BVH output: one channel per DoF instead of the default 3 rotation "
                         "channels per rotating joint (root 6) that Blender's importer needs")

    sp = sub.add_parser("bench", help="run a benchmark and print its table",
                        description="Benchmarks print tables of timings; they never fail on "
                                    "speed.")
    bsub = sp.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for mod in _BENCH_MODULES if only is None else ():
        importlib.import_module(mod).add_parser(bsub)
    for mod in _COMMAND_MODULES:
        if only is None or _plugin_name(mod) == only:
            importlib.import_module(mod).add_parser(sub)
    bk = bsub.add_parser("kinematics", help="FK + site Jacobians, and batched FK",
                         description="One-pose FK + all site Jacobians (us) and batched FK "
                                     "(poses/s); with pinocchio and MuJoCo, if installed, on our "
                                     "exported URDF/MJCF in the same process.")
    bk.add_argument("--rig", default="body95")
    bk.add_argument("--batch", type=_args.batch, default=10_000, help="poses in the batched FK")
    bk.add_argument("--no-peers", action="store_true", help="skip pinocchio and MuJoCo")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``animik`` command line ``argv`` (default ``sys.argv[1:]``); returns the exit code.

    Called as the process's entry point (``argv=None``: the ``animik`` script, ``python -m
    animik.cli``), a plug-in command (``retarget``, ``filter``, ...) ends the process with
    :func:`exit_now` once it has returned: everything is written, and the interpreter's
    teardown of every module would only add ~0.2 s (numba's and LLVM's objects).
    """
    entry = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    plugin = argv[0] if argv and argv[0] in {_plugin_name(m) for m in _COMMAND_MODULES} else None
    code = _main(argv, plugin)
    if entry and plugin is not None:
        exit_now(code)
    return code


def exit_now(code: int) -> None:
    """End this process with ``code`` without the interpreter's teardown.

    What a normal exit does that matters still runs — the ``atexit`` handlers
    (multiprocessing's, logging's, ...) and flushing stdout / stderr — but not the clean-up of
    every module and object, which after ``animik retarget`` costs ~0.2 s of CPU (numba's
    dispatchers and LLVM's code objects), a sixth of the whole command onto body95. Returns
    without exiting (the caller exits normally) while a non-daemon thread is still running.
    """
    main_thread = threading.main_thread()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            pass
    os._exit(code)


def _main(argv: list[str], plugin: str | None) -> int:
    parser = build_parser(only=plugin)
    if plugin is not None and plugin not in _subcommand_names(parser):
        parser = build_parser()
    # `animik`, `animik body95`, `animik walk.bvh --size 1600x900`: open the app.
    if not argv or (argv[0] not in _subcommand_names(parser)
                    and argv[0] not in ("-h", "--help", "--version")):
        from .app.__main__ import main as app_main

        missing = _missing_target(argv)
        if missing is not None:
            print(f"animik: error: cannot open {missing}: no such file", file=sys.stderr)
            return EXIT_OS
        return app_main(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    try:
        func = getattr(args, "func", None) or _COMMANDS[args.command]
        return func(args)
    except OSError as e:  # first: a missing rig file is both an OSError and an AnimikError
        print(f"animik {args.command}: error: {e}", file=sys.stderr)
        return EXIT_OS
    except AnimikError as e:
        print(f"animik {args.command}: error: {e}", file=sys.stderr)
        return EXIT_DATA
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _subcommand_names(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def _missing_target(argv: Sequence[str]) -> str | None:
    """The app's target when it names a file (a path or a readable suffix) that does not exist:
    a missing file is an operating-system error (exit 4) before any window opens."""
    target = next((a for a in argv if not a.startswith("-")), None)
    if target is None or target in list_rigs():
        return None
    i = argv.index(target)
    if i > 0 and argv[i - 1] in ("--save-path", "--size", "--fps", "--screenshot",
                                 "--screenshot-frames"):
        return None  # an option's value, not the target
    p = Path(target)
    looks_like_file = p.suffix.lower() in (".toml", ".bvh", ".glb", ".gltf") or len(p.parts) > 1
    return target if looks_like_file and not p.exists() else None


def _cmd_app(args) -> int:
    from .app.__main__ import run_args

    if args.target is not None and _missing_target([args.target]) is not None:
        print(f"animik app: error: cannot open {args.target}: no such file", file=sys.stderr)
        return EXIT_OS
    return run_args(args)


def _cmd_rigs(args) -> int:
    rows = []
    for name in list_rigs():
        s = load_rig(name)
        fk = forward_kinematics(s, s.rest_q)
        z = np.concatenate([fk.joint_positions[:, 2], fk.site_positions[:, 2]])
        height = float(s.meta.get("height", np.ptp(z)))
        desc = str(s.meta.get("description", "")).split(":")[0]
        rows.append((name, s.n_joints, s.n_dof, s.n_sites, round(s.total_mass, 1),
                     round(height, 3), desc[:60]))
    print(format_table(["rig", "joints", "DoF", "sites", "mass kg", "height m", "description"],
                       rows))
    if args.verbose:
        for name in list_rigs():
            s = load_rig(name)
            print(f"\n{name}: DoF {', '.join(s.dof_names)}\n  sites {', '.join(s.site_names)}")
    return EXIT_OK


def _load_any(spec: str):
    """A Motion for a file that carries one (.bvh, .glb), else a Skeleton (rig name or file)."""
    src = resolve_rig(spec)
    return src.motion if src.motion is not None else src.skeleton


def _travel(skel, pos) -> tuple[str, np.ndarray]:
    """``(joint name, (T, 3) positions)`` of the joint whose travel is the body's: the root,
    or, when the root stays put (a static ``joint_Root`` under moving hips), the root's child
    that moves most (the hips / pelvis)."""
    root = pos[:, 0]
    kids = np.flatnonzero(skel.parents == 0)
    if np.ptp(root, axis=0).max() > 1e-6 or not len(kids):
        return skel.joint_names[0], root
    j = int(kids[np.argmax([np.ptp(pos[:, k], axis=0).max() for k in kids])])
    return skel.joint_names[j], pos[:, j]


def _cmd_info(args) -> int:
    obj = _load_any(args.file)
    motion = obj if isinstance(obj, Motion) else None
    skel = motion.skeleton if motion else obj
    kinds = {}
    for k in range(skel.n_dof):
        j = skel.joint_names[skel.dof_joint[k]]
        kinds.setdefault(j, []).append(skel.dof_names[k].rsplit("_", 1)[-1])
    layouts: dict[str, int] = {}
    for chans in kinds.values():
        key = " ".join(chans)
        layouts[key] = layouts.get(key, 0) + 1
    given = skel.meta.get("height") if motion is None else None
    if isinstance(given, (int, float)) and given > 0:
        height, how = float(given), "given by the rig"
    else:
        height = standing_height(skel, motion.q if motion is not None and motion.n_frames else None)
        how = f"{'most upright frame' if motion is not None else 'rest pose'}: top to floor"
    rows = [
        ("skeleton", skel.name),
        ("joints", skel.n_joints),
        ("root", skel.joint_names[0]),
        ("DoF (channels)", skel.n_dof),
        ("sites", f"{skel.n_sites} ({', '.join(skel.site_names[:6])}"
                  f"{', ...' if skel.n_sites > 6 else ''})"),
        ("DoF layouts", "; ".join(f"{n}x[{k}]" for k, n in layouts.items()) or "-"),
        ("standing height", f"{height:.3f} m ({how})"),
        ("mass", f"{skel.total_mass:.2f} kg ({skel.meta.get('mass_source', 'given')})"),
    ]
    if motion is not None:
        unit = motion.meta.get("bvh_unit", "?")
        scale = motion.meta.get("bvh_unit_scale", float("nan"))
        travel_joint, root = _travel(skel, joint_positions(skel, motion.q))
        rows += [
            ("frames", motion.n_frames),
            ("frame rate", f"{motion.fps:.6g} fps (frame time {motion.frame_time:.7g} s)"),
            ("duration", f"{motion.duration:.3f} s"),
            ("file unit", f"{unit} ({scale:.6g} m per unit)"),
            (f"root travel ({travel_joint})",
             "x [{:.2f}, {:.2f}] y [{:.2f}, {:.2f}] z [{:.2f}, {:.2f}] m".format(
                 *[v for a in range(3) for v in (root[:, a].min(), root[:, a].max())])),
        ]
    print(format_table(["field", "value"], rows, title=str(Path(args.file))))
    return EXIT_OK


def _cmd_convert(args) -> int:
    out = args.output
    ext = Path(out).suffix.lower()
    if ext not in (".bvh", ".glb", ".urdf", ".xml", ".mjcf", ".toml"):
        print(f"animik convert: error: unknown output extension {ext!r} "
              "(expected .bvh, .glb, .urdf, .xml, .mjcf or .toml)", file=sys.stderr)
        return EXIT_USAGE
    obj = _load_any(args.input)
    motion = obj if isinstance(obj, Motion) else None
    skel = motion.skeleton if motion else obj
    if ext in (".bvh", ".glb") and motion is None:
        motion = Motion(skel, skel.rest_q[None, :], fps=30.0)
    if ext == ".bvh":
        # joints BVH cannot hold as they are (body95's thumbs: a rest rotation) are rewritten
        write_bvh_compatible(motion, out, unit_scale=_unit_scale(args.unit),
                             channels="compact" if args.compact else "full")
    elif ext == ".glb":
        write_glb(motion, out)
    elif ext == ".urdf":
        write_urdf(skel, out)
    elif ext in (".xml", ".mjcf"):
        write_mjcf(skel, out)
    else:
        write_rig(skel, out)
    print(f"wrote {out}")
    return EXIT_OK


def _unit_scale(unit: str | None) -> float | None:
    """``--unit``: a unit name of :data:`animik.io.bvh.UNITS` (or alias) or metres per unit."""
    if unit is None:
        return None

    try:
        value: str | float = float(unit)
    except ValueError:
        value = unit
    return resolve_unit(value)[1]


def _cmd_bench(args) -> int:
    if args.bench == "kinematics":
        from .bench.kinematics import run

        rows = run(rig=args.rig, batch=args.batch, peers=not args.no_peers)
        # animik time / peer time for the same task (below 1: animik is faster).
        ours_us = next(r[2] for r in rows if r[0].startswith("animik Kinematics"))
        ours_rate = next(r[2] for r in rows if r[0].startswith("animik") and r[3] == "poses/s")
        table = []
        for impl, task, value, unit, note in rows:
            ratio = ""
            if not impl.startswith("animik") and value == value:
                ratio = f"{ours_us / value:.2f}" if unit == "us" else f"{value / ours_rate:.2f}"
            table.append((impl, task, value, unit, ratio, note))

        print(format_table(
            ["implementation", "task", "value", "unit", "animik time / peer", "note"], table,
            title=f"animik bench kinematics: rig {args.rig} ({platform.processor() or platform.machine()}, "
                  f"Python {platform.python_version()})"))
        return EXIT_OK
    raise AssertionError(args.bench)


_COMMANDS = {"app": _cmd_app, "rigs": _cmd_rigs, "info": _cmd_info, "convert": _cmd_convert,
             "bench": _cmd_bench}


if __name__ == "__main__":
    sys.exit(main())
