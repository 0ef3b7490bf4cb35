"""The clip check of a changed clip from the previous check (animik.dynamics.clip.check_clip
``previous=``, docs/dynamics.md 6j): the frames whose states, flags, points and centre of mass
did not change are taken from the previous check, the others computed -- the result equals
the full check bit for bit, whether the floor estimate moved (every frame's wrench checks
again) or not (only the changed frames'), with supports too."""

from __future__ import annotations

import numpy as np
import pytest
from test_cone_rows import _raised_sway
from test_windowed_rounds import _burst

import animik
from animik.dynamics import clip as clip_mod
from animik.dynamics.clip import check_clip
from animik.motion import Motion


def _equal(a, b) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


def _changed(m: Motion, lo: int, hi: int, amp: float = 0.05) -> Motion:
    q = m.q.copy()
    j = m.skeleton.dof_index("lumbar_flexion")
    q[lo:hi, j] += amp * np.sin(np.linspace(0.0, np.pi, hi - lo))
    return Motion(m.skeleton, q, m.fps)


@pytest.mark.parametrize("given", [False, True])
def test_incremental_check_equals_the_full_check(given, monkeypatch):
    skel = animik.load_rig("body95")
    m = _burst(skel)
    kw = dict(in_contact=True, floor=0.0) if given else {}
    prev = check_clip(m, keep_fk=True, **kw)
    m2 = _changed(m, 100, 140)
    calls = []
    rnea = clip_mod.rnea

    def spy(skel_, q, *a, **k):
        calls.append(len(q))
        return rnea(skel_, q, *a, **k)

    checked = []
    evaluate = clip_mod.evaluate_wrench

    def spy_eval(skel_, wrench, *a, **k):
        checked.append(len(wrench))
        return evaluate(skel_, wrench, *a, **k)

    monkeypatch.setattr(clip_mod, "rnea", spy)
    monkeypatch.setattr(clip_mod, "evaluate_wrench", spy_eval)
    inc = check_clip(m2, previous=prev, keep_fk=True, **kw)
    monkeypatch.setattr(clip_mod, "rnea", rnea)
    monkeypatch.setattr(clip_mod, "evaluate_wrench", evaluate)
    if given:  # the floor is given, so it cannot move: only the changed frames are checked
        assert checked == calls
    full = check_clip(m2, keep_fk=True, **kw)
    assert calls and calls[0] < m.n_frames // 2  # only the changed frames' inverse dynamics
    assert _equal(inc.check, full.check) and np.array_equal(inc.tau, full.tau)
    assert _equal(inc.fk, full.fk) and np.array_equal(inc.points, full.points)
    assert np.array_equal(inc.peak_torque, full.peak_torque) and inc.floor == full.floor
    assert not _equal(prev.check, full.check)  # the change is seen


def test_incremental_check_with_supports_equals_the_full_check():
    skel = animik.load_rig("body95")
    m, sup = _raised_sway(skel)
    prev = check_clip(m, supports=sup, in_contact=True, floor=0.0, keep_fk=True)
    m2 = _changed(m, 30, 55, amp=0.08)
    inc = check_clip(m2, supports=sup, in_contact=True, floor=0.0, previous=prev)
    full = check_clip(m2, supports=sup, in_contact=True, floor=0.0)
    assert np.isfinite(full.check.cone_residual).any()
    assert _equal(inc.check, full.check) and np.array_equal(inc.tau, full.tau)
    assert inc.fk is None  # not kept unless asked


def test_previous_with_other_settings_is_not_used():
    skel = animik.load_rig("body95")
    m = _burst(skel)
    prev = check_clip(m, mu=0.5, keep_fk=True)
    m2 = _changed(m, 100, 140)
    inc = check_clip(m2, mu=0.7, previous=prev)
    full = check_clip(m2, mu=0.7)
    assert _equal(inc.check, full.check)
    assert check_clip(m2, previous=check_clip(m)).fk is None  # no fk kept: full check
