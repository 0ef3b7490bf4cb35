"""The rig's joint limits in the clip filter (docs/dynamics.md 8, "joint limits").

:func:`limit_excess`: how far a clip's poses leave the limits; ``animik filter`` reports the
written clip's frames beyond a limit and the largest excess, against the input's own. BVH
skeletons read from a file have no limits (±inf): nothing to report.

The correction QP keeps the limits of the DoFs its lean modes move (the trunk's): every frame
whose correction could reach a limit gets rows ``lower - q_t <= E_t x_t <= upper - q_t``
(:func:`limit_rows`), and what the penalty's slack leaves beyond is clipped
(:func:`keep_within`). The plant passes' leg IK keeps the legs' limits itself
(:func:`animik.dynamics._leg_ik.hold_batch`).
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


# m of centre-of-mass shift: a frame's limit rows are those whose DoF a lean of this size
# (along the two modes, summed) could take past its limit; farther limits get no row. A round's
# lean on the body95 retargets is at most 5.3 cm (99 % of frames below 3.4 cm, louise and 02_01);
# 10 cm gave every trunk DoF rows on nearly every frame (56 % of louise's rows) for the same clip.
LEAN_REACH = 0.05


def limit_rows(skel: Skeleton, q: np.ndarray, E: np.ndarray, dofs: np.ndarray,
               frames: np.ndarray, reach: float | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows that keep ``dofs`` within the rig's limits under the correction ``dq_t = E_t x_t``:
    ``E_t[i] x_t <= upper_i - q_t,i`` and ``-E_t[i] x_t <= q_t,i - lower_i`` on ``frames``,
    only where the limit is within ``reach`` (m of lean; ``None``: :data:`LEAN_REACH`) of the
    DoF's modes (a pose already
    beyond a limit gets a negative right-hand side: the QP's slacks keep it solvable).

    Args:
        q: ``(T, n)`` the poses the correction is added to. E: ``(T, n, k)`` the modes.

    Returns:
        ``(frame (r,), coef (r, k), rhs (r,))``: ``coef x_frame <= rhs``.
    """
    reach = LEAN_REACH if reach is None else reach
    dofs = np.asarray(dofs, dtype=np.int64)
    frames = np.asarray(frames, dtype=np.int64)
    k = E.shape[2]
    if not len(dofs) or not len(frames):
        return np.zeros(0, np.int64), np.zeros((0, k)), np.zeros(0)
    Ed = E[frames][:, dofs]  # (F, u, k)
    qd = np.asarray(q, dtype=float)[frames][:, dofs]
    move = np.abs(Ed).sum(axis=2) * reach  # (F, u) how far the lean could take each DoF
    out = []
    for sign, room in ((1.0, skel.upper[dofs] - qd), (-1.0, qd - skel.lower[dofs])):
        f, i = np.nonzero((room < move) & (move > 0))
        out.append((frames[f], sign * Ed[f, i], room[f, i]))
    return tuple(np.concatenate(a) for a in zip(*out, strict=True))


def keep_within(skel: Skeleton, q: np.ndarray, q2: np.ndarray, dofs: np.ndarray) -> np.ndarray:
    """``q2`` with ``dofs`` clipped to the rig's limits, or to ``q``'s value where ``q`` is
    already beyond one (a step from ``q`` to ``q2`` never takes a DoF further out)."""
    dofs = np.asarray(dofs, dtype=np.int64)
    out = np.array(q2, dtype=float)
    out[:, dofs] = np.clip(out[:, dofs], np.minimum(skel.lower[dofs], q[:, dofs]),
                           np.maximum(skel.upper[dofs], q[:, dofs]))
    return out


__all__ = ["LEAN_REACH", "keep_within", "limit_excess", "limit_rows"]
