"""Motion → clip (with key reduction) → motion, and clip export to BVH / glb."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import needs_shared, random_q, shared_bvh_files

from animik import anim
from animik.anim import ClipError
from animik.errors import FileFormatError
from animik.io.bvh import read_bvh, write_bvh
from animik.io.gltf import read_glb
from animik.joints import local_transforms
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rigs import load_rig


def _keyed_clip(name="body95", mode="smooth"):
    skel = load_rig(name)
    rng = np.random.default_rng(5)
    poses = np.clip(skel.rest_q + rng.normal(size=(4, skel.n_dof)) * 0.3, skel.lower, skel.upper)
    return anim.clip_from_poses(skel, [0.0, 0.4, 1.1, 1.5], poses, name="k", fps=30,
                                interpolation=mode)


def test_keys_to_bvh_round_trip(tmp_path):
    # body95 is not BVH-representable (axes like -z are, rest rotations below the root on the
    # thumbs are not), so use fig2, whose DoFs are all principal axes.
    clip = _keyed_clip("fig2")
    out = anim.export_clip(clip, tmp_path / "k.bvh")
    back = read_bvh(out)
    want = clip.sample(clip.frame_times())
    assert back.n_frames == clip.n_frames == 46
    assert abs(back.fps - clip.fps) < 1e-9
    # the BVH skeleton has BVH channel names: compare poses through the joint transforms
    np.testing.assert_allclose(forward_kinematics(back.skeleton, back.q).joint_positions,
                               forward_kinematics(clip.skeleton, want).joint_positions, atol=1e-9)
    # joint frames of a non-BVH skeleton are re-expressed in the BVH frame: a constant change
    rb = forward_kinematics(back.skeleton, back.q).joint_rotations
    ra = forward_kinematics(clip.skeleton, want).joint_rotations
    change = np.swapaxes(ra, -1, -2) @ rb
    np.testing.assert_allclose(change, np.broadcast_to(change[:1], change.shape), atol=1e-9)


def test_bvh_clip_round_trip_values(tmp_path):
    # A clip on a BVH skeleton: the file's channels are the DoFs, so values compare directly.
    m = Motion(load_rig("fig2"), np.zeros((2, 25)), 30.0)
    write_bvh(m, tmp_path / "src.bvh")
    skel = read_bvh(tmp_path / "src.bvh").skeleton
    rng = np.random.default_rng(0)
    keys = random_q(skel, rng, (3,)) * 0.4
    clip = anim.clip_from_poses(skel, [0.0, 0.5, 1.0], keys, fps=20, interpolation="smooth")
    back = read_bvh(anim.export_clip(clip, tmp_path / "c.bvh"))
    np.testing.assert_allclose(back.q, clip.to_motion().q, atol=1e-9, rtol=0)


def test_keys_to_glb_and_back(tmp_path):
    clip = _keyed_clip("body95")
    out = anim.export_clip(clip, tmp_path / "k.glb")
    back = read_glb(out)
    assert back.skeleton.dof_names == clip.skeleton.dof_names
    np.testing.assert_allclose(back.q, clip.to_motion().q, atol=2e-6)
    assert back.fps == clip.fps


def test_motion_to_clip_exact_without_tolerance():
    skel = load_rig("fig2")
    rng = np.random.default_rng(1)
    q = np.clip(skel.rest_q + np.cumsum(rng.normal(size=(40, skel.n_dof)) * 0.05, axis=0),
                skel.lower, skel.upper)
    m = Motion(skel, q, 25.0, meta={"clip": "walk"})
    clip = anim.clip_from_motion(m, continuous=False)
    assert clip.name == "walk" and clip.fps == 25.0 and clip.n_frames == 40
    np.testing.assert_array_equal(clip.to_motion().q, q)


def test_empty_motion_and_bad_tolerance():
    skel = load_rig("fig2")
    with pytest.raises(ClipError, match="no frames"):
        anim.clip_from_motion(Motion(skel, np.zeros((0, skel.n_dof)), 30.0))
    with pytest.raises(ClipError, match="tolerance must be a positive number"):
        anim.clip_from_motion(Motion(skel, np.zeros((3, skel.n_dof)), 30.0), tolerance=-1)


def _check_reduced(m: Motion, clip: anim.Clip, tol: float, tol_pos: float):
    skel = m.skeleton
    back = clip.to_motion()
    assert back.n_frames == m.n_frames
    # same poses as the source (up to the tolerances)
    fk0, fk1 = forward_kinematics(skel, m.q), forward_kinematics(skel, back.q)
    assert np.linalg.norm(fk0.joint_positions - fk1.joint_positions, axis=-1).max() <= tol_pos + 1e-12
    assert np.linalg.norm(fk0.site_positions - fk1.site_positions, axis=-1).max() <= tol_pos + 1e-12
    # joint angles within tolerance of the source made continuous (same joint transforms)
    from animik.anim.reduce import _continuous

    qc = _continuous(skel, m.q)
    r0, p0 = local_transforms(skel, m.q)
    r1, p1 = local_transforms(skel, qc)
    assert np.abs(r0 - r1).max() < 1e-9 and np.abs(p0 - p1).max() < 1e-9
    rot = skel.dof_type == 0
    assert np.abs(back.q - qc)[:, rot].max() <= tol + 1e-12
    assert np.abs(back.q - qc)[:, ~rot].max(initial=0.0) <= tol_pos + 1e-12
    return back


@needs_shared
@pytest.mark.parametrize("path", [p for p in shared_bvh_files() if os.path.getsize(p) < 400_000],
                         ids=lambda p: p.name)
def test_import_bvh_with_key_reduction(path, tmp_path):
    m = read_bvh(path)
    tol, tol_pos = 0.01, 0.005
    clip = anim.clip_from_motion(m, tolerance=tol, position_tolerance=tol_pos)
    n_keys = sum(tr.n_keys for tr in clip.tracks)
    assert n_keys < 0.7 * len(clip.tracks) * m.n_frames
    assert clip.name == path.stem
    back = _check_reduced(m, clip, tol, tol_pos)
    # export again: BVH (exact), glb (float32)
    again = read_bvh(anim.export_clip(clip, tmp_path / "again.bvh"))
    np.testing.assert_allclose(again.q, back.q, atol=1e-9)
    assert again.skeleton.joint_names == m.skeleton.joint_names
    g = read_glb(anim.export_clip(clip, tmp_path / "again.glb"))
    fk_g, fk_b = forward_kinematics(g.skeleton, g.q), forward_kinematics(m.skeleton, back.q)
    np.testing.assert_allclose(fk_g.joint_positions, fk_b.joint_positions, atol=2e-6)


@needs_shared
def test_import_smooth_keys():
    path = next(p for p in shared_bvh_files() if p.name == "02_01.bvh")
    m = read_bvh(path)
    clip = anim.clip_from_motion(m, tolerance=0.02, position_tolerance=0.01, interpolation="smooth")
    _check_reduced(m, clip, 0.02, 0.01)


def test_export_errors(tmp_path):
    skel = load_rig("fig2")
    old = tmp_path / "old.bvh"
    old.write_text("keep me")
    with pytest.raises(ClipError, match="clip 'nothing' is empty"):
        anim.export_clip(anim.new_clip(skel, "nothing"), old)
    assert old.read_text() == "keep me"
    clip = anim.clip_from_poses(skel, [0.0], skel.rest_q[None], name="one")
    with pytest.raises(FileFormatError, match="unknown extension '.fbx'"):
        anim.export_clip(clip, tmp_path / "x.fbx")
    object.__setattr__(clip.tracks[1], "values", np.full((1, 3), np.nan))
    old_glb = tmp_path / "old.glb"
    old_glb.write_bytes(b"old")
    with pytest.raises(ClipError, match="clip 'one'.*NaN"):
        anim.export_clip(clip, old_glb)
    assert old_glb.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.bvh", "old.glb"]
