"""Seed D method B tracking method A's clip (docs/dynamics.md 5c, "Method B tracking method
A's clip (issue 10, ninth round)"): the reference wrench is shared among pushing,
friction-bounded point forces, the springs feed it forward unchanged on the reference, and
``animik filter --method B`` writes the Bandai bow retargeted onto body95 feasible (main's
method B, the balance law on the input, fell at frame 69 of 128)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared

import animik
from animik.dynamics.method_b_track import (
    TrackOptions,
    distribute_wrench,
    point_wrench,
    spring_wrench,
    track_clip,
)

MU = 0.7


def _sole(rng, n=6, z=0.0):
    """``n`` floor points of a 25 × 10 cm sole, shifted and turned."""
    x = np.stack([rng.uniform(-0.1, 0.15, n), rng.uniform(-0.05, 0.05, n), np.full(n, z)], 1)
    c, s = np.cos(0.7), np.sin(0.7)
    return x @ np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]) + [2.0, -3.0, 0.0]


def _pushing(rng, k, mu):
    """Random pushing forces within ``mu`` (inside the inscribed pyramid)."""
    fz = rng.uniform(20.0, 200.0, k)
    r = rng.uniform(0.0, 0.9 * mu * np.cos(np.pi / 8), k) * fz
    a = rng.uniform(0, 2 * np.pi, k)
    return np.stack([r * np.cos(a), r * np.sin(a), fz], 1)


def test_distribute_wrench_gives_back_a_pushing_wrench():
    """A wrench made of pushing, friction-bounded forces at the points (plus a free vertical
    moment, which the check allows) is carried exactly by the distribution's forces, which
    push and stay within friction."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = _sole(rng)
        W = point_wrench(x, _pushing(rng, len(x), MU), rng.uniform(-5, 5))
        f, mz, res = distribute_wrench(W, x, MU, ridge=0.0)
        assert res < 1e-6 * np.linalg.norm(W[3:])
        np.testing.assert_allclose(point_wrench(x, f, mz), W, atol=1e-6 * np.linalg.norm(W))
        assert (f[:, 2] >= 0).all()
        assert (np.hypot(f[:, 0], f[:, 1]) <= MU * f[:, 2] + 1e-9).all()


def test_distribute_wrench_cannot_pull_or_push_outside_the_sole():
    """The nearest pushing wrench of a pulling one or of one whose centre of pressure lies off
    the sole leaves a residual; its forces still push."""
    rng = np.random.default_rng(4)
    x = _sole(rng)
    for W in (np.array([0.0, 0.0, 0.0, 0.0, 0.0, -300.0]),
              point_wrench(x.mean(0, keepdims=True) + [0.5, 0.0, 0.0], np.array([[0, 0, 700.0]]))):
        f, _, res = distribute_wrench(W, x, MU, ridge=0.0)
        assert res > 10.0
        assert (f[:, 2] >= 0).all()


def _bow():
    from animik.io.bvh import read_bvh
    from animik.retarget import retarget

    src = read_bvh(SHARED_BVH / "bandai_namco" / "dataset-1_bow_active_001.bvh")
    return retarget(src, animik.load_rig("body95"))


@needs_shared
def test_fed_forward_force_is_method_a_wrench_on_the_reference():
    """With the simulated body on method A's clip (its Savitzky-Golay pose and velocity), the
    springs give exactly A's floor wrench as the check has it: the feedback is zero and A's
    wrench is shared among pushing points without loss."""
    from animik.dynamics.contacts import contact_model_for_clip
    from animik.dynamics.correct import plant_and_correct
    from animik.dynamics.filter import DynamicsFilter, FilterOptions

    m = _bow()
    skel = m.skeleton
    opt = FilterOptions().checked()
    cm = contact_model_for_clip(skel, m.q)
    ref, _ = plant_and_correct(m, opt, contacts=cm)
    chk = ref.check
    st = chk.states
    base = np.array(list(skel.joint_dofs(int(np.flatnonzero(skel.parents < 0)[0]))))
    filt = DynamicsFilter(skel, opt, chk.floor, contacts=cm)
    xf = cm.points(skel, st.q)
    xf[..., 2] = chk.floor
    for t in (5, 40, 90):
        act = np.flatnonzero(chk.check.in_contact[t][cm.point_area])
        f, mz, res = distribute_wrench(chk.check.wrench[t], xf[t, act], MU, ridge=1e-2)
        filt.terms(st.q[t], st.qd[t])
        pj = cm.point_joint[act]
        x = filt.pw[pj] + np.einsum("pab,pb->pa", filt.Rw[pj], cm.point_local[act])
        xd = filt.V[pj, 3:] + np.cross(filt.V[pj, :3], x)
        W, dev, cut = spring_wrench(filt, cm, st.q[t], act, base, x, xd, f, mz, 15.0, 1.0, MU,
                                    chk.floor)
        assert dev == 0.0
        weight = skel.total_mass * 9.81
        # relative to the weight; measured below 1e-4 (the ridge's share)
        assert np.abs(W[3:] - chk.check.wrench[t, 3:]).max() < 1e-3 * weight
        o = np.array([*chk.check.zmp[t, :2], chk.floor])  # moments about A's ZMP
        dM = (W[:3] - np.cross(o, W[3:])) - (chk.check.wrench[t, :3]
                                              - np.cross(o, chk.check.wrench[t, 3:]))
        assert np.abs(dM).max() < 1e-3 * weight * 0.1


@needs_shared
def test_method_b_writes_the_bow_feasible(tmp_path):
    """``animik filter --method B`` on the Bandai bow retargeted onto body95 writes a clip that
    ``animik feasibility`` passes at every frame (main's method B fell at frame 69); the
    report gives its distance from method A's clip, small but not zero (B is simulated: its
    root is the springs', not A's)."""
    from animik.cli import main

    assert main(["retarget", str(SHARED_BVH / "bandai_namco" / "dataset-1_bow_active_001.bvh"),
                 "--to", "body95", "--out", str(tmp_path), "-q"]) == 0
    src = tmp_path / "dataset-1_bow_active_001.bvh"
    out, rep = tmp_path / "out.bvh", tmp_path / "out.json"
    rc = main(["filter", str(src), "-o", str(out), "--model", "body95", "--method", "B",
               "--json", str(rep)])
    assert rc == 0 and out.exists()
    assert main(["feasibility", str(out), "--model", "body95", "--every", "0"]) == 0
    r = json.loads(rep.read_text())
    mb = r["method_b"]
    assert mb["reference_infeasible_frames"] == 0
    assert 0.0 < mb["root_from_a_cm"]["max"] < 1.0  # measured 0.2 cm
    assert r["infeasible_frames"] == 0 and r["written"]
    # within body95's joint limits (the joints landed on A's smoothed poses, 0.013 deg past the
    # clavicle's on 2 frames, before they were clamped)
    assert r["joint_limits"]["output"]["frames_outside"] == 0


def test_track_clip_refuses_an_infeasible_reference():
    """Method B needs A's clip feasible: a reference with infeasible frames is refused with a
    clear error (the command's exit 5), not simulated."""
    from animik.dynamics.correct import correct_clip
    from animik.dynamics.filter import FilterDivergedError
    from animik.motion import Motion

    skel = animik.load_rig("body95")
    T = 30
    q = np.tile(skel.rest_q, (T, 1))
    root = list(skel.joint_dofs(int(np.flatnonzero(skel.parents < 0)[0])))
    q[:, root[2]] += 0.5 * 9.81 * (np.arange(T) / 30.0) ** 2  # rises, accelerating upwards
    m = Motion(skel, q, 30.0)
    ref = correct_clip(m)
    assert not ref.check.feasible.all()
    with pytest.raises(FilterDivergedError, match="infeasible"):
        track_clip(m, ref, track=TrackOptions())
