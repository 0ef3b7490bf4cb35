"""Drive mode: the balance MPC drives wheeled20 in the app (logic, no GL)."""

import numpy as np
import pytest
from app_helpers import make_state

from animik.app import actions
from animik.app import keys as K
from animik.app.modes.drive import (
    current,
    enter,
    leave,
    octagon_margin,
    set_goal,
    start_recording,
    stop_recording,
    support_margin_now,
)

SCENE = "scenes/wheeled20_drive.toml"


def _drive(st, keys, frames, dt=1 / 60):
    current(st).keys_override = set(keys)
    margins = []
    for _ in range(frames):
        actions.update(st, dt)
        sess = current(st)
        model_margin = octagon_margin(sess, sess.model_cop())
        margins.append((octagon_margin(sess), support_margin_now(sess), model_margin))
    return np.array(margins)


def test_drive_scene_opens_in_drive_mode_and_other_rigs_do_not():
    assert current(make_state(SCENE)) is not None
    st = make_state("body95")
    assert current(st) is None
    assert not enter(st)  # no balance data: a message, no crash
    assert any("balance data" in m.text for m in st.messages)


def test_driving_around_a_corner_keeps_the_cop_in_the_octagon():
    st = make_state(SCENE)
    m1 = _drive(st, {K.UP_ARROW}, 150)           # forward 2.5 s
    m2 = _drive(st, {K.LEFT_ARROW, K.LSHIFT}, 150)  # abrupt turn to the left, faster
    margins = np.concatenate([m1, m2])
    # the MPC keeps its model's CoP in the octagon (on it at worst); the full body's CoP (the
    # one shown) differs from the model's by up to 16 mm here: it stays within 2 mm of the
    # octagon and well inside the wheels (46 mm)
    assert margins[:, 2].min() > -1e-6
    assert margins[:, 0].min() > -2e-3 and margins[:, 1].min() > 0.04
    sess = current(st)
    body, base = sess.current()
    assert base[0, 0] > 0.8 and base[1, 0] > 0.8  # went forward, then left
    assert sess.infeasible_cycles == 0 and sess.cycles >= 49
    # the rig is posed from the plant: base DoFs on b, the upper-body CoM over c
    q = st.doc.q
    names = st.skeleton.dof_names
    assert np.allclose([q[names.index("base_x")], q[names.index("base_y")]], base[:, 0])
    np.testing.assert_allclose(sess.full_body.upper_com(np.array(q))[:2], body[:, 0], atol=2e-3)


def test_yaw_keys_turn_the_base_and_forward_follows_the_heading():
    st = make_state(SCENE)
    _drive(st, {K.Q}, 60)
    assert current(st).yaw > 0.5
    yaw = current(st).yaw
    _drive(st, {K.W}, 120)
    _, base = current(st).current()
    v = base[:, 1]
    assert np.dot(v / np.linalg.norm(v), [np.cos(yaw), np.sin(yaw)]) > 0.99


def test_goal_on_the_floor_is_reached():
    st = make_state(SCENE)
    set_goal(st, [0.6, -0.4, 0.0])
    m = _drive(st, set(), 360)
    assert m[:, 2].min() > -1e-6 and m[:, 0].min() > -2e-3
    _, base = current(st).current()
    assert np.linalg.norm(base[:, 0] - [0.6, -0.4]) < 0.05
    assert current(st).goal is None  # reached


def test_hand_target_rides_with_the_base_and_the_ik_still_reaches_it():
    st = make_state(SCENE)
    i = st.skeleton.site_index("l_hand")
    hand = st.fk.site_positions[i] + [0.05, 0.0, 0.15]
    e = st.doc.effector("l_hand")
    from animik.app.state import TARGET

    actions.set_effector(st, e.replace(mode=TARGET, position=hand))
    _drive(st, {K.UP_ARROW}, 120)
    e = st.doc.effector("l_hand")
    _, base = current(st).current()
    np.testing.assert_allclose(e.position[:2], hand[:2] + base[:, 0], atol=1e-6)
    _drive(st, set(), 120)  # stand still: the IK converges on the (moved) target
    err = np.linalg.norm(st.fk.site_positions[i] - st.doc.effector("l_hand").position)
    assert err < 0.01


def test_recording_makes_a_clip():
    st = make_state(SCENE)
    n0 = len(st.doc.clips)
    start_recording(st)
    _drive(st, {K.UP_ARROW}, 90)
    assert stop_recording(st)
    assert len(st.doc.clips) == n0 + 1
    clip = st.doc.clips[-1]
    assert clip.name.startswith("drive")
    poses = clip.sample([0.0, 1.4])
    names = st.skeleton.dof_names
    assert poses[1, names.index("base_x")] > poses[0, names.index("base_x")] + 0.2


@pytest.mark.gl
def test_drive_mode_in_the_gui_offscreen():
    """The whole app (EGL): held arrow keys drive the base, the Drive panel and the overlay draw."""
    from animik.app.gui import Offscreen

    off = Offscreen(make_state(SCENE), (1280, 800))
    try:
        for _ in range(3):
            off.frame()
        st = off.gui.state
        n_overlay = len(off.gui.controller.geometry().overlay_spheres)
        off.gui.on_key_press(K.UP_ARROW, 0)
        for _ in range(40):
            off.frame(1 / 30)
        off.gui.on_key_release(K.UP_ARROW, 0)
        _, base = current(st).current()
        assert base[0, 0] > 0.3 and current(st).cycles >= 13
        assert octagon_margin(current(st), current(st).model_cop()) > -1e-6
        # b, c (floor and height) and the CoP are drawn over the view
        assert len(off.gui.controller.geometry().overlay_spheres) == n_overlay
        assert n_overlay >= 4
        # the CoP marker (red, drawn last) is on screen where the CoP projects
        off.frame(0.0)
        img = off.pixels().astype(int)
        p = st.camera.project(np.r_[current(st).cop(), 0.004])
        x0, y0, _, _ = st.view_rect
        r, g, b = img[int(round(p[1] + y0)), int(round(p[0] + x0))]
        assert r > 150 and r > g + 60 and r > b + 60, (r, g, b)
    finally:
        off.release()


def test_a_hand_dragged_while_driving_stays_with_the_robot():
    """Drag the hand (viewport controller, synthetic events) while driving: the target keeps its
    place relative to the base, so after the drag the IK reaches it."""
    from app_helpers import site_xy

    from animik.app.controller import ViewportController

    st = make_state(SCENE)
    ctl = ViewportController(st)
    x, y = site_xy(st, "l_hand")
    current(st).keys_override = {K.UP_ARROW}
    ctl.on_mouse_motion(x, y, 0, 0)
    ctl.on_mouse_press(x, y, K.LEFT, 0)
    assert st.drag is not None and st.drag.site == "l_hand"
    for k in range(1, 31):  # one second of driving, the mouse moving up a little
        ctl.on_mouse_drag(x, y + k, 0, 1, K.LEFT, 0)
        actions.update(st, 1 / 30)
    ctl.on_mouse_release(x, y + 30, K.LEFT, 0)
    _, base = current(st).current()
    assert base[0, 0] > 0.2
    _drive(st, set(), 90)
    i = st.skeleton.site_index("l_hand")
    err = np.linalg.norm(st.fk.site_positions[i] - st.doc.effector("l_hand").position)
    assert err < 0.01


def test_enter_and_leave_are_undo_steps_and_undo_keeps_the_session():
    st = make_state("wheeled20")
    assert current(st) is None
    assert enter(st)
    sess = current(st)
    _drive(st, {K.UP_ARROW}, 30)
    assert leave(st) and current(st) is None
    actions.undo(st)  # back into drive mode, the same session
    assert current(st) is sess
    actions.undo(st)  # before entering: the pose mode
    assert current(st) is None
    actions.redo(st)
    assert current(st) is sess


def test_ctrl_click_on_the_floor_sets_the_goal_through_the_mode_seam():
    from app_helpers import window_xy

    from animik.app.controller import ViewportController

    st = make_state(SCENE)
    ctl = ViewportController(st)
    wx, wy = window_xy(st, np.array([0.5, 0.3, 0.0]))
    ctl.on_mouse_press(wx, wy, K.LEFT, K.MOD_CTRL)
    ctl.on_mouse_release(wx, wy, K.LEFT, K.MOD_CTRL)
    assert st.drag is None
    np.testing.assert_allclose(current(st).goal, [0.5, 0.3], atol=2e-3)


def test_the_cop_shown_is_the_full_body_one_from_the_poses_shown():
    """Independent check: inverse dynamics (animik.dynamics.zmp) on the poses the app displayed,
    differenced over frames, gives the CoP the mode draws (not the two-mass model's)."""
    from animik.dynamics import zmp

    st = make_state(SCENE)
    dt = 1 / 240
    _drive(st, {K.UP_ARROW}, 240, dt)  # 1 s forward
    qs, cops, models = [], [], []
    current(st).keys_override = {K.LEFT_ARROW, K.LSHIFT}  # the corner: the largest lean
    for _ in range(60):
        actions.update(st, dt)
        qs.append(np.array(st.doc.q))
        cops.append(current(st).cop())
        models.append(current(st).model_cop())
    qs = np.array(qs)
    qd = (qs[2:] - qs[:-2]) / (2 * dt)
    qdd = (qs[2:] - 2 * qs[1:-1] + qs[:-2]) / dt ** 2
    p = zmp(st.skeleton, qs[1:-1], qd, qdd)[:, :2]
    cops, models = np.array(cops[1:-1]), np.array(models[1:-1])
    err = np.linalg.norm(p - cops, axis=1)
    gap = np.linalg.norm(models - cops, axis=1)
    # equal to 1e-9 m between jerk switches (the mode differences along the plant's motion, the
    # check over frames; < 1 mm where a period boundary falls between two frames)
    assert np.median(err) < 1e-6 and err.max() < 1e-3
    assert gap.max() > 1e-3 and np.median(gap) > 100 * np.median(err)  # not the model's CoP
