"""A foot leaving a stance fast is not held by the plain plant step (plant.take_offs; docs/
dynamics.md 5j, "The raw pirouette written")."""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, needs_shared

from animik.dynamics._runs import true_runs
from animik.dynamics.plant import take_offs
from animik.io.bvh import read_bvh
from animik.motion import Motion

FPS = 120.0


def _sole(T: int) -> np.ndarray:
    """A 20 x 8 cm sole's four corners, ``(T, 4, 3)``, standing at the origin."""
    c = np.array([[-0.05, -0.04], [-0.05, 0.04], [0.15, 0.04], [0.15, -0.04]])
    out = np.zeros((T, 4, 3))
    out[..., :2] = c
    return out


def _spin_then_slide() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames 0-39 standing (in contact), 40-99 spinning at 12 rad/s about the sole's front
    corner (a pirouette on the ball: the corner stays, the other corners circle at ~2.6 m/s),
    100-139 sliding away at 3 m/s (a leap skimming the floor); held (planted) from frame 40."""
    T = 140
    X = _sole(T)
    pivot = X[0, 2, :2].copy()
    for t in range(40, 100):
        th = 12.0 * (t - 39) / FPS
        R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        X[t, :, :2] = (X[0, :, :2] - pivot) @ R.T + pivot
    for t in range(100, T):
        X[t, :, :2] = X[99, :, :2] + np.array([3.0, 0.0]) * (t - 99) / FPS
    ic = np.zeros((T, 1), dtype=bool)
    ic[:40] = True
    planted = ~ic
    return X, ic, planted


def test_take_offs_keep_a_spinning_foot_and_drop_one_sliding_away():
    """A foot spinning on its ball is still a stance (its pivot stands still, though its mean
    circles at ~1.2 m/s); the same foot sliding away at 3 m/s after it is a take-off."""
    X, ic, planted = _spin_then_slide()
    mean_speed = np.hypot(*np.gradient(X[:, :, :2].mean(axis=1), axis=0).T) * FPS
    assert mean_speed[50:95].min() > 1.0  # the mean would have called the spin a swing
    out = take_offs(X, np.zeros(4, dtype=np.int64), ic, planted, FPS)
    assert not out[:95].any()
    runs = true_runs(out[:, 0])
    assert len(runs) == 1 and 98 <= runs[0][0] <= 106 and runs[0][1] == 140, runs


def test_take_offs_leave_a_clips_first_frames_to_the_hold():
    """A foot moving fast from the clip's first frame has no stance to take off from (a
    calibration glitch, a step in): it stays held."""
    T = 80
    X = _sole(T)
    X[:40, :, 0] += 3.0 * (np.arange(40)[:, None] - 40) / FPS  # sliding in at 3 m/s, then still
    planted = np.ones((T, 1), dtype=bool)
    ic = np.zeros((T, 1), dtype=bool)
    assert not take_offs(X, np.zeros(4, dtype=np.int64), ic, planted, FPS).any()


@needs_shared
def test_raw_pirouette_landing_stance_stays_under_the_input_foot():
    """Frames 240-420 of the raw cmu_daz pirouette: the end of the spin, the leap (the left
    foot slides 0.5 m in 0.2 s, 1.5-5 m/s, a few cm up) and the landing on it. The plain plant
    step held the left foot from 257 through the leap into the landing stance, following the
    input's steps slowed to 0.15 m/s: on main the held foot stays 42 cm (median; 45 cm at
    most) behind the input's for the whole landing stance, the body off its foot. Not held
    through the take-off, it lands where the input's does."""
    from animik.dynamics.clip import check_clip
    from animik.dynamics.plant import plant_contacts

    full = read_bvh(SHARED_BVH / "cmu_daz" / "pirouette.bvh")
    m = Motion(full.skeleton, full.q[240:420], full.fps)
    chk = check_clip(m)
    cm = chk.contacts
    pl = plant_contacts(m, cm)
    L = cm.point_area == cm.area_index("l_foot")
    held = cm.points(m.skeleton, pl.motion.q)[:, L, :2].mean(axis=1)
    off = np.hypot(*(held - chk.points[:, L, :2].mean(axis=1)).T)
    landing = chk.check.in_contact[:, cm.area_index("l_foot")] & (np.arange(m.n_frames) >= 70)
    assert landing.sum() > 50
    assert np.median(off[landing]) < 0.15 and off[landing].max() < 0.25, (
        np.median(off[landing]), off[landing].max())
