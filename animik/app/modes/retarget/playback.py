"""Retarget mode per frame: the playhead and transport, the solve of the frame(s) with the
current edits (:func:`update`, in place of the pose mode's IK), the live numbers."""

from __future__ import annotations

import math
import time

import numpy as np

from ....kinematics import FKResult
from ...edits import USER_ERRORS, commit, describe, set_doc
from ...state import FREE, TARGET, AppState
from .edits import _bases, _drag_site, _edits_at, _spec, _sync_drag
from .session import MAX_CATCHUP, MAX_DT, RetargetLink, RetargetSession, current


def set_playing(state: AppState, on: bool) -> None:
    link = current(state)
    if link is None:
        return
    sess = link.session
    if on and sess.frame >= sess.n_frames - 1 and not sess.loop:
        sess.seek_to = 0
        sess.clock = 0.0
    sess.playing = bool(on)


def seek(state: AppState, frame: int) -> None:
    """Go to ``frame`` (solved on the next update; the clip keeps playing if it was)."""
    link = current(state)
    if link is None:
        return
    sess = link.session
    f = int(np.clip(frame, 0, sess.n_frames - 1))
    sess.seek_to = f
    sess.clock = float(f)


def step_frames(state: AppState, n: int) -> None:
    link = current(state)
    if link is not None:
        seek(state, link.session.frame + n)


def update(state: AppState, dt: float) -> None:
    """One app frame in retarget mode: advance the playhead, solve the frame(s) with the
    current edits, write the pose into the document (replaces the app's IK step)."""
    link = current(state)
    sess = link.session
    _drop_uneditable(state, link)
    _sync_drag(state, link)
    n = sess.n_frames
    goal = sess.frame
    if sess.seek_to is not None:
        goal = sess.seek_to
        sess.seek_to = None
        sess.clock = float(goal)
    elif sess.playing and n > 1:
        sess.clock += min(max(float(dt), 0.0), MAX_DT) * sess.fps * sess.speed
        if sess.loop:
            sess.clock %= n  # frame i shows for clock in [i, i + 1): wrap past the last one
        elif sess.clock >= n - 1:
            sess.clock = float(n - 1)
            sess.playing = False
        goal = int(math.floor(sess.clock))
    items, key = _spec(state, link)
    t0 = time.perf_counter()
    rt = sess.rt
    try:
        if goal == sess.frame and sess.state is not None:
            if key == sess.solved_key and sess.state.converged:
                state.stats.record(state.stats.last_error_mm, 0, 0.0)  # nothing to do
                return
            st_in = sess.solve_input()
            edits = _edits_at(sess, items, goal, st_in)
            q, st = rt.step(goal, state=st_in, edits=edits)
        elif sess.state is not None and 0 < goal - sess.frame <= MAX_CATCHUP:
            st = sess.state
            for f in range(sess.frame + 1, goal + 1):
                sess.input_state = st
                edits = _edits_at(sess, items, f, st)
                q, st = rt.step(f, state=st, edits=edits)
                if f < goal:
                    _record(state, sess, st, 0.0, stats_only=True)
        else:  # a jump: cold start
            sess.input_state = None
            edits = _edits_at(sess, items, goal, None)
            q, st = rt.step(goal, state=None, edits=edits)
    except Exception as e:  # a failed solve must not take the session down
        if not isinstance(e, USER_ERRORS):
            import traceback

            traceback.print_exc()
        sess.playing = False
        msg = f"Retarget step failed at frame {goal}: {describe(e)}"
        if msg != sess.error:
            sess.error = msg
            state.error(msg)
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    sess.error = ""
    sess.state, sess.frame, sess.solved_key = st, goal, key
    sess.bases = _bases(sess, st, edits)
    _record(state, sess, st, 1e3 * (time.perf_counter() - t0))
    _write_pose(state, link, st)
    _adopt_frames(state, st)
    if sess.follow and sess.playing:
        _follow(state, sess)


def _adopt_frames(state: AppState, st) -> None:
    """The solver's frames at the solved pose (``st.fk``, on the retargeter's solve skeleton:
    the target's joints, the target's sites first) become the frame's kinematic snapshot, so the
    view and picking run no forward kinematics of their own."""
    fk = st.fk
    skel = state.skeleton
    if fk is None or fk.joint_positions.shape[0] != skel.n_joints \
            or fk.site_positions.shape[0] < skel.n_sites:
        return
    ns = skel.n_sites
    state.adopt_kinematics(state.doc.q, FKResult(fk.joint_rotations, fk.joint_positions,
                                                 fk.site_rotations[:ns], fk.site_positions[:ns]))


def _record(state: AppState, sess: RetargetSession, st, ms: float, stats_only: bool = False) -> None:
    q = np.asarray(st.q)
    err = sess.errors_mm(q, st)
    tgt = sess.rt.target
    viol = int(np.sum((q < tgt.lower - 1e-9) | (q > tgt.upper + 1e-9)))
    sess.stats.record(err, st.iterations, st.converged, viol, ms, np.asarray(st.contact), st.crouch)
    if not stats_only:
        state.stats.record(float(err.max()) if len(err) else 0.0, st.iterations, ms)


def _write_pose(state: AppState, link: RetargetLink, st) -> None:
    """The solved pose into the document; the handle of an offset edit (kept, or the drag in
    progress) goes where its target is on this frame."""
    doc = state.doc
    sess = link.session
    drag_site = _drag_site(state, link)
    effs = None
    for i, e in enumerate(doc.effectors):
        if e.mode != TARGET:
            continue
        if e.site == drag_site:
            if sess.drag_offset is None and e.site not in link.offsets:
                continue
        elif e.site not in link.offsets:
            continue
        p = sess.target_of(st, e.site)
        if e.site == drag_site:
            sess.drag_shown = p.copy()
            if sess.playing:  # the drag plane moves with the handle (the controller's next move)
                state.drag.start_position = p.copy()
        if not np.array_equal(p, e.position):
            if effs is None:
                effs = list(doc.effectors)
            effs[i] = e.replace(position=p)
    # the per-frame path: the solved pose enters without re-validating the rest of the document
    state.doc = (doc.with_pose(st.q) if effs is None
                 else doc.with_pose(st.q).replace(effectors=tuple(effs)))


def _drop_uneditable(state: AppState, link: RetargetLink) -> None:
    """Constraints on sites the retargeter does not drive (set from a menu or the Effectors
    panel) are freed, with a notice."""
    editable = link.session.editable
    bad = [e for e in state.doc.effectors if e.active and e.site not in editable]
    if not bad or (state.drag is not None and state.drag.site in {e.site for e in bad}):
        return
    doc = state.doc
    for e in bad:
        doc = doc.with_effector(e.replace(mode=FREE, rotation=None))
    set_doc(state, doc)
    commit(state, "free non-retarget effectors")
    state.info(f"In retarget mode only {', '.join(editable)} can be pinned or dragged")


def _follow(state: AppState, sess: RetargetSession) -> None:
    """Keep the camera on the pair while the clip plays (the user's pan offset is kept)."""
    fk = state.fk
    th = fk.joint_positions[sess.tgt_hips]
    mid = th + 0.5 * sess.side
    mid[2] = 0.0
    if sess.follow_mid is not None:
        state.camera.target = state.camera.target + (mid - sess.follow_mid)
    sess.follow_mid = mid

