"""Clips in and out of the app: export the current clip (BVH / glTF), import a BVH as a clip
on the current character (retargeted onto it when its skeleton is another)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import anim
from ...io.bvh import read_bvh
from ...motion import Motion
from ...retarget import retarget
from ...rigs import recognise_rig
from ...skeleton import Skeleton
from ..edits import USER_ERRORS, commit, describe, report, set_doc
from ..state import AppState
from .marks import current_clip, unique_name
from .playhead import show_time


def export_current(state: AppState, path: str | Path) -> Path | None:
    """Export the current clip to ``.bvh`` or ``.glb`` (no extension: ``.glb``); errors go to
    the banner. A ``.glb`` carries the document's character: an imported glTF character's
    own mesh, skin, materials and textures, or a generated body (no mesh: the bone mesh)."""
    clip = current_clip(state)
    path = Path(path).expanduser()
    if clip is None:
        state.error("No clip to export: set keys first (K)")
        return None
    if not path.suffix:
        path = path.with_suffix(".glb")
    try:
        body = state.doc.mesh
        options = {"mesh": body} if body is not None and path.suffix.lower() == ".glb" else {}
        out = anim.export_clip(clip, path, **options)
    except Exception as e:
        report(state, f"Cannot export clip {clip.name!r} to {path}", e)
        return None
    state.write_dir = Path(out).parent
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
        ``(motion, clip, retargeted)``: the BVH's motion, the clip on ``skeleton`` (its frames as
        they are when the BVH is on that skeleton, else retargeted onto it), and whether it was
        retargeted.

    Raises:
        ValueError: an empty motion. AnimikError: unreadable file, unmappable skeleton.
    """
    motion = read_bvh(path)
    if motion.n_frames == 0:
        raise ValueError("the motion has no frames")
    if progress is not None:
        progress(0.05, f"read {motion.n_frames} frames")
    on_rig = recognise_rig(motion)  # a file animik wrote for a built-in rig: its exact poses
    if on_rig is not None and same_skeleton(on_rig.skeleton, skeleton):
        m, retargeted = Motion(skeleton, on_rig.q, on_rig.fps, meta=dict(on_rig.meta)), False
    elif same_skeleton(motion.skeleton, skeleton):
        m, retargeted = Motion(skeleton, motion.q, motion.fps, meta=dict(motion.meta)), False
    else:
        m, retargeted = retarget(motion, skeleton), True
        if progress is not None:
            progress(0.5, f"retargeted onto {skeleton.name}")
    lo = 0.5 if retargeted else 0.05
    clip = anim.clip_from_motion(m, tolerance, position_tolerance, name=name,
                                 progress=None if progress is None else
                                 (lambda f: progress(lo + (1 - lo) * f)))
    return motion, clip, retargeted


def apply_import(state: AppState, path: Path, result) -> bool:
    """Put :func:`read_import`'s result into the document as a new clip (one undo step, on the
    UI thread); the document keeps its skeleton, pose, effectors and clips."""
    motion, clip, retargeted = result
    if clip.skeleton is not state.doc.skeleton:  # the document changed meanwhile
        if not same_skeleton(clip.skeleton, state.doc.skeleton):
            state.error(f"Import of {path.name} dropped: the document's rig changed meanwhile")
            return False
        clip = clip.replace(skeleton=state.doc.skeleton)
    doc = state.doc
    clip = clip.replace(name=unique_name(state, clip.name))
    state.playing = False
    state.selected_key = None
    set_doc(state, doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips)))
    show_time(state, 0.0)
    commit(state, f"import {path.name}")
    n = sum(tr.n_keys for tr in clip.tracks)
    how = f"retargeted onto {doc.skeleton.name}" if retargeted else "on its own skeleton"
    state.info(f"Imported {path.name} as clip {clip.name!r} ({how}): {motion.n_frames} frames, "
               f"{n} joint keys")
    return True


def import_bvh(state: AppState, path: str | Path, tolerance: float | None = None,
               position_tolerance: float | None = None) -> bool:
    """Import a BVH file's motion as a clip on the current character (one undo step), on this
    thread (see :func:`animik.app.timeline.background.import_bvh_async` for the UI's background
    import).

    When the BVH's skeleton is the rig's (a BVH opened before, or written from this rig) its
    frames are the clip as they are; otherwise the motion is retargeted onto the character
    with the library's retargeter (:func:`animik.retarget.retarget`: automatic joint mapping,
    rest alignment and scale, foot contacts), as Tools › Retarget… does. The document keeps
    its skeleton, pose, effectors and clips; the new clip (a unique name from the file's)
    becomes the current one. Opening a BVH as its own document is File › Open. Without
    tolerances every frame is a key; with them keys are reduced
    (:func:`animik.anim.clip_from_motion`).

    Args:
        tolerance: joint-angle tolerance, rad, or None.
        position_tolerance: joint / site position tolerance, m, or None.

    Returns:
        True when imported; on error (unreadable file, a skeleton the retargeter cannot map
        onto the character) a banner says why and nothing changes.
    """
    path = Path(path).expanduser()
    doc = state.doc
    try:
        result = read_import(path, doc.skeleton, unique_name(state, path.stem), tolerance,
                             position_tolerance)
        return apply_import(state, path, result)
    except USER_ERRORS as e:
        state.error(f"Cannot import {path} onto {doc.skeleton.name}: {describe(e)}")
        return False
