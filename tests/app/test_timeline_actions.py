"""The app's animation actions without GL: keys from the keyboard (the viewport controller),
the playhead and the pose, playback, undo, clips, import helpers (animik.app.timeline)."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import make_state

import animik
from animik import anim
from animik.app import actions
from animik.app import keys as K
from animik.app import timeline as tl
from animik.app.controller import ViewportController
from animik.app.state import FREE, PINNED, TARGET, Document


@pytest.fixture
def st():
    return make_state(None)


def press(st, symbol, modifiers=0):
    return ViewportController(st).on_key_press(symbol, modifiers)


def bend(st, dof: str, value: float) -> None:
    actions.set_dof(st, st.skeleton.dof_index(dof), value)
    actions.commit(st, f"edit {dof}")


def test_keys_from_the_keyboard_and_the_pose_following_the_playhead(st):
    assert st.doc.clips == ()
    assert press(st, K.K)  # no clip yet: one is made, the pose keyed at 0
    clip = st.doc.current_clip
    assert clip.name == "clip" and clip.fps == tl.DEFAULT_FPS and clip.length == tl.DEFAULT_LENGTH
    np.testing.assert_array_equal(clip.base, st.doc.q)  # unkeyed joints keep the pose of creation
    q0 = st.doc.q.copy()
    tl.set_time(st, 1.01)  # snapped to a frame
    assert st.doc.time == pytest.approx(30 / 30)
    bend(st, "l_elbow_flexion", 1.4)
    press(st, K.K)
    tl.set_time(st, 2.0)
    bend(st, "r_elbow_flexion", 1.1)
    press(st, K.K)
    clip = st.doc.current_clip
    np.testing.assert_allclose(anim.key_times(clip), [0, 1, 2])
    assert tl.marks(clip).whole.all()
    tl.set_time(st, 0.0)
    np.testing.assert_allclose(st.doc.q, q0, atol=1e-12)
    tl.set_time(st, 0.5)
    np.testing.assert_allclose(st.doc.q, clip.sample([0.5])[0], atol=1e-9)
    k = st.skeleton.dof_index("l_elbow_flexion")
    assert q0[k] < st.doc.q[k] < 1.4
    # the pinned feet are carried along with the body, so the IK has nothing to do
    assert st.doc.effector("l_foot").mode == PINNED
    actions.update(st, 1 / 60)
    np.testing.assert_allclose(st.doc.q, clip.sample([0.5])[0], atol=1e-9)
    # , . [ ] jump between keys; Shift: start / end
    press(st, K.PERIOD)
    assert st.doc.time == 1.0
    press(st, K.BRACKETRIGHT)
    assert st.doc.time == 2.0
    press(st, K.PERIOD)
    assert st.doc.time == 2.0  # no key after the last
    press(st, K.COMMA, K.MOD_SHIFT)
    assert st.doc.time == 0.0
    press(st, K.PERIOD, K.MOD_SHIFT)
    assert st.doc.time == 2.0
    press(st, K.BRACKETLEFT)
    assert st.doc.time == 1.0


def test_joint_keys_target_keys_and_messages(st):
    skel = st.skeleton
    assert press(st, K.K, K.MOD_SHIFT)  # no joint selected: a hint, nothing keyed
    assert st.doc.clips == () and "Select a joint" in st.messages[-1].text
    st.selected_joint = skel.joint_index("r_shoulder")
    press(st, K.K, K.MOD_SHIFT)
    clip = st.doc.current_clip
    assert [tr.joint for tr in clip.tracks] == ["r_shoulder"]
    assert not tl.marks(clip).whole.any()
    # Alt+K: the constrained effectors' targets (the default scene pins both feet)
    press(st, K.K, K.MOD_ALT)
    clip = st.doc.current_clip
    assert {ef.site for ef in clip.effectors} == {"l_foot", "r_foot"}
    assert all(ef.pinned for ef in clip.effectors)
    np.testing.assert_allclose(clip.effector("l_foot").positions[0], st.doc.effector("l_foot").position)
    assert "dof_gains" in clip.ik.options and "reference" not in clip.ik.options
    actions.free_all(st)
    press(st, K.K, K.MOD_ALT)
    assert "No constrained effectors" in st.messages[-1].text
    np.testing.assert_allclose(tl.marks(st.doc.current_clip).target_times, [0.0])


def test_playback_loops_in_real_time_and_stops(st):
    press(st, K.K)
    tl.set_time(st, 1.0)
    bend(st, "l_shoulder_abduction", 0.5)
    press(st, K.K)
    clip = st.doc.current_clip
    assert tl.set_clip_length(st, 1.0)
    clip = st.doc.current_clip
    tl.set_time(st, 0.0)
    assert press(st, K.SPACE) and st.playing
    times = []
    for _ in range(80):
        actions.update(st, 1 / 60)
        times.append(st.doc.time)
    # 31 frames (0..30) at 30 fps = 1.033 s a loop: 80 frames of 1/60 s wrap once
    assert (np.diff(times) < 0).sum() == 1
    assert times[0] == pytest.approx(0.0) and times[1] == pytest.approx(1 / 30)
    np.testing.assert_allclose(st.doc.q, clip.sample([st.doc.time])[0], atol=1e-9)
    press(st, K.SPACE)
    assert not st.playing
    t = st.doc.time
    actions.update(st, 1 / 60)
    assert st.doc.time == t
    st.loop = False
    tl.play(st)
    for _ in range(100):
        actions.update(st, 1 / 60)
    assert not st.playing and st.doc.time == 1.0
    assert tl.play(st) and st.doc.time == 0.0  # at the end without loop: from the start
    # an edit stops playback where it is
    actions.update(st, 0.2)
    bend(st, "r_elbow_flexion", 0.7)
    assert not st.playing
    # an empty clip does not play
    tl.new_clip(st)
    assert not tl.play(st) and "Nothing to play" in st.messages[-1].text


def test_undo_redo_restore_clips_playhead_and_pose(st):
    press(st, K.K)
    tl.set_time(st, 1.0)
    bend(st, "l_elbow_flexion", 1.3)
    press(st, K.K)
    q1 = st.doc.q.copy()
    tl.set_time(st, 0.5)
    assert actions.undo(st)  # the key at 1 (and the scrub after it)
    assert len(anim.key_times(st.doc.current_clip)) == 1 and st.doc.time == 1.0
    assert actions.redo(st)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0, 1])
    np.testing.assert_array_equal(st.doc.q, q1)
    # delete the selected key from the keyboard; Esc clears the selection
    st.selected_key = (1.0, tl.ALL)
    assert press(st, K.DELETE)
    np.testing.assert_allclose(anim.key_times(st.doc.current_clip), [0])
    assert st.selected_key is None
    st.selected_key = (0.0, tl.ALL)
    press(st, K.ESCAPE)
    assert st.selected_key is None
    # reset pose keeps the clips
    actions.reset_pose(st)
    assert len(st.doc.clips) == 1


def test_clip_management_and_names(st):
    press(st, K.K)
    a = tl.duplicate_clip(st)
    assert a.name == "clip copy" and st.doc.clip == 1
    b = tl.new_clip(st)
    assert b.name == "clip 2" and st.doc.clip == 2 and b.is_empty
    assert not tl.rename_clip(st, " ")
    assert not tl.rename_clip(st, "clip copy")
    assert tl.rename_clip(st, "walk")
    assert [c.name for c in st.doc.clips] == ["clip", "clip copy", "walk"]
    assert tl.select_clip(st, 0) and st.doc.clip == 0
    assert tl.delete_clip(st) and [c.name for c in st.doc.clips] == ["clip copy", "walk"]
    assert tl.set_clip_fps(st, 24.0) and st.doc.current_clip.fps == 24.0
    assert tl.set_clip_length(st, 3.0) and st.doc.current_clip.length == 3.0
    assert tl.set_default_interpolation(st, "linear")
    for _ in range(5):  # interpolation, length, fps, delete, select
        actions.undo(st)
    assert [c.name for c in st.doc.clips] == ["clip", "clip copy", "walk"]
    with pytest.raises(ValueError, match="index"):
        Document.new(st.skeleton, "x", clips=st.doc.clips, clip=5)


def test_auto_key_settles_then_keys_the_drag(st):
    st.auto_key = True
    tl.set_time(st, 0.5)
    e = st.doc.effector("l_hand")
    i = st.skeleton.site_index("l_hand")
    p = st.fk.site_positions[i] + [0.05, 0.1, 0.15]
    actions.set_effector(st, e.replace(mode=TARGET, position=p))
    assert tl.auto_key(st, site="l_hand")
    actions.commit(st, "drag + key")
    clip = st.doc.current_clip
    np.testing.assert_allclose(anim.key_times(clip), [0.5])
    hand = animik.kinematics.site_positions(st.skeleton, clip.sample([0.5])[0])[i]
    assert np.linalg.norm(hand - p) < 1e-3  # the IK settled before the key
    # with a target track for the site, the target is keyed too
    tl.key_targets(st, ["l_hand"])
    tl.set_time(st, 1.0)
    actions.set_effector(st, st.doc.effector("l_hand").replace(position=p + [0, 0, 0.05]))
    assert tl.auto_key(st, site="l_hand")
    np.testing.assert_allclose(st.doc.current_clip.effector("l_hand").times, [0.5, 1.0])
    st.auto_key = False
    assert not tl.auto_key(st, site="l_hand")


def test_scrubbing_an_ik_clip_sets_the_targets(st):
    press(st, K.K)
    i = st.skeleton.site_index("r_hand")
    p0 = st.fk.site_positions[i].copy()
    actions.set_effector(st, st.doc.effector("r_hand").replace(mode=TARGET, position=p0))
    tl.key_targets(st, ["r_hand"])
    tl.set_time(st, 1.0)
    actions.set_effector(st, st.doc.effector("r_hand").replace(position=p0 + [0.1, -0.1, 0.2]))
    tl.key_targets(st, ["r_hand"])
    actions.free(st, "r_hand")
    assert st.doc.effector("r_hand").mode == FREE
    tl.set_time(st, 0.5)
    e = st.doc.effector("r_hand")
    assert e.mode == TARGET
    np.testing.assert_allclose(e.position, p0 + [0.05, -0.05, 0.1], atol=1e-12)
    assert np.linalg.norm(st.fk.site_positions[i] - e.position) < 1e-3
    assert st.ik.converged and st.ik.solved_version == st.version


def test_same_skeleton_and_names(st, tmp_path):
    skel = animik.load_rig("fig2")
    path = tmp_path / "a.bvh"
    animik.write_bvh(animik.Motion(skel, np.tile(skel.rest_q, (3, 1)), 30.0), path)
    a = animik.read_bvh(path).skeleton
    b = animik.read_bvh(path).skeleton
    assert tl.same_skeleton(a, b) and not tl.same_skeleton(a, skel)
    assert not tl.same_skeleton(st.skeleton, a)
    assert tl.unique_name(st, "x") == "x"
    assert tl.snap(None, 0.51) == pytest.approx(15 / 30) and tl.snap(None, 9.0) == 2.0
    assert tl.snap(None, -1.0) == 0.0
    # a BVH that cannot be read: a message, the scene kept
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT x\n")
    doc = st.doc
    assert not tl.import_bvh(st, bad)
    assert st.doc is doc and st.messages[-1].level == "error"
