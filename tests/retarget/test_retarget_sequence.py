"""The whole-clip FIK path (``PreparedFIK.solve_sequence``, used by ``Retargeter.run``) gives
exactly what solving frame by frame (``Retargeter.step`` / ``PreparedFIK.solve``) gives."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH

from animik.errors import OptionError
from animik.ik import build_problem, prepare_problem
from animik.io.bvh import read_bvh
from animik.kinematics import site_positions
from animik.motion import Motion
from animik.retarget import Retargeter
from animik.rigs import load_rig

G1 = SHARED_BVH.parent / "robots" / "unitree_g1" / "g1.xml"
CLIPS = ["cmu/02_01.bvh", "mocapbank/test_mocapbank.bvh",
         "bandai_namco/dataset-1_walk_normal_001.bvh"]
needs_data = pytest.mark.skipif(not all((SHARED_BVH / c).is_file() for c in CLIPS),
                                reason="../shared/data/bvh not present")


def _frame_by_frame(rt: Retargeter):
    """``run()`` through ``step()`` (a callback forces the per-frame path)."""
    seen = []
    return rt.run(callback=lambda t, q: seen.append(t)), seen


def _same(a, b) -> None:
    assert np.array_equal(a.motion.q, b.motion.q)
    assert np.array_equal(a.targets, b.targets)
    da, db = a.report.to_dict(), b.report.to_dict()
    for d in (da, db):
        d.pop("time_s"), d.pop("frames_per_second")
    assert da == db


@needs_data
@pytest.mark.parametrize("target", ["body95", "fig2", "g1"])
@pytest.mark.parametrize("clip", CLIPS)
def test_whole_clip_solve_equals_frame_by_frame(clip, target):
    if target == "g1" and not G1.is_file():
        pytest.skip("G1 MJCF not present")
    motion = read_bvh(SHARED_BVH / clip)
    motion = Motion(motion.skeleton, motion.q[:150], motion.fps, meta=motion.meta)
    rig = str(G1) if target == "g1" else target
    rt = Retargeter(motion, rig)
    assert rt._ik.sequence_supported
    slow, seen = _frame_by_frame(Retargeter(motion, rig))
    assert seen == list(range(motion.n_frames))
    _same(rt.run(), slow)


@needs_data
def test_whole_clip_solve_keeps_the_catch_up_after_a_cut():
    # a cut in the source (the second half jumps back to the first frames): the frame after the
    # cut runs out of iterations and keeps iterating (catch-up); both paths do the same
    m = read_bvh(SHARED_BVH / CLIPS[2])
    q = np.concatenate([m.q[60:120], m.q[:60]])
    motion = Motion(m.skeleton, q, m.fps, meta=m.meta)
    fast = Retargeter(motion, "body95", iterations=2).run()
    slow, _ = _frame_by_frame(Retargeter(motion, "body95", iterations=2))
    _same(fast, slow)
    its = fast.report.to_dict()
    assert its["frames"] == 120
    rt = Retargeter(motion, "body95", iterations=2)
    _, st = rt.step(0)
    for t in range(1, 61):
        _, st = rt.step(t, state=st)
    assert st.iterations > 2  # frame 60, right after the cut: the catch-up solve ran


def test_prepared_solve_sequence_equals_solve_per_frame():
    skel = load_rig("fig2")
    p0 = site_positions(skel, skel.rest_q)
    sites = ["l_hand", "r_hand", "l_foot", "r_foot"]
    idx = [skel.site_names.index(s) for s in sites]
    prob = build_problem(skel, skel.rest_q, {s: p0[i] for s, i in zip(sites, idx, strict=True)})
    T = 40
    t = np.linspace(0, 2 * np.pi, T)
    pos = np.repeat(p0[idx][None], T, axis=0)
    pos[:, 0] += 0.15 * np.stack([np.cos(t), np.sin(t), 0.5 * np.sin(2 * t)], axis=1)
    pos[:, 1, 2] += 0.2 * np.sin(t)
    pos[25:, 1, 0] += 0.3  # a jump: the catch-up solve on frame 25
    rng = np.random.default_rng(1)
    refs = skel.rest_q + 0.05 * rng.standard_normal((T, skel.n_dof))
    kw = dict(iterations=1, first_iterations=30, tol=1e-5, catch_tol=3e-5, jump=0.05)
    ik = prepare_problem(prob, "fik", reference_gain=0.2)
    assert ik.sequence_supported
    q, its = ik.solve_sequence(pos, refs, **kw)
    ik2 = prepare_problem(prob, "fik", reference_gain=0.2)
    state, qs = None, None
    for f in range(T):
        r = ik2.solve(refs[f] if f == 0 else qs, positions=pos[f], reference=refs[f],
                      state=state, max_iterations=1 if f else 30)
        n = r.iterations
        conv = all(e <= kw["tol"] for e in r.error.values())
        if f and not conv and r.reason == "max_iterations" \
                and not all(e <= kw["catch_tol"] for e in r.error.values()) \
                and np.abs(pos[f] - pos[f - 1]).max() > kw["jump"]:
            r = ik2.solve(r.q, reference=refs[f], state=r.state, max_iterations=max(30 - n, 1),
                          stall_window=5, stall_rel=1e-3)
            n += r.iterations
        assert np.array_equal(q[f], r.q), f
        assert its[f] == n, f
        state, qs = r.state, r.q
    assert its[25] > 1 and np.flatnonzero(its[1:] > 1).tolist() == [24]  # catch-up: the jump only


def test_solve_sequence_refuses_what_it_cannot_run():
    skel = load_rig("fig2")
    p0 = site_positions(skel, skel.rest_q)
    prob = build_problem(skel, skel.rest_q, {"l_hand": p0[skel.site_names.index("l_hand")]})
    ik = prepare_problem(prob, "fik", gain="hinf")
    assert not ik.sequence_supported
    with pytest.raises(OptionError):
        ik.solve_sequence(np.zeros((2, 1, 3)), np.zeros((2, skel.n_dof)), iterations=3,
                          first_iterations=3, tol=1e-4, catch_tol=1e-4, jump=1.0)
    ok = prepare_problem(prob, "fik")
    with pytest.raises(Exception, match="shape"):
        ok.solve_sequence(np.zeros((2, 2, 3)), np.zeros((2, skel.n_dof)), iterations=3,
                          first_iterations=3, tol=1e-4, catch_tol=1e-4, jump=1.0)
