"""Every user edit of the document: the edit / commit protocol, undo and redo, effector modes,
DoF sliders, solver settings.

No GL and no GUI, so the interaction tests drive the same functions as the window. Every user
edit goes through :func:`set_doc` (which bumps ``state.version``) and ends with
:func:`commit` (one undo step); the per-frame solve (:mod:`animik.app.solve`, a mode's update)
replaces the pose without either.
"""

from __future__ import annotations

import numpy as np

from ..errors import AnimikError
from ..kinematics import forward_kinematics
from ..rotations import axis_angle_to_matrix
from .framing import setup_camera
from .state import FREE, PINNED, TARGET, AppState, Document, Effector, SolverSettings

# Errors a bad file or a bad setting can raise; anything else is a bug and propagates.
USER_ERRORS = (AnimikError, OSError, ValueError, KeyError, UnicodeDecodeError)


def describe(e: BaseException) -> str:
    """A user-facing one-line description of an error."""
    if isinstance(e, OSError) and e.strerror:
        return f"{e.strerror}" + (f": {e.filename}" if e.filename else "")
    return str(e) or type(e).__name__


def report(state: AppState, what: str, e: BaseException) -> None:
    """An error in the banner; a bug (not a user error) also prints its traceback."""
    if not isinstance(e, USER_ERRORS):
        import traceback

        traceback.print_exc()
    state.error(f"{what}: {describe(e)}")


def set_doc(state: AppState, doc: Document) -> None:
    """Replace the document after a user edit (not yet an undo step: see :func:`commit`)."""
    state.doc = doc
    state.version += 1


def commit(state: AppState, label: str) -> bool:
    """Make the current document one undo step (no-op when nothing changed)."""
    return state.history.push(label, state.doc)


def undo(state: AppState) -> bool:
    if state.drag is not None:
        cancel_drag(state)
        return True
    r = state.history.undo()
    if r is None:
        return False
    _restore(state, r[1])
    state.restore_scene_path()
    state.info(f"Undo {r[0]}")
    return True


def redo(state: AppState) -> bool:
    if state.drag is not None:
        return False
    r = state.history.redo()
    if r is None:
        return False
    _restore(state, r[1])
    state.restore_scene_path()
    state.info(f"Redo {r[0]}")
    return True


def _restore(state: AppState, doc: Document) -> None:
    skel_changed = doc.skeleton is not state.doc.skeleton
    state.playing = False
    state.doc = doc
    state.version += 1
    state.ik.solver_state = None  # the filter states belong to the pose we left
    if skel_changed:
        state.selected_site = state.hover_site = None
        state.selected_joint = state.hover_joint = None
        setup_camera(state, None)


def cancel_drag(state: AppState) -> None:
    """Abort a drag in progress, restoring the document from before it (Esc)."""
    if state.drag is not None:
        set_doc(state, state.drag.start_doc)
        state.drag = None
        state.ik.solver_state = None


def set_dof(state: AppState, k: int, value: float) -> None:
    """Forward-kinematics edit of DoF ``k`` (clipped into its limits).

    Constrained effectors that this DoF moves are carried along (their targets follow the FK
    edit), so the IK does not pull the joint back; the others keep their targets.
    """
    skel = state.skeleton
    state.playing = False  # an edit stops playback at the playhead
    value = float(np.clip(value, skel.lower[k], skel.upper[k]))
    q = state.doc.q.copy()
    q[k] = value
    doc = state.doc.replace(q=q)
    moved = skel.site_dof_mask[:, k]
    if moved.any():
        fk = forward_kinematics(skel, q)
        effs = list(doc.effectors)
        for i, e in enumerate(effs):
            if moved[i] and e.active:
                rot = fk.site_rotations[i] if e.oriented else None
                effs[i] = e.replace(position=fk.site_positions[i], rotation=rot)
        doc = doc.replace(effectors=tuple(effs))
    set_doc(state, doc)


def set_effector(state: AppState, eff: Effector) -> None:
    set_doc(state, state.doc.with_effector(eff))


def set_mode(state: AppState, site: str, mode: str, label: str | None = None) -> None:
    """Free / target / pin an effector (one undo step). A newly constrained effector's target is
    where its site is now."""
    e = state.doc.effector(site)
    if e.mode == mode:
        return
    if not e.active:
        i = state.skeleton.site_index(site)
        fk = state.fk
        e = e.replace(position=fk.site_positions[i],
                      rotation=fk.site_rotations[i] if e.oriented else None)
    set_effector(state, e.replace(mode=mode))
    commit(state, label or f"{mode} {site}")


def toggle_pin(state: AppState, site: str) -> None:
    """P: pin an effector where it is, or turn a pin back into a target."""
    e = state.doc.effector(site)
    set_mode(state, site, TARGET if e.mode == PINNED else PINNED,
             f"{'unpin' if e.mode == PINNED else 'pin'} {site}")


def free(state: AppState, site: str) -> None:
    set_mode(state, site, FREE, f"free {site}")


def set_oriented(state: AppState, site: str, on: bool) -> None:
    """Turn an effector's target into a 6-D target (position + orientation) or back (undoable)."""
    e = state.doc.effector(site)
    if e.oriented == on:
        return
    i = state.skeleton.site_index(site)
    rot = np.array(state.fk.site_rotations[i]) if on else None
    if not e.active and on:
        e = e.replace(mode=TARGET, position=state.fk.site_positions[i])
    set_effector(state, e.replace(rotation=rot))
    commit(state, f"{'orient' if on else 'unorient'} {site}")


def free_all(state: AppState) -> None:
    effs = tuple(e.replace(mode=FREE) for e in state.doc.effectors)
    set_doc(state, state.doc.replace(effectors=effs))
    commit(state, "free all")


def reset_pose(state: AppState) -> None:
    """Rest pose, every effector free (undoable)."""
    d = state.doc
    doc = Document.new(state.skeleton, d.rig, name=d.name, solver=d.solver, motion=d.motion,
                       clips=d.clips, clip=d.clip, time=d.time, mesh=d.mesh)
    set_doc(state, doc)
    commit(state, "reset pose")


def set_frame(state: AppState, frame: int) -> None:
    """Take the pose from frame ``frame`` of the BVH clip (targets are carried along)."""
    m = state.doc.motion
    if m is None:
        return
    frame = int(np.clip(frame, 0, m.n_frames - 1))
    q = np.array(m.q[frame])
    fk = forward_kinematics(state.skeleton, q)
    effs = tuple(e.replace(position=fk.site_positions[i],
                           rotation=fk.site_rotations[i] if e.oriented else None)
                 for i, e in enumerate(state.doc.effectors))
    set_doc(state, state.doc.replace(q=q, frame=frame, effectors=effs))


def set_solver(state: AppState, settings: SolverSettings) -> None:
    """Apply new solver settings live (commit separately, when the widget edit ends)."""
    set_doc(state, state.doc.replace(solver=settings))
    state.ik.failed = ""
    state.ik.solver_state = None


def rotate_target(rot: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    return axis_angle_to_matrix(np.asarray(axis, float), np.asarray(angle, float)) @ rot

