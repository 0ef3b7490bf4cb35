"""The clip filter's correction is smooth (docs/dynamics.md 5h): the jitter metric
(:mod:`animik.dynamics.smoothness`), measured against the input, and its bound on a real clip."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SHARED_BVH

import animik
from animik.cli import main
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.correct import correct_clip
from animik.dynamics.smoothness import correction_jitter, root_slides, trunk_dofs
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion
from animik.retarget import retarget

SFU = SHARED_BVH / "sfu" / "0005_Walking001.bvh"


def test_jitter_of_a_zigzag_and_of_a_rewrapped_angle():
    """A root zig-zag of +-a adds a second difference of 4a on every frame; a trunk angle moved
    by 2 pi is no change; the input's own figure is its plain second difference."""
    skel = animik.load_rig("body95")
    T = 40
    rng = np.random.default_rng(1)
    q_in = skel.rest_q + 0.01 * np.cumsum(rng.normal(size=(T, skel.n_dof)), axis=0)
    trunk = trunk_dofs(skel, contact_model_for_clip(skel, q_in))
    assert len(trunk) >= 3  # body95: lumbar and thorax
    sl = root_slides(skel)
    a = 0.002
    q_out = q_in.copy()
    q_out[:, sl[0]] += a * (-1.0) ** np.arange(T)
    q_out[:, trunk[0]] += 2 * np.pi
    j = correction_jitter(skel, q_in, q_out, trunk)
    assert j["root_mm"]["rms"] == pytest.approx(4e3 * a, rel=1e-6)
    assert j["root_mm"]["max"] == pytest.approx(4e3 * a, rel=1e-6)
    assert j["trunk_deg"]["max"] < 1e-6
    d2 = np.linalg.norm(np.diff(q_in[:, sl], 2, axis=0), axis=1) * 1e3
    assert j["input_root_mm"]["rms"] == pytest.approx(np.sqrt(np.mean(d2 ** 2)), abs=1e-4)
    with pytest.raises(ValueError, match="same shape"):
        correction_jitter(skel, q_in, q_out[1:], trunk)


@pytest.mark.skipif(not SFU.is_file(), reason="shared mocap not present")
def test_filtered_sfu_walk_on_body95_is_smooth():
    """The whole SFU walk retargeted onto body95 (117 of 270 frames infeasible): the corrected
    clip passes the check and its correction's second difference stays below 1.5 mm RMS,
    8 mm max on the root and 0.6 deg RMS on the trunk -- bounds the rounds without the
    smoothness term (``w_smooth=0``, the filter before 5h) break: 8.8 mm RMS, 37 mm max,
    1.8 deg. The report's figure is measured against the input, not an iterate."""
    raw = animik.read_bvh(SFU)
    m95 = retarget(raw, animik.load_rig("body95"))
    res = correct_clip(m95)
    assert res.check.feasible.all()
    r = res.report(m95)
    j = r["jitter"]
    assert j["root_mm"]["rms"] < 1.5 and j["root_mm"]["max"] < 8.0
    assert j["trunk_deg"]["rms"] < 0.6
    # against the input clip, computed here from the poses
    sl = root_slides(m95.skeleton)
    d2 = np.linalg.norm(np.diff(res.motion.q - m95.q, 2, axis=0)[:, sl], axis=1) * 1e3
    assert j["root_mm"]["rms"] == pytest.approx(np.sqrt(np.mean(d2 ** 2)), abs=1e-4)
    assert j["root_mm"]["max"] == pytest.approx(d2.max(), abs=1e-4)
    old = correct_clip(m95, w_smooth=0.0)
    assert old.check.feasible.all()
    jo = old.report(m95)["jitter"]
    assert jo["root_mm"]["rms"] > 1.5 and jo["root_mm"]["max"] > 8.0
    assert jo["trunk_deg"]["rms"] > 0.6


@pytest.mark.skipif(not SFU.is_file(), reason="shared mocap not present")
def test_filter_command_reports_the_jitter(tmp_path, capsys):
    raw = animik.read_bvh(SFU)
    src, out, rep = tmp_path / "walk.bvh", tmp_path / "walk_f.bvh", tmp_path / "r.json"
    write_bvh_compatible(Motion(raw.skeleton, raw.q[:120], raw.fps), src)
    assert main(["filter", str(src), "-o", str(out), "--json", str(rep)]) == 0
    assert "jitter (2nd difference of output - input" in capsys.readouterr().out
    j = json.loads(rep.read_text())["jitter"]
    assert set(j) == {"root_mm", "trunk_deg", "input_root_mm", "input_trunk_deg"}
    # the written file against the input file: the same figure (to the BVH's precision)
    a, b = animik.read_bvh(src), animik.read_bvh(out)
    trunk = trunk_dofs(a.skeleton, contact_model_for_clip(a.skeleton, a.q))
    jf = correction_jitter(a.skeleton, a.q, b.q, trunk)
    assert jf["root_mm"]["rms"] == pytest.approx(j["root_mm"]["rms"], abs=0.02)
    assert jf["trunk_deg"]["rms"] == pytest.approx(j["trunk_deg"]["rms"], abs=0.02)


def test_rounds_without_the_smoothness_term_are_the_fallback(monkeypatch):
    """When the smooth rounds (or plant passes) leave infeasible frames, the rounds run again
    without the term and the better result is kept: a clip the filter passed before 5h still
    passes. Here the smooth rounds are made to fail (no round at all)."""
    import animik.dynamics.correct as C

    skel = animik.load_rig("body95")
    T, fps = 90, 60.0
    q = np.tile(skel.rest_q, (T, 1))
    q[:, skel.dof_index("lumbar_flexion")] += 0.12 * np.sin(2 * np.pi * 1.5 * np.arange(T) / fps)
    clip = Motion(skel, q, fps)  # a fast lumbar sway: the ZMP leaves the feet at the turns
    real = C._rounds
    calls = []

    def rounds(motion, options, iterations, *rest, **kw):
        w = rest[-1]
        calls.append(w)
        return real(motion, options, 0 if w > 0 else iterations, *rest, **kw)

    monkeypatch.setattr(C, "_rounds", rounds)
    res = C.correct_clip(clip)
    assert calls == [C.W_SMOOTH, 0.0]
    assert res.check.feasible.all()
    calls.clear()
    res, _ = C.plant_and_correct(clip)
    assert calls[0] == C.W_SMOOTH and calls[-1] == 0.0
    assert res.check.feasible.all()
