"""BVH written in the form Blender's importer accepts (issue 14): 0 or 3 rotation channels per
joint, a moving root with 6, and exactly the same motion as the compact one-channel-per-DoF form."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import random_q, random_skeleton

import animik
from animik.errors import OptionError
from animik.io.bvh import read_bvh, write_bvh
from animik.io.bvh_compat import bvh_compatible
from animik.kinematics import joint_positions
from animik.motion import Motion

CASES = ([pytest.param(("rig", r), id=f"rig-{r}") for r in animik.rigs.BUILTIN_RIGS]
         + [pytest.param(("random", s), id=f"random-{s}") for s in range(6)])


def motion_of(case) -> Motion:
    kind, arg = case
    rng = np.random.default_rng(0)
    if kind == "rig":
        skel = animik.load_rig(arg)
    else:
        skel = random_skeleton(np.random.default_rng(arg), general_axes=False, rest_rotations=False,
                               translations=False)
    return bvh_compatible(Motion(skel, random_q(skel, rng, (5,)), 30.0))[0]


def channel_lines(path: Path) -> list[tuple[str, list[str]]]:
    """(joint name, channel names) of every joint of a BVH file, in file order."""
    out, name = [], None
    for line in path.read_text().splitlines():
        m = re.match(r"\s*(ROOT|JOINT)\s+(.+)", line)
        if m:
            name = m.group(2).strip()
            out.append((name, []))
        m = re.match(r"\s*CHANNELS\s+\d+\s+(.*)", line)
        if m:
            out[-1] = (name, m.group(1).split())
    return out


@pytest.mark.parametrize("case", CASES)
def test_default_bvh_has_blender_channels_and_the_same_motion(case, tmp_path):
    motion = motion_of(case)
    path = write_bvh(motion, tmp_path / "full.bvh")
    joints = channel_lines(path)
    for k, (name, chans) in enumerate(joints):
        n_rot = sum(c.endswith("rotation") for c in chans)
        assert n_rot in (0, 3), f"joint {name!r}: {n_rot} rotation channels {chans}"
        if k == 0 and chans:
            assert len(chans) == 6 and all(c.endswith("position") for c in chans[:3]), chans
    back = read_bvh(path, unit="cm")
    expected = joint_positions(motion.skeleton, motion.q)
    actual = joint_positions(back.skeleton, back.q)
    order = [back.skeleton.joint_index(n) for n in motion.skeleton.joint_names]
    err = np.max(np.abs(actual[:, order] - expected))
    assert err <= 1e-9, f"world joint positions differ by {err:.3g} m"
    # The compact form: one channel per DoF, read back with the same DoF count.
    compact = read_bvh(write_bvh(motion, tmp_path / "compact.bvh", channels="compact"), unit="cm")
    assert compact.skeleton.n_dof == motion.skeleton.n_dof
    err = np.max(np.abs(joint_positions(compact.skeleton, compact.q)[:, order] - expected))
    assert err <= 1e-9


def test_body95_needed_the_full_form(tmp_path):
    """The defect: body95's joints have 1 or 2 rotation DoFs, which the compact form keeps."""
    motion = motion_of(("rig", "body95"))
    joints = channel_lines(write_bvh(motion, tmp_path / "c.bvh", channels="compact"))
    assert any(sum(c.endswith("rotation") for c in ch) in (1, 2) for _, ch in joints)


def test_repeated_rotation_axes_become_three_euler_channels(tmp_path):
    from animik.skeleton import Dof, Joint, Skeleton
    skel = Skeleton.from_joints("rep", [
        Joint("root", None, (0.0, 0.0, 1.0), [Dof("tz", "tz"), Dof("a", "rx"), Dof("b", "rz"),
                                              Dof("c", "rx"), Dof("d", "ry")]),
        Joint("arm", "root", (0.3, 0.0, 0.0), [Dof("e", "rz"), Dof("f", "rz")]),
        Joint("hand", "arm", (0.2, 0.0, 0.0)),
    ])
    motion = Motion(skel, random_q(skel, np.random.default_rng(3), (7,)), 30.0)
    path = write_bvh(motion, tmp_path / "rep.bvh")
    assert [len(ch) for _, ch in channel_lines(path)] == [6, 3, 0]
    back = read_bvh(path, unit="cm")
    err = np.max(np.abs(joint_positions(back.skeleton, back.q) - joint_positions(skel, motion.q)))
    assert err <= 1e-9


def test_unknown_channel_form_is_an_option_error(tmp_path):
    motion = motion_of(("rig", "fig2"))
    with pytest.raises(OptionError, match="channels"):
        write_bvh(motion, tmp_path / "x.bvh", channels="blender")
