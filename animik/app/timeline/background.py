"""Long animation edits as background tasks (:mod:`animik.app.tasks`): BVH import, key
reduction and baking run in a worker thread with a progress bar and Cancel, so the window keeps
drawing; the document changes on the UI thread when the work is done, as one undo step.

* :func:`import_bvh_async`: File › Import BVH as clip (the work of
  :func:`~animik.app.timeline.transfer.import_bvh`, reduction included);
* :func:`reduce_keys_async`: the current clip's keys reduced within an angle and a position
  tolerance (:func:`animik.anim.clip_from_motion` on its frames), replacing its tracks;
* :func:`bake_async`: the current clip sampled at every frame (IK solved for its effector
  tracks) and added as a new clip with a key per frame and no effector tracks.

Each returns the :class:`~animik.app.tasks.Task` (None when another task is running). The
result is applied only if the document still has the clip's skeleton; a reduced clip replaces
the clip it came from when that clip is still in the document (else it is added).
"""

from __future__ import annotations

import math
from pathlib import Path

from ... import anim
from ...anim import Clip
from ...anim.clip import check_finite
from ...anim.ik import solve_clip_ik
from ...anim.sampling import sample_pose
from ...motion import Motion
from ..edits import commit, describe, set_doc
from ..state import AppState
from ..tasks import Task
from .marks import current_clip, unique_name
from .playhead import show_time
from .transfer import apply_import, read_import


def busy(state: AppState) -> bool:
    """True (after telling the user) when a background task is already running."""
    t = state.editing.tasks.current
    if t is not None:
        state.info(f"Wait for '{t.label}' to finish (or cancel it)")
        return True
    return False


def _fail(state: AppState, what: str):
    return lambda e: state.error(f"{what}: {describe(e)}")


def import_bvh_async(state: AppState, path: str | Path, tolerance: float | None = None,
                     position_tolerance: float | None = None) -> Task | None:
    """Import a BVH as a clip in the background (see :func:`transfer.import_bvh`)."""
    if busy(state):
        return None
    path = Path(path).expanduser()
    skel = state.doc.skeleton
    name = unique_name(state, path.stem)

    def work(progress):
        return read_import(path, skel, name, tolerance, position_tolerance, progress)

    return state.editing.tasks.start(f"Import {path.name}", work,
                                     lambda r: apply_import(state, path, r),
                                     _fail(state, f"Cannot import {path}"))


def _motion_of(clip: Clip, progress, share: float) -> Motion:
    """The clip's frames (IK solved for effector tracks, with progress), as a Motion."""
    t = clip.frame_times()
    q = sample_pose(clip, t)
    if clip.effectors:
        q = solve_clip_ik(clip, t, q, progress=lambda f: progress(share * f)).q
    check_finite(clip, q)
    return Motion(clip.skeleton, q, clip.fps, meta={"clip": clip.name, **dict(clip.meta)})


def _put_clip(state: AppState, source: Clip, new: Clip, replace: bool, label: str) -> bool:
    doc = state.doc
    if new.skeleton is not doc.skeleton:
        state.error(f"{label}: dropped, the document's rig changed meanwhile")
        return False
    clips = list(doc.clips)
    idx = next((i for i, c in enumerate(clips) if c is source), None)
    if replace and idx is not None:
        clips[idx] = new.replace(name=source.name)
        cur = idx
    else:
        clips.append(new.replace(name=unique_name(state, new.name)))
        cur = len(clips) - 1
    state.playing = False
    state.editing.selection = frozenset()
    set_doc(state, doc.replace(clips=tuple(clips), clip=cur))
    show_time(state, doc.time)
    commit(state, label)
    return True


def reduce_keys_async(state: AppState, tolerance_deg: float = 0.5,
                      position_tolerance_mm: float = 5.0) -> Task | None:
    """Reduce the current clip's keys within the tolerances (degrees, millimetres)."""
    clip = current_clip(state)
    if clip is None or clip.is_empty:
        state.info("No keys to reduce")
        return None
    if busy(state):
        return None
    tol = math.radians(float(tolerance_deg))
    ptol = float(position_tolerance_mm) * 1e-3

    def work(progress):
        m = _motion_of(clip, progress, 0.3)
        share = 0.3 if clip.effectors else 0.0
        out = anim.clip_from_motion(m, tol, ptol, interpolation="smooth"
                                    if clip.interpolation == "smooth" else "linear",
                                    name=clip.name,
                                    progress=lambda f: progress(share + (1 - share) * f))
        # effector tracks were solved into the joint keys; the clip keeps its settings
        return out.replace(base=clip.base, meta=clip.meta, ik=clip.ik,
                           interpolation=clip.interpolation, fixed_length=clip.fixed_length)

    def apply(new: Clip) -> None:
        before = sum(tr.n_keys for tr in clip.tracks)
        after = sum(tr.n_keys for tr in new.tracks)
        if _put_clip(state, clip, new, True, f"reduce keys of {clip.name}"):
            state.info(f"Reduced {clip.name!r}: {before} -> {after} joint keys "
                       f"({tolerance_deg:g} deg, {position_tolerance_mm:g} mm)")

    return state.editing.tasks.start(f"Reduce keys of {clip.name}", work, apply,
                                     _fail(state, f"Cannot reduce {clip.name!r}"))


def bake_async(state: AppState) -> Task | None:
    """Bake the current clip: a key per frame (IK solved), added as ``<name>_baked``."""
    clip = current_clip(state)
    if clip is None or clip.is_empty:
        state.info("No clip to bake")
        return None
    if busy(state):
        return None

    def work(progress):
        m = _motion_of(clip, progress, 0.9)
        progress(0.9, "making keys")
        out = anim.clip_from_motion(m, name=f"{clip.name}_baked")
        progress(1.0)
        return out.replace(base=clip.base)

    def apply(new: Clip) -> None:
        if _put_clip(state, clip, new, False, f"bake {clip.name}"):
            state.info(f"Baked {clip.name!r}: {new.n_frames} frames as {current_clip(state).name!r}")

    return state.editing.tasks.start(f"Bake {clip.name}", work, apply,
                                     _fail(state, f"Cannot bake {clip.name!r}"))


__all__ = ["bake_async", "busy", "import_bvh_async", "reduce_keys_async"]
