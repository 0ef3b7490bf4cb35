"""Direct manipulation: the joint gizmo's math (ray–ring, drag angle, limits), picking rules
(hand over fingertips unless zoomed in), gizmo drags through the controller, a quick click and
a gizmo drag through the whole offscreen app (EGL)."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import SIZE, app, gui_drag, make_state, site_xy, window_xy  # noqa: F401

import animik
from animik.app import edits
from animik.app import gizmo as G
from animik.app import keys as K
from animik.app.controller import ViewportController
from animik.app.geometry import view_geometry
from animik.app.picking import hover_label, pick_handle, promote_to_parents
from animik.rotations.rotvec import matrix_from_rotvec


# ------------------------------------------------------------------ math
def test_dof_world_axis_matches_the_rotation_of_the_joint_frame():
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(3)
    q = np.clip(skel.rest_q + rng.uniform(-0.4, 0.4, skel.n_dof), skel.lower, skel.upper)
    j = skel.joint_names.index("l_shoulder")
    for d in skel.joint_dofs(j):
        a = G.dof_world_axis(skel, q, d)
        assert abs(np.linalg.norm(a) - 1) < 1e-9
        # independent check: turning the DoF by 0.3 rad turns the joint frame by Rot(a, 0.3)
        qp = q.copy()
        qp[d] += 0.3
        r0 = animik.forward_kinematics(skel, q).joint_rotations[j]
        r1 = animik.forward_kinematics(skel, qp).joint_rotations[j]
        assert np.allclose(r1, matrix_from_rotvec(0.3 * a) @ r0, atol=1e-6)


def test_ray_ring_intersection():
    c = np.array([0.0, 0.0, 1.0])
    axis = np.array([0.0, 0.0, 1.0])
    o = np.array([0.5, 0.0, 3.0])
    down = np.array([0.0, 0.0, -1.0])
    assert G.ray_ring(o, down, c, axis, 0.5, 0.01) == pytest.approx(2.0)  # on the ring
    assert G.ray_ring(o, down, c, axis, 0.45, 0.01) is None  # 5 cm off the ring
    assert G.ray_ring(o, down, c, axis, 0.45, 0.06) == pytest.approx(2.0)  # within the tube
    assert G.ray_ring(o, -down, c, axis, 0.5, 0.01) is None  # plane behind the ray
    assert G.ray_ring(o, np.array([1.0, 0.0, 0.0]), c, axis, 0.5, 0.01) is None  # parallel
    # the angle around the axis: right-handed in the ring basis u, v = axis x u
    u, v = G.ring_basis(axis)
    assert np.allclose(np.cross(u, v), axis)
    for ang in (0.0, 0.7, -2.5):
        p = c + 0.5 * (np.cos(ang) * u + np.sin(ang) * v)
        t, dist, a = G.ray_plane_angle(p + [0, 0, 1.0], down, c, axis)
        assert dist == pytest.approx(0.5) and a == pytest.approx(ang)


def test_angle_from_drag_wraps_and_clamps_to_limits():
    assert G.dragged_value(0.2, 0.1, 0.4, -1.0, 1.0) == pytest.approx(0.5)
    # across ±π: the short way round
    assert G.dragged_value(0.0, 3.1, -3.1, -1.0, 1.0) == pytest.approx(2 * np.pi - 6.2)
    assert G.dragged_value(0.5, 0.0, 1.5, -1.0, 1.0) == 1.0  # clamped at the upper limit
    assert G.dragged_value(-0.5, 0.0, -1.5, -1.0, 1.0) == -1.0
    assert G.wrap(3 * np.pi / 2) == pytest.approx(-np.pi / 2)


def test_polyline_distance():
    pts = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]])
    assert G.polyline_distance(pts, np.array([5.0, 3.0])) == pytest.approx(3.0)
    assert G.polyline_distance(pts, np.array([12.0, 5.0])) == pytest.approx(2.0)


# ------------------------------------------------------------------ picking
def test_promote_to_parents_is_screen_size_aware():
    skel = animik.load_rig("body95")
    hand, tip, head = (skel.site_index(s) for s in ("l_hand", "l_ring_tip", "head"))
    sites = np.array([hand, tip, head])
    # close on screen: a press on the fingertip picks the hand (the head is no ancestor)
    near = np.array([[100.0, 100.0], [106.0, 104.0], [104.0, 100.0]])
    assert promote_to_parents(skel, sites, near).tolist() == [0, 0, 2]
    # zoomed in (far apart on screen): each picks itself
    far = np.array([[100.0, 100.0], [200.0, 100.0], [300.0, 100.0]])
    assert promote_to_parents(skel, sites, far).tolist() == [0, 1, 2]


def test_click_on_a_fingertip_picks_the_hand_unless_zoomed_in():
    st = make_state(None)
    st.selected_site = None
    g = view_geometry(st)
    x, y = site_xy(st, "l_ring_tip")
    vx, vy, _, _ = st.view_rect
    px, py = x - vx, (st.window_size[1] - y) - vy
    assert pick_handle(st, g, px, py) == "l_hand"
    # zoom in on the hand until the fingertips are far apart on screen
    st.camera.target = np.array(st.fk.site_positions[st.skeleton.site_index("l_hand")])
    st.camera.distance = 0.25
    g = view_geometry(st)
    x, y = site_xy(st, "l_ring_tip")
    px, py = x - vx, (st.window_size[1] - y) - vy
    assert pick_handle(st, g, px, py) == "l_ring_tip"


def _select_joint(st, ctrl, name: str) -> int:
    j = st.skeleton.joint_names.index(name)
    x, y = window_xy(st, st.fk.joint_positions[j])
    ctrl.on_mouse_motion(x, y, 0, 0)
    ctrl.on_mouse_press(x, y, K.LEFT, 0)
    ctrl.on_mouse_release(x, y, K.LEFT, 0)  # press and release with nothing between
    assert st.selected_joint == j
    assert st.scroll_tree_to == j  # the Skeleton tree scrolls to it
    return j


def _ring_xy(st, g, k: int, ang: float):
    gz = g.gizmo
    u, v = G.ring_basis(gz.ring_axes[k])
    return window_xy(st, gz.centre + g.gizmo_radius * (np.cos(ang) * u + np.sin(ang) * v))


def _facing_ring(st, g) -> int:
    return int(np.argmax([abs(np.dot(a, st.camera.forward)) for a in g.gizmo.ring_axes]))


def test_gizmo_ring_drag_turns_the_dof_within_limits_and_undoes():
    st = make_state(None)
    st.live_ik = False
    ctrl = ViewportController(st)
    j = _select_joint(st, ctrl, "l_elbow")
    g = view_geometry(st)
    assert g.gizmo is not None and g.gizmo.joint == j and len(g.gizmo.ring_dofs) >= 1
    k = _facing_ring(st, g)
    dof = int(g.gizmo.ring_dofs[k])
    q0 = st.doc.q.copy()
    # hover: the ring is picked and its DoF named in the tooltip text
    x, y = _ring_xy(st, g, k, 0.3)
    ctrl.on_mouse_motion(x, y, 0, 0)
    assert st.hover_gizmo == ("ring", k)
    assert hover_label(st).startswith(st.skeleton.dof_names[dof])
    # drag a quarter turn each way: the DoF follows, clamped into its limits
    for sweep in (np.pi / 2, -np.pi / 2):
        g = view_geometry(st)
        x0, y0 = _ring_xy(st, g, k, 0.3)
        ctrl.on_mouse_motion(x0, y0, 0, 0)
        ctrl.on_mouse_press(x0, y0, K.LEFT, 0)
        start = float(st.doc.q[dof])
        for i in range(1, 9):
            x, y = _ring_xy(st, g, k, 0.3 + sweep * i / 8)
            ctrl.on_mouse_drag(x, y, 0, 0, K.LEFT, 0)
        ctrl.on_mouse_release(x, y, K.LEFT, 0)
        lo, hi = st.skeleton.lower[dof], st.skeleton.upper[dof]
        expect = float(np.clip(start + sweep, lo, hi))
        assert st.doc.q[dof] == pytest.approx(expect, abs=0.03)
        assert lo - 1e-12 <= st.doc.q[dof] <= hi + 1e-12
    # only that DoF changed, and each drag is one undo step
    changed = np.flatnonzero(np.abs(st.doc.q - q0) > 1e-12)
    assert set(changed.tolist()) <= {dof}
    edits.undo(st)
    edits.undo(st)
    assert np.allclose(st.doc.q, q0)


def test_root_arrow_drag_moves_the_root_along_its_axis():
    st = make_state(None)
    st.live_ik = False
    ctrl = ViewportController(st)
    st.selected_joint = 0
    g = view_geometry(st)
    gz = g.gizmo
    assert gz is not None and len(gz.arrow_dofs) == 3
    # the arrow most perpendicular to the view drags best
    k = int(np.argmin([abs(np.dot(a, st.camera.forward)) for a in gz.arrow_axes]))
    dof = int(gz.arrow_dofs[k])
    tip = gz.centre + G.ARROW_PX / G.RING_PX * g.gizmo_radius * gz.arrow_axes[k]
    grab = gz.centre + 0.8 * (tip - gz.centre)
    x0, y0 = window_xy(st, grab)
    ctrl.on_mouse_motion(x0, y0, 0, 0)
    assert st.hover_gizmo == ("arrow", k)
    q0 = st.doc.q.copy()
    ctrl.on_mouse_press(x0, y0, K.LEFT, 0)
    x1, y1 = window_xy(st, grab + 0.1 * gz.arrow_axes[k])
    for i in range(1, 6):
        ctrl.on_mouse_drag(x0 + (x1 - x0) * i / 5, y0 + (y1 - y0) * i / 5, 0, 0, K.LEFT, 0)
    ctrl.on_mouse_release(x1, y1, K.LEFT, 0)
    assert st.doc.q[dof] - q0[dof] == pytest.approx(0.1, abs=2e-3)
    others = np.delete(np.arange(len(q0)), dof)
    assert np.allclose(st.doc.q[others], q0[others])


# ------------------------------------------------------------------ the whole app (EGL)
def test_app_quick_click_selects_and_gizmo_drag_turns_a_dof(app):  # noqa: F811
    st = app.state
    g = app.gui
    # the cursor rests on a panel (imgui wants the mouse), then a click lands on the elbow
    # within one frame: move, press and release with no frame between
    g.on_mouse_motion(60, SIZE[1] - 200, 0, 0)
    app.frame()
    app.frame()
    j = st.skeleton.joint_names.index("l_elbow")
    x, y = window_xy(st, st.fk.joint_positions[j])
    g.on_mouse_motion(x, y, 0, 0)
    g.on_mouse_press(x, y, 1, 0)
    g.on_mouse_release(x, y, 1, 0)
    app.frame()
    assert st.selected_joint == j
    app.frame()
    geom = view_geometry(st)
    assert geom.gizmo is not None and geom.gizmo.joint == j
    k = _facing_ring(st, geom)
    dof = int(geom.gizmo.ring_dofs[k])
    before = float(st.doc.q[dof])
    start = _ring_xy(st, geom, k, 0.2)
    end = _ring_xy(st, geom, k, 0.2 - 0.5)
    pts = [_ring_xy(st, geom, k, 0.2 - 0.5 * i / 10) for i in range(11)]
    g.on_mouse_motion(*start, 0, 0)
    app.frame()
    g.on_mouse_press(*start, 1, 0)
    app.frame()
    for p in pts[1:]:
        g.on_mouse_drag(p[0], p[1], 0, 0, 1, 0)
        app.frame()
    g.on_mouse_release(*end, 1, 0)
    app.frame()
    lo, hi = st.skeleton.lower[dof], st.skeleton.upper[dof]
    assert st.doc.q[dof] == pytest.approx(float(np.clip(before - 0.5, lo, hi)), abs=0.05)
    assert st.doc.q[dof] != before or before in (lo, hi)
