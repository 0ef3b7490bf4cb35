"""Mouse picking by ray casting against what :func:`animik.app.geometry.build_view` draws.

Pixels are viewport pixels (origin top-left). Handles are spheres of constant screen size, the
character is joint spheres and bone capsules, or its skinned mesh where the mesh is drawn (a hit
on the mesh picks the joint that moves that spot most); the nearest hit along the ray wins. The rotate
rings of a 6-D target are picked in screen space (distance to the projected ring < a few px).
"""

from __future__ import annotations

import numpy as np

from ..cache import cached
from ..character import homogeneous, skin_positions
from . import gizmo as G
from .camera import OrbitCamera
from .geometry import RING_SAMPLES, ViewGeometry, bone_segments
from .state import VIEW_BONES, VIEW_MESH, AppState

HANDLE_SLACK = 1.25  # pick handles a little outside their drawn radius
RING_PICK_PX = 7.0
#: A handle whose site hangs below another hit handle's joint (a fingertip under the hand) is
#: only picked over it when the two are this far apart on screen (zoomed in), px.
SEPARATE_PX = 60.0
#: ... and only when the two are this close in the world, as a fraction of the body's size (a
#: fingertip is ~11 % of body95's height from its wrist; a hand ~30 % from the pelvis).
NEAR_ANCESTOR = 0.15
BONE_DEPTH = 4.0  # a bone this many joint radii behind the mesh's surface is inside the body


def ray_spheres(origin: np.ndarray, direction: np.ndarray, centres: np.ndarray,
                radii: np.ndarray) -> np.ndarray:
    """Distance along the ray to each sphere ``(N,)`` (inf where missed or behind)."""
    oc = np.asarray(centres, float) - origin
    tc = oc @ direction
    d2 = np.einsum("ij,ij->i", oc, oc) - tc * tc
    r2 = np.asarray(radii, float) ** 2
    hit = d2 <= r2
    th = np.sqrt(np.maximum(r2 - d2, 0.0))
    t = np.where(tc - th > 0, tc - th, tc + th)
    return np.where(hit & (t > 0), t, np.inf)


def ray_capsules(origin: np.ndarray, direction: np.ndarray, a: np.ndarray, b: np.ndarray,
                 radii: np.ndarray) -> np.ndarray:
    """Approximate distance along the ray to capsules ``a-b`` ``(N,)`` (inf where missed).

    Uses the closest points between the ray and each segment: a hit when they are within the
    radius (exact for the capsule's axis distance; the returned depth is that of the closest
    point, which is all picking needs).
    """
    a = np.asarray(a, float)
    u = np.asarray(b, float) - a
    w0 = origin - a
    uu = np.einsum("ij,ij->i", u, u)
    ud = u @ direction
    uw = np.einsum("ij,ij->i", u, w0)
    dw = w0 @ direction
    den = uu - ud * ud  # |d| = 1
    s = np.where(den > 1e-12, (uw - ud * dw) / np.maximum(den, 1e-12), 0.0)
    s = np.clip(np.where(uu > 1e-12, s, 0.0), 0.0, 1.0)
    t = s * ud - dw  # closest ray parameter to the segment point a + s u
    t = np.maximum(t, 0.0)
    pr = origin + t[:, None] * direction
    ps = a + s[:, None] * u
    dist = np.linalg.norm(pr - ps, axis=1)
    return np.where((dist <= radii) & (t > 0), t, np.inf)


def pick_handle(state: AppState, geom: ViewGeometry, px: float, py: float) -> str | None:
    """The site whose handle is under viewport pixel ``(px, py)``, nearest first, or None."""
    if not len(geom.handle_pos):
        return None
    o, d = state.camera.ray(px, py)
    t = ray_spheres(o, d, geom.handle_pos, geom.handle_radius * HANDLE_SLACK)
    hit = np.flatnonzero(np.isfinite(t))
    if not len(hit):
        return None
    # Handles have a constant screen size and overlap on the hands: the one whose centre is
    # nearest the cursor on screen wins; the nearest along the ray breaks ties (within 1 px).
    proj = state.camera.project(geom.handle_pos)[:, :2]
    # a fingertip under the cursor gives way to its hand unless they are apart on screen
    up = promote_to_parents(state.skeleton, geom.handle_sites, proj, world=geom.handle_pos,
                            body_size=float(np.ptp(state.fk.joint_positions, axis=0).max()))
    cand = np.unique(up[hit])
    scr = np.linalg.norm(proj[cand] - [px, py], axis=1)
    tc = np.where(np.isfinite(t[cand]), t[cand], np.max(t[hit]))
    order = np.lexsort((tc, np.floor(scr)))
    i = int(cand[order[0]])
    return state.skeleton.site_names[int(geom.handle_sites[i])]


def promote_to_parents(skel, sites: np.ndarray, screen: np.ndarray,
                       separate_px: float = SEPARATE_PX, world: np.ndarray | None = None,
                       body_size: float | None = None) -> np.ndarray:
    """``(N,)`` for each handle (``sites``, projected at ``screen (N, 2)`` px) the handle that
    a press on it picks: itself, or the nearest handle of an ancestor site (a fingertip's
    hand) that is closer than ``separate_px`` on screen — at normal zoom "the hand" wins over
    its fingertips, zoomed in the fingertips are picked one by one (screen-size-aware).

    With ``world (N, 3)`` positions and ``body_size`` (m), only an ancestor within
    ``NEAR_ANCESTOR * body_size`` in the world counts: a fingertip gives way to its hand, but a
    small robot's hand never gives way to the pelvis it hangs below."""
    sj = np.asarray(skel.site_joint)[np.asarray(sites, dtype=np.int64)]
    out = np.arange(len(sj))
    for a in range(len(sj)):
        anc = set()
        j = int(skel.parents[int(sj[a])])
        while j >= 0:
            anc.add(j)
            j = int(skel.parents[j])
        best, best_d = a, separate_px
        for b in range(len(sj)):
            if b != a and int(sj[b]) in anc:
                if world is not None and body_size is not None and (
                        np.linalg.norm(world[a] - world[b]) > NEAR_ANCESTOR * body_size):
                    continue
                d = float(np.linalg.norm(screen[a] - screen[b]))
                if d < best_d:
                    best, best_d = b, d
        out[a] = best
    return out


def hover_label(state: AppState) -> str | None:
    """The name shown in a tooltip for what the cursor is over: a handle's site, a gizmo's DoF
    (with the drag it does), a joint; None over the background."""
    skel = state.skeleton
    if state.hover_site is not None:
        return state.hover_site
    gz = state.hover_gizmo
    if gz is not None and state.view_cache is not None:
        g = state.view_cache.geometry.gizmo
        if g is not None:
            kind, k = gz
            if kind == "ring" and k < len(g.ring_dofs):
                return f"{skel.dof_names[int(g.ring_dofs[k])]}: drag to turn"
            if kind == "arrow" and k < len(g.arrow_dofs):
                return f"{skel.dof_names[int(g.arrow_dofs[k])]}: drag to move"
    if state.hover_ring is not None:
        return f"turn the target about its {'xyz'[state.hover_ring]} axis"
    if state.hover_joint is not None and 0 <= state.hover_joint < skel.n_joints:
        return skel.joint_names[state.hover_joint]
    return None


def pick_gizmo(state: AppState, geom: ViewGeometry, px: float, py: float) -> tuple[str, int] | None:
    """``("ring", k)`` or ``("arrow", k)`` of the joint gizmo under ``(px, py)``, or None.

    A ring seen from the front is hit by the ray–ring test (within :data:`gizmo.RING_PICK_PX`
    converted at its depth); a ring seen edge-on, and the arrows, by their screen distance.
    """
    gz = geom.gizmo
    if gz is None:
        return None
    cam: OrbitCamera = state.camera
    o, d = cam.ray(px, py)
    pix = cam.pixel_size_at(gz.centre)
    best, best_d = None, np.inf
    for k, ax in enumerate(gz.ring_axes):
        if abs(float(np.dot(ax, cam.forward))) > G.EDGE_ON:
            t = G.ray_ring(o, d, gz.centre, ax, geom.gizmo_radius, G.RING_PICK_PX * pix)
            if t is None:
                continue
            hit = G.ray_plane_angle(o, d, gz.centre, ax)
            dist = abs(hit[1] - geom.gizmo_radius) / pix
        else:
            scr = cam.project(G.ring_points(gz.centre, ax, geom.gizmo_radius))
            if not np.all(np.isfinite(scr[:, 2])):
                continue
            dist = G.polyline_distance(scr[:, :2], np.array([px, py]))
            if dist > G.RING_PICK_PX:
                continue
        if dist < best_d:
            best, best_d = ("ring", k), dist
    for k, ax in enumerate(gz.arrow_axes):
        tip = gz.centre + G.ARROW_PX / G.RING_PX * geom.gizmo_radius * ax
        scr = cam.project(np.array([gz.centre + 0.25 * (tip - gz.centre), tip]))
        dist = G.polyline_distance(scr[:, :2], np.array([px, py]))
        if dist <= G.ARROW_PICK_PX and dist < best_d:
            best, best_d = ("arrow", k), dist
    return best
def ray_triangles(origin: np.ndarray, direction: np.ndarray, a: np.ndarray, b: np.ndarray,
                  c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ray against triangles ``(a, b, c)`` ``(F, 3)`` each, both sides (Moeller-Trumbore).

    Returns:
        ``(t, u, v)`` ``(F,)``: distance along the ray (inf where missed or behind) and the
        barycentric coordinates of the hit (weights of ``b`` and ``c``).
    """
    a, b, c = (np.asarray(x, float).reshape(-1, 3) for x in (a, b, c))
    e1 = b - a
    e2 = c - a
    pv = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, pv)
    ok = np.abs(det) > 1e-14
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    tv = origin - a
    u = np.einsum("ij,ij->i", tv, pv) * inv
    qv = np.cross(tv, e1)
    v = (qv @ direction) * inv
    t = np.einsum("ij,ij->i", e2, qv) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
    return np.where(hit, t, np.inf), u, v


def skinned_triangles(state: AppState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The document's mesh skinned to the current pose (computed once per pose): ``(corners
    (F, 3, 3), bounding-sphere centres (F, 3), radii (F,))`` of its triangles."""
    mesh = state.doc.mesh
    kin = state.kinematics

    def build():
        p = skin_positions(mesh, homogeneous(kin.fk.joint_rotations, kin.fk.joint_positions))
        tri = p[mesh.faces]
        centre = tri.mean(axis=1)
        radius = np.linalg.norm(tri - centre[:, None, :], axis=2).max(axis=1)
        return tri, np.ascontiguousarray(centre), radius

    return cached(kin, f"app.picking.skinned.{id(mesh)}", build)


def pick_mesh(state: AppState, px: float, py: float) -> tuple[float, int] | None:
    """``(distance, joint)`` where the ray through ``(px, py)`` first meets the skinned mesh
    (the joint with the largest weight at the hit, interpolated over the triangle), or None."""
    mesh = state.doc.mesh
    if mesh is None or not mesh.n_faces:
        return None
    o, d = state.camera.ray(px, py)
    tri, centre, radius = skinned_triangles(state)
    # broad phase: triangles whose bounding sphere the ray's line passes through
    w = centre - o
    along = w @ d
    near = np.flatnonzero(np.einsum("ij,ij->i", w, w) - along * along <= radius * radius)
    if not len(near):
        return None
    c = tri[near]
    t, u, v = ray_triangles(o, d, c[:, 0], c[:, 1], c[:, 2])
    k = int(np.argmin(t))
    if not np.isfinite(t[k]):
        return None
    face = mesh.faces[near[k]]
    bary = np.array([1.0 - u[k] - v[k], u[k], v[k]])
    score: dict[int, float] = {}
    for corner, vert in enumerate(face):
        for j, w in zip(mesh.joints[vert], mesh.weights[vert], strict=True):
            score[int(j)] = score.get(int(j), 0.0) + bary[corner] * float(w)
    return float(t[k]), max(score, key=score.__getitem__)


def pick_joint(state: AppState, geom: ViewGeometry, px: float, py: float) -> int | None:
    """The joint under ``(px, py)``: its sphere, or a bone it turns, or (where the skinned mesh
    is drawn) the mesh; None on background.

    Over the mesh, a bone inside the body at the hit (no deeper than :data:`BONE_DEPTH` joint
    radii behind the surface) is picked as in the bones view, so a click over a joint picks
    that joint; elsewhere the mesh's dominant joint at the hit. With x-ray bones (drawn over
    the mesh) any bone the ray meets comes first.
    """
    bone = _pick_bone(state, geom, px, py)
    if state.doc.mesh is None or state.view_mode == VIEW_BONES:
        return None if bone is None else bone[1]
    if bone is not None and state.view_mode != VIEW_MESH:
        return bone[1]
    hit = pick_mesh(state, px, py)
    if hit is None:
        return None if bone is None else bone[1]
    if bone is not None and bone[0] <= hit[0] + BONE_DEPTH * float(geom.joint_radius[bone[1]]):
        return bone[1]
    return hit[1]


def _pick_bone(state: AppState, geom: ViewGeometry, px: float,
               py: float) -> tuple[float, int] | None:
    """``(distance, joint)`` of the nearest joint sphere or bone capsule on the ray, or None."""
    o, d = state.camera.ray(px, py)
    fk = state.fk
    tj = ray_spheres(o, d, fk.joint_positions, geom.joint_radius * 1.15)
    a, b, own = bone_segments(state)
    tb = ray_capsules(o, d, a, b, np.maximum(geom.bone_radius[own], 0.6 * geom.joint_radius[own]) * 1.3)
    best_j = int(np.argmin(tj)) if len(tj) else -1
    best_b = int(np.argmin(tb)) if len(tb) else -1
    t_j = tj[best_j] if best_j >= 0 else np.inf
    t_b = tb[best_b] if best_b >= 0 else np.inf
    if not np.isfinite(min(t_j, t_b)):
        return None
    return (float(t_j), best_j) if t_j <= t_b else (float(t_b), int(own[best_b]))


def ring_points(geom: ViewGeometry, axis: int) -> np.ndarray:
    """``(RING_SAMPLES + 1, 3)`` world points around rotate ring ``axis`` (closed loop)."""
    ax = geom.ring_axes
    u = ax[:, (axis + 1) % 3]
    v = np.cross(ax[:, axis], u)
    t = np.linspace(0.0, 2 * np.pi, RING_SAMPLES + 1)
    return geom.ring_centre + geom.ring_radius * (np.cos(t)[:, None] * u + np.sin(t)[:, None] * v)


def pick_ring(state: AppState, geom: ViewGeometry, px: float, py: float) -> int | None:
    """Axis index (0, 1, 2) of the rotate ring under ``(px, py)``, or None."""
    if geom.ring_centre is None:
        return None
    cam: OrbitCamera = state.camera
    best, best_d = None, RING_PICK_PX
    for k in range(3):
        s = cam.project(ring_points(geom, k))
        if not np.all(np.isfinite(s[:, 2])):
            continue
        p0, p1 = s[:-1, :2], s[1:, :2]
        seg = p1 - p0
        ll = np.maximum(np.einsum("ij,ij->i", seg, seg), 1e-12)
        tt = np.clip(np.einsum("ij,ij->i", [px, py] - p0, seg) / ll, 0.0, 1.0)
        dist = np.linalg.norm(p0 + tt[:, None] * seg - [px, py], axis=1).min()
        if dist < best_d:
            best, best_d = k, dist
    return best
