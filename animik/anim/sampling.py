"""Sampling a clip's tracks: joint tracks to DoF values, effector tracks to targets.

Rotation groups (:mod:`animik.joints`) are interpolated as rotations and converted back to the
joint's DoFs on the branch nearest the keys; see :mod:`animik.anim.clip` for the design. Derived
per-track data (slopes, rotation plans) are cached beside the immutable tracks
(:mod:`animik.cache`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..cache import cache_of
from ..joints import JointLayout, dof_rotation_product, group_angles, joint_layouts, tb_angles
from ..skeleton import Skeleton
from .interpolation import MODE_CODE, STEP, eval_rotation, eval_scalar, locate, pchip_slopes
from .tracks import EffectorTrack, JointTrack

if TYPE_CHECKING:  # a clip is only read here; Clip itself imports this module
    from .clip import Clip


def _cache(obj: JointTrack | EffectorTrack) -> dict:
    return cache_of(obj)


def _mode_codes(track: JointTrack | EffectorTrack) -> np.ndarray:
    c = _cache(track)
    if "modes" not in c:
        c["modes"] = np.array([MODE_CODE[m] for m in track.interpolation], dtype=np.int8)
    return c["modes"]


def track_slopes(tr: JointTrack) -> np.ndarray:
    """``(K, d)`` slopes of a joint track's smooth segments at its keys: the edited tangents
    where set, else the automatic monotone PCHIP slopes (cached)."""
    c = _cache(tr)
    if "slopes" not in c:
        m = pchip_slopes(tr.times, tr.values)
        if tr.tangents is not None:
            m = np.where(np.isnan(tr.tangents), m, tr.tangents)
        c["slopes"] = m
    return c["slopes"]


def sample_pose(clip: Clip, t: np.ndarray) -> np.ndarray:
    """Poses ``(T, n)`` from the joint tracks only (no IK), clipped into the limits."""
    skel = clip.skeleton
    q = np.tile(clip.base, (t.shape[0], 1))
    layouts = joint_layouts(skel)
    for tr in clip.tracks:
        lay = layouts[skel.joint_index(tr.joint)]
        q[:, lay.dofs] = sample_joint_track(skel, lay, tr, t)
    return np.clip(q, skel.lower, skel.upper)


def sample_joint_track(skel: Skeleton, lay: JointLayout, tr: JointTrack, t: np.ndarray) -> np.ndarray:
    """Values ``(T, d)`` of one joint track."""
    modes = _mode_codes(tr)
    per = eval_scalar(tr.times, tr.values, modes, t, track_slopes(tr))
    g = lay.group
    if g is None or tr.n_keys == 1:
        return per
    plan = _group_plan(skel, lay, tr)
    seg, u = locate(tr.times, t)
    use = (plan["kind"][seg] > 0) & (modes[seg] != STEP) & (u > 0.0) & (u < 1.0)
    if not np.any(use):
        return per
    idx = np.flatnonzero(use)
    cols = g.dofs - lay.dofs[0]
    rot, _, _ = eval_rotation(tr.times, plan["rots"], modes, t[idx], plan["rot_cache"])
    ref = per[np.ix_(idx, cols)]
    tracked = np.flatnonzero(plan["kind"][seg[idx]] == 2)
    if len(tracked):
        # Reference followed along the path: linear in the segment's sub-sample grid.
        grids = plan["grid_array"][plan["grid_index"][seg[idx[tracked]]]]  # (m, N + 1, k)
        x = u[idx[tracked]] * (grids.shape[1] - 1)
        lo_i = np.minimum(x.astype(np.int64), grids.shape[1] - 2)
        f = (x - lo_i)[:, None]
        rows = np.arange(len(tracked))
        ref[tracked] = grids[rows, lo_i] + f * (grids[rows, lo_i + 1] - grids[rows, lo_i])
    out = per.copy()
    out[np.ix_(idx, cols)] = group_angles(g, rot, ref, skel.lower[g.dofs], skel.upper[g.dofs])
    return out


_TRACK_STEPS = 128  # sub-samples of a segment whose rotation path is followed step by step
_NEAR_LOCK = 0.26  # cos(middle angle) below this (~75°) on a segment: follow its path


def _group_plan(skel: Skeleton, lay: JointLayout, tr: JointTrack) -> dict:
    """Per segment: 0 per-DoF, 1 rotation with the per-DoF value as reference, 2 rotation with a
    reference followed along the path (near gimbal lock or large swings)."""
    c = _cache(tr)
    if "plan" in c:
        return c["plan"]
    g = lay.group
    cols = g.dofs - lay.dofs[0]
    vals = tr.values[:, cols]
    modes = _mode_codes(tr)
    rots = dof_rotation_product(g.axes, vals)
    rot_cache: dict = {}
    K = tr.n_keys
    kind = np.ones(K - 1, dtype=np.int8)
    delta = np.abs(np.diff(vals, axis=0)).max(axis=1)
    kind[delta > np.pi] = 0  # a wind-up: slerp would take the short way round
    kind[modes[:-1] == STEP] = 0
    if tr.tangents is not None:  # edited tangents are per-DoF slopes: those segments are too
        edited = ~np.all(np.isnan(tr.tangents[:, cols]), axis=1)
        kind[edited[:-1] | edited[1:]] = 0
    lo, hi = skel.lower[g.dofs], skel.upper[g.dofs]
    grids: dict[int, np.ndarray] = {}
    cand = np.flatnonzero(kind == 1)
    if len(cand):
        # Coarse check of every segment: near gimbal lock or with jumps between sub-samples the
        # per-DoF reference is not good enough.
        us = np.linspace(0.0, 1.0, 11)
        h = tr.times[cand + 1] - tr.times[cand]
        tt = (tr.times[cand][:, None] + us[None, :] * h[:, None]).ravel()
        tt[10::11] = tr.times[cand + 1]
        r, _, _ = eval_rotation(tr.times, rots, modes, tt, rot_cache)
        per = eval_scalar(tr.times, tr.values, modes, tt, track_slopes(tr))[:, cols]
        ang = group_angles(g, r, per, lo, hi).reshape(len(cand), 11, g.k)
        jump = np.abs(np.diff(ang, axis=1)).max(axis=(1, 2))
        hard = jump > 1.0
        if g.k == 3:
            m = g.basis.T @ r @ g.basis
            cb = np.hypot(m[..., 0, 0], m[..., 0, 1]).reshape(len(cand), 11)
            hard |= cb.min(axis=1) < _NEAR_LOCK
        hard_segs = cand[hard]
        if len(hard_segs):
            grid_vals, ok = _follow(g, rots, tr, modes, hard_segs, cols, lo, hi, rot_cache)
            for i, s in enumerate(hard_segs):
                if ok[i]:
                    kind[s] = 2
                    grids[int(s)] = grid_vals[i]
                else:
                    kind[s] = 0
    grid_index = np.full(K - 1, -1, dtype=np.int64)
    for i, s in enumerate(sorted(grids)):
        grid_index[s] = i
    grid_array = np.stack([grids[s] for s in sorted(grids)]) if grids else np.zeros((0, 2, g.k))
    plan = {"kind": kind, "rots": rots, "rot_cache": rot_cache, "grid_index": grid_index,
            "grid_array": grid_array}
    c["plan"] = plan
    return plan


def _follow(g, rots, tr: JointTrack, modes, segs: np.ndarray, cols: np.ndarray, lo, hi,
            rot_cache) -> tuple[np.ndarray, np.ndarray]:
    """DoF values along segments ``segs`` followed step by step from their first key.

    Returns:
        ``(grids (S, N + 1, k), ok (S,))``; ``ok`` is False where the path does not arrive at
        the next key's values (the keys' Euler branches disagree with the rotation path, so the
        segment is interpolated per DoF).
    """
    S = len(segs)
    t0, t1 = tr.times[segs], tr.times[segs + 1]
    us = np.linspace(0.0, 1.0, _TRACK_STEPS + 1)
    tt = t0[:, None] + us[None, :] * (t1 - t0)[:, None]
    tt[:, -1] = t1
    r, _, _ = eval_rotation(tr.times, rots, modes, tt.ravel(), rot_cache)
    r = r.reshape(S, len(us), 3, 3)
    start = tr.values[np.ix_(segs, cols)]
    end = tr.values[np.ix_(segs + 1, cols)]
    out = np.empty((S, len(us), g.k))
    prev = start
    canon = g.basis.T @ r @ g.basis if g.k == 3 else None
    for i in range(len(us)):
        if g.k == 3:
            prev = tb_angles(canon[:, i], g.signs, prev, lo, hi)
        else:
            prev = group_angles(g, r[:, i], prev, lo, hi)
        out[:, i] = prev
    ok = np.max(np.abs(out[:, -1] - end), axis=1) <= 1e-6
    out[:, 0], out[:, -1] = start, end
    return out, ok


def sample_effector(ef: EffectorTrack, t: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Target positions ``(T, 3)`` and rotations ``(T, 3, 3)`` (or ``None``) of an effector track."""
    c = _cache(ef)
    modes = _mode_codes(ef)
    if "slopes" not in c:
        c["slopes"] = pchip_slopes(ef.times, ef.positions)
    pos = eval_scalar(ef.times, ef.positions, modes, t, c["slopes"])
    if ef.rotations is None:
        return pos, None
    rot, _, _ = eval_rotation(ef.times, ef.rotations, modes, t, c.setdefault("rot", {}))
    return pos, rot



__all__ = ["sample_effector", "sample_joint_track", "sample_pose", "track_slopes"]
