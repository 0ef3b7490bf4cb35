"""Generated bodies (animik.bodies): valid skinned meshes on every built-in rig and the shared
BVH skeletons, closed outward-facing pieces, smooth weights at the joints, and CPU skinning
(animik.character.skin_positions) against an independent LBS written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from animik.bodies import _tube_mesh, body_segments, build_body, generated_body
from animik.character import homogeneous, skin_matrices, skin_positions
from animik.kinematics import forward_kinematics
from animik.rigs import BUILTIN_RIGS, resolve_rig

BVH = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "bvh"
BVH_FILES = sorted(BVH.glob("*/*.bvh")) if BVH.is_dir() else []


def lbs(positions, joints, weights, inverse_bind, world_from_joint):
    """Linear blend skinning, vertex by vertex (glTF 2.0 3.7.3)."""
    out = np.zeros((len(positions), 3))
    for v in range(len(positions)):
        m = np.zeros((4, 4))
        for k in range(4):
            j = joints[v, k]
            m += weights[v, k] * (world_from_joint[j] @ inverse_bind[j])
        out[v] = (m @ np.append(positions[v], 1.0))[:3]
    return out


def random_pose(skel, rng, scale=0.5):
    q = skel.rest_q + rng.normal(0.0, scale, skel.n_dof) * (skel.dof_type == 0)
    return skel.clip_to_limits(q)


def world_from_joint(skel, q):
    fk = forward_kinematics(skel, q)
    return homogeneous(fk.joint_rotations, fk.joint_positions)


@pytest.mark.parametrize("rig", [*BUILTIN_RIGS, *[str(p) for p in BVH_FILES]])
def test_every_rig_gets_a_valid_body(rig):
    skel = resolve_rig(rig).skeleton
    mesh = build_body(skel)
    assert mesh.n_vertices > 1000 and mesh.n_faces > 2000
    assert len(mesh.inverse_bind) == skel.n_joints
    np.testing.assert_allclose(mesh.weights.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(mesh.weights >= 0)
    # bound at the rest pose: every skin matrix is the identity there
    skin = skin_matrices(mesh, world_from_joint(skel, skel.rest_q))
    np.testing.assert_allclose(skin, np.tile(np.eye(4), (skel.n_joints, 1, 1)), atol=1e-9)
    # every joint but the root's stand-ins moves some vertex: the body covers the skeleton
    used = np.unique(mesh.joints[mesh.weights > 0.01])
    assert len(used) >= 0.6 * skel.n_joints
    # the body spans the skeleton's height
    fk = forward_kinematics(skel, skel.rest_q)
    zj = fk.joint_positions[:, 2]
    assert mesh.positions[:, 2].min() <= zj.min() + 0.02
    assert mesh.positions[:, 2].max() >= zj.max()


@pytest.mark.parametrize("rig", BUILTIN_RIGS)
def test_pieces_are_closed_and_face_outwards(rig):
    skel = resolve_rig(rig).skeleton
    for tube in body_segments(skel):
        p, f, _, _ = _tube_mesh(tube)
        m = trimesh.Trimesh(p, f, process=True)
        assert m.is_watertight
        assert m.volume > 0  # counter-clockwise seen from outside


def test_weights_blend_smoothly_at_the_joints():
    """Vertices near the knee are shared by thigh and shin; along the leg the thigh's weight
    falls monotonically from 1 to 0 across the knee."""
    skel = resolve_rig("body95").skeleton
    mesh = build_body(skel)
    fk = forward_kinematics(skel, skel.rest_q)
    hip, knee = skel.joint_index("l_hip"), skel.joint_index("l_knee")
    pk = fk.joint_positions[knee]
    w_hip = np.where(mesh.joints == hip, mesh.weights, 0.0).sum(axis=1)
    w_knee = np.where(mesh.joints == knee, mesh.weights, 0.0).sum(axis=1)
    leg = (w_hip + w_knee > 0.999) & (np.abs(mesh.positions[:, 1] - pk[1]) < 0.08)
    z = mesh.positions[leg, 2]
    at_knee = np.abs(z - pk[2]) < 0.01
    assert at_knee.sum() > 10
    np.testing.assert_allclose(w_hip[leg][at_knee], 0.5, atol=0.15)
    order = np.argsort(z)
    wz = w_hip[leg][order]
    assert wz[0] < 0.01 and wz[-1] > 0.99
    # binned by height, the mean weight never decreases going up
    bins = np.linspace(pk[2] - 0.06, pk[2] + 0.06, 7)
    groups = [w_hip[leg][(z >= a) & (z < b)] for a, b in zip(bins[:-1], bins[1:], strict=True)]
    means = [g.mean() for g in groups if len(g)]  # (a bin may fall between two rings)
    assert len(means) >= 4 and np.all(np.diff(means) >= -1e-6)


@pytest.mark.parametrize("rig", ["body95", "fig2"])
def test_cpu_skinning_matches_an_independent_lbs(rig):
    skel = resolve_rig(rig).skeleton
    mesh = generated_body(skel)
    assert generated_body(skel) is mesh  # cached per skeleton
    rng = np.random.default_rng(7)
    sample = rng.choice(mesh.n_vertices, 400, replace=False)
    for _ in range(3):
        wfj = world_from_joint(skel, random_pose(skel, rng))
        got = skin_positions(mesh, wfj)[sample]
        want = lbs(mesh.positions[sample].astype(float), mesh.joints[sample],
                   mesh.weights[sample].astype(float), mesh.inverse_bind, wfj)
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_rigidly_weighted_vertices_move_with_their_joint():
    """A vertex weighted fully to one joint keeps its position in that joint's frame."""
    skel = resolve_rig("body95").skeleton
    mesh = generated_body(skel)
    rng = np.random.default_rng(3)
    wfj0 = world_from_joint(skel, skel.rest_q)
    wfj = world_from_joint(skel, random_pose(skel, rng))
    rigid = np.flatnonzero(mesh.weights[:, 0] > 0.9999)
    pos = skin_positions(mesh, wfj)
    for v in rng.choice(rigid, 50, replace=False):
        j = mesh.joints[v, 0]
        local = np.linalg.solve(wfj0[j], np.append(mesh.positions[v], 1.0))
        np.testing.assert_allclose(pos[v], (wfj[j] @ local)[:3], atol=1e-5)


def test_degenerate_and_robot_skeletons_get_a_finite_body():
    """One joint, zero-length bones, an arm of unknown roles: a closed, finite body, no error."""
    from animik.skeleton import Dof, Joint, Site, Skeleton

    cases = [
        ([Joint("root", None, (0, 0, 0), (Dof("rz", "rz"),))], []),
        ([Joint("a", None), Joint("b", "a", (0, 0, 0), (Dof("rx", "rx"),)),
          Joint("c", "b", (0, 0, 1e-5), (Dof("ry", "ry"),))], []),
        ([Joint("base", None), Joint("l1", "base", (0, 0, 0.3), (Dof("r1", "ry"),)),
          Joint("l2", "l1", (0.4, 0, 0), (Dof("r2", "ry"),)),
          Joint("l3", "l2", (0.3, 0, 0), (Dof("r3", "rx"),))], [Site("tool", "l3", (0.1, 0, 0))]),
    ]
    for i, (joints, sites) in enumerate(cases):
        skel = Skeleton.from_joints(f"case{i}", joints, sites)
        mesh = build_body(skel)
        assert mesh.n_faces > 0
        assert np.all(np.isfinite(mesh.positions)) and np.all(np.isfinite(mesh.normals))
        np.testing.assert_allclose(np.linalg.norm(mesh.normals, axis=1), 1.0, atol=1e-4)
        wfj = world_from_joint(skel, skel.rest_q)
        np.testing.assert_allclose(skin_positions(mesh, wfj), mesh.positions, atol=1e-5)
