"""The plant step's hand-over onto supports off the floor (animik.dynamics.hand_over;
docs/dynamics.md 5j, "Raw louise's last frame")."""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, needs_shared

from animik.dynamics.clip import check_clip
from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.hand_over import EASE_FACTOR, ease_frames, hold_into_supports
from animik.dynamics.offfloor import resolve_supports
from animik.dynamics.plant import plant_contacts
from animik.dynamics.support_smooth import smooth_supported
from animik.io.bvh import read_bvh


def test_hold_goes_on_into_the_supports_and_back():
    T = 40
    planted = np.zeros((T, 3), dtype=bool)
    planted[5:12, 0] = True  # ends 2 frames before the supports (14-29)
    planted[2:6, 1] = True  # ends 8 frames before: too far, left as it is
    planted[31:35, 0] = True  # starts 1 frame after the supports end
    planted[8:14, 2] = True
    on = np.zeros(T, dtype=bool)
    on[14:30] = True
    resting = np.zeros((T, 3), dtype=bool)
    resting[14:30, 2] = True  # area 2 stands on a rest there: the rest carries it
    out = hold_into_supports(planted, on, resting, 5)
    assert out[5:19, 0].all() and not out[19:25, 0].any()  # held on 5 frames into them
    assert out[25:35, 0].all()  # and from 5 frames before their end
    assert (out[:, 1] == planted[:, 1]).all()
    assert (out[:, 2] == planted[:, 2]).all()
    assert (hold_into_supports(planted, np.zeros(T, dtype=bool), resting, 5) == planted).all()


def test_a_hold_ending_on_supports_eases_out_slower():
    on = np.zeros(50, dtype=bool)
    on[20:40] = True
    assert ease_frames(np.zeros(50, dtype=bool), 5, 25, 10) == (10, 10)  # floor only
    assert ease_frames(on, 5, 25, 10) == (10, 10 * EASE_FACTOR)  # ends on the supports
    assert ease_frames(on, 35, 45, 10) == (10 * EASE_FACTOR, 10)  # starts on them
    assert ease_frames(on, 5, 15, 10) == (10, 10) and EASE_FACTOR > 1


@needs_shared
def test_raw_louise_right_foot_keeps_its_floor_contact_up_to_the_supports():
    """Raw louise mounts the bike: the world supports (seat, grips, the left foot's raised rest)
    start while her right foot, held on the floor by the plant step, leaves it. Main let the
    hold go at the supports' first frame; its ease-out (the foot catching up 2-3 m/s with the
    input's, already swung up) fell inside the check's window of the last unsupported frame,
    which was then without contact and carried by nothing (main's filter: 746 -> 1, frame
    812, not written)."""
    m = read_bvh(SHARED_BVH / "optitrack_adelaide" / "louise.bvh")
    sup = resolve_supports("auto", m)
    sm = smooth_supported(m, sup).motion
    cm = contact_model_for_clip(sm.skeleton, sm.q)
    pl = plant_contacts(sm, cm, supports=sup)
    chk = check_clip(pl.motion, contacts=cm, supports=sup)
    on = chk.check.support_active.any(axis=1)
    a0 = int(np.flatnonzero(on)[0])
    before = np.arange(a0 - 10, a0)
    assert pl.planted[before].any(axis=1).all()  # the plant step holds a foot up to them
    # ... and every one of those frames has a floor contact in the check (main: not the last)
    assert chk.check.in_contact[before].any(axis=1).all()
    assert not (~chk.feasible[a0 - 30:a0 + 30] & ~chk.check.in_contact[a0 - 30:a0 + 30].any(1)
                & ~on[a0 - 30:a0 + 30]).any()  # nothing carried by nothing at the mount's edge
