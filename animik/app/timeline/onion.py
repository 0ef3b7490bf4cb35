"""Onion skinning: ghost poses of the current clip before and after the playhead.

``state.editing.onion`` (:class:`~animik.app.editing_ui.OnionSkin`) sets how many ghosts before
and after and the frames between them. The ghosts are the clip's frames (``clip.to_motion()``,
cached per clip, so an IK clip is not solved again) drawn with the view's joint spheres and
bone cylinders, thinner, in faded colours: warm before the playhead, cool after, fading with
the distance. They are view decoration only (not picked; picking uses the pose's own
kinematics).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...kinematics import forward_kinematics
from ..instances import ViewGeometry, cylinder_instances, sphere_instances
from ..state import AppState
from .marks import current_clip, frame_of

BEFORE = np.array([0.95, 0.55, 0.30], np.float32)  # warm: the past
AFTER = np.array([0.35, 0.75, 0.95], np.float32)  # cool: the future
BACKGROUND = np.array([0.20, 0.21, 0.24], np.float32)
MAX_GHOSTS = 10  # per side


def ghost_frames(state: AppState) -> list[tuple[int, int]]:
    """``[(offset, frame)]`` of the ghosts: offsets ``-before..-1, 1..after`` (in ghosts), the
    clip frames ``playhead + offset * step`` that exist."""
    o = state.editing.onion
    clip = current_clip(state)
    if not o.enabled or clip is None or clip.is_empty:
        return []
    f0 = frame_of(clip, state.doc.time)
    last = clip.n_frames - 1
    step = max(int(o.step), 1)
    out = []
    for k in range(-min(int(o.before), MAX_GHOSTS), min(int(o.after), MAX_GHOSTS) + 1):
        f = f0 + k * step
        if k != 0 and 0 <= f <= last:
            out.append((k, f))
    return out


def ghost_colors(offsets: np.ndarray, n_before: int, n_after: int) -> np.ndarray:
    """``(G, 3)`` colours: warm before, cool after, faded towards the background with the
    distance from the playhead (the nearest ghost strongest)."""
    offsets = np.asarray(offsets)
    base = np.where((offsets < 0)[:, None], BEFORE, AFTER)
    n = np.where(offsets < 0, max(n_before, 1), max(n_after, 1))
    strength = 0.75 * (1.0 - (np.abs(offsets) - 1) / (n + 1.0))
    return (strength[:, None] * base + (1 - strength[:, None]) * BACKGROUND).astype(np.float32)


def view_key(state: AppState) -> tuple:
    o = state.editing.onion
    if not o.enabled:
        return ()
    return (o.before, o.after, o.step, id(current_clip(state)), state.doc.time)


def decorate_view(state: AppState, geom: ViewGeometry) -> ViewGeometry:
    """The view with the ghost poses added to the character's spheres and cylinders."""
    frames = ghost_frames(state)
    if not frames:
        return geom
    clip = current_clip(state)
    skel = state.skeleton
    if clip.skeleton is not skel:
        return geom
    try:
        motion = clip.to_motion()
    except Exception:  # an unsamplable clip has no ghosts; the timeline reports its error
        return geom
    offs = np.array([k for k, _ in frames])
    q = motion.q[np.array([f for _, f in frames])]
    fk = forward_kinematics(skel, q)
    o = state.editing.onion
    cols = ghost_colors(offs, o.before, o.after)
    jr = 0.55 * geom.joint_radius
    br = 0.55 * geom.bone_radius
    child = np.arange(1, skel.n_joints)
    par = skel.parents[1:]
    sph, cyl = [geom.spheres], [geom.cylinders]
    for g in range(len(frames)):
        jp = fk.joint_positions[g]
        sph.append(sphere_instances(jp, jr, cols[g]))
        if len(child):
            a, b = jp[par], jp[child]
            ok = np.linalg.norm(b - a, axis=1) > 1e-6
            cyl.append(cylinder_instances(a[ok], b[ok], np.minimum(br[par], 0.8 * jr[par])[ok],
                                          cols[g]))
    return dataclasses.replace(geom, spheres=np.concatenate(sph), cylinders=np.concatenate(cyl))


__all__ = ["decorate_view", "ghost_colors", "ghost_frames", "view_key"]
