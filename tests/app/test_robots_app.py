"""Robots read from URDF / MJCF open in the app like any rig: drag a hand handle with live FIK,
pin the feet, key the pose, export the clip (no GL needed: picking is ray casting)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from app_helpers import make_state, site_xy
from test_interaction import drag, settle

import animik
from animik.app import keys as K
from animik.app.controller import ViewportController
from animik.app.state import PINNED, TARGET
from animik.app.timeline.keying import key_pose
from animik.app.timeline.transfer import export_current

ROBOTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robots"
PATHS = [ROBOTS / "unitree_g1" / "g1.xml", ROBOTS / "unitree_h1" / "urdf" / "h1.urdf"]


@pytest.mark.skipif(not ROBOTS.is_dir(), reason="../shared/data/robots absent")
@pytest.mark.parametrize("path", PATHS, ids=["g1-mjcf", "h1-urdf"])
def test_robot_poses_in_the_app(path, tmp_path):
    st = make_state(path)
    skel = st.skeleton
    assert skel.n_dof == animik.load_rig(path).n_dof
    c = ViewportController(st)
    feet = [skel.site_index(s) for s in ("l_foot", "r_foot")]
    for s in ("l_foot", "r_foot"):  # click to select, P to pin
        x, y = site_xy(st, s)
        c.on_mouse_press(x, y, K.LEFT, 0)
        c.on_mouse_release(x, y, K.LEFT, 0)
        c.on_key_press(K.P, 0)
        assert st.doc.effector(s).mode == PINNED
    at_feet = st.fk.site_positions[feet].copy()
    i = skel.site_index("l_hand")
    start = st.fk.site_positions[i].copy()
    x, y = site_xy(st, "l_hand")
    drag(c, (x, y), (x + 20, y - 40))
    e = st.doc.effector("l_hand")
    assert e.mode == TARGET and np.linalg.norm(e.position - start) > 0.03
    settle(st, 120)
    assert np.linalg.norm(st.fk.site_positions[i] - e.position) < 5e-3  # the hand followed
    assert np.allclose(st.fk.site_positions[feet], at_feet, atol=2e-3)  # the feet stayed
    assert skel.within_limits(st.doc.q)
    assert key_pose(st)
    out = export_current(st, tmp_path / "pose.bvh")
    assert out is not None and out.is_file()
    back = animik.read_bvh(out)
    assert back.n_frames >= 1 and back.skeleton.n_joints == skel.n_joints
