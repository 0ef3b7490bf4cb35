#!/usr/bin/env python
"""A filtered ride's height and smoothness against its input (docs/dynamics.md 5f, "The seat
rows without the ratchet"): the root joint's world z, written - input, mean and lowest over
frame ranges, and the root jitter (second difference of written - input on the root's slides,
as :func:`animik.dynamics.smoothness.correction_jitter`) over the ride.

    python scripts/ride_height.py IN.bvh OUT.bvh --model body95 [--ride 813 2997]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from filter_table import _load

from animik.dynamics.smoothness import root_slides
from animik.kinematics import joint_positions


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--model", help="read the BVH files with this rig's masses (body95)")
    ap.add_argument("--ride", type=int, nargs=2, default=(813, 2997),
                    help="first and last frame of the ride (louise: the supports' frames)")
    ap.add_argument("--ranges", type=int, nargs="+", default=[800, 1100, 859, 2997],
                    help="pairs of first, last frames for the height's mean / lowest")
    args = ap.parse_args()
    if len(args.ranges) % 2:
        ap.error("--ranges takes pairs of frames")
    a, b = _load(args.input, args.model), _load(args.output, args.model)
    sk = a.skeleton
    root = int(np.flatnonzero(sk.parents < 0)[0])
    dz = 100.0 * (joint_positions(sk, b.q)[:, root, 2] - joint_positions(sk, a.q)[:, root, 2])
    for lo, hi in zip(args.ranges[::2], args.ranges[1::2], strict=True):
        print(f"root z, written - input, frames {lo}-{hi}: mean {dz[lo:hi + 1].mean():+.2f} cm, "
              f"lowest {dz[lo:hi + 1].min():+.2f} cm, highest {dz[lo:hi + 1].max():+.2f} cm")
    sl = root_slides(sk)
    x = 1000.0 * (b.q[:, sl] - a.q[:, sl])
    n = np.linalg.norm(x[2:] - 2 * x[1:-1] + x[:-2], axis=1)  # n[i]: frame i + 1
    lo, hi = args.ride
    r = n[max(lo - 1, 0):hi]
    print(f"root jitter over frames {lo}-{hi}: RMS {np.sqrt(np.mean(r ** 2)):.2f} mm, max "
          f"{r.max():.1f} mm (frame {int(r.argmax()) + max(lo, 1)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
