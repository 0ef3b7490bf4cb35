"""The app's physics view: what the floor must supply for the pose on screen, live.

Every frame (after the IK step) the displayed pose's velocity and acceleration are estimated
from the last three displayed poses (backward differences at the frame time), inverse dynamics
gives the wrench the floor must supply, and seed D's three checks are evaluated against the
support polygon of the contact areas touching the floor (lowest point within ``contact_height``
of z = 0). The results feed the viewport overlay (:func:`decorate_view`: COM ground projection,
support polygon, ZMP marker green inside / red outside, ground reaction force arrow, friction
cone) and the Physics panel (numbers and a live plot of the ZMP margin).

Numeric work is :mod:`animik.dynamics`; this module only keeps the history and builds instances.
"""

from __future__ import annotations

import numpy as np

from ..dynamics.contacts import ContactGeometryError, contact_model
from ..dynamics.inverse import momentum, rnea
from ..dynamics.report import reasons_text
from ..dynamics.zmp import check_contacts, evaluate_wrench, support_polygon
from .instances import ViewGeometry, cylinder_instances, sphere_instances
from .physics_view import PhysicsView
from .state import AppState

COM_COLOR = (0.25, 0.55, 1.00, 0.95)
INSIDE = (0.20, 0.85, 0.30, 1.00)
OUTSIDE = (0.95, 0.20, 0.15, 1.00)
POLYGON = (0.95, 0.85, 0.20, 0.95)
FORCE = (1.00, 0.55, 0.10, 0.95)
CONE = (1.00, 0.75, 0.35, 0.55)
SUPPORT = (0.20, 0.85, 0.95, 0.95)  # contact points of a seat, hold or pedal (not the floor)


def physics_of(state: AppState) -> PhysicsView:
    if state.physics is None:
        state.physics = PhysicsView()
    return state.physics


def update_physics(state: AppState, dt: float) -> None:
    """Evaluate the displayed pose (call once per frame, after the IK step)."""
    pv = physics_of(state)
    if not pv.show:
        return
    skel = state.skeleton
    if pv._skel is not skel:
        pv._skel = skel
        pv._poses.clear()
        pv.margins.clear()
        pv.error = ""
        try:
            pv.area_names = contact_model(skel).names
        except ContactGeometryError as e:
            pv.error = str(e)
    if pv.error:
        return
    q = np.array(state.doc.q, dtype=float)
    pv._poses.append(q)
    if pv.frame_time is not None and getattr(state.doc.mode, "name", None) == "physics":
        dt = pv.frame_time  # the physics mode's smoothed frame time: judge what it filtered
    h = float(np.clip(dt, 1.0 / 240.0, 1.0 / 15.0))
    P = list(pv._poses)
    qd = (P[-1] - P[-2]) / h if len(P) >= 2 else np.zeros_like(q)
    qdd = (P[-1] - 2 * P[-2] + P[-3]) / (h * h) if len(P) >= 3 else np.zeros_like(q)
    cm = contact_model(skel)
    pts = cm.points(skel, q)
    low = np.array([pts[cm.point_area == a, 2].min() for a in range(cm.n_areas)])
    active = low < pv.contact_height
    sf = _playhead_supports(state, pv, q)
    if sf is not None:  # a seat, holds, pedals carry this frame: the contact wrench cone
        chk = evaluate_wrench(skel, rnea(skel, q, qd, qdd).wrench[None], pts[None],
                              active[None], momentum(skel, q[None]).com, pv.mu, contacts=cm,
                              supports=sf)
        chk = type(chk)(*[a[0] for a in chk])
        on = sf.active[0] & _touching(sf)
        pv.on_supports = tuple(n for n, x in zip(sf.names, on, strict=True) if x)
    else:
        chk = check_contacts(skel, q, qd, qdd, active, mu=pv.mu, contacts=cm)
        pv.on_supports = ()
    pv.polygon = support_polygon(skel, q, active, cm)
    pv.com, pv.zmp, pv.wrench = chk.com, chk.zmp, chk.wrench
    pv.margin, pv.normal = float(chk.margin), float(chk.normal_force)
    pv.ratio = float(chk.friction_ratio)
    pv.feasible = bool(chk.feasible)
    pv.reasons = reasons_text(int(chk.reasons))
    pv.in_contact = active
    pv.margins.append(100.0 * pv.margin)
    pv.stamp += 1


def decorate_view(state: AppState, geom: ViewGeometry) -> ViewGeometry:
    """Add the physics overlay to the view's overlay instances."""
    pv = state.physics
    if pv is None or not pv.show or pv.error or pv.com is None:
        return geom
    z = 0.003
    sph = [sphere_instances([pv.com[0], pv.com[1], z], 0.022, COM_COLOR)]
    cyl = [cylinder_instances([pv.com[0], pv.com[1], z], pv.com, 0.004, COM_COLOR[:3] + (0.4,))]
    poly = pv.polygon
    if len(poly) >= 2:
        a = np.column_stack([poly, np.full(len(poly), z)])
        b = np.roll(a, -1, axis=0)
        cyl.append(cylinder_instances(a, b, 0.006, POLYGON))
    # on supports off the floor the floor's ZMP, force and cone do not apply (the check is
    # the contact wrench cone): the supports' touching points are drawn instead
    if pv.zmp is not None and np.isfinite(pv.zmp).all() and not pv.on_supports:
        col = INSIDE if pv.feasible else OUTSIDE
        p = np.array([pv.zmp[0], pv.zmp[1], z])
        sph.append(sphere_instances(p, 0.026, col))
        f = pv.wrench[3:]
        weight = max(state.skeleton.total_mass * 9.81, 1e-9)
        tip = p + f / weight * 0.8  # body weight = 0.8 m
        cyl.append(cylinder_instances(p, tip, 0.009, FORCE))
        # friction cone: 8 generators of half-angle atan(mu), as tall as the force arrow
        height = max(float(f[2]) / weight * 0.8, 0.2)
        ang = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
        rim = p + np.column_stack([pv.mu * height * np.cos(ang), pv.mu * height * np.sin(ang),
                                   np.full(8, height)])
        cyl.append(cylinder_instances(np.tile(p, (8, 1)), rim, 0.003, CONE))
        cyl.append(cylinder_instances(rim, np.roll(rim, -1, axis=0), 0.003, CONE))
    sph += _support_markers(state, pv)
    geom.overlay_spheres = np.concatenate([geom.overlay_spheres, *sph]).astype(np.float32)
    geom.overlay_cylinders = np.concatenate([geom.overlay_cylinders, *cyl]).astype(np.float32)
    return geom


def _playhead_supports(state: AppState, pv: PhysicsView, q: np.ndarray):
    """The supports (of the clip the timeline marks were checked for) at the playhead's frame,
    evaluated at the displayed pose ``q``: a one-frame
    :class:`~animik.dynamics.supports.SupportFrames`, or ``None`` when none is active."""
    sup = pv.supports
    if sup is None or not len(sup) or pv.supports_fps <= 0:
        return None
    f = int(round(state.doc.time * pv.supports_fps))
    if f < 0:
        return None
    sf = sup.at(state.skeleton, q[None], frames=np.array([f]))
    return sf if sf.active[0].any() else None


def _touching(sf) -> np.ndarray:
    """``(S,)`` bool for a one-frame SupportFrames: the body touches the support (a world seat
    the pelvis has left, a grip the hand is away from, do not count)."""
    S = len(sf.names)
    t = np.zeros(S, dtype=bool)
    if sf.push_touch is not None and sf.push_touch.shape[1]:
        np.logical_or.at(t, sf.push_support, sf.push_touch[0])
    if sf.grip_touch is not None and sf.grip_touch.shape[1]:
        np.logical_or.at(t, sf.grip_support, sf.grip_touch[0])
    return t


def _support_markers(state: AppState, pv: PhysicsView) -> list[np.ndarray]:
    """Small markers on the points of the supports (seat, holds, pedals) active at the
    playhead's frame of the clip the timeline marks were checked for, where the body touches
    them (a world-fixed seat marks where the pelvis rests on it, not while she stands up)."""
    sf = _playhead_supports(state, pv, np.array(state.doc.q, dtype=float))
    if sf is None:
        return []
    act = sf.active[0]
    pts = [sf.push_points[0, act[sf.push_support] & sf.push_touch[0]],
           sf.grip_points[0, act[sf.grip_support] & sf.grip_touch[0]]]
    pts = np.concatenate(pts)
    return [sphere_instances(pts, 0.018, SUPPORT)] if len(pts) else []


def view_key(state: AppState) -> tuple:
    """What :func:`decorate_view` reads beyond the document: the overlay switch and evaluation."""
    pv = state.physics
    return (None,) if pv is None else (pv.show, pv.stamp, pv.mu, id(pv.supports))
