"""Compiled parts of :mod:`animik.retarget.fit`: Gauss–Newton refinement, local rotations.

:func:`gn_refine` is :func:`animik.retarget.fit.refine_numpy` row by row: the same Rodrigues
matrices, suffix products, rotation-vector residual (Shepperd's quaternion, then
``2 atan2(|v|, w)``), the same regularisation along the weakest eigenvector of ``BᵀB`` and
LU with partial pivoting for the step (LAPACK ``gesv``'s algorithm) and LAPACK's ``syevd``
through numba for the eigenvector. The numpy form allocates a dozen ``(N, ...)``
temporaries per iteration for rows of two or three angles, which made it the largest part of
a retarget's preparation (≈ 60 % of it on the shared mocap); this runs ≈ 4× faster and agrees
to rounding (≈ 1e-15 rad; tests/retarget/test_retarget_fast.py).
"""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = dict(cache=True, nogil=True)


@nb.njit(**_JIT)
def _rodrigues(a: np.ndarray, angle: float, out: np.ndarray) -> None:
    """``out (3, 3) = Rot(a, angle)`` for a unit axis ``a`` (as ``matrix_from_axis_angle``)."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = a[0], a[1], a[2]
    out[0, 0] = t * x * x + c
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = t * y * y + c
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = t * z * z + c


@nb.njit(**_JIT)
def _matmul3(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@nb.njit(**_JIT)
def _rotvec(m: np.ndarray, out: np.ndarray) -> None:
    """``out (3,)``: the rotation vector of ``m (3, 3)`` (``rotvec_from_matrix``: Shepperd's
    quaternion with w >= 0, normalised, then ``2 atan2(|v|, w) v / |v|``)."""
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    best = 0
    top = tr
    for c in range(3):
        if m[c, c] > top:  # the first largest candidate, as np.argmax
            top = m[c, c]
            best = c + 1
    q = np.empty(4)
    if best == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q[0] = 0.25 * s
        q[1] = (m[2, 1] - m[1, 2]) / s
        q[2] = (m[0, 2] - m[2, 0]) / s
        q[3] = (m[1, 0] - m[0, 1]) / s
    else:
        i = best - 1
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(max(1.0 + m[i, i] - m[j, j] - m[k, k], 1e-300))
        q[0] = (m[k, j] - m[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (m[j, i] + m[i, j]) / s
        q[1 + k] = (m[k, i] + m[i, k]) / s
    if q[0] < 0:
        for c in range(4):
            q[c] = -q[c]
    nq = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for c in range(4):
        q[c] /= nq
    w = min(max(q[0], -1.0), 1.0)
    sv = np.sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    angle = 2.0 * np.arctan2(sv, w)
    scale = angle / sv if sv > 1e-12 else 2.0 / max(w, 1e-12)
    for c in range(3):
        out[c] = q[1 + c] * scale


@nb.njit(**_JIT)
def _solve_lu(A: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    """``x = A⁻¹ b`` for a small square ``A`` by LU with partial pivoting (LAPACK ``gesv``'s
    algorithm, without its call and allocation overhead per row); ``A`` and ``b`` are
    overwritten."""
    n = A.shape[0]
    for c in range(n):
        p = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if p != c:
            for k in range(n):
                A[c, k], A[p, k] = A[p, k], A[c, k]
            b[c], b[p] = b[p], b[c]
        for r in range(c + 1, n):
            f = A[r, c] / A[c, c]
            for k in range(c + 1, n):
                A[r, k] -= f * A[c, k]
            b[r] -= f * b[c]
    for c in range(n - 1, -1, -1):
        acc = b[c]
        for k in range(c + 1, n):
            acc -= A[c, k] * x[k]
        x[c] = acc / A[c, c]


@nb.njit(**_JIT)
def gn_refine(L: np.ndarray, theta: np.ndarray, axes: np.ndarray, prior: np.ndarray,
              free: np.ndarray, weight: np.ndarray, lam_scale: float,
              iterations: int) -> np.ndarray:
    """Gauss–Newton on ``log(D(θ)ᵀ L)`` per row (see :func:`animik.retarget.fit.refine`).

    Args:
        L: ``(N, 3, 3)`` target local rotations; theta: ``(N, m)`` start angles (rad).
        axes: ``(N, m, 3)`` unit axes; prior: ``(N, m)``; free: ``(N, m)`` bool (pulled
            towards their start value instead); weight: ``(N,)`` regularisation weight
            (× ``lam_scale``); iterations: Gauss–Newton steps.

    Returns:
        ``(N, m)`` refined angles (a new array).
    """
    N, m = theta.shape
    out = theta.copy()
    R = np.empty((m, 3, 3))
    D = np.empty((3, 3))
    tmp = np.empty((3, 3))
    suffix = np.empty((3, 3))
    E = np.empty((3, 3))
    B = np.empty((3, m))
    r = np.empty(3)
    pr = np.empty(m)
    H = np.empty((m, m))
    BtB = np.empty((m, m))
    g = np.empty(m)
    step = np.empty(m)
    for i in range(N):
        th = out[i]
        lam = lam_scale * weight[i]
        for k in range(m):
            pr[k] = th[k] if free[i, k] else prior[i, k]
        for _ in range(iterations):
            for k in range(m):
                _rodrigues(axes[i, k], th[k], R[k])
            D[:, :] = R[0]
            for k in range(1, m):
                _matmul3(D, R[k], tmp)
                D[:, :] = tmp
            # b_k: axis k in the end frame (suffix product transposed)
            for c in range(3):
                B[c, m - 1] = axes[i, m - 1, c]
            for k in range(m - 2, -1, -1):
                if k == m - 2:
                    suffix[:, :] = R[k + 1]
                else:
                    _matmul3(R[k + 1], suffix, tmp)
                    suffix[:, :] = tmp
                for c in range(3):
                    B[c, k] = (suffix[0, c] * axes[i, k, 0] + suffix[1, c] * axes[i, k, 1]
                               + suffix[2, c] * axes[i, k, 2])
            for a in range(3):  # E = Dᵀ L
                for b in range(3):
                    E[a, b] = D[0, a] * L[i, 0, b] + D[1, a] * L[i, 1, b] + D[2, a] * L[i, 2, b]
            _rotvec(E, r)
            for k in range(m):
                g[k] = B[0, k] * r[0] + B[1, k] * r[1] + B[2, k] * r[2]
                for l in range(m):
                    BtB[k, l] = B[0, k] * B[0, l] + B[1, k] * B[1, l] + B[2, k] * B[2, l]
                    H[k, l] = BtB[k, l] + (1e-12 if k == l else 0.0)
            if lam > 0:
                _, vec = np.linalg.eigh(BtB)
                for k in range(m):
                    gk = 0.0
                    for l in range(m):
                        nkl = lam * (vec[k, 0] * vec[l, 0])
                        H[k, l] += nkl
                        gk += nkl * (pr[l] - th[l])
                    g[k] += gk
            _solve_lu(H, g, step)
            for k in range(m):
                th[k] += step[k]
    return out


@nb.njit(**_JIT)
def local_rotations(R_world: np.ndarray, parent: np.ndarray, rest_T: np.ndarray) -> np.ndarray:
    """``(T, J, 3, 3)``: ``rest_T[j] @ R_world[t, parent[j]]ᵀ @ R_world[t, j]`` (``parent[j] < 0``:
    the identity for the parent; :meth:`animik.retarget.fit.PoseFitter.local_rotations`)."""
    T, J = R_world.shape[:2]
    out = np.empty((T, J, 3, 3))
    M = np.empty((3, 3))
    for t in range(T):
        for j in range(J):
            p = parent[j]
            if p < 0:
                for a in range(3):
                    for b in range(3):
                        M[a, b] = R_world[t, j, a, b]
            else:
                for a in range(3):  # Rpᵀ R
                    for b in range(3):
                        M[a, b] = (R_world[t, p, 0, a] * R_world[t, j, 0, b]
                                   + R_world[t, p, 1, a] * R_world[t, j, 1, b]
                                   + R_world[t, p, 2, a] * R_world[t, j, 2, b])
            for a in range(3):
                for b in range(3):
                    out[t, j, a, b] = (rest_T[j, a, 0] * M[0, b] + rest_T[j, a, 1] * M[1, b]
                                       + rest_T[j, a, 2] * M[2, b])
    return out
