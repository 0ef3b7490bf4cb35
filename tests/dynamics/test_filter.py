"""Seed D method A: the corrected wrench is valid and exactly achieved; feasible input passes
through unchanged; a shove is recovered with a valid floor wrench at every step."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared

import animik
from animik.dynamics import com, rnea
from animik.dynamics.filter import (
    DynamicsFilter,
    FilterOptions,
    Pin,
    filter_clip,
)
from animik.dynamics.zmp import FeasibilityError, check_contacts
from animik.motion import Motion


def _valid(filt: DynamicsFilter, W: np.ndarray, poly: np.ndarray, tol=1e-7) -> bool:
    o = filt.opt
    f, n = W[3:], W[:3]
    if f[2] <= 0:
        return bool(np.abs(W).max() < tol)
    p = np.array([-n[1] / f[2], n[0] / f[2]])
    from animik.dynamics import _support

    d = _support.signed_distance(poly, len(poly), p[0], p[1], np.empty(2))
    return bool(d >= -tol and np.hypot(*f[:2]) <= o.mu * f[2] + tol)


def test_correction_reaches_the_nearest_valid_wrench():
    skel = animik.load_rig("body95")
    filt = DynamicsFilter(skel, FilterOptions(w_com=0.0))
    q = skel.rest_q.copy()
    v = np.zeros(skel.n_dof)
    ref = np.zeros(skel.n_dof)
    ref[skel.dof_index("pelvis_tx")] = 12.0  # shove forward: ZMP behind the heels, slipping
    qdd, info = filt.accelerations(q, v, ref, [], np.ones(2, bool), 1 / 120)
    assert info.corrected
    assert not _valid(filt, info.wrench_wanted, info.polygon)
    assert _valid(filt, info.wrench, info.polygon)
    # The new accelerations produce exactly that wrench (independent RNEA).
    assert np.allclose(rnea(skel, q, v, qdd).wrench, info.wrench, atol=1e-6)


def test_flight_correction_is_ballistic():
    skel = animik.load_rig("body95")
    filt = DynamicsFilter(skel, FilterOptions(w_com=0.0))
    q = skel.rest_q.copy()
    v = np.zeros(skel.n_dof)
    ref = np.zeros(skel.n_dof)  # "hold still" in the air
    qdd, info = filt.accelerations(q, v, ref, [], np.zeros(2, bool), 1 / 120)
    assert info.corrected and np.abs(info.wrench).max() < 1e-6
    assert np.abs(rnea(skel, q, v, qdd).wrench).max() < 1e-6
    # The COM falls at g.
    h = 1e-3
    c = [com(skel, q + s * 0.5 * h * h * qdd) for s in (0.0, 1.0)]
    assert np.isclose((c[1][2] - c[0][2]) / (0.5 * h * h), -9.81, rtol=1e-3)


def test_feasible_clip_passes_unchanged():
    skel = animik.load_rig("body95")
    clip = Motion(skel, np.tile(skel.rest_q, (60, 1)), 60.0)
    res = filter_clip(clip, in_contact=True, floor=0.0)
    assert res.report["rms_joint_change_deg"] == 0.0 and res.report["corrected_frames"] == 0
    assert res.check.feasible.all() and res.check_exact.all()


def test_shove_is_recovered_with_valid_wrench_at_every_step():
    skel = animik.load_rig("body95")
    filt = DynamicsFilter(skel, FilterOptions())
    q = skel.rest_q.copy()
    v = np.zeros(skel.n_dof)
    v[skel.dof_index("pelvis_tx")] = 0.3
    filt = DynamicsFilter(skel, FilterOptions(w_pin=100.0, w_com=100.0))  # feet pinned, COM held
    filt.terms(q, v)
    pins = [Pin(int(j), filt.pw[j].copy(), filt.Rw[j].copy()) for j in filt.area_joint]
    c0 = com(skel, q)
    dt = 1 / 120
    wn = 2 * np.pi * filt.opt.track_hz
    corrected = 0
    for _ in range(360):
        ref = wn * wn * (skel.rest_q - q) - 2 * wn * v
        qdd, info = filt.accelerations(q, v, ref, pins, np.ones(2, bool), dt,
                                       (c0, np.zeros(3), np.zeros(3)))
        corrected += info.corrected
        chk = check_contacts(skel, q, v, qdd, True, mu=filt.opt.mu)
        assert chk.feasible, chk.reasons
        v = v + dt * qdd
        q = q + dt * v
    assert corrected > 0
    assert np.abs(q - skel.rest_q).max() < 1e-2 and np.abs(v).max() < 1e-2


def test_options_are_checked():
    with pytest.raises(FeasibilityError, match="method"):
        FilterOptions(method="C").checked()
    with pytest.raises(FeasibilityError, match="mu"):
        FilterOptions(mu=-1).checked()
    with pytest.raises(FeasibilityError, match="margin"):
        FilterOptions(margin=-0.1).checked()


@pytest.mark.skipif(not (SHARED_BVH / "sfu" / "0005_Walking001.bvh").is_file(),
                    reason="shared mocap not present")
def _with_bone_cylinder_masses(clip: Motion) -> Motion:
    """``clip`` with the bone-cylinder masses the BVH reader gave before the segment masses by
    role (same total; docs/dynamics.md 5h)."""
    import dataclasses

    from animik.skeleton import Skeleton, with_body_mass

    s = clip.skeleton
    joints, sites = s.to_joints()
    bare = [dataclasses.replace(j, mass=None, com=None, inertia=None) for j in joints]
    cyl = Skeleton.from_joints(s.name, bare, sites, meta=dict(s.meta))
    return Motion(with_body_mass(cyl, s.total_mass, "bone cylinders"), clip.q, clip.fps)


@needs_shared
def test_filter_sfu_walk_is_feasible_with_its_own_accelerations(tmp_path):
    """The one shared clip the per-frame method A gets through (docs/dynamics.md lists the
    others), with the bone-cylinder masses it was written for: with de Leva's segment masses
    (the reader's since issue 10's fifth round) it diverges at frame 237 of 270 (section 5b;
    ``animik filter``, the whole-clip method, writes the clip feasible with either)."""
    clip = _with_bone_cylinder_masses(animik.read_bvh(SHARED_BVH / "sfu" / "0005_Walking001.bvh"))
    assert "cylinders" in clip.skeleton.meta["mass_source"]
    res = filter_clip(clip)
    assert res.check_exact.all()  # every frame, with the accelerations the integrator used
    assert res.report["rms_joint_change_deg"] < 1.0
    assert res.report["root_drift_cm"]["max"] < 5.0
    # Re-differentiated by Savitzky-Golay, most frames still pass (not all: see the docs).
    assert res.check.feasible.mean() > 0.8


def test_filter_command_writes_only_finished_clips(tmp_path, capsys):
    from animik.cli import main
    from animik.io.bvh_compat import write_bvh_compatible

    skel = animik.load_rig("body95")
    src = tmp_path / "stand.bvh"
    write_bvh_compatible(Motion(skel, np.tile(skel.rest_q, (30, 1)), 30.0), src)
    out = tmp_path / "out.bvh"
    assert main(["filter", str(src), "-o", str(out), "--json", str(tmp_path / "r.json")]) == 0
    assert out.is_file() and "RMS joint change" in capsys.readouterr().out
    # method B (implemented now) keeps the same contract: written only if feasible
    rc = main(["filter", str(src), "-o", str(tmp_path / "b.bvh"), "--method", "B"])
    if rc == 0:
        assert main(["feasibility", str(tmp_path / "b.bvh"), "--every", "0"]) == 0
    else:
        assert rc == 5 and not (tmp_path / "b.bvh").exists()
    with pytest.raises(SystemExit) as e:  # a bad option value is bad usage (exit 2)
        main(["filter", str(src), "-o", str(tmp_path / "c.bvh"), "--mu", "0"])
    assert e.value.code == 2
    assert not (tmp_path / "c.bvh").exists()
