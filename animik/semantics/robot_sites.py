"""Effector sites placed automatically on a robot read from URDF / MJCF.

Robot files rarely name hands, feet or a head; retargeting and the app's handles need them.
:func:`with_effector_sites` adds, where the robot does not already have a site with that role,
before the file's own sites:

* ``pelvis`` at the root body's origin;
* ``l_hand`` / ``r_hand`` at the end of each arm: the arm chain's leaf body (found by the role
  mapping, :func:`~animik.semantics.roles.classify_joints`), at twice its centre of mass's
  offset from the body origin (the far end of a uniform segment);
* ``l_foot`` / ``r_foot`` on the leg chain's leaf body at the ball of the foot: on the sole (the
  lowest point of its meshes at rest), 3/4 of the way from heel to toe (without meshes: ahead of
  the ankle by twice the foot's centre of mass) — always, even when the file has a foot
  site (G1's ``left_foot`` is at the ankle, 3.5 cm above the sole): retargeting keeps these
  sites on the floor. ``head`` too is always added (a URDF's folded ``head_link`` frame may sit
  at the torso's origin);
* ``l_sole_back`` / ``l_sole_front`` (and ``r_``): heel and toe on the sole, from the meshes
  (the points :func:`animik.retarget.floor.lift_above_floor` keeps above the floor), and
  ``l_sole_back_inner`` / ``_outer``, ``l_sole_front_inner`` / ``_outer``: the sole's edges
  there (a foot rolled about its long axis puts an edge lowest);
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
from .roles import _name_kind, classify_joints, parse_name, site_role

ROBOT_SITES = ("pelvis", "l_hand", "r_hand", "l_foot", "r_foot", "head")
#: Heel and toe of each sole (from the foot meshes): the points kept above the floor.
SOLE_SITES = ("l_sole_back", "l_sole_front", "r_sole_back", "r_sole_front")
#: The sole's inner and outer edges at the heel and the toe (a rolled foot's lowest points).
SOLE_EDGE_SITES = tuple(f"{s}_sole_{e}_{w}" for s in ("l", "r") for e in ("back", "front")
                        for w in ("inner", "outer"))


def _existing_role(name: str) -> str:
    """The role a site already covers: :func:`site_role`, and ``pelvis`` for a hips site."""
    return site_role(name) or ("pelvis" if _name_kind(parse_name(name))[0] == "hips" else "")


def _leaf(skel: Skeleton, j: int) -> int:
    """Follow single-child links down from ``j`` to the chain's end."""
    while len(skel.children[j]) == 1:  # stops at a leaf or a branch point (fingers, tools)
        j = int(skel.children[j][0])
    return j


_STL_TRIANGLE = np.dtype([("normal", "<f4", (3,)), ("vertices", "<f4", (3, 3)),
                          ("attribute", "<u2")])


def _binary_stl_vertices(file: str) -> np.ndarray | None:
    """``(3 F, 3)`` vertices of a binary STL file, one per triangle corner in file order (what
    ``trimesh.load(file, process=False).vertices`` gives), or None for anything else (ASCII
    STL, other formats, unreadable): those go through trimesh. Robot link meshes are mostly
    binary STL, and importing trimesh (with scipy.spatial) costs a command ~0.3 s."""
    if not str(file).lower().endswith(".stl"):
        return None
    try:
        with open(file, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if len(data) < 84:
        return None
    n = int(np.frombuffer(data, "<u4", 1, 80)[0])
    if n == 0 or len(data) != 84 + n * _STL_TRIANGLE.itemsize:
        return None  # ASCII, or a count that does not match the size: trimesh decides
    tri = np.frombuffer(data, _STL_TRIANGLE, n, 84)
    return tri["vertices"].reshape(-1, 3).astype(np.float64)


def _mesh_vertices(skel: Skeleton, j: int, R: np.ndarray, p: np.ndarray) -> np.ndarray | None:
    """World vertices ``(V, 3)`` of joint ``j``'s meshes at rest (None when none can be read)."""
    geoms = [g for g in skel.meta.get("robot_geoms", ()) if g[0] == skel.joint_names[j] and g[2]]
    if not geoms:
        return None
    parts = []
    for _, _, file, gpos, grot, gscale, _ in geoms:
        verts = _binary_stl_vertices(file)
        if verts is None:
            try:
                import trimesh
            except ImportError:  # pragma: no cover - trimesh is a dependency
                return None
            try:
                verts = trimesh.load(file, force="mesh", process=False).vertices
            except Exception:  # noqa: BLE001 - a bad mesh only loses this refinement
                continue
        v = np.asarray(verts, float) * np.asarray(gscale)
        parts.append((v @ np.asarray(grot).reshape(3, 3).T + np.asarray(gpos)) @ R.T + p)
    parts = [w for w in parts if len(w)]
    return np.concatenate(parts) if parts else None


def _ball_of_foot(skel: Skeleton, j: int, R: np.ndarray, p: np.ndarray,
                  fwd: np.ndarray) -> np.ndarray:
    """The ball of a robot foot at rest: on the sole (lowest mesh point), 3/4 of the way from
    the heel to the toe. Retargeting aligns the bone ankle -> this site with the human's
    ankle -> toe, so it must lie forward, not straight below the ankle."""
    v = _mesh_vertices(skel, j, R, p)
    if v is None:  # no mesh: ahead of the ankle by twice the foot's COM, at the ankle's height
        c = R @ skel.coms[j]
        return p + fwd * max(2.0 * float(c @ fwd), 0.05)
    along = v @ fwd
    ball = along.min() + 0.75 * (along.max() - along.min())
    x = p + fwd * (ball - float(p @ fwd))
    x[2] = float(v[:, 2].min())
    lateral = np.cross([0.0, 0.0, 1.0], fwd)
    x += lateral * (float(np.mean(v @ lateral)) - float(x @ lateral))
    return x


def _sole_corners(skel: Skeleton, j: int, R: np.ndarray, p: np.ndarray,
                  fwd: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Heel and toe ``(3,)`` of a robot foot on its sole at rest (None without meshes)."""
    v = _mesh_vertices(skel, j, R, p)
    if v is None:
        return None
    low = v[v[:, 2] < v[:, 2].min() + 0.01]  # the sole: within 1 cm of the lowest point
    along = low @ fwd
    lateral = np.cross([0.0, 0.0, 1.0], fwd)
    mid = float(np.mean(low @ lateral))
    z = float(v[:, 2].min())
    out = []
    for a in (along.min(), along.max()):
        out.append(fwd * a + lateral * mid + np.array([0.0, 0.0, z]))
    return out[0], out[1]


def _sole_edges(skel: Skeleton, j: int, R: np.ndarray, p: np.ndarray, fwd: np.ndarray,
                side: str) -> dict[str, np.ndarray]:
    """``{"back_inner": (3,), "back_outer", "front_inner", "front_outer"}``: the sole's
    edges at its heel and toe ends (the lateral extremes of the sole vertices within 2 cm of
    each end), at rest; empty without meshes. A foot rolled about its long axis (an ankle roll
    joint following the source's foot) puts an edge, not the centre line, lowest."""
    v = _mesh_vertices(skel, j, R, p)
    if v is None:
        return {}
    low = v[v[:, 2] < v[:, 2].min() + 0.01]
    along = low @ fwd
    lateral = np.cross([0.0, 0.0, 1.0], fwd)  # to the robot's left
    z = float(v[:, 2].min())
    out = {}
    for end, a in (("back", along.min()), ("front", along.max())):
        near = low[np.abs(along - a) < 0.02]
        w = near @ lateral
        outer, inner = (w.max(), w.min()) if side == "l" else (w.min(), w.max())
        for name, b in (("inner", inner), ("outer", outer)):
            out[f"{end}_{name}"] = fwd * a + lateral * b + np.array([0.0, 0.0, z])
    return out


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

    fwd = np.array([1.0, 0.0, 0.0])  # URDF / MJCF humanoids face +x (REP 103)
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
            world[f"{side}_foot"] = (j, _ball_of_foot(skel, j, R[j], P[j], fwd))
            corners = _sole_corners(skel, j, R[j], P[j], fwd)
            if corners is not None:
                world[f"{side}_sole_back"] = (j, corners[0])
                world[f"{side}_sole_front"] = (j, corners[1])
            for k, x in _sole_edges(skel, j, R[j], P[j], fwd, side).items():
                world[f"{side}_sole_{k}"] = (j, x)
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

    names: list[str] = []
    joints: list[int] = []
    offsets: list[np.ndarray] = []
    rots: list[np.ndarray] = []
    taken = set(skel.site_names)
    for site in ROBOT_SITES + SOLE_SITES + SOLE_EDGE_SITES:
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
        elif site not in world or (site in have and site not in ("l_foot", "r_foot", "head")):
            continue
        else:
            j, x = world[site]
            off = R[j].T @ (x - P[j])
        name = site
        while name in taken:
            name = name + "_site"
        taken.add(name)
        names.append(name)
        joints.append(j)
        offsets.append(off)
        rots.append(np.eye(3))
    if not names:
        return skel
    # the added sites come first: the role mapping takes the first site of each role, and a
    # file's own foot site (G1's left_foot, at the ankle) is not at the sole
    return skel.replace(
        site_names=(*names, *skel.site_names),
        site_joint=np.concatenate([np.array(joints, dtype=np.int64), skel.site_joint]),
        site_offsets=np.concatenate([np.reshape(offsets, (-1, 3)), skel.site_offsets]),
        site_rotations=np.concatenate([np.reshape(rots, (-1, 3, 3)), skel.site_rotations]))
