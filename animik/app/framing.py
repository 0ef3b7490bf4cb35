"""Where the camera looks: framing the character, the selection, a newly opened document.

No GL. Used by the keys (F), by opening documents and by undo across documents.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..kinematics import forward_kinematics
from .camera import OrbitCamera
from .state import AppState

#: At most this many frames of a motion are measured to frame it.
FRAME_SAMPLES = 120


def _body_joints(skel, joint_positions: np.ndarray) -> np.ndarray:
    """``(J,)`` bool: the joints that are the body. A root that does not move over the frames
    is left out when it has children (a BVH's ``joint_Root`` at the origin under moving hips,
    a long bone away from the figure); ``joint_positions`` is ``(T, J, 3)``."""
    keep = np.ones(skel.n_joints, dtype=bool)
    if skel.n_joints > 1 and np.ptp(joint_positions[:, 0], axis=0).max() < 1e-6:
        keep[0] = False
    return keep


def motion_points(state: AppState) -> np.ndarray | None:
    """``(N, 3)`` the body's joints and sites over the document's whole motion (a BVH's
    frames, sampled), or None when the document has no motion."""
    m = state.doc.motion
    if m is None or m.n_frames == 0 or m.skeleton is not state.skeleton:
        return None
    q = m.q[np.unique(np.linspace(0, m.n_frames - 1, FRAME_SAMPLES).round().astype(np.int64))]
    fk = forward_kinematics(state.skeleton, q)
    keep = _body_joints(state.skeleton, fk.joint_positions)
    return np.concatenate([fk.joint_positions[:, keep].reshape(-1, 3),
                           fk.site_positions.reshape(-1, 3)])


def body_centre(state: AppState) -> np.ndarray:
    """``(3,)`` the middle of the body in the current pose (its joints' bounding box; a static
    root joint left out)."""
    fk = state.fk
    pj = fk.joint_positions
    keep = np.ones(len(pj), dtype=bool)
    if state.doc.motion is not None and len(pj) > 1:
        m = state.doc.motion
        if m.skeleton is state.skeleton and np.ptp(m.q[:, state.skeleton.joint_dofs(0)],
                                                   axis=0).max(initial=0.0) < 1e-9:
            keep[0] = False
    pts = pj[keep]
    return 0.5 * (pts.min(axis=0) + pts.max(axis=0))


def follow_playback(state: AppState) -> None:
    """Camera follow: while the timeline plays (and ``state.follow_playback``), the camera's
    target moves with the body's centre over the ground (its height stays: no bobbing)."""
    if not (state.follow_playback and state.playing):
        state.follow_anchor = None
        return
    c = body_centre(state)
    if state.follow_anchor is not None:
        d = c - state.follow_anchor
        d[2] = 0.0
        state.camera.target = state.camera.target + d
    state.follow_anchor = c


def setup_camera(state: AppState, camera: Mapping | None) -> None:
    """Frame the whole character from the default direction — a BVH document over its whole
    motion — then apply a saved ``camera`` (a scene's) if any; that view becomes Home."""
    cam = state.camera
    fk = state.fk
    cam.yaw, cam.pitch = OrbitCamera(np.zeros(3)).yaw, OrbitCamera(np.zeros(3)).pitch
    pts = motion_points(state)
    if pts is None:
        keep = _body_joints(state.skeleton, fk.joint_positions[None])
        keep[0] = True  # one pose: nothing says the root is not part of the body
        pts = np.concatenate([fk.joint_positions[keep], fk.site_positions])
    cam.frame(pts, margin=1.15)
    if camera:
        cam.apply_dict(dict(camera))
    cam.set_home()


def selection_points(state: AppState) -> np.ndarray:
    """Points to frame with F: the selected handle or joint (with its subtree), else everything."""
    fk = state.fk
    skel = state.skeleton
    if state.selected_site is not None:
        i = skel.site_index(state.selected_site)
        e = state.doc.effectors[i]
        pts = [fk.site_positions[i]] + ([e.position] if e.active else [])
        j = skel.site_joint[i]
        pts.append(fk.joint_positions[j])
        return np.array(pts)
    if state.selected_joint is not None:
        j = state.selected_joint
        sub = skel.joint_ancestor_mask[:, j]
        pts = fk.joint_positions[sub]
        p = skel.parents[j]
        if p >= 0:
            pts = np.concatenate([pts, fk.joint_positions[p][None]])
        return pts
    return np.concatenate([fk.joint_positions, fk.site_positions])


def frame_selected(state: AppState) -> None:
    pts = selection_points(state)
    cam = state.camera
    d = cam.distance
    cam.frame(pts, margin=1.6)
    if state.selected_site is None and state.selected_joint is None:
        return
    cam.distance = min(max(cam.distance, 0.4), max(d, 0.4))

