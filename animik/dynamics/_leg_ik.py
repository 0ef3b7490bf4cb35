"""Batched leg IK of the plant step (docs/dynamics.md section 5d (d)): sole points to targets.

One compiled call runs the damped Gauss-Newton of every held frame: per frame, the forward
kinematics of :func:`animik._kernels.fk_one` (world DoF axes and the points they act at), the
points' Jacobian on the chosen DoFs (revolute ``w x (x - p)``, prismatic ``w``: seed C's
geometric columns, as :func:`animik._kernels.jac_one`), and the normal equations
``(J^T J + lam I) dq = J^T r - lam (q - q0)`` with steps of at most ``max_step`` rad.
Replaces a per-frame Python loop that ran the composite-rigid-body algorithm (the mass
matrix, unused) at every iteration. The moved DoFs stay within the rig's joint limits
(``skel.lower`` / ``skel.upper``): a projected damped least squares (:func:`hold_batch`;
docs/dynamics.md 5i, "Joint limits in the leg IK and the plant step"); a BVH skeleton has
none and solves as before, bit for bit.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._kernels import _rot_mul
from ..kinematics import kernel_args
from ..rotations import matrix_from_axis_chain
from ..skeleton import Skeleton

#: rad: a moved DoF at one of its limits starts this far inside (:func:`hold_batch`: at a
#: straight knee's limit the first-order step does not see that bending it shortens the leg)
INSIDE = np.radians(5.0)

#: rad per frame: a leg joint turning this much more than the input's from one row to the next
#: is a flip to another leg solution (:func:`_no_flips`)
FLIP = 0.5


@nb.njit(cache=True, nogil=True)
def _fk_joints(q, sel, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, wax,
               wpt):
    """:func:`animik._kernels.fk_one` on the joints ``sel`` only (increasing, closed under
    parents): a leg's points need their chain, not the whole body (body95: ~6 of 52 joints).
    The arithmetic per joint is ``fk_one``'s, so the values are bit-identical to it. A copy on
    purpose: one per-joint helper inlined into both made ``fk_one`` (the IK's hot path) 4.4 ->
    6.7 us on body95 (numba ``inline="always"``; 14.6 us as a call)."""
    R = np.empty((3, 3))
    tmp = np.empty((3, 3))
    t = np.empty(3)
    for i in range(sel.shape[0]):
        j = sel[i]
        p = parents[j]
        o = offsets[j]
        rr = rest_rots[j]
        if p < 0:
            for a in range(3):
                t[a] = o[a]
                for b in range(3):
                    R[a, b] = rr[a, b]
        else:
            Rp = Rw[p]
            for a in range(3):
                t[a] = pw[p, a] + Rp[a, 0] * o[0] + Rp[a, 1] * o[1] + Rp[a, 2] * o[2]
                for b in range(3):
                    R[a, b] = Rp[a, 0] * rr[0, b] + Rp[a, 1] * rr[1, b] + Rp[a, 2] * rr[2, b]
        for k in range(dof_start[j], dof_start[j + 1]):
            ax = dof_axis[k]
            w0 = R[0, 0] * ax[0] + R[0, 1] * ax[1] + R[0, 2] * ax[2]
            w1 = R[1, 0] * ax[0] + R[1, 1] * ax[1] + R[1, 2] * ax[2]
            w2 = R[2, 0] * ax[0] + R[2, 1] * ax[1] + R[2, 2] * ax[2]
            wax[k, 0] = w0
            wax[k, 1] = w1
            wax[k, 2] = w2
            if dof_type[k] == 0:
                wpt[k, 0] = t[0]
                wpt[k, 1] = t[1]
                wpt[k, 2] = t[2]
                _rot_mul(R, ax, q[k], tmp)
                for a in range(3):
                    for b in range(3):
                        R[a, b] = tmp[a, b]
            else:
                t[0] += w0 * q[k]
                t[1] += w1 * q[k]
                t[2] += w2 * q[k]
                wpt[k, 0] = t[0]
                wpt[k, 1] = t[1]
                wpt[k, 2] = t[2]
        for a in range(3):
            pw[j, a] = t[a]
            for b in range(3):
                Rw[j, a, b] = R[a, b]


@nb.njit(cache=True, nogil=True)
def hold_batch(q0, X, dofs, joints, local, chain, lam, iterations, max_step, tol, lo, hi, inside,
               parents, offsets, rest_rots, dof_start, dof_type, dof_axis, out, sel):
    """Damped Gauss-Newton per frame within box limits: ``q0 (B, n)``, targets ``X (B, P, 3)``
    -> ``out (B, n)``.

    ``dofs (m,)`` are the DoFs moved, ``joints (P,)`` / ``local (P, 3)`` the points (m, joint
    frame), ``chain (P, m)`` whether DoF ``dofs[i]`` moves point ``p``; ``sel`` the points'
    joints and their ancestors in increasing order (the only joints the forward kinematics
    evaluates, :func:`_fk_joints`). ``lo, hi (m,)`` the moved DoFs' limits (``±inf``: free):
    a projected damped least squares -- the start is clipped into the box shrunk by ``inside``
    (a straight knee at its limit is a singular point: the first-order step cannot tell that
    bending it shortens the leg; 5 deg in, it can), a DoF at a bound
    whose descent direction (``g``) points out of the box is held there (its row and column
    of the normal equations replaced by the identity, its step 0: the others re-solved
    without it), and every step is clipped into the box. Without finite limits the arithmetic
    is the unlimited solver's, bit for bit.
    """
    B, n = q0.shape
    P = joints.shape[0]
    m = dofs.shape[0]
    J = parents.shape[0]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    wax = np.empty((n, 3))
    wpt = np.empty((n, 3))
    x = np.empty((P, 3))
    Jf = np.zeros((3 * P, m))
    r = np.empty(3 * P)
    H = np.empty((m, m))
    g = np.empty(m)
    fixed = np.zeros(m, dtype=np.bool_)
    for b in range(B):
        q = q0[b].copy()
        for i in range(m):
            k = dofs[i]
            if hi[i] - lo[i] > 2.0 * inside:
                q[k] = min(max(q[k], lo[i] + inside), hi[i] - inside)
            else:
                q[k] = min(max(q[k], lo[i]), hi[i])
        for _ in range(iterations):
            _fk_joints(q, sel, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
                       Rw, pw, wax, wpt)
            rmax = 0.0
            for p in range(P):
                j = joints[p]
                for a in range(3):
                    x[p, a] = pw[j, a] + Rw[j, a, 0] * local[p, 0] + Rw[j, a, 1] * local[p, 1] \
                        + Rw[j, a, 2] * local[p, 2]
                    r[3 * p + a] = X[b, p, a] - x[p, a]
                    if abs(r[3 * p + a]) > rmax:
                        rmax = abs(r[3 * p + a])
            if rmax < tol:
                break
            for p in range(P):
                for i in range(m):
                    k = dofs[i]
                    if not chain[p, i]:
                        Jf[3 * p, i] = 0.0
                        Jf[3 * p + 1, i] = 0.0
                        Jf[3 * p + 2, i] = 0.0
                        continue
                    w0, w1, w2 = wax[k, 0], wax[k, 1], wax[k, 2]
                    if dof_type[k] == 0:
                        dx = x[p, 0] - wpt[k, 0]
                        dy = x[p, 1] - wpt[k, 1]
                        dz = x[p, 2] - wpt[k, 2]
                        Jf[3 * p, i] = w1 * dz - w2 * dy
                        Jf[3 * p + 1, i] = w2 * dx - w0 * dz
                        Jf[3 * p + 2, i] = w0 * dy - w1 * dx
                    else:
                        Jf[3 * p, i] = w0
                        Jf[3 * p + 1, i] = w1
                        Jf[3 * p + 2, i] = w2
            for i in range(m):
                s = 0.0
                for rr in range(3 * P):
                    s += Jf[rr, i] * r[rr]
                g[i] = s - lam * (q[dofs[i]] - q0[b, dofs[i]])
                for l in range(i, m):
                    s = 0.0
                    for rr in range(3 * P):
                        s += Jf[rr, i] * Jf[rr, l]
                    H[i, l] = s
                    H[l, i] = s
                H[i, i] += lam
            nfix = 0
            for i in range(m):  # at a bound and pushed out of the box: held there
                k = dofs[i]
                fixed[i] = (q[k] <= lo[i] and g[i] < 0.0) or (q[k] >= hi[i] and g[i] > 0.0)
                if fixed[i]:
                    nfix += 1
            if nfix:
                for i in range(m):
                    if fixed[i]:
                        g[i] = 0.0
                        for l in range(m):
                            H[i, l] = 0.0
                            H[l, i] = 0.0
                        H[i, i] = 1.0
            dq = np.linalg.solve(H, g)
            big = 0.0
            for i in range(m):
                if abs(dq[i]) > big:
                    big = abs(dq[i])
            scale = min(1.0, max_step / big) if big > 0 else 1.0
            for i in range(m):
                k = dofs[i]
                q[k] = min(max(q[k] + dq[i] * scale, lo[i]), hi[i])
        out[b] = q


def area_leg(skel: Skeleton, contacts, a: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contact area ``a``'s points, their joints and its leg's DoFs (every DoF of the area's
    joints' ancestors except the root's): what :func:`hold_points` moves to hold the area.

    Returns:
        ``(points (P_a,), joints (P_a,), dofs (d,))`` indices.
    """
    P_a = np.flatnonzero(contacts.point_area == a)
    joints = contacts.point_joint[P_a]
    legj = skel.joint_ancestor_mask[np.unique(joints)].any(axis=0)
    legj[int(np.flatnonzero(skel.parents < 0)[0])] = False
    return P_a, joints, np.flatnonzero(legj[skel.dof_joint])


def hold_points(skel: Skeleton, q0: np.ndarray, dofs: np.ndarray, joints: np.ndarray,
                local: np.ndarray, X: np.ndarray, lam: float, iterations: int,
                max_step: float = 0.2, tol: float = 1e-4, no_flips: bool = False,
                inside: float = INSIDE) -> np.ndarray:
    """Move ``dofs`` of each pose so that points ``local`` of ``joints`` reach ``X``, within
    the skeleton's joint limits (a target the limited leg cannot reach is missed: the caller
    measures the miss).

    Args:
        skel: the skeleton.
        q0: ``(B, n_dof)`` poses (the reference each frame is pulled toward).
        dofs: ``(m,)`` DoF indices moved (a leg's).
        joints: ``(P,)`` joint of each point. local: ``(P, 3)`` m, the points in their joints.
        X: ``(B, P, 3)`` m, world targets.
        lam: m^2/rad^2, weight of the pull toward ``q0``.
        iterations: Gauss-Newton iterations (at most) per frame.
        max_step: rad, the largest DoF change per iteration.
        tol: m, stop when every residual component is below it.
        inside: rad (m for a slide), a DoF at (or beyond) a limit starts this far inside it.
        no_flips: re-solve rows where the leg flips to another solution (:func:`_no_flips`;
            the plant step's holds; the hip strategy moves the pelvis on purpose and keeps its
            own reach test).

    Returns:
        ``(B, n_dof)`` poses.
    """
    q0 = np.ascontiguousarray(q0, dtype=float)
    out = np.empty_like(q0)
    if q0.shape[0] == 0:
        return out
    dofs = np.ascontiguousarray(dofs, dtype=np.int64)
    joints = np.ascontiguousarray(joints, dtype=np.int64)
    chain = np.ascontiguousarray(skel.joint_ancestor_mask[joints][:, skel.dof_joint[dofs]])
    par, off, rr, ds, dt, dax = kernel_args(skel)[:6]
    sel = np.flatnonzero(skel.joint_ancestor_mask[joints].any(axis=0)).astype(np.int64)
    X = np.ascontiguousarray(X, dtype=float)
    local = np.ascontiguousarray(local, dtype=float)
    lo = np.ascontiguousarray(skel.lower[dofs], dtype=float)
    hi = np.ascontiguousarray(skel.upper[dofs], dtype=float)
    args = (dofs, joints, local, chain, float(lam), int(iterations), float(max_step), float(tol),
            lo, hi, float(inside), par, off, rr, ds, dt, dax)
    hold_batch(q0, X, *args, out, sel)
    return _no_flips(skel, q0, X, out, args, sel) if no_flips else out


def _no_flips(skel: Skeleton, q0: np.ndarray, X: np.ndarray, out: np.ndarray, args,
              sel: np.ndarray) -> np.ndarray:
    """Rows where a leg joint turns by more than ``FLIP`` rad more than the input does from the
    row before (the Gauss-Newton went to another leg holding the same sole: near gimbal lock
    the steps in Euler angles differ from frame to frame; raw mocapbank's stance leg turned
    80-125 deg in one frame) are solved again from the row before's leg, pulled toward it,
    in order, so a run follows on (docs/dynamics.md 5j)."""
    dofs = args[0]
    moved = np.unique(skel.dof_joint[dofs])
    groups = [np.array([d for d in dofs if skel.dof_joint[d] == j and skel.dof_type[d] == 0])
              for j in moved]
    groups = [g for g in groups if len(g)]

    def turn(qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
        t = np.zeros(qa.shape[0])
        for g in groups:
            Ra = matrix_from_axis_chain(skel.dof_axis[g], qa[:, g])
            Rb = matrix_from_axis_chain(skel.dof_axis[g], qb[:, g])
            c = 0.5 * (np.einsum("tij,tij->t", Ra, Rb) - 1.0)
            t = np.maximum(t, np.arccos(np.clip(c, -1.0, 1.0)))
        return t

    if out.shape[0] < 2 or not groups:
        return out
    excess = turn(out[1:], out[:-1]) - turn(q0[1:], q0[:-1])
    bad = np.flatnonzero(excess > FLIP)
    if not len(bad):
        return out
    one = np.empty((1, out.shape[1]))
    b = int(bad[0]) + 1
    while b < out.shape[0]:
        e = (turn(out[b:b + 1], out[b - 1:b]) - turn(q0[b:b + 1], q0[b - 1:b]))[0]
        if e > FLIP:
            start = q0[b:b + 1].copy()
            start[0, dofs] = out[b - 1, dofs]
            hold_batch(start, X[b:b + 1], *args, one, sel)
            if turn(one, out[b - 1:b])[0] < turn(out[b:b + 1], out[b - 1:b])[0]:
                out[b] = one[0]
            b += 1  # the next row is measured against this one
            continue
        nxt = bad[bad + 1 > b]
        if not len(nxt):
            break
        b = int(nxt[0]) + 1
    return out
