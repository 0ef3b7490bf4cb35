"""The physics mode's timeline marks check a clip held off the floor with the supports
``animik feasibility --supports auto`` infers, and the overlay marks the active supports."""

from __future__ import annotations

import numpy as np
from app_helpers import app  # noqa: F401 (fixture)

from animik.anim import clip_from_poses
from animik.app.edits import set_doc
from animik.app.geometry import build_view
from animik.app.modes import physics as pm
from animik.app.physics import SUPPORT, physics_of
from animik.app.timeline import set_time
from animik.dynamics.contacts import contact_model_for_clip

DT = 1 / 60


def _add_seated_clip(st, T: int, fps: float):
    """body95 standing, then raised 0.3 m from 1 s to 1.3 s and held there (a body on a
    seat), added to the document as its current clip."""
    skel = st.doc.skeleton
    q = np.tile(skel.rest_q, (T, 1))
    z = contact_model_for_clip(skel, q[:1]).points(skel, q[:1])[..., 2].min()
    r = np.clip((np.arange(T) / fps - 1.0) / 0.3, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] += 0.3 * (3 * r ** 2 - 2 * r ** 3) - z  # raised, held
    clip = clip_from_poses(skel, np.arange(T) / fps, q, name="seated", fps=fps,
                           interpolation="linear")
    set_doc(st, st.doc.replace(clips=(*st.doc.clips, clip), clip=len(st.doc.clips)))
    return clip


def test_marks_and_overlay_of_a_seated_clip(app):  # noqa: F811
    st = app.state
    T, fps = 150, 30.0
    _add_seated_clip(st, T, fps)
    physics_of(st).show = True
    marks = pm.infeasible_frames(st)
    # the held stretch (from frame 50) is carried by the inferred seat, holds and foot rests;
    # only the rise itself (a levitation) is marked
    assert marks is not None and not marks[50:].any() and marks[33:50].all()
    sup = physics_of(st).supports
    assert [s.kind for s in sup.supports] == ["seat", "hold", "hold", "foot_rest", "foot_rest"]

    def markers(t):
        set_time(st, t)
        app.frame(DT)
        sph = build_view(st).overlay_spheres
        return int(np.all(np.isclose(sph[:, -4:], SUPPORT), axis=1).sum()) if len(sph) else 0

    n_points = sum(len(s.points) for s in sup.supports)
    assert markers(120 / fps) == n_points  # every support's points at a held frame
    assert markers(10 / fps) == 0  # standing: no support active
    # the displayed pose on the seat: the live verdict is the contact wrench cone's (not a
    # floor "flight"), and the floor's ZMP marker, force arrow and cone are not drawn
    from animik.app.physics import INSIDE, OUTSIDE

    set_time(st, 120 / fps)
    for _ in range(4):  # three equal poses: no velocity, no acceleration
        app.frame(DT)
    pv = physics_of(st)
    assert pv.on_supports == ("seat", "l_hand_hold", "r_hand_hold", "l_foot_rest",
                              "r_foot_rest") and pv.feasible
    sph = build_view(st).overlay_spheres
    for col in (INSIDE, OUTSIDE):
        assert not np.all(np.isclose(sph[:, -4:], col), axis=1).any()
    set_time(st, 10 / fps)
    for _ in range(4):
        app.frame(DT)
    assert pv.on_supports == () and pv.feasible  # standing on the floor


def test_make_feasible_keeps_the_supports_it_corrected_with(app):  # noqa: F811
    """Make feasible on a clip held off the floor: it corrects with the supports `animik filter
    --supports auto` infers (not floor-only), adds the corrected clip next to the user's (which
    is kept) carrying those supports, and the new clip's timeline marks are checked with them:
    the marks agree with the count Make feasible reports. (Main corrected floor-only and the
    marks re-inferred the supports from the new poses.)"""
    import json

    from animik.dynamics import check_clip

    st = app.state
    skel = st.doc.skeleton
    T, fps = 150, 30.0
    clip = _add_seated_clip(st, T, fps)
    physics_of(st).show = True
    inferred = pm.clip_supports(clip, clip.to_motion(), physics_of(st).mu)
    assert inferred is not None and len(inferred) == 5
    _, new, (ok, before, frames), _ = pm._feasible_work(st)()
    assert frames == T and ok >= before
    rec = json.loads(new.meta[pm.SUPPORTS_META])
    assert rec == json.loads(json.dumps(inferred.to_dict(skel)))
    n = len(st.doc.clips)
    assert pm.make_feasible(st)
    assert len(st.doc.clips) == n + 1 and st.doc.clips[st.doc.clip - 1] is clip  # kept
    added = st.doc.current_clip
    assert added.meta[pm.SUPPORTS_META] == new.meta[pm.SUPPORTS_META]
    marks = pm.infeasible_frames(st)
    assert int((~marks).sum()) == ok  # the marks say what Make feasible said
    sup = physics_of(st).supports
    assert sup.names == inferred.names  # the overlay's supports: the recorded ones
    # the same check `animik feasibility --supports FILE` runs with the recorded supports
    m = added.to_motion()
    np.testing.assert_array_equal(marks, ~check_clip(m, mu=physics_of(st).mu,
                                                     supports=pm.clip_supports(added, m, 0.7)
                                                     ).feasible)
    # the held stretch is carried by the seat once the body rests on it (the slowed rise
    # reaches into its first frames, 48-53: test_make_feasible_worker), and the new clip fixes
    # frames of the rise (146 of 150 pass, the input 133)
    assert not marks[55:].any() and ok > before
    # saved in a scene file and read back, the clip keeps the supports it was corrected with
    import tomllib

    from animik.anim import clip_from_dict, clips_to_toml

    back = clip_from_dict(tomllib.loads(clips_to_toml([added]))["clips"][0], skel)
    assert back.meta[pm.SUPPORTS_META] == added.meta[pm.SUPPORTS_META]
    assert pm.clip_supports(back, m, 0.7).names == inferred.names
