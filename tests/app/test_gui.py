"""The whole app offscreen (EGL): panels, input routed through imgui first exactly as in the
window (GuiApp's pyglet-style handlers), saving, undo, file drops and error banners."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import SIZE, app, gui_drag, site_xy  # noqa: F401 (app: fixture from app_helpers)

from animik.app import actions
from animik.app import keys as K
from animik.app.state import PINNED, TARGET
from animik.scene import load_scene

pytestmark = pytest.mark.gl


def test_layout_puts_the_view_between_the_panels(app):
    st = app.state
    x, y, w, h = st.view_rect
    assert 150 < x < 400 and 10 < y < 60 and 500 < w < 900 and 450 < h < 800
    img = app.pixels().astype(int)
    # panels (left and right of the view) are drawn, the view shows the character
    assert img[y + 40, 20].sum() > 0 and img[y + 40, x + w + 20].sum() > 0
    j = st.skeleton.joint_index("upper_thorax")
    p = st.camera.project(st.fk.joint_positions[j])
    pix = img[int(p[1]) + y, int(p[0]) + x]
    assert pix.min() > 120, f"character not at its projection: {pix}"


def test_drag_through_the_gui_then_undo_redo_and_save(app, tmp_path):
    st = app.state
    g = app.gui
    i = st.skeleton.site_index("l_hand")
    x, y = site_xy(st, "l_hand")
    gui_drag(app, (x, y), (x - 50, y + 80))
    e = st.doc.effector("l_hand")
    assert e.mode == TARGET
    for _ in range(30):
        app.frame()
    assert np.linalg.norm(st.fk.site_positions[i] - e.position) < 1e-3
    assert st.skeleton.within_limits(st.doc.q)
    q_after = st.doc.q.copy()
    g.on_key_press(K.Z, K.MOD_CTRL)
    app.frame()
    assert st.doc.effector("l_hand").mode != TARGET
    g.on_key_press(K.Y, K.MOD_CTRL)
    for _ in range(10):
        app.frame()
    # redo restores the drag's end; the IK settles from there (redundant DoFs may drift a hair)
    assert np.allclose(st.doc.q, q_after, atol=1e-2)
    assert np.linalg.norm(st.fk.site_positions[i] - e.position) < 1e-3
    st.save_path = tmp_path / "saved.toml"
    g.on_key_press(K.S, K.MOD_CTRL)
    assert st.save_path.is_file()
    sc = load_scene(st.save_path)
    assert np.allclose(sc.q, st.doc.q, atol=1e-12)
    assert set(sc.pinned) == {"l_foot", "r_foot"}
    assert np.allclose(sc.targets["l_hand"], e.position)


def test_clicks_on_panels_go_to_imgui_not_the_view(app):
    st = app.state
    g = app.gui
    cam_yaw = st.camera.yaw
    # the first tree row of the Skeleton panel (pelvis), in pyglet coordinates
    x, y = 45, SIZE[1] - 88
    g.on_mouse_motion(x, y, 0, 0)
    app.frame()
    g.on_mouse_press(x, y, K.LEFT, 0)
    app.frame()
    g.on_mouse_drag(x + 30, y, 30, 0, K.LEFT, 0)
    app.frame()
    g.on_mouse_release(x + 30, y, K.LEFT, 0)
    app.frame()
    assert st.camera.yaw == cam_yaw  # no orbit: the view did not get the drag
    assert st.selected_joint == st.skeleton.joint_index("pelvis")
    app.frame()  # the Joint panel now lists the pelvis DoFs


def test_pin_from_keyboard_and_status(app):
    st = app.state
    g = app.gui
    x, y = site_xy(st, "head")
    g.on_mouse_motion(x, y, 0, 0)
    app.frame()
    g.on_mouse_press(x, y, K.LEFT, 0)
    app.frame()
    g.on_mouse_release(x, y, K.LEFT, 0)
    app.frame()
    assert st.selected_site == "head"
    g.on_key_press(K.P, 0)
    app.frame()
    assert st.doc.effector("head").mode == PINNED


def test_malformed_bvh_drop_shows_error_and_keeps_the_scene(app, tmp_path):
    st = app.state
    bad = tmp_path / "broken.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    doc = st.doc
    app.gui.on_file_drop(600, 400, [str(bad)])
    assert st.doc is doc
    assert st.messages and st.messages[-1].level == "error"
    assert "broken.bvh" in st.messages[-1].text
    for _ in range(3):
        app.frame()
    img = app.pixels().astype(int)
    x, y, w, _ = st.view_rect
    band = img[y + 10:y + 40, x + w // 2 - 100:x + w // 2 + 100]
    assert ((band[..., 0] > band[..., 1] + 40) & (band[..., 0] > 80)).sum() > 200  # red banner
    # an unreadable scene file too
    bad_scene = tmp_path / "bad.toml"
    bad_scene.write_text('format = "animik-scene"\n[scene]\nrig = "no_such_rig"\n')
    app.gui.on_file_drop(600, 400, [str(bad_scene)])
    assert st.doc is doc and "no_such_rig" in st.messages[-1].text
    app.frame()


def test_drop_a_bvh_then_a_rig_and_undo_back(app, tmp_path):
    import animik

    st = app.state
    doc0 = st.doc
    skel = animik.load_rig("fig2")
    q = np.tile(skel.rest_q, (5, 1))
    q[:, skel.dof_index("l_elbow_flexion")] = np.linspace(0, 1, 5)
    path = tmp_path / "clip.bvh"
    animik.write_bvh(animik.Motion(skel, q, fps=30.0), path)
    app.gui.on_file_drop(600, 400, [str(path)])
    app.frame()
    assert st.doc.motion is not None and st.doc.motion.n_frames == 5
    actions.set_frame(st, 4)
    actions.commit(st, "frame")
    app.frame()
    app.gui.on_file_drop(600, 400, ["wheeled20"])
    app.frame()
    assert st.skeleton.name == "wheeled20"
    for _ in range(3):
        app.gui.on_key_press(K.Z, K.MOD_CTRL)
        app.frame()
    assert st.skeleton is doc0.skeleton and np.allclose(st.doc.q, doc0.q, atol=1e-6)


def test_solver_settings_live_and_bad_settings_report(app):
    st = app.state
    s = st.doc.solver
    x, y = site_xy(st, "r_hand")
    actions.set_solver(st, s.replace(name="dls"))
    gui_drag(app, (x, y), (x + 30, y + 40))
    assert st.ik.last_result.solver == "dls"
    if "fik" in actions.available_solvers():
        actions.set_solver(st, st.doc.solver.replace(name="fik").with_option("h", 10.0)
                           .with_option("A", -5.0))
        e = st.doc.effector("r_hand")
        actions.set_effector(st, e.replace(position=e.position + [0.0, 0.0, 0.05]))
        app.frame()
        assert st.ik.failed and st.messages[-1].level == "error"
        app.frame()  # still running, scene intact
        actions.set_solver(st, st.doc.solver.with_option("h", 0.2))
        for _ in range(30):
            app.frame()
        assert not st.ik.failed and st.ik.last_result.solver == "fik"


def test_file_browser_lists_scenes_and_renders(app):
    from animik.app.ui.files import list_dir, open_browser

    st = app.state
    open_browser(st, "open")
    st.browser_dir = actions.scenes_dir()
    dirs, files = list_dir(st.browser_dir)
    assert {"default.toml", "body95.toml", "fig2.toml", "wheeled20.toml", "biped12.toml"} <= \
        {f.name for f in files}
    for _ in range(3):
        app.frame()
    open_browser(st, "save")
    app.frame()
    assert st.browser_name.endswith(".toml")


def test_every_panel_draws_for_every_rig(app):
    st = app.state
    for name in ("fig2", "wheeled20", "biped12", "body95"):
        assert actions.open_into(st, name)
        st.selected_joint = 1
        st.selected_site = st.skeleton.site_names[0]
        actions.set_oriented(st, st.selected_site, True)
        st.show_help = True
        for _ in range(2):
            app.frame()
