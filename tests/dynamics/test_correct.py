"""Method A over a whole clip (animik.dynamics.correct) and ``animik filter``: the written
clip passes ``animik feasibility`` (accelerations re-derived from the file) at every frame;
nothing is written when it cannot be made feasible; a rig's model carries over to its BVH."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_BVH, needs_shared

import animik
from animik.cli import main
from animik.dynamics import check_clip, com
from animik.dynamics.clip import clip_states
from animik.dynamics.correct import correct_clip, savgol_operator
from animik.dynamics.model import with_model_of
from animik.dynamics.zmp import FeasibilityError
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion

SFU = SHARED_BVH / "sfu" / "0005_Walking001.bvh"


def test_savgol_operator_is_the_checks_derivative():
    skel = animik.load_rig("biped12")
    rng = np.random.default_rng(0)
    q = skel.rest_q + 0.1 * np.cumsum(rng.normal(size=(50, skel.n_dof)), axis=0) / 10
    st = clip_states(skel, q, 60.0)
    for d, ref in enumerate(st):
        D = savgol_operator(50, 60.0, 0.1, d)
        assert np.abs(D @ q - ref).max() < 1e-9 * max(1.0, np.abs(ref).max())


def _random_states_and_slide_modes(skel, seed: int, N: int):
    """``N`` random states of ``skel`` near its rest pose, the filter's wrench terms there and
    the root's slide modes: ``(q, qd, qdd, filter, W, S, slide DoFs, modes E)``."""
    from animik.dynamics.correct import _modes_batch
    from animik.dynamics.filter import DynamicsFilter, terms_batch

    rng = np.random.default_rng(seed)
    n = skel.n_dof
    q = skel.rest_q + 0.2 * rng.normal(size=(N, n))
    qd, qdd = rng.normal(size=(N, n)), rng.normal(size=(N, n))
    filt = DynamicsFilter(skel)
    W, Aw, S = terms_batch(filt, q, qd, qdd, full=True)
    root = int(np.flatnonzero(skel.parents < 0)[0])
    rd = np.array(list(skel.joint_dofs(root)))
    slides = rd[skel.dof_type[rd] == 1]
    E = _modes_batch(Aw, S, slides, np.zeros(0, dtype=np.int64), skel.total_mass)
    return q, qd, qdd, filt, W, S, slides, E


def test_root_slide_velocity_changes_no_wrench():
    """Galilean invariance, which lets the filter skip the d W / d qd columns of the root's
    slides: a uniform world velocity added to every body (the root's slides, which act before
    its rotations) leaves the root wrench of every state unchanged."""
    from animik.dynamics.filter import terms_batch

    skel = animik.load_rig("body95")
    q, qd, qdd, filt, W, S, slides, E = _random_states_and_slide_modes(skel, seed=2, N=6)
    for j in range(3):
        v = 1.5 * E[:, :, j]  # 1.5 m/s along world axis j
        assert np.abs(np.linalg.norm(np.einsum("tnk,tn->tk", S[:, :, 3:], v), axis=1)
                      - 1.5).max() < 1e-9
        W2 = terms_batch(filt, q, qd + v, qdd)[0]
        assert np.abs(W2 - W).max() < 1e-9 * np.abs(W).max()


@pytest.mark.parametrize("rig", ["body95", pytest.param("sfu", marks=needs_shared)])
def test_root_slide_position_moves_the_moment_by_delta_cross_f(rig):
    """Translation of the whole body by ``delta`` (a root slide, which acts before its
    rotations) leaves the force and adds ``delta x F`` to the moment about the origin: the
    filter's exact d W / d q of the vertical slide mode, against central differences of the
    RNEA wrench (checked against MuJoCo and pinocchio), which are exact up to rounding for a
    dependence that is linear in ``delta``."""
    from animik.dynamics.inverse import rnea

    if rig == "sfu":  # a raw BVH skeleton (Z-up after reading, masses from its bones)
        from animik.io.bvh import read_bvh
        skel = read_bvh(str(SFU)).skeleton
    else:
        skel = animik.load_rig(rig)
    N = 5
    q, qd, qdd, _, W, S, slides, E = _random_states_and_slide_modes(skel, seed=3, N=N)
    h = 1e-2
    for j in range(3):
        delta = np.einsum("fsa,fs->fa", S[:, slides, 3:], E[:, slides, j])
        exact = np.concatenate([np.cross(delta, W[:, 3:]), np.zeros((N, 3))], axis=1)
        fd = (rnea(skel, q + h * E[:, :, j], qd, qdd).wrench
              - rnea(skel, q - h * E[:, :, j], qd, qdd).wrench) / (2 * h)
        assert np.abs(exact - fd).max() < 1e-9 * np.abs(W).max()


def test_lean_modes_move_the_com_by_one_metre_with_least_norm():
    """The two lean modes (closed-form 2 x 2 inverse): the trunk's DoFs move the centre of
    mass by exactly (1, 0) and (0, 1) m (d com / dq = A_w's force rows / mass), and they are the
    least-norm such motions (the pseudo-inverse's columns)."""
    from animik.dynamics.contacts import contact_model_for_clip
    from animik.dynamics.correct import _modes_batch
    from animik.dynamics.filter import DynamicsFilter, terms_batch
    from animik.dynamics.smoothness import root_slides, trunk_dofs

    skel = animik.load_rig("body95")
    rng = np.random.default_rng(5)
    q = skel.rest_q + 0.2 * rng.normal(size=(8, skel.n_dof))
    W, Aw, S = terms_batch(DynamicsFilter(skel), q, 0 * q, 0 * q, full=True)
    up = trunk_dofs(skel, contact_model_for_clip(skel, q))
    E = _modes_batch(Aw, S, root_slides(skel), up, skel.total_mass)
    Jc = Aw[:, 3:5][:, :, up] / skel.total_mass
    lean = E[:, up, 3:]
    assert np.abs(Jc @ lean - np.eye(2)).max() < 1e-10
    assert np.abs(lean - np.linalg.pinv(Jc)).max() < 1e-9 * np.abs(lean).max()
    assert not np.delete(E[:, :, 3:], up, axis=1).any()


def test_check_rows_are_the_zmp_margin_and_the_friction_pyramid():
    """The batched rows of seed D's checks against the support polygon of
    :func:`support_polygon` and the ZMP of the wrench: the edge rows hold exactly when the ZMP
    is ``m`` inside every edge; the pyramid and push rows are the friction and pushing tests."""
    from animik.dynamics import _support, support_polygon
    from animik.dynamics.correct import _check_rows
    from animik.dynamics.filter import DynamicsFilter

    skel = animik.load_rig("body95")
    filt = DynamicsFilter(skel)
    cm = filt.contacts
    q = np.tile(skel.rest_q, (3, 1))
    q[1, skel.dof_index("lumbar_flexion")] += 0.3
    active = np.ones((3, cm.n_areas), bool)
    active[2, 1:] = False  # one area only
    mu_in = 0.6
    dirs = np.stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4)], 1)
    h = 0.02
    G, lim, ok = _check_rows(filt, active, cm.points(skel, q), mu_in, dirs, h, 1.0)
    assert ok.all()
    rng = np.random.default_rng(3)
    P = G.shape[1] - 9
    seen = set()
    for f in range(3):
        poly = support_polygon(skel, q[f], active[f], cm)
        cen = poly.mean(axis=0)
        dc = _support.signed_distance(poly, len(poly), cen[0], cen[1], np.empty(2))
        m = min(filt.opt.margin, 0.5 * dc)
        for _ in range(200):
            W = np.concatenate([rng.normal(scale=30, size=3), rng.normal(scale=100, size=2),
                                [rng.uniform(50, 900)]])
            p = np.array([(h * W[3] - W[1]) / W[5], (W[0] + h * W[4]) / W[5]])
            d = _support.signed_distance(poly, len(poly), p[0], p[1], np.empty(2))
            edges_hold = bool((G[f, :P] @ W <= lim[f, :P] + 1e-9).all())
            if abs(d - m) > 1e-6:
                assert edges_hold == (d >= m), (f, d, m)
                seen.add(edges_hold)
            pyramid = bool((dirs @ W[3:5] <= mu_in * W[5] + 1e-9).all())
            assert pyramid == bool((G[f, P:-1] @ W <= lim[f, P:-1] + 1e-9).all())
            assert (G[f, -1] @ W <= lim[f, -1]) == (W[5] >= 0.1)
    assert seen == {True, False}


@pytest.mark.skipif(not SFU.is_file(), reason="shared mocap not present")
def test_contact_rows_see_the_root_shift_as_the_detector_would():
    """The contact-keeping rows on the SFU walk: a constant vertical root shift dz raises every
    height row by dz (the smoothed position of a constant is the constant); a horizontal drift
    at 1 m/s along x and along y adds the unit direction of the foot's motion (u_x, u_y)."""
    from animik.dynamics._penalty_qp import FrameRows
    from animik.dynamics.correct import _contact_rows, _windows
    from animik.dynamics.filter import DynamicsFilter

    raw = animik.read_bvh(SFU)
    clip = Motion(raw.skeleton, raw.q[:120], raw.fps)
    chk = check_clip(clip)
    T, k = clip.n_frames, 5
    D0, D1 = (savgol_operator(T, clip.fps, 0.1, d) for d in (0, 1))
    frame, coef, rhs = _contact_rows(DynamicsFilter(clip.skeleton), chk, clip.fps, k)
    n_height = int(chk.check.in_contact.sum())
    assert len(coef) == len(frame) == len(rhs) > n_height  # the walk has moving-foot rows too
    (win, w0), (_, w1) = _windows(D0), _windows(D1)
    wts = np.stack([w0, w1, np.zeros_like(w0)], axis=1)  # no D2 in these rows
    G = FrameRows(win * k, wts, frame, coef, T * k).csr.toarray()
    x = np.zeros((T, k))
    x[:, 2] = 0.03
    np.testing.assert_allclose(G[:n_height] @ x.ravel(), 0.03, atol=1e-12)
    np.testing.assert_allclose(G[n_height:] @ x.ravel(), 0.0, atol=1e-12)
    ramp = 0.2 + np.arange(T) / clip.fps  # 1 m/s, shifted by 0.2 m
    ux, uy = (G[n_height:] @ np.outer(ramp, np.eye(k)[j]).ravel() for j in (0, 1))
    np.testing.assert_allclose(np.hypot(ux, uy), 1.0, atol=1e-9)  # u is the unit direction


def _sway(skel, T=90, fps=60.0, amp=0.12, hz=1.5):
    """Body95 bowing forward and back fast at the lumbar spine, feet still: the ZMP leaves the
    feet at the turns."""
    q = np.tile(skel.rest_q, (T, 1))
    t = np.arange(T) / fps
    q[:, skel.dof_index("lumbar_flexion")] += amp * np.sin(2 * np.pi * hz * t)
    return Motion(skel, q, fps)


def test_correction_makes_a_sway_feasible_by_the_independent_check():
    skel = animik.load_rig("body95")
    clip = _sway(skel)
    before = check_clip(clip)
    assert not before.feasible.all()
    res = correct_clip(clip)
    after = check_clip(res.motion)  # contacts, floor and derivatives found afresh
    assert after.feasible.all(), after.infeasible_frames
    assert res.history[0][0] == (~before.feasible).sum() and res.history[-1][0] == 0
    # The correction is small next to the motion.
    assert np.abs(res.motion.q - clip.q).max() < 0.4


def test_filters_report_progress_and_stop_when_the_report_raises():
    """``progress(fraction, message)``: called at every pass and round of ``correct_clip`` and
    ``plant_and_correct``, the fraction never decreasing from 0 to 1, the messages saying the
    frames still infeasible; an exception the callback raises (the app's cancel) stops the
    work there."""
    from animik.dynamics.correct import plant_and_correct

    skel = animik.load_rig("body95")
    clip = _sway(skel)
    T = clip.n_frames
    bad0 = int((~check_clip(clip).feasible).sum())
    for run in (lambda p: correct_clip(clip, progress=p),
                lambda p: plant_and_correct(clip, progress=p)[0]):
        seen: list = []
        res = run(lambda f, m=None, seen=seen: seen.append((f, m)))
        fr = np.array([f for f, _ in seen])
        assert len(seen) >= 3 and fr[0] == 0.0 and fr[-1] == 1.0
        assert (np.diff(fr) >= 0).all() and ((fr > 0) & (fr < 1)).any()
        assert any(m and f"{bad0} of {T} frames infeasible" in m for _, m in seen)
        assert seen[-1][1] == f"{int((~res.check.feasible).sum())} of {T} frames infeasible"

        class Stop(Exception):
            pass

        calls: list = []

        def stop(f, m=None, calls=calls):
            calls.append(f)
            if len(calls) == 2:
                raise Stop

        with pytest.raises(Stop):
            run(stop)
        assert len(calls) == 2  # nothing ran on after the raise


def test_correction_with_a_long_flight_solves_near_the_contacts_only():
    """Frames far from every contact (a body held 0.4 m up for 120 frames between two sways)
    have no rows: the QP is solved on the frames near the contacts (correct._qp_step), the
    contact frames come out feasible as with no flight, and the middle of the flight is left
    exactly as it was."""
    skel = animik.load_rig("body95")
    a, b = _sway(skel, T=60), _sway(skel, T=60)
    mid = np.tile(skel.rest_q, (120, 1))
    mid[:, skel.dof_index("pelvis_tz")] += 0.4
    clip = Motion(skel, np.vstack([a.q, mid, b.q]), a.fps)
    res = correct_clip(clip)
    chk = res.check
    contact = chk.check.in_contact.any(axis=1)
    assert not contact[70:170].any()
    assert chk.feasible[contact].all(), np.flatnonzero(~chk.feasible & contact)
    assert (~check_clip(clip).feasible & contact).any()  # there was work to do
    np.testing.assert_array_equal(res.motion.q[100:140], clip.q[100:140])


def test_model_of_a_rig_carries_over_to_its_bvh(tmp_path):
    skel = animik.load_rig("body95")
    clip = _sway(skel, T=40)
    path = tmp_path / "s.bvh"
    write_bvh_compatible(clip, path)
    back = animik.read_bvh(path)
    model = with_model_of(back.skeleton, skel)
    assert np.abs(com(model, back.q) - com(skel, clip.q)).max() < 1e-5
    a, b = check_clip(Motion(model, back.q, back.fps)), check_clip(clip)
    assert (a.feasible == b.feasible).all()
    assert np.nanmax(np.abs(a.check.margin - b.check.margin)) < 1e-4
    other = animik.load_rig("biped12")
    with pytest.raises(FeasibilityError, match="lacks the rig's joints"):
        with_model_of(other, skel)


@pytest.mark.skipif(not SFU.is_file(), reason="shared mocap not present")
def test_filter_command_output_of_shared_clip_passes_feasibility(tmp_path, capsys):
    raw = animik.read_bvh(SFU)
    src, out = tmp_path / "walk.bvh", tmp_path / "walk_f.bvh"
    write_bvh_compatible(Motion(raw.skeleton, raw.q[:120], raw.fps), src)
    assert main(["feasibility", str(src), "--every", "0"]) == 5  # 15 frames infeasible
    assert main(["filter", str(src), "-o", str(out), "--json", str(tmp_path / "r.json")]) == 0
    assert "RMS joint change" in capsys.readouterr().out
    assert main(["feasibility", str(out), "--every", "0"]) == 0  # re-read, re-derived
    # Retargeted onto body95 (63 of the 120 frames infeasible there): the written body95 clip
    # passes with body95's masses and soles.
    out95 = tmp_path / "walk_b95.bvh"
    assert main(["feasibility", str(src), "--every", "0", "--rig", "body95"]) == 5
    assert main(["filter", str(src), "-o", str(out95), "--rig", "body95"]) == 0
    assert main(["feasibility", str(out95), "--every", "0", "--model", "body95"]) == 0


def test_filter_command_writes_nothing_it_cannot_make_feasible(tmp_path, capsys):
    skel = animik.load_rig("body95")
    q = np.tile(skel.rest_q, (40, 1))
    # Rises off the floor and hovers: no contact, yet the wrench is the body weight.
    q[:, skel.dof_index("pelvis_tz")] += np.clip(np.arange(40) - 10, 0, 10) * 0.03
    src, out = tmp_path / "float.bvh", tmp_path / "o.bvh"
    write_bvh_compatible(Motion(skel, q, 30.0), src)
    assert main(["filter", str(src), "-o", str(out), "--rig", "body95"]) == 5
    assert not out.exists() and "nothing written" in capsys.readouterr().err


def test_commands_reject_bad_input(tmp_path):
    skel = animik.load_rig("body95")
    src = tmp_path / "stand.bvh"
    write_bvh_compatible(Motion(skel, np.tile(skel.rest_q, (20, 1)), 30.0), src)
    out = tmp_path / "o.bvh"
    # (method B is implemented now: its bad input is an unknown rig like A's)
    assert main(["filter", str(src), "-o", str(out), "--method", "B", "--rig", "nope"]) == 3
    with pytest.raises(SystemExit) as e:  # a bad option value is bad usage (exit 2)
        main(["filter", str(src), "-o", str(out), "--mu", "nan"])
    assert e.value.code == 2
    assert main(["filter", str(tmp_path / "missing.bvh"), "-o", str(out)]) == 4
    assert not out.exists()
    assert main(["feasibility", str(src), "--model", "body95", "--rig", "body95"]) == 2
    assert main(["feasibility", str(src), "--model", "body95", "--every", "0"]) == 0
    bvh = tmp_path / "biped.bvh"
    biped = animik.load_rig("biped12")
    write_bvh_compatible(Motion(biped, np.tile(biped.rest_q, (20, 1)), 30.0), bvh)
    assert main(["feasibility", str(bvh), "--model", "body95"]) == 3


def test_own_savgol_equals_scipy_savgol_filter():
    """The banded operator (animik/dynamics/_savgol.py) against scipy.signal.savgol_filter
    (mode="interp"), for windows from short to the whole clip and derivatives 0-2."""
    from scipy.signal import savgol_filter

    from animik.dynamics._savgol import savgol_apply

    rng = np.random.default_rng(3)
    for T, n in ((50, 7), (9, 9), (301, 13), (11, 5)):
        q = np.cumsum(rng.normal(size=(T, 4)), axis=0)
        for d in range(3):
            ref = savgol_filter(q, n, 3, deriv=d, delta=1 / 60, axis=0, mode="interp")
            got = savgol_apply(q, n, 3, d, 1 / 60)
            assert np.abs(got - ref).max() < 1e-10 * max(1.0, np.abs(ref).max())


def test_terms_batch_equals_single_frame_terms():
    """The clip filter's batched wrench pass equals DynamicsFilter.terms frame by frame."""
    from animik.dynamics.filter import DynamicsFilter, terms_batch

    skel = animik.load_rig("body95")
    rng = np.random.default_rng(5)
    q = skel.rest_q + 0.2 * rng.normal(size=(4, skel.n_dof))
    qd, qdd = rng.normal(size=(2, 4, skel.n_dof))
    filt = DynamicsFilter(skel)
    W, Aw, S = terms_batch(filt, q, qd, qdd, full=True)
    for t in range(4):
        filt.terms(q[t], qd[t])
        assert np.allclose(Aw[t], filt.Aw, rtol=0, atol=1e-12)
        assert np.allclose(S[t], filt.S, rtol=0, atol=1e-12)
        assert np.allclose(W[t], filt.Aw @ qdd[t] + filt.bias, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("rig", ["body95", "biped12"])
def test_wrench_batch_and_its_velocity_derivative(rig):
    """The clip filter's wrench-only pass equals the root wrench of the RNEA (itself checked
    against MuJoCo and pinocchio) and its forward-mode d W / d qd equals central differences,
    which are exact for W's quadratic dependence on qd (up to rounding)."""
    from animik.dynamics.filter import DynamicsFilter, wrench_batch
    from animik.dynamics.inverse import rnea

    skel = animik.load_rig(rig)
    rng = np.random.default_rng(7)
    N, n = 5, skel.n_dof
    q = skel.rest_q + 0.3 * rng.normal(size=(N, n))
    qd, qdd = rng.normal(size=(N, n)), rng.normal(size=(N, n))
    E = rng.normal(size=(N, n, 3))
    filt = DynamicsFilter(skel)
    W, dW = wrench_batch(filt, q, qd, qdd, E)
    ref = rnea(skel, q, qd, qdd).wrench
    scale = np.abs(ref).max()
    assert np.abs(W - ref).max() < 1e-11 * scale
    assert np.array_equal(wrench_batch(filt, q, qd, qdd)[0], W)  # no directions: same W
    h = 1e-3
    for d in range(3):
        fd = (rnea(skel, q, qd + h * E[:, :, d], qdd).wrench
              - rnea(skel, q, qd - h * E[:, :, d], qdd).wrench) / (2 * h)
        assert np.abs(dW[:, d] - fd).max() < 1e-8 * max(1.0, np.abs(fd).max())


def test_bench_rows_of_the_body95_retargets(tmp_path):
    """``animik bench dynamics``'s per-clip filter rows: a clip on body95's joints is filtered
    as it is (body95's masses by name), one row per clip with the rounds of the filter; a
    folder without clips gives one row that says so."""
    from animik.bench.dynamics import _retarget_rows
    from animik.io.bvh_compat import write_bvh_compatible

    skel = animik.load_rig("body95")
    write_bvh_compatible(_sway(skel), str(tmp_path / "sway.bvh"))
    rows = _retarget_rows(str(tmp_path))
    assert len(rows) == 1
    impl, task, value, unit, note = rows[0]
    assert "sway on body95 (90 frames)" in task and unit == "frames/s" and value > 0
    assert note.split("infeasible per check ")[1].endswith(", 0]")
    # --plant: the command's plant_and_correct, one more row per clip
    rows = _retarget_rows(str(tmp_path), plant=True)
    assert [r[0] for r in rows] == ["animik correct_clip()", "animik plant_and_correct()"]
    impl, task, value, unit, note = rows[1]
    assert "filter --plant inner loop, sway on body95 (90 frames)" in task and value > 0
    assert note.startswith("wall ") and note.endswith("; 0 infeasible")
    empty = tmp_path / "none"
    empty.mkdir()
    assert np.isnan(_retarget_rows(str(empty))[0][2])


@pytest.mark.parametrize("rig", ["body95", "biped12"])
def test_check_clip_com_from_its_kinematics_equals_com(rig):
    """check_clip takes the centre of mass from its one forward-kinematics pass: equal to
    :func:`animik.dynamics.inverse.com` (the momentum kernel's)."""
    from animik.dynamics.clip import _com_from_fk
    from animik.dynamics.inverse import com
    from animik.kinematics import forward_kinematics

    skel = animik.load_rig(rig)
    q = skel.rest_q + 0.3 * np.random.default_rng(3).normal(size=(2, 4, skel.n_dof))
    np.testing.assert_allclose(_com_from_fk(skel, forward_kinematics(skel, q)), com(skel, q),
                               atol=1e-12)


def test_a_qp_without_a_positive_definite_matrix_ends_the_rounds_with_the_best_so_far(
        monkeypatch):
    """A degenerate linearisation (the banded Cholesky of the QP's Newton matrix fails) ends
    the rounds like a QP without a solution: the filter returns the clip as it stood, its
    infeasible frames reported, instead of numpy's LinAlgError reaching the user."""
    from animik.dynamics import _penalty_qp

    skel = animik.load_rig("body95")
    clip = _sway(skel)
    bad0 = int((~check_clip(clip).feasible).sum())
    assert bad0 > 0

    def not_pd(abt):
        raise np.linalg.LinAlgError("banded Cholesky: leading minor 7 is not positive definite")

    monkeypatch.setattr(_penalty_qp, "_banded_factor", not_pd)
    res = correct_clip(clip)
    assert res.history[0][0] == bad0 and len(res.history) == 1
    assert int((~res.check.feasible).sum()) == bad0
    np.testing.assert_array_equal(res.motion.q, clip.q)
