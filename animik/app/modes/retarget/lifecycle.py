"""Entering and leaving retarget mode (each one undo step) and framing the pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .... import anim
from ....character import SkinnedMesh
from ....io.bvh import read_bvh
from ....motion import Motion
from ....rigs import load_character
from ....skeleton import Skeleton
from ...documents import with_body
from ...edits import USER_ERRORS, cancel_drag, commit, describe, set_doc
from ...solve import default_solver
from ...state import AppState, Document, SolverSettings
from ...timeline.transfer import same_skeleton
from .playback import _record
from .session import RetargetLink, RetargetSession, current, ui_of


def enter(state: AppState, source: str | Path | Motion | None = None, target: str = "body95",
          mapping: str | Path | None = None, play: bool = True) -> bool:
    """Retarget a BVH onto ``target`` and switch to retarget mode (one undo step).

    Args:
        source: a ``.bvh`` path or a motion; None: the document's BVH (or the current
            session's source, to retarget it onto another rig).
        target: built-in rig name, or a rig ``.toml`` / ``.bvh`` / rigged ``.glb`` path (a
            character's mesh comes along: ``Document.mesh``).
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
    previous = link.previous if link is not None else state.doc
    # a glTF character target keeps its mesh; the current document's body when the target is
    # its skeleton; else a generated body
    mesh = _target_mesh(state, str(target), tgt)
    if mesh is None and tgt is state.doc.skeleton:
        mesh = state.doc.mesh
    doc = with_body(Document.new(tgt, str(target), q0, name=f"{sess.source_name} on {tgt.name}",
                                 solver=SolverSettings(default_solver(), 20, {}),
                                 mode=RetargetLink(sess, previous=previous), mesh=mesh))
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
               f"{tgt.name}: {sess.n_frames} frames at {sess.fps:g} fps. {_keeps(previous, tgt)}")
    return True


def _target_mesh(state: AppState, target: str, skel: Skeleton) -> SkinnedMesh | None:
    """The skinned mesh of a glTF character target (the open document's when it is that
    file), so that retarget mode, its bake and a later export keep the character."""
    if not target.lower().endswith((".glb", ".gltf")):
        return None
    doc = state.doc
    if doc.mesh is not None and str(doc.rig) == target and \
            doc.skeleton.joint_names == skel.joint_names:
        return doc.mesh
    try:
        ch = load_character(Path(target).expanduser())
    except USER_ERRORS:
        return None
    return ch.mesh if ch.mesh is not None and ch.skeleton.joint_names == skel.joint_names else None


def _counts(doc: Document) -> str:
    n_clips = len(doc.clips)
    n_pins = sum(e.active for e in doc.effectors)
    return (f"{n_clips} clip{'s' * (n_clips != 1)}, {n_pins} pin{'s' * (n_pins != 1)} / "
            "target" + "s" * (n_pins != 1))


def comes_back(state: AppState) -> bool:
    """Leaving retarget mode goes back to the document it was entered from (same skeleton as
    the target: its clips, pins and pose come back, with the bake's clips added)."""
    link = current(state)
    return (link is not None and link.previous is not None
            and same_skeleton(link.previous.skeleton, state.doc.skeleton))


def _keeps(previous: Document | None, target) -> str:
    """What leaving will do, said when entering (issue 13 item 4.3)."""
    if previous is None:
        return ""
    if same_skeleton(previous.skeleton, target):
        return (f"Leaving gives {previous.name or previous.skeleton.name} back "
                f"({_counts(previous)}) with the baked clips added.")
    return (f"{previous.name or previous.skeleton.name} ({_counts(previous)}) is kept: "
            "Retarget › Back to it on leaving, or Ctrl+Z.")


def leave(state: AppState, back: bool | None = None) -> bool:
    """Leave retarget mode (one undo step).

    Args:
        back: go back to the document retarget mode was entered from (its pose, pins,
            targets and clips; the clips baked in retarget mode are added to them when the
            skeleton is the same). None: back when the target is that document's skeleton
            (retargeting onto the current character), else stay on the target rig with its
            current pose, pins, targets and baked clips (retargeting a BVH document onto a
            rig); the banner says which, and how to reach the other.

    Returns:
        True when left.
    """
    link = current(state)
    if link is None:
        return False
    cancel_drag(state)
    prev = link.previous
    same = prev is not None and same_skeleton(prev.skeleton, state.doc.skeleton)
    if back is None:
        back = same
    if back and prev is not None:
        clips = list(prev.clips)
        added = []
        if same:
            names = {c.name for c in clips}
            for c in state.doc.clips:  # the bakes
                name = c.name
                while name in names:
                    name = f"{name}_2"
                names.add(name)
                clips.append(c if name == c.name else anim.rename(c, name))
                added.append(name)
        doc = prev.replace(clips=tuple(clips), clip=len(clips) - 1 if added else prev.clip,
                           mode=None)
        set_doc(state, doc)
        state.ik.solver_state = None
        commit(state, "leave retarget mode")
        state.restore_scene_path()
        msg = f"Left retarget mode: back to {prev.name or prev.skeleton.name} ({_counts(prev)})"
        if added:
            msg += f", baked clip{'s' * (len(added) > 1)} {', '.join(map(repr, added))} added"
        state.info(msg)
        return True
    set_doc(state, state.doc.replace(mode=None))
    state.ik.solver_state = None
    commit(state, "leave retarget mode")
    msg = "Left retarget mode"
    if prev is not None:
        msg += (f": {prev.name or prev.skeleton.name} ({_counts(prev)}) is two Ctrl+Z away, "
                "or leave with Retarget › Back to it")
    state.info(msg)
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

