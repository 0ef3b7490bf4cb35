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
from animik.dynamics.sole_balance import BalanceOptions
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


def test_method_b_holds_a_standing_body_on_its_springs():
    """Body95 standing still (COM 5 cm in front of the heel edge) settles on the contact
    springs instead of falling (a regression to soft springs or strong foot pins tips it over
    backwards: measured 0.24 rad in 0.6 s), and the result's check is the independent one."""
    skel = animik.load_rig("body95")
    clip = Motion(skel, np.tile(skel.rest_q, (40, 1)), 30.0)
    res = method_b_clip(clip)
    dq = np.abs(res.motion.q - clip.q)
    assert dq.max() < 0.05  # rad or m: sinks ~2 mm, rocks < 2 cm
    after = check_clip(res.motion)
    assert res.history[-1][0] == (~after.feasible).sum()


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
    """Without the balance law the sway tips the body over (docs/dynamics.md 5c): the
    command's contract holds -- exit 5, nothing written."""
    skel = animik.load_rig("body95")
    src, out = tmp_path / "s.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(_sway(skel), src)
    with pytest.MonkeyPatch.context() as mp:
        import animik.commands.filter as cmd
        mp.setattr(cmd, "method_b_clip",
                   lambda m, o: method_b_clip(m, o, balance=BalanceOptions(enabled=False)))
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
