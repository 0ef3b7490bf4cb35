"""Keyframe animation in the app: clips, keys, the playhead, playback, BVH import and export.

The animation half of :mod:`animik.app.actions`: no GL and no GUI, so the timeline panel, the
keyboard and the tests drive the same functions. Clips are immutable :class:`animik.anim.Clip`
values held by the :class:`~animik.app.state.Document` (``doc.clips``, the current one
``doc.clip``, the playhead ``doc.time``); every clip edit replaces them through
:func:`actions.set_doc` and is one undo step (:func:`actions.commit`). Moving the playhead and
playback change ``doc.time`` and the pose but are not undo steps of their own.

**The pose follows the playhead.** :func:`show_time` snaps the time to a frame of the current
clip and takes the pose from ``clip.to_motion()`` (sampled once per clip and cached, because
clips are immutable; an IK clip is solved once per edit), the effector targets from the
clip's effector tracks at that frame, and carries every other constrained effector along
with the body, so the app's IK has nothing to correct and the pose shown is exactly the
clip's. Editing the pose afterwards (a drag, a slider) is not keyed unless auto-key is on or a
key is set (K); moving the playhead again replaces the edit by the clip's pose.

**Keys.** :func:`key_pose` keys the whole pose (every joint with DoFs) or selected joints at
the playhead; :func:`key_targets` keys the constrained effectors' targets (an IK-driven clip:
playback solves IK for them every frame). :func:`auto_key` is what a handle drag or DoF edit
does with auto-key on: the IK settles first, then the resulting whole pose (a drag) or the
edited joint (a slider) is keyed, and after a drag the dragged effector's target too when the
clip already has a target track for it.

**Playback** (:func:`advance`, every frame from :func:`actions.update`) moves the playhead in
real time at the clip's frame rate and shows the cached frames; the live IK is idle meanwhile
(the clip's pose meets its constraints), and starting a drag or a DoF edit pauses playback.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import anim
from ..anim import Clip, ClipError
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..skeleton import Skeleton
from . import actions
from .state import PINNED, TARGET, AppState, Effector

DEFAULT_FPS = 30.0
DEFAULT_LENGTH = 2.0  # s, of a new clip
DEFAULT_INTERPOLATION = "smooth"
ALL, TARGETS = "*", "@targets"  # timeline rows: every track / the effector tracks (else a joint)


# ====================================================================== queries
def current_clip(state: AppState) -> Clip | None:
    return state.doc.current_clip


def clip_fps(clip: Clip | None) -> float:
    return DEFAULT_FPS if clip is None else clip.fps


def clip_end(clip: Clip | None) -> float:
    """The timeline's end, s: the clip length (a new or zero-length clip: 2 s)."""
    if clip is None:
        return DEFAULT_LENGTH
    n = clip.length
    return n if n > 0 else DEFAULT_LENGTH


def last_frame(clip: Clip | None) -> int:
    return int(math.floor(clip_end(clip) * clip_fps(clip) + 1e-6))


def snap(clip: Clip | None, t: float) -> float:
    """The frame time ``i / fps`` nearest ``t`` within the timeline."""
    fps = clip_fps(clip)
    i = int(np.clip(round(float(t) * fps), 0, last_frame(clip)))
    return i / fps


def frame_of(clip: Clip | None, t: float) -> int:
    return int(round(float(t) * clip_fps(clip)))


def unique_name(state: AppState, base: str) -> str:
    names = {c.name for c in state.doc.clips}
    base = base.strip() or "clip"
    if base not in names:
        return base
    k = 2
    while f"{base} {k}" in names:
        k += 1
    return f"{base} {k}"


def row_selection(clip: Clip, row: str) -> dict:
    """``joints`` / ``sites`` keyword arguments of the anim edit functions for a timeline row."""
    if row == ALL:
        return {}
    if row == TARGETS:
        return {"joints": (), "sites": [ef.site for ef in clip.effectors]}
    return {"joints": [row]}


@dataclass(frozen=True)
class Marks:
    """Key marks of a clip for the timeline.

    Attributes:
        times: ``(K,)`` distinct key times of every track, s.
        whole: ``(K,)`` bool: every joint with DoFs has a key there (a whole-pose key).
        joint_times: ``(K,)`` bool: some joint track has a key there.
        target_times: ``(E,)`` distinct key times of the effector tracks.
    """

    times: np.ndarray
    whole: np.ndarray
    joint_times: np.ndarray
    target_times: np.ndarray


_MARKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def marks(clip: Clip) -> Marks:
    """The clip's key marks (cached: clips are immutable)."""
    m = _MARKS.get(clip)
    if m is None:
        times = anim.key_times(clip)
        count = np.zeros(len(times), dtype=int)
        for tr in clip.tracks:
            idx = np.clip(np.searchsorted(times, tr.times - anim.TIME_EPS), 0, max(len(times) - 1, 0))
            count[idx] += 1
        skel = clip.skeleton
        keyable = sum(1 for j in range(skel.n_joints) if len(skel.joint_dofs(j)))
        target = anim.key_times(clip, joints=(), sites=[ef.site for ef in clip.effectors]) \
            if clip.effectors else np.zeros(0)
        m = Marks(times, count == keyable, count > 0, target)
        _MARKS[clip] = m
    return m


def row_times(clip: Clip, row: str) -> np.ndarray:
    """Key times of a timeline row."""
    if row == ALL:
        return marks(clip).times
    if row == TARGETS:
        return marks(clip).target_times
    tr = clip.track(row)
    return np.zeros(0) if tr is None else tr.times


def _report(state: AppState, what: str, e: BaseException) -> None:
    """An error in the banner; a bug (not a user error) also prints its traceback."""
    if not isinstance(e, actions.USER_ERRORS):
        import traceback

        traceback.print_exc()
    state.error(f"{what}: {actions._describe(e)}")


# ====================================================================== the pose at the playhead
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
            actions.set_doc(state, doc.replace(time=t))
        return
    try:
        q, targets = pose_at(clip, t)
    except Exception as e:  # a clip that cannot be sampled must not take the scene down
        _report(state, f"Cannot show clip {clip.name!r} at {t:.3f} s", e)
        state.playing = False
        actions.set_doc(state, doc.replace(time=t))
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
    actions.set_doc(state, doc.replace(q=q, time=t, effectors=tuple(effs)))
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


# ====================================================================== playback
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


# ====================================================================== clips
def _set_clip(state: AppState, clip: Clip) -> None:
    actions.set_doc(state, state.doc.with_clip(clip))


def ensure_clip(state: AppState) -> Clip:
    """The current clip, or a new empty one (2 s at 30 fps, smooth keys, the current pose as
    the base pose of joints without keys)."""
    clip = current_clip(state)
    if clip is not None:
        return clip
    doc = state.doc
    clip = anim.new_clip(doc.skeleton, unique_name(state, "clip"), fps=DEFAULT_FPS, base=doc.q,
                         interpolation=DEFAULT_INTERPOLATION, length=DEFAULT_LENGTH)
    actions.set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips),
                                       time=snap(clip, doc.time)))
    return clip


def new_clip(state: AppState, name: str = "clip") -> Clip:
    """Add an empty clip and make it current (undoable); the playhead goes to 0."""
    doc = state.doc
    clip = anim.new_clip(doc.skeleton, unique_name(state, name), fps=DEFAULT_FPS, base=doc.q,
                         interpolation=DEFAULT_INTERPOLATION, length=DEFAULT_LENGTH)
    state.playing = False
    state.selected_key = None
    actions.set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips), time=0.0))
    actions.commit(state, f"new clip {clip.name}")
    return clip


def duplicate_clip(state: AppState) -> Clip | None:
    clip = current_clip(state)
    if clip is None:
        return None
    doc = state.doc
    copy = anim.rename(clip, unique_name(state, f"{clip.name} copy"))
    clips = list(doc.clips)
    clips.insert(doc.clip + 1, copy)
    actions.set_doc(state, doc.replace(clips=tuple(clips), clip=doc.clip + 1))
    actions.commit(state, f"duplicate clip {clip.name}")
    return copy


def delete_clip(state: AppState) -> bool:
    clip = current_clip(state)
    if clip is None:
        return False
    doc = state.doc
    clips = doc.clips[:doc.clip] + doc.clips[doc.clip + 1:]
    state.playing = False
    state.selected_key = None
    actions.set_doc(state, doc.replace(clips=clips, clip=min(doc.clip, len(clips) - 1)))
    show_time(state, state.doc.time)
    actions.commit(state, f"delete clip {clip.name}")
    return True


def rename_clip(state: AppState, name: str) -> bool:
    clip = current_clip(state)
    name = str(name).strip()
    if clip is None or name == clip.name:
        return False
    if not name:
        state.error("A clip name cannot be empty")
        return False
    if name in {c.name for c in state.doc.clips}:
        state.error(f"There is already a clip named {name!r}")
        return False
    _set_clip(state, anim.rename(clip, name))
    actions.commit(state, f"rename clip {name}")
    return True


def select_clip(state: AppState, index: int) -> bool:
    doc = state.doc
    if not 0 <= index < len(doc.clips) or index == doc.clip:
        return False
    state.playing = False
    state.selected_key = None
    actions.set_doc(state, doc.replace(clip=index))
    show_time(state, doc.time)
    actions.commit(state, f"clip {doc.clips[index].name}")
    return True


def set_clip_fps(state: AppState, fps: float, commit: bool = True) -> bool:
    """The current clip's frame rate (keys keep their times; the playhead snaps to a frame)."""
    clip = current_clip(state)
    if clip is None or not (math.isfinite(fps) and fps > 0) or fps == clip.fps:
        return False
    _set_clip(state, anim.set_fps(clip, float(fps)))
    if commit:
        show_time(state, state.doc.time)
        actions.commit(state, f"frame rate {fps:g}")
    return True


def set_clip_length(state: AppState, length: float, commit: bool = True) -> bool:
    """The current clip's length, s (at least one frame)."""
    clip = current_clip(state)
    if clip is None or not math.isfinite(length):
        return False
    length = max(float(length), 1.0 / clip.fps)
    if clip.fixed_length is not None and abs(length - clip.fixed_length) < 1e-12:
        return False
    _set_clip(state, anim.set_length(clip, length))
    if commit:
        show_time(state, state.doc.time)
        actions.commit(state, f"length {length:g} s")
    return True


def commit_clip_settings(state: AppState, label: str) -> None:
    """End of a continuous edit of the frame rate or length (the widget was released)."""
    show_time(state, state.doc.time)
    actions.commit(state, label)


def set_default_interpolation(state: AppState, mode: str) -> bool:
    """The interpolation of new keys (kept in the clip, saved with it)."""
    clip = ensure_clip(state)
    if mode == clip.interpolation:
        return False
    try:
        _set_clip(state, clip.replace(interpolation=mode))
    except ClipError as e:
        state.error(str(e))
        return False
    actions.commit(state, f"new keys {mode}")
    return True


# ====================================================================== keys
def key_pose(state: AppState, joints: list[str] | None = None, label: str | None = None) -> bool:
    """Key the current pose at the playhead: every joint with DoFs, or only ``joints`` (K)."""
    if state.drag is not None:
        return False
    clip = ensure_clip(state)
    t = snap(clip, state.doc.time)
    try:
        new = anim.add_key(clip, t, state.doc.q, joints=joints)
    except actions.USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    if state.doc.time != t:
        actions.set_doc(state, state.doc.replace(time=t))
    what = "pose" if joints is None else ", ".join(joints)
    actions.commit(state, label or f"key {what} at frame {frame_of(new, t)}")
    return True


def key_joint(state: AppState) -> bool:
    """Key the selected joint at the playhead (Shift+K)."""
    skel = state.skeleton
    j = state.selected_joint
    if j is None or not 0 <= j < skel.n_joints or not len(skel.joint_dofs(j)):
        state.info("Select a joint with DoFs to key it (click a joint or bone)")
        return False
    return key_pose(state, [skel.joint_names[j]])


def _effector_keys(state: AppState, clip: Clip, t: float, sites) -> Clip:
    doc = state.doc
    fk = state.fk
    skel = doc.skeleton
    if not clip.effectors:
        # the clip's IK solves like the app's (its solver and options); the keyed joint poses,
        # not the app's fixed reference, shape the null space
        opts = {k: v for k, v in actions.solver_options(doc.solver).items() if k != "reference"}
        clip = anim.set_ik(clip, solver=doc.solver.name, options=opts)
    for site in sites:
        e = doc.effector(site)
        tr = clip.effector(site)
        rot = e.rotation
        if tr is not None:  # a track keeps rotations on all keys or on none
            if tr.rotations is None:
                rot = None
            elif rot is None:
                rot = fk.site_rotations[skel.site_index(site)]
        clip = anim.add_effector_key(clip, site, t, e.position, rot, pinned=e.mode == PINNED,
                                     weight=e.weight)
    return clip


def key_targets(state: AppState, sites: list[str] | None = None) -> bool:
    """Key the targets of the constrained effectors (or of ``sites``) at the playhead (Alt+K).

    Makes the clip IK-driven: playback solves IK for the interpolated targets every frame.
    """
    if state.drag is not None:
        return False
    doc = state.doc
    sites = [e.site for e in doc.effectors if e.active and (sites is None or e.site in sites)]
    if not sites:
        state.info("No constrained effectors to key: drag a handle or pin one (P) first")
        return False
    clip = ensure_clip(state)
    t = snap(clip, doc.time)
    try:
        new = _effector_keys(state, clip, t, sites)
    except actions.USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    actions.commit(state, f"key {len(sites)} target{'s' if len(sites) > 1 else ''} at frame "
                          f"{frame_of(new, t)}")
    return True


def _settle(state: AppState, max_steps: int = 12) -> None:
    """Run the IK until it converges (at most ``max_steps`` frames' worth)."""
    for _ in range(max_steps):
        ik = state.ik
        if not state.live_ik or ik.failed or (ik.converged and ik.solved_version == state.version):
            return
        actions.step_ik(state)


def auto_key(state: AppState, joints: list[str] | None = None, site: str | None = None) -> bool:
    """With auto-key on: key the edit just made at the playhead (the caller commits).

    After a handle drag (``site``): the IK settles, then the whole resulting pose is keyed, and
    the dragged effector's target too when the clip already has a target track for it. After a
    DoF edit: the ``joints`` edited.

    Returns:
        True when something was keyed.
    """
    if not state.auto_key:
        return False
    _settle(state)
    clip = ensure_clip(state)
    t = snap(clip, state.doc.time)
    try:
        new = anim.add_key(clip, t, state.doc.q, joints=joints)
        if site is not None and new.effector(site) is not None and state.doc.effector(site).active:
            new = _effector_keys(state, new, t, [site])
    except actions.USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    return True


def _key_at(state: AppState, t: float | None, row: str | None):
    """``(clip, t, row)`` of the key an action targets: the given one, else the selected key;
    ``clip`` is None when there is no clip or no key to act on."""
    if t is None or row is None:
        if state.selected_key is None:
            return None, t, row
        t, row = state.selected_key
    return current_clip(state), t, row


def delete_key(state: AppState, t: float | None = None, row: str | None = None) -> bool:
    """Delete the keys at ``t`` in a timeline row (default: the selected key)."""
    clip, t, row = _key_at(state, t, row)
    if clip is None:
        return False
    try:
        new = anim.delete_key(clip, t, **row_selection(clip, row))
    except actions.USER_ERRORS as e:
        state.error(str(e))
        return False
    state.selected_key = None
    _set_clip(state, new)
    show_time(state, state.doc.time)
    actions.commit(state, f"delete key at frame {frame_of(clip, t)}")
    return True


def move_key(state: AppState, t_from: float, t_to: float, row: str = ALL) -> bool:
    """Move the keys at ``t_from`` to the frame nearest ``t_to`` (keys there are replaced)."""
    clip = current_clip(state)
    if clip is None:
        return False
    t_to = snap(clip, t_to)
    if abs(t_to - t_from) <= anim.TIME_EPS:
        return False
    try:
        new = anim.move_key(clip, t_from, t_to, **row_selection(clip, row))
    except actions.USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    state.selected_key = (t_to, row)
    show_time(state, state.doc.time)
    actions.commit(state, f"move key to frame {frame_of(new, t_to)}")
    return True


def set_key_interpolation(state: AppState, mode: str, t: float | None = None,
                          row: str | None = None) -> bool:
    """Interpolation of the keys at ``t`` in a row (default: the selected key)."""
    clip, t, row = _key_at(state, t, row)
    if clip is None:
        return False
    try:
        new = anim.set_interpolation(clip, mode, times=[t], **row_selection(clip, row))
    except actions.USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    show_time(state, state.doc.time)
    actions.commit(state, f"{mode} key at frame {frame_of(clip, t)}")
    return True


def key_interpolation(clip: Clip, t: float, row: str) -> str | None:
    """The interpolation of the keys at ``t`` in a row (``"mixed"`` when they differ), or None."""
    modes = set()
    sel = row_selection(clip, row)
    joints = sel.get("joints")
    sites = sel.get("sites")
    for tr in clip.tracks:
        if joints is None or tr.joint in joints:
            k = np.flatnonzero(np.abs(tr.times - t) <= anim.TIME_EPS)
            modes.update(tr.interpolation[int(i)] for i in k)
    for ef in clip.effectors:
        if (joints is None and sites is None) or (sites is not None and ef.site in sites):
            k = np.flatnonzero(np.abs(ef.times - t) <= anim.TIME_EPS)
            modes.update(ef.interpolation[int(i)] for i in k)
    if not modes:
        return None
    return modes.pop() if len(modes) == 1 else "mixed"


# ====================================================================== import / export
def export_current(state: AppState, path: str | Path) -> Path | None:
    """Export the current clip to ``.bvh`` or ``.glb`` (no extension: ``.glb``); errors go to
    the banner."""
    clip = current_clip(state)
    path = Path(path).expanduser()
    if clip is None:
        state.error("No clip to export: set keys first (K)")
        return None
    if not path.suffix:
        path = path.with_suffix(".glb")
    try:
        out = anim.export_clip(clip, path)
    except Exception as e:
        _report(state, f"Cannot export clip {clip.name!r} to {path}", e)
        return None
    state.info(f"Exported clip {clip.name!r} to {out}")
    return Path(out)


def same_skeleton(a: Skeleton, b: Skeleton) -> bool:
    """Same joints, hierarchy, DoFs and rest geometry (a BVH's motion fits the rig as it is)."""
    if a is b:
        return True
    return (a.joint_names == b.joint_names and a.dof_names == b.dof_names
            and np.array_equal(a.parents, b.parents) and np.array_equal(a.dof_type, b.dof_type)
            and np.allclose(a.offsets, b.offsets, atol=1e-6)
            and np.allclose(a.dof_axis, b.dof_axis, atol=1e-9)
            and np.allclose(a.rest_rotations, b.rest_rotations, atol=1e-9))


def import_bvh(state: AppState, path: str | Path, tolerance: float | None = None,
               position_tolerance: float | None = None) -> bool:
    """Open a BVH file as a clip (undoable).

    When its skeleton is the rig's (a BVH opened before, or written from this rig) the clip is
    added to the scene; otherwise the BVH is opened as the scene (its skeleton becomes the rig)
    with the clip. Without tolerances every frame is a key; with them keys are reduced
    (:func:`animik.anim.clip_from_motion`).

    Args:
        tolerance: joint-angle tolerance, rad, or None.
        position_tolerance: joint / site position tolerance, m, or None.
    """
    from ..io.bvh import read_bvh

    path = Path(path).expanduser()
    try:
        motion = read_bvh(path)
        if same_skeleton(motion.skeleton, state.doc.skeleton):
            doc = state.doc
            m = Motion(doc.skeleton, motion.q, motion.fps, meta=dict(motion.meta))
            clip = anim.clip_from_motion(m, tolerance, position_tolerance,
                                         name=unique_name(state, path.stem))
            state.playing = False
            state.selected_key = None
            actions.set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips)))
            show_time(state, 0.0)
            actions.commit(state, f"import {path.name}")
        else:
            doc = actions.bvh_document(path, motion, tolerance, position_tolerance)
            actions.replace_document(state, doc, None, None, f"import {path.name}")
    except actions.USER_ERRORS as e:
        state.error(f"Cannot import {path}: {actions._describe(e)}")
        return False
    clip = current_clip(state)
    n = sum(tr.n_keys for tr in clip.tracks)
    state.info(f"Imported {path.name} as clip {clip.name!r}: {motion.n_frames} frames, {n} joint "
               f"keys")
    return True


__all__ = [
    "ALL", "DEFAULT_FPS", "DEFAULT_INTERPOLATION", "DEFAULT_LENGTH", "TARGETS", "Marks", "advance",
    "auto_key", "clip_end", "clip_fps", "current_clip", "delete_clip", "delete_key",
    "duplicate_clip", "ensure_clip", "export_current", "frame_of", "import_bvh", "jump",
    "key_interpolation", "key_joint", "key_pose", "key_targets", "last_frame", "marks",
    "move_key", "new_clip", "pause", "play", "pose_at", "rename_clip", "row_times", "same_skeleton",
    "select_clip", "set_clip_fps", "set_clip_length", "set_default_interpolation",
    "set_key_interpolation", "set_time", "show_time", "snap", "toggle_play", "unique_name",
]
