"""Joint-level kinematics for animation: rotation groups, local transforms, DoFs from a transform.

A joint's DoFs compose ``D_0(q_0) @ D_1(q_1) @ ...`` after its rest transform (see
:mod:`animik.skeleton`). For animation, the rotation DoFs of a joint that form a *rotation
group* are interpolated as one rotation (slerp or a cubic on SO(3)) and converted back to DoF
values; every other DoF is interpolated on its own. A rotation group is 2 or 3 **consecutive**
rotation DoFs of one joint with mutually orthogonal axes (signed principal axes such as a BVH
``Zrotation Xrotation Yrotation`` triple or the rigs' ``-z, x, y`` shoulders, or any orthogonal
axes), and the joint has no other rotation DoF.

Converting a rotation back to the DoFs of a group (:func:`group_angles`):

* 3 DoFs: closed-form Tait–Bryan decomposition in the group's own axis order (the axes are
  rotated onto ``x, y, z`` by a fixed basis change), both branches ``(a, b, c)`` and
  ``(a + π, π − b, c + π)``, each angle shifted by ``2πk`` to the value nearest a reference;
  the branch nearest the reference within the limits wins. At gimbal lock only ``a ± c`` is
  defined: it is split to be nearest the reference.
* 2 DoFs (and any other rotation chain): the least-squares rotation
  ``argmin ‖R − R_0(θ_0) R_1(θ_1)‖_F`` by exact coordinate ascent (each step is the closed-form
  optimum of one angle) started at the reference, so the result is the local optimum next to
  it and continuous along a path.

Results are clipped into the DoF limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cache import cached
from .rotations import axis_angle_to_matrix, matrix_from_axis_chain, matrix_from_fixed_axis
from .skeleton import ROTATION, TRANSLATION, Skeleton

TWO_PI = 2.0 * np.pi
_ORTHO_TOL = 1e-9
_LOCK_COS = 1e-7  # |cos(middle angle)| below this: gimbal lock, only a ± c is defined


@dataclass(frozen=True, eq=False)
class RotationGroup:
    """Rotation DoFs of one joint interpolated together as a rotation.

    Attributes:
        joint: joint index.
        dofs: ``(k,)`` global DoF indices (k = 2 or 3), consecutive, in DoF order.
        axes: ``(k, 3)`` unit axes in the joint frame.
        basis: ``(3, 3)`` proper rotation ``Q`` with ``rot(axes[i], θ) = Q rot(e_i, s_i θ) Qᵀ``.
        signs: ``(k,)`` ``s_i`` (±1; only the third axis of a left-handed triple is -1).
    """

    joint: int
    dofs: np.ndarray
    axes: np.ndarray
    basis: np.ndarray
    signs: np.ndarray

    @property
    def k(self) -> int:
        return int(self.dofs.shape[0])


@dataclass(frozen=True, eq=False)
class JointLayout:
    """How one joint's DoFs are interpolated and recovered.

    Attributes:
        joint: joint index.
        dofs: ``(d,)`` global DoF indices of the joint.
        group: the rotation group, or ``None``.
        rotations: ``(r,)`` global indices of the rotation DoFs (in order).
        translations: ``(t,)`` global indices of the translation DoFs (in order).
    """

    joint: int
    dofs: np.ndarray
    group: RotationGroup | None
    rotations: np.ndarray
    translations: np.ndarray


def joint_layouts(skel: Skeleton) -> tuple[JointLayout, ...]:
    """Layouts of every joint (cached per skeleton)."""
    return cached(skel, "joints.layouts", lambda: _build_layouts(skel))


def _build_layouts(skel: Skeleton) -> tuple[JointLayout, ...]:
    out = []
    for j in range(skel.n_joints):
        dofs = np.array(list(skel.joint_dofs(j)), dtype=np.int64)
        rot = dofs[skel.dof_type[dofs] == ROTATION]
        trans = dofs[skel.dof_type[dofs] == TRANSLATION]
        out.append(JointLayout(j, dofs, _make_group(skel, j, rot), rot, trans))
    return tuple(out)


def _make_group(skel: Skeleton, j: int, rot: np.ndarray) -> RotationGroup | None:
    k = len(rot)
    if k not in (2, 3) or np.any(np.diff(rot) != 1):
        return None
    axes = np.array(skel.dof_axis[rot], dtype=float)
    for a in range(k):
        for b in range(a + 1, k):
            if abs(float(axes[a] @ axes[b])) > _ORTHO_TOL:
                return None
    signs = np.ones(k)
    third = np.cross(axes[0], axes[1])
    if k == 3:
        if float(third @ axes[2]) < 0:
            signs[2] = -1.0
    basis = np.stack([axes[0], axes[1], third], axis=1)
    for arr in (rot, axes, basis, signs):
        arr.setflags(write=False)
    return RotationGroup(j, rot, axes, basis, signs)


# ---------------------------------------------------------------------------------- transforms
#: ``rot(axes[0], angles[..., 0]) @ rot(axes[1], angles[..., 1]) @ ...`` of a joint's rotation
#: DoFs (:func:`animik.rotations.matrix_from_axis_chain`).
dof_rotation_product = matrix_from_axis_chain


def local_transforms(skel: Skeleton, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``parent_from_joint(q)`` of every joint as rotation and translation.

    Args:
        skel: the skeleton.
        q: ``(..., n_dof)`` poses.

    Returns:
        ``(rotations (..., J, 3, 3), translations (..., J, 3))``; the root's is world_from_root.
    """
    q = np.asarray(q, dtype=float)
    lead = q.shape[:-1]
    J = skel.n_joints
    rots = np.empty(lead + (J, 3, 3))
    pos = np.empty(lead + (J, 3))
    for j in range(J):
        r = np.broadcast_to(skel.rest_rotations[j], lead + (3, 3)).copy()
        p = np.broadcast_to(skel.offsets[j], lead + (3,)).copy()
        for k in skel.joint_dofs(j):
            ax = skel.dof_axis[k]
            if skel.dof_type[k] == ROTATION:
                r = r @ axis_angle_to_matrix(ax, q[..., k])
            else:
                p = p + (r @ ax) * q[..., k, None]
        rots[..., j, :, :] = r
        pos[..., j, :] = p
    return rots, pos


# ---------------------------------------------------------------------------------- angles
def wrap_near(angles: np.ndarray, ref: np.ndarray, lower: np.ndarray | None = None,
              upper: np.ndarray | None = None) -> np.ndarray:
    """``angles + 2πk`` nearest ``ref`` (elementwise); within ``[lower, upper]`` when a shift
    can put it there and the nearest one does not."""
    a = np.asarray(angles, dtype=float)
    out = a + TWO_PI * np.round((ref - a) / TWO_PI)
    if lower is None:
        return out
    lower = np.broadcast_to(lower, out.shape)
    upper = np.broadcast_to(upper, out.shape)
    bad = (out < lower) | (out > upper)
    if np.any(bad):
        with np.errstate(invalid="ignore"):
            lifted = a + TWO_PI * np.ceil((lower - a) / TWO_PI)  # smallest shift >= lower
        ok = bad & np.isfinite(lifted) & (lifted <= upper)
        out = np.where(ok, lifted, out)
    return out


def _limit_violation(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.sum(np.maximum(lo - x, 0.0) + np.maximum(x - hi, 0.0), axis=-1)


def group_angles(group: RotationGroup, rot: np.ndarray, ref: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray) -> np.ndarray:
    """DoF values of a rotation group that reproduce ``rot``, nearest ``ref``, within limits.

    Args:
        group: the group.
        rot: ``(..., 3, 3)`` rotation of the group (product of its DoF rotations).
        ref: ``(..., k)`` reference values (the branch and 2π shift nearest it is chosen; the
            2-DoF least-squares search starts from it).
        lower, upper: ``(k,)`` limits.

    Returns:
        ``(..., k)`` values, clipped into the limits.
    """
    rot = np.asarray(rot, dtype=float)
    ref = np.broadcast_to(np.asarray(ref, dtype=float), rot.shape[:-2] + (group.k,))
    if group.k == 2:
        # Start from the first two angles of the Tait-Bryan decomposition of the completed
        # triple (exact for reachable rotations, second-order close otherwise), then polish.
        m = group.basis.T @ rot @ group.basis
        start = np.stack([np.arctan2(-m[..., 1, 2], m[..., 2, 2]),
                          np.arctan2(m[..., 0, 2], np.hypot(m[..., 0, 0], m[..., 0, 1]))], axis=-1)
        out = chain_angles(group.axes, rot, wrap_near(start, ref), iterations=0)
        out = wrap_near(out, ref, lower, upper)
        return np.clip(out, lower, upper)
    Q = group.basis
    return tb_angles(Q.T @ rot @ Q, group.signs, ref, lower, upper)


def tb_angles(m: np.ndarray, signs: np.ndarray, ref: np.ndarray, lower: np.ndarray,
              upper: np.ndarray) -> np.ndarray:
    """Tait–Bryan angles of canonical matrices ``m = Rx(a) Ry(b) Rz(c)``, as DoF values.

    Args:
        m: ``(..., 3, 3)`` group rotation in the group's canonical basis.
        signs: ``(..., 3)`` DoF value = canonical angle × sign.
        ref: ``(..., 3)`` reference DoF values.
        lower, upper: ``(..., 3)`` limits.

    Returns:
        ``(..., 3)`` DoF values nearest ``ref`` (branch and 2π shifts), clipped into the limits.
    """
    ref_c = ref * signs  # reference in canonical angles
    b = np.arctan2(m[..., 0, 2], np.hypot(m[..., 0, 0], m[..., 0, 1]))
    a = np.arctan2(-m[..., 1, 2], m[..., 2, 2])
    c = np.arctan2(-m[..., 0, 1], m[..., 0, 0])
    cb = np.hypot(m[..., 0, 0], m[..., 0, 1])
    lock = cb < _LOCK_COS
    if np.any(lock):
        # Rx(a) Ry(±π/2) Rz(c) = Rx(a ± c) Ry(±π/2): split the sum nearest the reference.
        sig = np.where(m[..., 0, 2] >= 0, 1.0, -1.0)
        total = np.arctan2(m[..., 2, 1], m[..., 1, 1])
        rs = ref_c[..., 0] + sig * ref_c[..., 2]
        total = total + TWO_PI * np.round((rs - total) / TWO_PI)
        lam = 0.5 * (total - rs)
        a = np.where(lock, ref_c[..., 0] + lam, a)
        c = np.where(lock, ref_c[..., 2] + sig * lam, c)
        b = np.where(lock, sig * 0.5 * np.pi, b)
    cand = np.stack([np.stack([a, b, c], -1), np.stack([a + np.pi, np.pi - b, c + np.pi], -1)], -2)
    cand = cand * signs[..., None, :]  # back to DoF values, (..., 2, 3)
    lo = np.broadcast_to(lower, ref.shape)[..., None, :]
    hi = np.broadcast_to(upper, ref.shape)[..., None, :]
    cand = wrap_near(cand, ref[..., None, :], lo, hi)
    viol = _limit_violation(cand, lo, hi)
    dist = np.sum((cand - ref[..., None, :]) ** 2, axis=-1)
    pick = np.argmin(dist + 1e6 * viol, axis=-1)
    out = np.take_along_axis(cand, pick[..., None, None], axis=-2)[..., 0, :]
    return np.clip(out, lo[..., 0, :], hi[..., 0, :])


def _best_axis_angle(axis: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``argmax_θ tr(rot(axis, θ) @ n)`` for ``n (..., 3, 3)`` (closed form)."""
    x, y, z = axis
    # tr(A n) = sum(A * nᵀ); A = cosθ I + sinθ [u]x + (1 - cosθ) u uᵀ
    tr = n[..., 0, 0] + n[..., 1, 1] + n[..., 2, 2]
    unu = np.einsum("i,...ij,j->...", axis, n, axis)
    skew = (-z * n[..., 1, 0] + y * n[..., 2, 0] + z * n[..., 0, 1] - x * n[..., 2, 1]
            - y * n[..., 0, 2] + x * n[..., 1, 2])
    return np.arctan2(skew, tr - unu)


def chain_angles(axes: np.ndarray, rot: np.ndarray, ref: np.ndarray, iterations: int = 50,
                 tol: float = 1e-12) -> np.ndarray:
    """Least-squares angles of a chain of rotations about ``axes`` reproducing ``rot``.

    Maximises ``tr(rot(axes[0], θ0) ... rot(axes[k-1], θk-1) @ rotᵀ)`` (equivalently minimises
    the geodesic angle to ``rot``): sweeps of coordinate ascent from ``ref`` (each update is the
    exact optimum of one angle given the others; at most ``iterations``, until the angles move
    less than 1e-6), then Gauss–Newton steps on the
    body-frame rotation error ``log(R(θ)ᵀ rot)`` (whose fixed point ``Jᵀ r = 0`` is exactly the
    stationarity condition) until the step is below ``tol``.

    Args:
        axes: ``(k, 3)`` unit axes.
        rot: ``(..., 3, 3)`` target rotation.
        ref: ``(..., k)`` start values.

    Returns:
        ``(..., k)`` angles (each in ``(-π, π]``; shift them with :func:`wrap_near`).
    """
    k = axes.shape[0]
    th = np.array(np.broadcast_to(ref, rot.shape[:-2] + (k,)), dtype=float)
    if k == 0:
        return th
    rt = np.swapaxes(rot, -1, -2)
    mats = [matrix_from_fixed_axis(axes[i], th[..., i]) for i in range(k)]
    for _ in range(iterations):
        change = 0.0
        for i in range(k):
            # tr(R0..Rk-1 rotᵀ) = tr(R_i @ (R_{i+1}..R_{k-1} rotᵀ R_0..R_{i-1}))
            n = rt
            for jj in range(k - 1, i, -1):
                n = mats[jj] @ n
            for jj in range(i):
                n = n @ mats[jj]
            new = _best_axis_angle(axes[i], n)
            new = wrap_near(new, th[..., i])
            change = max(change, float(np.max(np.abs(new - th[..., i]), initial=0.0)))
            th[..., i] = new
            mats[i] = matrix_from_fixed_axis(axes[i], new)
        if k == 1 or change < tol:
            return th
        if change < 1e-6:  # in the basin: Gauss-Newton converges quadratically from here
            break
    # Gauss-Newton (coordinate ascent converges only linearly) on the body-frame error
    # r = vee(skew(R(θ)ᵀ rot)) (the rotation vector to first order) against the body-frame
    # Jacobian columns (R_{i+1} ... R_{k-1})ᵀ axis_i; Jᵀ r is the gradient of the trace, so the
    # fixed point is the least-squares optimum.
    eye_k = np.eye(k) * 1e-12
    for _ in range(30):
        after = np.broadcast_to(np.eye(3), rot.shape).copy()
        cols = [None] * k
        for i in range(k - 1, -1, -1):
            cols[i] = np.einsum("...ji,j->...i", after, axes[i])
            after = mats[i] @ after
        e = np.swapaxes(after, -1, -2) @ rot
        r = 0.5 * np.stack([e[..., 2, 1] - e[..., 1, 2], e[..., 0, 2] - e[..., 2, 0],
                            e[..., 1, 0] - e[..., 0, 1]], axis=-1)
        jac = np.stack(cols, axis=-1)  # (..., 3, k)
        jtj = np.einsum("...ai,...aj->...ij", jac, jac) + eye_k
        step = np.linalg.solve(jtj, np.einsum("...ai,...a->...i", jac, r)[..., None])[..., 0]
        th = th + step
        mats = [matrix_from_fixed_axis(axes[i], th[..., i]) for i in range(k)]
        if float(np.max(np.abs(step), initial=0.0)) < tol:
            break
    return th


def dofs_from_local(skel: Skeleton, rotations: np.ndarray, translations: np.ndarray,
                    ref: np.ndarray, sequential: bool = False) -> np.ndarray:
    """DoF values whose local joint transforms best reproduce the given ones.

    Used to read poses back from formats that store joint transforms (glTF). Rotation DoFs
    come first from the rotation (rotation groups in closed form or least squares, other
    chains by :func:`chain_angles`), then translation DoFs by least squares.

    Args:
        skel: the skeleton.
        rotations: ``(B, J, 3, 3)`` parent_from_joint rotations.
        translations: ``(B, J, 3)`` parent_from_joint translations, m.
        ref: ``(B, n_dof)`` reference poses (branches and 2π shifts nearest them), or with
            ``sequential`` an ``(n_dof,)`` reference for the first pose.
        sequential: the B poses are consecutive frames of a motion: each frame's branch and
            2π shift is the one nearest the previous frame (no jumps), the first frame's the one
            nearest ``ref``.

    Returns:
        ``(B, n_dof)`` poses within the limits.
    """
    rotations = np.asarray(rotations, dtype=float)
    translations = np.asarray(translations, dtype=float)
    B = rotations.shape[0]
    ref = np.asarray(ref, dtype=float)
    if sequential:
        first = ref
        ref = np.broadcast_to(ref, (B, skel.n_dof))
    q = np.array(ref, dtype=float)
    tb: list[tuple[JointLayout, np.ndarray]] = []
    for lay in joint_layouts(skel):
        j = lay.joint
        if len(lay.rotations) == 0:
            continue
        d_rot = skel.rest_rotations[j].T @ rotations[:, j]
        lo, hi = skel.lower[lay.rotations], skel.upper[lay.rotations]
        r_ref = ref[:, lay.rotations]
        if lay.group is not None and lay.group.k == 3:
            Q = lay.group.basis
            canon = Q.T @ d_rot @ Q
            if sequential:
                tb.append((lay, canon))
            else:
                q[:, lay.rotations] = tb_angles(canon, lay.group.signs, r_ref, lo, hi)
            continue
        ang = chain_angles(skel.dof_axis[lay.rotations], d_rot, r_ref)
        if sequential:
            ang = np.unwrap(ang, axis=0)
            ang = ang + TWO_PI * np.round((first[lay.rotations] - ang[:1]) / TWO_PI)
        else:
            ang = wrap_near(ang, r_ref, lo, hi)
        q[:, lay.rotations] = np.clip(ang, lo, hi)
    if tb:
        canon = np.stack([c for _, c in tb])  # (G, B, 3, 3)
        idx = np.stack([lay.rotations for lay, _ in tb])  # (G, 3)
        signs = np.stack([lay.group.signs for lay, _ in tb])
        lo, hi = skel.lower[idx], skel.upper[idx]
        prev = first[idx]
        for b in range(B):
            prev = tb_angles(canon[:, b], signs, prev, lo, hi)
            q[b, idx] = prev
    for lay in joint_layouts(skel):
        if len(lay.translations) == 0:
            continue
        j = lay.joint
        rest_t = skel.rest_rotations[j].T
        d_pos = np.einsum("ab,nb->na", rest_t, translations[:, j] - skel.offsets[j])
        # Translation of the DoF chain: sum over translation DoFs of R_before(k) axis_k q_k.
        cols = []
        r = np.broadcast_to(np.eye(3), (B, 3, 3)).copy()
        for k in lay.dofs:
            ax = skel.dof_axis[k]
            if skel.dof_type[k] == ROTATION:
                r = r @ axis_angle_to_matrix(ax, q[:, k])
            else:
                cols.append(r @ ax)
        a = np.stack(cols, axis=-1)  # (B, 3, t)
        sol = np.einsum("bij,bj->bi", np.linalg.pinv(a), d_pos)
        q[:, lay.translations] = np.clip(sol, skel.lower[lay.translations],
                                         skel.upper[lay.translations])
    return q
