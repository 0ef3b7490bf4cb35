"""Retarget mode in the app, offscreen (EGL): a BVH retargeted onto a rig live every frame, the
source drawn beside the target, drags and pins layered on the motion, bake, export, undo and
error banners. Events go through GuiApp's pyglet-style handlers, as in the window."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import SIZE, make_state, site_xy, window_xy
from conftest import shared_bvh_files
from retarget_helpers import write_unmappable_bvh, write_walker_bvh

from animik.app import actions
from animik.app import keys as K
from animik.app.modes import retarget as rm
from animik.app.state import FREE, PINNED, TARGET, VIEW_BONES
from animik.kinematics import forward_kinematics
from animik.retarget import RetargetEdits, Retargeter

pytestmark = pytest.mark.gl

FPS = 60.0
DT = 1.0 / FPS * 1.0001  # one clip frame per app frame (a hair more: no float round-down)


@pytest.fixture(scope="module")
def walk_bvh(tmp_path_factory):
    return write_walker_bvh(tmp_path_factory.mktemp("rt") / "walk.bvh", frames=90, fps=FPS)


@pytest.fixture
def app(walk_bvh):
    from animik.app.gui import Offscreen

    off = Offscreen(make_state(str(walk_bvh)), SIZE)
    for _ in range(3):
        off.frame()
    yield off
    off.release()


def enter(app, target="body95", play=False, frames=2):
    st = app.state
    assert rm.enter(st, None, target, play=play), [m.text for m in st.messages]
    for _ in range(frames):
        app.frame(DT)
    return rm.current(st).session


def sites_at(skel, q, names):
    """``(T, len(names), 3)`` site positions of poses ``q (T, n_dof)``."""
    fk = forward_kinematics(skel, np.asarray(q))
    return fk.site_positions[:, [skel.site_index(s) for s in names]]


@pytest.mark.parametrize("target", ["body95", "fig2"])
def test_playing_retargets_every_frame_like_retargeter_step(app, walk_bvh, target):
    import animik

    st = app.state
    sess = enter(app, target, play=True, frames=0)
    assert st.doc.skeleton is sess.rt.target and st.doc.rig == target
    # the reference: a fresh Retargeter stepped frame by frame, state carried across frames
    ref = Retargeter(animik.read_bvh(walk_bvh), target)
    q_ref, s_ref = ref.step(0)
    assert np.allclose(st.doc.q, q_ref, atol=1e-12)
    skel = st.skeleton
    for f in range(1, 41):
        app.frame(DT)
        assert sess.frame == f
        q_ref, s_ref = ref.step(f, state=s_ref)
        assert np.allclose(st.doc.q, q_ref, atol=1e-9), f"frame {f}"
        assert skel.within_limits(st.doc.q)
    assert sess.stats.limit_violations == 0 and sess.stats.frames >= 40
    assert sess.stats.mean_mm.max() < 10.0  # the live quality numbers the panel shows
    # pause, scrub back (a cold start at the new frame), step with the keys
    app.gui.on_key_press(K.SPACE, 0)
    app.frame(DT)
    assert not sess.playing
    rm.seek(st, 10)
    app.frame(DT)
    assert sess.frame == 10 and sess.input_state is None
    q10, _ = Retargeter(animik.read_bvh(walk_bvh), target).step(10)
    assert np.allclose(st.doc.q, q10, atol=1e-9)
    app.gui.on_key_press(K.PERIOD, 0)
    app.frame(DT)
    assert sess.frame == 11
    # loop: past the last frame playback wraps to frame 0
    rm.seek(st, sess.n_frames - 1)
    app.frame(DT)
    rm.set_playing(st, True)
    app.frame(DT)
    assert sess.frame == 0


def test_playing_frames_draw_from_the_solvers_frames(app):
    """The retargeter's solve returns its frames at the solved pose: the app adopts them as the
    frame's snapshot (no FK pass of its own while playing), and they are the pose's frames."""
    st = app.state
    sess = enter(app, "body95", play=True, frames=2)
    fk0 = st.stats.fk_passes
    for _ in range(10):
        app.frame(DT)
    assert sess.playing and sess.frame >= 11
    assert st.stats.fk_passes == fk0
    ref = forward_kinematics(st.skeleton, st.doc.q)
    snap = st.fk
    np.testing.assert_allclose(snap.joint_positions, ref.joint_positions, atol=1e-12)
    np.testing.assert_allclose(snap.joint_rotations, ref.joint_rotations, atol=1e-12)
    np.testing.assert_allclose(snap.site_positions, ref.site_positions, atol=1e-12)
    np.testing.assert_allclose(snap.site_rotations, ref.site_rotations, atol=1e-12)


def test_source_is_drawn_beside_the_target(app):
    st = app.state
    sess = enter(app)
    rm.frame_both(st)
    for _ in range(3):
        app.frame(DT)
    img = app.pixels().astype(int)
    x0, y0, w, h = st.view_rect
    fk = st.fk
    tgt_hips = fk.joint_positions[sess.tgt_hips]
    pj, _ = sess.source_points(sess.frame, tgt_hips)
    # the source stands about a metre to the side of the target, on the ground
    d = pj[sess.src_hips] - tgt_hips
    assert 0.9 < np.hypot(d[0], d[1]) < 1.5 and abs(d[2]) < 0.15
    assert abs(pj[:, 2].min() - fk.joint_positions[:, 2].min()) < 0.1

    def pixel(p):
        s = st.camera.project(p)
        return img[int(round(s[1])) + y0, int(round(s[0])) + x0]

    blue = [pixel(p) for p in pj[sess.body]]  # source joints: blue (beside the target's mesh)
    assert sum(int(c[2] > c[0] + 40) for c in blue) >= 0.7 * len(blue), blue
    st.view_mode = VIEW_BONES  # the target as joints and bones
    app.frame(DT)
    img = app.pixels().astype(int)
    assert sum(int(pixel(p)[2] > pixel(p)[0] + 40) for p in pj[sess.body]) >= 0.7 * len(blue)
    for name in ("pelvis", "upper_thorax", "skull"):  # target joints: light grey
        c = pixel(fk.joint_positions[st.skeleton.joint_index(name)])
        assert c.min() > 110 and abs(c[2] - c[0]) < 40, (name, c)
    # only the retarget effectors have handles (body95's fingertips are hidden)
    from animik.app.geometry import build_view

    g = build_view(st)
    shown = {st.skeleton.site_names[i] for i in g.handle_sites}
    assert shown == set(sess.editable) == {"l_hand", "r_hand", "l_foot", "r_foot", "head"}
    assert len(g.free_spheres) == len(shown)


def gui_press_drag(app, site, delta, steps=8):
    st, g = app.state, app.gui
    x, y = site_xy(st, site)
    g.on_mouse_motion(x, y, 0, 0)
    app.frame(DT)
    assert st.hover_site == site
    g.on_mouse_press(x, y, K.LEFT, 0)
    app.frame(DT)
    px, py = x, y
    for i in range(1, steps + 1):
        nx, ny = x + delta[0] * i / steps, y + delta[1] * i / steps
        g.on_mouse_drag(nx, ny, nx - px, ny - py, K.LEFT, 0)
        px, py = nx, ny
        app.frame(DT)
    return px, py


def test_drag_a_hand_while_playing_layers_an_offset(app, walk_bvh):
    import animik

    st = app.state
    sess = enter(app, play=True)
    skel = st.skeleton
    others = ["r_hand", "l_foot", "r_foot", "head"]
    x, y = gui_press_drag(app, "l_hand", (30, 70))
    assert st.drag is not None and st.doc.effector("l_hand").mode == TARGET
    # the hand is under the cursor (the handle is where the mouse put it)
    hx, hy = window_xy(st, st.doc.effector("l_hand").position)
    assert abs(hx - x) < 3 and abs(hy - y) < 3
    hand_err, other_err = [], []
    offset = sess.drag_offset.copy()
    assert offset[2] > 0.1  # dragged up
    for _ in range(30):  # hold the mouse still while the clip plays
        app.frame(DT)
        s = sess.state
        goal = st.doc.effector("l_hand").position
        assert np.allclose(goal, sess.target_of(s, "l_hand"))  # the handle is the drag target
        hand_err.append(np.linalg.norm(st.fk.site_positions[skel.site_index("l_hand")] - goal))
        other_err += [np.linalg.norm(st.fk.site_positions[skel.site_index(o)] - sess.target_of(s, o))
                      for o in others]
        assert skel.within_limits(st.doc.q)
    hand_err, other_err = 1e3 * np.array(hand_err), 1e3 * np.array(other_err)
    assert np.median(hand_err) < 2.0 and np.percentile(hand_err, 90) < 5.0, hand_err
    assert np.median(other_err) < 2.0 and other_err.max() < 20.0
    # the edit rides on the motion: the drag target is the retargeted hand plus the offset,
    # and the other effectors' targets are the unedited retarget's
    ref = Retargeter(animik.read_bvh(walk_bvh), "body95")
    s_ref = None
    for f in range(sess.frame + 1):  # played from frame 0 as the app did
        _, s_ref = ref.step(f, state=s_ref)
    k = ref.effector_sites.index("l_hand")
    base = sess.state.targets[k] - offset
    assert np.linalg.norm(base - s_ref.targets[k]) < 0.02
    for o in ("r_hand", "head"):
        i = ref.effector_sites.index(o)
        assert np.linalg.norm(sess.state.targets[i] - s_ref.targets[i]) < 1e-9
    # release: the edit is kept as an offset on the motion (one undo step)
    app.gui.on_mouse_release(x, y, K.LEFT, 0)
    app.frame(DT)
    link = rm.current(st)
    assert np.allclose(link.offsets["l_hand"], offset)
    assert st.history.entries[st.history.index][0] == "drag l_hand"
    for _ in range(10):
        app.frame(DT)
    e = st.doc.effector("l_hand")
    assert e.mode == TARGET and np.allclose(e.position, sess.target_of(sess.state, "l_hand"))
    assert np.linalg.norm(st.fk.site_positions[skel.site_index("l_hand")] - e.position) < 5e-3
    # undo removes the edit; with "keep" off a released drag is cleared
    app.gui.on_key_press(K.Z, K.MOD_CTRL)
    app.frame(DT)
    assert "l_hand" not in rm.current(st).offsets and st.doc.effector("l_hand").mode == FREE
    rm.ui_of(st).keep_edits = False
    x, y = gui_press_drag(app, "r_hand", (-20, 40))
    app.gui.on_mouse_release(x, y, K.LEFT, 0)
    app.frame(DT)
    assert st.doc.effector("r_hand").mode == FREE and not rm.current(st).offsets


def test_pin_a_foot_and_bake(app, walk_bvh):
    import animik

    st = app.state
    sess = enter(app, play=False)
    skel = st.skeleton
    # an offset on the left hand (drag while paused), then pin the right foot with P
    x, y = gui_press_drag(app, "l_hand", (0, 40))
    app.gui.on_mouse_release(x, y, K.LEFT, 0)
    app.frame(DT)
    offset = np.array(rm.current(st).offsets["l_hand"])
    assert offset[2] > 0.08
    rm.seek(st, 40)  # the right foot in the air, swinging forward
    app.gui.on_key_press(K.ESCAPE, 0)  # clear the selection (the hand): P pins the hovered foot
    app.frame(DT)
    x, y = site_xy(st, "r_foot")
    app.gui.on_mouse_motion(x, y, 0, 0)
    app.frame(DT)
    app.gui.on_key_press(K.P, 0)
    app.frame(DT)
    pin = st.doc.effector("r_foot")
    assert pin.mode == PINNED
    assert rm.current(st).range_of("r_foot") == (40, sess.n_frames - 1)  # from this frame on
    rm.set_playing(st, True)
    foot = []
    for _ in range(12):  # pins hold while the clip plays
        app.frame(DT)
        foot.append(st.fk.site_positions[skel.site_index("r_foot")].copy())
        assert skel.within_limits(st.doc.q)
    assert np.linalg.norm(np.array(foot) - pin.position, axis=1).max() < 3e-3
    free_foot = sites_at(skel, Retargeter(animik.read_bvh(walk_bvh), "body95").run().motion.q[41:53],
                         ["r_foot"])[:, 0]
    assert np.linalg.norm(free_foot - pin.position, axis=1).max() > 0.1  # unpinned, it swings
    rm.set_playing(st, False)
    # bake: every frame with the edits, one undo step, a clip when the document has clips
    n_clips = len(getattr(st.doc, "clips", ()))
    baked = rm.bake(st)
    app.frame(DT)
    assert baked is not None and baked.n_frames == sess.n_frames and baked.skeleton is skel
    assert st.history.entries[st.history.index][0] == "bake retarget"
    assert rm.current(st).baked is baked
    assert np.all(skel.within_limits(baked.q))
    ref = Retargeter(animik.read_bvh(walk_bvh), "body95")
    q_ref = ref.run().motion.q
    hand = sites_at(skel, baked.q, ["l_hand"])[:, 0]
    hand_ref = sites_at(skel, q_ref, ["l_hand"])[:, 0]
    # the baked clip has the edit: the hand is offset from the plain retarget in every frame
    miss = np.linalg.norm(hand - hand_ref - offset, axis=1)
    assert np.median(miss) < 3e-3 and miss.max() < 0.02
    # the pin holds from frame 40 (as far as the leg reaches: the body walks on); before it
    # blends in, the foot does what the plain retarget does
    feet = sites_at(skel, baked.q, ["r_foot"])[:, 0]
    feet_ref = sites_at(skel, q_ref, ["r_foot"])[:, 0]
    assert np.linalg.norm(feet[40:53] - pin.position, axis=1).max() < 3e-3
    assert np.linalg.norm(feet[:25] - feet_ref[:25], axis=1).max() < 0.01
    report = rm.current(st).report
    assert report.limit_violations == 0 and report.frames == sess.n_frames
    if hasattr(st.doc, "clips"):
        assert len(st.doc.clips) == n_clips + 1
        clip = st.doc.clips[-1]
        assert clip.name == "walk_body95" and st.doc.clip == n_clips
        # the clip reproduces the baked poses (DoFs may be on another 2-pi branch)
        fa = forward_kinematics(skel, clip.to_motion().q).joint_positions
        fb = forward_kinematics(skel, baked.q).joint_positions
        assert np.abs(fa - fb).max() < 1e-6
    # undo the bake
    actions.undo(st)
    app.frame(DT)
    assert rm.current(st).baked is None
    assert len(getattr(st.doc, "clips", ())) == n_clips


def test_export_retargeted_bvh(app, tmp_path):
    import animik

    st = app.state
    enter(app)
    st.doc = st.doc.with_effector(st.doc.effector("head").replace(mode=PINNED))
    out = rm.export_bvh(st, tmp_path / "out.bvh")
    assert out == tmp_path / "out.bvh" and out.is_file()
    back = animik.read_bvh(out)
    motion = rm.bake_motion(st)[0]
    assert back.n_frames == motion.n_frames
    # same world joint positions (body95 is written with baked Euler channels)
    fk_a = forward_kinematics(motion.skeleton, motion.q)
    fk_b = forward_kinematics(back.skeleton, back.q)
    for name in ("l_wrist", "r_ankle", "skull"):
        a = fk_a.joint_positions[:, motion.skeleton.joint_index(name)]
        b = fk_b.joint_positions[:, back.skeleton.joint_index(name)]
        assert np.abs(a - b).max() < 1e-4, name
    # a folder that does not exist: an error banner, nothing written, the app goes on
    assert rm.export_bvh(st, tmp_path / "missing" / "x.bvh") is None
    assert st.messages[-1].level == "error" and "x.bvh" in st.messages[-1].text
    app.frame(DT)


def test_enter_leave_and_undo(app):
    st = app.state
    bvh_doc = st.doc
    sess = enter(app)
    assert rm.active(st) and st.history.entries[st.history.index][0] == "retarget onto body95"
    app.gui.on_key_press(K.Z, K.MOD_CTRL)
    app.frame(DT)
    assert st.doc is bvh_doc and not rm.active(st)
    app.gui.on_key_press(K.Y, K.MOD_CTRL)
    for _ in range(2):
        app.frame(DT)
    assert rm.active(st) and rm.current(st).session is sess
    rm.seek(st, 30)
    app.frame(DT)
    q30 = st.doc.q.copy()
    assert rm.leave(st)
    app.frame(DT)
    assert not rm.active(st) and st.skeleton is sess.rt.target
    assert np.allclose(st.doc.q, q30)  # the target keeps its pose; the app's IK takes over
    actions.undo(st)
    app.frame(DT)
    assert rm.active(st)
    # retarget the same source onto another rig from retarget mode
    assert rm.enter(st, None, "fig2", play=False)
    app.frame(DT)
    assert st.skeleton.name == "fig2" and rm.current(st).session.motion is sess.motion


def test_unmappable_or_bad_input_shows_an_error_and_the_app_goes_on(app, tmp_path):
    st = app.state
    doc = st.doc
    bad = write_unmappable_bvh(tmp_path / "chain.bvh")
    assert not rm.enter(st, str(bad), "body95")
    assert st.doc is doc and not rm.active(st)
    assert st.messages[-1].level == "error" and "chain.bvh" in st.messages[-1].text
    assert "cannot map" in st.messages[-1].text
    for _ in range(3):
        app.frame(DT)
    img = app.pixels().astype(int)
    x, y, w, _ = st.view_rect
    band = img[y + 10:y + 40, x + w // 2 - 100:x + w // 2 + 100]
    assert ((band[..., 0] > band[..., 1] + 40) & (band[..., 0] > 80)).sum() > 200  # red banner
    broken = tmp_path / "broken.bvh"
    broken.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    assert not rm.enter(st, str(broken), "body95")
    assert "broken.bvh" in st.messages[-1].text
    assert not rm.enter(st, str(tmp_path / "nope.bvh"), "body95")
    assert not rm.enter(st, None, "no_such_rig")
    assert "no_such_rig" in st.messages[-1].text
    app.frame(DT)
    assert st.doc is doc
    # and the good file still retargets
    assert rm.enter(st, None, "body95")
    app.frame(DT)


def test_panel_menu_and_keys(app):
    st = app.state
    rm.open_panel(st)
    for _ in range(3):
        app.frame(DT)
    ui = rm.ui_of(st)
    assert ui.show and ui.source_path.endswith("walk.bvh")
    sess = enter(app, play=True, frames=3)
    st.pin_on_release = True
    x, y = gui_press_drag(app, "l_foot", (10, 15), steps=3)
    app.gui.on_mouse_release(x, y, K.LEFT, 0)
    app.frame(DT)
    assert st.doc.effector("l_foot").mode == PINNED  # pin on release
    assert [r[:2] for r in rm.edit_rows(st)] == [("l_foot", "pinned")]
    for _ in range(3):
        app.frame(DT)
    app.gui.on_key_press(K.SPACE, 0)
    assert not sess.playing
    f = sess.frame
    app.gui.on_key_press(K.COMMA, K.MOD_SHIFT)  # 10 frames back
    app.frame(DT)
    assert sess.frame == max(f - 10, 0)
    app.gui.on_key_press(K.SPACE, 0)
    assert sess.playing
    rm.clear_edits(st)
    app.frame(DT)
    assert not rm.edit_rows(st)
    # a fingertip pinned from the Effectors panel is not a retarget effector: freed, noticed
    actions.toggle_pin(st, "l_index_tip")
    app.frame(DT)
    assert st.doc.effector("l_index_tip").mode == FREE
    assert "only" in st.messages[-1].text


@pytest.mark.skipif(not shared_bvh_files(), reason="../shared/data/bvh not present")
@pytest.mark.parametrize("path", shared_bvh_files()[:9], ids=lambda p: p.stem)
def test_shared_bvh_files_retarget_live(app, path):
    st = app.state
    assert actions.open_into(st, path)
    app.frame(DT)
    for target in ("body95", "fig2"):
        assert rm.enter(st, None, target, play=True), st.messages[-1].text
        sess = rm.current(st).session
        rm.seek(st, sess.n_frames // 3)
        for _ in range(12):
            app.frame(DT)
            assert st.skeleton.within_limits(st.doc.q)
        assert sess.stats.limit_violations == 0
        assert np.all(np.isfinite(st.doc.q))
        rm.leave(st)
        actions.undo(st)
        actions.undo(st)  # back to the BVH document
        app.frame(DT)


def test_edits_match_retargeter_with_the_same_edits(app, walk_bvh):
    """A pin set in the app is the RetargetEdits target the library gets."""
    import animik

    st = app.state
    sess = enter(app)
    p = st.fk.site_positions[st.skeleton.site_index("r_foot")].copy()
    actions.set_mode(st, "r_foot", PINNED)
    app.frame(DT)
    edits = rm.edits_of(st)
    assert set(edits.targets) == {"r_foot"} and np.allclose(edits.targets["r_foot"], p)
    ref = Retargeter(animik.read_bvh(walk_bvh), "body95")
    _, s0 = ref.step(0)
    import dataclasses

    from animik.semantics.contacts import FootState

    warm = dataclasses.replace(s0, frame=-1, feet=tuple(FootState() for _ in s0.feet), crouch=0.0)
    q, _ = ref.step(0, state=warm, edits=RetargetEdits(targets={"r_foot": p}))
    assert np.allclose(st.doc.q, q, atol=1e-9)
    assert sess.frame == 0


def test_edit_ranges_blend_in_and_out(app):
    st = app.state
    sess = enter(app)
    assert rm.blend_weight(5, 5, 9, 4) == 1.0 and rm.blend_weight(9, 5, 9, 4) == 1.0
    assert rm.blend_weight(0, 5, 9, 4) == 0.0 and rm.blend_weight(14, 5, 9, 4) == 0.0
    assert 0.0 < rm.blend_weight(3, 5, 9, 4) < rm.blend_weight(4, 5, 9, 4) < 1.0
    # a kept offset on the left hand, held on frames 30..50 only
    x, y = gui_press_drag(app, "l_hand", (0, 30))
    app.gui.on_mouse_release(x, y, K.LEFT, 0)
    app.frame(DT)
    offset = np.array(rm.current(st).offsets["l_hand"])
    rm.set_range(st, "l_hand", 30, 50)
    assert rm.current(st).range_of("l_hand") == (30, 50)
    assert st.history.entries[st.history.index][0] == "range l_hand"
    rm.open_panel(st)
    app.frame(DT)  # the panel draws the range widget
    motion, report, _ = rm.bake_motion(st)
    plain = Retargeter(sess.motion, "body95").run().motion.q
    skel = st.skeleton
    d = sites_at(skel, motion.q, ["l_hand"])[:, 0] - sites_at(skel, plain, ["l_hand"])[:, 0]
    n_blend = round(rm.BLEND_S * sess.fps)
    inside = np.linalg.norm(d[30:51] - offset, axis=1)
    assert np.median(inside) < 3e-3
    outside = np.linalg.norm(d[np.r_[0:30 - n_blend - 1, 51 + n_blend + 1:sess.n_frames]], axis=1)
    assert np.median(outside) < 3e-3  # the plain retarget there (the body's state aside)
    ramp = np.linalg.norm(d[30 - n_blend:30], axis=1)
    assert ramp[0] < 0.5 * np.linalg.norm(offset) < ramp[-1]
    # undo the range: the offset spans the clip again
    actions.undo(st)
    assert rm.current(st).range_of("l_hand") == (0, sess.n_frames - 1)
    # a pin on frames 40..52 blends in from the plain retarget and out back to it
    rm.clear_edits(st)
    rm.seek(st, 40)
    app.frame(DT)
    rm.pin(st, "r_foot")
    rm.set_range(st, "r_foot", 40, 52)
    pin = st.doc.effector("r_foot").position
    motion, _, _ = rm.bake_motion(st)
    feet = sites_at(skel, motion.q, ["r_foot"])[:, 0]
    feet_ref = sites_at(skel, plain, ["r_foot"])[:, 0]
    assert np.linalg.norm(feet[40:53] - pin, axis=1).max() < 3e-3
    assert np.linalg.norm(feet[:40 - n_blend - 1] - feet_ref[:40 - n_blend - 1], axis=1).max() < 0.01
    to_pin = np.linalg.norm(feet[40 - n_blend - 1:40] - pin, axis=1)
    assert np.all(np.diff(to_pin) < 2e-3) and to_pin[-1] < 0.2 * to_pin[0]  # eases in
    steps = np.linalg.norm(np.diff(feet, axis=0), axis=1)
    assert steps.max() < 2.5 * np.linalg.norm(np.diff(feet_ref, axis=0), axis=1).max()  # no pops


def gui_click(app, rect):
    """Click the middle of a window-pixel rect (origin top-left) through GuiApp's handlers."""
    g = app.gui
    x = 0.5 * (rect[0] + rect[2])
    y = SIZE[1] - 0.5 * (rect[1] + rect[3])  # pyglet y points up
    g.on_mouse_motion(x, y, 0, 0)
    app.frame(DT)
    g.on_mouse_press(x, y, K.LEFT, 0)
    app.frame(DT)
    g.on_mouse_release(x, y, K.LEFT, 0)
    app.frame(DT)


def test_tools_menu_panel_buttons_through_the_gui(app):
    """Tools › Retarget…, then the panel's Retarget, Play and Bake buttons, clicked."""
    st = app.state
    ui = rm.ui_of(st)
    gui_click(app, st.ui_rects["tools"])
    assert "menu_retarget" in ui.rects
    gui_click(app, ui.rects["menu_retarget"])
    assert ui.show and ui.source_path.endswith("walk.bvh") and ui.target == "body95"
    app.frame(DT)
    gui_click(app, ui.rects["retarget"])
    assert rm.active(st) and st.skeleton.name == "body95"
    sess = rm.current(st).session
    assert sess.playing  # starts playing
    for _ in range(3):
        app.frame(DT)
    gui_click(app, ui.rects["play"])  # pause
    assert not sess.playing
    f = sess.frame
    for _ in range(3):
        app.frame(DT)
    assert sess.frame == f
    gui_click(app, ui.rects["bake"])
    assert rm.current(st).baked is not None
    assert st.history.entries[st.history.index][0] == "bake retarget"


def test_retarget_mode_loads_no_gl():
    import subprocess
    import sys

    code = ("import sys, animik.app.modes, animik.app.modes.retarget; "
            "bad = [m for m in ('pyglet', 'moderngl', 'imgui_bundle') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
