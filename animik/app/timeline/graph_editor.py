"""The graph editor's actions (no GUI): which DoF curves are shown, the curves and their keys,
dragging a key's value and time, editing a smooth key's tangent. Each edit is one undo step.

Curves are shown in display units: degrees for rotation DoFs, metres for translations
(:func:`unit_scale`); the clip keeps SI values. A curve is the joint track as it plays
(:func:`animik.anim.sampling.sample_joint_track`, clipped into the joint's limits), so a
rotation group's curves are those of its rotation interpolant.
"""

from __future__ import annotations

import math

import numpy as np

from ...anim import Clip
from ...anim import selection as ks
from ...anim.sampling import sample_joint_track
from ...anim.tracks import TIME_EPS, ClipError
from ...joints import joint_layouts
from ...skeleton import ROTATION
from ..edits import USER_ERRORS, commit
from ..state import AppState
from .clips import _set_clip
from .marks import current_clip, frame_of
from .playhead import show_time

Curve = tuple[str, int]  # (joint, DoF column of the joint)
PALETTE = ((0.95, 0.35, 0.35), (0.40, 0.85, 0.40), (0.40, 0.60, 1.00), (0.95, 0.80, 0.30),
           (0.85, 0.45, 0.95), (0.35, 0.90, 0.90))


def curves(state: AppState) -> list[Curve]:
    """The curves shown: the chosen ones with a track, else the selected joint's DoFs."""
    clip = current_clip(state)
    if clip is None:
        return []
    chosen = [(j, c) for j, c in state.editing.graph_dofs if clip.track(j) is not None]
    if chosen:
        return chosen
    skel = state.skeleton
    j = state.selected_joint
    if j is None or not 0 <= j < skel.n_joints:
        return []
    name = skel.joint_names[j]
    if clip.track(name) is None:
        return []
    return [(name, c) for c in range(len(skel.joint_dofs(j)))]


def toggle_curve(state: AppState, curve: Curve, add: bool = False) -> None:
    """Show ``curve`` (only it; ``add``: toggled in the chosen set)."""
    cur = list(state.editing.graph_dofs)
    if not add:
        state.editing.graph_dofs = [curve]
    elif curve in cur:
        cur.remove(curve)
        state.editing.graph_dofs = cur
    else:
        state.editing.graph_dofs = [*cur, curve]


def dof_name(state: AppState, curve: Curve) -> str:
    skel = state.skeleton
    return skel.dof_names[skel.joint_dofs(curve[0])[curve[1]]]


def unit_scale(state: AppState, curve: Curve) -> float:
    """Display units per SI unit: degrees per rad for rotations, 1 for translations (m)."""
    skel = state.skeleton
    k = skel.joint_dofs(curve[0])[curve[1]]
    return 180.0 / math.pi if skel.dof_type[k] == ROTATION else 1.0


def sample_curve(clip: Clip, curve: Curve, t: np.ndarray) -> np.ndarray:
    """``(T,)`` SI values of one DoF curve at times ``t`` (as it plays: within the limits)."""
    skel = clip.skeleton
    j = skel.joint_index(curve[0])
    tr = clip.track(curve[0])
    lay = joint_layouts(skel)[j]
    k = lay.dofs[curve[1]]
    v = sample_joint_track(skel, lay, tr, np.asarray(t, float))[:, curve[1]]
    return np.clip(v, skel.lower[k], skel.upper[k])


def curve_keys(clip: Clip, curve: Curve) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(times (K,), values (K,), slopes (K,))`` of a curve's keys, SI (slopes per s)."""
    tr = clip.track(curve[0])
    return tr.times, tr.values[:, curve[1]], ks.key_slopes(clip, curve[0])[:, curve[1]]


def value_range(state: AppState, clip: Clip, t0: float, t1: float) -> tuple[float, float]:
    """``(v0, v1)`` in display units fitting every shown curve over ``[t0, t1]`` (with a margin)."""
    lo, hi = math.inf, -math.inf
    t = np.linspace(t0, t1, 200)
    for c in curves(state):
        s = unit_scale(state, c)
        v = sample_curve(clip, c, t) * s
        kt, kv, _ = curve_keys(clip, c)
        v = np.concatenate([v, kv[(kt >= t0) & (kt <= t1)] * s])
        lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
    if not math.isfinite(lo):
        return -1.0, 1.0
    pad = max(0.08 * (hi - lo), 0.05 if hi - lo < 1.0 else 0.5)
    return lo - pad, hi + pad


def edited_key(clip: Clip, curve: Curve, t_from: float, t_to: float, value: float) -> Clip:
    """The clip with a curve's key at ``t_from`` given ``value`` (SI) and moved to ``t_to``
    (snapped to a frame; the joint's whole key moves, replacing one there)."""
    tr = clip.track(curve[0])
    if tr is None:
        raise ClipError(f"clip {clip.name!r}: joint {curve[0]!r} has no track")
    k = int(np.argmin(np.abs(tr.times - t_from)))
    if abs(tr.times[k] - t_from) > TIME_EPS:
        raise ClipError(f"clip {clip.name!r}: joint {curve[0]!r} has no key at t={t_from:g} s")
    vals = tr.values.copy()
    vals[k, curve[1]] = float(value)
    new = tr.replace(values=vals)
    out = clip.replace(tracks=tuple(new if x is tr else x for x in clip.tracks))
    dt = round((t_to - t_from) * clip.fps) / clip.fps
    if dt != 0.0 and t_from + dt >= 0.0:
        out, _ = ks.move_keys(out, [ks.KeyRef(ks.JOINT, curve[0], float(tr.times[k]))], dt)
    return out


def move_key(state: AppState, curve: Curve, t_from: float, t_to: float, value: float) -> bool:
    """Drag a curve's key to ``value`` (SI) and the frame nearest ``t_to`` (one undo step)."""
    clip = current_clip(state)
    if clip is None:
        return False
    try:
        new = edited_key(clip, curve, t_from, t_to, value)
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    _apply(state, new, f"edit {dof_name(state, curve)} key at frame {frame_of(new, t_to)}")
    return True


def set_tangent(state: AppState, curve: Curve, t: float, slope: float) -> bool:
    """Edit a key's slope (SI per s); the key becomes smooth (one undo step)."""
    clip = current_clip(state)
    if clip is None:
        return False
    try:
        new = ks.set_tangent(clip, curve[0], t, curve[1], slope)
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    _apply(state, new, f"tangent of {dof_name(state, curve)} at frame {frame_of(clip, t)}")
    return True


def auto_tangent(state: AppState, curve: Curve, t: float) -> bool:
    """The key's tangents back to automatic (every DoF of the joint at that key)."""
    clip = current_clip(state)
    if clip is None:
        return False
    try:
        new = ks.auto_tangents(clip, curve[0], [t])
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    if new is clip:
        return False
    _apply(state, new, f"auto tangents at frame {frame_of(clip, t)}")
    return True


def _apply(state: AppState, new: Clip, label: str) -> None:
    state.playing = False
    _set_clip(state, new)
    show_time(state, state.doc.time)
    commit(state, label)


__all__ = ["PALETTE", "auto_tangent", "curve_keys", "curves", "dof_name", "edited_key",
           "move_key", "sample_curve", "set_tangent", "toggle_curve", "unit_scale", "value_range"]
