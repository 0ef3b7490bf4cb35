"""Segment masses by body role: de Leva's (1996) tables on a skeleton whose joints have roles.

A BVH file carries no masses. Bone-length cylinders (:func:`animik.skeleton.bone_mass_properties`)
put most of the mass in the legs' long bones (the trunk, head and arms 20-21 % of the body on
the raw Bandai and mocapbank captures, against ~60 % in an adult): the centre of mass sits too
low and the trunk lean moves it too little (docs/dynamics.md section 5h). With the joints' roles
(:func:`animik.semantics.roles.classify_joints`: which joint is a thigh, a shin, the hips, the
spine, the head...) each body segment gets the mass fraction, centre-of-mass position and radii
of gyration of de Leva's adjustment of Zatsiorsky-Seluyanov's data (de Leva P., "Adjustments to
Zatsiorsky-Seluyanov's segment inertia parameters", J. Biomech. 29(9):1223-1230, 1996, table 4,
males: :data:`DE_LEVA`):

- **limbs** from the role joint to the next one down the limb (thigh: hip to knee, shank: knee
  to ankle, upper arm: shoulder to elbow, forearm: elbow to wrist; hand: wrist to the middle
  finger's base, else the hand's farthest end, else :data:`HAND_LENGTH` along the forearm);
- the **foot** from the ankle to the toe tip (the farthest point of the foot's subtree) with the
  heel 25 % of that length behind the ankle (as the soles of :mod:`animik.dynamics.contacts`):
  de Leva's 44.15 % of heel-to-toe puts the centre of mass 30 % of the ankle-to-toe length in
  front of the ankle;
- the **trunk** on the line from the hip joints' midpoint (MIDH) to the base of the neck (the
  first neck joint, else the head joint: CERV), split into de Leva's lower, middle and upper
  trunk by their lengths (145.7, 215.5, 242.1 mm of 603.3);
- the **head and neck** from CERV to the top of the head's subtree (VERT), at least 12 % of the
  standing height long (a head joint without an end site).

Each segment's mass goes to one joint: of the joints on its path from the proximal to the distal
end, the last one at or below the segment's centre of mass (so a spine of several joints gets
the lower, middle and upper trunk on different joints, and a twist bone does not take its arm's
mass). Its inertia about its centre of mass is ``m (k_t^2 (I - u u^T) + k_l^2 u u^T)`` with
``u`` along the segment, ``k_l`` the longitudinal radius of gyration and ``k_t`` the mean of the
sagittal and transverse ones (which of the two transverse axes is sagittal is not known from a
bone line). A joint that carries no segment (fingers, toes, twist bones, ends of the neck, a
placement root) gets :data:`MIN_MASS` with the inertia of a 2 cm solid sphere, taken from the
segments in proportion (the total stays). The total mass is the caller's (the BVH reader's
:func:`animik.skeleton.mass_from_height`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import AnimikError
from ..kinematics import forward_kinematics
from ..skeleton import Skeleton
from .roles import classify_joints

#: de Leva 1996, table 4 (males): segment -> (mass fraction, centre of mass as a fraction of
#: the length from the end nearer the hips, radii of gyration (sagittal, transverse,
#: longitudinal) as fractions of the length). The trunk parts and the head are measured from
#: their lower end here (de Leva's from the upper: 1 - his values).
DE_LEVA: dict[str, tuple[float, float, tuple[float, float, float]]] = {
    "head": (0.0694, 1.0 - 0.5976, (0.362, 0.376, 0.312)),
    "upper_trunk": (0.1596, 1.0 - 0.5066, (0.505, 0.320, 0.465)),
    "middle_trunk": (0.1633, 1.0 - 0.4502, (0.482, 0.383, 0.468)),
    "lower_trunk": (0.1117, 1.0 - 0.6115, (0.615, 0.551, 0.587)),
    "upper_arm": (0.0271, 0.5772, (0.285, 0.269, 0.158)),
    "forearm": (0.0162, 0.4574, (0.276, 0.265, 0.121)),
    "hand": (0.0061, 0.7900, (0.628, 0.513, 0.401)),
    "thigh": (0.1416, 0.4095, (0.329, 0.329, 0.149)),
    "shank": (0.0433, 0.4459, (0.255, 0.249, 0.103)),
    "foot": (0.0137, 0.4415, (0.257, 0.245, 0.124)),
}
#: de Leva's trunk parts, lengths in mm (CERV-XYPH, XYPH-OMPH, OMPH-MIDH), bottom up here
TRUNK_PARTS = (("lower_trunk", 145.7), ("middle_trunk", 215.5), ("upper_trunk", 242.1))
#: mass of a joint that carries no segment, kg
MIN_MASS = 0.02
#: a hand without fingers or an end site: wrist to the middle finger's base along the forearm,
#: a fraction of the standing height (de Leva: 86.2 of 1741 mm)
HAND_LENGTH = 86.2 / 1741.0
#: the shortest head (CERV to VERT), a fraction of the standing height (de Leva: 242.9 of
#: 1741 mm = 14 %; a head joint with no end site above it gives less)
MIN_HEAD = 0.12


@dataclass(frozen=True)
class SegmentMasses:
    """Result of :func:`role_mass_properties`.

    Attributes:
        masses: ``(J,)`` kg. coms: ``(J, 3)`` m, in each joint's frame. inertias: ``(J, 3, 3)``
            kg m^2 about the COM, joint frame.
        segment_joint: de Leva segment name (``"l_thigh"``, ``"lower_trunk"``...) -> the joint
            index carrying it.
    """

    masses: np.ndarray
    coms: np.ndarray
    inertias: np.ndarray
    segment_joint: dict[str, int]


class RolesNotFound(AnimikError):
    """The skeleton lacks a role the segment model needs (the message names them)."""


_NEEDED = ("hips", "l_thigh", "r_thigh", "l_shin", "r_shin", "l_foot", "r_foot", "l_upper_arm",
           "r_upper_arm", "l_forearm", "r_forearm", "l_hand", "r_hand", "head")


def role_mass_properties(skel: Skeleton, total_mass: float, height: float) -> SegmentMasses:
    """de Leva segment masses, COMs and inertias for ``skel`` (module docstring).

    Args:
        skel: a humanoid skeleton (BVH); its rest pose gives the segments' geometry.
        total_mass: kg, the body's mass.
        height: m, its standing height (the shortest head, :data:`MIN_HEAD`).

    Returns:
        :class:`SegmentMasses`.

    Raises:
        RolesNotFound: a role of :data:`_NEEDED` is missing, or a segment has no length.
    """
    roles = classify_joints(skel)
    idx = {r: skel.joint_names.index(n) for r, n in roles.roles.items()}
    missing = [r for r in _NEEDED if r not in idx]
    if missing:
        raise RolesNotFound(f"roles not found: {', '.join(missing)}")
    J = skel.n_joints
    fk = forward_kinematics(skel, skel.rest_q)
    P, R = fk.joint_positions, fk.joint_rotations
    parents = skel.parents
    kids: list[list[int]] = [[] for _ in range(J)]
    for j in range(J):
        if parents[j] >= 0:
            kids[parents[j]].append(j)

    def subtree_points(j: int) -> np.ndarray:
        stack, out = [j], []
        while stack:
            k = stack.pop()
            out.append(P[k])
            stack.extend(kids[k])
            out.extend(fk.site_positions[s] for s in np.flatnonzero(skel.site_joint == k))
        return np.array(out)

    def path(a: int, b: int) -> list[int]:
        """Joints from ``a`` down to ``b`` (``b`` a descendant), ``b`` excluded."""
        out = []
        k = parents[b]
        while k >= 0 and k != a:
            out.append(k)
            k = parents[k]
        if k != a:
            return [a]
        return [a, *out[::-1]]

    # (segment name, proximal point, distal point, candidate joints, mass / COM / radii)
    segs: list[tuple[str, np.ndarray, np.ndarray, list[int], str]] = []
    for s in ("l", "r"):
        for name, a, b in (("thigh", "thigh", "shin"), ("shank", "shin", "foot"),
                           ("upper_arm", "upper_arm", "forearm"), ("forearm", "forearm", "hand")):
            ja, jb = idx[f"{s}_{a}"], idx[f"{s}_{b}"]
            segs.append((f"{s}_{name}", P[ja], P[jb], path(ja, jb), name))
        jh = idx[f"{s}_hand"]
        tip = idx.get(f"{s}_middle1")
        pts = subtree_points(jh)
        end = P[tip] if tip is not None else pts[np.argmax(np.linalg.norm(pts - P[jh], axis=1))]
        if not np.linalg.norm(end - P[jh]) > 1e-6:  # a bare wrist (Bandai: a zero end site)
            fa = P[jh] - P[idx[f"{s}_forearm"]]
            end = P[jh] + HAND_LENGTH * height * fa / max(np.linalg.norm(fa), 1e-12)
        segs.append((f"{s}_hand", P[jh], end, path(jh, tip) if tip is not None else [jh], "hand"))
        jf = idx[f"{s}_foot"]
        pts = subtree_points(jf)
        toe = pts[np.argmax(np.linalg.norm(pts - P[jf], axis=1))]
        heel = P[jf] - 0.25 * (toe - P[jf])
        cand = [jf] + ([idx[f"{s}_toe"]] if f"{s}_toe" in idx else [])
        segs.append((f"{s}_foot", heel, toe, cand, "foot"))
    midh = 0.5 * (P[idx["l_thigh"]] + P[idx["r_thigh"]])
    neck = [skel.joint_names.index(n) for n in roles.neck_chain]
    jcerv = neck[0] if neck else idx["head"]
    cerv = P[jcerv]
    trunk_joints = path(idx["hips"], jcerv)
    total_len = sum(ln for _, ln in TRUNK_PARTS)
    lo = 0.0
    for name, ln in TRUNK_PARTS:
        hi = lo + ln / total_len
        segs.append((name, midh + lo * (cerv - midh), midh + hi * (cerv - midh), trunk_joints,
                     name))
        lo = hi
    up = cerv - midh
    up = up / max(np.linalg.norm(up), 1e-12)
    pts = subtree_points(idx["head"])
    vert_h = max(float(np.max((pts - cerv) @ up)), MIN_HEAD * height)
    head_joints = [*neck, idx["head"]] if neck else [idx["head"]]
    segs.append(("head", cerv, cerv + vert_h * up, head_joints, "head"))

    masses = np.zeros(J)
    first = np.zeros((J, 3))  # sum of m c (world)
    second = np.zeros((J, 3, 3))  # sum of I_c + m (|c|^2 I - c c^T) about the world origin
    carried: dict[str, int] = {}
    for name, a, b, cand, table in segs:
        frac, com_f, (k_s, k_t, k_l) = DE_LEVA[table]
        axis = b - a
        length = float(np.linalg.norm(axis))
        if not length > 1e-6:
            raise RolesNotFound(f"segment {name} has no length at the rest pose")
        u = axis / length
        c = a + com_f * axis
        m = frac * total_mass
        # the carrying joint: the last candidate at or below the COM along the segment
        t = [(P[j] - a) @ u for j in cand]
        j = cand[0]
        for jj, tj in zip(cand, t, strict=True):
            if tj <= com_f * length + 1e-9:
                j = jj
        kt = 0.5 * (k_s + k_t) * length
        kl = k_l * length
        i_c = m * (kt * kt * (np.eye(3) - np.outer(u, u)) + kl * kl * np.outer(u, u))
        masses[j] += m
        first[j] += m * c
        second[j] += i_c + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
        carried[name] = j
    coms = np.zeros((J, 3))
    inertias = np.zeros((J, 3, 3))
    free = masses <= 0.0
    scale = (total_mass - MIN_MASS * free.sum()) / total_mass
    for j in range(J):
        if free[j]:
            masses[j] = MIN_MASS
            inertias[j] = np.eye(3) * 0.4 * MIN_MASS * 0.02**2
            continue
        m = masses[j]
        cw = first[j] / m
        iw = second[j] - m * (np.dot(cw, cw) * np.eye(3) - np.outer(cw, cw))
        masses[j] = m * scale
        coms[j] = R[j].T @ (cw - P[j])
        inertias[j] = scale * (R[j].T @ iw @ R[j])
    inertias = 0.5 * (inertias + np.transpose(inertias, (0, 2, 1)))
    return SegmentMasses(masses, coms, inertias, carried)


__all__ = ["DE_LEVA", "MIN_MASS", "RolesNotFound", "SegmentMasses", "TRUNK_PARTS",
           "role_mass_properties"]
