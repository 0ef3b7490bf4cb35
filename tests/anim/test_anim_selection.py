"""Key selections (dope sheet / graph editor model): move, scale, delete, copy / paste, tangents
(Hermite slopes checked with finite differences and C1 continuity)."""

from __future__ import annotations

import numpy as np
import pytest

from animik import anim
from animik.anim import selection as ks
from animik.anim.interpolation import hermite
from animik.anim.tracks import ClipError, JointTrack
from animik.rigs import load_rig


@pytest.fixture(scope="module")
def skel():
    return load_rig("fig2")


def _clip(skel, times=(0.0, 0.5, 1.0, 1.5), mode="smooth", seed=0):
    rng = np.random.default_rng(seed)
    q = np.clip(skel.rest_q + 0.4 * rng.normal(size=(len(times), skel.n_dof)), skel.lower, skel.upper)
    return anim.clip_from_poses(skel, times, q, interpolation=mode, fps=30.0)


def _hinge(skel):
    """A joint with one rotation DoF (scalar curve, no rotation group)."""
    return next(skel.joint_names[j] for j in range(skel.n_joints) if len(skel.joint_dofs(j)) == 1
                and skel.dof_type[skel.joint_dofs(j)[0]] == 0)


def _ball(skel):
    from animik.joints import joint_layouts
    return next(skel.joint_names[j] for j, lay in enumerate(joint_layouts(skel)) if lay.group is not None
                and lay.group.k == 3)


def test_move_keys_snaps_and_keeps_values(skel):
    clip = _clip(skel)
    j = clip.tracks[0].joint
    sel = [ks.KeyRef("joint", j, 0.5), ks.KeyRef("joint", j, 1.0)]
    new, refs = ks.move_keys(clip, sel, 0.109)  # 3.27 frames -> 3 frames
    tr0, tr = clip.track(j), new.track(j)
    np.testing.assert_allclose(tr.times, [0.0, 0.6, 1.1, 1.5], atol=1e-12)
    np.testing.assert_array_equal(tr.values, tr0.values)
    assert [r.time for r in refs] == pytest.approx([0.6, 1.1])
    # other tracks untouched
    other = clip.tracks[1].joint
    assert new.track(other) is clip.track(other)


def test_move_onto_unselected_key_replaces_it(skel):
    clip = _clip(skel)
    j = clip.tracks[0].joint
    new, _ = ks.move_keys(clip, [ks.KeyRef("joint", j, 0.5)], 0.5)
    tr0, tr = clip.track(j), new.track(j)
    np.testing.assert_allclose(tr.times, [0.0, 1.0, 1.5])
    np.testing.assert_array_equal(tr.values[1], tr0.values[1])  # the moved key's values won


def test_move_before_zero_raises(skel):
    clip = _clip(skel)
    j = clip.tracks[0].joint
    with pytest.raises(ClipError, match="before 0"):
        ks.move_keys(clip, [ks.KeyRef("joint", j, 0.5)], -1.0)
    with pytest.raises(ClipError, match="no key"):
        ks.move_keys(clip, [ks.KeyRef("joint", j, 0.25)], 0.1)


def test_scale_keys_about_pivot(skel):
    clip = _clip(skel)
    sel = ks.all_keys(clip)
    new, refs = ks.scale_keys(clip, sel, 2.0, pivot=0.5)  # 0 would go to -0.5 s
    assert new is not None and len(refs) == 4 * len(clip.tracks)
    for tr0, tr in zip(clip.tracks, new.tracks, strict=True):
        np.testing.assert_allclose(tr.times, [0.0, 0.5, 1.5, 2.5], atol=1e-12)
        np.testing.assert_array_equal(tr.values, tr0.values)


def test_scale_past_unselected_keys(skel):
    clip = _clip(skel)
    j = clip.tracks[0].joint
    new, _ = ks.scale_keys(clip, [ks.KeyRef("joint", j, 0.5), ks.KeyRef("joint", j, 1.0)], 1.6, 0.0)
    np.testing.assert_allclose(new.track(j).times, [0.0, 0.8, 1.5, 1.6], atol=1e-12)
    np.testing.assert_array_equal(new.track(j).values, clip.track(j).values[[0, 1, 3, 2]])


def test_scale_merges_keys_on_one_frame(skel):
    clip = _clip(skel, times=(0.0, 0.1, 0.2, 1.0))
    j = clip.tracks[0].joint
    sel = [ks.KeyRef("joint", j, t) for t in (0.0, 0.1, 0.2)]
    new, refs = ks.scale_keys(clip, sel, 0.01, pivot=0.0)
    tr = new.track(j)
    np.testing.assert_allclose(tr.times, [0.0, 1.0])
    np.testing.assert_array_equal(tr.values[0], clip.track(j).values[2])  # the latest won
    with pytest.raises(ClipError, match="positive"):
        ks.scale_keys(clip, sel, 0.0, 0.0)


def test_box_select_and_delete(skel):
    clip = _clip(skel)
    rows = [("joint", tr.joint) for tr in clip.tracks[:2]]
    box = ks.keys_in_box(clip, rows, 1.2, 0.4)
    assert sorted({k.time for k in box}) == [0.5, 1.0]
    assert {k.name for k in box} == {n for _, n in rows}
    new = ks.delete_keys(clip, box)
    assert new.track(rows[0][1]).n_keys == 2
    assert new.track(clip.tracks[2].joint).n_keys == 4
    # deleting every key of a track removes it
    gone = ks.delete_keys(clip, ks.all_keys(clip, [rows[0]]))
    assert gone.track(rows[0][1]) is None


def test_copy_paste_keys_at_time(skel):
    clip = _clip(skel)
    sel = [k for k in ks.all_keys(clip) if k.time == 0.5]
    board = ks.copy_keys(clip, sel)
    assert board.n_keys == len(clip.tracks)
    new, refs = ks.paste_keys(clip, board, 1.2)
    q_src = clip.sample([0.5])[0]
    np.testing.assert_allclose(new.sample([1.2])[0], q_src, atol=1e-12)
    assert [r.time for r in refs] == pytest.approx([1.2] * len(refs))
    # pasting on an existing key replaces it
    new2, _ = ks.paste_keys(clip, board, 1.5)
    assert new2.track(clip.tracks[0].joint).n_keys == 4
    np.testing.assert_allclose(new2.sample([1.5])[0], q_src, atol=1e-12)


def test_copy_pose_between_keys(skel):
    clip = _clip(skel)
    board = ks.copy_pose(clip, 0.7)
    new, _ = ks.paste_keys(clip, board, 1.8)
    np.testing.assert_allclose(new.sample([1.8])[0], clip.sample([0.7], ik=False)[0], atol=1e-12)


def test_hermite_derivative_against_finite_differences():
    rng = np.random.default_rng(3)
    p0, p1, m0, m1 = rng.normal(size=4)
    h = 0.7
    u = np.linspace(0.0, 1.0, 41)
    eps = 1e-6
    dnum = (hermite(p0, p1, m0, m1, h, u + eps) - hermite(p0, p1, m0, m1, h, u - eps)) / (2 * eps * h)
    # analytic end slopes are m0, m1 (per unit time)
    assert dnum[0] == pytest.approx(m0, abs=1e-6)
    assert dnum[-1] == pytest.approx(m1, abs=1e-6)
    # a cubic polynomial with its exact end slopes is reproduced
    c = rng.normal(size=4)
    f = np.polynomial.Polynomial(c)
    df = f.deriv()
    t0 = 0.3
    y = hermite(f(t0), f(t0 + h), df(t0), df(t0 + h), h, u)
    np.testing.assert_allclose(y, f(t0 + u * h), atol=1e-12)


@pytest.mark.parametrize("kind", ["hinge", "ball"])
def test_edited_tangent_is_the_sampled_slope_and_c1(skel, kind):
    clip = _clip(skel, times=(0.0, 0.4, 1.0, 1.3))
    joint = _hinge(skel) if kind == "hinge" else _ball(skel)
    col = 0
    cols = list(skel.joint_dofs(joint))
    k = cols[col]
    lo, hi = skel.lower[k], skel.upper[k]
    # keep the DoF off its limits so the sampled (clipped) curve is the interpolant
    vals = clip.track(joint).values.copy()
    mid = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else 0.0
    vals[:, col] = mid + np.array([0.0, 0.1, -0.05, 0.02])
    tr = JointTrack(joint, clip.track(joint).times, vals, "smooth")
    clip = clip.replace(tracks=tuple(tr if x.joint == joint else x for x in clip.tracks))
    new = ks.set_tangent(clip, joint, 0.4, col, 0.9)
    assert new.track(joint).tangents[1, col] == 0.9
    eps = 1e-6
    q = new.sample([0.4 - eps, 0.4, 0.4 + eps], ik=False)[:, k]
    left = (q[1] - q[0]) / eps
    right = (q[2] - q[1]) / eps
    assert left == pytest.approx(0.9, abs=1e-4)
    assert right == pytest.approx(0.9, abs=1e-4)  # C1 at the key
    assert q[1] == pytest.approx(vals[1, col], abs=1e-12)  # the key is still hit
    np.testing.assert_allclose(ks.key_slopes(new, joint)[1, col], 0.9)
    # the other keys keep their automatic slopes; auto_tangents restores the curve
    back = ks.auto_tangents(new, joint)
    t = np.linspace(0, 1.3, 27)
    np.testing.assert_allclose(back.sample(t, ik=False), clip.sample(t, ik=False), atol=1e-12)


def test_tangents_survive_key_edits_and_serialisation(skel):
    clip = _clip(skel)
    j = _hinge(skel)
    clip = ks.set_tangent(clip, j, 1.0, 0, -0.7)
    moved, _ = ks.move_keys(clip, [ks.KeyRef("joint", j, 1.0)], 2 / 30)
    tr = moved.track(j)
    assert tr.tangents[2, 0] == -0.7 and np.isclose(tr.times[2], 1.0 + 2 / 30)
    more = anim.add_key(moved, 0.25, moved.sample([0.25], ik=False)[0])
    assert more.track(j).tangents[3, 0] == -0.7 and np.isnan(more.track(j).tangents[1, 0])
    less = anim.delete_key(more, 0.25)
    assert less.track(j).tangents[2, 0] == -0.7
    d = anim.clip_to_dict(less)
    back = anim.clip_from_dict(d, skel)
    np.testing.assert_array_equal(np.nan_to_num(back.track(j).tangents, nan=9),
                                  np.nan_to_num(less.track(j).tangents, nan=9))
    bad = dict(d, tracks=[dict(td, tangents=[[7, 0, 1.0]]) if td["joint"] == j else td
                          for td in d["tracks"]])
    with pytest.raises(ClipError, match="tangents"):
        anim.clip_from_dict(bad, skel)
