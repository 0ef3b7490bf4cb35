"""Planting supports before method A (animik.dynamics.plant, ``animik filter --plant``): frames
without a detected contact that still need the floor get a held foot (leg IK) or, for a body
carried along, a root moved against its support; the written clip passes the independent
``animik feasibility`` at every frame, where the unplanted filter writes nothing."""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, needs_shared

import animik
from animik.cli import main
from animik.dynamics import check_clip
from animik.dynamics.plant import plant_contacts
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion


def _crouch(skel, T):
    """body95 in a slight crouch (hips, knees, ankles bent; feet flat), ``T`` frames."""
    q = np.tile(skel.rest_q, (T, 1))
    for side in "lr":
        q[:, skel.dof_index(f"{side}_hip_flexion")] += 0.3
        q[:, skel.dof_index(f"{side}_knee_flexion")] += 0.6
        q[:, skel.dof_index(f"{side}_ankle_dorsiflexion")] += 0.3  # the sole stays level
    return q


def _feet_on_floor(skel, q):
    from animik.dynamics.contacts import contact_model_for_clip

    cm = contact_model_for_clip(skel, q)
    z = cm.points(skel, q)[..., 2].min(axis=1)
    q = q.copy()
    q[:, skel.dof_index("pelvis_tz")] -= z
    return q


def _lifted(skel, T=60, fps=30.0, lift=0.1):
    """A crouched body whose whole figure rises ``lift`` m (feet and all) after 0.5 s and
    stays up: the weight is still needed, no foot is near the floor."""
    q = _feet_on_floor(skel, _crouch(skel, T))
    ramp = np.clip((np.arange(T) - 15) / 10.0, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] += lift * (3 * ramp ** 2 - 2 * ramp ** 3)
    return Motion(skel, q, fps)


def _carried(skel, T=90, fps=30.0, speed=1.0):
    """A standing body gliding at ``speed`` m/s after 0.5 s (a treadmill seen from its belt):
    feet on the floor but too fast for a contact, the weight still needed."""
    q = _feet_on_floor(skel, _crouch(skel, T))
    t = np.arange(T) / fps
    s = np.where(t < 0.5, 0.0, speed * (t - 0.5))
    q[:, skel.dof_index("pelvis_tx")] += s
    return Motion(skel, q, fps)


def _verdict(path, capsys):
    code = main(["feasibility", str(path), "--model", "body95", "--every", "0"])
    capsys.readouterr()
    return code


def test_lifted_body_planted_by_leg_ik(tmp_path, capsys):
    skel = animik.load_rig("body95")
    m = _lifted(skel)
    before = check_clip(m)
    nc = ~before.feasible & ~before.check.in_contact.any(axis=1)
    assert nc.sum() > 20  # infeasible frames without contact in the input
    pr = plant_contacts(m)
    assert pr.planted.any(axis=1).sum() >= nc.sum()
    assert np.abs(pr.root_shift).max() == 0.0  # nothing carried: the legs do it
    # The feet are back on the floor and the trunk did not move.
    after = check_clip(pr.motion)
    assert after.check.in_contact.any(axis=1).all()
    root = [skel.dof_index(f"pelvis_t{a}") for a in "xyz"]
    assert np.abs(pr.motion.q[:, root] - m.q[:, root]).max() < 1e-12
    src, out = tmp_path / "lift.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(m, src)
    assert _verdict(src, capsys) == 5
    assert main(["filter", str(src), "-o", str(out), "--rig", "body95"]) == 5
    assert not out.exists()
    assert main(["filter", str(src), "-o", str(out), "--rig", "body95", "--plant"]) == 0
    assert "planted" in capsys.readouterr().out
    assert _verdict(out, capsys) == 0  # the independent check of the written file


def test_carried_body_moved_against_its_support(tmp_path, capsys):
    skel = animik.load_rig("body95")
    m = _carried(skel)
    before = check_clip(m)
    assert (~before.feasible & ~before.check.in_contact.any(axis=1)).sum() > 30
    pr = plant_contacts(m)
    assert np.abs(pr.root_shift[:, 0]).max() > 0.5  # the glide taken out of the root
    src, out = tmp_path / "glide.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(m, src)
    assert _verdict(src, capsys) == 5
    assert main(["filter", str(src), "-o", str(out), "--rig", "body95", "--plant"]) == 0
    assert _verdict(out, capsys) == 0


def test_plant_leaves_a_feasible_clip_alone():
    skel = animik.load_rig("body95")
    q = _feet_on_floor(skel, _crouch(skel, 40))
    m = Motion(skel, q, 30.0)
    pr = plant_contacts(m)
    assert pr.frames == 0 and not pr.planted.any()
    assert np.array_equal(pr.motion.q, m.q)


@needs_shared
def test_mocapbank_on_body95_planted_and_feasible(tmp_path, capsys):
    """The shared mocapbank clip retargeted onto body95 (147 infeasible frames without a
    contact: both feet 4-6 cm up; a 5 s stand on one leg with the ZMP 12-15 cm beside the
    foot): with --plant the written clip passes the independent check."""
    src = SHARED_BVH / "mocapbank" / "test_mocapbank.bvh"
    ret = tmp_path / "ret"
    assert main(["retarget", str(src), "--to", "body95", "--out", str(ret), "--quiet"]) == 0
    clip, out = ret / "test_mocapbank.bvh", tmp_path / "o.bvh"
    assert _verdict(clip, capsys) == 5
    assert main(["filter", str(clip), "-o", str(out), "--model", "body95", "--plant"]) == 0
    assert _verdict(out, capsys) == 0
