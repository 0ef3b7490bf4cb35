"""``animik export`` (scene clip → BVH / glb) end to end, and BVH ↔ glb conversion."""

from __future__ import annotations

import numpy as np
import pytest

from animik import anim, cli
from animik.io.bvh import read_bvh, write_bvh
from animik.io.gltf import convert, read_glb
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rigs import load_rig


@pytest.fixture
def main(monkeypatch):
    """``animik.cli.main`` with the export command registered (until cli.py lists it)."""
    mod = "animik.commands.export"
    if mod not in cli._COMMAND_MODULES:
        monkeypatch.setattr(cli, "_COMMAND_MODULES", [*cli._COMMAND_MODULES, mod])
    return cli.main


def _scene(tmp_path, clips, rig="fig2"):
    text = (f'format = "animik-scene"\nformat_version = 1\n\n[scene]\nname = "t"\nrig = "{rig}"\n\n'
            + anim.clips_to_toml(clips))
    path = tmp_path / "scene.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _clips():
    skel = load_rig("fig2")
    q1 = np.array(skel.rest_q)
    q1[skel.dof_index("l_shoulder_abduction")] = 1.0
    wave = anim.clip_from_poses(skel, [0.0, 1.0], [skel.rest_q, q1], name="wave", fps=20,
                                interpolation="smooth")
    reach = anim.add_key(anim.new_clip(skel, "reach", fps=10), 0.0, skel.rest_q)
    reach = anim.add_effector_key(reach, "r_hand", 0.0, [0.2, -0.4, 1.0])
    reach = anim.add_effector_key(reach, "r_hand", 0.5, [0.3, -0.3, 1.2])
    return [wave, reach, anim.new_clip(skel, "empty")]


def test_export_bvh_and_glb(main, tmp_path, capsys):
    clips = _clips()
    scene = _scene(tmp_path, clips)
    assert main(["export", str(scene), "--clip", "wave", "-o", str(tmp_path / "w.bvh")]) == 0
    assert "wrote" in capsys.readouterr().out
    back = read_bvh(tmp_path / "w.bvh")
    want = clips[0].to_motion()
    assert back.n_frames == 21 and abs(back.fps - 20) < 1e-9
    np.testing.assert_allclose(forward_kinematics(back.skeleton, back.q).joint_positions,
                               forward_kinematics(want.skeleton, want.q).joint_positions, atol=1e-9)
    assert main(["export", str(scene), "--clip", "reach", "-o", str(tmp_path / "r.glb"),
                 "--fps", "30"]) == 0
    g = read_glb(tmp_path / "r.glb")
    assert g.n_frames == 16 and g.fps == 30
    np.testing.assert_allclose(g.q, clips[1].to_motion(30).q, atol=2e-6)
    assert main(["export", str(scene), "--clip", "wave", "-o", str(tmp_path / "cm.bvh"),
                 "--unit", "mm"]) == 0
    assert read_bvh(tmp_path / "cm.bvh").meta["bvh_unit"] == "mm"


def test_export_exit_codes(main, tmp_path, capsys):
    scene = _scene(tmp_path, _clips())
    out = tmp_path / "x.bvh"
    out.write_text("old")
    # 2: usage
    assert main(["export", str(scene), "--clip", "wave", "-o", str(tmp_path / "x.fbx")]) == 2
    assert main(["export", str(scene), "-o", str(out)]) == 2  # three clips: --clip needed
    assert "--clip" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["export", str(scene), "--clip", "wave"])  # missing -o
    assert e.value.code == 2
    # 3: bad input
    assert main(["export", str(scene), "--clip", "walk", "-o", str(out)]) == 3
    err = capsys.readouterr().err
    assert "no clip named 'walk'" in err and "'wave'" in err
    assert main(["export", str(scene), "--clip", "empty", "-o", str(out)]) == 3
    assert "clip 'empty' is empty" in capsys.readouterr().err
    assert out.read_text() == "old"  # nothing written
    bad = tmp_path / "bad.toml"
    bad.write_text(scene.read_text().replace('joint = "neck"', 'joint = "nose"'))
    assert main(["export", str(bad), "--clip", "wave", "-o", str(out)]) == 3
    assert "unknown joint 'nose'" in capsys.readouterr().err
    # 4: OS error
    assert main(["export", str(tmp_path / "missing.toml"), "-o", str(out)]) == 4
    assert main(["export", str(scene), "--clip", "wave", "-o",
                 str(tmp_path / "no" / "dir" / "x.bvh")]) == 4
    # a single clip needs no --clip
    one = _scene(tmp_path, _clips()[:1])
    assert main(["export", str(one), "-o", str(tmp_path / "one.glb")]) == 0


def test_convert_helper_bvh_glb(tmp_path):
    skel = load_rig("fig2")
    m = Motion(skel, np.clip(skel.rest_q + np.linspace(0, 1, 10)[:, None] * 0.3, skel.lower,
                             skel.upper), 30.0)
    write_bvh(m, tmp_path / "in.bvh")
    convert(tmp_path / "in.bvh", tmp_path / "out.glb")
    convert(tmp_path / "out.glb", tmp_path / "back.bvh")
    a, b = read_bvh(tmp_path / "in.bvh"), read_bvh(tmp_path / "back.bvh")
    assert a.skeleton.joint_names == b.skeleton.joint_names
    np.testing.assert_allclose(b.q, a.q, atol=2e-6)


def test_cli_convert_glb(tmp_path):
    skel = load_rig("fig2")
    write_bvh(Motion(skel, np.zeros((3, skel.n_dof)), 30.0), tmp_path / "in.bvh")
    assert cli.main(["convert", str(tmp_path / "in.bvh"), str(tmp_path / "out.glb")]) == 0
    assert cli.main(["convert", str(tmp_path / "out.glb"), str(tmp_path / "back.bvh")]) == 0
    np.testing.assert_allclose(read_bvh(tmp_path / "back.bvh").q, read_bvh(tmp_path / "in.bvh").q,
                               atol=1e-6)
