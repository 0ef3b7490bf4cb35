"""Seed D method B (animik.dynamics.method_b) and ``animik filter --method B``: the inverse
inertia of the floating base against the wrench pass, the lumbar sway simulated on contact
springs and re-checked independently, the command's contract (nothing written unless every
frame passes) and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import animik
from animik.cli import main
from animik.dynamics import check_clip
from animik.dynamics.filter import DynamicsFilter
from animik.dynamics.method_b import SpringOptions, base_inverse_inertia, method_b_clip
from animik.dynamics.sole_balance import SoleBalanceOptions, desired_force, sole_displacements, sole_stiffness
from animik.dynamics.zmp import FeasibilityError
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion


def _sway(skel, T=90, fps=60.0, amp=0.12, hz=1.5):
    q = np.tile(skel.rest_q, (T, 1))
    t = np.arange(T) / fps
    q[:, skel.dof_index("lumbar_flexion")] += amp * np.sin(2 * np.pi * hz * t)
    return Motion(skel, q, fps)


def test_base_inverse_inertia_matches_the_wrench_pass():
    """Λ⁻¹ = J_b M_bb⁻¹ J_bᵀ (CRBA) equals the point acceleration that the base rows of the
    Newton-Euler wrench pass (A_w) give for a unit force with the joints held."""
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(1)
    q = skel.rest_q + 0.2 * rng.normal(size=skel.n_dof) * (skel.dof_type == 0)
    filt = DynamicsFilter(skel)
    root = int(np.flatnonzero(skel.parents < 0)[0])
    base = np.array(list(skel.joint_dofs(root)))
    j = skel.joint_index("l_ankle") if "l_ankle" in skel.joint_names else int(filt.area_joint[0])
    filt.terms(q, np.zeros(skel.n_dof))
    x = filt.pw[j] + np.array([0.05, 0.02, -0.04])
    L = base_inverse_inertia(filt, q, [j], [x], base)
    filt.terms(q, np.zeros(skel.n_dof))
    Jb = ((filt.S[:, 3:] + np.cross(filt.S[:, :3], x)).T * filt.chain[j])[:, base]
    for f in np.eye(3):
        dqb = np.linalg.solve(filt.Aw[:, base], np.concatenate([np.cross(x, f), f]))
        assert np.abs(Jb @ dqb - L @ f).max() < 1e-8 * np.abs(L).max()
    assert np.allclose(L, L.T, atol=1e-10 * np.abs(L).max())
    assert np.linalg.eigvalsh(L).min() > 0


def test_method_b_keeps_a_standing_body_up_for_ten_seconds():
    """Body95 standing still (COM 2 cm in front of its heel edge) stays up on the contact
    springs for 10 s simulated with the balance law, close to the input, and the written
    poses pass the independent check (contacts, floor and derivatives found afresh)."""
    skel = animik.load_rig("body95")
    clip = Motion(skel, np.tile(skel.rest_q, (300, 1)), 30.0)
    res = method_b_clip(clip)
    dq = np.abs(res.motion.q - clip.q)
    # rad or m: sinks ~1 mm; the law moves the COM ~1 cm forward, to ref_margin inside the
    # heel edge (measured 0.035 at the start, then steady)
    assert dq.max() < 0.05
    assert dq[-30:].max() - dq[-60:-30].max() < 1e-3  # settled, not drifting
    after = check_clip(res.motion)
    assert after.feasible.all() and res.history[-1][0] == 0


def test_method_b_balance_law_makes_the_sway_feasible_in_memory():
    """The fast lumbar sway on the rig (51 of 90 frames infeasible): with the balance law the
    simulated clip passes an independent check_clip at every frame, staying within 5 cm of
    the input's root; without it the same simulation tips (more than 10 frames infeasible)."""
    skel = animik.load_rig("body95")
    clip = _sway(skel)
    assert (~check_clip(clip).feasible).sum() > 40
    res = method_b_clip(clip)
    assert check_clip(res.motion).feasible.all()
    root = list(skel.joint_dofs(int(np.flatnonzero(skel.parents < 0)[0])))
    assert np.abs(res.motion.q[:, root[:3]] - clip.q[:, root[:3]]).max() < 0.05
    bare = method_b_clip(clip, balance=SoleBalanceOptions(enabled=False))
    assert (~check_clip(bare.motion).feasible).sum() > 10


def test_sole_stiffness_matches_finite_differences_of_the_springs():
    """sole_stiffness: the wrench change of small rigid sole displacements equals central
    finite differences of the point springs' wrench (normal and tangential, about the
    origin); sole_displacements then reproduces a reachable wrench error."""
    rng = np.random.default_rng(3)
    k_s, L = 5e4, 0.1
    x = np.column_stack([rng.uniform(-0.1, 0.2, 8), rng.uniform(-0.2, 0.2, 8),
                         np.full(8, -0.001)])
    sole = np.array([0] * 4 + [1] * 4)
    origins = np.array([[0.0, -0.1, 0.08], [0.05, 0.1, 0.08]])
    anchor = x.copy()

    def wrench(xs):
        f = -k_s * (xs - anchor)  # every point touching: f = -k_s (x - x_anchor)
        return np.concatenate([np.cross(xs, f).sum(axis=0), f.sum(axis=0)])

    K = sole_stiffness(x, sole, origins, k_s, L)
    h = 1e-7
    for col in range(12):
        s_, k = divmod(col, 6)
        d = np.zeros(6)
        d[k] = h * (1.0 if k < 3 else 1.0 / L)
        xs = []
        for sign in (1, -1):
            xp = x.copy()
            m = sole == s_
            xp[m] += sign * (d[:3] + np.cross(d[3:], x[m] - origins[s_]))
            xs.append(wrench(xp))
        fd = (xs[0] - xs[1]) / (2 * h)
        assert np.allclose(K[:, col], fd, rtol=1e-5, atol=1e-6 * np.abs(K).max())
    err = K @ rng.normal(size=12) * 1e-4
    dl = sole_displacements(K, err, L, 1e-9)
    assert np.allclose(K @ (dl * np.array([1, 1, 1, L, L, L])).ravel(), err,
                       atol=1e-5 * np.abs(err).max())


def test_desired_force_points_through_the_com_from_inside_the_polygon():
    poly = np.array([[-0.05, -0.15], [0.2, -0.15], [0.2, 0.15], [-0.05, 0.15]])
    o = SoleBalanceOptions()
    c, cd = np.array([0.0, 0.0, 1.0]), np.array([-0.5, 0.0, 0.0])  # falling backward fast
    F, p = desired_force(c, cd, c, np.zeros(3), np.zeros(3), poly, 0.0, 9.81, 70.0, o)
    assert p[0] == pytest.approx(-0.05 + o.margin)  # clamped at the heel edge, shrunk
    assert np.allclose(np.cross(np.array([p[0], p[1], 0.0]) - c, F), 0.0, atol=1e-9)
    assert F[0] > 0  # pushes the COM back toward the feet
    F0, p0 = desired_force(c, np.zeros(3), c, np.zeros(3), np.zeros(3), poly, 0.0, 9.81, 70.0, o)
    assert np.allclose(p0, c[:2]) and np.allclose(F0, [0, 0, 70 * 9.81])


def test_method_b_command_writes_the_sway_feasible(tmp_path, capsys):
    """The fast lumbar sway (its ZMP leaves the feet) retargeted onto body95 by the command:
    method B with its balance law writes it, and ``animik feasibility`` of the written file
    (contacts, floor and derivatives found afresh, body95's masses) passes every frame."""
    skel = animik.load_rig("body95")
    src, out = tmp_path / "s.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(_sway(skel), src)
    assert main(["feasibility", str(src), "--model", "body95", "--every", "0"]) == 5
    rc = main(["filter", str(src), "-o", str(out), "--method", "B", "--rig", "body95"])
    assert rc == 0 and out.exists()
    capsys.readouterr()
    assert main(["feasibility", str(out), "--model", "body95", "--every", "0"]) == 0


def test_method_b_command_writes_nothing_unless_every_frame_passes(tmp_path, capsys):
    """A simulated body that falls (here: method B tracking method A's clip with a fall
    threshold of a micrometre, docs/dynamics.md 5c): the command's contract holds -- exit 5,
    nothing written."""
    from animik.dynamics.method_b_track import TrackOptions, method_b_tracking
    skel = animik.load_rig("body95")
    src, out = tmp_path / "s.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(_sway(skel), src)
    with pytest.MonkeyPatch.context() as mp:
        import animik.commands.filter as cmd
        mp.setattr(cmd, "method_b_tracking",
                   lambda m, o, progress=None: method_b_tracking(
                       m, o, TrackOptions(max_deviation=1e-6), progress))
        rc = main(["filter", str(src), "-o", str(out), "--method", "B", "--rig", "body95"])
    err = capsys.readouterr().err
    assert rc == 5 and not out.exists() and "nothing written" in err


def test_method_b_bad_input(tmp_path):
    skel = animik.load_rig("body95")
    with pytest.raises(FeasibilityError, match="static_sink"):
        method_b_clip(_sway(skel, T=20), springs=SpringOptions(static_sink=-1.0))
    with pytest.raises(FeasibilityError, match="substeps"):
        method_b_clip(_sway(skel, T=20), springs=SpringOptions(substeps=0))
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT x {\n")
    assert main(["filter", str(bad), "-o", str(tmp_path / "o.bvh"), "--method", "B"]) == 3
    assert not (tmp_path / "o.bvh").exists()


def test_method_b_trace_reports_every_simulated_frame():
    """``trace`` (for diagnosing falls, docs/dynamics.md 5c) sees the settling frames (negative)
    and every clip frame once, the state at the frame's end (= the next written pose), and
    the springs' wrench: on the standing body95 they carry its weight."""
    skel = animik.load_rig("body95")
    clip = Motion(skel, np.tile(skel.rest_q, (30, 1)), 30.0)
    seen = []
    res = method_b_clip(clip, trace=seen.append)
    frames = [d["frame"] for d in seen]
    assert frames == list(range(-15, 30))  # settle 0.5 s at 30 fps, then the clip
    for d in seen[15:-1]:
        np.testing.assert_array_equal(d["q"], res.motion.q[d["frame"] + 1])
    fz = np.array([d["W"][5] for d in seen[15:]])
    weight = skel.total_mass * 9.81
    assert abs(fz.mean() - weight) < 0.05 * weight
    assert all(d["support"].all() and d["Wd"] is not None for d in seen)
