"""``animik retarget``: retarget BVH files onto a rig (or a BVH skeleton), in batch.

Writes ``DIR/<stem>.bvh`` per input (atomically; centimetres for built-in rigs, the target
file's unit for a BVH target) — or with ``--format glb`` ``DIR/<stem>.glb`` (a rigged glTF
character target keeps its mesh, skin, materials and textures, with the retargeted animation),
``DIR/<stem>.retarget.json`` (the clip's quality report, settings
hash and input hash: finished outputs are skipped on a re-run unless ``--force``) and
``DIR/report.json`` (the whole batch), and prints the quality table. See docs/retarget.md.

Exit codes: 0 every input retargeted (or already done) with finite poses within the joint
limits; 3 bad arguments (unknown rig, unreadable mapping file) or every input failed; 4 file
system error (cannot create DIR); **5 some inputs failed** (the others are written) — or, with
``--strict``, some clip missed a quality goal (hand/foot error < 1 cm, skate < 1 cm per
contact, penetration < 0.5 cm).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

from .. import _cli_args as _args
from .._table import format_table
from ..errors import AnimikError
from ..retarget.batch import TargetSpec, run_batch
from ..retarget.output import FORMATS
from ..retarget.report import report_rows

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_OS, EXIT_NOT_MET = 0, 2, 3, 4, 5

_EPILOG = """\
exit codes:
  0  every input retargeted (or already done), finite, within the target's joint limits
  2  bad usage (unknown option, --jobs < 1)
  3  bad input: unknown rig, malformed mapping file, or every input failed
  4  operating-system error (cannot create the output folder)
  5  some inputs failed (reported in report.json; the others are written), or with
     --strict some clip missed a quality goal

examples:
  animik retarget walk.bvh run.bvh --to body95 --out out/
  animik retarget ../shared/data/bvh --to fig2 --out out/ --jobs 2
  animik retarget clips/ --to target.bvh --out out/ --mapping map.toml
  animik retarget clips/ --to unitree_g1/g1.xml --out out/ --format npz
  animik retarget clips/ --to body95 --out out/ --scheduler tcp://10.0.0.5:8786 --transfer bytes
  animik retarget walk.bvh --to character.glb --out out/ --format glb
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik retarget``."""
    p = subparsers.add_parser(
        "retarget", help="retarget BVH files onto a rig or a BVH skeleton (batch)",
        description="Retarget BVH motions onto a target skeleton: automatic joint mapping "
                    "(overridable with --mapping), rest-pose alignment and scaling, feedback IK "
                    "with the source's joint angles as null-space reference, foot contacts held. "
                    "One BVH and one report per input, plus DIR/report.json; finished outputs "
                    "are skipped unless --force.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="SRC", help="BVH files or folders of them")
    p.add_argument("--to", required=True, metavar="RIG",
                   help="target: built-in rig name (body95, fig2, biped12, ...), rig .toml, "
                        "a .bvh file (its skeleton, rest = its OFFSET pose), a rigged .glb "
                        "character (the skeleton of its skin, rest = its bind pose) or a robot "
                        ".urdf / MJCF .xml")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    p.add_argument("--mapping", default=None, metavar="FILE",
                   help="mapping file (.toml or .json): {source joint: target joint}, effectors")
    p.add_argument("--jobs", type=_args.processes, default=1, metavar="N",
                   help="local worker processes (default 1)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on a Dask distributed cluster, e.g. tcp://host:8786")
    p.add_argument("--transfer", choices=("path", "bytes"), default="path",
                   help="with --scheduler: workers read/write files by path (shared "
                        "filesystem, default) or exchange bytes with this client")
    p.add_argument("--format", choices=FORMATS, default="bvh", dest="out_format",
                   help="output per clip: bvh (default); glb (a .glb / .gltf character target "
                        "keeps its mesh, skin and materials); or npz / csv holding qpos in the "
                        "target model's own joint order (free base: position + quaternion wxyz), "
                        "fps and joint names (see docs/robots.md)")
    p.add_argument("--force", action="store_true", help="redo finished outputs")
    p.add_argument("--strict", action="store_true",
                   help="exit 5 when a clip misses a quality goal")
    p.add_argument("--iterations", type=_args.iterations, default=None, metavar="N",
                   help="FIK iterations per frame (default 10)")
    p.add_argument("--no-contacts", action="store_true", help="do not hold the feet")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no table")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    options = {}
    if args.iterations is not None:
        options["iterations"] = args.iterations
    if args.no_contacts:
        options["contacts"] = False
    try:
        target = TargetSpec.from_arg(args.to)
    except FileNotFoundError as e:
        print(f"animik retarget: error: {e}", file=sys.stderr)
        return EXIT_OS
    except AnimikError as e:
        print(f"animik retarget: error: --to: {e}", file=sys.stderr)
        return EXIT_DATA
    missing = [p for p in args.inputs if not Path(p).exists()]
    if missing and len(missing) == len(args.inputs):
        # Nothing to read at all is an operating-system error (exit 4), not bad data.
        print(f"animik retarget: error: no such file or folder: {', '.join(missing[:5])}"
              f"{' ...' if len(missing) > 5 else ''}", file=sys.stderr)
        return EXIT_OS
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"animik retarget: error: cannot create --out {args.out!r}: {e}", file=sys.stderr)
        return EXIT_OS
    try:
        result = run_batch(args.inputs, target, args.out, mapping=args.mapping, options=options,
                           jobs=args.jobs, scheduler=args.scheduler, transfer=args.transfer,
                           force=args.force, progress=not args.quiet,
                           out_format=args.out_format)
    except (AnimikError, ValueError) as e:
        print(f"animik retarget: error: {e}", file=sys.stderr)
        return EXIT_DATA
    except ImportError as e:
        print(f"animik retarget: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        if args.scheduler:
            print(f"animik retarget: error: cannot reach scheduler {args.scheduler!r}: {e}",
                  file=sys.stderr)
            return EXIT_OS
        raise

    items = []
    for c in result.clips:
        rep = c.get("report")
        r = _report_from_dict(rep) if rep else None
        items.append((Path(c["input"]).name, r, c["status"]))
    if not args.quiet:
        headers, rows = report_rows(items)
        print(format_table(headers, rows, title=f"animik retarget -> {target.name}; errors, skate "
                                                f"and penetration in cm "
                                                f"({result.count('ok')} done, "
                                                f"{result.count('skipped')} skipped, "
                                                f"{result.count('failed')} failed; "
                                                f"{result.seconds:.2f} s)"))
        print(f"report: {result.report_path}")
    for c in result.failed:
        print(f"animik retarget: failed: {c['input']}: {c.get('error', '?')}", file=sys.stderr)
    if result.clips and len(result.failed) == len(result.clips):
        return EXIT_DATA
    if not result.clips:
        print("animik retarget: error: no BVH input found", file=sys.stderr)
        return EXIT_DATA
    if result.failed or not result.hard_goals_met():
        return EXIT_NOT_MET
    if args.strict and not result.quality_goals_met():
        return EXIT_NOT_MET
    return EXIT_OK


def _report_from_dict(d: dict):
    """A light view of a report dict with the attributes the table needs."""
    effs = [SimpleNamespace(**e) for e in d.get("effectors", [])]
    return SimpleNamespace(
        frames=d.get("frames", 0), effectors=effs,
        max_skate_cm=d.get("max_skate_cm") or 0.0,
        max_penetration_cm=d.get("max_penetration_cm") or 0.0,
        limit_violations=d.get("limit_violations", 0),
        frames_not_converged=d.get("frames_not_converged", 0),
        mean_iterations=d.get("mean_iterations") or 0.0,
        frames_per_second=d.get("frames_per_second") or 0.0)
