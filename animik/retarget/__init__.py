"""Retarget motions onto other skeletons: joint mapping, rest-pose alignment, feedback IK with
the source's joint angles as null-space reference, foot contacts, quality reports, batches.

Quick start::

    from animik.io.bvh import read_bvh
    from animik.retarget import retarget, Retargeter

    walk = read_bvh("walk.bvh")
    motion = retarget(walk, "body95")                 # Motion on body95, same fps
    report = motion.meta["retarget_report"]          # quality report (dict)

    result = Retargeter(walk, "fig2").run()          # motion + RetargetReport + JointMapping
    q, state = Retargeter(walk, "fig2").step(0)      # one frame (interactive use)

Modules: :mod:`.mapping` (pairs through the roles of :mod:`animik.semantics.roles`, mapping
files), :mod:`.align` (rest alignment, scale, desired pose), :mod:`.fit` (rotations → DoFs),
:mod:`.retarget` (the per-frame solver; foot contacts from :mod:`animik.semantics.contacts`),
:mod:`.report`, :mod:`.batch` (files, processes, Dask; BVH output through
:mod:`animik.io.bvh_compat`). See docs/retarget.md.
"""

from __future__ import annotations

from ..semantics.contacts import ContactParams
from ..semantics.roles import CANONICAL_ROLES, JointRoles, classify_joints, parse_name
from .mapping import JointMapping, MappingSpec, build_mapping, read_mapping_file, unmapped_joints
from .report import EffectorStats, FootStats, RetargetReport
from .retarget import (
    RetargetEdits,
    Retargeter,
    RetargetOptions,
    RetargetResult,
    RetargetState,
    retarget,
)

__all__ = [
    "CANONICAL_ROLES", "ContactParams", "EffectorStats", "FootStats", "JointMapping", "JointRoles",
    "MappingSpec", "RetargetEdits", "RetargetOptions", "RetargetReport", "RetargetResult",
    "RetargetState", "Retargeter", "build_mapping", "classify_joints", "parse_name",
    "read_mapping_file", "retarget", "unmapped_joints",
]
