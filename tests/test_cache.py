"""Derived values live beside immutable objects (animik.cache), never inside them."""

from __future__ import annotations

import functools
import gc

import numpy as np

import animik
from animik import cache
from animik.anim import add_key, new_clip
from animik.dynamics import com, inverse_dynamics, zmp
from animik.dynamics.contacts import contact_model
from animik.kinematics import com_position
from animik.skeleton import Skeleton


def test_cached_builds_once_and_frees_with_the_object():
    class Thing:
        pass

    t = Thing()
    calls = []
    assert cache.cached(t, "k", lambda: calls.append(1) or 42) == 42
    assert cache.cached(t, "k", lambda: calls.append(1) or 43) == 42
    assert calls == [1]
    entry = cache.cache_of(t)
    del t
    gc.collect()
    assert all(v is not entry for v in cache._STORE.values())  # freed with its object


def test_no_module_writes_into_a_frozen_skeleton():
    """Kinematics, IK (with a centre-of-mass task), dynamics, contacts and clips all cache what
    they derive from a skeleton beside it; inside it only the Skeleton class's own lazily
    computed properties (functools.cached_property) may appear."""
    skel = animik.load_rig("body95")
    own = {k for k, v in vars(Skeleton).items() if isinstance(v, functools.cached_property)}
    before = dict(skel.__dict__)
    q = skel.rest_q.copy()
    animik.site_jacobians(skel, q)
    com_position(skel, q)
    target = animik.site_positions(skel, q)[skel.site_index("l_hand")] + [0.05, 0.0, 0.05]
    animik.solve_ik(skel, q, {"l_hand": target}, pinned=["l_foot", "r_foot"], com=(0.0, 0.0))
    z = np.zeros_like(q)
    inverse_dynamics(skel, q, z, z)
    com(skel, q)
    contact_model(skel)
    zmp(skel, q, z, z)
    add_key(new_clip(skel, name="c"), 0.0, q).sample([0.0])
    assert set(skel.__dict__) - set(before) <= own
    assert all(skel.__dict__[k] is v for k, v in before.items())
