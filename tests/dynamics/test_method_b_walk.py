"""Seed D method B away from the origin and on walks (docs/dynamics.md 5c, "The balance law"):
the simulation must not depend on where the body stands, and the step-aware law's pieces
(the input's contact schedule, the swing feet's rows) are checked against what they are built
from."""

from __future__ import annotations

import numpy as np

import animik
from animik.dynamics import check_clip
from animik.dynamics.method_b import _schedule, method_b_clip
from animik.motion import Motion


def _standing(skel, T=60, shift=(0.0, 0.0)):
    q = np.tile(skel.rest_q, (T, 1))
    root = list(skel.joint_dofs(int(np.flatnonzero(skel.parents < 0)[0])))
    q[:, root[0]] += shift[0]
    q[:, root[1]] += shift[1]
    return Motion(skel, q, 30.0), root


def test_method_b_does_not_depend_on_where_the_body_stands():
    """Body95 standing 5 m from the world origin is simulated as at the origin, shifted: the
    start lowers the body by a translation DoF (main picked a rotation, whose linear part
    p × w grows with the distance, and dropped the body in free fall) and the balance law
    takes moments about the wanted centre of pressure (about the origin, the yaw row mixed in
    5 m × the force error and twisted the soles: main diverged at frame 46)."""
    skel = animik.load_rig("body95")
    here, root = _standing(skel)
    there, _ = _standing(skel, shift=(3.0, 4.0))
    a = method_b_clip(here).motion.q
    b = method_b_clip(there).motion.q.copy()
    b[:, root[0]] -= 3.0
    b[:, root[1]] -= 4.0
    # rad or m; measured 9e-6 (rounding of positions 5 m out, amplified by the stiff springs)
    assert np.abs(a - b).max() < 1e-4
    assert check_clip(Motion(skel, b, 30.0)).feasible.all()


def test_schedule_is_the_next_contact_frame():
    flags = np.array([[1, 0], [0, 0], [0, 1], [1, 1], [0, 0]], dtype=bool)
    assert _schedule(flags).tolist() == [[0, 2], [3, 2], [3, 2], [3, 3], [-1, -1]]
