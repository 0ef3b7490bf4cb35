"""Import a :class:`~animik.motion.Motion` as a keyframe clip, optionally with key reduction.

Key reduction keeps the fewest keys it can find such that the clip, re-sampled at the motion's
frames, stays within tolerance of the motion at **every** frame:

1. Per joint track (Douglas–Peucker style, greedy refinement): start with keys at the first and
   last frame; while some frame is out of tolerance, add a key at the worst frame of every
   segment between keys that has one; repeat. The error of a rotation DoF is its angle
   difference (rad, ``tolerance``), of a translation DoF its distance (m,
   ``position_tolerance``). The track is evaluated with its real interpolant (slerp / SO(3)
   cubic for rotation groups), so the check is exact, not a chord approximation.
2. Whole skeleton: the world positions of every joint and site (effector) are compared with
   the motion's; while some frame is more than ``position_tolerance`` off, the worst frame of
   every run of bad frames gets a key on every joint of the chain that moves the worst point.

Both loops only add keys, and with a key on every frame the clip reproduces the motion, so they
end with every frame within tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..joints import dofs_from_local, joint_layouts, local_transforms
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..skeleton import ROTATION
from .clip import Clip
from .interpolation import MODE_CODE, MODES
from .sampling import sample_joint_track, sample_pose
from .tracks import ClipError, JointTrack

DEFAULT_POSITION_TOLERANCE = 1e-3  # m


def clip_from_motion(motion: Motion, tolerance: float | None = None,
                     position_tolerance: float | None = None, interpolation: str = "linear",
                     name: str | None = None, continuous: bool = True,
                     progress: Callable[[float], object] | None = None) -> Clip:
    """A clip whose keys reproduce a motion.

    Args:
        motion: the motion (``fps`` becomes the clip's frame rate, frame ``i`` is at
            ``i / fps`` s).
        tolerance: largest joint-angle error, rad. With both tolerances ``None`` every frame
            becomes a key of every joint (exact).
        position_tolerance: largest error of translation DoFs and of the world position of
            every joint and site, m (default 1 mm when ``tolerance`` is given; with only
            ``position_tolerance``, joint angles are not bounded by themselves).
        interpolation: mode of the keys.
        name: clip name (default ``motion.meta["clip"]``, the source file's stem or the
            skeleton name).
        continuous: first make the rotation DoFs continuous from frame to frame (BVH files
            often wrap angles at ±180° or jump between Euler branches; interpolating across
            such a jump would spin the joint): the same poses with the branch and 2π shift
            nearest the previous frame (:func:`animik.joints.dofs_from_local`). Kept only
            if it reproduces every joint transform to 1e-9.
        progress: called with the fraction done (0..1) as the reduction goes (a background
            task's progress bar; an exception it raises, e.g. a cancel, stops the work).

    Returns:
        The clip; ``clip.to_motion()`` samples the motion's frames.

    Raises:
        ClipError: an empty motion, bad tolerances or interpolation.
    """
    skel = motion.skeleton
    if name is None:
        name = str(motion.meta.get("clip", "")) or _stem(motion.meta.get("source")) or skel.name
    if motion.n_frames == 0:
        raise ClipError(f"clip {name!r}: the motion has no frames")
    if interpolation not in MODE_CODE:
        raise ClipError(f"clip {name!r}: unknown interpolation {interpolation!r}; expected one of "
                        f"{list(MODES)}")
    tol_a = _tol(tolerance, "tolerance", name)
    tol_p = _tol(position_tolerance, "position_tolerance", name)
    reduce = tol_a is not None or tol_p is not None
    if tol_a is None:
        tol_a = math.inf
    if tol_p is None:
        tol_p = DEFAULT_POSITION_TOLERANCE
    T = motion.n_frames
    times = np.arange(T) / motion.fps
    q = motion.q
    if continuous and T > 1:
        q = _continuous(skel, q)
    meta = {k: v for k, v in motion.meta.items() if k != "clip"}
    base = skel.rest_q
    clip = Clip(skel, fps=motion.fps, name=name, base=base, interpolation=interpolation,
                fixed_length=float(times[-1]), meta=meta)
    layouts = [lay for lay in joint_layouts(skel) if len(lay.dofs)]
    if not reduce or T <= 2:
        tracks = tuple(JointTrack(skel.joint_names[lay.joint], times, q[:, lay.dofs], interpolation)
                       for lay in layouts)
        return clip.replace(tracks=tracks)

    keys: dict[int, set[int]] = {lay.joint: {0, T - 1} for lay in layouts}
    scales = {lay.joint: np.where(skel.dof_type[lay.dofs] == ROTATION, tol_a, tol_p)
              for lay in layouts}

    def build() -> Clip:
        tracks = []
        for lay in layouts:
            k = np.array(sorted(keys[lay.joint]))
            tracks.append(JointTrack(skel.joint_names[lay.joint], times[k], q[np.ix_(k, lay.dofs)],
                                     interpolation))
        return clip.replace(tracks=tuple(tracks))

    # Whole-skeleton check: joint and site positions.
    fk_ref = forward_kinematics(skel, q)
    ref_pts = np.concatenate([fk_ref.joint_positions, fk_ref.site_positions], axis=1)
    point_joint = np.concatenate([np.arange(skel.n_joints), skel.site_joint])
    keyed_joints = np.array([lay.joint for lay in layouts], dtype=np.int64)
    dirty = set(keys)
    for it in range(T + 1):
        # Adding a key changes the interpolation of its segment, so both checks repeat until
        # neither adds a key.
        todo = [lay for lay in layouts if lay.joint in dirty]
        for i, lay in enumerate(todo):
            if progress is not None:  # the first pass is most of the work; later ones add few keys
                progress(0.8 * i / len(todo) if it == 0 else 1.0 - 0.2 / (it + 1))
            _refine_joint(skel, lay, times, q[:, lay.dofs], scales[lay.joint], interpolation,
                          keys[lay.joint])
        dirty = set()
        out = build()
        qs = sample_pose(out, times)
        fk = forward_kinematics(skel, qs)
        pts = np.concatenate([fk.joint_positions, fk.site_positions], axis=1)
        err = np.linalg.norm(pts - ref_pts, axis=-1)  # (T, P)
        frame_err = err.max(axis=1)
        bad = frame_err > tol_p
        if not np.any(bad):
            return out
        for f in _run_worst(bad, frame_err):
            p = int(np.argmax(err[f]))
            chain = skel.joint_ancestor_mask[point_joint[p]]
            for j in keyed_joints[chain[keyed_joints]]:
                if int(f) not in keys[int(j)]:
                    keys[int(j)].add(int(f))
                    dirty.add(int(j))
    return build()


def _continuous(skel, q: np.ndarray) -> np.ndarray:
    rot, pos = local_transforms(skel, q)
    qc = dofs_from_local(skel, rot, pos, q[0], sequential=True)
    rot2, pos2 = local_transforms(skel, qc)
    if np.max(np.abs(rot2 - rot), initial=0.0) > 1e-9 or np.max(np.abs(pos2 - pos), initial=0.0) > 1e-9:
        return q
    return qc


def _stem(src) -> str:
    if not src:
        return ""

    return Path(str(src)).stem


def _tol(v, what: str, name: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(v)) or float(v) <= 0:
        raise ClipError(f"clip {name!r}: {what} must be a positive number, got {v!r}")
    return float(v)


def _run_worst(bad: np.ndarray, err: np.ndarray) -> list[int]:
    """The worst frame of every run of consecutive bad frames."""
    out = []
    idx = np.flatnonzero(bad)
    splits = np.flatnonzero(np.diff(idx) > 1) + 1
    for run in np.split(idx, splits):
        out.append(int(run[np.argmax(err[run])]))
    return out


def _refine_joint(skel, lay, times: np.ndarray, vals: np.ndarray, scale: np.ndarray,
                  interpolation: str, keys: set[int]) -> None:
    """Add keys (in place) until the joint's track is within tolerance at every frame."""
    T = times.shape[0]
    name = skel.joint_names[lay.joint]
    for _ in range(T):
        k = np.array(sorted(keys))
        tr = JointTrack(name, times[k], vals[k], interpolation)
        got = sample_joint_track(skel, lay, tr, times)
        got = np.clip(got, skel.lower[lay.dofs], skel.upper[lay.dofs])
        with np.errstate(invalid="ignore"):
            err = (np.abs(got - vals) / scale).max(axis=1)  # (T,) in tolerances
        err[k] = 0.0
        bad = err > 1.0
        if not np.any(bad):
            return
        seg = np.searchsorted(k, np.arange(T), side="right") - 1
        for s in np.unique(seg[bad]):
            in_seg = np.flatnonzero(bad & (seg == s))
            keys.add(int(in_seg[np.argmax(err[in_seg])]))


__all__ = ["DEFAULT_POSITION_TOLERANCE", "clip_from_motion"]
