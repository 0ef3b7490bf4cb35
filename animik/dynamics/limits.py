"""How far a clip's poses leave the rig's joint limits (docs/dynamics.md 8, "joint limits").

The clip filter does not yet keep the rig's limits (its lean modes and the plant passes' leg IK
move joints without them), so ``animik filter`` reports what the written clip does: the frames
beyond a limit and the largest excess, against the input's own. BVH skeletons read from a file
have no limits (±inf): nothing to report.
"""

from __future__ import annotations

import numpy as np

from ..skeleton import Skeleton


def limit_excess(skel: Skeleton, q: np.ndarray) -> dict:
    """Where ``q`` ``(T, n_dof)`` leaves ``skel``'s joint limits.

    Returns:
        ``{"frames_outside": frames with some DoF beyond its limit, "max_excess_deg": the
        largest excess (rotations in degrees, translations in cm as "max_excess_cm"),
        "dof": that DoF's name or None}``.
    """
    q = np.asarray(q, dtype=float)
    lo, hi = np.asarray(skel.lower, dtype=float), np.asarray(skel.upper, dtype=float)
    ex = np.maximum(lo - q, 0.0) + np.maximum(q - hi, 0.0)  # no limit (±inf): 0
    rot = skel.dof_type == 0
    out = {"frames_outside": int((ex > 1e-9).any(axis=1).sum()),
           "max_excess_deg": round(float(np.degrees(ex[:, rot].max())) if rot.any() else 0.0, 3),
           "max_excess_cm": round(float(ex[:, ~rot].max() * 100) if (~rot).any() else 0.0, 3),
           "dof": None}
    if ex.size and ex.max() > 1e-9:
        out["dof"] = skel.dof_names[int(np.unravel_index(ex.argmax(), ex.shape)[1])]
    return out


__all__ = ["limit_excess"]
