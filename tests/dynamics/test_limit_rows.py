"""The correction QP keeps the rig's joint limits on the DoFs its lean modes move (the trunk's;
animik.dynamics.limits, docs/dynamics.md 8, "Joint limits in the correction QP"): rows hold
``lower <= q + E x <= upper``, and the penalty's slack is clipped."""

from __future__ import annotations

import numpy as np

import animik
from animik.dynamics import check_clip
from animik.dynamics import correct as C
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.correct import _modes_batch, correct_clip
from animik.dynamics.filter import DynamicsFilter, terms_batch
from animik.dynamics.limits import keep_within, limit_excess, limit_rows
from animik.dynamics.smoothness import root_slides, trunk_dofs
from animik.motion import Motion

FLEXION = ("lumbar_flexion", "lower_thorax_flexion", "upper_thorax_flexion")


def _bow_at_limits(skel, T=360, fps=60.0, t0=2.5, t1=3.5, amp=0.3, hz=1.5):
    """Body95 standing with its three trunk flexion DoFs at their lower limits (leaning back
    as far as the rig allows), bowing fast at the lumbar spine between ``t0`` and ``t1`` s
    (feet still): the ZMP leaves the feet at the turns of the bow, and the least-norm lean
    that brings it back bends the thorax further back, past its limit."""
    q = np.tile(skel.rest_q, (T, 1))
    for name in FLEXION:
        k = skel.dof_index(name)
        q[:, k] = skel.lower[k]
    t = np.arange(T) / fps
    on = (t >= t0) & (t < t1)
    q[on, skel.dof_index("lumbar_flexion")] += amp * np.sin(2 * np.pi * hz * (t[on] - t0)) ** 2
    return Motion(skel, q, fps)


def _terms(skel, q):
    W, Aw, S = terms_batch(DynamicsFilter(skel), q, 0 * q, 0 * q, full=True)
    return Aw, S, trunk_dofs(skel, contact_model_for_clip(skel, q))


def test_limit_rows_hold_exactly_the_limits_of_the_corrected_pose():
    """A correction ``x`` satisfies the rows exactly when ``q + E x`` stays within the limits
    of the DoFs that have rows; DoFs too far from a limit to reach it get none."""
    skel = animik.load_rig("body95")
    rng = np.random.default_rng(2)
    T = 40
    q = np.tile(skel.rest_q, (T, 1))
    Aw, S, up = _terms(skel, q)
    for i, k in enumerate(up):  # every trunk DoF somewhere in its range, some at a limit
        q[:, k] = skel.lower[k] + (skel.upper[k] - skel.lower[k]) * rng.uniform(size=T)
        q[i::7, k] = skel.upper[k] if i % 2 else skel.lower[k]
    Aw, S, up = _terms(skel, q)
    E = _modes_batch(Aw, S, root_slides(skel), up, skel.total_mass)
    frame, coef, rhs = limit_rows(skel, q, E, up, np.arange(T), reach=10.0)  # every DoF
    # both limits of every DoF a lean of 10 m could take past them (a DoF the modes barely
    # move, far from its limits, needs none)
    move = 10.0 * np.abs(E[:, up, 3:]).sum(axis=2)
    want = sum(int((room < move).sum()) for room in (skel.upper[up] - q[:, up],
                                                     q[:, up] - skel.lower[up]))
    assert len(frame) == want > T * len(up)
    for _ in range(20):
        x = 0.05 * rng.normal(size=(T, 5))
        q2 = q + np.einsum("tnk,tk->tn", E, x)
        ok_rows = (np.einsum("rk,rk->r", coef, x[frame]) <= rhs + 1e-12).all()
        lo, hi = skel.lower[up], skel.upper[up]
        ok_q = ((q2[:, up] >= lo - 1e-12) & (q2[:, up] <= hi + 1e-12)).all()
        assert ok_rows == ok_q
    # a short reach: only the DoFs near a limit
    near = limit_rows(skel, q, E, up, np.arange(T), reach=0.01)[0]
    assert 0 < len(near) < len(frame)


def test_keep_within_clips_to_the_limits_and_never_further_out():
    skel = animik.load_rig("body95")
    k = skel.dof_index("lumbar_lateral")
    q = np.tile(skel.rest_q, (2, 1))
    q[1, k] = skel.upper[k] + 0.1  # already beyond (not by the step)
    q2 = q.copy()
    q2[:, k] += 0.5
    out = keep_within(skel, q, q2, np.array([k]))
    assert out[0, k] == skel.upper[k] and out[1, k] == q[1, k]


def _main_qp(monkeypatch):
    """The correction QP as before the limits: no rows, no clip."""
    monkeypatch.setattr(C, "limit_rows", lambda skel, q, E, dofs, frames: (
        np.zeros(0, np.int64), np.zeros((0, E.shape[2])), np.zeros(0)))
    monkeypatch.setattr(C, "keep_within", lambda skel, q, q2, dofs: q2)


def test_a_lean_past_the_trunks_limits_is_kept_within_them_and_feasible(monkeypatch):
    """The bow with the thorax at its limits: the correction is feasible (the independent
    check) with every DoF within body95's limits, while the plain least-norm lean (the QP
    without the limits, as before) leaves them."""
    skel = animik.load_rig("body95")
    clip = _bow_at_limits(skel)
    assert limit_excess(skel, clip.q)["frames_outside"] == 0
    assert not check_clip(clip).feasible.all()
    res = correct_clip(clip)
    assert check_clip(res.motion).feasible.all(), res.history
    assert limit_excess(skel, res.motion.q)["frames_outside"] == 0
    # the rows alone (no clip after the QP) keep them within 0.01 deg
    with monkeypatch.context() as m:
        m.setattr(C, "keep_within", lambda skel, q, q2, dofs: q2)
        alone = correct_clip(clip)
    assert check_clip(alone.motion).feasible.all()
    assert limit_excess(skel, alone.motion.q)["max_excess_deg"] < 0.01
    _main_qp(monkeypatch)
    before = correct_clip(clip)
    assert check_clip(before.motion).feasible.all()
    ex = limit_excess(skel, before.motion.q)
    assert ex["frames_outside"] > 10 and ex["max_excess_deg"] > 1.0
    assert ex["dof"] in FLEXION


def test_a_pose_already_beyond_a_limit_still_gets_a_correction_and_goes_no_further_out():
    """An input past a trunk limit (the thorax 2° beyond its lower flexion limit): the rows'
    right-hand sides are negative there, the penalty's slacks keep the QP solvable; the
    correction is feasible and no trunk DoF ends further beyond its limit than the input."""
    skel = animik.load_rig("body95")
    clip = _bow_at_limits(skel)
    k = skel.dof_index("lower_thorax_flexion")
    q = clip.q.copy()
    q[:, k] -= np.radians(2.0)
    clip = Motion(skel, q, clip.fps)
    before = limit_excess(skel, clip.q)
    assert before["dof"] == "lower_thorax_flexion" and before["frames_outside"] == clip.n_frames
    res = correct_clip(clip)
    assert check_clip(res.motion).feasible.all(), res.history
    trunk = trunk_dofs(skel, contact_model_for_clip(skel, clip.q))
    out = res.motion.q[:, trunk]
    lo, hi = skel.lower[trunk], skel.upper[trunk]
    assert (out >= np.minimum(lo, clip.q[:, trunk]) - 1e-12).all()
    assert (out <= np.maximum(hi, clip.q[:, trunk]) + 1e-12).all()
    assert np.abs(res.motion.q - clip.q).max() > 1e-3  # it did correct
