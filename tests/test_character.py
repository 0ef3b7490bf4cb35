"""The skinned-mesh data type: validation and the skinning matrices."""

import numpy as np
import pytest

from animik.character import Character, SkinnedMesh, homogeneous, skin_matrices
from animik.errors import ShapeError, ValueRangeError
from animik.kinematics import forward_kinematics
from animik.rigs import load_rig


def _mesh(skel, **over):
    n = skel.n_joints
    kw = dict(positions=np.zeros((3, 3)), normals=np.tile([0, 0, 1.0], (3, 1)),
              faces=[[0, 1, 2]], joints=np.zeros((3, 4), int),
              weights=np.tile([1.0, 0, 0, 0], (3, 1)), inverse_bind=np.tile(np.eye(4), (n, 1, 1)))
    kw.update(over)
    return SkinnedMesh(**kw)


def test_skinned_mesh_validates_shapes_and_weights():
    skel = load_rig("fig2")
    m = _mesh(skel)
    assert m.n_vertices == 3 and m.parts[0].count == 1 and not m.positions.flags.writeable
    with pytest.raises(ShapeError):
        _mesh(skel, normals=np.zeros((2, 3)))
    with pytest.raises(ValueRangeError):
        _mesh(skel, weights=np.tile([0.5, 0, 0, 0], (3, 1)))
    with pytest.raises(ValueRangeError):
        _mesh(skel, faces=[[0, 1, 3]])
    with pytest.raises(ValueRangeError):
        _mesh(skel, joints=np.full((3, 4), skel.n_joints))
    with pytest.raises(ShapeError):
        Character(skel, _mesh(skel, inverse_bind=np.tile(np.eye(4), (2, 1, 1))))


def test_skin_matrices_are_identity_at_the_bind_pose():
    skel = load_rig("fig2")
    fk = forward_kinematics(skel, skel.rest_q)
    wfj = homogeneous(fk.joint_rotations, fk.joint_positions)
    m = _mesh(skel, inverse_bind=np.linalg.inv(wfj))
    np.testing.assert_allclose(skin_matrices(m, wfj), np.tile(np.eye(4), (skel.n_joints, 1, 1)),
                               atol=1e-12)
