"""Joint-limit excess of the clips ``animik filter --model body95`` wrote, split by DoF group.

Usage: ``python scripts/limit_table.py OUT/out [--ret OUT/ret]``: for every ``X.bvh`` in the
directory (the written clips), the frames with a DoF beyond the rig's limits and the largest
excess, for the trunk's DoFs (the lean modes of the clip filter's QP,
:func:`animik.dynamics.smoothness.trunk_dofs`) and for the other DoFs (legs: the plant passes'
IK), with the input's own (``--ret``: the filter's inputs) for comparison. Measured against the
rig's limits, read from the written file (independent of the filter's report).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.smoothness import trunk_dofs
from animik.io.bvh import read_bvh
from animik.rigs import recognise_rig


def _group(skel, q, dofs) -> tuple[int, float, str]:
    """(frames beyond a limit on ``dofs``, largest excess in degrees, its DoF)."""
    lo, hi = skel.lower[dofs], skel.upper[dofs]
    ex = np.maximum(lo - q[:, dofs], 0.0) + np.maximum(q[:, dofs] - hi, 0.0)
    if not ex.size or ex.max() <= 1e-9:
        return 0, 0.0, "-"
    k = dofs[int(np.unravel_index(ex.argmax(), ex.shape)[1])]
    return int((ex > 1e-9).any(axis=1).sum()), float(np.degrees(ex.max())), skel.dof_names[k]


def _row(path: Path) -> tuple[tuple, tuple]:
    m = recognise_rig(read_bvh(path))
    skel = m.skeleton
    q = np.asarray(m.q, dtype=float)
    trunk = trunk_dofs(skel, contact_model_for_clip(skel, q))
    rot = np.flatnonzero(skel.dof_type == 0)
    rest = np.setdiff1d(rot, trunk)
    return _group(skel, q, trunk), _group(skel, q, rest)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="directory of the written clips (X.bvh)")
    ap.add_argument("--ret", type=Path, help="directory of the filter's inputs (X.bvh)")
    a = ap.parse_args()
    fmt = "{:<36} {:>6} {:>8} {:<24} {:>6} {:>8} {:<24}"
    print(fmt.format("clip", "trunk", "max deg", "dof", "other", "max deg", "dof"))
    for p in sorted(a.out.glob("*.bvh")):
        for tag, path in (("", p), (" (input)", a.ret / p.name if a.ret else None)):
            if path is None or not path.exists():
                continue
            (tf, tm, td), (of, om, od) = _row(path)
            print(fmt.format(p.stem[:28] + tag, tf, f"{tm:.3f}", td, of, f"{om:.3f}", od))


if __name__ == "__main__":
    main()
