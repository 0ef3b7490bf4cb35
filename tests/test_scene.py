"""Scene files: write/read round trips, relative rig paths, BVH rigs, errors, and driving the IK."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import animik
from animik.errors import FileFormatError, RigNotFoundError, UnknownNameError
from animik.kinematics import site_poses
from animik.scene import Scene, SceneTarget, dumps_scene, load_scene, loads_scene, save_scene

SCENES = Path(__file__).resolve().parents[1] / "scenes"


def _scene(rng) -> Scene:
    skel = animik.load_rig("body95")
    lo = np.where(np.isfinite(skel.lower), skel.lower, -1.0)
    hi = np.where(np.isfinite(skel.upper), skel.upper, 1.0)
    q = rng.uniform(lo, hi)
    p, R = site_poses(skel, q)
    i, j = skel.site_index("l_hand"), skel.site_index("r_foot")
    targets = (
        SceneTarget("l_hand", p[i] + rng.normal(size=3) * 0.05, R[i], pinned=False, weight=2.5),
        SceneTarget("r_foot", p[j], None, pinned=True),
        SceneTarget("head", [0.1, 0.0, 1.7]),
    )
    return Scene("body95", skel, q, targets, solver="dls", iterations_per_frame=7,
                 solver_options={"damping": 0.02, "adaptive": "lm", "max_step": 0.3},
                 camera={"target": (0.0, 0.1, 1.0), "distance": 2.5, "yaw": 0.3, "pitch": -0.2},
                 name='odd "name"\n with escapes')


def test_round_trip_is_exact(tmp_path, rng):
    sc = _scene(rng)
    path = save_scene(sc, tmp_path / "s.toml")
    back = load_scene(path)
    assert back.skeleton is sc.skeleton  # built-in rigs are cached
    assert np.array_equal(back.q, sc.q)
    assert back.name == sc.name and back.rig == "body95" and back.path == path
    assert back.solver == "dls" and back.iterations_per_frame == 7
    assert dict(back.solver_options) == dict(sc.solver_options)
    for a, b in zip(sc.targets_list, back.targets_list, strict=True):
        assert a.site == b.site and a.pinned == b.pinned and a.weight == b.weight
        assert np.array_equal(a.position, b.position)
        assert (a.rotation is None) == (b.rotation is None)
        if a.rotation is not None:
            assert np.allclose(a.rotation, b.rotation, atol=1e-14)
    assert np.allclose(back.camera["target"], sc.camera["target"])
    assert math.isclose(back.camera["yaw"], 0.3, abs_tol=1e-10)
    # writing what was read gives the same text
    assert dumps_scene(back) == dumps_scene(sc)


def test_targets_pins_and_solve_ik_from_a_scene(rng):
    from animik.ik import solve_ik

    sc = load_scene(SCENES / "body95.toml")
    assert set(sc.pinned) == {"l_foot", "r_foot"}
    assert set(sc.targets) == {"r_hand", "l_hand"}
    assert isinstance(sc.targets["l_hand"], tuple)  # a 6-D target
    res = solve_ik(sc.skeleton, sc.q, sc.all_targets, solver="dls", max_iterations=300)
    assert res.converged
    p = animik.site_positions(sc.skeleton, sc.q)
    for site, tgt in sc.all_targets.items():
        pos = tgt[0] if isinstance(tgt, tuple) else tgt
        assert np.linalg.norm(p[sc.skeleton.site_index(site)] - pos) < 1e-3  # saved converged


@pytest.mark.parametrize("name", ["default", "body95", "fig2", "wheeled20", "biped12"])
def test_builtin_scenes_load(name):
    sc = load_scene(SCENES / f"{name}.toml")
    assert sc.skeleton.within_limits(sc.q)
    assert sc.targets_list
    if name == "default":
        assert sc.rig == "body95"


def test_missing_dofs_take_rest_values_and_relative_rig_path(tmp_path):
    skel = animik.load_rig("fig2")
    rig = tmp_path / "rigs" / "my.toml"
    rig.parent.mkdir()
    from animik.io.rigfile import write_rig

    write_rig(skel, rig)
    sub = tmp_path / "scenes"
    sub.mkdir()
    text = ('format = "animik-scene"\n[scene]\nrig = "../rigs/my.toml"\n'
            '[pose]\nl_elbow_flexion = 0.5\n')
    (sub / "a.toml").write_text(text)
    sc = load_scene(sub / "a.toml")
    assert sc.skeleton.n_dof == skel.n_dof
    k = sc.skeleton.dof_index("l_elbow_flexion")
    expect = skel.rest_q.copy()
    expect[k] = 0.5
    assert np.array_equal(sc.q, expect)
    # saved elsewhere, the rig path is rewritten so it still resolves
    out = save_scene(sc, tmp_path / "copy.toml")
    assert 'rig = "rigs/my.toml"' in out.read_text()
    assert load_scene(out).skeleton.n_dof == skel.n_dof


def test_bvh_rig_and_frame(tmp_path):
    skel = animik.load_rig("fig2")
    q = np.tile(skel.rest_q, (4, 1))
    q[:, skel.dof_index("r_knee_flexion")] = [0.0, 0.2, 0.4, 0.6]
    animik.write_bvh(animik.Motion(skel, q, fps=24.0), tmp_path / "clip.bvh")
    (tmp_path / "s.toml").write_text('[scene]\nrig = "clip.bvh"\nframe = 2\n')
    sc = load_scene(tmp_path / "s.toml")
    clip = animik.read_bvh(tmp_path / "clip.bvh")
    assert np.array_equal(sc.q, clip.q[2])
    assert sc.frame == 2 and sc.motion.n_frames == 4
    with pytest.raises(FileFormatError, match="frame"):
        loads_scene('[scene]\nrig = "clip.bvh"\nframe = 9\n', base_dir=tmp_path)


@pytest.mark.parametrize("text, err, match", [
    ("not toml [[", FileFormatError, "not a valid TOML"),
    ('format = "animik-rig"\n[scene]\nrig = "fig2"\n', FileFormatError, "format"),
    ("[pose]\nx = 1\n", FileFormatError, r"\[scene\]"),
    ('[scene]\nrig = "fig2"\n[pose]\nnope = 1.0\n', FileFormatError, r"\[pose\] nope: unknown DoF"),
    ('[scene]\nrig = "fig2"\n[pose]\nl_elbow_flexion = "a"\n', FileFormatError, "finite number"),
    ('[scene]\nrig = "fig2"\n[[targets]]\nsite = "tail"\nposition = [0, 0, 0]\n',
     FileFormatError, "unknown site 'tail'"),
    ('[scene]\nrig = "fig2"\n[[targets]]\nsite = "head"\nposition = [0, 0]\n',
     FileFormatError, "list of 3 numbers"),
    ('[scene]\nrig = "fig2"\n[[targets]]\nsite = "head"\nposition = [0, 0, 1]\nweight = 0\n',
     FileFormatError, "positive"),
    ('[scene]\nrig = "fig2"\n[solver]\nname = "magic"\n', FileFormatError, "unknown solver"),
    ('[scene]\nrig = "fig2"\nextra = 1\n', FileFormatError, "unknown key 'extra'"),
    ('[scene]\nrig = "no_such_rig"\n', RigNotFoundError, "no_such_rig"),
])
def test_errors_name_the_problem(text, err, match):
    with pytest.raises(err, match=match):
        loads_scene(text, source="t.toml")


def test_pose_out_of_limits_is_clipped_and_duplicate_targets_rejected():
    sc = loads_scene('[scene]\nrig = "fig2"\n[pose]\nl_elbow_flexion = 99.0\n')
    k = sc.skeleton.dof_index("l_elbow_flexion")
    assert sc.q[k] == sc.skeleton.upper[k]
    skel = sc.skeleton
    with pytest.raises(FileFormatError, match="more than one target"):
        Scene("fig2", skel, skel.rest_q, (SceneTarget("head", [0, 0, 1]),
                                         SceneTarget("head", [0, 0, 2])))
    with pytest.raises(UnknownNameError):
        Scene("fig2", skel, skel.rest_q, (SceneTarget("tail", [0, 0, 1]),))


def test_save_is_atomic(tmp_path):
    sc = load_scene(SCENES / "fig2.toml")
    path = save_scene(sc, tmp_path / "s.toml")
    before = path.read_text()
    bad = sc.replace(solver_options={"weird": object()})
    with pytest.raises(FileFormatError):
        save_scene(bad, path)
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


def test_scene_with_clips_round_trips(tmp_path):
    from dataclasses import replace

    from animik.anim import add_key, new_clip

    skel = animik.load_rig("fig2")
    q1 = skel.rest_q.copy()
    q1[skel.dof_index(skel.dof_names[-1])] = 0.5
    clip = add_key(add_key(new_clip(skel, name="wave", fps=30.0), 0.0, skel.rest_q), 1.0, q1)
    scene = replace(Scene.from_skeleton(skel), clips=(clip,))
    path = tmp_path / "s.toml"
    save_scene(scene, path)
    back = load_scene(path)
    assert [c.name for c in back.clips] == ["wave"]
    t = np.linspace(0, 1, 7)
    np.testing.assert_allclose(back.clips[0].sample(t), clip.sample(t), atol=1e-12)
    with pytest.raises(FileFormatError, match="unique names"):
        replace(scene, clips=(clip, clip))
