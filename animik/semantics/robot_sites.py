"""Effector sites placed automatically on a robot read from URDF / MJCF.

Robot files rarely name hands, feet or a head; retargeting and the app's handles need them.
:func:`with_effector_sites` adds, where the robot does not already have a site with that role
(a G1's ``left_foot`` counts as ``l_foot``):

* ``pelvis`` at the root body's origin;
* ``l_hand`` / ``r_hand`` at the end of each arm: the arm chain's leaf body (found by the role
  mapping, :func:`~animik.semantics.roles.classify_joints`), at twice its centre of mass's
  offset from the body origin (the far end of a uniform segment);
* ``l_foot`` / ``r_foot`` under the leg chain's leaf body at sole height (the lowest point of its
  meshes at rest when they can be read, else its origin);
* ``head`` on the chest, above the shoulders' midpoint by half the shoulder width, unless the
  robot has a head body (then at its origin).

**Override file** ``<robot file>.sites.toml`` (next to the robot file; also accepted by
``with_effector_sites(..., overrides=...)``): one table per site, each key optional::

    [l_hand]
    joint = "left_wrist_yaw_link"   # body it is fixed to
    offset = [0.12, 0.0, 0.0]       # metres, in that body's frame
    [head]
    joint = ""                      # empty: do not add this site

"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FileFormatError, UnknownNameError, names_hint
from ..kinematics import forward_kinematics
from ..skeleton import Skeleton
from .roles import _name_kind, classify_joints, parse_name

ROBOT_SITES = ("pelvis", "l_hand", "r_hand", "l_foot", "r_foot", "head")


def _existing_role(name: str) -> str:
    p = parse_name(name)
    kind, _ = _name_kind(p)
    if kind in ("hand", "foot") and p.side:
        return f"{p.side}_{kind}"
    if kind == "head" and not p.side:
        return "head"
    if kind == "hips":
        return "pelvis"
    return ""


def _leaf(skel: Skeleton, j: int) -> int:
    """Follow single-child links down from ``j`` to the chain's end."""
    while len(skel.children[j]) == 1:  # stops at a leaf or a branch point (fingers, tools)
        j = int(skel.children[j][0])
    return j


def _mesh_min_z(skel: Skeleton, j: int, R: np.ndarray, p: np.ndarray) -> float | None:
    """Lowest world z of joint ``j``'s meshes at rest (None when none can be read)."""
    geoms = [g for g in skel.meta.get("robot_geoms", ()) if g[0] == skel.joint_names[j] and g[2]]
    if not geoms:
        return None
    try:
        import trimesh
    except ImportError:  # pragma: no cover - trimesh is a dependency
        return None
    low = np.inf
    for _, _, file, gpos, grot, gscale, _ in geoms:
        try:
            mesh = trimesh.load(file, force="mesh", process=False)
        except Exception:  # noqa: BLE001 - a bad mesh only loses this refinement
            continue
        v = np.asarray(mesh.vertices, float) * np.asarray(gscale)
        w = (v @ np.asarray(grot).reshape(3, 3).T + np.asarray(gpos)) @ R.T + p
        if len(w):
            low = min(low, float(w[:, 2].min()))
    return None if not np.isfinite(low) else low


def read_site_overrides(path: str | Path) -> dict[str, dict[str, Any]]:
    """The tables of a ``.sites.toml`` override file (see the module docstring).

    Raises:
        FileFormatError: not TOML, or a table that is not ``{joint, offset}``.
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise FileFormatError(f"{path}: not a valid site override file: {e}") from None
    for k, v in data.items():
        if not isinstance(v, Mapping) or set(v) - {"joint", "offset"}:
            raise FileFormatError(f"{path}: [{k}] must be a table with 'joint' and/or 'offset'")
    return {k: dict(v) for k, v in data.items()}


def with_effector_sites(skel: Skeleton, overrides: Mapping[str, Mapping[str, Any]] | None = None
                        ) -> Skeleton:
    """``skel`` with the robot effector sites it lacks (see the module docstring).

    Args:
        skel: a skeleton (any; sites it already has by role are kept).
        overrides: ``{site: {"joint": body, "offset": [x, y, z]}}``; default: the robot
            file's ``.sites.toml`` when there is one.

    Raises:
        UnknownNameError: an override names an unknown body. FileFormatError: a bad override.
    """
    if overrides is None:
        src = str(skel.meta.get("source", ""))
        f = Path(src).with_suffix(".sites.toml") if src else None
        overrides = read_site_overrides(f) if f is not None and f.is_file() else {}
    have = {_existing_role(n) for n in skel.site_names} - {""}
    roles = classify_joints(skel).roles
    fk = forward_kinematics(skel, skel.rest_q)
    P, R = np.asarray(fk.joint_positions), np.asarray(fk.joint_rotations)
    world: dict[str, tuple[int, np.ndarray]] = {}  # site -> (joint, world position)

    world["pelvis"] = (0, P[0])
    for side in ("l", "r"):
        hand = roles.get(f"{side}_hand") or roles.get(f"{side}_forearm")
        if hand is not None:
            j = _leaf(skel, skel.joint_index(hand))
            com_w = R[j] @ skel.coms[j]
            if np.linalg.norm(com_w) > 0.01:  # the segment extends towards its COM
                world[f"{side}_hand"] = (j, P[j] + 2.0 * com_w)
            else:
                world[f"{side}_hand"] = (j, P[j])
        foot = roles.get(f"{side}_foot") or roles.get(f"{side}_shin")
        if foot is not None:
            j = _leaf(skel, skel.joint_index(foot))
            low = _mesh_min_z(skel, j, R[j], P[j])
            com_w = P[j] + R[j] @ skel.coms[j]
            x = np.array([com_w[0], com_w[1], P[j][2] if low is None else low])
            world[f"{side}_foot"] = (j, x)
    head = roles.get("head")
    if head is not None:
        world["head"] = (skel.joint_index(head), P[skel.joint_index(head)])
    else:
        chest = roles.get("chest") or roles.get("spine")
        arms = [roles.get(f"{s}_clavicle") or roles.get(f"{s}_upper_arm") for s in ("l", "r")]
        if chest is not None and all(a is not None for a in arms):
            a, b = (P[skel.joint_index(x)] for x in arms)
            mid = 0.5 * (a + b) + np.array([0.0, 0.0, 0.5 * np.linalg.norm(a - b)])
            world["head"] = (skel.joint_index(chest), mid)

    names, joints, offsets, rots = list(skel.site_names), list(skel.site_joint), \
        list(skel.site_offsets), list(skel.site_rotations)
    for site in ROBOT_SITES:
        ov = overrides.get(site)
        if ov is not None:
            jn = ov.get("joint")
            if jn == "":
                continue
            if jn is not None and jn not in skel.joint_names:
                raise UnknownNameError(f"site override [{site}]: unknown body {jn!r}; bodies: "
                                       f"{names_hint(skel.joint_names)}")
            j = skel.joint_index(jn) if jn is not None else world.get(site, (0, None))[0]
            off = ov.get("offset")
            if off is None:
                off = R[j].T @ (world[site][1] - P[j]) if site in world else np.zeros(3)
            off = np.asarray(off, dtype=float)
            if off.shape != (3,) or not np.all(np.isfinite(off)):
                raise FileFormatError(f"site override [{site}]: offset must be 3 numbers")
        elif site in have or site not in world:
            continue
        else:
            j, x = world[site]
            off = R[j].T @ (x - P[j])
        name = site
        while name in names:
            name = name + "_site"
        names.append(name)
        joints.append(j)
        offsets.append(off)
        rots.append(np.eye(3))
    if len(names) == skel.n_sites:
        return skel
    return skel.replace(site_names=tuple(names), site_joint=np.array(joints, dtype=np.int64),
                        site_offsets=np.array(offsets), site_rotations=np.array(rots))
