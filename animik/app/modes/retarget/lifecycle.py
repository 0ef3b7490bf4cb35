"""Entering and leaving retarget mode (each one undo step) and framing the pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ....io.bvh import read_bvh
from ....motion import Motion
from ...documents import with_body
from ...edits import USER_ERRORS, cancel_drag, commit, describe, set_doc
from ...solve import default_solver
from ...state import AppState, Document, SolverSettings
from .playback import _record
from .session import RetargetLink, RetargetSession, current, ui_of


def enter(state: AppState, source: str | Path | Motion | None = None, target: str = "body95",
          mapping: str | Path | None = None, play: bool = True) -> bool:
    """Retarget a BVH onto ``target`` and switch to retarget mode (one undo step).

    Args:
        source: a ``.bvh`` path or a motion; None: the document's BVH (or the current
            session's source, to retarget it onto another rig).
        target: built-in rig name, or a rig ``.toml`` / ``.bvh`` path.
        mapping: optional mapping file.
        play: start playing.

    Returns:
        True when entered; on error a banner says why and nothing changes.
    """
    link = current(state)
    src_path = ""
    try:
        if isinstance(source, Motion):
            motion = source
            src_path = str(motion.meta.get("source", ""))
        elif source is None or str(source) == "" or (
                link is not None and str(source) == link.session.source_path):
            if link is not None:
                motion, src_path = link.session.motion, link.session.source_path
            elif state.doc.motion is not None:
                motion, src_path = state.doc.motion, str(state.doc.rig)
            else:
                raise ValueError("no BVH is open: open one (File › Open…) or give a .bvh file")
        elif (state.doc.motion is not None and link is None
              and Path(str(source)).expanduser() == Path(str(state.doc.rig)).expanduser()):
            motion, src_path = state.doc.motion, str(state.doc.rig)
        else:
            path = Path(str(source)).expanduser()
            if path.suffix.lower() != ".bvh":
                raise ValueError(f"the source must be a .bvh file, got {str(path)!r}")
            motion, src_path = read_bvh(path), str(path)
        if motion.n_frames == 0:
            raise ValueError("the motion has no frames")
        mapping_arg = None if mapping is None or str(mapping) == "" else str(Path(str(mapping))
                                                                                .expanduser())
        sess = RetargetSession(motion, str(target), mapping_arg, src_path)
        q0, st0 = sess.rt.step(0)
    except USER_ERRORS as e:
        name = Path(src_path).name if src_path else (Path(str(source)).name if source else "the BVH")
        state.error(f"Cannot retarget {name} onto {target}: {describe(e)}")
        return False
    sess.state, sess.input_state, sess.frame, sess.solved_key = st0, None, 0, ()
    sess.bases = {s: sess.target_of(st0, s) for s in sess.editable}
    sess.playing = bool(play)
    tgt = sess.rt.target
    # the target keeps the current document's body when it is the same skeleton, else gets one
    mesh = state.doc.mesh if tgt is state.doc.skeleton else None
    doc = with_body(Document.new(tgt, str(target), q0, name=f"{sess.source_name} on {tgt.name}",
                                 solver=SolverSettings(default_solver(), 20, {}),
                                 mode=RetargetLink(sess), mesh=mesh))
    cancel_drag(state)
    if state.playing:
        state.playing = False  # the timeline's playback: retarget mode has its own transport
    set_doc(state, doc)
    commit(state, f"retarget onto {tgt.name}")
    state.selected_site = state.hover_site = None
    state.selected_joint = state.hover_joint = None
    _record(state, sess, st0, 0.0)
    frame_both(state, face=True)
    state.camera.set_home()
    ui = ui_of(state)
    ui.source_path, ui.export_path, ui.show = src_path, "", True
    state.info(f"Retargeting {Path(src_path).name if src_path else sess.source_name} onto "
               f"{tgt.name}: {sess.n_frames} frames at {sess.fps:g} fps")
    return True


def leave(state: AppState) -> bool:
    """Leave retarget mode (one undo step): the target rig stays with its current pose, its
    pins, targets and clips (a bake made a clip of the motion)."""
    link = current(state)
    if link is None:
        return False
    cancel_drag(state)
    set_doc(state, state.doc.replace(mode=None))
    state.ik.solver_state = None
    commit(state, "leave retarget mode")
    state.info("Left retarget mode")
    return True


def frame_both(state: AppState, face: bool = False) -> None:
    """Frame the camera on the target and the source beside it (``face``: look at them from
    the front, a little from the source's side, the source on the left)."""
    link = current(state)
    if link is None:
        return
    sess = link.session
    fk = state.fk
    pj, _ = sess.source_points(sess.frame, fk.joint_positions[sess.tgt_hips])
    pts = np.concatenate([fk.joint_positions, fk.site_positions, pj[sess.body]])
    cam = state.camera
    if face:
        cam.yaw = float(np.arctan2(sess.facing[1], sess.facing[0])) - 0.25
        cam.pitch = 0.2
    cam.frame(pts, margin=1.15)
    sess.follow_mid = None

