"""Keyframe animation in the app: clips, keys, the playhead, playback, BVH import and export.

The animation half of :mod:`animik.app.actions`: no GL and no GUI, so the timeline panel, the
keyboard and the tests drive the same functions. Clips are immutable :class:`animik.anim.Clip`
values held by the :class:`~animik.app.state.Document` (``doc.clips``, the current one
``doc.clip``, the playhead ``doc.time``); every clip edit replaces them through
:func:`animik.app.edits.set_doc` and is one undo step (:func:`animik.app.edits.commit`). Moving
the playhead and playback change ``doc.time`` and the pose but are not undo steps of their own.

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

**Playback** (:func:`advance`, every frame from the pose mode's update) moves the playhead in
real time at the clip's frame rate and shows the cached frames; the live IK is idle meanwhile
(the clip's pose meets its constraints), and starting a drag or a DoF edit pauses playback.
"""

from __future__ import annotations

from .clips import (
    commit_clip_settings,
    delete_clip,
    duplicate_clip,
    ensure_clip,
    new_clip,
    rename_clip,
    select_clip,
    set_clip_fps,
    set_clip_length,
    set_default_interpolation,
)
from .keying import (
    auto_key,
    delete_key,
    key_joint,
    key_pose,
    key_targets,
    move_key,
    set_key_interpolation,
)
from .marks import (
    ALL,
    DEFAULT_FPS,
    DEFAULT_INTERPOLATION,
    DEFAULT_LENGTH,
    TARGETS,
    Marks,
    clip_end,
    clip_fps,
    current_clip,
    frame_of,
    key_interpolation,
    last_frame,
    marks,
    row_selection,
    row_times,
    snap,
    unique_name,
)
from .playhead import advance, jump, pause, play, pose_at, set_time, show_time, toggle_play
from .transfer import export_current, import_bvh, same_skeleton

__all__ = [
    "ALL", "DEFAULT_FPS", "DEFAULT_INTERPOLATION", "DEFAULT_LENGTH", "TARGETS", "Marks", "advance",
    "auto_key", "clip_end", "clip_fps", "commit_clip_settings", "current_clip", "delete_clip",
    "delete_key", "duplicate_clip", "ensure_clip", "export_current", "frame_of", "import_bvh",
    "jump", "key_interpolation", "key_joint", "key_pose", "key_targets", "last_frame", "marks",
    "move_key", "new_clip", "pause", "play", "pose_at", "rename_clip", "row_selection",
    "row_times", "same_skeleton", "select_clip", "set_clip_fps", "set_clip_length",
    "set_default_interpolation", "set_key_interpolation", "set_time", "show_time", "snap",
    "toggle_play", "unique_name",
]
