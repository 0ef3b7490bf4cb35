"""The Physics panel and overlay: live ZMP / support polygon of the pose on screen."""

from __future__ import annotations

import numpy as np
from app_helpers import app  # noqa: F401 (fixture)

from animik.app import actions
from animik.app.geometry import build_view
from animik.app.physics import physics_of
from animik.dynamics import com


def test_standing_pose_is_feasible_and_drawn(app):  # noqa: F811
    st = app.state
    assert not physics_of(st).show  # off by default: the overlay draws over the body
    physics_of(st).show = True
    for _ in range(3):
        app.frame()
    pv = st.physics
    assert pv is not None and pv.error == ""
    assert pv.feasible and list(pv.in_contact) == [True, True]
    # static: the ZMP is the COM's ground projection, inside the two soles
    assert np.allclose(pv.zmp[:2], com(st.skeleton, st.doc.q)[:2], atol=1e-9)
    assert pv.margin > 0.02 and len(pv.polygon) == 4
    base = build_view(st)
    pv.show = False
    plain = build_view(st)
    assert len(base.overlay_spheres) == len(plain.overlay_spheres) + 2  # COM and ZMP markers
    assert len(base.overlay_cylinders) > len(plain.overlay_cylinders) + 4 + 8  # polygon + cone


def test_hand_dragged_far_forward_kinematically_is_reported(app):  # noqa: F811
    """Plain IK (feet pinned) lets the COM pass the toes: the panel says so."""
    st = app.state
    physics_of(st).show = True
    hand = st.fk.site_positions[st.skeleton.site_index("r_hand")].copy()
    eff = st.doc.effector("r_hand")
    for i in range(40):
        actions.set_effector(st, eff.replace(mode="target", position=hand + [0.02 * (i + 1), 0, 0]))
        app.frame()
    for _ in range(10):
        app.frame()
    pv = st.physics
    assert not pv.feasible and pv.reasons == "zmp outside" and pv.margin < 0
    assert len(pv.margins) > 40 and min(pv.margins) < 0
