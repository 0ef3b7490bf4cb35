"""Retarget mode's view: the source skeleton drawn beside the target, only the editable
handles, and the names over the two."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...instances import ViewGeometry, cylinder_instances, sphere_instances
from ...state import AppState
from .session import SOURCE_BONE, SOURCE_JOINT, current


def decorate_view(state: AppState, geom: ViewGeometry) -> ViewGeometry:
    """The view geometry in retarget mode: the source skeleton drawn beside the target, and
    only the editable effectors' handles (picking uses the same geometry)."""
    link = current(state)
    sess = link.session
    skel = state.skeleton
    fk = state.fk
    # handles of the sites the retargeter does not drive are hidden
    keep = np.array([s in sess.editable for s in skel.site_names], bool)
    if not keep.all() and len(geom.handle_sites) == skel.n_sites:
        hidden = np.asarray(geom.handle_pos[~keep], np.float32)
        fs = geom.free_spheres
        if len(fs) and len(hidden):
            match = (fs[:, None, 9:12] == hidden[None, :, :]).all(axis=2).any(axis=1)
            fs = fs[~match]
        geom = dataclasses.replace(geom, free_spheres=fs, handle_sites=geom.handle_sites[keep],
                                   handle_pos=geom.handle_pos[keep],
                                   handle_radius=geom.handle_radius[keep])
    pj, ps = sess.source_points(sess.frame, fk.joint_positions[sess.tgt_hips])
    par, child, sites = sess._bones
    a = np.concatenate([pj[par], pj[sess.motion.skeleton.site_joint[sites]]])
    b = np.concatenate([pj[child], ps[sites]])
    spheres = sphere_instances(pj[sess.body], sess.src_joint_r, SOURCE_JOINT)
    cyl = cylinder_instances(a, b, sess.src_bone_r, SOURCE_BONE)
    return dataclasses.replace(geom, spheres=np.concatenate([geom.spheres, spheres]),
                               cylinders=np.concatenate([geom.cylinders, cyl]))


def label_points(state: AppState) -> list[tuple[str, np.ndarray]]:
    """``[(text, world point)]``: names above the target and the source (the panel draws them)."""
    link = current(state)
    if link is None:
        return []
    sess = link.session
    fk = state.fk
    pj, _ = sess.source_points(sess.frame, fk.joint_positions[sess.tgt_hips])
    pj = pj[sess.body]
    top_t = fk.joint_positions[fk.joint_positions[:, 2].argmax()] + [0.0, 0.0, 0.18]
    top_s = pj[pj[:, 2].argmax()] + [0.0, 0.0, 0.18]
    return [(f"target: {sess.rt.target.name}", top_t), (f"source: {sess.source_name}", top_s)]

