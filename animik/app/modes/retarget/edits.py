"""Retarget mode's edits: drags as offsets on the retargeted motion, pins, frame ranges that
blend in and out, and turning them into :class:`~animik.retarget.RetargetEdits` per frame."""

from __future__ import annotations

import numpy as np

from ....retarget import RetargetEdits
from ...edits import commit as commit_edit
from ...edits import set_doc
from ...state import FREE, PINNED, TARGET, AppState, Drag
from .session import BLEND_S, RetargetLink, RetargetSession, current, ui_of


def _drag_site(state: AppState, link: RetargetLink) -> str | None:
    """The site being dragged as an offset on the motion (not a pin), or None."""
    d = state.drag
    if d is None or d.kind != "move" or d.site not in link.session.editable:
        return None
    e = state.doc.effector(d.site)
    return d.site if e.active and e.mode != PINNED else None


def _spec(state: AppState, link: RetargetLink, exclude: str | None = None,
          dragging: bool = True) -> tuple[list, tuple]:
    """The edits the document stands for, frame-independent: ``([(site, kind, value, first,
    last)], key)``. ``kind`` is ``"o"`` (an offset on the motion: kept drag edits and the drag
    in progress) or ``"t"`` (a world target: pins, targets without an offset)."""
    sess = link.session
    drag_site = _drag_site(state, link) if dragging else None
    items, key = [], []
    whole = (0, sess.n_frames - 1)
    for e in state.doc.effectors:
        if not e.active or e.site == exclude or e.site not in sess.editable:
            continue
        if e.site == drag_site and sess.drag_offset is not None:
            item = (e.site, "o", np.asarray(sess.drag_offset), *whole)  # the drag: every frame
        elif e.mode == TARGET and e.site in link.offsets:
            item = (e.site, "o", np.asarray(link.offsets[e.site]), *link.range_of(e.site))
        else:
            item = (e.site, "t", np.asarray(e.position), *link.range_of(e.site))
        items.append(item)
        key.append((*item[:2], item[2].tobytes(), *item[3:]))
    return items, tuple(key)


def blend_weight(frame: int, first: int, last: int, n_blend: int) -> float:
    """1 within ``[first, last]``, easing to 0 over ``n_blend`` frames outside (smoothstep)."""
    if first <= frame <= last:
        return 1.0
    d = first - frame if frame < first else frame - last
    if d > n_blend:
        return 0.0
    w = 1.0 - d / (n_blend + 1.0)
    return w * w * (3.0 - 2.0 * w)


def _edits_at(sess: RetargetSession, items: list, frame: int, state_in):
    """:class:`RetargetEdits` of ``items`` (:func:`_spec`) on ``frame`` (solved from
    ``state_in``). A world target being blended in or out is taken between the site's
    retargeted target on this frame and the edit: a solve of the frame without edits gives it
    (the effector targets do not depend on the edits), on blend frames only."""
    n_blend = max(int(round(BLEND_S * sess.fps)), 1)
    targets, offsets = {}, {}
    probe = None
    for site, kind, value, first, last in items:
        w = blend_weight(frame, first, last, n_blend)
        if w <= 0.0:
            continue
        if kind == "o":
            offsets[site] = w * value
        elif w >= 1.0:
            targets[site] = value
        else:
            if probe is None:
                probe = sess.rt.step(frame, state=state_in)[1]
            base = sess.target_of(probe, site)
            targets[site] = base + w * (value - base)
    return RetargetEdits(targets=targets, offsets=offsets)


def _bases(sess: RetargetSession, st, edits) -> dict[str, np.ndarray | None]:
    """Per editable site, its target without edits on the frame ``st`` solved (None when it
    had a world target there)."""
    return {s: (sess.target_of(st, s) - edits.offsets[s] if s in edits.offsets
                else None if s in edits.targets else sess.target_of(st, s))
            for s in sess.editable}


def edits_of(state: AppState):
    """The :class:`~animik.retarget.RetargetEdits` of the current document on the current
    frame (the drag in progress included)."""
    link = current(state)
    if link is None:
        return None
    items, _ = _spec(state, link)
    return _edits_at(link.session, items, link.session.frame, link.session.solve_input())


def base_target(state: AppState, site: str) -> np.ndarray:
    """Where the retarget (with the other edits, without this site's) puts ``site`` on the
    current frame, world m."""
    link = current(state)
    sess = link.session
    items, _ = _spec(state, link, exclude=site)
    edits = _edits_at(sess, items, sess.frame, sess.solve_input())
    _, st = sess.rt.step(sess.frame, state=sess.solve_input(), edits=edits)
    return sess.target_of(st, site)


def set_range(state: AppState, site: str, first: int, last: int, commit: bool = True) -> None:
    """Frames where ``site``'s edit holds (blending in / out outside them); undoable."""
    link = current(state)
    if link is None:
        return
    n = link.session.n_frames
    first = int(np.clip(first, 0, n - 1))
    last = int(np.clip(last, first, n - 1))
    if link.range_of(site) == (first, last):
        return
    ranges = dict(link.ranges)
    ranges[site] = (first, last)
    set_doc(state, state.doc.replace(mode=link.replace(ranges=ranges)))
    if commit:
        commit_edit(state, f"range {site}")


def pin(state: AppState, site: str) -> None:
    """P in retarget mode: pin ``site`` where it is from the current frame to the end of the
    clip, or free a pinned site (one undo step)."""
    link = current(state)
    if link is None or site not in link.session.editable:
        return
    e = state.doc.effector(site)
    offsets, ranges = dict(link.offsets), dict(link.ranges)
    offsets.pop(site, None)
    if e.mode == PINNED:
        e = e.replace(mode=FREE, rotation=None)
        ranges.pop(site, None)
        label = f"unpin {site}"
    else:
        i = state.skeleton.site_index(site)
        e = e.replace(mode=PINNED, position=state.fk.site_positions[i], rotation=None)
        ranges[site] = (link.session.frame, link.session.n_frames - 1)
        label = f"pin {site}"
    set_doc(state, state.doc.with_effector(e).replace(
        mode=link.replace(offsets=offsets, ranges=ranges)))
    commit_edit(state, label)


def _sync_drag(state: AppState, link: RetargetLink) -> None:
    """Turn the controller's drag into an offset on the motion.

    The controller puts the dragged handle where the cursor is (a world point); that point
    minus the site's retargeted target on the frame shown is the offset. Between mouse events
    the offset stays, so while the clip plays the handle rides along with the motion (and the
    drag plane with it, see :func:`_write_pose`); each mouse move puts it under the cursor.
    """
    sess = link.session
    d = state.drag
    if d is None or d.kind != "move":
        sess.drag_id = sess.drag_offset = sess.drag_shown = None
        return
    if sess.drag_id != id(d):
        sess.drag_id, sess.drag_offset, sess.drag_shown = id(d), None, None
    site = _drag_site(state, link)
    if site is None:
        return
    p = np.asarray(state.doc.effector(site).position)
    if sess.drag_shown is not None and np.array_equal(p, sess.drag_shown):
        return  # no mouse event since the last frame
    base = sess.bases.get(site)
    if base is None:
        base = base_target(state, site)
    sess.drag_offset = p - base
    sess.drag_shown = p.copy()


def end_drag(state: AppState, drag: Drag) -> None:
    """A handle drag ended in retarget mode (called before the drag is committed): the edit is
    kept as an offset on the motion, cleared, or pinned (see the module docstring)."""
    link = current(state)
    if link is None or drag.kind != "move":
        return
    sess = link.session
    site = drag.site
    e = state.doc.effector(site)
    offsets, ranges = dict(link.offsets), dict(link.ranges)
    if site not in sess.editable:
        e = e.replace(mode=FREE)
        offsets.pop(site, None)
    elif e.mode == PINNED:
        offsets.pop(site, None)  # a pin dragged elsewhere: held there
    elif state.pin_on_release and drag.start_doc.effector(site).mode == FREE:
        e = e.replace(mode=PINNED)  # pinned where the handle is now, from this frame on
        offsets.pop(site, None)
        ranges[site] = (sess.frame, sess.n_frames - 1)
    elif ui_of(state).keep_edits:
        off = sess.drag_offset if sess.drag_id == id(drag) else None
        offsets[site] = off if off is not None else np.asarray(e.position) - base_target(state, site)
        e = e.replace(mode=TARGET)
    else:
        e = e.replace(mode=FREE)
        offsets.pop(site, None)
    e = e.replace(rotation=None)
    set_doc(state, state.doc.with_effector(e).replace(
        mode=link.replace(offsets=offsets, ranges=ranges)))


def clear_edit(state: AppState, site: str) -> None:
    """Free one effector (its pin or offset goes; one undo step)."""
    link = current(state)
    if link is None:
        return
    offsets, ranges = dict(link.offsets), dict(link.ranges)
    offsets.pop(site, None)
    ranges.pop(site, None)
    e = state.doc.effector(site).replace(mode=FREE, rotation=None)
    set_doc(state, state.doc.with_effector(e).replace(
        mode=link.replace(offsets=offsets, ranges=ranges)))
    commit_edit(state, f"clear edit {site}")


def clear_edits(state: AppState) -> None:
    """Free every effector: the pure retargeted motion again (one undo step)."""
    link = current(state)
    if link is None:
        return
    effs = tuple(e.replace(mode=FREE, rotation=None) for e in state.doc.effectors)
    set_doc(state, state.doc.replace(effectors=effs,
                                             mode=link.replace(offsets={}, ranges={})))
    commit_edit(state, "clear retarget edits")


def edit_rows(state: AppState) -> list[tuple[str, str, np.ndarray | None]]:
    """``[(site, "pinned" | "offset" | "target" | "dragging", offset or None)]``: the edits in
    effect."""
    link = current(state)
    if link is None:
        return []
    rows = []
    drag_site = _drag_site(state, link)
    for e in state.doc.effectors:
        if not e.active or e.site not in link.session.editable:
            continue
        if e.site == drag_site:
            off = link.session.drag_offset
            rows.append((e.site, "dragging", None if off is None else np.array(off)))
        elif e.mode == PINNED:
            rows.append((e.site, "pinned", None))
        elif e.site in link.offsets:
            rows.append((e.site, "offset", np.asarray(link.offsets[e.site])))
        else:
            rows.append((e.site, "target", None))
    return rows

