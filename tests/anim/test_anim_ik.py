"""IK-driven clips: keyed effector targets are reached at the keyed times."""

from __future__ import annotations

import numpy as np
import pytest

from animik import anim
from animik.anim import ClipError
from animik.ik import SOLVERS
from animik.kinematics import site_poses, site_positions
from animik.rigs import load_rig
from animik.rotations import matrix_to_rotvec

SOLVER = "fik" if "fik" in SOLVERS else "dls"


def _pose(skel, **values):
    q = np.array(skel.rest_q)
    for k, v in values.items():
        q[skel.dof_index(k)] = v
    return q


@pytest.mark.parametrize("rig", ["fig2", "body95"])
def test_keyed_targets_are_reached(rig):
    skel = load_rig(rig)
    poses = [_pose(skel, r_elbow_flexion=0.4),
             _pose(skel, r_elbow_flexion=1.3, r_shoulder_horizontal_flexion=0.7),
             _pose(skel, r_elbow_flexion=0.8, r_shoulder_abduction=0.6)]
    key_t = [0.0, 1.0, 2.0]
    hand, foot = skel.site_index("r_hand"), skel.site_index("l_foot")
    clip = anim.new_clip(skel, "reach", fps=30, interpolation="smooth")
    clip = anim.add_key(clip, 0.0, skel.rest_q)
    clip = anim.add_key(clip, 2.0, _pose(skel, neck_rotation=0.4), joints=["neck"])
    targets = []
    for t, q in zip(key_t, poses, strict=True):
        pos, rot = site_poses(skel, q)
        targets.append((pos[hand] + [0.0, 0.01, 0.02], rot[hand]))
        clip = anim.add_effector_key(clip, "r_hand", t, *targets[-1])
    clip = anim.add_effector_key(clip, "l_foot", 0.0, site_positions(skel, skel.rest_q)[foot],
                                 pinned=True)
    clip = anim.set_ik(clip, SOLVER, {"tol_position": 2e-4, "tol_rotation": 2e-3})
    motion = clip.to_motion()
    assert motion.n_frames == 61
    for t, (p, r) in zip(key_t, targets, strict=True):
        i = int(round(t * clip.fps))
        pos, rot = site_poses(skel, motion.q[i])
        assert np.linalg.norm(pos[hand] - p) < 1e-3
        assert np.linalg.norm(matrix_to_rotvec(rot[hand].T @ r)) < 1e-2
        assert np.linalg.norm(pos[foot] - site_positions(skel, skel.rest_q)[foot]) < 1e-3
    assert skel.within_limits(motion.q).all()
    # DoFs that move no targeted site follow the joint keys exactly
    neck = list(skel.joint_dofs("neck"))
    np.testing.assert_array_equal(motion.q[:, neck], clip.sample(clip.frame_times(), ik=False)[:, neck])
    # diagnostics: every frame converged, warm starts keep the solves short
    res = anim.solve_clip_ik(clip, clip.frame_times())
    assert res.converged.all() and res.sites == ("r_hand", "l_foot")
    assert res.error.max() < 1e-3


def test_ik_dofs_restrict_the_solver():
    skel = load_rig("fig2")
    q1 = _pose(skel, r_elbow_flexion=1.0, r_shoulder_horizontal_flexion=0.5)
    hand = skel.site_index("r_hand")
    clip = anim.add_key(anim.new_clip(skel), 0.0, skel.rest_q)
    clip = anim.add_key(clip, 1.0, _pose(skel, l_knee_flexion=0.5))
    clip = anim.add_effector_key(clip, "r_hand", 0.5, site_positions(skel, q1)[hand])
    clip = anim.set_ik(clip, "fik", dofs=["r_shoulder", "r_elbow"])
    t = clip.frame_times()
    q, ref = clip.sample(t), clip.sample(t, ik=False)
    free = np.zeros(skel.n_dof, dtype=bool)
    free[list(skel.joint_dofs("r_shoulder")) + list(skel.joint_dofs("r_elbow"))] = True
    np.testing.assert_array_equal(q[:, ~free], ref[:, ~free])
    assert np.abs(q[:, free] - ref[:, free]).max() > 0.1
    assert np.linalg.norm(site_positions(skel, q[15])[hand] - site_positions(skel, q1)[hand]) < 1e-3
    with pytest.raises(ClipError, match="per-DoF gains"):
        anim.set_ik(clip, "dls").sample([0.0])
