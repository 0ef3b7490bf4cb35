"""The plant, hover and hip passes keep the legs within the rig's joint limits (their leg IK,
animik.dynamics._leg_ik, is a projected damped least squares in the limits' box;
docs/dynamics.md 5i, "Joint limits in the leg IK and the plant step")."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, crouched_on_floor, needs_shared

import animik
from animik.cli import main
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.hip_shift import apply_hip_offset
from animik.dynamics.limits import limit_excess
from animik.motion import Motion

LEG = ("hip_", "knee", "ankle", "toe_")


def _leg_excess(skel, q):
    """limit_excess on the leg DoFs only (hips, knees, ankles, toes)."""
    leg = np.array([any(k in n for k in LEG) for n in skel.dof_names])
    lo = np.where(leg, skel.lower, -np.inf)
    hi = np.where(leg, skel.upper, np.inf)
    ex = np.maximum(lo - q, 0.0) + np.maximum(q - hi, 0.0)
    return int((ex > 1e-9).any(axis=1).sum()), float(np.degrees(ex.max()))


def test_hip_offset_beyond_the_legs_reach_keeps_them_within_the_limits():
    """A crouch whose pelvis slides 0 -> 30 cm forward and sideways with both soles held: the
    unlimited leg IK bent the ankles past their dorsiflexion limit (20 frames, 1.1 deg); the
    limited one stops at the limits, and where the legs can follow (the first 20 cm) the soles
    stay where they were."""
    skel = animik.load_rig("body95")
    T = 30
    q = crouched_on_floor(skel, T)
    m = Motion(skel, q, 30.0)
    cm = contact_model_for_clip(skel, q)
    o = np.zeros((T, 2))
    o[:, 0] = o[:, 1] = np.linspace(0.0, 0.3, T)
    r = apply_hip_offset(m, cm, o, np.ones((T, cm.n_areas)))
    assert limit_excess(skel, r.q)["frames_outside"] == 0
    err = np.linalg.norm(cm.points(skel, r.q) - cm.points(skel, q), axis=-1).max(axis=1)
    assert err[:14].max() < 5e-3
    assert err[-1] > 0.03  # 42 cm is past the reach (hip_shift scales such an offset back)


@needs_shared
@pytest.mark.parametrize("folder, name", [("cmu", "02_01"), ("cmu_daz", "pirouette")])
def test_planted_body95_clip_keeps_the_legs_within_the_limits(tmp_path, capsys, folder, name):
    """02_01 and the pirouette retargeted onto body95 (within its limits) and filtered with
    --plant: written, feasible, and no leg DoF beyond its limit in the written file (before
    the limited leg IK: 02_01's right hip 10.9 deg past its extension limit on 75 frames, the
    pirouette's right knee 66.5 deg on 395)."""
    src = SHARED_BVH / folder / f"{name}.bvh"
    ret = tmp_path / "ret"
    assert main(["retarget", str(src), "--to", "body95", "--out", str(ret), "--quiet"]) == 0
    clip, out = ret / f"{name}.bvh", tmp_path / "o.bvh"
    back = animik.rigs.recognise_rig(animik.read_bvh(clip))
    assert _leg_excess(back.skeleton, back.q)[0] == 0  # the input is within them
    assert main(["filter", str(clip), "-o", str(out), "--model", "body95", "--plant"]) == 0
    capsys.readouterr()
    back = animik.rigs.recognise_rig(animik.read_bvh(out))
    assert _leg_excess(back.skeleton, back.q) == (0, 0.0)
    assert main(["feasibility", str(out), "--model", "body95", "--every", "0"]) == 0
