"""A BVH file that animik wrote for body95 (``animik retarget --to body95``, a filtered or
exported clip) opens in the app as body95 — the rig itself with its masses, soles, limits and
generated body, the motion mapped onto its DoFs — so the Physics panel counts what ``animik
feasibility`` counts, and Make feasible corrects body95. (Main opened it as the file's own
159-DoF skeleton with masses by segment role.)"""

from __future__ import annotations

import json

import numpy as np
from app_helpers import SIZE, make_state

import animik
from animik.app.modes import physics as pm
from animik.app.physics import physics_of
from animik.bodies import generated_body
from animik.cli import main
from animik.io.bvh_compat import write_bvh_compatible
from animik.kinematics import forward_kinematics
from animik.motion import Motion


def _lean_bvh(tmp_path, frames=60, lean=0.34):
    """body95 leaning forward about the ankles (the end past the toes, within the
    ankles' limits: a clip clamps its keys into them), written as BVH."""
    skel = animik.load_rig("body95")
    q = np.tile(skel.rest_q, (frames, 1))
    d = skel.dof_index
    th = np.linspace(0.0, lean, frames)
    q[:, d("pelvis_tx")] = 0.859 * np.sin(th)
    q[:, d("pelvis_tz")] = 0.06825 + 0.859 * np.cos(th) - 0.9275
    q[:, d("pelvis_ry")] = th
    q[:, d("l_ankle_dorsiflexion")] = th
    q[:, d("r_ankle_dorsiflexion")] = th
    path = tmp_path / "lean_body95.bvh"
    write_bvh_compatible(Motion(skel, q, 30.0), path)
    return path, Motion(skel, q, 30.0)


def _run(off, task):
    while off.state.editing.tasks.current is task:
        task.wait(0.05)
        off.frame(1 / 60)


def test_body95_bvh_opens_as_body95_and_counts_as_the_cli(tmp_path):
    from animik.app.gui import Offscreen

    path, want = _lean_bvh(tmp_path)
    rep = tmp_path / "r.json"
    assert main(["feasibility", str(path), "--model", "body95", "--json", str(rep),
                 "--every", "0"]) == 5
    cli = json.loads(rep.read_text())["summary"]["infeasible_frames"]
    assert cli > 0

    off = Offscreen(make_state(str(path)), SIZE)
    try:
        st = off.state
        body95 = animik.load_rig("body95")
        assert st.skeleton is body95 and st.doc.rig == "body95"
        # the default scene's body (the generated body95 mesh), not a body made for a BVH
        assert st.doc.mesh is generated_body(body95)
        assert "as body95" in st.messages[-1].text
        clip = st.doc.current_clip
        assert clip.name == "lean_body95"
        m = clip.to_motion()
        np.testing.assert_allclose(m.q, want.q, atol=1e-9)
        np.testing.assert_allclose(forward_kinematics(body95, m.q).joint_positions,
                                   forward_kinematics(body95, want.q).joint_positions, atol=1e-9)
        physics_of(st).show = True
        for _ in range(3):
            off.frame(1 / 60)
        bad = pm.infeasible_frames(st)
        assert int(bad.sum()) == cli  # the Physics panel's count is the CLI's

        # Make feasible corrects body95 (a new clip, feasible; the user's kept)
        n = len(st.doc.clips)
        task = pm.make_feasible_async(st)
        _run(off, task)
        assert task.error is None
        assert len(st.doc.clips) == n + 1 and st.doc.clips[0] is clip
        new = st.doc.current_clip
        assert new is not clip and new.skeleton is body95
        assert not pm.infeasible_frames(st).any()
    finally:
        off.release()


def test_bvh_skeleton_option_opens_the_files_own_skeleton(tmp_path):
    path, _ = _lean_bvh(tmp_path, frames=10)
    st = make_state(str(path), bvh_skeleton=True)
    assert st.skeleton.n_dof == 159 and st.doc.rig == str(path)
    assert st.bvh_skeleton  # later Opens too, until unticked in the Open browser


def test_a_twisted_knee_opens_as_its_own_skeleton_and_says_why(tmp_path):
    """body95's hierarchy whose padded channels move (animik filter --model body95's output
    twists a knee): not body95's motion, so its own skeleton, and the banner says why."""
    path, _ = _lean_bvh(tmp_path, frames=10)
    m = animik.read_bvh(path)
    q = m.q.copy()
    q[:, m.skeleton.dof_index("r_knee_rx")] = 0.1
    write_bvh_compatible(Motion(m.skeleton, q, m.fps), path)
    st = make_state(str(path))
    assert st.skeleton.n_dof == 159
    assert "body95's hierarchy" in st.messages[-1].text
