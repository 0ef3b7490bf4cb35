"""Keys: key the pose, a joint or the effector targets at the playhead, auto-key, and
deleting / moving keys and setting their interpolation. Each is one undo step (auto-key is part
of the edit's)."""

from __future__ import annotations

from ... import anim
from ...anim import Clip
from ..edits import USER_ERRORS, commit, set_doc
from ..solve import solver_options, step_ik
from ..state import PINNED, AppState
from .clips import _set_clip, ensure_clip
from .marks import ALL, current_clip, frame_of, row_selection, snap
from .playhead import show_time


def key_pose(state: AppState, joints: list[str] | None = None, label: str | None = None) -> bool:
    """Key the current pose at the playhead: every joint with DoFs, or only ``joints`` (K)."""
    if state.drag is not None:
        return False
    clip = ensure_clip(state)
    t = snap(clip, state.doc.time)
    try:
        new = anim.add_key(clip, t, state.doc.q, joints=joints)
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    if state.doc.time != t:
        set_doc(state, state.doc.replace(time=t))
    what = "pose" if joints is None else ", ".join(joints)
    commit(state, label or f"key {what} at frame {frame_of(new, t)}")
    return True


def key_joint(state: AppState) -> bool:
    """Key the selected joint at the playhead (Shift+K)."""
    skel = state.skeleton
    j = state.selected_joint
    if j is None or not 0 <= j < skel.n_joints or not len(skel.joint_dofs(j)):
        state.info("Select a joint with DoFs to key it (click a joint or bone)")
        return False
    return key_pose(state, [skel.joint_names[j]])


def _effector_keys(state: AppState, clip: Clip, t: float, sites) -> Clip:
    doc = state.doc
    fk = state.fk
    skel = doc.skeleton
    if not clip.effectors:
        # the clip's IK solves like the app's (its solver and options); the keyed joint poses,
        # not the app's fixed reference, shape the null space
        opts = {k: v for k, v in solver_options(doc.solver).items() if k != "reference"}
        clip = anim.set_ik(clip, solver=doc.solver.name, options=opts)
    for site in sites:
        e = doc.effector(site)
        tr = clip.effector(site)
        rot = e.rotation
        if tr is not None:  # a track keeps rotations on all keys or on none
            if tr.rotations is None:
                rot = None
            elif rot is None:
                rot = fk.site_rotations[skel.site_index(site)]
        clip = anim.add_effector_key(clip, site, t, e.position, rot, pinned=e.mode == PINNED,
                                     weight=e.weight)
    return clip


def key_targets(state: AppState, sites: list[str] | None = None) -> bool:
    """Key the targets of the constrained effectors (or of ``sites``) at the playhead (Alt+K).

    Makes the clip IK-driven: playback solves IK for the interpolated targets every frame.
    """
    if state.drag is not None:
        return False
    doc = state.doc
    sites = [e.site for e in doc.effectors if e.active and (sites is None or e.site in sites)]
    if not sites:
        state.info("No constrained effectors to key: drag a handle or pin one (P) first")
        return False
    clip = ensure_clip(state)
    t = snap(clip, doc.time)
    try:
        new = _effector_keys(state, clip, t, sites)
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    commit(state, f"key {len(sites)} target{'s' if len(sites) > 1 else ''} at frame "
                          f"{frame_of(new, t)}")
    return True


def _settle(state: AppState, max_steps: int = 12) -> None:
    """Run the IK until it converges (at most ``max_steps`` frames' worth)."""
    for _ in range(max_steps):
        ik = state.ik
        if not state.live_ik or ik.failed or (ik.converged and ik.solved_version == state.version):
            return
        step_ik(state)


def auto_key(state: AppState, joints: list[str] | None = None, site: str | None = None) -> bool:
    """With auto-key on: key the edit just made at the playhead (the caller commits).

    After a handle drag (``site``): the IK settles, then the whole resulting pose is keyed, and
    the dragged effector's target too when the clip already has a target track for it. After a
    DoF edit: the ``joints`` edited.

    Returns:
        True when something was keyed.
    """
    if not state.auto_key:
        return False
    _settle(state)
    clip = ensure_clip(state)
    t = snap(clip, state.doc.time)
    try:
        new = anim.add_key(clip, t, state.doc.q, joints=joints)
        if site is not None and new.effector(site) is not None and state.doc.effector(site).active:
            new = _effector_keys(state, new, t, [site])
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    return True


def _key_at(state: AppState, t: float | None, row: str | None):
    """``(clip, t, row)`` of the key an action targets: the given one, else the selected key;
    ``clip`` is None when there is no clip or no key to act on."""
    if t is None or row is None:
        if state.selected_key is None:
            return None, t, row
        t, row = state.selected_key
    return current_clip(state), t, row


def delete_key(state: AppState, t: float | None = None, row: str | None = None) -> bool:
    """Delete the keys at ``t`` in a timeline row (default: the selected key)."""
    clip, t, row = _key_at(state, t, row)
    if clip is None:
        return False
    try:
        new = anim.delete_key(clip, t, **row_selection(clip, row))
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    state.selected_key = None
    _set_clip(state, new)
    show_time(state, state.doc.time)
    commit(state, f"delete key at frame {frame_of(clip, t)}")
    return True


def move_key(state: AppState, t_from: float, t_to: float, row: str = ALL) -> bool:
    """Move the keys at ``t_from`` to the frame nearest ``t_to`` (keys there are replaced)."""
    clip = current_clip(state)
    if clip is None:
        return False
    t_to = snap(clip, t_to)
    if abs(t_to - t_from) <= anim.TIME_EPS:
        return False
    try:
        new = anim.move_key(clip, t_from, t_to, **row_selection(clip, row))
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    state.selected_key = (t_to, row)
    show_time(state, state.doc.time)
    commit(state, f"move key to frame {frame_of(new, t_to)}")
    return True


def set_key_interpolation(state: AppState, mode: str, t: float | None = None,
                          row: str | None = None) -> bool:
    """Interpolation of the keys at ``t`` in a row (default: the selected key)."""
    clip, t, row = _key_at(state, t, row)
    if clip is None:
        return False
    try:
        new = anim.set_interpolation(clip, mode, times=[t], **row_selection(clip, row))
    except USER_ERRORS as e:
        state.error(str(e))
        return False
    _set_clip(state, new)
    show_time(state, state.doc.time)
    commit(state, f"{mode} key at frame {frame_of(clip, t)}")
    return True

