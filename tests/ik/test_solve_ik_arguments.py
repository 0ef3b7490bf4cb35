"""Issue 15 item 11: solve_ik's arguments of the wrong kind give an AnimikError naming the
argument (never TypeError / AttributeError / FileNotFoundError from deep inside)."""

from __future__ import annotations

import pytest

from animik.errors import AnimikError
from animik.ik import solve_ik
from animik.rigs import load_rig

TARGET = {"r_hand": [0.2, -0.4, 1.0]}


@pytest.mark.parametrize("kwargs, name", [
    ({"weights": {"r_hand": "abc"}}, "weight"),
    ({"weights": {"r_hand": None}}, "weight"),
    ({"weights": {"r_hand": [1.0, 2.0]}}, "weight"),
    ({"weights": [1.0]}, "weights"),
    ({"solver": ["fik"]}, "solver"),
    ({"tuning": "x"}, "tuning"),
    ({"pinned": "l_foot"}, "pinned"),
    ({"pinned": [3]}, "pinned"),
    ({"pinned": 5}, "pinned"),
])
def test_bad_argument_kinds_are_animik_errors(kwargs, name):
    skel = load_rig("fig2")
    with pytest.raises(AnimikError, match=name):
        solve_ik(skel, skel.rest_q, TARGET, **kwargs)


def test_pinned_none_means_no_pins():
    skel = load_rig("fig2")
    res = solve_ik(skel, skel.rest_q, TARGET, solver="dls", pinned=None, max_iterations=5)
    assert res.q.shape == (skel.n_dof,)
