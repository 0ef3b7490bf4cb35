"""Where the camera looks: framing the character, the selection, a newly opened document.

No GL. Used by the keys (F), by opening documents and by undo across documents.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .camera import OrbitCamera
from .state import AppState


def setup_camera(state: AppState, camera: Mapping | None) -> None:
    """Frame the whole character from the default direction, then apply a saved ``camera``
    (a scene's) if any; that view becomes Home."""
    cam = state.camera
    fk = state.fk
    cam.yaw, cam.pitch = OrbitCamera(np.zeros(3)).yaw, OrbitCamera(np.zeros(3)).pitch
    cam.frame(np.concatenate([fk.joint_positions, fk.site_positions]), margin=1.15)
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

