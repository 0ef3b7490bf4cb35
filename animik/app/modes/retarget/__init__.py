"""Retarget mode: a BVH motion retargeted onto a rig live, every frame, with edits layered on it.

Entering retarget mode (:func:`enter`, one undo step) replaces the document by one on the
target rig whose ``mode`` is a :class:`RetargetLink`. While it is, :class:`RetargetMode` is
the app's mode and its update (:func:`update`) runs instead of the pose mode's IK: it
advances the playhead and solves the current frame with
:meth:`animik.retarget.Retargeter.step` (FIK with the source pose as the null-space
reference), the :class:`~animik.retarget.RetargetState` carried from frame to frame. The
effector handles of the target stay the app's own (drag, P to pin, the Effectors panel); in
retarget mode they mean:

* **free** — the effector follows the retargeted motion;
* **dragged** — an *offset on the retargeted motion* (``RetargetEdits.offsets``): each mouse
  move puts the handle under the cursor (the offset is the handle minus where the retarget
  puts the effector on the frame shown); while the mouse is still and the clip plays, the
  handle rides along with the motion. On release the offset is kept ("Keep drag edits": the
  effector stays a target that moves with the motion), cleared (free again), or, with "Pin on
  release", the effector is pinned where it is;
* **pinned** — held at its world position (a ``RetargetEdits.targets`` edit); P pins from the
  current frame on;
* **target** without an offset (set from a menu) — a world target like a pin.

Each edit holds on a frame range (``RetargetLink.ranges``, default the whole clip) and blends
in before it and out after it over :data:`BLEND_S`.

Only the retargeter's effector sites (hands, feet, head) can be edited; the other handles
(body95's fingertips) are hidden in this mode. Edits are part of the document (undoable); the
playhead, play / pause and the live quality numbers are view state (:class:`RetargetSession`).

:func:`bake` runs every frame with the current edits and adds the result to the document: a
keyframe clip (one key per frame) in ``Document.clips`` when the document has clips, and the
:class:`~animik.motion.Motion` itself (``RetargetLink.baked``) that :func:`export_bvh` writes
.

No GL here (numpy only): the panel is :mod:`animik.app.ui.retarget_panel`; the source skeleton
is drawn by adding instances to the view geometry (:func:`decorate_view`).

Modules: :mod:`.session` (the session, :class:`RetargetLink`, the panel's choices),
:mod:`.edits` (drags, pins, ranges -> per-frame edits), :mod:`.playback` (transport and the
per-frame solve), :mod:`.lifecycle` (enter / leave), :mod:`.bake` (bake, export),
:mod:`.view` (the source beside the target), :mod:`.mode` (the :class:`RetargetMode` hooks).
"""

from __future__ import annotations

from .bake import bake, bake_motion, default_export_path, export_bvh
from .edits import (
    base_target,
    blend_weight,
    clear_edit,
    clear_edits,
    edit_rows,
    edits_of,
    end_drag,
    pin,
    set_range,
)
from .lifecycle import comes_back, enter, frame_both, leave
from .mode import RetargetMode
from .playback import seek, set_playing, step_frames, update
from .session import (
    BLEND_S,
    MAX_CATCHUP,
    SPEEDS,
    LiveStats,
    RetargetLink,
    RetargetSession,
    RetargetUI,
    active,
    current,
    default_source_path,
    open_panel,
    ui_of,
)
from .view import decorate_view, label_points

__all__ = ["BLEND_S", "MAX_CATCHUP", "SPEEDS", "LiveStats", "RetargetLink", "RetargetMode",
           "RetargetSession", "RetargetUI", "active", "bake", "bake_motion", "base_target",
           "blend_weight", "clear_edit", "clear_edits", "comes_back", "current", "decorate_view",
           "default_export_path", "default_source_path", "edit_rows", "edits_of", "end_drag",
           "enter", "export_bvh", "frame_both", "label_points", "leave", "open_panel", "pin",
           "seek", "set_playing", "set_range", "step_frames", "ui_of", "update"]
