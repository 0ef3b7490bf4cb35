"""The Dope Sheet, the Graph Editor, onion skinning and background tasks, driven through the
whole app offscreen (EGL): clicks, drags, keys and the wheel on the panels, undo."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from app_helpers import SIZE, gui_click, gui_drag, gui_key, make_state
from conftest import SHARED_BVH, needs_shared

from animik import anim
from animik.anim.sampling import track_slopes
from animik.app import actions
from animik.app import keys as K
from animik.app import timeline as tl
from animik.app.editing_ui import SUMMARY
from animik.app.geometry import build_view
from animik.app.timeline import background
from animik.app.timeline import dope_sheet as ds
from animik.app.timeline import graph_editor as ge
from animik.app.ui.graph_panel import handle_points


def _keyed_state():
    st = make_state(None)
    for t, v in ((0.0, 0.2), (0.5, 1.2), (1.0, 0.4), (1.5, 0.9)):
        tl.set_time(st, t)
        actions.set_dof(st, st.skeleton.dof_index("l_elbow_flexion"), v)
        actions.commit(st, "bend")
        tl.key_pose(st)
    st.selected_joint = st.skeleton.joint_index("l_elbow")
    return st


@pytest.fixture
def off():
    from animik.app.gui import Offscreen

    o = Offscreen(_keyed_state(), SIZE)
    for _ in range(3):
        o.frame()
    yield o
    o.release()


def _focus(off, window: str) -> None:
    """Bring a docked tab to the front (what clicking its tab does)."""
    from imgui_bundle import imgui

    imgui.set_current_context(off.gui.imgui_ctx)
    imgui.set_window_focus(window)
    for _ in range(3):
        off.frame()


def _press_drag_release(off, start, end, button, steps=6):
    g = off.gui
    H = off.size[1]
    (x0, y0), (x1, y1) = start, end
    g.on_mouse_motion(x0, H - y0, 0, 0)
    off.frame()
    g.on_mouse_press(x0, H - y0, button, 0)
    off.frame()
    for i in range(1, steps + 1):
        x, y = x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps
        g.on_mouse_drag(x, H - y, 0, 0, button, 0)
        off.frame()
    g.on_mouse_release(x1, H - y1, button, 0)
    off.frame()


def test_dope_sheet_select_move_box_delete_copy_paste_zoom(off):
    st = off.state
    _focus(off, "Dope Sheet")
    view = st.editing.dope
    assert view is not None and view.rows[0][0] == SUMMARY
    n_tracks = len(st.doc.current_clip.tracks)
    y = view.row_y(SUMMARY)
    # click the summary key at frame 15: every track's key there
    gui_click(off, view.x_of(0.5), y)
    assert len(ds.selection(st)) == n_tracks and {k.time for k in ds.selection(st)} == {0.5}
    # drag it 8 frames right: snapped, applied at release, one undo step
    n_hist = st.history.index
    gui_drag(off, (view.x_of(0.5), y), (view.x_of(0.5 + 8.3 / 30), y), top_left=True)
    clip = st.doc.current_clip
    np.testing.assert_allclose(anim.key_times(clip), [0.0, 23 / 30, 1.0, 1.5])
    assert st.history.index == n_hist + 1
    gui_key(off, K.Z, K.MOD_CTRL)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0.0, 0.5, 1.0, 1.5])
    # box select two track rows around frame 30, then Delete (the panel has the keyboard)
    view = st.editing.dope
    (r1, y1), (r2, y2) = view.rows[1], view.rows[2]
    gui_drag(off, (view.x_of(0.9), y1 - 6), (view.x_of(1.1), y2 + 6), top_left=True)
    sel = ds.selection(st)
    assert {(k.name, k.time) for k in sel} == {(r1[1], 1.0), (r2[1], 1.0)}
    assert st.editing.focused
    gui_key(off, K.DELETE)
    clip = st.doc.current_clip
    assert clip.track(r1[1]).times.tolist() == [0.0, 0.5, 1.5]
    other = next(tr.joint for tr in clip.tracks if tr.joint not in (r1[1], r2[1]))
    assert clip.track(other).times.tolist() == [0.0, 0.5, 1.0, 1.5]
    assert st.doc.effector("l_foot").mode == "pinned"  # Delete did not free an effector
    # Ctrl+C the pose at frame 15 (summary key), Ctrl+V at frame 54
    view = st.editing.dope
    gui_click(off, view.x_of(0.5), view.row_y(SUMMARY))
    gui_key(off, K.C, K.MOD_CTRL)
    tl.set_time(st, 1.8)
    gui_key(off, K.V, K.MOD_CTRL)
    clip = st.doc.current_clip
    np.testing.assert_allclose(clip.sample([1.8])[0], clip.sample([0.5])[0], atol=1e-12)
    # the wheel zooms about the mouse; the middle button pans
    t0, t1 = ds.span(st)
    view = st.editing.dope
    xm = view.x_of(1.0)
    off.gui.on_mouse_motion(xm, SIZE[1] - view.row_y(SUMMARY), 0, 0)
    off.frame()
    off.gui.on_mouse_scroll(xm, SIZE[1] - view.row_y(SUMMARY), 0, 2)
    off.frame()
    z0, z1 = ds.span(st)
    assert (z1 - z0) == pytest.approx((t1 - t0) / 1.25 ** 2)
    assert (1.0 - z0) / (z1 - z0) == pytest.approx((1.0 - t0) / (t1 - t0), abs=0.02)
    view = st.editing.dope
    _press_drag_release(off, (view.x_of(1.0), view.row_y(SUMMARY)),
                        (view.x_of(1.0) - 100, view.row_y(SUMMARY)), K.MIDDLE)
    p0, p1 = ds.span(st)
    assert p1 - p0 == pytest.approx(z1 - z0)
    assert p0 - z0 == pytest.approx(100 * (z1 - z0) / (view.x1 - view.x0), rel=0.05)


def test_dope_sheet_ctrl_drag_scales_about_the_playhead(off):
    st = off.state
    _focus(off, "Dope Sheet")
    tl.set_time(st, 0.0)
    off.frame()
    view = st.editing.dope
    y = view.row_y(("joint", "l_elbow"))
    gui_click(off, view.x_of(0.5), y)
    gui_click(off, view.x_of(1.0), y, modifiers=K.MOD_SHIFT)
    assert {k.time for k in ds.selection(st)} == {0.5, 1.0}
    gui_drag(off, (view.x_of(0.5), y), (view.x_of(0.8), y), modifiers=K.MOD_CTRL, top_left=True)
    np.testing.assert_allclose(st.doc.current_clip.track("l_elbow").times, [0.0, 0.8, 1.5, 1.6],
                               atol=1e-12)  # x1.6 about the playhead (frame 0)


def test_graph_editor_drag_key_value_and_tangent(off):
    st = off.state
    _focus(off, "Graph Editor")
    assert ge.curves(st) == [("l_elbow", 0), ("l_elbow", 1)]
    view = st.editing.graph
    deg = 180 / math.pi
    x, y = view.x_of(0.5), view.y_of(1.2 * deg)
    gui_click(off, x, y)
    assert st.editing.graph_key == ("l_elbow", 0, 0.5)
    n_hist = st.history.index
    gui_drag(off, (x, y), (x, y + 30), top_left=True)
    view2 = st.editing.graph
    want = view2.v_of(y + 30) / deg
    tr = st.doc.current_clip.track("l_elbow")
    assert tr.values[1, 0] == pytest.approx(want, abs=0.02 / deg * (view2.v1 - view2.v0))
    assert tr.times.tolist() == [0.0, 0.5, 1.0, 1.5] and st.history.index == n_hist + 1
    # drag the key's right tangent handle down: an edited slope, C1 at the key
    off.frame()
    view = st.editing.graph
    v = tr.values[1, 0]
    slope = track_slopes(tr)[1, 0]
    hx, hy = (round(c) for c in handle_points(view, 0.5, v * deg, slope * deg)[0])  # whole px
    gui_drag(off, (hx, hy), (hx, hy + 25), top_left=True)
    tr = st.doc.current_clip.track("l_elbow")
    assert tr.tangents is not None and np.isfinite(tr.tangents[1, 0])
    want = (view.v_of(hy + 25) - v * deg) / (view.t_of(hx) - 0.5) / deg
    assert tr.tangents[1, 0] == pytest.approx(want, rel=1e-3)
    eps = 1e-6
    q = st.doc.current_clip.sample([0.5 - eps, 0.5, 0.5 + eps], ik=False)[:, st.skeleton.dof_index(
        "l_elbow_flexion")]
    assert (q[1] - q[0]) / eps == pytest.approx(tr.tangents[1, 0], rel=1e-3)
    assert (q[2] - q[1]) / eps == pytest.approx(tr.tangents[1, 0], rel=1e-3)
    gui_key(off, K.Z, K.MOD_CTRL)
    assert st.doc.current_clip.track("l_elbow").tangents is None


def test_onion_skin_ghosts():
    st = _keyed_state()
    tl.set_time(st, 0.5)
    plain = build_view(st)
    J = st.skeleton.n_joints
    o = st.editing.onion
    o.enabled, o.before, o.after, o.step = True, 2, 3, 5
    geom = build_view(st)
    # frame 15: ghosts at 5, 10 (before) and 20, 25, 30 (after)
    assert [f for _, f in tl.onion.ghost_frames(st)] == [5, 10, 20, 25, 30]
    assert len(geom.spheres) == len(plain.spheres) + 5 * J
    ghosts = geom.spheres[len(plain.spheres):].reshape(5, J, 16)
    m = st.doc.current_clip.to_motion()
    from animik.kinematics import forward_kinematics

    fk = forward_kinematics(st.skeleton, m.q[[5, 10, 20, 25, 30]])
    np.testing.assert_allclose(ghosts[:, :, 9:12], fk.joint_positions, atol=1e-5)
    col = ghosts[:, 0, 12:15]
    assert col[0, 0] > col[0, 2] and col[4, 2] > col[4, 0]  # warm before, cool after
    assert np.linalg.norm(col[1] - [0.2, 0.21, 0.24]) > np.linalg.norm(col[0] - [0.2, 0.21, 0.24])
    tl.set_time(st, 0.0)  # nothing before frame 0
    assert [k for k, _ in tl.onion.ghost_frames(st)] == [1, 2, 3]


def test_frames_keep_drawing_while_a_task_runs_and_cancel(off):
    st = off.state
    gate = threading.Event()
    seen = []

    def work(progress):
        for i in range(100):
            progress(i / 100)
            seen.append(i)
            gate.wait(0.05)
        return "done"

    applied = []
    task = st.editing.tasks.start("test", work, applied.append)
    doc = st.doc
    frames = 0
    while not seen:
        off.frame()
    for _ in range(5):  # the worker is blocked on the gate: the window draws on
        off.frame()
        frames += 1
    assert frames == 5 and st.editing.tasks.busy and st.doc is doc
    task.cancel()
    gate.set()
    assert task.wait(10)
    off.frame()
    assert not st.editing.tasks.busy and applied == [] and st.doc is doc


def test_bake_runs_off_the_ui_thread(off):
    """A 3,000-frame IK clip baked while the window keeps drawing; one undo step at the end."""
    st = off.state
    skel = st.skeleton
    clip = anim.new_clip(skel, "long", fps=30.0, base=st.doc.q, length=100.0)
    clip = anim.add_key(clip, 0.0, st.doc.q)
    p = st.fk.site_positions[skel.site_index("l_hand")]
    clip = anim.add_effector_key(clip, "l_hand", 0.0, p)
    clip = anim.add_effector_key(clip, "l_hand", 100.0, p + [0.1, 0.0, 0.15])
    st.editing.tasks.run_now("setup", lambda _p: None, lambda _r: None)
    actions.set_doc(st, st.doc.replace(clips=(clip,), clip=0))
    actions.commit(st, "long clip")
    n_hist = st.history.index
    task = background.bake_async(st)
    assert task is not None
    progress, frames = [], 0
    while not task.done:
        off.frame()
        frames += 1
        progress.append(task.progress)
        assert len(st.doc.clips) == 1  # the document changes only when the task has finished
    off.frame()
    print(f"frames drawn during the bake: {frames}")
    assert frames >= 2 and progress == sorted(progress)
    assert [c.name for c in st.doc.clips] == ["long", "long_baked"] and st.history.index == n_hist + 1
    baked = st.doc.current_clip
    assert not baked.effectors and baked.track(0).n_keys == 3001
    np.testing.assert_allclose(baked.to_motion().q, clip.to_motion().q, atol=1e-9)
    gui_key(off, K.Z, K.MOD_CTRL)
    assert [c.name for c in st.doc.clips] == ["long"]


@needs_shared
def test_background_import_matches_the_direct_one(off):
    st = off.state
    path = SHARED_BVH / "cmu" / "02_01.bvh"
    task = background.import_bvh_async(st, path, math.radians(0.5), 5e-3)
    frames = 0
    while not task.done:
        off.frame()
        frames += 1
    off.frame()
    assert frames >= 1 and task.progress > 0.5
    bg_clip = st.doc.current_clip
    direct = make_state(None)
    assert tl.import_bvh(direct, path, math.radians(0.5), 5e-3)
    want = direct.doc.current_clip
    assert [tr.times.tolist() for tr in bg_clip.tracks] == [tr.times.tolist() for tr in want.tracks]
    np.testing.assert_array_equal(bg_clip.to_motion().q, want.to_motion().q)


def test_timeline_zooms_and_pans_with_the_dope_sheet(off):
    st = off.state
    view = st.timeline_view
    assert (view.start, view.end) == (0.0, pytest.approx(2.0))  # the whole clip by default
    y = view.rows[0][1]
    x = view.x_of(0.5)
    H = SIZE[1]
    off.gui.on_mouse_motion(x, H - y, 0, 0)
    off.frame()
    off.gui.on_mouse_scroll(x, H - y, 0, 3)
    off.frame()
    off.frame()
    view = st.timeline_view
    assert view.end - view.start == pytest.approx(2.0 / 1.25 ** 3)
    assert view.x_of(0.5) == pytest.approx(x, abs=1.0)  # zoomed about the mouse
    assert ds.span(st) == (view.start, view.end)  # the dope sheet shows the same window
    # a click on a frame still goes there (the zoomed mapping)
    gui_click(off, view.x_of(20 / 30), view.top + 10)
    assert st.doc.time == pytest.approx(20 / 30)
    _press_drag_release(off, (view.x_of(0.5), y), (view.x_of(0.5) + 80, y), K.MIDDLE)
    v2 = st.timeline_view
    assert v2.start == pytest.approx(view.start - 80 * (view.end - view.start) / (view.x1 - view.x0),
                                     rel=0.05)


def test_bench_tasks_command_rejects_a_missing_file(tmp_path, capsys):
    from animik.cli import main

    assert main(["bench", "tasks", str(tmp_path / "none.bvh")]) == 3
    assert "no BVH file" in capsys.readouterr().err
