"""What the viewport shows, as plain arrays: instances of a few primitives, built per frame.

:func:`build_view` turns the state into per-primitive instance records
(:mod:`animik.app.instances`, vectorised numpy, no GL) that the renderer uploads as they are,
and that picking uses too, so what is picked is exactly what is drawn: the character, its
handles, error lines and the rotate gizmo, then whatever the current mode adds
(:meth:`animik.app.modes.base.Mode.decorate_view`). :func:`view_geometry` keeps the last
geometry while nothing it depends on changed (:func:`view_key`), so picking on every mouse move
and the frame's render share one build.
"""

from __future__ import annotations

import numpy as np

from ..cache import cached
from ..kinematics import forward_kinematics
from ..skeleton import Skeleton
from . import gizmo, modes, physics
from .instances import (
    ViewGeometry,
    cylinder_instances,
    framed_instances,
    sphere_instances,
)
from .state import PINNED, AppState, ViewCache
from .timeline import onion

# colours (linear-ish RGB in [0, 1])
BONE = (0.70, 0.72, 0.78)
JOINT = (0.86, 0.87, 0.90)
AT_LIMIT = (0.92, 0.20, 0.18)
SELECTED_JOINT = (0.25, 0.80, 0.95)
HOVER_JOINT = (0.60, 0.90, 1.00)
HANDLE_FREE = (0.35, 0.85, 0.45, 0.55)
HANDLE_TARGET = (1.00, 0.80, 0.15, 0.95)
HANDLE_PINNED = (0.85, 0.25, 0.75, 0.95)
HANDLE_SELECTED = (1.00, 1.00, 1.00, 1.00)
ERROR_LINE = (1.00, 0.45, 0.10, 0.95)
RING_COLORS = ((0.95, 0.25, 0.25, 0.95), (0.30, 0.90, 0.30, 0.95), (0.30, 0.50, 1.00, 0.95))

FREE_SCALE = 0.6  # free handles, relative to handle_px
RING_PX = 55.0  # ring radius on screen, pixels
RING_SAMPLES = 64


def skeleton_sizes(state: AppState) -> tuple[np.ndarray, np.ndarray]:
    """``(joint radius (J,), bone radius (J,))`` in m, scaled to the character and its bones.

    Computed from the rest pose (cached on the skeleton) so sizes do not change while posing.
    """
    return cached(state.skeleton, "app.geometry.sizes", lambda: _draw_sizes(state.skeleton))


def _draw_sizes(skel: Skeleton) -> tuple[np.ndarray, np.ndarray]:
    fk = forward_kinematics(skel, skel.rest_q)
    pts = np.concatenate([fk.joint_positions[1:] if skel.n_joints > 1 else fk.joint_positions,
                          fk.site_positions])
    height = float(np.ptp(pts, axis=0).max()) if len(pts) > 1 else 1.0
    height = height if np.isfinite(height) and height > 1e-6 else 1.0
    J = skel.n_joints
    bone_len = np.full(J, np.inf)  # bone ending at joint j (from its parent)
    seg = np.linalg.norm(fk.joint_positions[1:] - fk.joint_positions[skel.parents[1:]], axis=1)
    bone_len[1:] = seg
    near = bone_len.copy()  # shortest bone touching each joint
    for j in range(1, J):
        p = skel.parents[j]
        near[p] = min(near[p], bone_len[j])
    for i, j in enumerate(skel.site_joint):
        d = float(np.linalg.norm(fk.site_positions[i] - fk.joint_positions[j]))
        if d > 1e-6:
            near[j] = min(near[j], d)
    near[~np.isfinite(near)] = 0.1 * height
    joint_r = np.minimum(0.016 * height, 0.32 * near)
    joint_r = np.maximum(joint_r, 0.002 * height)
    bone_r = np.minimum(0.011 * height, 0.2 * np.where(np.isfinite(bone_len), bone_len, 0.5 * height))
    bone_r = np.maximum(bone_r, 0.0015 * height)
    return joint_r, bone_r


def joint_colors(state: AppState) -> np.ndarray:
    """``(J, 3)`` joint colours: at a limit red, selected cyan, hovered light cyan."""
    skel = state.skeleton
    col = np.tile(np.array(JOINT, np.float32), (skel.n_joints, 1))
    col[state.at_limit()] = AT_LIMIT
    if state.hover_joint is not None and 0 <= state.hover_joint < skel.n_joints:
        col[state.hover_joint] = HOVER_JOINT
    if state.selected_joint is not None and 0 <= state.selected_joint < skel.n_joints:
        col[state.selected_joint] = SELECTED_JOINT
    return col


def bone_segments(state: AppState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a (B, 3), b (B, 3), owner joint (B,))``: parent-to-child bones plus joint-to-site ends.

    A bone belongs to the joint whose DoFs turn it (the parent end).
    """
    skel = state.skeleton
    fk = state.fk
    child, owner, sites = cached(skel, "app.geometry.bones", lambda: _bone_topology(skel))
    a = np.concatenate([fk.joint_positions[owner], fk.joint_positions[skel.site_joint[sites]]])
    b = np.concatenate([fk.joint_positions[child], fk.site_positions[sites]])
    own = np.concatenate([owner, skel.site_joint[sites]])
    return a, b, own


def _bone_topology(skel: Skeleton) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    par = np.arange(1, skel.n_joints)
    par_owner = skel.parents[1:]
    # leaf-joint sites (hands, feet, head tips) get a bone from their joint
    has_child = np.zeros(skel.n_joints, bool)
    has_child[skel.parents[1:]] = True
    site_ok = [i for i, j in enumerate(skel.site_joint)
               if not has_child[j] and np.linalg.norm(skel.site_offsets[i]) > 1e-6]
    return par, par_owner, np.array(site_ok, dtype=np.int64)


def build_view(state: AppState) -> ViewGeometry:
    """All instances for the current frame."""
    skel = state.skeleton
    fk = state.fk
    cam = state.camera
    joint_r, bone_r = skeleton_sizes(state)
    jcol = joint_colors(state)
    spheres = sphere_instances(fk.joint_positions, joint_r, jcol)
    a, b, own = bone_segments(state)
    bcol = np.tile(np.array(BONE, np.float32), (len(own), 1))
    limit = state.at_limit()
    bcol[limit[own]] = 0.72 * np.array(BONE, np.float32) + 0.28 * np.array(AT_LIMIT, np.float32)
    if state.selected_joint is not None and 0 <= state.selected_joint < skel.n_joints:
        sel = own == state.selected_joint
        bcol[sel] = 0.5 * np.array(BONE, np.float32) + 0.5 * np.array(SELECTED_JOINT, np.float32)
    cylinders = cylinder_instances(a, b, np.minimum(bone_r[own], 0.8 * joint_r[own]), bcol)

    # handles: one per site; a constrained effector's handle is its target
    effs = state.doc.effectors
    S = skel.n_sites
    hpos = np.empty((S, 3))
    hcol = np.empty((S, 4), np.float32)
    pinned = np.zeros(S, bool)
    for i, e in enumerate(effs):
        if e.active:
            hpos[i] = e.position
            hcol[i] = HANDLE_PINNED if e.mode == PINNED else HANDLE_TARGET
            pinned[i] = e.mode == PINNED
        else:
            hpos[i] = fk.site_positions[i]
            hcol[i] = HANDLE_FREE
    sel_i = skel.site_index(state.selected_site) if state.selected_site in skel.site_names else -1
    hov_i = skel.site_index(state.hover_site) if state.hover_site in skel.site_names else -1
    px = cam.pixel_sizes(hpos)
    active = np.array([e.active for e in effs], bool) if S else np.zeros(0, bool)
    # free handles are smaller (the fingertips would hide the hand), constrained ones full size
    hrad = state.handle_px * px * np.where(active, 1.0, FREE_SCALE)
    top = active.copy()  # drawn in the nearest depth range
    if hov_i >= 0:
        hcol[hov_i, :3] = np.minimum(hcol[hov_i, :3] * 1.25 + 0.1, 1.0)
        hcol[hov_i, 3] = 1.0
        hrad[hov_i] = max(hrad[hov_i], state.handle_px * px[hov_i])
        top[hov_i] = True
    if sel_i >= 0:
        hcol[sel_i] = HANDLE_SELECTED if not effs[sel_i].active else hcol[sel_i]
        hrad[sel_i] = 1.2 * state.handle_px * px[sel_i]
        top[sel_i] = True
    free = ~top & ~pinned
    free_spheres = sphere_instances(hpos[free], hrad[free], hcol[free])
    ov_spheres = sphere_instances(hpos[top & ~pinned], hrad[top & ~pinned], hcol[top & ~pinned])
    ov_cubes = framed_instances(hpos[pinned], np.tile(np.eye(3), (int(pinned.sum()), 1, 1)),
                                0.8 * hrad[pinned], hcol[pinned])
    # selection outline: a larger translucent white shell around the selected handle, drawn
    # after it so the handle shows through
    if sel_i >= 0 and effs[sel_i].active:
        shell = sphere_instances(hpos[sel_i][None], hrad[sel_i] * 1.4, (1.0, 1.0, 1.0, 0.3))
        ov_spheres = np.concatenate([ov_spheres, shell])

    # error lines: site -> target of every constrained effector
    act = active
    err_a = fk.site_positions[act]
    err_b = hpos[act]
    thin = 0.22 * hrad[act]
    ov_cyl = [cylinder_instances(err_a, err_b, thin, ERROR_LINE),
              sphere_instances(err_a, 0.35 * hrad[act], ERROR_LINE)]
    ov_tori = np.zeros((0, 16), np.float32)
    ring_centre = ring_axes = None
    ring_radius = 0.0
    if sel_i >= 0 and effs[sel_i].oriented:
        e = effs[sel_i]
        ring_centre = hpos[sel_i]
        ring_axes = np.array(e.rotation)
        ring_radius = RING_PX * cam.pixel_size_at(ring_centre)
        frames = []
        for k in range(3):
            # torus lies in its XY plane: map its Z to the ring axis
            ax = ring_axes[:, k]
            u = ring_axes[:, (k + 1) % 3]
            v = np.cross(ax, u)
            frames.append(np.stack([u, v, ax], axis=1))
        cols = np.array(RING_COLORS, np.float32)
        if state.hover_ring is not None:
            cols[state.hover_ring, :3] = np.minimum(cols[state.hover_ring, :3] + 0.35, 1.0)
        ov_tori = framed_instances(np.tile(ring_centre, (3, 1)), np.array(frames), ring_radius, cols)
        # the target's own axes, short and thin
        tips = ring_centre + 0.7 * ring_radius * ring_axes.T
        ov_cyl.append(cylinder_instances(np.tile(ring_centre, (3, 1)), tips,
                                         0.04 * ring_radius, cols))
        # and the site's current axes, so the orientation error is visible
        i = sel_i
        tips = fk.site_positions[i] + 0.45 * ring_radius * fk.site_rotations[i].T
        ov_cyl.append(cylinder_instances(np.tile(fk.site_positions[i], (3, 1)), tips,
                                         0.025 * ring_radius, cols * [0.7, 0.7, 0.7, 0.8]))
    gz = None
    gz_radius = 0.0
    # the joint gizmo: rotate rings of the selected joint (translate arrows on the root), hidden
    # while a handle is dragged and under a 6-D target's rings
    sel_j = state.selected_joint
    drag = state.drag
    if (sel_j is not None and 0 <= sel_j < skel.n_joints and ring_centre is None
            and (drag is None or drag.kind in ("dof", "root"))):
        gz = gizmo.joint_gizmo(skel, state.doc.q, fk.joint_positions, sel_j)
        gz_radius = gizmo.RING_PX * cam.pixel_size_at(gz.centre)
        frames, cols = [], []
        hov = state.hover_gizmo
        for k, ax in enumerate(gz.ring_axes):
            u, v = gizmo.ring_basis(ax)
            frames.append(np.stack([u, v, ax], axis=1))
            c = np.array(gizmo.axis_colour(ax), np.float32)
            if hov == ("ring", k):
                c[:3] = np.minimum(c[:3] + 0.35, 1.0)
            cols.append(c)
        if frames:
            ov_tori = framed_instances(np.tile(gz.centre, (len(frames), 1)), np.array(frames),
                                       gz_radius, np.array(cols, np.float32))
        for k, ax in enumerate(gz.arrow_axes):
            c = np.array(gizmo.axis_colour(ax), np.float32)
            if hov == ("arrow", k):
                c[:3] = np.minimum(c[:3] + 0.35, 1.0)
            tip = gz.centre + gizmo.ARROW_PX / gizmo.RING_PX * gz_radius * ax
            ov_cyl.append(cylinder_instances(gz.centre[None], tip[None], 0.035 * gz_radius, c))
            ov_spheres = np.concatenate([ov_spheres, sphere_instances(tip[None], 0.09 * gz_radius, c)])
    geom = ViewGeometry(
        spheres=spheres, cylinders=cylinders, free_spheres=free_spheres,
        overlay_spheres=ov_spheres, overlay_cubes=ov_cubes,
        overlay_cylinders=np.concatenate(ov_cyl), overlay_tori=ov_tori,
        joint_radius=joint_r, bone_radius=bone_r,
        handle_sites=np.arange(S), handle_pos=hpos,
        handle_radius=np.maximum(hrad, 7.0 * px),  # picking: at least 7 px
        ring_centre=ring_centre, ring_axes=ring_axes, ring_radius=ring_radius,
        gizmo=gz, gizmo_radius=gz_radius,
        n_character_spheres=len(spheres), n_character_cylinders=len(cylinders))
    geom = modes.current(state).decorate_view(state, geom)
    geom = onion.decorate_view(state, geom)  # ghost poses around the playhead (if on)
    # the physics overlay (COM, support polygon, ZMP, force) is drawn in every mode
    return physics.decorate_view(state, geom)


def view_key(state: AppState) -> tuple:
    """Everything :func:`build_view` reads: the document (replaced on every change, the pose
    included), the camera, the viewport, the selection and hover, the handle size and the
    mode's own view state. Equal keys give the same geometry."""
    cam = state.camera
    return (state.doc, cam.yaw, cam.pitch, cam.distance, tuple(np.asarray(cam.target, float)),
            cam.fovy, cam.width, cam.height, state.selected_site, state.selected_joint, state.hover_site,
            state.hover_joint, state.hover_ring, state.hover_gizmo, state.handle_px,
            None if state.drag is None else state.drag.kind,
            modes.current(state).view_key(state), physics.view_key(state), onion.view_key(state))


def view_geometry(state: AppState) -> ViewGeometry:
    """:func:`build_view`, built again only when :func:`view_key` changed (picking on every
    mouse move and the render of the frame share it)."""
    key = view_key(state)
    cache = state.view_cache
    if cache is not None and _same_key(cache.key, key):
        return cache.geometry
    geom = build_view(state)
    state.stats.view_builds += 1
    state.view_cache = ViewCache(key, geom)
    return geom


def _same_key(a: tuple, b: tuple) -> bool:
    # the document by identity (documents are immutable and replaced on every change)
    return a[0] is b[0] and a[1:] == b[1:]


__all__ = ["ViewGeometry", "bone_segments", "build_view", "cylinder_instances",
           "framed_instances", "grid_lines", "joint_colors", "skeleton_sizes", "sphere_instances",
           "view_geometry", "view_key"]


def grid_lines(half: float = 5.0, step: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """Ground grid (z = 0): ``(positions (V, 3), colours (V, 4))`` for GL lines.

    Every metre darker, the X axis red and the Y axis green.
    """
    n = int(round(half / step))
    pos, col = [], []
    for i in range(-n, n + 1):
        c = i * step
        major = i % int(round(1.0 / step)) == 0
        base = (0.62, 0.64, 0.68, 0.55) if major else (0.55, 0.57, 0.60, 0.25)
        cx = (0.90, 0.30, 0.30, 0.9) if i == 0 else base  # the line y = 0 is the X axis
        cy = (0.35, 0.85, 0.35, 0.9) if i == 0 else base
        pos += [(-half, c, 0.0), (half, c, 0.0)]
        col += [cx, cx]
        pos += [(c, -half, 0.0), (c, half, 0.0)]
        col += [cy, cy]
    return np.array(pos, np.float32), np.array(col, np.float32)
