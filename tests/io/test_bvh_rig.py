"""A BVH file that holds a built-in rig's motion is recognised and mapped back onto the rig
(:mod:`animik.io.bvh_rig`, :func:`animik.rigs.recognise_rig`); other files are not."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared

import animik
from animik.io.bvh import loads_bvh, read_bvh
from animik.io.bvh_compat import dumps_bvh_compatible, write_bvh_compatible
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rigs import recognise_rig


def _random_motion(name: str, frames: int = 12, seed: int = 0) -> Motion:
    skel = animik.load_rig(name)
    rng = np.random.default_rng(seed)
    q = skel.rest_q + rng.uniform(-0.6, 0.6, (frames, skel.n_dof))
    q = np.clip(q, skel.lower, skel.upper)
    return Motion(skel, q, 30.0)


@pytest.mark.parametrize("name", ["body95", "biped12", "fig2"])
def test_written_rig_motion_is_recognised_and_maps_back(tmp_path, name):
    m = _random_motion(name)
    path = tmp_path / f"{name}.bvh"
    write_bvh_compatible(m, path)
    read = read_bvh(path)  # biped12 (legs only, 0.85 m) is read as inches: its unit is undone
    out = recognise_rig(read)
    assert out is not None and out.meta["bvh_rig"] == name
    assert out.skeleton is animik.load_rig(name)  # the rig itself: its masses, limits, soles
    np.testing.assert_allclose(out.q, m.q, atol=1e-9)
    a = forward_kinematics(m.skeleton, m.q).joint_positions
    b = forward_kinematics(out.skeleton, out.q).joint_positions
    np.testing.assert_allclose(b, a, atol=1e-9)
    assert out.fps == pytest.approx(30.0)


def test_body95_file_has_more_dofs_than_body95(tmp_path):
    """The file's own skeleton (159 DoF: every ball joint padded) is what it read as before."""
    read = loads_bvh(dumps_bvh_compatible(_random_motion("body95"))[0])
    assert read.skeleton.n_dof == 159 and recognise_rig(read).skeleton.n_dof == 95


def _body95_text() -> str:
    return dumps_bvh_compatible(_random_motion("body95"))[0].decode()


def test_perturbed_hierarchy_is_not_recognised():
    text = _body95_text()
    lines = text.splitlines()
    i = next(k for k, s in enumerate(lines) if s.strip() == "JOINT l_knee")
    off = lines[i + 2]
    assert off.strip().startswith("OFFSET")
    vals = [float(v) for v in off.split()[1:]]
    vals[1] += 1.0  # 1 cm longer thigh
    moved = "\n".join(lines[:i + 2] + ["\tOFFSET " + " ".join(map(repr, vals))] + lines[i + 3:])
    assert recognise_rig(loads_bvh(text)) is not None
    assert recognise_rig(loads_bvh(moved)) is None
    # the same channels in another order: other DoF axes, not body95's
    j = text.index("JOINT l_knee")
    k = text.index("Zrotation Xrotation Yrotation", j)
    swapped = text[:k] + "Xrotation Zrotation Yrotation" + text[k + len("Zrotation Xrotation Yrotation"):]
    assert recognise_rig(loads_bvh(swapped)) is None
    # a joint renamed
    assert recognise_rig(loads_bvh(text.replace("JOINT l_knee", "JOINT l_knee2"))) is None


def test_padded_channel_that_moves_is_not_the_rig():
    """A knee that twists (a padded channel moves, e.g. edited in Blender) holds a rotation
    body95's one-DoF knee cannot make: not taken as body95's motion."""
    read = loads_bvh(_body95_text())
    skel = read.skeleton
    q = read.q.copy()
    q[:, skel.dof_index("l_knee_rx")] = 0.2
    assert recognise_rig(Motion(skel, q, read.fps)) is None


@needs_shared
def test_raw_shared_clips_are_not_recognised():
    for path in sorted(SHARED_BVH.glob("*/*.bvh")):
        assert recognise_rig(read_bvh(path)) is None, path.name
