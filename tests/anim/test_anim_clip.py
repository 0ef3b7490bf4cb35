"""Clips and their pure edit functions, serialisation, motions, bad input."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from animik import anim
from animik.anim import ClipError
from animik.errors import AnimikError, UnknownNameError
from animik.rigs import load_rig


@pytest.fixture
def fig2():
    return load_rig("fig2")


def _pose(skel, **values):
    q = np.array(skel.rest_q)
    for k, v in values.items():
        q[skel.dof_index(k)] = v
    return q


def test_keys_whole_pose_and_selected_joint(fig2):
    clip = anim.new_clip(fig2, "wave", fps=24)
    assert clip.is_empty and clip.length == 0.0 and clip.n_frames == 1
    clip = anim.add_key(clip, 0.0, fig2.rest_q)
    keyed = [fig2.joint_names[j] for j in range(fig2.n_joints) if len(fig2.joint_dofs(j))]
    assert [tr.joint for tr in clip.tracks] == keyed
    q1 = _pose(fig2, l_shoulder_abduction=1.2, r_elbow_flexion=1.0)
    c2 = anim.add_key(clip, 1.0, q1, joints=["l_shoulder"])
    assert clip.track("l_shoulder").n_keys == 1  # the old clip is unchanged
    assert c2.track("l_shoulder").n_keys == 2 and c2.track("r_elbow").n_keys == 1
    q = c2.sample([1.0])[0]
    assert q[fig2.dof_index("l_shoulder_abduction")] == 1.2
    assert q[fig2.dof_index("r_elbow_flexion")] == 0.0  # r_elbow was not keyed at 1 s
    assert c2.length == 1.0 and c2.n_frames == 25
    np.testing.assert_array_equal(c2.frame_times(), np.arange(25) / 24)
    # replacing a key at the same time
    c3 = anim.add_key(c2, 1.0 + 1e-9, q1 * 0.5, joints="l_shoulder", interpolation="step")
    assert c3.track("l_shoulder").n_keys == 2
    assert c3.track("l_shoulder").interpolation == ("linear", "step")
    # one joint's own values
    c4 = anim.set_joint_key(c3, "neck", 0.5, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(c4.sample([0.5])[0][list(fig2.joint_dofs("neck"))], [0.1, 0.2, 0.3])


def test_move_delete_navigate(fig2):
    clip = anim.clip_from_poses(fig2, [0.0, 1.0, 2.0], np.tile(fig2.rest_q, (3, 1)))
    clip = anim.set_joint_key(clip, "neck", 1.5, [0.2, 0.0, 0.0])
    np.testing.assert_array_equal(clip.key_times, [0.0, 1.0, 1.5, 2.0])
    assert anim.next_key_time(clip, 1.0) == 1.5
    assert anim.next_key_time(clip, 1.2, joints=["l_knee"]) == 2.0
    assert anim.previous_key_time(clip, 1.0) == 0.0
    assert anim.previous_key_time(clip, 0.0) is None and anim.next_key_time(clip, 2.0) is None
    moved = anim.move_key(clip, 1.5, 0.5, joints="neck")
    np.testing.assert_array_equal(moved.track("neck").times, [0.0, 0.5, 1.0, 2.0])
    np.testing.assert_array_equal(moved.track("neck").values[1], [0.2, 0.0, 0.0])
    deleted = anim.delete_key(moved, 1.0)
    np.testing.assert_array_equal(deleted.key_times, [0.0, 0.5, 2.0])
    only_neck = anim.delete_key(moved, 0.5, joints=["neck"])
    np.testing.assert_array_equal(only_neck.track("neck").times, [0.0, 1.0, 2.0])
    # moving over an existing key replaces it
    over = anim.move_key(clip, 1.5, 2.0, joints="neck")
    np.testing.assert_array_equal(over.track("neck").times, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(over.track("neck").values[-1], [0.2, 0.0, 0.0])
    # deleting the last key of a track removes the track
    single = anim.set_joint_key(anim.new_clip(fig2), "neck", 0.3, [0, 0, 0])
    assert anim.delete_key(single, 0.3).is_empty
    with pytest.raises(ClipError, match="no key at t=0.7"):
        anim.delete_key(clip, 0.7)
    with pytest.raises(ClipError, match="no key"):
        anim.move_key(clip, 0.7, 1.0)


def test_length_fps_interpolation_settings(fig2):
    clip = anim.clip_from_poses(fig2, [0.0, 1.0], np.tile(fig2.rest_q, (2, 1)), fps=30)
    assert anim.set_length(clip, 2.5).length == 2.5
    assert anim.set_length(clip, 2.5).n_frames == 76
    assert anim.set_fps(clip, 60).n_frames == 61
    sm = anim.set_interpolation(clip, "smooth")
    assert sm.interpolation == "smooth"
    assert all(m == "smooth" for tr in sm.tracks for m in tr.interpolation)
    part = anim.set_interpolation(clip, "step", joints=["neck"], times=[1.0])
    assert part.track("neck").interpolation == ("linear", "step")
    assert part.track("l_knee").interpolation == ("linear", "linear")
    with pytest.raises(ClipError, match="unknown interpolation 'cubic'"):
        anim.set_interpolation(clip, "cubic")


def test_clip_is_immutable(fig2):
    clip = anim.clip_from_poses(fig2, [0.0, 1.0], np.tile(fig2.rest_q, (2, 1)))
    tr = clip.tracks[0]
    with pytest.raises(ValueError):
        tr.values[0, 0] = 1.0
    with pytest.raises(ValueError):
        tr.times[0] = 1.0
    with pytest.raises(ValueError):
        clip.base[0] = 1.0
    with pytest.raises(AttributeError):
        clip.fps = 10  # type: ignore[misc]
    m = clip.to_motion()
    assert m is clip.to_motion()  # sampled once per rate
    assert not m.q.flags.writeable


def test_bad_input(fig2):
    clip = anim.new_clip(fig2, "bad")
    with pytest.raises(UnknownNameError, match="unknown joint 'elbow'.*joints are"):
        anim.add_key(clip, 0.0, fig2.rest_q, joints=["elbow"])
    with pytest.raises(UnknownNameError, match="unknown site 'hand'.*sites are"):
        anim.add_effector_key(clip, "hand", 0.0, [0, 0, 1])
    with pytest.raises(ClipError, match=r"clip 'bad'.*q must have shape \(25,\), got \(24,\)"):
        anim.add_key(clip, 0.0, fig2.rest_q[:-1])
    q = np.array(fig2.rest_q)
    q[3] = np.nan
    with pytest.raises(ClipError, match="clip 'bad'.*NaN"):
        anim.add_key(clip, 0.0, q)
    with pytest.raises(ClipError, match=">= 0 s"):
        anim.add_key(clip, -1.0, fig2.rest_q)
    with pytest.raises(ClipError, match="finite"):
        anim.add_key(clip, float("nan"), fig2.rest_q)
    with pytest.raises(ClipError, match=r"values must have shape \(3,\)"):
        anim.set_joint_key(clip, "neck", 0.0, [0.0, 0.0])
    with pytest.raises(ClipError, match="no DoFs"):
        anim.set_joint_key(anim.new_clip(load_rig("biped12")), "torso", 0.0, [])
    with pytest.raises(ClipError, match=r"position must have shape \(3,\)"):
        anim.add_effector_key(clip, "l_hand", 0.0, [0, 0])
    with pytest.raises(ClipError, match="not a rotation matrix"):
        anim.add_effector_key(clip, "l_hand", 0.0, [0, 0, 1], np.ones((3, 3)))
    c = anim.add_effector_key(clip, "l_hand", 0.0, [0, 0, 1])
    with pytest.raises(ClipError, match="position-only"):
        anim.add_effector_key(c, "l_hand", 1.0, [0, 0, 1], np.eye(3))
    with pytest.raises(ClipError, match="fps must be a positive number"):
        anim.set_fps(clip, 0)
    with pytest.raises(ClipError, match="strictly increasing"):
        anim.JointTrack("neck", [0.0, 0.0], np.zeros((2, 3)))
    with pytest.raises(ClipError, match=r"values must have shape \(2, 3\)"):
        clip.replace(tracks=(anim.JointTrack("neck", [0.0, 1.0], np.zeros((2, 2))),))
    with pytest.raises(ClipError, match="two tracks for joint 'neck'"):
        tr = anim.JointTrack("neck", [0.0], np.zeros((1, 3)))
        clip.replace(tracks=(tr, tr))
    with pytest.raises(UnknownNameError, match="unknown IK solver 'magic'"):
        anim.set_ik(clip, solver="magic")
    with pytest.raises(UnknownNameError, match="neither a joint nor a DoF"):
        anim.set_ik(clip, dofs=["nose"])
    with pytest.raises(ClipError, match="times must have shape"):
        anim.clip_from_poses(fig2, [0.0, 1.0], np.zeros((2, 25))).sample(np.zeros((2, 2)))
    with pytest.raises(ClipError, match="NaN"):
        anim.clip_from_poses(fig2, [0.0, 1.0], np.zeros((2, 25))).sample([np.nan])
    # an empty clip cannot be turned into a motion; errors are AnimikErrors naming the clip
    with pytest.raises(ClipError, match="clip 'bad' is empty"):
        clip.to_motion()
    assert issubclass(ClipError, AnimikError)


def test_nan_in_sampled_clip_is_reported(fig2):
    clip = anim.clip_from_poses(fig2, [0.0, 1.0], np.zeros((2, 25)), name="broken")
    # a clip corrupted behind the validation (e.g. by a buggy plug-in) is still caught
    object.__setattr__(clip.tracks[0], "values", np.full((2, 6), np.nan))
    with pytest.raises(ClipError, match="clip 'broken'.*NaN.*DoF 'pelvis_tx'"):
        clip.to_motion()


def _ik_clip(skel):
    clip = anim.new_clip(skel, "reach", fps=30, interpolation="smooth")
    clip = anim.add_key(clip, 0.0, _pose(skel, l_elbow_flexion=0.3))
    clip = anim.add_key(clip, 2.0, _pose(skel, l_elbow_flexion=0.6, neck_rotation=0.3))
    clip = anim.add_effector_key(clip, "r_hand", 0.0, [0.1, -0.3, 1.1], np.eye(3))
    clip = anim.add_effector_key(clip, "r_foot", 1.0, [0.0, -0.1, 0.1], pinned=True, weight=2.0)
    clip = anim.set_ik(clip, "fik", {"tol_position": 5e-4, "max_iterations": 80},
                       dofs=["r_shoulder", "r_elbow"])
    return anim.set_base(anim.set_length(clip, 2.5), skel.rest_q)


def test_dict_and_toml_round_trip(fig2):
    clip = _ik_clip(fig2)
    clip = anim.set_interpolation(clip, "step", joints=["neck"], times=[0.0])
    clip = anim.set_base(clip, _pose(fig2, l_knee_flexion=0.4))
    d = anim.clip_to_dict(clip)
    assert d["base"] == {"l_knee_flexion": 0.4}

    def plain(v):
        if isinstance(v, dict):
            return all(isinstance(k, str) and plain(x) for k, x in v.items())
        if isinstance(v, list):
            return all(plain(x) for x in v)
        return isinstance(v, (str, int, float, bool))

    assert plain(d)
    back = anim.clip_from_dict(d, fig2)
    assert anim.clip_to_dict(back) == d
    text = anim.clips_to_toml([clip, anim.rename(clip, "second")])
    doc = tomllib.loads(text)
    assert [c["name"] for c in doc["clips"]] == ["reach", "second"]
    again = anim.clip_from_dict(doc["clips"][0], fig2)
    assert anim.clip_to_dict(again) == d
    t = np.linspace(0, 2.5, 11)
    np.testing.assert_array_equal(again.sample(t, ik=False), clip.sample(t, ik=False))


def test_dict_errors(fig2):
    d = anim.clip_to_dict(anim.clip_from_poses(fig2, [0.0], fig2.rest_q[None], name="c"))
    with pytest.raises(ClipError, match="unknown key 'speed'"):
        anim.clip_from_dict({**d, "speed": 2}, fig2)
    bad = {**d, "tracks": [{**d["tracks"][1], "joint": "knee"}]}
    with pytest.raises(UnknownNameError, match="tracks\\[0\\].joint: unknown joint 'knee'"):
        anim.clip_from_dict(bad, fig2)
    bad = {**d, "tracks": [{**d["tracks"][1], "dofs": ["a", "b", "c"]}]}
    with pytest.raises(ClipError, match="has DoFs"):
        anim.clip_from_dict(bad, fig2)
    bad = {**d, "tracks": [{**d["tracks"][1], "values": [[0.0, "x", 0.0]]}]}
    with pytest.raises(ClipError, match="values: must be nested lists of numbers"):
        anim.clip_from_dict(bad, fig2)
    with pytest.raises(ClipError, match="fps: must be a finite number"):
        anim.clip_from_dict({**d, "fps": "fast"}, fig2)
    # the supports record Make feasible keeps with a clip (a JSON text or "floor")
    kept = anim.clip_from_dict({**d, "supports": "floor"}, fig2)
    assert kept.meta["supports"] == "floor" and anim.clip_to_dict(kept)["supports"] == "floor"
    assert "supports" not in anim.clip_to_dict(anim.clip_from_dict(d, fig2))
    with pytest.raises(ClipError, match="supports: must be a non-empty string"):
        anim.clip_from_dict({**d, "supports": 3}, fig2)
    with pytest.raises(UnknownNameError, match="unknown DoF 'wing'"):
        anim.clip_from_dict({**d, "base": {"wing": 1.0}}, fig2)
    with pytest.raises(UnknownNameError, match="unknown site 'tail'"):
        anim.clip_from_dict({**d, "effectors": [{"site": "tail", "times": [0.0],
                                                 "positions": [[0.0, 0.0, 0.0]]}]}, fig2)
