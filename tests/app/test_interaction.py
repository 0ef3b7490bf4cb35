"""Mouse and key interaction through the viewport controller, with pyglet-style synthetic events
(the same methods the window's pyglet handlers call). No GL needed: picking is ray casting."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import make_state, site_xy, window_xy

from animik.app import actions
from animik.app import keys as K
from animik.app.controller import ViewportController
from animik.app.state import FREE, PINNED, TARGET


@pytest.fixture
def state():
    """The default scene: body95 standing, feet pinned."""
    return make_state(None)


def settle(state, frames: int = 60) -> None:
    for _ in range(frames):
        actions.update(state, 1 / 60)


def drag(ctrl, start, end, steps: int = 12, modifiers: int = 0, button=K.LEFT) -> None:
    """Press at ``start``, move in ``steps`` to ``end`` (running the IK each step), release."""
    st = ctrl.state
    x0, y0 = start
    x1, y1 = end
    ctrl.on_mouse_motion(x0, y0, 0, 0)
    ctrl.on_mouse_press(x0, y0, button, modifiers)
    px, py = x0, y0
    for i in range(1, steps + 1):
        x = x0 + (x1 - x0) * i / steps
        y = y0 + (y1 - y0) * i / steps
        ctrl.on_mouse_drag(x, y, x - px, y - py, button, modifiers)
        px, py = x, y
        actions.update(st, 1 / 60)
    ctrl.on_mouse_release(x1, y1, button, modifiers)


def test_hover_and_press_pick_the_hand_handle(state):
    c = ViewportController(state)
    x, y = site_xy(state, "l_hand")
    c.on_mouse_motion(x, y, 0, 0)
    assert state.hover_site == "l_hand"
    c.on_mouse_press(x, y, K.LEFT, 0)
    assert state.selected_site == "l_hand"
    assert state.drag is not None and state.drag.site == "l_hand"


def test_drag_hand_moves_target_and_body_follows_within_limits(state):
    skel = state.skeleton
    c = ViewportController(state)
    i = skel.site_index("l_hand")
    start_site = state.fk.site_positions[i].copy()
    feet = state.fk.site_positions[[skel.site_index("l_foot"), skel.site_index("r_foot")]].copy()
    x, y = site_xy(state, "l_hand")
    drag(c, (x, y), (x - 60, y + 90))
    e = state.doc.effector("l_hand")
    assert e.mode == TARGET
    # the target is on the view plane through the start point, under the release pixel
    assert np.isclose(np.dot(e.position - start_site, state.camera.forward), 0.0, atol=1e-9)
    px = window_xy(state, e.position)
    assert np.allclose(px, (x - 60, y + 90), atol=0.5)
    assert np.linalg.norm(e.position - start_site) > 0.1
    settle(state)
    assert np.linalg.norm(state.fk.site_positions[i] - e.position) < 1e-3  # the hand followed
    assert skel.within_limits(state.doc.q)
    # the pinned feet stayed
    feet_now = state.fk.site_positions[[skel.site_index("l_foot"), skel.site_index("r_foot")]]
    assert np.allclose(feet_now, feet, atol=1e-3)
    assert state.history.entries[-1][0] == "drag l_hand"


def test_drag_is_one_undo_step_and_redo_restores(state):
    c = ViewportController(state)
    q0 = state.doc.q.copy()
    n0 = len(state.history.entries)
    x, y = site_xy(state, "r_hand")
    drag(c, (x, y), (x + 40, y + 70))
    settle(state)
    assert len(state.history.entries) == n0 + 1
    q_drag = state.doc.q.copy()
    target = state.doc.effector("r_hand").position.copy()
    c.on_key_press(K.Z, K.MOD_CTRL)
    assert np.array_equal(state.doc.q, q0)
    assert state.doc.effector("r_hand").mode == FREE
    settle(state, 5)
    assert np.array_equal(state.doc.q, q0)  # nothing constrained moves: no IK drift
    c.on_key_press(K.Z, K.MOD_CTRL | K.MOD_SHIFT)
    assert state.doc.effector("r_hand").mode == TARGET
    assert np.array_equal(state.doc.effector("r_hand").position, target)
    settle(state)
    assert np.allclose(state.doc.q, q_drag, atol=1e-3)


def test_axis_constraint_x_key(state):
    c = ViewportController(state)
    i = state.skeleton.site_index("l_hand")
    start = state.fk.site_positions[i].copy()
    x, y = site_xy(state, "l_hand")
    c.on_key_press(K.Z, 0)  # hold Z: vertical only
    drag(c, (x, y), (x + 50, y + 80))
    c.on_key_release(K.Z, 0)
    p = state.doc.effector("l_hand").position
    assert np.allclose(p[:2], start[:2], atol=1e-9)
    assert p[2] > start[2] + 0.05


def test_shift_constrains_to_dominant_axis(state):
    c = ViewportController(state)
    i = state.skeleton.site_index("l_hand")
    start = state.fk.site_positions[i].copy()
    x, y = site_xy(state, "l_hand")
    drag(c, (x, y), (x + 5, y + 100), modifiers=K.MOD_SHIFT)
    d = state.doc.effector("l_hand").position - start
    assert np.count_nonzero(np.abs(d) > 1e-12) == 1


def test_escape_cancels_a_drag(state):
    c = ViewportController(state)
    doc0 = state.doc
    x, y = site_xy(state, "l_hand")
    c.on_mouse_press(x, y, K.LEFT, 0)
    for k in range(1, 6):
        c.on_mouse_drag(x + 10 * k, y, 10, 0, K.LEFT, 0)
        actions.update(state, 1 / 60)
    assert not np.array_equal(state.doc.effector("l_hand").position, doc0.effector("l_hand").position)
    c.on_key_press(K.ESCAPE, 0)
    assert state.doc is doc0 and state.drag is None
    c.on_mouse_release(x + 50, y, K.LEFT, 0)
    assert len(state.history.entries) == 1


def test_pin_key_and_context_menu_request(state):
    c = ViewportController(state)
    x, y = site_xy(state, "head")
    c.on_mouse_press(x, y, K.LEFT, 0)
    c.on_mouse_release(x, y, K.LEFT, 0)  # a click: selects, no edit
    assert state.selected_site == "head" and state.doc.effector("head").mode == FREE
    assert len(state.history.entries) == 1
    c.on_key_press(K.P, 0)
    assert state.doc.effector("head").mode == PINNED
    assert np.allclose(state.doc.effector("head").position,
                       state.fk.site_positions[state.skeleton.site_index("head")])
    c.on_key_press(K.P, 0)
    assert state.doc.effector("head").mode == TARGET
    c.on_key_press(K.DELETE, 0)
    assert state.doc.effector("head").mode == FREE
    c.on_key_press(K.Z, K.MOD_CTRL)
    assert state.doc.effector("head").mode == TARGET
    # right click on a handle opens its context menu (the UI reads state.context_site)
    x, y = site_xy(state, "r_foot")
    c.on_mouse_press(x, y, K.RIGHT, 0)
    c.on_mouse_release(x, y, K.RIGHT, 0)
    assert state.context_site == "r_foot"


def test_click_joint_selects_it_and_dof_edit_respects_limits(state):
    skel = state.skeleton
    c = ViewportController(state)
    j = skel.joint_index("l_knee")
    x, y = window_xy(state, state.fk.joint_positions[j])
    c.on_mouse_motion(x, y, 0, 0)
    assert state.hover_joint == j and state.hover_site is None
    c.on_mouse_press(x, y, K.LEFT, 0)
    c.on_mouse_release(x, y, K.LEFT, 0)
    assert state.selected_joint == j
    k = skel.joint_dofs(j)[0]
    q0 = state.doc.q.copy()
    actions.set_dof(state, k, 10.0)  # far beyond the upper limit
    assert state.doc.q[k] == skel.upper[k]
    actions.commit(state, "edit")
    # the pinned foot below the knee moved with the FK edit: its pin follows, no fight
    settle(state, 5)
    assert state.doc.q[k] == skel.upper[k]
    assert state.at_limit()[j]
    c.on_key_press(K.Z, K.MOD_CTRL)
    assert np.array_equal(state.doc.q, q0)


def test_background_drag_orbits_and_wheel_zooms_and_keys_reset(state):
    c = ViewportController(state)
    cam = state.camera
    yaw, dist = cam.yaw, cam.distance
    x, y = 300, 700  # empty corner of the view
    c.on_mouse_press(x, y, K.LEFT, 0)
    for k in range(1, 6):
        c.on_mouse_drag(x + 10 * k, y, 10, 0, K.LEFT, 0)
    c.on_mouse_release(x + 50, y, K.LEFT, 0)
    assert cam.yaw != yaw
    c.on_mouse_scroll(600, 400, 0, 2)
    assert cam.distance < dist
    target = cam.target.copy()
    c.on_mouse_press(600, 400, K.RIGHT, 0)
    c.on_mouse_drag(640, 420, 40, 20, K.RIGHT, 0)
    c.on_mouse_release(640, 420, K.RIGHT, 0)
    assert not np.allclose(cam.target, target)
    c.on_key_press(K.HOME, 0)
    assert cam.yaw == yaw and cam.distance == dist
    state.selected_site = "l_hand"
    c.on_key_press(K.F, 0)
    hand = state.fk.site_positions[state.skeleton.site_index("l_hand")]
    assert np.linalg.norm(cam.target - hand) < 0.5 and cam.distance < dist


def test_orientation_ring_drag_rotates_the_target(state):
    c = ViewportController(state)
    actions.set_oriented(state, "r_hand", True)
    state.selected_site = "r_hand"
    e = state.doc.effector("r_hand")
    r0 = e.rotation.copy()
    from animik.app.geometry import build_view
    from animik.app.picking import pick_ring, ring_points

    g = build_view(state)
    # the ring whose axis faces the camera most: grab it at a point of its circle
    k = int(np.argmax(np.abs(g.ring_axes.T @ state.camera.forward)))
    p = ring_points(g, k)[8]
    x, y = window_xy(state, p)
    px, py = c.to_view(x, y)
    assert pick_ring(state, g, px, py) == k
    q = ring_points(g, k)[14]
    x1, y1 = window_xy(state, q)
    drag(c, (x, y), (x1, y1), steps=6)
    r1 = state.doc.effector("r_hand").rotation
    rel = r1 @ r0.T
    ang = np.arccos(np.clip((np.trace(rel) - 1) / 2, -1, 1))
    assert np.isclose(ang, 6 * 2 * np.pi / 64, atol=0.05)  # the ring point followed the cursor
    axis = g.ring_axes[:, k]
    assert np.allclose(rel @ axis, axis, atol=1e-9)  # a rotation about that ring's axis
    settle(state, 120)
    ang_err = state.ik.last_result.angle_error["r_hand"]
    assert ang_err < 2e-2


@pytest.mark.parametrize("target", ["fig2", "wheeled20", "biped12", "body95"])
def test_every_builtin_scene_drags(target):
    from animik.app.actions import scenes_dir

    st = make_state(scenes_dir() / f"{target}.toml")
    c = ViewportController(st)
    site = next(e.site for e in st.doc.effectors if e.mode != PINNED)
    x, y = site_xy(st, site)
    drag(c, (x, y), (x + 15, y + 25))
    settle(st, 30)
    assert st.doc.effector(site).mode != FREE
    assert st.skeleton.within_limits(st.doc.q)
