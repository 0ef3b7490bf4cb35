"""``animik bench fidelity``: retarget fidelity against the source, per clip and target.

Every BVH of ``--data`` (default ``../shared/data/bvh``) is retargeted onto each ``--to`` target
(built-in rig, URDF / MJCF robot, rig file) in this process, and
:func:`animik.retarget.fidelity.clip_fidelity` compares the result with the source itself:
hands / feet / head error relative to the pelvis and in the world (cm, means over frames;
``max`` the worst point of any frame) and the elbow / knee flexion error (degrees). Also shown:
joint-limit violations of the result and the lowest foot height (cm; below 0 = under the floor).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .._table import format_table
from ..errors import AnimikError
from ..io.bvh import read_bvh
from ..kinematics import site_positions
from ..retarget import Retargeter
from ..retarget.fidelity import clip_fidelity
from ..retarget.floor import SOLE_SITES, lift_above_floor
from ..rigs import resolve_rig

DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "bvh"
ROBOTS = DEFAULT_DATA.parent / "robots"
DEFAULT_TARGETS = ("body95", str(ROBOTS / "unitree_g1" / "g1.xml"),
                   str(ROBOTS / "unitree_h1" / "h1.xml"))


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench fidelity``."""
    p = subparsers.add_parser(
        "fidelity", help="retarget fidelity against the source (hands/feet/head, flexions)",
        description="Retarget BVH clips onto targets and measure the result against the source "
                    "itself: hands, feet and head relative to the pelvis and in the world, "
                    "elbow and knee flexion.")
    p.add_argument("inputs", nargs="*", metavar="SRC",
                   help="BVH files or folders (default ../shared/data/bvh)")
    p.add_argument("--to", action="append", default=None, metavar="RIG",
                   help="target (repeatable; default body95 and the shared G1 and H1 MJCFs)")
    p.add_argument("--origin", choices=("hips", "hip_centre"), default="hips",
                   help="measure relative errors from the hips joint (a robot's pelvis origin; "
                        "default) or from the hip centre (midpoint of the legs' tops)")
    p.set_defaults(func=run_cli)
    return p


def _files(inputs: list[str]) -> list[Path]:
    out: list[Path] = []
    for s in inputs or [str(DEFAULT_DATA)]:
        p = Path(s)
        if p.is_dir():
            out += sorted(x for x in p.rglob("*") if x.suffix.lower() == ".bvh")
        elif p.is_file():
            out.append(p)
        else:
            raise AnimikError(f"no such BVH file or folder: {s!r}")
    if not out:
        raise AnimikError("no .bvh input")
    return out


def fidelity_rows(files: list[Path], targets: list[str], origin: str = "hips") -> list[tuple]:
    """One row per (target, clip)."""
    rows = []
    for spec in targets:
        target = resolve_rig(spec).skeleton
        label = Path(spec).stem if spec != target.name and ("/" in spec or "." in spec) else spec
        feet = [i for i, n in enumerate(target.site_names)
                if n in SOLE_SITES or n in ("left_foot", "right_foot", "LeftFoot", "RightFoot")]
        for f in files:
            motion = read_bvh(f)
            rt = Retargeter(motion, target)
            res = rt.run()
            result, _ = lift_above_floor(res.motion)  # as animik retarget writes it
            fid = clip_fidelity(motion, result, rt.alignment.scale, origin=origin).summary()
            q = np.asarray(result.q)
            viol = int(np.sum((q < target.lower - 1e-9) | (q > target.upper + 1e-9)))
            low = float(site_positions(target, q)[:, feet, 2].min()) * 100 if feet else np.nan
            rows.append((label, f.name, result.n_frames,
                         *(round(fid.get(k, np.nan), 2) for k in (
                             "hand_rel_cm", "foot_rel_cm", "head_rel_cm", "hand_world_cm",
                             "foot_world_cm", "head_world_cm", "max_world_cm", "elbow_deg",
                             "knee_deg")),
                         viol, round(low, 2)))
    return rows


HEADERS = ["target", "clip", "frames", "hand rel", "foot rel", "head rel", "hand world",
           "foot world", "head world", "max world", "elbow deg", "knee deg", "limit viol.",
           "min foot z"]


def run_cli(args: argparse.Namespace) -> int:
    try:
        files = _files(args.inputs)
        rows = fidelity_rows(files, args.to or list(DEFAULT_TARGETS), args.origin)
    except AnimikError as e:
        print(f"animik bench fidelity: error: {e}")
        return 3
    print(format_table(HEADERS, rows, title="animik bench fidelity: retarget vs source (cm, "
                                            "means over frames; source scaled by leg length; "
                                            f"relative to the {args.origin.replace('_', ' ')})"))
    return 0
