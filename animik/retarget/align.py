"""Rest-pose alignment, scale, and the source-driven desired pose of the target.

**Rest alignment.** For every paired joint (target ``j``, source ``s``) a constant rotation
``C_j`` relates the two joint frames, so that the target joint's desired world rotation is::

    R_target(t) = R_source(t) @ C_j,      C_j = (Δ_j R_source_rest)ᵀ R_target_rest

``Δ_j`` is the world rotation that takes the source's rest bone frame onto the target's: its
primary axis is the bone direction (to the first paired descendant that best continues the
chain, e.g. hips → spine, upper arm → forearm, hand → middle finger; or, for a joint with no
paired descendant, to the mean of its children and sites), its secondary axis the character
axis (forward, left or up) least aligned with the bone. Hence **each target bone points where
the source bone points in every frame**, whatever the rest poses (T-pose vs A-pose) and local
bone axes of the two skeletons; the rest poses only decide the twist about the bone, through
the character axes. A joint with no direction at all inherits its parent's ``Δ``.

**Source rest.** ``"auto"`` uses the file's OFFSET pose (all rotation channels zero) when it is
an upright stance (spine up, legs down), else the most upright frame of the clip — Bandai Namco
files, for instance, have local axes that put the legs sideways at zero rotation.

**Unpaired target joints** between two paired ones (a ``body95`` ``lower_thorax`` when the
source has two spine joints) get a share of the rotation between them (slerp of the world
rotation deltas, by hop count); those below the last paired joint (fingers, toes) keep their
rest relation to the parent.

**Scale.** ``s`` = target leg length / source leg length (thigh + shin + ankle height, each
measured on its own rest pose; hip height where a rig has no ankle). The target's hip centre
(:func:`hip_centre`: the midpoint of its legs' tops; a robot's pelvis origin is 10-20 cm above
it) follows ``s ·`` the source hips trajectory (:func:`hips_placement`); the vertical offset is
chosen so that the feet stand on the ground (see :mod:`animik.retarget.retarget`).

**Reference pose.** The DoFs are fitted to the desired rotations joint by joint, except a
serial chain of unpaired links ending at a paired joint (a robot's hip, shoulder, wrist or ankle:
a ball joint split into 1-DoF links), fitted as one joint to the chain's total rotation
(:func:`serial_chains`, :func:`animik.retarget.fit.chain_fit`).

**Desired pose.** The target's joint positions follow from the desired rotations and the
target's own bone lengths (its forward kinematics with world rotations given): effector targets
are therefore reachable by construction, and only joint limits and missing DoFs make the IK
work. A target whose hips cannot translate (``biped12``: fixed torso) is solved in a *virtual
world* that moves with the source hips, and the effector targets are mapped into the fixed
torso's frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..kinematics import forward_kinematics
from ..rotations import matrix_to_rotvec, rotvec_to_matrix
from ..semantics.contacts import horizontal_speed
from ..semantics.roles import SIDES, JointRoles, _is_robot_name, character_forward
from ..skeleton import ROTATION, TRANSLATION, Skeleton
from .fit import PoseFitter
from .mapping import JointMapping

UP = np.array([0.0, 0.0, 1.0])
PAIR, INTERP, RIGID, REST = 0, 1, 2, 3
#: a foot (or toe) is aligned sole to sole (``align(flat_q=...)``) when its bone's pitch at the
#: source's flat frame and at the target's rest differ by more than this (rad)
FLAT_MIN_PITCH = np.radians(15.0)


def _unit(v: np.ndarray) -> tuple[np.ndarray, float]:
    n = float(np.linalg.norm(v))
    return (v / n if n > 1e-12 else v * 0.0), n


def character_axes(P: np.ndarray, skel: Skeleton, roles: JointRoles) -> np.ndarray:
    """``(3, 3)`` columns forward, left, up of a character posed with joint positions ``P``.

    Left is the horizontal part of the sum of ``l_X − r_X`` over the paired sided joints
    (thighs, upper arms, clavicles, feet…); without any, ``up × forward`` of the file
    convention (:func:`~animik.retarget.mapping.character_forward`).
    """
    left = np.zeros(3)
    for part in ("thigh", "upper_arm", "clavicle", "shin", "forearm", "foot", "hand"):
        a, b = roles.get(f"l_{part}"), roles.get(f"r_{part}")
        if a and b:
            left += P[skel.joint_index(a)] - P[skel.joint_index(b)]
    left[2] = 0.0
    left, n = _unit(left)
    if n < 1e-9:
        left = np.cross(UP, character_forward(skel))
    fwd = np.cross(left, UP)
    return np.stack([fwd, np.cross(UP, fwd), UP], axis=1)


def _frame(u: np.ndarray, a: np.ndarray) -> np.ndarray:
    e2, _ = _unit(a - (a @ u) * u)
    return np.stack([u, e2, np.cross(u, e2)], axis=1)


def _subtree_points(skel: Skeleton, P: np.ndarray, S: np.ndarray, j: int) -> np.ndarray:
    mask = skel.joint_ancestor_mask[:, j]
    pts = [P[mask]]
    site_mask = mask[skel.site_joint] if skel.n_sites else np.zeros(0, dtype=bool)
    if skel.n_sites and site_mask.any():
        pts.append(S[site_mask])
    return np.concatenate(pts)


def _leg_top(skel: Skeleton, roles: JointRoles, t: int) -> int:
    """Where a leg starts: the thigh, or for a robot (whose thigh role is the last of its hip
    links, see :func:`animik.semantics.roles.classify_joints`) the first hip link below the
    hips — the hip links' offsets are part of the leg's length."""
    if not _is_robot_name(skel.joint_names[t]):
        return t
    hips = roles.get("hips")
    h = skel.joint_index(hips) if hips is not None else 0
    while skel.parents[t] >= 0 and skel.parents[t] != h:
        t = int(skel.parents[t])
    return t


def leg_tops(skel: Skeleton, roles: JointRoles) -> list[int]:
    """The joints where the legs start (:func:`_leg_top` of each thigh role), both sides."""
    out = []
    for side in SIDES:
        th = roles.get(f"{side}_thigh")
        if th is not None:
            out.append(_leg_top(skel, roles, skel.joint_index(th)))
    return out


def hip_centre(skel: Skeleton, roles: JointRoles, P: np.ndarray) -> np.ndarray:
    """``(..., 3)`` the hip centre of poses with joint positions ``P (..., J, 3)``: the
    midpoint of the two legs' tops (:func:`leg_tops`), the hips role joint without both legs.

    It is where the legs hang from, the same anatomical point on every humanoid: a mocap Hips
    joint sits within a few cm of it, a robot's pelvis link origin 10-20 cm above it (H1:
    17 cm, G1: 10 cm). Placing the target's hips by this point (:func:`hips_placement`) keeps
    a leg's hip-to-foot geometry when the trunk tilts differently from the source's (a rigid
    robot trunk following the source's chest rotates about the hip centre, not about its
    pelvis origin)."""
    tops = leg_tops(skel, roles)
    if len(tops) == 2:
        return 0.5 * (P[..., tops[0], :] + P[..., tops[1], :])
    hips = roles.get("hips")
    return P[..., skel.joint_index(hips) if hips is not None else 0, :]


def leg_length(skel: Skeleton, roles: JointRoles, P: np.ndarray, S: np.ndarray) -> float | None:
    """Straight-leg length (hip joint to the ground), m, from bone lengths; None without legs."""
    out = []
    for side in SIDES:
        th, sh, ft = (roles.get(f"{side}_{k}") for k in ("thigh", "shin", "foot"))
        if th is None:
            continue
        t = _leg_top(skel, roles, skel.joint_index(th))
        if sh is not None and ft is not None:
            s, f = skel.joint_index(sh), skel.joint_index(ft)
            foot_pts = _subtree_points(skel, P, S, f)
            ankle = float(P[f, 2] - foot_pts[:, 2].min())
            out.append(float(np.linalg.norm(P[s] - P[t]) + np.linalg.norm(P[f] - P[s])) + ankle)
        else:
            pts = _subtree_points(skel, P, S, t)
            out.append(float(P[t, 2] - pts[:, 2].min()))
    out = [x for x in out if x > 1e-6]
    return float(np.mean(out)) if out else None


def ground_height(skel: Skeleton, roles: JointRoles, P: np.ndarray, S: np.ndarray) -> float:
    """Lowest point (z, m) of the legs (thigh subtrees incl. sites), else of the whole pose."""
    zs = []
    for side in SIDES:
        th = roles.get(f"{side}_thigh")
        if th is not None:
            zs.append(_subtree_points(skel, P, S, skel.joint_index(th))[:, 2].min())
    if zs:
        return float(min(zs))
    return float(min(P[:, 2].min(), S[:, 2].min() if len(S) else np.inf))


def upright_score(P: np.ndarray, skel: Skeleton, roles: JointRoles) -> np.ndarray:
    """How upright poses ``P (..., J, 3)`` stand: spine z-direction minus legs' z-direction.

    2 for a straight vertical stance, lower otherwise; NaN-free (missing parts count 0).
    """
    score = np.zeros(P.shape[:-2])
    hips = roles.get("hips")
    top = roles.get("head") or roles.get("neck") or roles.get("chest")
    if hips and top:
        d = P[..., skel.joint_index(top), :] - P[..., skel.joint_index(hips), :]
        score = score + d[..., 2] / np.maximum(np.linalg.norm(d, axis=-1), 1e-12)
    legs = []
    for side in SIDES:
        th, ft = roles.get(f"{side}_thigh"), roles.get(f"{side}_foot") or roles.get(f"{side}_shin")
        if th and ft:
            d = P[..., skel.joint_index(ft), :] - P[..., skel.joint_index(th), :]
            legs.append(d[..., 2] / np.maximum(np.linalg.norm(d, axis=-1), 1e-12))
    if legs:
        score = score - np.mean(legs, axis=0)
    return score


def foot_tip_sites(skel: Skeleton, roles: JointRoles, side: str) -> list[int]:
    """The sites on a **toe-less** foot joint (a BVH ``End Site`` below ``LeftAnkle`` /
    ``lFoot``: the tip of the foot), which stand in for the ball; ``[]`` when the side has a toe
    role, no foot, or no site on its foot joint."""
    foot = roles.get(f"{side}_foot")
    if foot is None or roles.get(f"{side}_toe") is not None or not skel.n_sites:
        return []
    return [int(i) for i in np.flatnonzero(skel.site_joint == skel.joint_index(foot))]


def flat_foot_frames(skel: Skeleton, roles: JointRoles, P_clip: np.ndarray, fps: float,
                     tol: float = 0.01, speed: float = 0.2, min_frames: float = 0.1,
                     S_clip: np.ndarray | None = None) -> dict[str, int]:
    """Per side (``"l"``, ``"r"``), a clip frame where the source foot stands **flat**.

    A foot is flat when its ankle (``*_foot``) and its ball (``*_toe``) are both down and
    still: each within ``tol`` (m) of its own low height over the clip (2nd percentile of its
    z) and slower than ``speed`` (m/s, horizontal). Heel strike (ball up), toe-off (ankle up)
    and swing (both up, moving) are out; of the frames left, the one with the median
    ankle-to-ball pitch. A side with fewer than ``min_frames`` (s) of such frames (a clip
    that never stands: the foot keeps the bone-direction alignment) is left out. A foot
    **without a toe** joint uses the tip of its foot instead of the ball: the mean of its
    foot joint's end sites (:func:`foot_tip_sites`; needs ``S_clip``); without sites it is
    left out. (The cmu_daz pirouette, on its toes, stands flat 25-75 ms: it keeps its rest
    relation. Within 2 cm it has 0.12 s, and aligning it there lowered its heels but left
    the filter's hip strategy nothing to do: docs/retarget.md 3.)

    Why: the ankle-to-ball bone of a source foot standing flat is pitched by its own skeleton's
    geometry (Bandai Namco and Mixamo files: 40° down; body95: 17°), so mapping the bone
    direction alone put body95 on its toes in every stance (heels 11-12 cm up). The sole's
    relation is taken at a flat frame instead (:func:`align`, ``flat_frames``).

    Args:
        P_clip: ``(T, J, 3)`` source joint positions over the clip (m); ``fps`` its rate.
        S_clip: ``(T, n_sites, 3)`` source site positions (for toe-less feet).
    """
    out: dict[str, int] = {}
    if len(P_clip) < 3:
        return out
    for side in SIDES:
        foot, toe = roles.get(f"{side}_foot"), roles.get(f"{side}_toe")
        tips = foot_tip_sites(skel, roles, side) if S_clip is not None else []
        if not foot or not (toe or tips) or len(P_clip) == 0:
            continue
        a = P_clip[:, skel.joint_index(foot)]
        b = P_clip[:, skel.joint_index(toe)] if toe else S_clip[:, tips].mean(axis=1)
        down = (a[:, 2] <= np.percentile(a[:, 2], 2) + tol) & \
            (b[:, 2] <= np.percentile(b[:, 2], 2) + tol)
        down &= (horizontal_speed(a, fps) < speed) & (horizontal_speed(b, fps) < speed)
        frames = np.flatnonzero(down)
        if len(frames) < max(min_frames * fps, 1):
            continue
        d = a[frames] - b[frames]
        pitch = np.arctan2(d[:, 2], np.linalg.norm(d[:, :2], axis=1))
        out[side] = int(frames[np.argsort(pitch)[len(frames) // 2]])
    return out


def choose_source_rest(skel: Skeleton, roles: JointRoles, q_clip: np.ndarray | None,
                       option: object = "auto", P_clip: np.ndarray | None = None
                       ) -> tuple[np.ndarray, str]:
    """The source pose used as its rest for the alignment, and a description.

    Args:
        option: ``"auto"``, ``"offsets"`` (the skeleton's rest pose), ``"first_frame"``, a frame
            index or an ``(n_dof,)`` pose.
        P_clip: ``(T, J, 3)`` joint positions of the clip (computed if None).
    """
    rest = np.array(skel.rest_q, dtype=float)
    if isinstance(option, str):
        if option == "offsets" or q_clip is None or len(q_clip) == 0:
            return rest, "offsets"
        if option == "first_frame":
            return np.array(q_clip[0]), "frame 0"
        if option != "auto":
            raise OptionError(f"source_rest must be 'auto', 'offsets', 'first_frame', a frame "
                             f"index or a pose, got {option!r}")
        P0 = forward_kinematics(skel, rest).joint_positions
        limit = 1.6 if roles.get("l_thigh") or roles.get("r_thigh") else 0.8
        if float(upright_score(P0, skel, roles)) >= limit:
            return rest, "offsets"
        if P_clip is None:
            P_clip = forward_kinematics(skel, q_clip).joint_positions
        sc = upright_score(P_clip, skel, roles)
        t = int(np.argmax(sc >= sc.max() - 1e-3))
        return np.array(q_clip[t]), f"frame {t} (most upright; the OFFSET pose is not a stance)"
    if isinstance(option, (int, np.integer)) and not isinstance(option, bool):
        if q_clip is None or not 0 <= int(option) < len(q_clip):
            raise OptionError(f"source_rest frame {option} out of range")
        return np.array(q_clip[int(option)]), f"frame {int(option)}"
    return skel.check_q(np.asarray(option, dtype=float), "source_rest").copy(), "given pose"


@dataclass(frozen=True, eq=False)
class Alignment:
    """Everything constant of one source → target retarget (see the module docstring).

    Attributes:
        source, target: the skeletons; ``mapping`` the joint mapping.
        pair_t, pair_s: ``(P,)`` target / source joint indices of the pairs.
        C: ``(P, 3, 3)`` constant offsets, ``R_target = R_source @ C``.
        plan: ``(J_t, 4)`` int per target joint: kind (PAIR/INTERP/RIGID/REST), pair index or
            the interpolation's ancestor, descendant; ``plan_f`` ``(J_t,)`` the fraction.
        scale: target / source length ratio.
        source_rest_q, source_rest_kind: the source pose used as rest, and how it was chosen.
        source_axes, target_axes: ``(3, 3)`` columns forward, left, up.
        hips_t, hips_s: hips joints; ``carrier``: target joint whose translation DoFs move the
            hips (-1: fixed root); ``rotating_hips``: the hips can take their desired rotation.
        rest_root_dz: vertical root offset from the rest poses (used without a clip).
        target_ground: z of the target's rest ground; ``R0``/``p0`` target rest world frames.
        hip_offset: ``(3,)`` the target's hip centre (:func:`hip_centre`) in the hips
            joint's frame: the hips are placed, and the root effector sits, there.
        tip_soles: sides (``"l"``, ``"r"``) whose toe-less source foot was aligned sole to
            sole from the tip of the foot (``align(flat_q=...)``): the retargeter holds the
            target's ball on the ground there too (:class:`~animik.retarget.Retargeter`).
    """

    source: Skeleton
    target: Skeleton
    mapping: JointMapping
    pair_t: np.ndarray
    pair_s: np.ndarray
    C: np.ndarray
    plan: np.ndarray
    plan_f: np.ndarray
    scale: float
    source_rest_q: np.ndarray
    source_rest_kind: str
    source_axes: np.ndarray
    target_axes: np.ndarray
    hips_t: int
    hips_s: int
    carrier: int
    rotating_hips: bool
    rest_root_dz: float
    target_ground: float
    R0: np.ndarray
    p0: np.ndarray
    fitter: PoseFitter
    hip_offset: np.ndarray
    tip_soles: tuple[str, ...] = ()

    @property
    def fixed_root(self) -> bool:
        return self.carrier < 0


def _first_paired_below(skel: Skeleton, j: int, paired: set[int]) -> list[int]:
    out, stack = [], list(skel.children[j])
    while stack:
        c = stack.pop()
        if c in paired:
            out.append(c)
        else:
            stack.extend(skel.children[c])
    return sorted(out)


def _direction_points(target: Skeleton, Pt: np.ndarray, Ps: np.ndarray, cands: list[int],
                      src_of: dict[int, int], roles_by_joint) -> list[tuple[np.ndarray, np.ndarray]]:
    """Points ``(target, source)`` a joint's bone may point to: each candidate, except that a
    left / right pair of candidates with mirrored roles (both upper arms, both thighs) counts
    as one point, their midpoint. A trunk joint whose only paired branches are the arms (a
    robot torso without a head link, H1's pelvis whose torso link coincides with it) would
    otherwise take the bone to ONE shoulder, whose rest direction differs between skeletons
    (a 60° diagonal on H1, near-lateral on a mocap chest): the desired trunk then rolls by the
    difference (40° on H1, feet and head targets out of reach of the reference pose)."""
    by_role = {roles_by_joint.get(target.joint_names[c], ""): c for c in cands}
    out, used = [], set()
    for c in cands:
        role = roles_by_joint.get(target.joint_names[c], "")
        if c in used:
            continue
        if role[:2] in ("l_", "r_"):
            mate = by_role.get(("r_" if role[0] == "l" else "l_") + role[2:])
            if mate is not None and mate != c:
                used.update((c, mate))
                out.append((0.5 * (Pt[c] + Pt[mate]),
                            0.5 * (Ps[src_of[c]] + Ps[src_of[mate]])))
                continue
        out.append((Pt[c], Ps[src_of[c]]))
    return out


def _is_ancestor(skel: Skeleton, a: int, b: int) -> bool:
    return bool(skel.joint_ancestor_mask[b, a])


def _direction_candidates(target: Skeleton, source: Skeleton, Pt: np.ndarray, Ps: np.ndarray,
                          j: int, s: int, src_of: dict[int, int], paired: set[int],
                          min_t: float, min_s: float) -> list[int]:
    """Paired descendants of target joint ``j`` usable as its bone direction: the first paired
    joint on each branch whose source counterpart lies below ``s``, looking past joints that
    coincide with ``j`` in either skeleton (zero-length bones such as CMU's LowerBack)."""
    out = []
    stack = _first_paired_below(target, j, paired)
    while stack:
        c = stack.pop(0)
        if not _is_ancestor(source, s, src_of[c]):
            continue
        if np.linalg.norm(Pt[c] - Pt[j]) > min_t and np.linalg.norm(Ps[src_of[c]] - Ps[s]) > min_s:
            out.append(c)
        else:
            stack.extend(_first_paired_below(target, c, paired))
    return out


def serial_chains(skel: Skeleton, paired: set[int]) -> list[list[int]]:
    """Serial chains of unpaired joints ending at a paired one, to fit as one joint (see
    :class:`~animik.retarget.fit.PoseFitter`): from below the nearest paired ancestor down to
    the paired joint, every link with rotation DoFs only and one child (no branch), at most 3
    rotation DoFs in all (a ball joint split into links: a robot's hip, shoulder, wrist)."""
    out = []
    for j in sorted(paired):
        path, k = [j], int(skel.parents[j])
        while k >= 0 and k not in paired:
            path.append(k)
            k = int(skel.parents[k])
        if k < 0 or len(path) < 2:
            continue
        links = path[::-1]
        if any(len(skel.children[c]) != 1 for c in links[:-1]):
            continue
        kinds = [skel.dof_type[d] for c in links for d in skel.joint_dofs(c)]
        if any(t != ROTATION for t in kinds) or not 2 <= len(kinds) <= 3:
            continue
        out.append(links)
    return out


def align(source: Skeleton, target: Skeleton, mapping: JointMapping,
          source_rest_q: np.ndarray, source_rest_kind: str = "offsets",
          scale: float | None = None, flat_q: dict[str, np.ndarray] | None = None
          ) -> Alignment:
    """Build the :class:`Alignment` of a mapping.

    Args:
        source_rest_q: ``(n_src,)`` source pose taken as its rest (see
            :func:`choose_source_rest`).
        scale: override the length ratio (default: leg lengths, see the module docstring).
        flat_q: ``{side: (n_src,) pose}``, a source pose where that side's foot stands flat
            (:func:`flat_foot_frames`). The target's foot and toe of that side are aligned
            there, sole to sole: the bone's **horizontal** direction and world up, at the
            source's flat pose and the target's rest (whose soles are flat), so a flat source
            sole gives a flat target sole whatever the two feet's ankle-to-ball pitches.
            Only where the two bones' pitches there differ by more than ``FLAT_MIN_PITCH``
            (15°); without it (or for a side it lacks, or a smaller difference) the foot's bone
            direction is mapped as for any joint. A **toe-less** source foot (no paired
            descendant) is aligned there whatever the pitches, its tip (:func:`foot_tip_sites`)
            against the target's ball; such sides are listed in ``Alignment.tip_soles``.
    """
    fks = forward_kinematics(source, source_rest_q)
    fkt = forward_kinematics(target, target.rest_q)
    Ps, Rs, Ss = np.asarray(fks.joint_positions), np.asarray(fks.joint_rotations), \
        np.asarray(fks.site_positions)
    Pt, Rt, St = np.asarray(fkt.joint_positions), np.asarray(fkt.joint_rotations), \
        np.asarray(fkt.site_positions)
    sr, tr = mapping.source_roles, mapping.target_roles
    ax_s = character_axes(Ps, source, sr)
    ax_t = character_axes(Pt, target, tr)
    src_of = {target.joint_index(t): source.joint_index(s) for t, s in mapping.pairs}
    paired = set(src_of)
    height_t = max(float(np.ptp(np.concatenate([Pt[:, 2], St[:, 2]]))), 1e-3)
    height_s = max(float(np.ptp(np.concatenate([Ps[:, 2], Ss[:, 2]]))), 1e-3)
    tgt_roles_by_joint = tr.by_joint

    order = sorted(paired)
    deltas: dict[int, np.ndarray] = {}
    src_rot: dict[int, np.ndarray] = {}  # the source rotation C is taken at, when not the rest
    tip_soles: list[str] = []
    flat = {}
    for side, qf in (flat_q or {}).items():
        fkf = forward_kinematics(source, qf)
        flat[side] = (np.asarray(fkf.joint_positions), np.asarray(fkf.joint_rotations),
                      np.asarray(fkf.site_positions))
    for j in order:
        s = src_of[j]
        u_t = u_s = None
        cands = _direction_candidates(target, source, Pt, Ps, j, s, src_of, paired,
                                      1e-3 * height_t, 1e-3 * height_s)
        non_thumb = [c for c in cands if "thumb" not in tgt_roles_by_joint.get(target.joint_names[c], "")]
        cands = non_thumb or cands
        p = target.parents[j]
        ref = _unit(Pt[j] - Pt[p])[0] if p >= 0 else UP
        if p >= 0 and np.linalg.norm(Pt[j] - Pt[p]) < 1e-3 * height_t:
            ref = UP
        # one candidate: the bone; several: the one that continues the chain (for the root:
        # only a clear continuation — hips → spine — else the character frame decides)
        # a joint on its parent's point (H1's torso link on the pelvis) has a bone from there:
        # measure the source's from the parent's counterpart too (the Hips, not a chest whose
        # short vector to the shoulders tilts 10-45° forward on mocap rigs)
        s0 = s
        if p >= 0 and p in src_of and np.linalg.norm(Pt[j] - Pt[p]) < 1e-3 * height_t:
            s0 = src_of[p]
        best = 0.5 if p < 0 else -np.inf
        role = tgt_roles_by_joint.get(target.joint_names[j], "")
        sole = role[2:] in ("foot", "toe") and role[:1] in flat
        Pf = flat[role[:1]][0] if sole else Ps
        u_f = None  # the source bone at the flat frame
        for (pt_c, ps_c), (_, pf_c) in zip(
                _direction_points(target, Pt, Ps, cands, src_of, tgt_roles_by_joint),
                _direction_points(target, Pt, Pf, cands, src_of, tgt_roles_by_joint), strict=True):
            ut = _unit(pt_c - Pt[j])[0]
            score = float(ut @ ref) if (len(cands) > 1 or p < 0) else 1.0
            if score > best:
                best, u_t, u_s, u_f = score, ut, _unit(ps_c - Ps[s0])[0], _unit(pf_c - Pf[s0])[0]
        toeless = sole and u_t is None and role[2:] == "foot"
        if toeless:
            # a toe-less source foot (louise, mocapbank, the pirouette) has no bone to map:
            # its heading is the tip of the foot (its end sites) at the flat frame, the
            # target's the ball at rest. There is no bone direction to keep, so no pitch test:
            # sole to sole whenever the foot stands flat somewhere in the clip
            tips = foot_tip_sites(source, sr, role[:1])
            ball = tr.get(f"{role[:1]}_toe")
            if tips and ball is not None:
                u_t = _unit(Pt[target.joint_index(ball)] - Pt[j])[0]
                u_f = _unit(flat[role[:1]][2][tips].mean(axis=0) - Pf[s])[0]
            else:
                toeless = False
        if sole and u_t is not None:
            # sole to sole (see flat_q): the bone's horizontal heading, and world up
            h_t, nt = _unit(u_t - (u_t @ UP) * UP)
            h_s, ns = _unit(u_f - (u_f @ UP) * UP)
            # only where the bone's pitch misleads: mapping the bone direction leaves the
            # target sole pitched by the difference of the two bones' pitches at the flat
            # frame (Bandai / Mixamo on body95: 22°); a few degrees are as likely the flat
            # frame's own error (heel strike at 120 fps: SFU, CMU), and those keep the bone
            dpitch = abs(np.arcsin(np.clip(u_t @ UP, -1, 1)) - np.arcsin(np.clip(u_f @ UP, -1, 1)))
            if nt > 0.2 and ns > 0.2 and (toeless or dpitch > FLAT_MIN_PITCH):
                deltas[j] = _frame(h_t, UP) @ _frame(h_s, UP).T
                src_rot[j] = flat[role[:1]][1][s]
                if toeless:
                    tip_soles.append(role[:1])
                continue
        if toeless:
            u_t = None  # no sole-to-sole frame (a vertical tip): as before, the parent's relation
        if u_t is None and p < 0:
            deltas[j] = ax_t @ ax_s.T
            continue
        if u_t is None:
            # an effector site on the joint whose role the source has below: fig2's l_hand site
            # on the elbow (source: forearm → hand), l_foot on the knee, head on the neck
            for i in np.flatnonzero(target.site_joint == j):
                role = mapping.effectors.get(target.site_names[i])
                sj = sr.get(role) if role else None
                if sj is None:
                    continue
                sj = source.joint_index(sj)
                ut, nt = _unit(St[i] - Pt[j])
                us, ns = _unit(Ps[sj] - Ps[s])
                if sj != s and _is_ancestor(source, s, sj) and nt > 1e-3 * height_t \
                        and ns > 1e-3 * height_s:
                    u_t, u_s = ut, us
                    break
        if u_t is None:
            a = target.parents[j]
            while a >= 0 and a not in deltas:
                a = target.parents[a]
            deltas[j] = deltas[a] if a >= 0 else ax_t @ ax_s.T
            continue
        # secondary: the character axis least aligned with the bone (in both skeletons)
        k = min(range(3), key=lambda i: max(abs(u_t @ ax_t[:, i]), abs(u_s @ ax_s[:, i])))
        deltas[j] = _frame(u_t, ax_t[:, k]) @ _frame(u_s, ax_s[:, k]).T
    pair_t = np.array(order, dtype=np.int64)
    pair_s = np.array([src_of[j] for j in order], dtype=np.int64)
    C = np.stack([(deltas[j] @ src_rot.get(j, Rs[src_of[j]])).T @ Rt[j] for j in order]) \
        if order else \
        np.zeros((0, 3, 3))

    # plan for every target joint
    J = target.n_joints
    plan = np.full((J, 4), -1, dtype=np.int64)
    plan_f = np.zeros(J)
    pair_index = {j: i for i, j in enumerate(order)}
    for j in range(J):
        if j in paired:
            plan[j, :2] = (PAIR, pair_index[j])
            continue
        a = target.parents[j]
        hops_a = 1
        while a >= 0 and a not in paired:
            a = target.parents[a]
            hops_a += 1
        below = []
        stack = [(c, 1) for c in target.children[j]]
        while stack:
            c, h = stack.pop()
            if c in paired:
                below.append((h, c))
            else:
                stack.extend((g, h + 1) for g in target.children[c])
        if a >= 0 and below:
            h, b = min(below)
            plan[j] = (INTERP, 0, a, b)
            plan_f[j] = hops_a / (hops_a + h)
        elif a >= 0:
            plan[j, 0] = RIGID
        else:
            plan[j, 0] = REST

    # scale and root
    hips_t = target.joint_index(tr.get("hips")) if tr.get("hips") else 0
    hips_s = source.joint_index(sr.get("hips")) if sr.get("hips") else 0
    if hips_t not in paired:
        # the target hips must be driven; pair it with the source hips if nothing else does
        hips_t = order[0]
        hips_s = src_of[hips_t]
    if scale is None:
        lt, ls = leg_length(target, tr, Pt, St), leg_length(source, sr, Ps, Ss)
        if lt and ls:
            scale = lt / ls
        else:
            top_t, top_s = tr.get("head") or tr.get("neck"), sr.get("head") or sr.get("neck")
            if top_t and top_s:
                scale = (np.linalg.norm(Pt[target.joint_index(top_t)] - Pt[hips_t])
                         / max(np.linalg.norm(Ps[source.joint_index(top_s)] - Ps[hips_s]), 1e-9))
            else:
                scale = height_t / height_s
    scale = float(scale)
    carrier = -1
    j = hips_t
    while j >= 0:
        if any(target.dof_type[k] == TRANSLATION for k in target.joint_dofs(j)):
            carrier = j
            break
        j = target.parents[j]
    rot_dofs = [k for k in target.joint_dofs(hips_t) if target.dof_type[k] == ROTATION]
    rotating = len(rot_dofs) >= 3
    g_t = ground_height(target, tr, Pt, St)
    g_s = ground_height(source, sr, Ps, Ss)
    # the target's hip centre on the source's hips (hips_placement), at their rest heights
    rest_dz = float((hip_centre(target, tr, Pt)[2] - g_t) - scale * (Ps[hips_s, 2] - g_s))
    return Alignment(
        source=source, target=target, mapping=mapping, pair_t=pair_t, pair_s=pair_s, C=C,
        plan=plan, plan_f=plan_f, scale=scale, source_rest_q=np.asarray(source_rest_q, float),
        source_rest_kind=source_rest_kind, source_axes=ax_s, target_axes=ax_t, hips_t=hips_t,
        hips_s=hips_s, carrier=carrier, rotating_hips=rotating, rest_root_dz=rest_dz,
        target_ground=g_t, R0=Rt, p0=Pt, fitter=PoseFitter(target, chains=serial_chains(target, paired)),
        hip_offset=Rt[hips_t].T @ (hip_centre(target, tr, Pt) - Pt[hips_t]),
        tip_soles=tuple(sorted(tip_soles)))


def hips_placement(al: Alignment, R: np.ndarray, P_src: np.ndarray) -> np.ndarray:
    """``(T, 3)`` where the target's hips joint goes (before the ground offset): so that the
    target's hip centre (:func:`hip_centre`) is at ``scale ·`` the source's hips joint, with
    the desired hips rotations ``R (T, J_t, 3, 3)`` and the source joint positions
    ``P_src (T, J_s, 3)``.

    The source keeps its hips joint: a mocap Hips is where its legs hang from (within a few
    cm of its thigh joints, which marker-fitted skeletons place less consistently: on the
    mocapbank clip following their midpoint instead floats body95's standing feet 5 cm above
    the floor of its kneel); a robot's pelvis origin is not (H1: 17 cm above its hips)."""
    src = al.scale * np.asarray(P_src)[:, al.hips_s]
    return src - R[:, al.hips_t] @ al.hip_offset


# ----------------------------------------------------------------------------- per frame
def desired_rotations(al: Alignment, R_src: np.ndarray) -> np.ndarray:
    """Desired world rotations ``(T, J_t, 3, 3)`` of every target joint from the source's
    world joint rotations ``R_src (T, J_s, 3, 3)``."""
    T = R_src.shape[0]
    J = al.target.n_joints
    R = np.empty((T, J, 3, 3))
    R0T = np.swapaxes(al.R0, -1, -2)
    if len(al.pair_t):
        R[:, al.pair_t] = R_src[:, al.pair_s] @ al.C
    W: dict[int, np.ndarray] = {}

    def delta(j: int) -> np.ndarray:
        if j not in W:
            W[j] = R[:, j] @ R0T[j]
        return W[j]

    for j in range(J):
        kind = al.plan[j, 0]
        if kind == PAIR:
            continue
        if kind == INTERP:
            a, b = al.plan[j, 2], al.plan[j, 3]
            Wa, Wb = delta(a), delta(b)
            rv = matrix_to_rotvec(np.swapaxes(Wa, -1, -2) @ Wb)
            W[j] = Wa @ rotvec_to_matrix(al.plan_f[j] * rv)
        elif kind == RIGID:
            W[j] = delta(al.target.parents[j])
        else:
            W[j] = np.broadcast_to(np.eye(3), (T, 3, 3))
        R[:, j] = W[j] @ al.R0[j]
    return R


def desired_positions(al: Alignment, R: np.ndarray, p_hips: np.ndarray,
                      sites: Skeleton | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward kinematics with the desired world rotations, the hips placed at ``p_hips``.

    Args:
        R: ``(T, J, 3, 3)`` desired rotations (:func:`desired_rotations`).
        p_hips: ``(T, 3)`` desired hips position (virtual world).
        sites: skeleton whose sites are returned (same joints as the target; default: the
            target).

    Returns:
        ``(joint positions (T, J, 3), site positions (T, S, 3), carrier translation values
        (T, k))`` in the virtual world (the hips where asked); ``k`` = the carrier's
        translation DoFs (0 for a fixed root).
    """
    return DesiredFK(al, R, sites).at(p_hips)


class DesiredFK:
    """:func:`desired_positions` of one set of desired rotations for several hips placements:
    the joint chain and the sites' lever arms do not depend on the hips, so they are computed
    once (a retarget places the hips twice: for the ground estimate, then for good). ``at``
    returns exactly what :func:`desired_positions` returns (same operations).

    Args:
        al, R, sites: as :func:`desired_positions`.
    """

    def __init__(self, al: Alignment, R: np.ndarray, sites: Skeleton | None = None):
        skel = al.target
        T, J = R.shape[:2]
        par = skel.parents
        trans_rest = np.zeros((J, 3))
        for k in range(skel.n_dof):
            if skel.dof_type[k] == TRANSLATION:
                trans_rest[skel.dof_joint[k]] += skel.dof_axis[k] * skel.rest_q[k]
        local = skel.offsets + np.einsum("jab,jb->ja", skel.rest_rotations, trans_rest)
        P = np.empty((T, J, 3))
        for j in range(J):
            if par[j] < 0:
                P[:, j] = local[j]
            else:
                P[:, j] = P[:, par[j]] + R[:, par[j]] @ local[j]
        ss = skel if sites is None else sites
        self._al, self._R, self._P, self._site_joint = al, R, P, ss.site_joint
        self._arms = np.einsum("tsab,sb->tsa", R[:, ss.site_joint], ss.site_offsets)

    def at(self, p_hips: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(P (T, J, 3), S (T, S, 3), carrier values (T, k))`` with the hips at ``p_hips``."""
        al, R = self._al, self._R
        skel = al.target
        par = skel.parents
        T = R.shape[0]
        P = self._P.copy()
        shift = p_hips - P[:, al.hips_t]
        base = al.carrier if al.carrier >= 0 else al.hips_t
        moved = skel.joint_ancestor_mask[:, base]
        P[:, moved] += shift[:, None, :]
        tvals = np.zeros((T, 0))
        if al.carrier >= 0:
            c = al.carrier
            ks = [k for k in skel.joint_dofs(c) if skel.dof_type[k] == TRANSLATION]
            # world displacement of the carrier = R_parent R_rest_c Σ t_k a_k (translations first)
            Rp = R[:, par[c]] if par[c] >= 0 else np.broadcast_to(np.eye(3), (T, 3, 3))
            A = Rp @ (skel.rest_rotations[c] @ skel.dof_axis[ks].T)  # (T, 3, k)
            dt = np.einsum("tka,ta->tk", np.linalg.pinv(A), shift)
            tvals = skel.rest_q[ks] + dt
        S = P[:, self._site_joint] + self._arms
        return P, S, tvals


def reference_pose(al: Alignment, R: np.ndarray, carrier_values: np.ndarray) -> np.ndarray:
    """The null-space reference ``bq (T, n)``: rotation DoFs fitted to the desired rotations,
    the carrier's translations placing the hips, other translations at rest; within limits."""
    skel = al.target
    T = R.shape[0]
    q = np.broadcast_to(skel.rest_q, (T, skel.n_dof)).copy()
    if al.carrier >= 0 and carrier_values.shape[1]:
        ks = [k for k in skel.joint_dofs(al.carrier) if skel.dof_type[k] == TRANSLATION]
        q[:, ks] = carrier_values
    return al.fitter.fit(R, q)


def fixed_root_transform(al: Alignment, R: np.ndarray, p_hips: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
    """``(A (T, 3, 3), b (T, 3))``: actual = A @ virtual + b for a target whose hips cannot
    translate (identity for a free root)."""
    T = R.shape[0]
    if not al.fixed_root:
        return np.broadcast_to(np.eye(3), (T, 3, 3)), np.zeros((T, 3))
    h = al.hips_t
    if al.rotating_hips:
        A = np.broadcast_to(np.eye(3), (T, 3, 3)).copy()
    else:
        A = al.R0[h] @ np.swapaxes(R[:, h], -1, -2)
    b = al.p0[h] - np.einsum("tab,tb->ta", A, p_hips)
    return A, b

