"""Keyframe animation in the whole app, offscreen (EGL), driven by events through imgui as in the
window: keys set with K on body95 after dragging hands, key marks, scrubbing, playback and
looping, moving / deleting keys, undo / redo, auto-key, interpolation, IK-driven clips (target
keys), save / load, export from the File menu's browser, BVH import, error banners."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import app, gui_click, gui_drag, gui_key, site_xy  # noqa: F401 (app: fixture from app_helpers)
from conftest import shared_bvh_files

import animik
from animik import anim
from animik.app import actions
from animik.app import keys as K
from animik.app import timeline as tl
from animik.app.state import PINNED, TARGET
from animik.app.ui.files import open_browser
from animik.app.ui.timeline_panel import RULER_H
from animik.io.gltf import read_glb
from animik.kinematics import forward_kinematics
from animik.scene import load_scene

pytestmark = pytest.mark.gl


def click_frame(off, frame: int) -> None:
    """Click the timeline's ruler at a frame (moves the playhead)."""
    v = off.state.timeline_view
    gui_click(off, v.x_of(frame / v.fps), v.top + RULER_H / 2)


def settle(off, n: int = 40) -> None:
    for _ in range(n):
        off.frame()


def drag_site(off, site: str, dx: float, dy: float) -> None:
    x, y = site_xy(off.state, site)
    gui_drag(off, (x, y), (x + dx, y + dy))
    settle(off)


def three_keys(off) -> anim.Clip:
    """K at frame 0; frame 30, drag the left hand up, K; frame 60, drag the right hand, K."""
    st = off.state
    gui_key(off, K.K)
    click_frame(off, 30)
    assert st.doc.time == pytest.approx(1.0)
    drag_site(off, "l_hand", -40, 90)
    gui_key(off, K.K)
    click_frame(off, 60)
    drag_site(off, "r_hand", 40, 70)
    gui_key(off, K.K)
    return st.doc.current_clip


def pixel(off, x: float, y: float) -> np.ndarray:
    return off.pixels()[int(round(y)), int(round(x))].astype(int)


def test_three_keys_marks_scrub_play_and_loop(app):
    st = app.state
    clip = three_keys(app)
    assert len(st.doc.clips) == 1 and clip.name == "clip"
    np.testing.assert_allclose(anim.key_times(clip), [0.0, 1.0, 2.0])
    m = tl.marks(clip)
    assert m.whole.all() and len(clip.tracks) == sum(
        1 for j in range(st.skeleton.n_joints) if len(st.skeleton.joint_dofs(j)))
    # the three poses differ (the hands were dragged between the keys)
    q = clip.sample([0.0, 1.0, 2.0])
    assert np.abs(q[1] - q[0]).max() > 0.1 and np.abs(q[2] - q[1]).max() > 0.1
    # key marks drawn: whole-pose keys are gold diamonds on the "keys" row
    app.frame()
    v = st.timeline_view
    for t in (0.0, 1.0, 2.0):  # (3 px off the centre: the playhead line is at frame 60)
        r, g, b = pixel(app, v.x_of(t) - 3, v.row_y(tl.ALL))
        assert r > 200 and g > 160 and b < 140, (t, r, g, b)
    r, g, b = pixel(app, v.x_of(0.5), v.row_y(tl.ALL))
    assert not (r > 200 and g > 160 and b < 140)  # no key there
    # scrub: the pose follows the playhead, exactly the clip's sample there
    click_frame(app, 45)
    assert st.doc.time == pytest.approx(1.5)
    np.testing.assert_allclose(st.doc.q, clip.sample([1.5])[0], atol=1e-9)
    settle(app, 5)  # the IK leaves the clip's pose alone
    np.testing.assert_allclose(st.doc.q, clip.sample([1.5])[0], atol=1e-9)
    assert st.skeleton.within_limits(st.doc.q)
    # scrub by dragging along the ruler
    gui_drag(app, (v.x_of(0.2), v.top + 5), (v.x_of(0.8), v.top + 5), steps=6, top_left=True)
    assert st.doc.time == pytest.approx(0.8)
    np.testing.assert_allclose(st.doc.q, clip.sample([0.8])[0], atol=1e-9)
    # play: real time at the clip's fps (60 app frames of 1/60 s = 1 s = 30 clip frames)
    click_frame(app, 45)
    gui_key(app, K.SPACE)
    assert st.playing
    times, poses = [], []
    for _ in range(75):
        app.frame(1.0 / 60.0)
        times.append(st.doc.time)
        poses.append(st.doc.q.copy())
        assert st.stats.last_iterations == 0  # the IK is idle during playback
    d = np.diff(times)
    assert (d < 0).sum() == 1, "played past the end once and looped to the start"
    assert times[29] == pytest.approx(1.5 + 15 / 30)  # 30 frames of 1/60 s: 15 clip frames
    assert np.abs(poses[10] - poses[0]).max() > 1e-3  # the pose changes
    for t, q in zip(times[::7], poses[::7], strict=True):
        np.testing.assert_allclose(q, clip.sample([t])[0], atol=1e-9)
    # stop: the pose stays at the playhead
    gui_key(app, K.SPACE)
    assert not st.playing
    t_stop = st.doc.time
    settle(app, 5)
    assert st.doc.time == t_stop
    np.testing.assert_allclose(st.doc.q, clip.sample([t_stop])[0], atol=1e-9)
    # without loop the playback stops at the end
    st.loop = False
    gui_key(app, K.SPACE)
    settle(app, 80)
    assert not st.playing and st.doc.time == pytest.approx(2.0)
    np.testing.assert_allclose(st.doc.q, clip.sample([2.0])[0], atol=1e-9)
    # jump between keys with , and .
    gui_key(app, K.COMMA)
    assert st.doc.time == pytest.approx(1.0)
    gui_key(app, K.COMMA)
    assert st.doc.time == pytest.approx(0.0)
    gui_key(app, K.PERIOD)
    assert st.doc.time == pytest.approx(1.0)
    np.testing.assert_allclose(st.doc.q, clip.sample([1.0])[0], atol=1e-12)


def test_move_delete_keys_with_the_mouse_then_undo_redo(app):
    st = app.state
    three_keys(app)
    app.frame()
    v = st.timeline_view
    y = v.row_y(tl.ALL)
    # drag the key at frame 30 to frame 40 (one undo step, at release)
    gui_drag(app, (v.x_of(1.0), y), (v.x_of(40 / 30), y), steps=8, top_left=True)
    clip = st.doc.current_clip
    np.testing.assert_allclose(anim.key_times(clip), [0.0, 4 / 3, 2.0])
    assert st.selected_key == (pytest.approx(4 / 3), tl.ALL)
    gui_key(app, K.Z, K.MOD_CTRL)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0.0, 1.0, 2.0])
    gui_key(app, K.Z, K.MOD_CTRL | K.MOD_SHIFT)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0.0, 4 / 3, 2.0])
    # click a mark: selects it and moves the playhead there; Delete deletes it
    gui_click(app, v.x_of(2.0), y)
    assert st.selected_key == (pytest.approx(2.0), tl.ALL) and st.doc.time == pytest.approx(2.0)
    gui_key(app, K.DELETE)
    clip = st.doc.current_clip
    np.testing.assert_allclose(anim.key_times(clip), [0.0, 4 / 3])
    np.testing.assert_allclose(st.doc.q, clip.sample([2.0])[0], atol=1e-9)  # re-evaluated
    # right-click a mark: its menu opens (and selects it)
    app.frame()
    gui_click(app, v.x_of(0.0), y, button=K.RIGHT)
    assert st.selected_key == (0.0, tl.ALL)
    gui_key(app, K.ESCAPE)
    # undo the delete and the move; redo both
    gui_key(app, K.Z, K.MOD_CTRL)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0.0, 4 / 3, 2.0])
    gui_key(app, K.Z, K.MOD_CTRL)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0.0, 1.0, 2.0])
    gui_key(app, K.Y, K.MOD_CTRL)
    gui_key(app, K.Y, K.MOD_CTRL)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0.0, 4 / 3])
    # undo back past every key: the clip's creation goes too
    for _ in range(12):
        gui_key(app, K.Z, K.MOD_CTRL)
    assert st.doc.clips == ()


def test_joint_keys_and_interpolation_modes(app):
    st = app.state
    skel = st.skeleton
    gui_key(app, K.K)  # whole pose at 0
    # select the left elbow in the view, bend it at frame 30 with the slider action, Shift+K
    j = skel.joint_index("l_elbow")
    st.selected_joint = j
    click_frame(app, 30)
    k = skel.dof_index("l_elbow_flexion")
    actions.set_dof(st, k, 1.5)
    actions.commit(st, "bend")
    gui_key(app, K.K, K.MOD_SHIFT)
    clip = st.doc.current_clip
    assert clip.track("l_elbow").n_keys == 2 and clip.track("l_shoulder").n_keys == 1
    m = tl.marks(clip)
    np.testing.assert_array_equal(m.whole, [True, False])  # a joint key is not a whole-pose key
    app.frame()
    v = st.timeline_view
    assert [r for r, _ in v.rows] == [tl.ALL, "l_elbow"]
    r, g, b = pixel(app, v.x_of(1.0) - 3, v.row_y("l_elbow"))  # (the playhead is at 1.0)
    assert b > 180 and g > 150 and r < 120  # cyan mark of the selected joint's key
    r, g, b = pixel(app, v.x_of(1.0) - 3, v.row_y(tl.ALL))
    assert r > 200 and 90 < g < 170 and b < 90  # orange: a key of some joints only
    # smooth (default) vs linear vs step between the keys
    assert clip.interpolation == "smooth"
    assert tl.set_key_interpolation(st, "step", 0.0, tl.ALL)
    assert st.doc.current_clip.track("l_elbow").interpolation[0] == "step"
    click_frame(app, 15)
    assert st.doc.q[k] == pytest.approx(clip.sample([0.0])[0][k])  # held
    assert tl.set_key_interpolation(st, "linear", 0.0, "l_elbow")
    q0, q1 = clip.sample([0.0, 1.0])[:, k]
    assert st.doc.q[k] == pytest.approx(0.5 * (q0 + q1))  # re-evaluated at the playhead
    assert tl.key_interpolation(st.doc.current_clip, 0.0, tl.ALL) == "mixed"
    assert tl.set_default_interpolation(st, "step")
    assert st.doc.current_clip.interpolation == "step"
    gui_key(app, K.Z, K.MOD_CTRL)
    assert st.doc.current_clip.interpolation == "smooth"


def test_auto_key_during_a_drag(app):
    st = app.state
    gui_key(app, K.N)
    assert st.auto_key
    click_frame(app, 15)
    drag_site(app, "l_hand", -30, 80)
    clip = st.doc.current_clip
    assert clip is not None
    np.testing.assert_allclose(anim.key_times(clip), [0.5])
    assert tl.marks(clip).whole.all()
    # the settled pose was keyed: the hand is on its target in the key
    np.testing.assert_allclose(clip.sample([0.5])[0], st.doc.q, atol=1e-9)
    i = st.skeleton.site_index("l_hand")
    hand = forward_kinematics(st.skeleton, clip.sample([0.5])[0]).site_positions[i]
    assert np.linalg.norm(hand - st.doc.effector("l_hand").position) < 1e-3
    assert st.history.entries[st.history.index][0] == "drag l_hand + key"
    # a DoF edit with auto-key keys that joint only (through the Joint panel action)
    click_frame(app, 45)
    st.selected_joint = st.skeleton.joint_index("r_elbow")
    app.frame()
    actions.set_dof(st, st.skeleton.dof_index("r_elbow_flexion"), 1.2)
    assert tl.auto_key(st, joints=["r_elbow"])
    actions.commit(st, "edit + key")
    clip = st.doc.current_clip
    assert clip.track("r_elbow").n_keys == 2 and clip.track("l_elbow").n_keys == 1
    # one undo removes the drag and its key together
    gui_key(app, K.Z, K.MOD_CTRL)
    gui_key(app, K.Z, K.MOD_CTRL)
    assert st.doc.current_clip is None or st.doc.current_clip.is_empty or \
        not len(anim.key_times(st.doc.current_clip))
    # auto-key off: a drag keys nothing
    gui_key(app, K.N)
    n = len(st.history.entries)
    drag_site(app, "r_hand", 30, 60)
    assert st.doc.current_clip is None or not len(anim.key_times(st.doc.current_clip))
    assert len(st.history.entries) <= n + 1


def test_target_keys_drive_ik_playback(app):
    st = app.state
    gui_key(app, K.K)
    drag_site(app, "l_hand", -30, 60)
    gui_key(app, K.K, K.MOD_ALT)  # key the targets: the hand's and the pinned feet
    clip = st.doc.current_clip
    assert {ef.site for ef in clip.effectors} == {"l_hand", "l_foot", "r_foot"}
    assert clip.effector("l_foot").pinned and not clip.effector("l_hand").pinned
    assert clip.ik.solver == st.doc.solver.name
    p0 = st.doc.effector("l_hand").position.copy()
    click_frame(app, 30)
    drag_site(app, "l_hand", 60, 60)
    gui_key(app, K.K, K.MOD_ALT)
    clip = st.doc.current_clip
    p1 = st.doc.effector("l_hand").position.copy()
    np.testing.assert_allclose(clip.effector("l_hand").positions, [p0, p1])
    # scrub to the middle: the interpolated target, and the IK-solved pose reaching it
    click_frame(app, 15)
    e = st.doc.effector("l_hand")
    assert e.mode == TARGET and st.doc.effector("l_foot").mode == PINNED
    want = clip.sample_targets([0.5])["l_hand"][0][0]
    np.testing.assert_allclose(e.position, want, atol=1e-12)
    i = st.skeleton.site_index("l_hand")
    assert np.linalg.norm(st.fk.site_positions[i] - want) < 1e-3
    assert 0.05 < np.linalg.norm(want - p0) < np.linalg.norm(p1 - p0)
    # playback: every frame the IK has solved for the keyed targets
    gui_key(app, K.HOME)
    click_frame(app, 0)
    gui_key(app, K.SPACE)
    for _ in range(40):
        app.frame(1.0 / 60.0)
        t = st.doc.time
        target = clip.sample_targets([t])["l_hand"][0][0]
        np.testing.assert_allclose(st.doc.effector("l_hand").position, target, atol=1e-9)
        assert np.linalg.norm(st.fk.site_positions[i] - target) < 1e-3
    gui_key(app, K.SPACE)
    # a handle press during playback pauses it at the playhead
    gui_key(app, K.SPACE)
    app.frame(1.0 / 60.0)
    x, y = site_xy(st, "r_hand")
    gui_drag(app, (x, y), (x + 10, y + 10), steps=3)
    assert not st.playing


def test_clips_live_in_the_scene_file(app, tmp_path):
    st = app.state
    clip = three_keys(app)
    tl.set_key_interpolation(st, "linear", 1.0, tl.ALL)
    tl.duplicate_clip(st)
    assert tl.rename_clip(st, "wave")
    assert not tl.rename_clip(st, "clip") and st.messages[-1].level == "error"  # taken
    st.messages.clear()
    tl.select_clip(st, 0)
    assert [c.name for c in st.doc.clips] == ["clip", "wave"] and st.doc.clip == 0
    st.save_path = tmp_path / "anim.toml"
    gui_key(app, K.S, K.MOD_CTRL)
    sc = load_scene(st.save_path)
    assert [c.name for c in sc.clips] == ["clip", "wave"]
    clip = st.doc.clips[0]
    back = sc.clips[0]
    np.testing.assert_array_equal(anim.key_times(back), anim.key_times(clip))
    t = np.linspace(0, 2, 37)
    np.testing.assert_allclose(back.sample(t), clip.sample(t), atol=1e-12)
    assert back.track("l_elbow").interpolation == ("smooth", "linear", "smooth")
    # reopening the scene gives its clips back in the app
    assert actions.open_into(st, st.save_path)
    assert [c.name for c in st.doc.clips] == ["clip", "wave"]
    click_frame(app, 20)
    np.testing.assert_allclose(st.doc.q, back.sample([20 / 30])[0], atol=1e-9)
    # delete a clip, undo
    tl.select_clip(st, 1)
    tl.delete_clip(st)
    assert [c.name for c in st.doc.clips] == ["clip"]
    gui_key(app, K.Z, K.MOD_CTRL)
    assert [c.name for c in st.doc.clips] == ["clip", "wave"]


def _browse(off, mode: str, folder, name: str, **opts) -> None:
    """File › Export clip... / Import BVH as clip...: the browser, a name, its OK button."""
    st = off.state
    open_browser(st, mode)
    st.browser_dir = folder
    st.browser_name = name
    for k, val in opts.items():
        setattr(st, k, val)
    for _ in range(3):
        off.frame()
    x0, y0, x1, y1 = st.ui_rects["browser_ok"]
    gui_click(off, 0.5 * (x0 + x1), 0.5 * (y0 + y1))
    task = st.editing.tasks.current  # an import runs in the background: let it finish
    if task is not None:
        assert task.wait(120)
        off.frame()


def test_export_from_the_menu_and_import_the_bvh_back(app, tmp_path):
    st = app.state
    clip = three_keys(app)
    want = clip.to_motion()
    fk_want = forward_kinematics(want.skeleton, want.q)
    _browse(app, "export", tmp_path, "three.bvh")
    assert (tmp_path / "three.bvh").is_file() and not st.show_file_browser
    assert st.messages[-1].level == "info"
    back = animik.read_bvh(tmp_path / "three.bvh")
    assert back.n_frames == want.n_frames == 61
    np.testing.assert_allclose(forward_kinematics(back.skeleton, back.q).joint_positions,
                               fk_want.joint_positions, atol=1e-6)
    _browse(app, "export", tmp_path, "three.glb")
    g = read_glb(tmp_path / "three.glb")
    assert g.n_frames == 61 and g.skeleton.dof_names == want.skeleton.dof_names
    np.testing.assert_allclose(g.q, want.q, atol=1e-5)
    np.testing.assert_allclose(forward_kinematics(g.skeleton, g.q).joint_positions,
                               fk_want.joint_positions, atol=1e-5)
    # import the BVH (Animation › Import BVH as clip): its hierarchy is body95's written one
    # (animik.rigs.recognise_rig), so its frames map exactly onto body95 (no retarget) and it is
    # added as a clip; the character stays
    n_clips = len(st.doc.clips)
    _browse(app, "import", tmp_path, "three.bvh", browser_tolerance=False)
    assert st.skeleton.name == "body95" and len(st.doc.clips) == n_clips + 1
    assert st.doc.current_clip.name == "three" and "retargeted" not in st.messages[-1].text
    m = st.doc.current_clip.to_motion()
    assert m.n_frames == 61
    np.testing.assert_allclose(forward_kinematics(m.skeleton, m.q).joint_positions,
                               fk_want.joint_positions, atol=1e-9)
    # File › Open: body95 again (its masses, soles, limits, body), the motion the clip
    assert actions.open_into(st, tmp_path / "three.bvh")
    assert st.skeleton is animik.load_rig("body95") and st.doc.rig == "body95"
    assert "as body95" in st.messages[-1].text
    np.testing.assert_allclose(st.doc.current_clip.to_motion().q, want.q, atol=1e-9)
    # ... or, with the Open browser's "BVH as its own skeleton", the file's own skeleton
    st.bvh_skeleton = True
    assert actions.open_into(st, tmp_path / "three.bvh")
    st.bvh_skeleton = False
    assert st.skeleton.n_dof == back.skeleton.n_dof and st.doc.rig.endswith("three.bvh")
    imp = st.doc.current_clip
    assert imp.name == "three" and imp.track(0).n_keys == 61
    m = imp.to_motion()
    np.testing.assert_allclose(forward_kinematics(m.skeleton, m.q).joint_positions,
                               fk_want.joint_positions, atol=1e-6)  # the same motion
    click_frame(app, 45)
    np.testing.assert_allclose(forward_kinematics(st.skeleton, st.doc.q).joint_positions,
                               fk_want.joint_positions[45], atol=1e-6)
    # again with key reduction: now the rig is the BVH's skeleton, so it becomes a second clip
    _browse(app, "import", tmp_path, "three.bvh", browser_tolerance=True,
            import_tolerance_deg=0.5, import_position_tolerance_mm=2.0)
    assert [c.name for c in st.doc.clips] == ["three", "three 2"] and st.doc.clip == 1
    red = st.doc.current_clip
    assert sum(tr.n_keys for tr in red.tracks) < sum(tr.n_keys for tr in imp.tracks) / 3
    mr = red.to_motion()
    err = np.linalg.norm(forward_kinematics(mr.skeleton, mr.q).joint_positions
                         - fk_want.joint_positions, axis=-1)
    assert err.max() < 2.5e-3
    # edit keys of the imported clip and export again
    t_mid = float(anim.key_times(red)[1])
    assert tl.delete_key(st, t_mid, tl.ALL)
    assert t_mid not in anim.key_times(st.doc.current_clip)
    _browse(app, "export", tmp_path, "again.bvh")
    assert animik.read_bvh(tmp_path / "again.bvh").n_frames == 61
    # undo the imports: body95 is back
    gui_key(app, K.Z, K.MOD_CTRL)
    gui_key(app, K.Z, K.MOD_CTRL)
    gui_key(app, K.Z, K.MOD_CTRL)
    assert st.skeleton.name == "body95"


def test_import_a_small_bvh_and_the_shared_ones(app, tmp_path):
    st = app.state
    skel = animik.load_rig("fig2")
    T = 40
    q = np.tile(skel.rest_q, (T, 1))
    q[:, skel.dof_index("l_elbow_flexion")] = np.linspace(0, 1.2, T)
    q[:, skel.dof_index("r_shoulder_abduction")] = 0.6 * np.sin(np.linspace(0, 3, T))
    path = tmp_path / "small.bvh"
    animik.write_bvh(animik.Motion(skel, q, fps=24.0), path)
    ref = animik.read_bvh(path)
    # opening a .bvh makes its motion the scene's clip
    assert actions.open_into(st, path)
    assert [c.name for c in st.doc.clips] == ["small"]
    # importing a BVH on the document's own skeleton: its frames as they are
    assert tl.import_bvh(st, path)
    clip = st.doc.current_clip
    assert clip.fps == pytest.approx(24.0) and clip.track(0).n_keys == T
    m = clip.to_motion()
    np.testing.assert_allclose(forward_kinematics(m.skeleton, m.q).joint_positions,
                               forward_kinematics(ref.skeleton, ref.q).joint_positions, atol=1e-9)
    assert tl.import_bvh(st, path, tolerance=np.radians(0.5), position_tolerance=1e-3)
    red = st.doc.current_clip
    assert st.doc.clip == 2 and max(tr.n_keys for tr in red.tracks) < T
    for _ in range(2):
        app.frame()
    files = shared_bvh_files()
    for f in files:
        ref = animik.read_bvh(f)
        assert actions.open_into(st, f)  # (onto another skeleton it is retargeted: elsewhere)
        assert tl.import_bvh(st, f), st.messages[-1].text
        m = st.doc.current_clip.to_motion()
        assert m.n_frames == ref.n_frames
        a = forward_kinematics(ref.skeleton, ref.q[::25]).joint_positions
        b = forward_kinematics(m.skeleton, m.q[::25]).joint_positions
        np.testing.assert_allclose(b, a, atol=1e-6, err_msg=str(f))
        app.frame()
    if files:
        small = min(files, key=lambda p: p.stat().st_size)
        assert tl.import_bvh(st, small, tolerance=0.01, position_tolerance=5e-3)
        assert len(st.doc.clips) >= 1


def test_exporting_an_empty_clip_shows_the_error_banner(app, tmp_path):
    st = app.state
    tl.new_clip(st)
    _browse(app, "export", tmp_path, "empty.glb")
    assert not (tmp_path / "empty.glb").exists()
    assert st.messages[-1].level == "error" and "empty" in st.messages[-1].text
    assert st.show_file_browser  # still open: fix the name or cancel
    st.show_file_browser = False
    for _ in range(3):
        app.frame()
    img = app.pixels().astype(int)
    x, y, w, _ = st.view_rect
    band = img[y + 10:y + 40, x + w // 2 - 100:x + w // 2 + 100]
    assert ((band[..., 0] > band[..., 1] + 40) & (band[..., 0] > 80)).sum() > 200  # red banner
    # no clip at all: an error too
    tl.delete_clip(st)
    assert tl.export_current(st, tmp_path / "x.bvh") is None
    assert "No clip" in st.messages[-1].text


def test_bvh_scene_timeline_shows_its_frames(app, tmp_path):
    st = app.state
    skel = animik.load_rig("fig2")
    q = np.tile(skel.rest_q, (12, 1))
    q[:, skel.dof_index("l_elbow_flexion")] = np.linspace(0, 1, 12)
    path = tmp_path / "clip.bvh"
    animik.write_bvh(animik.Motion(skel, q, fps=30.0), path)
    ref = animik.read_bvh(path)
    app.gui.on_file_drop(600, 400, [str(path)])
    for _ in range(2):
        app.frame()
    assert st.doc.current_clip is not None and tl.last_frame(st.doc.current_clip) == 11
    click_frame(app, 7)
    np.testing.assert_allclose(forward_kinematics(st.skeleton, st.doc.q).joint_positions,
                               forward_kinematics(ref.skeleton, ref.q[7]).joint_positions, atol=1e-9)
    # save as a scene: the clip goes with it; reopen
    st.save_path = tmp_path / "bvh_scene.toml"
    gui_key(app, K.S, K.MOD_CTRL)
    assert [c.name for c in load_scene(st.save_path).clips] == ["clip"]
