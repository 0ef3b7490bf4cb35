"""The playhead: the pose follows it (:func:`show_time`), scrubbing, jumping to keys, and
real-time playback (:func:`advance`, every frame from the pose mode's update)."""

from __future__ import annotations

import math
import weakref

import numpy as np

from ... import anim
from ...anim import Clip
from ...kinematics import forward_kinematics
from ..edits import report, set_doc
from ..state import PINNED, TARGET, AppState, Effector
from .marks import clip_end, current_clip, frame_of, last_frame, snap

_TARGETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _frame_targets(clip: Clip) -> dict:
    """``{site: (positions (F, 3), rotations (F, 3, 3) | None)}`` at the clip's frames (cached)."""
    t = _TARGETS.get(clip)
    if t is None:
        t = clip.sample_targets(clip.frame_times()) if clip.effectors else {}
        _TARGETS[clip] = t
    return t


def pose_at(clip: Clip, t: float) -> tuple[np.ndarray, dict]:
    """The clip's pose ``(n_dof,)`` and effector targets ``{site: (position, rotation)}`` at ``t``.

    From the cached frames of ``clip.to_motion()`` when ``t`` is a frame time, else sampled.

    Raises:
        ClipError: the clip cannot be sampled (empty, NaN).
    """
    m = clip.to_motion()
    i = int(round(t * clip.fps))
    if 0 <= i < m.n_frames and abs(i / clip.fps - t) < 1e-9:
        targets = {s: (p[i], None if r is None else r[i]) for s, (p, r) in _frame_targets(clip).items()}
        return np.array(m.q[i]), targets
    q = clip.sample([t])[0]
    targets = {s: (p[0], None if r is None else r[0]) for s, (p, r) in clip.sample_targets([t]).items()}
    return q, targets


def show_time(state: AppState, t: float) -> None:
    """Move the playhead to the frame nearest ``t`` and take the pose from the current clip.

    Effectors with a track in the clip get its targets (pinned or not, weight); the other
    constrained effectors are carried along with the body. The IK is marked solved, so the pose
    shown is exactly the clip's until the next edit.
    """
    doc = state.doc
    clip = doc.current_clip
    t = snap(clip, t)
    if clip is None or clip.is_empty:
        if t != doc.time:
            set_doc(state, doc.replace(time=t))
        return
    try:
        q, targets = pose_at(clip, t)
    except Exception as e:  # a clip that cannot be sampled must not take the scene down
        report(state, f"Cannot show clip {clip.name!r} at {t:.3f} s", e)
        state.playing = False
        set_doc(state, doc.replace(time=t))
        return
    skel = doc.skeleton
    fk = forward_kinematics(skel, q)
    effs = list(doc.effectors)
    weights = {ef.site: (ef.pinned, ef.weight) for ef in clip.effectors}
    for i, e in enumerate(effs):
        if e.site in targets:
            pos, rot = targets[e.site]
            pinned, w = weights[e.site]
            effs[i] = Effector(e.site, PINNED if pinned else TARGET, pos, rot, w)
        elif e.active:
            effs[i] = e.replace(position=fk.site_positions[i],
                                rotation=fk.site_rotations[i] if e.oriented else None)
    set_doc(state, doc.replace(q=q, time=t, effectors=tuple(effs)))
    ik = state.ik
    ik.converged, ik.solved_version, ik.solver_state = True, state.version, None


def set_time(state: AppState, t: float) -> None:
    """Scrub: the playhead (and the pose) to the frame nearest ``t``; playback goes on from there."""
    show_time(state, t)
    state.play_clock = state.doc.time


def jump(state: AppState, direction: int) -> bool:
    """To the next (``+1``) or previous (``-1``) key; ``±2``: the end / the start."""
    clip = current_clip(state)
    t = state.doc.time
    if direction == 2:
        set_time(state, clip_end(clip))
        return True
    if direction == -2:
        set_time(state, 0.0)
        return True
    if clip is None:
        return False
    nt = anim.next_key_time(clip, t) if direction > 0 else anim.previous_key_time(clip, t)
    if nt is None:
        return False
    set_time(state, nt)
    return True


def play(state: AppState) -> bool:
    clip = current_clip(state)
    if clip is None or clip.is_empty:
        state.info("Nothing to play: set keys first (K)")
        return False
    if state.drag is not None:
        return False
    if frame_of(clip, state.doc.time) >= last_frame(clip) and not state.loop:
        show_time(state, 0.0)
    state.play_clock = state.doc.time
    state.playing = True
    return True


def pause(state: AppState) -> None:
    """Stop playback; the pose stays at the playhead."""
    state.playing = False


def toggle_play(state: AppState) -> bool:
    if state.playing:
        pause(state)
        return True
    return play(state)


def advance(state: AppState, dt: float) -> None:
    """Playback: move the playhead by ``dt`` s (wrapping when looping) and show that frame."""
    if not state.playing:
        return
    clip = current_clip(state)
    if clip is None or clip.is_empty or state.drag is not None:
        state.playing = False
        return
    fps = clip.fps
    n_last = last_frame(clip)
    state.play_clock += max(float(dt), 0.0)
    i = int(math.floor(state.play_clock * fps + 1e-6))
    if i > n_last:
        if state.loop:
            period = (n_last + 1) / fps
            state.play_clock = math.fmod(state.play_clock, period)
            i = min(int(math.floor(state.play_clock * fps + 1e-6)), n_last)
        else:
            i = n_last
            state.play_clock = n_last / fps
            state.playing = False
    if i != frame_of(clip, state.doc.time) or state.doc.time != i / fps:
        show_time(state, i / fps)

