"""Baking the edited retargeted motion into the document, and exporting it as BVH."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ....anim import clip_from_motion
from ....io.bvh_compat import write_bvh_compatible
from ....motion import Motion
from ...edits import USER_ERRORS, commit, describe, set_doc
from ...state import AppState
from .edits import _edits_at, _spec, edit_rows
from .session import current


def bake_motion(state: AppState):
    """Every frame of the clip retargeted with the current edits (pins, kept offsets).

    Returns:
        ``(motion on the target rig, RetargetReport, edits key)``.
    """
    link = current(state)
    sess = link.session
    rt = sess.rt
    items, key = _spec(state, link, dragging=False)
    t0 = time.perf_counter()
    T = sess.n_frames
    q = np.empty((T, rt.target.n_dof))
    targets = np.empty((T, len(rt.effector_sites), 3))
    iters = np.zeros(T, dtype=np.int64)
    crouch = np.zeros(T)
    st = None
    for t in range(T):
        q[t], st = rt.step(t, state=st, edits=_edits_at(sess, items, t, st))
        targets[t], iters[t], crouch[t] = st.targets, st.iterations, st.crouch
    report = rt.report(q, targets, iters, time.perf_counter() - t0, crouch)
    name = f"{sess.source_name}_{rt.target.name}"
    meta = {"source": sess.source_path or sess.source_name, "clip": name,
            "retarget_source": sess.source_path or sess.source_name,
            "retarget_report": report.to_dict(),
            "retarget_edits": [{"site": s, "kind": k, "frames": list(link.range_of(s)),
                                **({"offset_m": o.tolist()} if o is not None else {})}
                               for s, k, o in edit_rows(state)]}
    return Motion(rt.target, q, sess.fps, meta=meta), report, key


def bake(state: AppState) -> Motion | None:
    """Bake the edited retargeted motion (all frames) into the document (one undo step): a
    keyframe clip in ``Document.clips`` and ``RetargetLink.baked`` (exported by
    :func:`export_bvh`).

    Returns:
        The baked motion, or None after reporting an error.
    """
    link = current(state)
    if link is None:
        return None
    try:
        motion, report, key = bake_motion(state)
    except USER_ERRORS as e:
        state.error(f"Cannot bake the retarget: {describe(e)}")
        return None
    doc = state.doc.replace(mode=link.replace(baked=motion, baked_key=key, report=report))
    name = str(motion.meta["clip"])
    try:
        names = {c.name for c in doc.clips}
        base, i = name, 2
        while name in names:
            name, i = f"{base}_{i}", i + 1
        clip = clip_from_motion(motion, name=name)
        doc = doc.replace(clips=(*doc.clips, clip), clip=len(doc.clips))
    except USER_ERRORS as e:
        state.error(f"Baked, but cannot make a clip of it: {describe(e)}")
    set_doc(state, doc)
    commit(state, "bake retarget")
    state.info(f"Baked {motion.n_frames} frames as {name!r} (a clip)")
    return motion


def default_export_path(state: AppState) -> Path:
    """``<source>_<target>.bvh`` in the folder last written to or the working directory (not
    next to the source file, which may be read-only)."""
    sess = current(state).session
    return state.output_dir() / f"{sess.source_name}_{sess.rt.target.name}.bvh"


def export_bvh(state: AppState, path: str | Path | None = None) -> Path | None:
    """Write the edited retargeted motion as BVH (atomically; baked now unless the last bake
    has the current edits). Body95-like rigs BVH cannot hold are written with baked Euler
    channels (:func:`animik.io.bvh_compat.write_bvh_compatible`).

    Returns:
        The path written, or None after reporting an error.
    """
    link = current(state)
    if link is None:
        return None
    path = Path(path).expanduser() if path else default_export_path(state)
    if path.suffix.lower() != ".bvh":
        path = path.with_name(path.name + ".bvh")
    try:
        _, key = _spec(state, link, dragging=False)
        motion = link.baked if link.baked is not None and link.baked_key == key else None
        if motion is None:
            motion = bake_motion(state)[0]
        _, layout = write_bvh_compatible(motion, path)
    except USER_ERRORS as e:
        state.error(f"Cannot export {path}: {describe(e)}")
        return None
    state.write_dir = path.parent
    state.info(f"Exported {motion.n_frames} frames to {path}"
               + (" (baked Euler channels)" if layout == "baked" else ""))
    return path

