"""Keyframe animation: joint and effector-target tracks, interpolation, clips, import, export.

A :class:`Clip` is immutable; the edit functions return new clips, so an editor keeps a
history by keeping the old ones::

    from animik import anim
    from animik.rigs import load_rig

    skel = load_rig("body95")
    clip = anim.new_clip(skel, "wave", fps=30, interpolation="smooth")
    clip = anim.add_key(clip, 0.0, skel.rest_q)                    # whole pose
    q = skel.rest_q.copy(); q[skel.dof_index("l_shoulder_abduction")] = 1.2
    clip = anim.add_key(clip, 1.0, q, joints=["l_shoulder"])      # one joint
    clip = anim.add_effector_key(clip, "r_hand", 0.5, [0.3, -0.4, 1.2])  # IK target
    poses = clip.sample([0.0, 0.25, 0.5])                         # (3, n_dof)
    motion = clip.to_motion()                                     # frames at clip.fps
    anim.export_clip(clip, "wave.glb")                            # or .bvh

See docs/animation.md for interpolation and the glTF layout.
"""

from .clip import TIME_EPS, Clip, ClipError, EffectorTrack, IKSettings, JointTrack
from .edit import (
    add_effector_key,
    add_key,
    clip_from_poses,
    delete_key,
    frame_of,
    key_times,
    move_key,
    new_clip,
    next_key_time,
    previous_key_time,
    remove_tracks,
    rename,
    set_base,
    set_effector,
    set_fps,
    set_ik,
    set_interpolation,
    set_joint_key,
    set_length,
)
from .export import EXPORT_FORMATS, export_clip
from .ik import ClipIKResult, solve_clip_ik
from .interpolation import MODES
from .reduce import clip_from_motion
from .serialize import clip_from_dict, clip_to_dict, clips_to_toml

__all__ = [
    "EXPORT_FORMATS", "MODES", "TIME_EPS", "Clip", "ClipError", "ClipIKResult", "EffectorTrack",
    "IKSettings", "JointTrack", "add_effector_key", "add_key", "clip_from_dict", "clip_from_motion",
    "clip_from_poses", "clip_to_dict", "clips_to_toml", "delete_key", "export_clip", "frame_of", "key_times",
    "move_key", "new_clip", "next_key_time", "previous_key_time", "remove_tracks", "rename",
    "set_base", "set_effector", "set_fps", "set_ik", "set_interpolation", "set_joint_key",
    "set_length", "solve_clip_ik",
]
