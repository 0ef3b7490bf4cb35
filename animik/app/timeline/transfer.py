"""Clips in and out of the app: export the current clip (BVH / glTF), import a BVH as a clip
(added to the scene, or opened as the scene when its skeleton is another)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import anim
from ...io.bvh import read_bvh
from ...motion import Motion
from ...skeleton import Skeleton
from ..documents import bvh_document, replace_document
from ..edits import USER_ERRORS, commit, describe, report, set_doc
from ..state import AppState
from .marks import current_clip, unique_name
from .playhead import show_time


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
        report(state, f"Cannot export clip {clip.name!r} to {path}", e)
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


def read_import(path: Path, skeleton: Skeleton, name: str, tolerance: float | None = None,
                position_tolerance: float | None = None, progress=None):
    """The work of :func:`import_bvh` (no app state: it runs off the UI thread too).

    Returns:
        ``(motion, clip, document)``: the clip for the rig when the BVH is on its skeleton
        (document None), else a new document on the BVH's skeleton (clip None).
    """
    motion = read_bvh(path)
    if progress is not None:
        progress(0.05, f"read {motion.n_frames} frames")
    if same_skeleton(motion.skeleton, skeleton):
        m = Motion(skeleton, motion.q, motion.fps, meta=dict(motion.meta))
        clip = anim.clip_from_motion(m, tolerance, position_tolerance, name=name,
                                     progress=None if progress is None else
                                     (lambda f: progress(0.05 + 0.95 * f)))
        return motion, clip, None
    doc = bvh_document(path, motion, tolerance, position_tolerance,
                       progress=None if progress is None else (lambda f: progress(0.05 + 0.95 * f)))
    return motion, None, doc


def apply_import(state: AppState, path: Path, result) -> bool:
    """Put :func:`read_import`'s result into the document (one undo step, on the UI thread)."""
    motion, clip, doc = result
    if clip is not None:
        if clip.skeleton is not state.doc.skeleton:  # the document changed meanwhile
            if not same_skeleton(clip.skeleton, state.doc.skeleton):
                state.error(f"Import of {path.name} dropped: the document's rig changed meanwhile")
                return False
            clip = clip.replace(skeleton=state.doc.skeleton)
        cur = state.doc
        clip = clip.replace(name=unique_name(state, clip.name))
        state.playing = False
        state.selected_key = None
        set_doc(state, cur.replace(clips=(*cur.clips, clip), clip=len(cur.clips)))
        show_time(state, 0.0)
        commit(state, f"import {path.name}")
    else:
        replace_document(state, doc, None, None, f"import {path.name}")
    clip = current_clip(state)
    n = sum(tr.n_keys for tr in clip.tracks)
    state.info(f"Imported {path.name} as clip {clip.name!r}: {motion.n_frames} frames, {n} joint "
               f"keys")
    return True


def import_bvh(state: AppState, path: str | Path, tolerance: float | None = None,
               position_tolerance: float | None = None) -> bool:
    """Open a BVH file as a clip (undoable), on this thread (see
    :func:`animik.app.timeline.background.import_bvh_async` for the UI's background import).

    When its skeleton is the rig's (a BVH opened before, or written from this rig) the clip is
    added to the scene; otherwise the BVH is opened as the scene (its skeleton becomes the rig)
    with the clip. Without tolerances every frame is a key; with them keys are reduced
    (:func:`animik.anim.clip_from_motion`).

    Args:
        tolerance: joint-angle tolerance, rad, or None.
        position_tolerance: joint / site position tolerance, m, or None.
    """
    path = Path(path).expanduser()
    try:
        result = read_import(path, state.doc.skeleton, unique_name(state, path.stem), tolerance,
                             position_tolerance)
        return apply_import(state, path, result)
    except USER_ERRORS as e:
        state.error(f"Cannot import {path}: {describe(e)}")
        return False
