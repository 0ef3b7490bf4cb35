"""Generated bodies: a smooth-skinned :class:`~animik.character.SkinnedMesh` for any skeleton.

Built-in rigs and BVH skeletons come without a mesh; :func:`generated_body` gives them one so
the app draws a character rather than sticks. The body is a set of shaped, overlapping segment
primitives (tapered tubes of elliptic cross-section with rounded caps) placed by the joints'
semantic roles (:func:`animik.semantics.roles.classify_joints`):

* the torso is one tube lofted along the spine (hips → spine joints → neck) with a human
  width/depth profile, closed below the hips and over the shoulders;
* limbs taper from thigh to shin, upper arm to forearm; hands are flattened palms towards the
  finger bases, with a tube per finger segment; feet run from the heel to past the toes; the
  head is an ellipsoid from the head joint to its end site;
* bones of unknown role (robots, props) get a round tube sized by their length.

Every vertex is skinned to the joint that turns its bone, blended with the neighbouring joint
near each end by a smoothstep over a half-width ``h`` that is the same on both sides of a joint
(so two segments meeting at a joint deform together there)::

    w_parent(s) = S((h_a - s) / (2 h_a)),  w_child(s) = S((s - L + h_b) / (2 h_b)),
    w_owner = 1 - w_parent - w_child,        S(x) = 3x² - 2x³ on [0, 1]

with ``s`` the position along the bone (m from its start), ``L`` its length; ``2 h <= 0.7 L``
keeps the three weights non-negative. The mesh is in world coordinates at the skeleton's rest
pose (the bind pose); ``inverse_bind`` is ``joint_from_world`` there.

Numeric only (numpy); cached per skeleton with :mod:`animik.cache`. The pieces are closed,
outward-facing meshes (``tests/test_bodies.py`` checks them with trimesh).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cache import cached
from .character import MAX_INFLUENCES, Material, SkinnedMesh, homogeneous
from .kinematics import forward_kinematics
from .semantics.roles import FINGERS, character_forward, classify_joints
from .skeleton import Skeleton

#: The generated body's material: a neutral clay that reads well under the viewport's lights.
BODY_MATERIAL = Material(name="body", base_color=(0.55, 0.40, 0.29, 1.0), roughness=0.7)

# Limb radii (start, end) as fractions of the character's height.
_LIMB_RADII = {
    "clavicle": (0.034, 0.036), "upper_arm": (0.034, 0.025), "forearm": (0.026, 0.018),
    "thigh": (0.050, 0.033), "shin": (0.035, 0.021), "neck": (0.030, 0.028),
}
# The torso's half width and half depth along the spine, by normalised arc length t (0: the
# hips joint, 1: the neck base), fractions of height; below 0 the tube closes under the hips.
_TORSO_T = np.array([-0.22, 0.0, 0.3, 0.62, 0.9, 1.0])
_TORSO_W = np.array([0.080, 0.102, 0.082, 0.094, 0.094, 0.072])
_TORSO_D = np.array([0.058, 0.064, 0.056, 0.066, 0.058, 0.048])
_TORSO_F = np.array([-0.012, -0.010, 0.0, 0.010, 0.0, -0.006])  # centre forward of the spine


@dataclass
class _Tube:
    """A swept tube: rings of ``n_theta`` vertices with per-ring skin weights."""

    centres: np.ndarray  # (R, 3)
    d_dirs: np.ndarray  # (R, 3) unit, the "depth" radius direction
    w_dirs: np.ndarray  # (R, 3) unit, the "width" radius direction
    rd: np.ndarray  # (R,) m
    rw: np.ndarray  # (R,) m
    joints: np.ndarray  # (R, 3) int
    weights: np.ndarray  # (R, 3) float
    n_theta: int
    tip_a: np.ndarray  # (3,) pole before the first ring
    tip_b: np.ndarray  # (3,) pole after the last ring


def _unit(v: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-9 else fallback


def _frame(axis: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(d_dir, w_dir)`` perpendicular to ``axis``: ``d`` towards ``ref`` (or up/side when
    ``ref`` is along the axis)."""
    for r in (ref, np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])):
        d = r - (r @ axis) * axis
        if np.linalg.norm(d) > 0.3 * np.linalg.norm(r):
            d = d / np.linalg.norm(d)
            return d, np.cross(axis, d)
    d = np.cross(axis, [1.0, 0.0, 0.0])
    d = _unit(d, np.array([0.0, 1.0, 0.0]))
    return d, np.cross(axis, d)


def _smooth(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _segment(a, b, ra, rb, ref, owner, parent, child, h_a, h_b, n_theta, n_len,
             cap_a=1.0, cap_b=1.0, n_cap=4) -> _Tube:
    """A tapered tube from ``a`` to ``b`` with elliptic cross-sections ``(r_depth, r_width)``
    ``ra`` → ``rb`` and hemi-ellipsoid caps ``cap_*`` radii long, skinned to ``owner`` blended
    with ``parent`` near ``a`` and ``child`` near ``b`` (-1: no blend)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    L = float(np.linalg.norm(b - a))
    u = _unit(b - a, np.array([0.0, 0.0, 1.0]))
    d, w = _frame(u, np.asarray(ref, float))
    ra, rb = np.asarray(ra, float), np.asarray(rb, float)
    ca, cb = cap_a * float(ra.mean()), cap_b * float(rb.mean())
    phi = np.linspace(0.0, 0.5 * np.pi, n_cap + 1)[1:-1]  # cap rings, pole excluded
    s_cap_a = -ca * np.cos(phi)
    k_a = np.sin(phi)
    s_body = np.linspace(0.0, L, max(n_len, 2))
    s_cap_b = L + cb * np.cos(phi[::-1])
    k_b = np.sin(phi[::-1])
    s = np.concatenate([s_cap_a, s_body, s_cap_b])
    t = np.clip(s / max(L, 1e-9), 0.0, 1.0)
    k = np.concatenate([k_a, np.ones(len(s_body)), k_b])
    r = (1 - t)[:, None] * ra + t[:, None] * rb
    R = len(s)
    jts = np.zeros((R, 3), np.int64)
    wts = np.zeros((R, 3))
    jts[:, 0] = owner
    if parent >= 0 and h_a > 0:
        jts[:, 1] = parent
        wts[:, 1] = _smooth((h_a - s) / (2 * h_a))
    if child >= 0 and h_b > 0:
        jts[:, 2] = child
        wts[:, 2] = _smooth((s - L + h_b) / (2 * h_b))
    wts[:, 0] = 1.0 - wts[:, 1] - wts[:, 2]
    return _Tube(a + s[:, None] * u, np.tile(d, (R, 1)), np.tile(w, (R, 1)), k * r[:, 0],
                 k * r[:, 1], jts, wts, n_theta, a - ca * u, b + cb * u)


def _tube_mesh(tube: _Tube) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(positions (V, 3), faces (F, 3), joints (V, 3), weights (V, 3))`` of a closed tube."""
    n = tube.n_theta
    th = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    c, s = np.cos(th), np.sin(th)
    ring = (tube.centres[:, None, :] + (tube.rd[:, None] * c)[..., None] * tube.d_dirs[:, None, :]
            + (tube.rw[:, None] * s)[..., None] * tube.w_dirs[:, None, :])
    R = len(tube.centres)
    pos = np.concatenate([ring.reshape(-1, 3), tube.tip_a[None], tube.tip_b[None]])
    idx = np.arange(R * n).reshape(R, n)
    nxt = np.roll(idx, -1, axis=1)
    # d x w = axis: counter-clockwise seen from outside with (i, i+1 next ring, i+1)
    q0, q1, q2, q3 = idx[:-1], nxt[:-1], nxt[1:], idx[1:]
    quads = np.concatenate([np.stack([q0, q1, q2], -1).reshape(-1, 3),
                            np.stack([q0, q2, q3], -1).reshape(-1, 3)])
    pa, pb = R * n, R * n + 1
    fan_a = np.stack([np.full(n, pa), nxt[0], idx[0]], -1)
    fan_b = np.stack([np.full(n, pb), idx[-1], nxt[-1]], -1)
    faces = np.concatenate([quads, fan_a, fan_b])
    jts = np.concatenate([np.repeat(tube.joints, n, axis=0), tube.joints[[0, -1]]])
    wts = np.concatenate([np.repeat(tube.weights, n, axis=0), tube.weights[[0, -1]]])
    return pos, faces, jts, wts


def _leads_to(skel: Skeleton, role_of: dict[int, str], j: int) -> str:
    """The role of ``j`` or, through joints without a role and one child, of the first below."""
    seen = 0
    while seen < 8:
        if j in role_of:
            return role_of[j]
        ch = skel.children[j]
        if len(ch) != 1:
            return ""
        j = ch[0]
        seen += 1
    return ""


def _kind(role: str) -> str:
    """``role`` without its side prefix and finger number (``l_thumb2`` → ``thumb``)."""
    if role[:2] in ("l_", "r_"):
        role = role[2:]
    return role.rstrip("0123456789")


def body_segments(skel: Skeleton) -> list[_Tube]:
    """The segment primitives of the generated body of ``skel`` at its rest pose."""
    fk = forward_kinematics(skel, skel.rest_q)
    P = np.asarray(fk.joint_positions)
    S = np.asarray(fk.site_positions)
    J = skel.n_joints
    pts = np.concatenate([P, S]) if len(S) else P
    H = float(np.ptp(pts[:, 2])) if len(pts) > 1 else 1.0
    if H < 0.2 * float(np.ptp(pts, axis=0).max()):
        H = float(np.ptp(pts, axis=0).max())
    H = H if np.isfinite(H) and H > 1e-3 else 1.0  # all joints in one point: a 1 m figure
    roles = classify_joints(skel)
    names = {n: i for i, n in enumerate(skel.joint_names)}
    role_of = {names[j]: r for r, j in roles.roles.items()}
    kind = {j: _kind(r) for j, r in role_of.items()}
    children = skel.children
    parents = skel.parents
    up = np.array([0.0, 0.0, 1.0])
    fwd = character_forward(skel)
    for side in ("l", "r"):
        f, t = roles.get(f"{side}_foot"), roles.get(f"{side}_toe")
        if f and t:
            v = P[names[t]] - P[names[f]]
            v[2] = 0.0
            if np.linalg.norm(v) > 1e-3:
                fwd = v / np.linalg.norm(v)
                break
    sites_of: list[list[int]] = [[] for _ in range(J)]
    for i, j in enumerate(skel.site_joint):
        sites_of[int(j)].append(i)

    # blend half-width per joint: the same on both sides of the joint
    bone_len = np.full(J, np.inf)
    bone_len[1:] = np.linalg.norm(P[1:] - P[parents[1:]], axis=1)
    h = np.full(J, np.inf)
    for j in range(1, J):
        L = bone_len[j]
        if L > 1e-4:
            h[j] = min(h[j], 0.33 * L)
            p = int(parents[j])
            h[p] = min(h[p], 0.33 * L)
    h = np.where(np.isfinite(h), np.minimum(h, 0.05 * H), 0.03 * H)

    def par(j: int) -> int:
        return int(parents[j])

    tubes: list[_Tube] = []
    covered: set[int] = set()  # joints whose outgoing bones are already built

    # the torso: hips -> spine -> first neck joint
    hips = names.get(roles.get("hips") or "", -1)
    if hips < 0:
        hips = 0
    chain = [hips] + [names[n] for n in roles.spine]
    if roles.neck_chain:
        chain.append(names[roles.neck_chain[0]])
    elif roles.get("head"):
        chain.append(names[roles.get("head")])
    cpts = [P[chain[0]]]
    cown = [chain[0]]
    for j in chain[1:]:
        if np.linalg.norm(P[j] - cpts[-1]) > 1e-4:
            cpts.append(P[j])
            cown.append(j)
        else:
            cown[-1] = j
    if len(cpts) < 2:  # no spine (a pair of legs under a torso joint): a trunk above the hips
        cpts.append(P[hips] + 0.32 * H * up)
        cown.append(hips)
        top_is_joint = False
    else:
        top_is_joint = True
    cpts_a = np.array(cpts)
    u_top = _unit(cpts_a[-1] - cpts_a[-2], up)
    u_bot = _unit(cpts_a[1] - cpts_a[0], up)
    arms = [names[n] for r in ("l_upper_arm", "r_upper_arm") if (n := roles.get(r))]
    legs = [names[n] for r in ("l_thigh", "r_thigh") if (n := roles.get(r))]
    # reach the shoulders and cover the hip joints
    ext_top = max([0.0] + [float((P[a] - cpts_a[-1]) @ u_top) for a in arms])
    ext_bot = max([0.0] + [float((cpts_a[0] - P[g]) @ u_bot) + 0.05 * H for g in legs])
    # wide enough to take the thighs in (a robot's hips can be wide for its height)
    spread = [float(np.linalg.norm((P[g] - cpts_a[0]) - ((P[g] - cpts_a[0]) @ u_bot) * u_bot))
              for g in legs]
    need = max(spread, default=0.0) + 0.5 * _LIMB_RADII["thigh"][0] * H
    width_scale = max(1.0, need / (float(_TORSO_W[1]) * H))
    tubes.append(_torso(cpts_a, cown, H, fwd, h, ext_top, ext_bot, width_scale))
    covered.update(chain[:-1] if top_is_joint else chain)

    for j in range(J):
        kj = kind.get(j, "")
        if kj == "hand":
            tubes.extend(_hand(skel, j, P, S, sites_of, children, kind, role_of, H, fwd, h, par))
            covered.add(j)
        elif kj == "foot":
            tubes.extend(_foot(skel, j, P, S, sites_of, children, kind, H, fwd, h, par))
            covered.add(j)
        elif kj == "head":
            tubes.append(_head(j, P[j], P, S, sites_of, children, H, fwd, h, par))
            covered.add(j)
    if "head" not in roles.roles:  # a head site on the neck (fig2): a neck up to a head there
        for i, name in enumerate(skel.site_names):
            j = int(skel.site_joint[i])
            if "head" in name.lower() and not children[j] and j not in covered:
                base = S[i] - 0.056 * H * up
                if float((base - P[j]) @ up) > 0.02 * H:
                    r0 = _LIMB_RADII["neck"][0] * H
                    tubes.append(_segment(P[j], base, (r0, r0), (r0, r0), fwd, j,
                                          par(j) if j > 0 else -1, -1, h[j], 0.0, 16, 4))
                tubes.append(_head(j, base, P, S, [[] for _ in range(J)], children, H, fwd, h,
                                   par, blend=False))
                covered.add(j)
                break
    for j in range(J):
        if j in covered:
            continue
        kj = kind.get(j, "")
        ends = [(c, P[c]) for c in children[j]]
        if not children[j]:
            ends = [(-1, S[i]) for i in sites_of[j]
                    if np.linalg.norm(S[i] - P[j]) > 1e-3][:1]
            if ends and kj == "forearm":  # no hand joint (fig2): a forearm and a palm to the site
                site = ends[0][1]
                axis = _unit(site - P[j], fwd)
                wrist = site - 0.055 * H * axis
                ends = [(-1, wrist)]
                tubes.append(_segment(wrist, site, (0.017 * H, 0.011 * H), (0.024 * H, 0.010 * H),
                                      fwd, j, -1, -1, 0.0, 0.0, 16, 4, cap_a=0.6, cap_b=0.6))
            if not ends and kj == "toe":
                ends = [(-1, P[j] + 0.035 * H * fwd)]
        for c, end in ends:
            ck = _leads_to(skel, role_of, c) if c >= 0 else ""
            ck = _kind(ck)
            if ck in ("clavicle", "upper_arm", "thigh") and kj != "clavicle":
                continue  # inside the torso
            L = float(np.linalg.norm(end - P[j]))
            if L < 1e-3:
                continue
            ra, rb, nt = _radii(kj, L, H)
            small = float(np.mean(ra)) < 0.01 * H  # fingers: a few pixels wide, fewer rings
            tubes.append(_segment(P[j], end, ra, rb, fwd, j, par(j) if j > 0 else -1,
                                  c, h[j], h[c] if c >= 0 else 0.0, nt,
                                  3 if small else max(4, int(np.ceil(L / (0.04 * H))) + 2),
                                  cap_a=0.7 if kj == "thigh" else 1.0, n_cap=3 if small else 4))
    return tubes


def _radii(kind: str, L: float, H: float) -> tuple[tuple, tuple, int]:
    if kind in _LIMB_RADII:
        r0, r1 = _LIMB_RADII[kind]
        return (r0 * H, r0 * H), (r1 * H, r1 * H), 16
    if kind in FINGERS:
        r = (0.0062 if kind == "thumb" else 0.0053) * H
        return (r, r), (0.85 * r, 0.85 * r), 8
    if kind == "toe":
        return (0.018 * H, 0.028 * H), (0.012 * H, 0.022 * H), 14
    r = float(np.clip(0.16 * L, 0.008 * H, 0.05 * H))
    return (r, r), (0.85 * r, 0.85 * r), 14


def _torso(cpts: np.ndarray, cown: list[int], H: float, fwd: np.ndarray, h: np.ndarray,
           ext_top: float, ext_bot: float, width_scale: float = 1.0) -> _Tube:
    """The torso lofted along the spine polyline ``cpts`` (owners ``cown``), extended
    ``ext_top`` past its top and at least ``ext_bot`` under its bottom, m, its width profile
    scaled by ``width_scale``."""
    seg = np.linalg.norm(np.diff(cpts, axis=0), axis=1)
    arc = np.concatenate([[0.0], np.cumsum(seg)])
    total = float(arc[-1]) + ext_top
    step = 0.025 * H
    t_lo = min(float(_TORSO_T[0]), -ext_bot / total)
    n = max(int(np.ceil((1.0 - t_lo) * total / step)), 8)
    tt = np.linspace(t_lo, 1.0, n + 1)
    s = tt * total
    centres = np.empty((len(s), 3))
    axes = np.empty((len(s), 3))
    for i, si in enumerate(s):
        k = int(np.clip(np.searchsorted(arc, si, side="right") - 1, 0, len(seg) - 1))
        u = _unit(cpts[k + 1] - cpts[k], np.array([0.0, 0.0, 1.0]))
        centres[i] = cpts[k] + (si - arc[k]) * u
        axes[i] = u
    wd = np.interp(tt, _TORSO_T, _TORSO_W) * H
    dd = np.interp(tt, _TORSO_T, _TORSO_D) * H
    wd = wd * width_scale
    # rounded bottom: shrink the lowest rings (over 0.08 H) to a closed seat
    bottom = np.clip((s - s[0]) / (0.08 * H), 0.0, 1.0)
    k_b = np.maximum(np.sqrt(1.0 - (1.0 - bottom) ** 2), 0.25)
    wd, dd = wd * k_b, dd * k_b
    d_dirs = np.empty_like(axes)
    w_dirs = np.empty_like(axes)
    for i, u in enumerate(axes):
        d_dirs[i], w_dirs[i] = _frame(u, fwd)
    centres = centres + (np.interp(tt, _TORSO_T, _TORSO_F) * H)[:, None] * d_dirs  # chest, seat
    jts = np.zeros((len(s), 3), np.int64)
    wts = np.zeros((len(s), 3))
    last = len(seg) - 1
    for i, si in enumerate(s):
        k = int(np.clip(np.searchsorted(arc, si, side="right") - 1, 0, last))
        owner = cown[k]
        jts[i, 0] = owner
        wts[i, 0] = 1.0
        if k > 0:  # blend with the joint below near this segment's start
            hk = h[cown[k]]
            w = float(_smooth(np.array((hk - (si - arc[k])) / (2 * hk))))
            jts[i, 1], wts[i, 1] = cown[k - 1], w
        if k < last:  # and with the next one near its end (not at the neck: shoulders stay)
            hk = h[cown[k + 1]]
            w = float(_smooth(np.array((si - arc[k + 1] + hk) / (2 * hk))))
            jts[i, 2], wts[i, 2] = cown[k + 1], w
        wts[i, 0] = 1.0 - wts[i, 1] - wts[i, 2]
    top_cap = 0.55 * float(dd[-1])
    return _Tube(centres, d_dirs, w_dirs, dd, wd, jts, wts, 28,
                 centres[0] - 0.6 * float(dd[0]) * axes[0], centres[-1] + top_cap * axes[-1])


def _hand(skel, j, P, S, sites_of, children, kind, role_of, H, fwd, h, par) -> list[_Tube]:
    """Palm from the wrist towards the finger bases; the fingers are built as bones."""
    fingers = [c for c in children[j] if _kind(_leads_to(skel, role_of, c)) in FINGERS]
    bases = [c for c in fingers if _kind(_leads_to(skel, role_of, c)) != "thumb"]
    tubes: list[_Tube] = []
    if bases:
        end = P[bases].mean(axis=0)
        spread_pts = P[bases] - end
    elif children[j]:
        end = P[list(children[j])].mean(axis=0)
        spread_pts = np.zeros((0, 3))
    elif sites_of[j]:
        end = S[sites_of[j][0]]
        spread_pts = np.zeros((0, 3))
    else:
        d = _unit(P[j] - P[par(j)], fwd) if j > 0 else fwd
        end = P[j] + 0.08 * H * d
        spread_pts = np.zeros((0, 3))
    L = float(np.linalg.norm(end - P[j]))
    if L < 0.03 * H:  # fingers start at the wrist (a BVH hand): a palm of hand length
        d = _unit(end - P[j], _unit(P[j] - P[par(j)], fwd) if j > 0 else fwd)
        end = P[j] + 0.055 * H * d
        L = 0.055 * H
    axis = _unit(end - P[j], fwd)
    if len(spread_pts) >= 2:
        perp = spread_pts - np.outer(spread_pts @ axis, axis)
        _, _, vt = np.linalg.svd(perp)
        ref = vt[0]
        half = float(np.abs(perp @ ref).max()) + 0.007 * H
    else:
        ref = fwd - (fwd @ axis) * axis
        if np.linalg.norm(ref) < 0.3:
            ref = np.array([0.0, 0.0, 1.0])
        half = 0.028 * H
    width = max(half, 0.02 * H)
    thick = 0.5 * width
    tubes.append(_segment(P[j], end + 0.25 * L * axis, (0.7 * width, 1.0 * thick),
                          (width, thick), ref, j, par(j) if j > 0 else -1, -1, h[j], 0.0, 16, 6,
                          cap_a=0.6, cap_b=0.5))
    # the fingers themselves are ordinary bones (built by the caller's loop); the wrist's own
    # bones to them are covered by the palm
    for c in children[j]:
        ck = _kind(_leads_to(skel, role_of, c))
        if ck in FINGERS or c in fingers:
            continue
        L = float(np.linalg.norm(P[c] - P[j]))
        if L > 1e-3:
            ra, rb, nt = _radii(ck, L, H)
            tubes.append(_segment(P[j], P[c], ra, rb, fwd, j, par(j), c, h[j], h[c], nt, 4))
    return tubes


def _foot(skel, j, P, S, sites_of, children, kind, H, fwd, h, par) -> list[_Tube]:
    """From the heel (under and behind the ankle) to the toe joint (or a foot length)."""
    toes = [c for c in children[j] if kind.get(c) == "toe"] or list(children[j])
    ground = min([P[j][2] - 0.04 * H] + [S[i][2] for i in sites_of[j]])
    f = fwd - (fwd @ np.array([0.0, 0.0, 1.0])) * np.array([0.0, 0.0, 1.0])
    f = _unit(f, np.array([1.0, 0.0, 0.0]))
    if toes:
        tip = P[toes[0]].copy()
    else:
        tip = P[j] + 0.08 * H * f
    sole = max(ground, P[j][2] - 0.06 * H)
    hw, hh = 0.026 * H, 0.5 * (P[j][2] - sole) + 0.004 * H
    hh = float(np.clip(hh, 0.012 * H, 0.035 * H))
    heel = np.array([P[j][0], P[j][1], sole + hh]) - 0.035 * H * f
    tip_c = np.array([tip[0], tip[1], min(tip[2], sole + 0.7 * hh)])
    c = toes[0] if toes else -1
    return [_segment(heel, tip_c, (hh, 0.75 * hw), (0.7 * hh, hw), np.array([0.0, 0.0, 1.0]), j,
                     par(j) if j > 0 else -1, c, 0.4 * h[j], h[c] if c >= 0 else 0.0, 18, 8,
                     cap_a=0.9, cap_b=0.6)]


def _head(j, base, P, S, sites_of, children, H, fwd, h, par, blend=True) -> _Tube:
    """An ellipsoid from the chin (a little under the head joint) to the top of the head, up
    along the head joint's end site (or child) when it has one."""
    up = np.array([0.0, 0.0, 1.0])
    top = None
    for i in sites_of[j]:
        if np.linalg.norm(S[i] - P[j]) > 0.02 * H:
            top = S[i]
            break
    if top is None and children[j]:
        top = P[list(children[j])].mean(axis=0)
    axis = up if top is None else _unit(top - P[j], up)
    if axis @ up < 0.5:
        axis = up
    rd, rw = 0.060 * H, 0.048 * H
    bottom = base - 0.012 * H * axis + 0.012 * H * fwd
    top = base + 0.115 * H * axis + 0.012 * H * fwd
    cap = 0.5 * (rd + rw)
    a, b = bottom + cap * axis, top - cap * axis
    return _segment(a, b, (rd, rw), (rd, rw), fwd, j, par(j) if j > 0 and blend else -1, -1,
                    h[j], 0.0, 20, 4, cap_a=1.0, cap_b=1.0, n_cap=9)


def _vertex_normals(P: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Unit vertex normals ``(V, 3)``: the area-weighted sum of the adjacent faces' normals
    (scale-free: no area tolerance, unlike ``trimesh``'s, which drops tiny faces)."""
    tri = P[F]
    fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])  # |fn| = 2 area
    vn = np.zeros_like(P)
    for k in range(3):
        np.add.at(vn, F[:, k], fn)
    n = np.linalg.norm(vn, axis=1, keepdims=True)
    return np.where(n > 0, vn / np.where(n > 0, n, 1.0), np.array([0.0, 0.0, 1.0]))


def build_body(skel: Skeleton, material: Material = BODY_MATERIAL) -> SkinnedMesh:
    """A new generated body of ``skel`` (see the module docstring); prefer :func:`generated_body`.

    Returns:
        A :class:`SkinnedMesh` bound to ``skel`` at its rest pose, one material.
    """
    pos, faces, jts, wts = [], [], [], []
    off = 0
    for tube in body_segments(skel):
        p, f, j, w = _tube_mesh(tube)
        pos.append(p)
        faces.append(f + off)
        jts.append(j)
        wts.append(w)
        off += len(p)
    P = np.concatenate(pos)
    F = np.concatenate(faces).astype(np.int64)
    Jt = np.concatenate(jts)
    W = np.concatenate(wts)
    normals = _vertex_normals(P, F)
    joints = np.zeros((len(P), MAX_INFLUENCES), np.uint16)
    weights = np.zeros((len(P), MAX_INFLUENCES), np.float32)
    W = np.where(W > 1e-6, W, 0.0)
    W /= W.sum(axis=1, keepdims=True)
    joints[:, :3] = np.where(W > 0, Jt, 0)
    weights[:, :3] = W
    fk = forward_kinematics(skel, skel.rest_q)
    wfj = homogeneous(fk.joint_rotations, fk.joint_positions)
    return SkinnedMesh(positions=P.astype(np.float32), normals=normals.astype(np.float32),
                       faces=F.astype(np.uint32), joints=joints, weights=weights,
                       inverse_bind=np.linalg.inv(wfj), materials=(material,))


def generated_body(skel: Skeleton) -> SkinnedMesh:
    """The generated body of ``skel``, built once per skeleton (:func:`animik.cache.cached`)."""
    return cached(skel, "bodies.generated_body", lambda: build_body(skel))


__all__ = ["BODY_MATERIAL", "body_segments", "build_body", "generated_body"]
