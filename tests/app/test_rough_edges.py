"""Rough edges a new user hit (issue 13 section 4): saving, importing a BVH onto the
character, retarget mode keeping the document's clips and pins, idle redraws, panel widths."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from app_helpers import SIZE, FakeClock, app, gui_click, gui_key, make_state, settle  # noqa: F401

from animik.app import actions
from animik.app import keys as K
from animik.app.state import safe_slug
from animik.scene import load_scene


@pytest.fixture(scope="module")
def walk_bvh(tmp_path_factory):
    from retarget_helpers import write_walker_bvh

    return write_walker_bvh(tmp_path_factory.mktemp("walk") / "walk.bvh", frames=60, fps=30.0)


def test_safe_slug():
    assert safe_slug("default: body95 standing") == "default_body95_standing"
    assert safe_slug("a/b\\\\c") == "a_b_c"
    assert safe_slug(" :: ") == "scene"


def test_ctrl_s_never_overwrites_a_shipped_scene_and_follows_undo(app, tmp_path, monkeypatch):
    """The default scene is the package's: Ctrl+S asks (Save As, a slug in the cwd); after
    a Save As, Ctrl+S writes there; undoing an Open brings back that file, not a display name."""
    monkeypatch.chdir(tmp_path)
    st = app.state
    shipped = st.scene_path
    assert shipped is not None and actions.is_shipped(shipped)
    before = shipped.read_bytes()
    gui_key(app, K.S, K.MOD_CTRL)
    assert st.show_file_browser and st.browser_mode == "save"
    assert st.browser_dir == tmp_path and ":" not in st.browser_name
    assert st.browser_name == "default_body95_standing.scene.toml"
    assert shipped.read_bytes() == before and not list(tmp_path.iterdir())
    # the browser's Save button writes the proposed file; it becomes the document's
    x0, y0, x1, y1 = st.ui_rects["browser_ok"]
    gui_click(app, (x0 + x1) / 2, (y0 + y1) / 2)
    mine = tmp_path / "default_body95_standing.scene.toml"
    assert mine.is_file() and st.scene_path == mine and not st.show_file_browser
    # open a built-in rig, then undo: the default scene comes back with *its* file (mine)
    assert actions.open_into(st, "fig2")
    assert st.scene_path is None
    gui_key(app, K.S, K.MOD_CTRL)  # a built-in rig: asks too
    assert st.show_file_browser and st.browser_name == "fig2.scene.toml"
    st.show_file_browser = False
    actions.undo(st)
    app.frame()
    assert st.skeleton.name == "body95" and st.scene_path == mine
    mine.unlink()
    gui_key(app, K.S, K.MOD_CTRL)
    assert mine.is_file() and not st.show_file_browser
    assert load_scene(mine).skeleton.name == "body95"
    assert [p.name for p in tmp_path.iterdir()] == [mine.name]
    assert shipped.read_bytes() == before
    # redo the open: fig2 has no file again
    actions.redo(st)
    assert st.scene_path is None


def test_export_and_retarget_paths_default_to_the_working_folder(app, tmp_path, monkeypatch,
                                                                 walk_bvh):
    """Export / Save As / the retarget export propose the cwd (then the last folder written),
    never the package's scenes/ (the default scene's folder) nor the source BVH's folder."""
    from animik.app import timeline
    from animik.app.modes import retarget as rm
    from animik.app.ui.files import open_browser

    monkeypatch.chdir(tmp_path)
    st = app.state
    scenes = actions.scenes_dir()
    assert st.browser_dir == scenes  # opening browses the shipped scenes; writing does not
    timeline.key_pose(st)
    for mode in ("export", "save"):
        open_browser(st, mode)
        assert st.browser_dir == tmp_path, mode
    out = tmp_path / "sub"
    out.mkdir()
    assert timeline.export_current(st, out / "a.bvh") == out / "a.bvh"
    open_browser(st, "export")
    assert st.browser_dir == out  # the last folder used
    open_browser(st, "save")
    assert st.browser_dir == out
    st.show_file_browser = False
    assert rm.enter(st, str(walk_bvh), "body95", play=False)
    path = rm.default_export_path(st)
    assert path.parent == out and path.parent != Path(walk_bvh).parent


def test_import_bvh_as_clip_retargets_onto_the_current_character(app, walk_bvh):
    """Animation › Import BVH as clip… on body95 with a clip and pinned feet: the walk is
    retargeted onto body95 and added as a clip (one undo step); skeleton, clips, pins stay."""
    from animik.app import timeline

    st = app.state
    timeline.key_pose(st)  # a clip of the user's
    doc = st.doc
    pins = [e.site for e in doc.effectors if e.mode == "pinned"]
    assert pins and len(doc.clips) == 1
    n_undo = st.history.index
    assert timeline.import_bvh(st, walk_bvh)
    assert st.skeleton is doc.skeleton and st.doc.clips[0] is doc.clips[0]
    assert [c.name for c in st.doc.clips] == [doc.clips[0].name, "walk"] and st.doc.clip == 1
    assert [e.site for e in st.doc.effectors if e.mode == "pinned"] == pins
    assert st.history.index == n_undo + 1 and "retargeted onto body95" in st.messages[-1].text
    m = st.doc.current_clip.to_motion()
    assert m.skeleton is doc.skeleton and m.n_frames == 60
    # the character walks: its pelvis travels forward about as far as the walker's hips (1 m/s,
    # 2 s), scaled to body95
    from animik.kinematics import joint_positions

    pelvis = joint_positions(m.skeleton, m.q)[:, 0]
    assert 1.0 < np.linalg.norm(pelvis[-1, :2] - pelvis[0, :2]) < 3.0
    # a second import: a unique name
    assert timeline.import_bvh(st, walk_bvh)
    assert st.doc.clips[-1].name == "walk 2"
    actions.undo(st)
    actions.undo(st)
    assert st.doc.clips == doc.clips and st.skeleton is doc.skeleton
    app.frame()


def test_retarget_mode_gives_the_clips_and_pins_back(app, walk_bvh):
    """Tools › Retarget… onto the current character hid its clips and dropped its pins:
    leaving gives them back (pose too), with the baked clip added; undo steps in between."""
    from animik.app import timeline
    from animik.app.modes import retarget as rm

    st = app.state
    timeline.key_pose(st)
    timeline.rename_clip(st, "mine")
    before = st.doc
    pins = {e.site: e.position.copy() for e in before.effectors if e.mode == "pinned"}
    assert set(pins) == {"l_foot", "r_foot"}
    assert rm.enter(st, str(walk_bvh), "body95", play=False)
    assert "gives default: body95 standing back (1 clip, 2 pins / targets)" in \
        st.messages[-1].text
    app.frame()
    assert rm.bake(st) is not None
    app.frame()
    assert rm.leave(st)
    app.frame()
    doc = st.doc
    assert not rm.active(st) and doc.skeleton is before.skeleton
    assert [c.name for c in doc.clips] == ["mine", "walk_body95"] and doc.clip == 1
    assert doc.clips[0] is before.clips[0]
    assert {e.site: e.position for e in doc.effectors if e.mode == "pinned"}.keys() == pins.keys()
    for site, p in pins.items():
        np.testing.assert_array_equal(doc.effector(site).position, p)
    assert "back to default: body95 standing" in st.messages[-1].text
    assert st.scene_path is not None and st.scene_path.name == "default.toml"
    actions.undo(st)
    assert rm.active(st)
    actions.undo(st)  # the bake
    actions.undo(st)  # entering
    assert st.doc.clips == before.clips and not rm.active(st)


def test_retarget_a_bvh_document_onto_a_rig_keeps_the_rig_or_goes_back(app, walk_bvh):
    """A BVH document retargeted onto another skeleton: leaving keeps the target rig (as
    before) and says how to get the BVH document back; "Back to" returns to it."""
    from animik.app.modes import retarget as rm

    st = app.state
    assert actions.open_into(st, walk_bvh)
    bvh_doc = st.doc
    assert rm.enter(st, None, "fig2", play=False)
    assert "is kept" in st.messages[-1].text
    assert not rm.comes_back(st)
    assert rm.leave(st)
    assert st.skeleton.name == "fig2" and "two Ctrl+Z away" in st.messages[-1].text
    actions.undo(st)
    assert rm.leave(st, back=True)
    assert st.doc.skeleton is bvh_doc.skeleton and st.doc.clips == bvh_doc.clips
    assert np.array_equal(st.doc.q, bvh_doc.q)


def test_an_idle_app_draws_no_frames(app):
    """Frames only while something changes: after the start-up frames and the IK settling an
    idle app draws nothing over 600 ticks; input, a drag, playback, a request wake it."""
    from animik.app import timeline
    from animik.app.pacing import FramePacer

    st = app.state
    clock = FakeClock()
    app.gui.pacer = FramePacer(clock)
    st.messages.clear()
    first = settle(app, clock)
    assert first > 0
    assert settle(app, clock, 600) == 0  # idle: nothing
    # a mouse move: a few frames (imgui's hover settles), then nothing again
    app.gui.on_mouse_motion(600, 400, 1, 1)
    n = settle(app, clock, 600)
    assert 0 < n < 100
    assert settle(app, clock, 600) == 0
    # playback of a clip: a frame every tick while it plays
    timeline.key_pose(st)
    st.messages.clear()
    timeline.toggle_play(st)
    assert settle(app, clock, 120) == 120
    timeline.toggle_play(st)
    settle(app, clock, 200)
    assert settle(app, clock, 600) == 0
    # something outside the loop (a background task) asks for a frame
    st.redraw_requested = True
    assert settle(app, clock, 600) > 0
    # an info banner: one more frame when it is due to go
    st.info("hello")
    app.gui.pacer.request()
    settle(app, clock, 100)
    assert st.messages  # still shown
    app.gui.pacer.wake_at = clock.t + 0.5  # (Message.time is real time: due now in test time)
    st.messages[-1].time -= 10.0
    assert settle(app, clock, 600) > 0 and not st.messages
    assert settle(app, clock, 600) == 0
    # a background task running (its progress bar moves): pacing.TASK_FPS frames a second
    # until it ends (every tick before: tests/app/test_pacing_task.py)
    import threading

    from animik.app.pacing import TASK_FPS

    gate = threading.Event()
    st.editing.tasks.start("wait", lambda progress: gate.wait(5), lambda r: None)
    assert 0 < settle(app, clock, 60) <= TASK_FPS + 1
    gate.set()
    st.editing.tasks.current._thread.join(5)
    settle(app, clock, 200)
    assert not st.editing.tasks.busy
    assert settle(app, clock, 600) == 0


def test_typing_in_a_text_field_shows_every_character_at_once(app, tmp_path):
    """All queued characters go into the next frame (no one-per-frame trickle)."""
    from animik.app.ui.files import open_browser

    st = app.state
    open_browser(st, "export")
    st.browser_name = ""
    for _ in range(3):
        app.frame()
    x0, y0, x1, y1 = st.ui_rects["browser_ok"]
    # click in the name field (left of the button)
    gui_click(app, x0 - 60, (y0 + y1) / 2)
    text = "a_long_name_typed_fast"
    for ch in text:
        app.gui.on_key_press(K.A, 0)
        app.gui.on_text(ch)
        app.gui.on_key_release(K.A, 0)
    app.frame()
    assert st.browser_name == text


@pytest.mark.skipif(not any(p.name == "dataset-1_walk_normal_001.bvh"
                            for p in __import__("conftest").shared_bvh_files()),
                    reason="../shared/data/bvh not present")
def test_a_bvh_is_framed_by_its_whole_motion_and_followed_when_playing():
    """Bandai's walk: a static joint_Root at the origin, the hips walk 8 m. Opened, every
    frame's body is in view; with follow on, the camera moves with the hips while playing."""
    from conftest import shared_bvh_files

    from animik.app import timeline
    from animik.app.framing import body_centre, motion_points, setup_camera

    path = [p for p in shared_bvh_files() if p.name == "dataset-1_walk_normal_001.bvh"][0]
    st = make_state(str(path))
    st.camera.width, st.camera.height = st.view_rect[2], st.view_rect[3]
    setup_camera(st, None)
    pts = motion_points(st)
    assert pts is not None and np.ptp(pts[:, 1]) > 7.0  # the whole walk
    root = st.fk.joint_positions[0]
    assert np.allclose(root, 0.0) and not np.any(np.all(np.isclose(pts, 0.0), axis=1))
    px = np.array([st.camera.project(p)[:2] for p in pts])
    w, h = st.view_rect[2], st.view_rect[3]
    assert (px[:, 0] > 0).all() and (px[:, 0] < w).all() and (px[:, 1] > 0).all() \
        and (px[:, 1] < h).all()
    # follow during playback
    from animik.app.framing import follow_playback

    st.follow_playback = True
    timeline.toggle_play(st)
    actions.update(st, 1.0 / 30.0)
    follow_playback(st)  # the first followed frame anchors the body's centre
    t0 = st.camera.target.copy()
    c0 = body_centre(st)
    for _ in range(60):
        actions.update(st, 1.0 / 30.0)
        follow_playback(st)
    c1 = body_centre(st)
    moved = st.camera.target - t0
    assert np.linalg.norm(c1[:2] - c0[:2]) > 0.5
    np.testing.assert_allclose(moved[:2], (c1 - c0)[:2], atol=0.05)
    assert moved[2] == 0.0


def _overflow(app, name: str) -> float:
    """Pixels by which a window's content is wider than its inside (imgui's measure of the
    widest item last frame); <= 0 when nothing is cut off at the right."""
    from imgui_bundle import imgui

    imgui.set_current_context(app.gui.imgui_ctx)
    w = imgui.internal.find_window_by_name(name)
    return float(w.content_size_ideal.x - w.inner_rect.get_width())


def test_effectors_and_retarget_panels_fit_at_1280x800(app, walk_bvh):
    """At 1280x800 (the panels ~290 px wide) nothing is cut off: the Effectors table's mode
    combo shows "pinned" whole (it read "pin▼"), the Retarget panel in retarget mode with an
    edit, a bake and its report fits (it was 356 px of content in 289)."""
    from imgui_bundle import imgui

    from animik.app.modes import retarget as rm

    st = app.state
    imgui.set_current_context(app.gui.imgui_ctx)
    imgui.internal.focus_window(imgui.internal.find_window_by_name("Effectors"))
    for _ in range(3):
        app.frame()
    assert _overflow(app, "Effectors") <= 0
    x0, _, x1, _ = st.ui_rects["effectors_mode"]
    style = imgui.get_style()
    assert x1 - x0 >= imgui.calc_text_size("pinned").x + 2 * style.frame_padding.x
    assert x1 <= st.ui_rects["effectors_content"][2]
    assert rm.enter(st, str(walk_bvh), "body95", play=False)
    actions.set_mode(st, "l_foot", "pinned")
    assert rm.bake(st) is not None
    for _ in range(4):
        app.frame()
    assert _overflow(app, "Retarget") <= 0


def test_a_move_and_click_arriving_together_click_a_tab(app):
    """Drawn on demand, the window may be asleep when a move and a click arrive together:
    imgui sees the position a frame before the button (the Effectors tab opens)."""
    from imgui_bundle import imgui

    imgui.set_current_context(app.gui.imgui_ctx)
    w = imgui.internal.find_window_by_name("Effectors")
    assert w.hidden
    g = app.gui
    y = SIZE[1] - 34
    g.on_mouse_motion(1087, y, 0, 0)
    g.on_mouse_press(1087, y, 1, 0)
    g.on_mouse_release(1087, y, 1, 0)
    for _ in range(4):
        app.frame()
    assert not w.hidden
