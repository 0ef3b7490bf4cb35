"""Skeleton construction, validation, immutability and lookups."""

import numpy as np
import pytest
from conftest import needs_shared, random_skeleton, shared_bvh_files

from animik import Dof, Joint, Site, Skeleton
from animik.errors import ShapeError, SkeletonError, UnknownNameError, ValueRangeError
from animik.semantics.segment_mass import MIN_MASS


def small():
    return Skeleton.from_joints(
        "arm",
        [
            Joint("hand", "elbow", (0.3, 0, 0)),  # any order: sorted depth-first
            Joint("base", None, dofs=[Dof("base_rz", "rz", -3, 3)]),
            Joint("elbow", "base", (0.3, 0, 0), [Dof("elbow_ry", "ry", 0, 2.5)]),
        ],
        [Site("tip", "hand", (0.1, 0, 0))],
    )


def test_order_parents_and_dof_layout():
    s = small()
    assert s.joint_names == ("base", "elbow", "hand")
    assert list(s.parents) == [-1, 0, 1]
    assert s.dof_names == ("base_rz", "elbow_ry")
    assert list(s.joint_dof_start) == [0, 1, 2, 2]
    assert s.rest_q.tolist() == [0.0, 0.0]
    assert s.site_dof_mask.tolist() == [[True, True]]
    assert s.dof_index("elbow_ry") == 1 and s.joint_index("hand") == 2 and s.site_index("tip") == 0


def test_immutable():
    s = small()
    with pytest.raises(ValueError):
        s.lower[0] = 1.0
    with pytest.raises(AttributeError):
        s.name = "x"
    with pytest.raises(TypeError):
        s.meta["x"] = 1


def test_to_joints_roundtrip():
    s = random_skeleton(np.random.default_rng(3), 10)
    joints, sites = s.to_joints()
    t = Skeleton.from_joints(s.name, joints, sites)
    for f in ("parents", "offsets", "rest_rotations", "dof_axis", "lower", "upper", "rest_q",
              "site_offsets", "site_rotations", "masses", "coms", "inertias", "dof_type"):
        np.testing.assert_array_equal(getattr(s, f), getattr(t, f))
    assert s.dof_names == t.dof_names and s.site_names == t.site_names


def test_mass_estimated_when_missing():
    s = small()
    assert np.all(s.masses >= 0.1) and "estimated" in s.meta["mass_source"]


@pytest.mark.parametrize(
    "joints, match",
    [
        ([Joint("a", None), Joint("a", "a")], "duplicate joint name 'a'"),
        ([Joint("a", None), Joint("b", None)], "exactly one root"),
        ([Joint("a", None), Joint("b", "zz")], "unknown parent 'zz'"),
        ([Joint("a", None, dofs=[Dof("d", "qx")])], "unknown kind 'qx'"),
        ([Joint("a", None, dofs=[Dof("d", "rx", 1, -1)])], "bad limits"),
        ([Joint("a", None, dofs=[Dof("d", "r")])], "needs an axis"),
        ([Joint("a", None, dofs=[Dof("d", "rx", 0.5, 1.0, rest=0.0)])], "outside limits"),
        ([Joint("a", None, dofs=[Dof("d", "rx"), Dof("d", "ry")])], "duplicate DoF names"),
        ([Joint("a", None, offset=(0, np.nan, 0))], "offset must be 3 finite numbers"),
        ([Joint("a", None, rotation=np.ones((3, 3)))], "rotation matrix"),
    ],
)
def test_invalid_skeletons(joints, match):
    with pytest.raises(SkeletonError, match=match):
        Skeleton.from_joints("bad", joints)


def test_unknown_names_list_valid_ones():
    s = small()
    with pytest.raises(UnknownNameError, match=r"unknown DoF 'knee'.*'base_rz', 'elbow_ry'"):
        s.dof_index("knee")
    with pytest.raises(SkeletonError, match="unknown joint 'nope'"):
        Skeleton.from_joints("x", [Joint("a", None)], [Site("s", "nope")])


def test_check_q():
    s = small()
    assert s.check_q([0.1, 0.2]).shape == (2,)
    with pytest.raises(ShapeError, match=r"must be 2 .*got shape \(3,\)"):
        s.check_q([1, 2, 3])
    with pytest.raises(ValueRangeError, match="NaN"):
        s.check_q([np.nan, 0])
    assert s.within_limits(np.array([[0, 0], [0, 3]])).tolist() == [True, False]


@needs_shared
def test_estimated_masses_of_real_bvh_skeletons_are_human():
    from animik import read_bvh

    for path in shared_bvh_files():
        skel = read_bvh(path).skeleton
        assert 40.0 < skel.total_mass < 100.0, (path.name, skel.total_mass)
        # de Leva segments by role (tests/semantics/test_segment_mass.py): a joint that carries
        # no segment (a finger, a toe, a twist bone) gets MIN_MASS
        assert np.all(skel.masses >= MIN_MASS)
        eig = np.linalg.eigvalsh(skel.inertias)
        assert np.all(eig > 0), path.name


@needs_shared
def test_estimated_com_stands_over_the_feet_of_real_captures():
    """The COM of an estimated body at the first frame is over its feet (within 15 cm,
    horizontally) on every shared capture. Bandai's root is a marker at the capture volume's
    origin, 4.5 m from the Hips: given a cylinder, it weighed 28-39 of 40 kg and put the COM
    1-2 m off the feet."""
    from animik import read_bvh
    from animik.dynamics import com
    from animik.kinematics import forward_kinematics

    for path in shared_bvh_files():
        m = read_bvh(path)
        p = forward_kinematics(m.skeleton, m.q[0]).joint_positions[1:]  # the figure, not the root
        feet = p[np.argsort(p[:, 2])[:4], :2].mean(axis=0)
        c = com(m.skeleton, m.q[0])
        assert np.linalg.norm(c[:2] - feet) < 0.15, path.name


def test_a_placement_root_gets_no_body_but_a_chain_root_keeps_its_bone():
    legs = [Joint("hips", "ref", offset=(4.0, 0, 0.9)), Joint("l", "hips", offset=(0, 0.1, -0.4)),
            Joint("r", "hips", offset=(0, -0.1, -0.4)), Joint("spine", "hips", offset=(0, 0, 0.5))]
    placed = Skeleton.from_joints("p", [Joint("ref", None), *legs])
    assert placed.masses[0] == pytest.approx(0.1)  # the floor every estimated segment gets
    chain = Skeleton.from_joints("c", [Joint("a", None), Joint("b", "a", offset=(0, 0, 0.5)),
                                       Joint("c", "b", offset=(0, 0, 0.5))])
    assert chain.masses[0] > 1.0


def test_meta_is_frozen_deeply():
    s = Skeleton.from_joints("m", [Joint("a", None)], meta={"soles": {"l": [1, 2]}})
    with pytest.raises(TypeError):
        s.meta["soles"]["l"] = 3
    assert s.meta["soles"]["l"] == (1, 2)
