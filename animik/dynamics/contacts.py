"""Contacts as data: where a skeleton can touch the floor, and the support polygon.

A skeleton's contact geometry is a set of named **contact areas**, each a few points fixed to
joints (a foot sole: its four corners; a wheel: one point). It comes from the rig metadata:

- ``soles``: ``{name: {joint, center = [x, y, z], size = [length, width]}}`` -- a rectangle in
  the joint frame's x-y plane (x along the foot), centred at ``center`` (m). body95, biped12
  and fig2 carry these.
- ``wheel_contacts``: ``[[x, y, z], ...]`` floor points in the root joint's frame (wheeled20);
  each becomes an area ``wheel0``, ``wheel1``, ...
- ``contact_points``: ``{name: {joint, points = [[x, y, z], ...]}}`` -- any other contact.

Skeletons without these keys (BVH files) get soles derived from their foot and toe joints
(:func:`derive_soles`, using the retargeter's joint roles): the heel corners ride on the foot
(ankle) joint and the toe corners on the toe joint, at the height of the lowest foot point at
rest. A rig file overrides the derivation by carrying its own ``soles`` table.

The support polygon is the convex hull of the floor projections of the active areas' points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cache import cached
from ..errors import AnimikError, UnknownNameError, names_hint
from ..kinematics import forward_kinematics
from ..semantics.roles import character_forward, classify_joints  # roles: names, topology
from ..skeleton import Skeleton


class ContactGeometryError(AnimikError, ValueError):
    """A skeleton has no (or malformed) contact geometry; the message names the rig keys."""


HOW_TO_ADD = (
    "add a [meta.soles.<name>] table with joint = \"<joint>\", center = [x, y, z] and "
    "size = [length, width] (a sole rectangle in that joint's x-y plane, metres), or "
    "[meta.contact_points.<name>] with joint and points = [[x, y, z], ...], or "
    "meta.wheel_contacts = [[x, y, z], ...] (floor points in the root frame) to the rig file"
)


@dataclass(frozen=True)
class ContactModel:
    """Contact areas of a skeleton.

    Attributes:
        names: ``A`` area names.
        point_area: ``(P,)`` int, area of each contact point.
        point_joint: ``(P,)`` int, joint each point is fixed to.
        point_local: ``(P, 3)`` m, the point in that joint's frame.
        source: where the geometry came from (``"rig:soles"``, ``"derived"``...).
    """

    names: tuple[str, ...]
    point_area: np.ndarray
    point_joint: np.ndarray
    point_local: np.ndarray
    source: str

    @property
    def n_areas(self) -> int:
        return len(self.names)

    def area_index(self, name: str | int) -> int:
        if isinstance(name, (int, np.integer)):
            if not 0 <= int(name) < self.n_areas:
                raise UnknownNameError(f"contact area index {name} out of range 0..{self.n_areas - 1}")
            return int(name)
        try:
            return self.names.index(name)
        except ValueError:
            raise UnknownNameError(f"unknown contact area {name!r}; areas are "
                                   f"{names_hint(self.names)}") from None

    def points(self, skel: Skeleton, q: np.ndarray, fk=None) -> np.ndarray:
        """World positions ``(..., P, 3)`` of every contact point at poses ``q (..., n_dof)``
        (``fk``: their :func:`forward_kinematics`, when the caller has it)."""
        fk = forward_kinematics(skel, q) if fk is None else fk
        R = fk.joint_rotations[..., self.point_joint, :, :]
        p = fk.joint_positions[..., self.point_joint, :]
        return p + np.einsum("...pab,pb->...pa", R, self.point_local)

    def in_contact_mask(self, in_contact: Any, lead: tuple[int, ...]) -> np.ndarray:
        """Normalise ``in_contact`` to bool ``lead + (A,)``.

        Accepts a bool array ``(..., A)``, a sequence of area names, or ``True`` / ``False``.
        """
        if in_contact is True or in_contact is False:
            return np.full(lead + (self.n_areas,), bool(in_contact))
        if isinstance(in_contact, str) or (isinstance(in_contact, Sequence) and in_contact
                                           and isinstance(next(iter(in_contact)), str)):
            names = [in_contact] if isinstance(in_contact, str) else list(in_contact)
            m = np.zeros(self.n_areas, dtype=bool)
            for nm in names:
                m[self.area_index(nm)] = True
            return np.array(np.broadcast_to(m, lead + (self.n_areas,)))
        arr = np.asarray(in_contact, dtype=bool)
        if arr.shape[-1:] != (self.n_areas,):
            raise ContactGeometryError(
                f"in_contact must have trailing dimension {self.n_areas} (areas "
                f"{list(self.names)}), got shape {arr.shape}")
        return np.array(np.broadcast_to(arr, lead + (self.n_areas,)))


def _rect(center: Sequence[float], size: Sequence[float]) -> np.ndarray:
    cx, cy, cz = (float(v) for v in center)
    hl, hw = float(size[0]) / 2.0, float(size[1]) / 2.0
    return np.array([[cx - hl, cy - hw, cz], [cx + hl, cy - hw, cz],
                     [cx + hl, cy + hw, cz], [cx - hl, cy + hw, cz]])


def _vec(v: Any, what: str, n: int = 3) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        a = np.zeros(0)
    if a.shape != (n,) or not np.isfinite(a).all():
        raise ContactGeometryError(f"{what}: expected {n} finite numbers, got {v!r}")
    return a


#: Where :func:`contact_model` keeps a skeleton's model (:mod:`animik.cache`); a skeleton whose
#: contacts come from elsewhere (a rig's soles carried onto its BVH) is given its model there.
CONTACT_MODEL_KEY = "dynamics.contact_model"


def contact_model(skel: Skeleton) -> ContactModel:
    """The contact geometry of a skeleton (rig metadata, else derived from its feet).

    Kept beside the skeleton (:mod:`animik.cache`): built once per skeleton.

    Raises:
        ContactGeometryError: malformed metadata, or no metadata and no feet to derive soles
            from (the message says which rig-file keys to add).
    """
    return cached(skel, CONTACT_MODEL_KEY, lambda: _build_contact_model(skel))


def _build_contact_model(skel: Skeleton) -> ContactModel:
    names: list[str] = []
    area, joint, local = [], [], []

    def add(name: str, j: int, pts: np.ndarray, new: bool = True) -> None:
        if new:
            names.append(name)
        for p in pts:
            area.append(len(names) - 1)
            joint.append(j)
            local.append(p)

    meta = skel.meta
    sources = []

    def joint_of(spec: Mapping, where: str) -> int:
        if "joint" not in spec:
            raise ContactGeometryError(f"{where}: missing key 'joint'; {HOW_TO_ADD}")
        try:
            return skel.joint_index(str(spec["joint"]))
        except UnknownNameError as e:
            raise ContactGeometryError(f"{where}: {e}") from None

    for name, spec in dict(meta.get("soles", {}) or {}).items():
        where = f"rig {skel.name!r} meta.soles.{name}"
        if not isinstance(spec, Mapping) or "center" not in spec or "size" not in spec:
            raise ContactGeometryError(f"{where}: needs joint, center and size; {HOW_TO_ADD}")
        size = _vec(spec["size"], f"{where}.size", 2)
        if not (size > 0).all():
            raise ContactGeometryError(f"{where}.size must be positive, got {list(size)}")
        j = joint_of(spec, where)
        for i, (jj, pts) in enumerate(_split_at_toe(skel, j, _rect(
                _vec(spec["center"], f"{where}.center"), size))):
            add(str(name), jj, pts, new=i == 0)
        sources.append("soles")
    for name, spec in dict(meta.get("contact_points", {}) or {}).items():
        where = f"rig {skel.name!r} meta.contact_points.{name}"
        if not isinstance(spec, Mapping) or "points" not in spec:
            raise ContactGeometryError(f"{where}: needs joint and points; {HOW_TO_ADD}")
        pts = np.array([_vec(p, f"{where}.points") for p in spec["points"]]).reshape(-1, 3)
        if not len(pts):
            raise ContactGeometryError(f"{where}.points is empty")
        add(str(name), joint_of(spec, where), pts)
        sources.append("contact_points")
    wheels = meta.get("wheel_contacts")
    if wheels is not None:
        root = int(np.flatnonzero(skel.parents < 0)[0])
        for i, p in enumerate(wheels):
            add(f"wheel{i}", root, _vec(p, f"rig {skel.name!r} meta.wheel_contacts[{i}]")[None])
        sources.append("wheel_contacts")
    if names:
        source = "rig:" + "+".join(dict.fromkeys(sources))
    else:
        try:
            derived = derive_soles(skel)
        except ContactGeometryError:
            if not _foot_joints(skel):
                raise
            derived = derive_soles(skel, up_from_world=True)
        for name, parts in derived.items():
            for i, (j, pts) in enumerate(parts):
                add(name, j, pts, new=i == 0)
        source = "derived"
    model = ContactModel(tuple(names), np.array(area, dtype=np.int64),
                         np.array(joint, dtype=np.int64), np.array(local, dtype=float), source)
    return model


def contact_model_for_clip(skel: Skeleton, q: np.ndarray) -> ContactModel:
    """The contact model to use for a clip ``q (T, n_dof)``: the rig's metadata when it has
    some; else soles derived at the rest pose when it is upright (shins vertical); else at the
    clip's most "standing" frame (both foot joints lowest, world up as the sole normal) -- BVH
    rest poses are not always upright (the Bandai Namco files), the clip's own stance is.
    """
    meta = skel.meta
    if any(k in meta for k in ("soles", "contact_points", "wheel_contacts")):
        return contact_model(skel)
    feet = _foot_joints(skel)
    if not feet:
        return contact_model(skel)  # raises, naming the rig keys to add
    rest = forward_kinematics(skel, skel.rest_q).joint_positions
    shins = rest[[int(skel.parents[f]) for f in feet]] - rest[feet]
    upright = shins[:, 2] / np.maximum(np.linalg.norm(shins, axis=1), 1e-12)
    if np.all(upright > 0.9):  # an upright rest pose (T-pose): derive there
        return contact_model(skel)
    P = forward_kinematics(skel, q).joint_positions[:, feet, 2]
    P = P - np.median(P, axis=0)  # compare heights per foot joint
    frame = int(np.argmin(P.max(axis=1)))
    try:
        derived = derive_soles(skel, pose=q[frame])
    except ContactGeometryError:
        return contact_model(skel)
    names, area, joint, local = [], [], [], []
    for name, parts in derived.items():
        names.append(name)
        for j, pts in parts:
            for p in pts:
                area.append(len(names) - 1)
                joint.append(j)
                local.append(p)
    return ContactModel(tuple(names), np.array(area, dtype=np.int64),
                        np.array(joint, dtype=np.int64), np.array(local, dtype=float),
                        f"derived at frame {frame}")


def _foot_joints(skel: Skeleton) -> list[int]:
    """Joint indices of the feet (retargeting roles ``l_foot`` / ``r_foot``)."""
    try:
        roles = classify_joints(skel).roles
    except AnimikError:
        return []
    return [skel.joint_index(roles[r]) for r in ("l_foot", "r_foot") if r in roles]


def _split_at_toe(skel: Skeleton, j: int, rect: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Let a sole rectangle bend with the toes: when the sole's joint has one child joint (the
    toe) lying over the rectangle (its rest position, in the joint frame, inside the sole's
    length), the corners in front of it ride on the toe joint and two corners are added at
    the ball of the foot (the toe joint's x) on the foot joint. Else the rectangle is rigid."""
    kids = skel.children[j]
    if len(kids) != 1:
        return [(j, rect)]
    t = kids[0]
    if skel.joint_dof_start[t + 1] == skel.joint_dof_start[t]:
        return [(j, rect)]
    fk = forward_kinematics(skel, skel.rest_q)
    Rj, pj = fk.joint_rotations[j], fk.joint_positions[j]
    Rt, pt = fk.joint_rotations[t], fk.joint_positions[t]
    tx = float(((pt - pj) @ Rj)[0])
    x0, x1 = rect[:, 0].min(), rect[:, 0].max()
    if not x0 + 0.25 * (x1 - x0) < tx < x1:
        return [(j, rect)]
    front = rect[rect[:, 0] > tx]
    ball = front.copy()
    ball[:, 0] = tx
    back = np.vstack([rect[rect[:, 0] <= tx], ball])
    front_t = (pj + front @ Rj.T - pt) @ Rt  # into the toe joint's frame at rest
    return [(j, back), (t, front_t)]


def derive_soles(skel: Skeleton, width_ratio: float = 0.38, heel_ratio: float = 0.25,
                 pose: np.ndarray | None = None, up_from_world: bool = False
                 ) -> dict[str, list[tuple[int, np.ndarray]]]:
    """Sole points for a skeleton without contact metadata, from its foot and toe joints.

    Per side, at the rest pose (or at ``pose``, a standing frame of a clip, see
    :func:`contact_model_for_clip`): the sole lies at the height of the lowest point of the foot
    subtree (joints and sites); it runs from ``heel_ratio`` x (ankle-to-toe length) behind the
    ankle to the toe joint's children (or 0.5 x that length past a toe joint without any; a
    foot without a toe joint ends at its end site, the tip of the toes), and is
    ``width_ratio`` x its length wide. Heel corners are fixed to the foot joint, toe corners
    to the toe joint (so the sole bends with the toes).

    Returns:
        ``{"l_foot": (joint, points (k, 3) in that joint's frame), ...}``; several joints per
        area are expressed as separate entries ``l_foot`` / ``l_foot_toe`` merged by the caller.

    Raises:
        ContactGeometryError: no foot joints found.
    """
    try:
        roles = classify_joints(skel).roles
    except AnimikError:
        roles = {}
    fk = forward_kinematics(skel, skel.rest_q if pose is None else pose)
    P, R = fk.joint_positions, fk.joint_rotations
    out: dict[str, list[tuple[int, np.ndarray]]] = {}
    for side in ("l", "r"):
        foot = roles.get(f"{side}_foot")
        if foot is None:
            continue
        f = skel.joint_index(foot)
        toe_name = roles.get(f"{side}_toe")
        t = skel.joint_index(toe_name) if toe_name is not None else None
        # "Up" is the shin direction at rest (ankle -> knee), not world z: BVH rest poses are
        # not always upright in animik's world (Y-up files, lying rest poses).
        knee = int(skel.parents[f])
        up = P[knee] - P[f] if knee >= 0 else np.array([0.0, 0.0, 1.0])
        up = up / np.linalg.norm(up) if np.linalg.norm(up) > 1e-9 else np.array([0.0, 0.0, 1.0])
        if pose is not None or up_from_world:  # a standing frame: world up is the sole normal
            up = np.array([0.0, 0.0, 1.0])
        sub = [j for j in range(skel.n_joints) if j == f or bool(skel.joint_ancestor_mask[j, f])]
        pts_sub = [P[sub]]
        sites = [s for s in range(skel.n_sites) if skel.site_joint[s] in sub]
        if sites:
            pts_sub.append(fk.site_positions[sites])
        low = float(((np.vstack(pts_sub) - P[f]) @ up).min())
        if t is not None:
            kids = list(skel.children[t])
            tip = P[kids].mean(0) if kids else None
            toe_p = P[t]
        else:
            tip = None
            kids = list(skel.children[f])
            ends = [s for s in range(skel.n_sites) if skel.site_joint[s] == f]
            if kids:
                toe_p = P[kids].mean(0)
            elif ends:
                # no toe joint: the foot's end site is the tip of the toes (mocapbank's
                # ``LeftAnkle_end``), the sole's front -- not a toe joint to reach 0.5 x past
                # (which put raw mocapbank's sole 10 cm below its toe tip when the foot
                # points down, docs/dynamics.md 5j "Raw mocapbank")
                toe_p = tip = fk.site_positions[ends].mean(0)
            else:  # a bare ankle: a foot one third of the shin long, facing forward
                shin = float(np.linalg.norm(P[f] - P[knee]))
                fw = character_forward(skel)
                toe_p = P[f] + (fw - (fw @ up) * up) * shin / 3.0
        d = toe_p - P[f]
        d = d - (d @ up) * up
        length = float(np.linalg.norm(d))
        if length < 1e-6:
            continue
        fwd = d / length
        lat = np.cross(up, fwd)
        base = P[f] + low * up  # the ankle projected onto the sole plane
        heel = base - heel_ratio * length * fwd
        if tip is None:
            front = base + 1.5 * length * fwd
        else:
            dt_ = tip - P[f]
            front = base + float(dt_ @ fwd) * fwd
        half_w = 0.5 * width_ratio * (length * (1 + heel_ratio) + 0.5 * length)
        back = [heel - half_w * lat, heel + half_w * lat]
        fore = [front - half_w * lat, front + half_w * lat]
        to_local = lambda j, pts: (np.asarray(pts) - P[j]) @ R[j]  # noqa: E731  R^T (p - o)
        out[f"{side}_foot"] = [(f, to_local(f, back + ([] if t is not None else fore)))]
        if t is not None:
            out[f"{side}_foot"].append((t, to_local(t, fore)))
    if not out:
        raise ContactGeometryError(
            f"skeleton {skel.name!r} has no contact geometry and no foot joints to derive "
            f"soles from; {HOW_TO_ADD}")
    return out
