"""Body regions of a skeleton's DoFs and the per-region stiffness of natural posing.

An animator dragging a hand expects the arm to do the work, the spine to join only when the
reach needs it and everything else to stay still. IK that takes the minimum-norm joint step
spreads the motion over every DoF that moves the hand (the root, the spine, the clavicle, the
arm) in proportion to their leverage. With per-DoF gains ``V`` (FIK's ``dof_gains``: the step is
the ``V⁻¹``-weighted minimum-norm one) a small ``v`` makes a DoF stiff: it moves only when the
others cannot do the job.

Regions, from topology first (so it works on any rig, humanoid or robot) and roles second:

* ``"root"`` — the DoFs of the root joint (the floating base) and of the ``hips`` role;
* ``"spine"`` — the *trunk*: joints that carry two or more *major* sites (a site not inside
  the subtree of another site's joint: hands, feet, head; fingertips are not major) — the
  pelvis-to-chest chain of a humanoid, the torso of a robot — and the ``spine*`` / ``chest``
  roles;
* ``"neck"`` — the ``neck*`` roles (:func:`animik.semantics.roles.classify_joints`);
* ``"limb"`` — everything else (clavicles, arms, legs, fingers, a robot's arms).

:data:`REGION_GAINS` gives the gains; :func:`limb_dofs` the DoFs of the limb a site ends.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..cache import cached
from ..errors import UnknownNameError, names_hint
from ..skeleton import Skeleton
from .roles import classify_joints

REGIONS = ("root", "spine", "neck", "limb")

#: Per-DoF gain ``v`` of each region for natural posing (limbs 1). The trunk and root are an
#: order of magnitude stiffer than a limb: a hand drag that the arm can reach moves the spine
#: by ~1 % of the arm's motion (``animik bench posing`` measured these values).
REGION_GAINS: Mapping[str, float] = {"root": 0.01, "spine": 0.05, "neck": 0.2, "limb": 1.0}


def _major_sites(skel: Skeleton) -> list[int]:
    """Sites whose joint is not strictly below another site's joint (hands, feet, head)."""
    sj = np.asarray(skel.site_joint)
    joints = set(int(j) for j in sj)
    out = []
    for s, j in enumerate(sj):
        a = int(skel.parents[int(j)])
        below = False
        while a >= 0:
            if a in joints:
                below = True
                break
            a = int(skel.parents[a])
        if not below:
            out.append(s)
    return out


def joint_regions(skel: Skeleton) -> tuple[str, ...]:
    """The region (:data:`REGIONS`) of every joint ``(J,)``; cached per skeleton."""
    return cached(skel, "semantics.joint_regions", lambda: _joint_regions(skel))


def _joint_regions(skel: Skeleton) -> tuple[str, ...]:
    nj = skel.n_joints
    carried = np.zeros(nj, dtype=int)  # major sites at or below each joint
    for s in _major_sites(skel):
        j = int(skel.site_joint[s])
        while j >= 0:
            carried[j] += 1
            j = int(skel.parents[j])
    out = ["spine" if carried[j] >= 2 else "limb" for j in range(nj)]
    try:
        roles = classify_joints(skel)
    except Exception:  # noqa: BLE001 - a rig the role rules cannot read: topology alone
        roles = None
    if roles is not None:
        idx = {nm: i for i, nm in enumerate(skel.joint_names)}
        for role, jn in roles.roles.items():
            j = idx.get(jn)
            if j is None:
                continue
            if role == "hips":
                out[j] = "root"
            elif role.startswith("spine") or role == "chest":
                out[j] = "spine"
            elif role.startswith("neck"):
                out[j] = "neck"
    for j in range(nj):
        if skel.parents[j] < 0:
            out[j] = "root"
    return tuple(out)


def dof_regions(skel: Skeleton) -> tuple[str, ...]:
    """The region of every DoF ``(n_dof,)`` (its joint's region)."""
    jr = joint_regions(skel)
    return tuple(jr[int(j)] for j in skel.dof_joint)


def posing_gains(skel: Skeleton, gains: Mapping[str, float] | None = None) -> np.ndarray:
    """Per-DoF gains ``(n_dof,)`` of natural posing (FIK's ``dof_gains="regions"``).

    Args:
        skel: the skeleton.
        gains: ``{region: gain}`` overriding :data:`REGION_GAINS` (values > 0).

    Returns:
        ``(n_dof,)`` read-only array, 1 on limbs, smaller on the trunk, neck and root.
    """
    table = dict(REGION_GAINS)
    if gains:
        unknown = sorted(set(gains) - set(REGIONS))
        if unknown:
            raise UnknownNameError(f"unknown region {unknown[0]!r}; regions are {list(REGIONS)}")
        table.update({k: float(v) for k, v in gains.items()})
    if gains is None:
        return cached(skel, "semantics.posing_gains", lambda: _gains(skel, table))
    return _gains(skel, table)


def _gains(skel: Skeleton, table: Mapping[str, float]) -> np.ndarray:
    v = np.array([table[r] for r in dof_regions(skel)], dtype=float)
    v.setflags(write=False)
    return v


def limb_dofs(skel: Skeleton, site: str) -> np.ndarray:
    """``(n_dof,)`` bool: the DoFs of the limb that ends at ``site`` — its joint and the
    ancestors up to (not including) the first trunk or root joint (a hand: clavicle to
    wrist; the head: neck and skull; a foot: hip to ankle).

    Raises:
        UnknownNameError: ``site`` is not a site of the skeleton.
    """
    if site not in skel.site_names:
        raise UnknownNameError(f"unknown site {site!r}; sites are {names_hint(skel.site_names)}")
    regions = joint_regions(skel)
    j = int(skel.site_joint[skel.site_index(site)])
    joints = set()
    while j >= 0 and regions[j] in ("limb", "neck"):
        joints.add(j)
        j = int(skel.parents[j])
    return np.isin(np.asarray(skel.dof_joint), list(joints))
