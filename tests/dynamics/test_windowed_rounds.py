"""Windowed correction rounds (animik.dynamics.correct, docs/dynamics.md 6i): a round after
the first moves only the frames near the ones still infeasible; the others keep their poses
bit for bit and enter the QP's smoothness terms as fixed boundary values."""

from __future__ import annotations

import numpy as np

import animik
from animik.dynamics import check_clip
from animik.dynamics.correct import (
    W_SMOOTH,
    _clip_windows,
    _rounds,
    _Setup,
    _windows,
    correct_clip,
    movable_frames,
    savgol_operator,
)
from animik.dynamics.filter import FilterOptions
from animik.motion import Motion


def _burst(skel, T=360, fps=60.0, t0=2.5, t1=3.5, amp=0.3, hz=1.5):
    """Body95 standing still, bowing fast at the lumbar spine between ``t0`` and ``t1`` s
    (feet still): the ZMP leaves the feet at the turns of the burst only."""
    q = np.tile(skel.rest_q, (T, 1))
    t = np.arange(T) / fps
    on = (t >= t0) & (t < t1)
    q[on, skel.dof_index("lumbar_flexion")] += amp * np.sin(2 * np.pi * hz * (t[on] - t0)) ** 2
    return Motion(skel, q, fps)


def test_movable_frames_are_widened_stretches_at_least_a_window_long():
    bad = np.zeros(200, bool)
    bad[[5, 60, 70, 150]] = True
    mov = movable_frames(bad, 10, 13)
    # 60 and 70 widened by 13 (the window: margin below it is raised) overlap; 5's stretch
    # reaches the clip's start; the gap between 83 and 137 stays (>= 13 frames)
    np.testing.assert_array_equal(np.flatnonzero(np.diff(np.r_[0, mov.astype(int), 0])),
                                  [0, 19, 47, 84, 137, 164])
    # a gap shorter than the window is filled
    bad2 = np.zeros(200, bool)
    bad2[[50, 90]] = True
    assert movable_frames(bad2, 15, 13)[37:104].all()


def test_clipped_windows_apply_the_operator_to_corrections_on_the_movable_frames():
    """Each frame's check window restricted to the movable frames and shifted inside its
    stretch gives, for any correction that is zero on the fixed frames, exactly the
    Savitzky-Golay operator's rows (D0, D1, D2)."""
    rng = np.random.default_rng(3)
    T, fps = 240, 120.0
    D = [savgol_operator(T, fps, 0.1, d) for d in range(3)]
    win = [_windows(Dd) for Dd in D]
    lo = win[0][0]
    wts = np.stack([w[1] for w in win], axis=1)
    n_w = wts.shape[2]
    bad = np.zeros(T, bool)
    bad[[3, 100, 230]] = True
    mov = movable_frames(bad, 20, n_w)
    frames = np.arange(T)
    cs = np.r_[0, np.cumsum(mov)]
    meets = cs[np.minimum(lo + n_w, T)] > cs[lo]
    lo2, wts2 = _clip_windows(lo, wts, mov, frames[meets])
    x = rng.normal(size=T) * mov
    for d in range(3):
        want = D[d] @ x
        got = np.array([wts2[f, d] @ x[lo2[f]:lo2[f] + n_w] for f in frames[meets]])
        np.testing.assert_allclose(got, want[meets], rtol=0, atol=1e-9 * np.abs(want).max())
        assert mov[np.add.outer(lo2[meets], np.arange(n_w))].all()  # windows on movable frames
    np.testing.assert_array_equal(want[~meets], 0.0)  # the others cannot see the correction


def test_a_windowed_round_leaves_the_fixed_frames_bit_for_bit_and_fixes_the_window():
    skel = animik.load_rig("body95")
    clip = _burst(skel)
    chk = check_clip(clip)
    bad = ~chk.feasible
    assert bad.any() and not bad[:120].any() and not bad[260:].any()
    su = _Setup.build(clip, FilterOptions().checked(), chk.contacts, 1.0, 0.1, 1e3)
    n_w = int(np.diff(su.ops[0].indptr[:2])[0])
    mov = movable_frames(bad, 30, n_w)
    assert mov.sum() < 0.5 * clip.n_frames
    q2, ok, _ = su.step(chk, clip.q, clip, 0.5, 1e2, 6, mov)
    assert ok
    np.testing.assert_array_equal(q2[~mov], clip.q[~mov])  # bit for bit
    assert np.abs(q2[mov] - clip.q[mov]).max() > 1e-4  # the window did move
    after = check_clip(Motion(skel, q2, clip.fps))
    assert (~after.feasible).sum() < bad.sum()


def test_correct_clip_with_windowed_rounds_is_feasible_and_untouched_far_away():
    """The rounds after the first move the frames near the infeasible ones only: the written
    clip passes the independent check; far from the burst it equals the first round's clip
    (the full QP moves every contact frame a little), with and without the window."""
    skel = animik.load_rig("body95")
    clip = _burst(skel)
    win = correct_clip(clip, window=0.5)
    full = correct_clip(clip, window=0.0)
    assert check_clip(win.motion).feasible.all(), win.history
    assert check_clip(full.motion).feasible.all(), full.history
    assert len(win.history) > 2  # the windowed rounds ran
    # the same first round (of the smooth rounds, which write this clip; correct_clip with
    # one iteration would keep the unsmoothed rounds' first round, which leaves fewer frames),
    # then (windowed) the far frames keep its poses
    one = _rounds(clip, None, 1, 1.0, 0.1, 0.5, 0.3, 1e2, None, 4, W_SMOOTH, window=0.5)
    far = np.r_[0:60, 320:360]
    np.testing.assert_array_equal(win.motion.q[far], one.motion.q[far])
    assert np.abs(full.motion.q[far] - one.motion.q[far]).max() > 0
