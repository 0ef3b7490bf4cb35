"""Give a BVH skeleton the mass data and contact geometry of the rig whose motion it holds.

BVH stores no masses and no soles: a body95 clip written by ``animik retarget`` or
``animik filter`` reads back with masses estimated from its bones and soles derived from its
feet, so checking it would check a different body. :mod:`animik.io.bvh_compat` writes every
joint with the same world transform as the rig's joint of the same name, so the rig's segment
masses, COMs and inertias (joint frame) and its ``soles`` / ``contact_points`` (joint frame)
carry over by joint name: each BVH joint frame is the rig's joint frame with BVH's axes
(``R_file = R_rig · WORLD_FROM_BVH``, constant; checked in the tests), so COMs, inertias and
contact points are rotated into the file's frames.
"""

from __future__ import annotations

import numpy as np

from ..cache import cache_of
from ..io.bvh import WORLD_FROM_BVH
from ..motion import Motion
from ..rigs import recognise_rig
from ..skeleton import Skeleton
from .contacts import CONTACT_MODEL_KEY, ContactModel, contact_model
from .zmp import FeasibilityError

_CONTACT_KEYS = ("soles", "contact_points", "wheel_contacts")


def with_model_of(skel: Skeleton, rig: Skeleton) -> Skeleton:
    """``skel`` with ``rig``'s masses, COMs, inertias and contact geometry, matched by name.

    Args:
        skel: the skeleton read from a file (e.g. a BVH written from a ``rig`` motion).
        rig: the rig whose model the file's motion belongs to.

    Returns:
        A copy of ``skel`` (``meta["mass_source"]`` says where the masses came from).

    Raises:
        FeasibilityError: a joint of ``rig`` that ``skel`` does not have (not that rig's motion).
    """
    missing = [n for n in rig.joint_names if n not in skel.joint_names]
    if missing:
        raise FeasibilityError(
            f"the clip's skeleton {skel.name!r} is not rig {rig.name!r}'s: it lacks the rig's "
            f"joints {missing[:6]}{' ...' if len(missing) > 6 else ''} (use --rig to retarget "
            f"onto the rig instead)")
    C = np.asarray(WORLD_FROM_BVH, dtype=float)  # rig_from_file rotation of every joint frame
    masses = np.zeros(skel.n_joints)
    coms = np.zeros((skel.n_joints, 3))
    inertias = np.zeros((skel.n_joints, 3, 3))
    for j, name in enumerate(rig.joint_names):
        k = skel.joint_index(name)
        masses[k] = rig.masses[j]
        coms[k] = C.T @ rig.coms[j]
        inertias[k] = C.T @ rig.inertias[j] @ C
    meta = {k: v for k, v in skel.meta.items() if k not in _CONTACT_KEYS}
    meta.update({k: rig.meta[k] for k in _CONTACT_KEYS if k in rig.meta})
    meta["mass_source"] = f"rig {rig.name}"
    out = skel.replace(masses=masses, coms=coms, inertias=inertias, meta=meta)
    cm = contact_model(rig)
    joints = np.array([out.joint_index(rig.joint_names[j]) for j in cm.point_joint], dtype=np.int64)
    # The rig's contact points in the file's joint frames, kept where contact_model looks.
    cache_of(out)[CONTACT_MODEL_KEY] = ContactModel(
        cm.names, cm.point_area, joints, cm.point_local @ C, f"{cm.source} (rig {rig.name})")
    return out


def on_model(motion: Motion, rig: Skeleton) -> Motion:
    """``motion`` (read from BVH) as the body ``--model RIG`` checks and filters: ``rig``
    itself when the file holds the rig's motion exactly (:func:`animik.rigs.recognise_rig`: the
    hierarchy animik writes for it, padded channels still 0), else the file's own skeleton with
    the rig's masses and soles (:func:`with_model_of`: the file moves channels the rig does not
    have, e.g. a knee's twist). On the rig, the filter cannot move joints the rig lacks."""
    on_rig = recognise_rig(motion)
    if on_rig is not None and on_rig.skeleton.name == rig.name:
        return on_rig
    return Motion(with_model_of(motion.skeleton, rig), motion.q, motion.fps, dict(motion.meta))
