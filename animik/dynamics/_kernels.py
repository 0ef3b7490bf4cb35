"""Numba kernels for rigid-body dynamics on animik's DoF chain (world-frame spatial algebra).

Every quantity is a spatial vector in **world coordinates about the world origin**
(Featherstone 2008, ch. 2): a motion vector ``(w, v_O)`` (angular velocity; velocity of the
body point at the origin) and a force vector ``(n_O, f)`` (moment about the origin; force).
In world coordinates a parent's and a child's vectors add without transforms, which keeps the
kernels short: the recursive Newton-Euler algorithm (RNEA, ch. 5) and the composite rigid body
algorithm (CRBA, ch. 6) become sums along the tree.

A joint's DoFs act one after the other (see :mod:`animik.skeleton`); the frames between them
are massless, so the force transmitted through every DoF of a joint is the same: the net force
of the joint's subtree. Kernels take plain arrays only (see :mod:`animik.dynamics.model`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._kernels import fk_one

_JIT = dict(cache=True, nogil=True)


@nb.njit(**_JIT)
def _pose_axes(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, S):
    """FK of one pose: ``Rw (J,3,3)``, ``pw (J,3)`` and each DoF's spatial axis ``S (n,6)``.

    The kinematics kernel gives each DoF's world axis ``w`` and the point ``p`` it acts at;
    revolute: ``S = (w, p x w)``; prismatic: ``S = (0, w)``.
    """
    n = dof_type.shape[0]
    wax = np.empty((n, 3))
    wpt = np.empty((n, 3))
    fk_one(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, wax, wpt)
    for k in range(n):
        w0 = wax[k, 0]
        w1 = wax[k, 1]
        w2 = wax[k, 2]
        if dof_type[k] == 0:
            t0 = wpt[k, 0]
            t1 = wpt[k, 1]
            t2 = wpt[k, 2]
            S[k, 0] = w0
            S[k, 1] = w1
            S[k, 2] = w2
            S[k, 3] = t1 * w2 - t2 * w1
            S[k, 4] = t2 * w0 - t0 * w2
            S[k, 5] = t0 * w1 - t1 * w0
        else:
            S[k, 0] = 0.0
            S[k, 1] = 0.0
            S[k, 2] = 0.0
            S[k, 3] = w0
            S[k, 4] = w1
            S[k, 5] = w2


@nb.njit(**_JIT)
def _spatial_inertia(m, c, Ic, out):
    """Spatial inertia ``out (6,6)`` about the world origin of a body of mass ``m`` with its COM
    at ``c (3,)`` and rotational inertia ``Ic (3,3)`` about the COM:
    ``[[Ic + m cx cx^T, m cx], [m cx^T, m 1]]`` (cx = skew(c); cx cx^T = |c|^2 1 - c c^T)."""
    cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    for a in range(3):
        for b in range(3):
            out[a, b] = Ic[a, b] + m * ((cc if a == b else 0.0) - c[a] * c[b])
            out[a, b + 3] = 0.0
            out[a + 3, b] = 0.0
            out[a + 3, b + 3] = m if a == b else 0.0
    # m cx: row a, col b = m * skew(c)[a, b]
    out[0, 4] = -m * c[2]
    out[0, 5] = m * c[1]
    out[1, 3] = m * c[2]
    out[1, 5] = -m * c[0]
    out[2, 3] = -m * c[1]
    out[2, 4] = m * c[0]
    for a in range(3):
        for b in range(3):
            out[b + 3, a] = out[a, b + 3]


@nb.njit(**_JIT)
def _composite(parents, IC):
    """Composite inertias in place: each body's ``IC (J,6,6)`` plus its whole subtree's (world
    frame: children add without transforms; parents precede children)."""
    for j in range(IC.shape[0] - 1, 0, -1):
        p = parents[j]
        for a in range(6):
            for b in range(6):
                IC[p, a, b] += IC[j, a, b]


@nb.njit(**_JIT)
def _body_inertia(j, Rw, pw, masses, coms, inertias, c, Ic):
    """World COM ``c (3,)`` and world rotational inertia about it ``Ic (3,3)`` of segment ``j``."""
    R = Rw[j]
    lc = coms[j]
    for a in range(3):
        c[a] = pw[j, a] + R[a, 0] * lc[0] + R[a, 1] * lc[1] + R[a, 2] * lc[2]
    I = inertias[j]
    for a in range(3):
        for b in range(3):
            s = 0.0
            for u in range(3):
                ru = R[a, u]
                if ru != 0.0:
                    s += ru * (I[u, 0] * R[b, 0] + I[u, 1] * R[b, 1] + I[u, 2] * R[b, 2])
            Ic[a, b] = s


ZERO6 = np.zeros(6)  # read only: the base of a crf with no force (_add_crf)
ZERO6.setflags(write=False)


@nb.njit(**_JIT)
def _add_crf(v, h, base, out):
    """``out += base + v x* h``: a body's force ``base (6,)`` plus the spatial force cross
    product (crf(v) h = (w x h_n + v_O x h_f, w x h_f)) of its spatial velocity ``v (6,)`` and
    momentum ``h (6,)``, summed left to right as the kernels always did (bit-identical)."""
    w0, w1, w2 = v[0], v[1], v[2]
    out[0] += base[0] + w1 * h[2] - w2 * h[1] + v[4] * h[5] - v[5] * h[4]
    out[1] += base[1] + w2 * h[0] - w0 * h[2] + v[5] * h[3] - v[3] * h[5]
    out[2] += base[2] + w0 * h[1] - w1 * h[0] + v[3] * h[4] - v[4] * h[3]
    out[3] += base[3] + w1 * h[5] - w2 * h[4]
    out[4] += base[4] + w2 * h[3] - w0 * h[5]
    out[5] += base[5] + w0 * h[4] - w1 * h[3]


@nb.njit(**_JIT)
def _inertia_times(m, c, Ic, x, out):
    """Spatial inertia (mass ``m`` at world COM ``c``, ``Ic`` about it) times motion ``x (6,)``.

    ``out = (Ic w + c x f, f)`` with ``f = m (v_O + w x c)`` (Featherstone eq. 2.63).
    """
    w0, w1, w2 = x[0], x[1], x[2]
    f0 = m * (x[3] + w1 * c[2] - w2 * c[1])
    f1 = m * (x[4] + w2 * c[0] - w0 * c[2])
    f2 = m * (x[5] + w0 * c[1] - w1 * c[0])
    out[0] = Ic[0, 0] * w0 + Ic[0, 1] * w1 + Ic[0, 2] * w2 + c[1] * f2 - c[2] * f1
    out[1] = Ic[1, 0] * w0 + Ic[1, 1] * w1 + Ic[1, 2] * w2 + c[2] * f0 - c[0] * f2
    out[2] = Ic[2, 0] * w0 + Ic[2, 1] * w1 + Ic[2, 2] * w2 + c[0] * f1 - c[1] * f0
    out[3] = f0
    out[4] = f1
    out[5] = f2


@nb.njit(**_JIT)
def rnea_one(q, qd, qdd, g, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
             masses, coms, inertias, Rw, pw, S, V, A, F, tau, wrench):
    """Recursive Newton-Euler inverse dynamics of one frame (Featherstone 2008, table 5.1).

    Gravity enters as a fictitious base acceleration ``-g``. Outputs the generalised forces
    ``tau (n,)`` and ``wrench (6,)``: the spatial force ``(n_O, f)`` the world applies to the
    root joint (moment about the world origin; force), i.e. the total external wrench the
    environment must supply. Work arrays: ``Rw (J,3,3) pw (J,3) S (n,6) V A F (J,6)``.
    """
    _pose_axes(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, S)
    J = parents.shape[0]
    c = np.empty(3)
    Ic = np.empty((3, 3))
    h = np.empty(6)
    v = np.empty(6)
    a = np.empty(6)
    for j in range(J):
        p = parents[j]
        if p < 0:
            for i in range(6):
                v[i] = 0.0
                a[i] = 0.0
            a[3] = -g[0]
            a[4] = -g[1]
            a[5] = -g[2]
        else:
            for i in range(6):
                v[i] = V[p, i]
                a[i] = A[p, i]
        for k in range(dof_start[j], dof_start[j + 1]):
            s = S[k]
            qk = qd[k]
            # a += v x S qd + S qdd  (crm(v) S: (w x s_w, w x s_v + v_O x s_w))
            w0, w1, w2 = v[0], v[1], v[2]
            a[0] += (w1 * s[2] - w2 * s[1]) * qk + s[0] * qdd[k]
            a[1] += (w2 * s[0] - w0 * s[2]) * qk + s[1] * qdd[k]
            a[2] += (w0 * s[1] - w1 * s[0]) * qk + s[2] * qdd[k]
            a[3] += (w1 * s[5] - w2 * s[4] + v[4] * s[2] - v[5] * s[1]) * qk + s[3] * qdd[k]
            a[4] += (w2 * s[3] - w0 * s[5] + v[5] * s[0] - v[3] * s[2]) * qk + s[4] * qdd[k]
            a[5] += (w0 * s[4] - w1 * s[3] + v[3] * s[1] - v[4] * s[0]) * qk + s[5] * qdd[k]
            for i in range(6):
                v[i] += s[i] * qk
        for i in range(6):
            V[j, i] = v[i]
            A[j, i] = a[i]
        m = masses[j]
        if m == 0.0 and inertias[j, 0, 0] == 0.0 and inertias[j, 1, 1] == 0.0 \
                and inertias[j, 2, 2] == 0.0:
            for i in range(6):
                F[j, i] = 0.0
            continue
        _body_inertia(j, Rw, pw, masses, coms, inertias, c, Ic)
        _inertia_times(m, c, Ic, a, F[j])
        _inertia_times(m, c, Ic, v, h)
        _add_crf(v, h, ZERO6, F[j])  # f += v x* h (0.0 + x is x: the old sums exactly)
    for i in range(6):
        wrench[i] = 0.0
    for j in range(J - 1, -1, -1):
        f = F[j]
        for k in range(dof_start[j], dof_start[j + 1]):
            s = S[k]
            tau[k] = s[0] * f[0] + s[1] * f[1] + s[2] * f[2] + s[3] * f[3] + s[4] * f[4] \
                + s[5] * f[5]
        p = parents[j]
        if p >= 0:
            for i in range(6):
                F[p, i] += f[i]
        else:
            for i in range(6):
                wrench[i] += f[i]


@nb.njit(**_JIT)
def rnea_batch(q, qd, qdd, g, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
               masses, coms, inertias, tau, wrench):
    """Batched :func:`rnea_one`: ``q qd qdd (B,n)`` -> ``tau (B,n)``, ``wrench (B,6)``."""
    J = parents.shape[0]
    n = q.shape[1]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    S = np.empty((n, 6))
    V = np.empty((J, 6))
    A = np.empty((J, 6))
    F = np.empty((J, 6))
    for b in range(q.shape[0]):
        rnea_one(q[b], qd[b], qdd[b], g, parents, offsets, rest_rots, dof_start, dof_type,
                 dof_axis, masses, coms, inertias, Rw, pw, S, V, A, F, tau[b], wrench[b])


@nb.njit(**_JIT)
def crba_one(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, dof_joint,
             masses, coms, inertias, Rw, pw, S, IC, M):
    """Composite rigid body algorithm (Featherstone 2008, table 6.2), world frame.

    ``IC (J,6,6)`` work: composite spatial inertia of each joint's subtree about the origin.
    ``M[k, l] = S_l . (IC_j S_k)`` for every DoF ``l`` on the chain from the root to ``k``
    (``j`` = joint of ``k``; the frames between a joint's DoFs are massless).
    """
    _pose_axes(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, S)
    J = parents.shape[0]
    n = q.shape[0]
    c = np.empty(3)
    Ic = np.empty((3, 3))
    for j in range(J):
        _body_inertia(j, Rw, pw, masses, coms, inertias, c, Ic)
        _spatial_inertia(masses[j], c, Ic, IC[j])
    _composite(parents, IC)
    for i in range(n):
        for k in range(n):
            M[i, k] = 0.0
    f = np.empty(6)
    for k in range(n):
        j = dof_joint[k]
        s = S[k]
        for a in range(6):
            f[a] = IC[j, a, 0] * s[0] + IC[j, a, 1] * s[1] + IC[j, a, 2] * s[2] \
                + IC[j, a, 3] * s[3] + IC[j, a, 4] * s[4] + IC[j, a, 5] * s[5]
        # DoFs of the same joint up to k, then every ancestor joint's DoFs.
        jj = j
        first = True
        while jj >= 0:
            hi = k + 1 if first else dof_start[jj + 1]
            for l in range(dof_start[jj], hi):
                sl = S[l]
                val = sl[0] * f[0] + sl[1] * f[1] + sl[2] * f[2] + sl[3] * f[3] + sl[4] * f[4] \
                    + sl[5] * f[5]
                M[k, l] = val
                M[l, k] = val
            first = False
            jj = parents[jj]


@nb.njit(**_JIT)
def crba_batch(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, dof_joint,
               masses, coms, inertias, M):
    """Batched :func:`crba_one`: ``q (B,n)`` -> ``M (B,n,n)``."""
    J = parents.shape[0]
    n = q.shape[1]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    S = np.empty((n, 6))
    IC = np.empty((J, 6, 6))
    for b in range(q.shape[0]):
        crba_one(q[b], parents, offsets, rest_rots, dof_start, dof_type, dof_axis, dof_joint,
                 masses, coms, inertias, Rw, pw, S, IC, M[b])


@nb.njit(**_JIT)
def momentum_batch(q, qd, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
                   masses, coms, inertias, out):
    """Whole-body COM and momentum: ``out (B, 12)`` = COM (3), COM velocity (3), linear
    momentum (3), angular momentum about the COM (3)."""
    J = parents.shape[0]
    n = q.shape[1]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    S = np.empty((n, 6))
    V = np.empty((J, 6))
    c = np.empty(3)
    Ic = np.empty((3, 3))
    h = np.empty(6)
    v = np.empty(6)
    for b in range(q.shape[0]):
        _pose_axes(q[b], parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, S)
        mt = 0.0
        cm = np.zeros(3)
        H = np.zeros(6)
        for j in range(J):
            p = parents[j]
            for i in range(6):
                v[i] = 0.0 if p < 0 else V[p, i]
            for k in range(dof_start[j], dof_start[j + 1]):
                for i in range(6):
                    v[i] += S[k, i] * qd[b, k]
            for i in range(6):
                V[j, i] = v[i]
            m = masses[j]
            _body_inertia(j, Rw, pw, masses, coms, inertias, c, Ic)
            _inertia_times(m, c, Ic, v, h)
            mt += m
            for i in range(3):
                cm[i] += m * c[i]
            for i in range(6):
                H[i] += h[i]
        for i in range(3):
            cm[i] /= mt
        o = out[b]
        for i in range(3):
            o[i] = cm[i]
            o[3 + i] = H[3 + i] / mt
            o[6 + i] = H[3 + i]
        # L_com = L_O - c x p
        o[9] = H[0] - (cm[1] * H[5] - cm[2] * H[4])
        o[10] = H[1] - (cm[2] * H[3] - cm[0] * H[5])
        o[11] = H[2] - (cm[0] * H[4] - cm[1] * H[3])


@nb.njit(**_JIT)
def filter_terms(q, qd, g, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
                 dof_joint, masses, coms, inertias, Rw, pw, S, V, A0, IC, Aw, bias):
    """Everything seed D's method A needs at one state, in one pass.

    Outputs (besides FK ``Rw pw`` and the DoF axes ``S``): body velocities ``V (J,6)``, body
    bias accelerations ``A0 (J,6)`` (those of ``qdd = 0`` without gravity, for the ``Jdot qd``
    terms of pins), the **wrench matrix** ``Aw (6,n)`` and ``bias (6,)`` such that the root
    wrench of any ``qdd`` is ``Aw qdd + bias`` (gravity included): column k of ``Aw`` is
    ``IC_j S_k``, the composite inertia below DoF k times its axis -- the base rows of the
    equations of motion (seed D's ``M_b``) expressed as a world wrench. Work: ``IC (J,6,6)``.
    """
    _pose_axes(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, S)
    J = parents.shape[0]
    n = q.shape[0]
    c = np.empty(3)
    Ic = np.empty((3, 3))
    h = np.empty(6)
    v = np.empty(6)
    a = np.empty(6)
    ag = np.empty(6)
    f = np.empty(6)
    for i in range(6):
        bias[i] = 0.0
    for j in range(J):
        p = parents[j]
        for i in range(6):
            v[i] = 0.0 if p < 0 else V[p, i]
            a[i] = 0.0 if p < 0 else A0[p, i]
        for k in range(dof_start[j], dof_start[j + 1]):
            s = S[k]
            qk = qd[k]
            w0, w1, w2 = v[0], v[1], v[2]
            a[0] += (w1 * s[2] - w2 * s[1]) * qk
            a[1] += (w2 * s[0] - w0 * s[2]) * qk
            a[2] += (w0 * s[1] - w1 * s[0]) * qk
            a[3] += (w1 * s[5] - w2 * s[4] + v[4] * s[2] - v[5] * s[1]) * qk
            a[4] += (w2 * s[3] - w0 * s[5] + v[5] * s[0] - v[3] * s[2]) * qk
            a[5] += (w0 * s[4] - w1 * s[3] + v[3] * s[1] - v[4] * s[0]) * qk
            for i in range(6):
                v[i] += s[i] * qk
        for i in range(6):
            V[j, i] = v[i]
            A0[j, i] = a[i]
            ag[i] = a[i]
        ag[3] -= g[0]
        ag[4] -= g[1]
        ag[5] -= g[2]
        m = masses[j]
        _body_inertia(j, Rw, pw, masses, coms, inertias, c, Ic)
        _inertia_times(m, c, Ic, ag, f)
        _inertia_times(m, c, Ic, v, h)
        _add_crf(v, h, f, bias)
        _spatial_inertia(m, c, Ic, IC[j])
    _composite(parents, IC)
    for k in range(n):
        j = dof_joint[k]
        s = S[k]
        for r in range(6):
            Aw[r, k] = IC[j, r, 0] * s[0] + IC[j, r, 1] * s[1] + IC[j, r, 2] * s[2] \
                + IC[j, r, 3] * s[3] + IC[j, r, 4] * s[4] + IC[j, r, 5] * s[5]


@nb.njit(**_JIT)
def filter_terms_batch(Q, QD, QDD, g, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
                       dof_joint, masses, coms, inertias, W, Aw_out, S_out):
    """:func:`filter_terms` over a batch of states ``Q, QD, QDD (N, n)`` in one call (the clip
    filter's linearisation; a Python loop of single calls cost ~35 us each in overhead).

    Outputs: the root wrench ``W (N, 6) = Aw qdd + bias``; when ``Aw_out`` has ``N`` rows
    (else 0), also ``Aw_out (N, 6, n)`` and the DoF axes ``S_out (N, n, 6)``.
    """
    N, n = Q.shape
    J = parents.shape[0]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    S = np.empty((n, 6))
    V = np.empty((J, 6))
    A0 = np.empty((J, 6))
    IC = np.empty((J, 6, 6))
    Aw = np.empty((6, n))
    bias = np.empty(6)
    full = Aw_out.shape[0] == N
    for t in range(N):
        filter_terms(Q[t], QD[t], g, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
                     dof_joint, masses, coms, inertias, Rw, pw, S, V, A0, IC, Aw, bias)
        for r in range(6):
            acc = bias[r]
            for k in range(n):
                acc += Aw[r, k] * QDD[t, k]
            W[t, r] = acc
        if full:
            Aw_out[t] = Aw
            S_out[t] = S


@nb.njit(**_JIT)
def wrench_batch(Q, QD, QDD, ED, g, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
                 masses, coms, inertias, W, dW):
    """The root wrench ``W (N, 6)`` of states ``Q, QD, QDD (N, n)`` and its derivatives along
    velocity directions ``ED (N, n, m)``: ``dW (N, m, 6) = dW/dqd . ED[:, :, i]``.

    The forward pass of :func:`filter_terms` with the accelerations ``qdd`` in the body
    accelerations -- ``W = sum_j I_j (a_j - g) + v_j x* I_j v_j`` (Featherstone eq. 5.9 summed
    over the bodies), equal to ``Aw qdd + bias`` without forming the composite inertias or
    ``Aw`` -- and its forward-mode derivative in ``qd`` (``W`` is quadratic in ``qd``:
    ``dv = S e``, ``da = dv x S qd + v x S e``, ``df = I da + dv x* I v + v x* I dv``), exact,
    where finite differences of the wrench pass carried ``eps`` truncation and round-off.
    """
    N, n = Q.shape
    m_dir = ED.shape[2]
    J = parents.shape[0]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    S = np.empty((n, 6))
    V = np.empty((J, 6))
    A = np.empty((J, 6))
    dV = np.empty((J, m_dir, 6))
    dA = np.empty((J, m_dir, 6))
    c = np.empty(3)
    Ic = np.empty((3, 3))
    h = np.empty(6)
    dh = np.empty(6)
    v = np.empty(6)
    a = np.empty(6)
    dv = np.empty((m_dir, 6))
    da = np.empty((m_dir, 6))
    f = np.empty(6)
    df = np.empty(6)
    for t in range(N):
        _pose_axes(Q[t], parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, S)
        for i in range(6):
            W[t, i] = 0.0
            for d in range(m_dir):
                dW[t, d, i] = 0.0
        for j in range(J):
            p = parents[j]
            for i in range(6):
                v[i] = 0.0 if p < 0 else V[p, i]
                a[i] = 0.0 if p < 0 else A[p, i]
                for d in range(m_dir):
                    dv[d, i] = 0.0 if p < 0 else dV[p, d, i]
                    da[d, i] = 0.0 if p < 0 else dA[p, d, i]
            for k in range(dof_start[j], dof_start[j + 1]):
                s = S[k]
                qk = QD[t, k]
                ak = QDD[t, k]
                for d in range(m_dir):
                    # d/dqd of (v x s) qk = (dv x s) qk + (v x s) e_k, before v moves on
                    ek = ED[t, k, d]
                    x0, x1, x2 = dv[d, 0], dv[d, 1], dv[d, 2]
                    da[d, 0] += (x1 * s[2] - x2 * s[1]) * qk + (v[1] * s[2] - v[2] * s[1]) * ek
                    da[d, 1] += (x2 * s[0] - x0 * s[2]) * qk + (v[2] * s[0] - v[0] * s[2]) * ek
                    da[d, 2] += (x0 * s[1] - x1 * s[0]) * qk + (v[0] * s[1] - v[1] * s[0]) * ek
                    da[d, 3] += (x1 * s[5] - x2 * s[4] + dv[d, 4] * s[2] - dv[d, 5] * s[1]) * qk \
                        + (v[1] * s[5] - v[2] * s[4] + v[4] * s[2] - v[5] * s[1]) * ek
                    da[d, 4] += (x2 * s[3] - x0 * s[5] + dv[d, 5] * s[0] - dv[d, 3] * s[2]) * qk \
                        + (v[2] * s[3] - v[0] * s[5] + v[5] * s[0] - v[3] * s[2]) * ek
                    da[d, 5] += (x0 * s[4] - x1 * s[3] + dv[d, 3] * s[1] - dv[d, 4] * s[0]) * qk \
                        + (v[0] * s[4] - v[1] * s[3] + v[3] * s[1] - v[4] * s[0]) * ek
                    for i in range(6):
                        dv[d, i] += s[i] * ek
                w0, w1, w2 = v[0], v[1], v[2]
                a[0] += (w1 * s[2] - w2 * s[1]) * qk + s[0] * ak
                a[1] += (w2 * s[0] - w0 * s[2]) * qk + s[1] * ak
                a[2] += (w0 * s[1] - w1 * s[0]) * qk + s[2] * ak
                a[3] += (w1 * s[5] - w2 * s[4] + v[4] * s[2] - v[5] * s[1]) * qk + s[3] * ak
                a[4] += (w2 * s[3] - w0 * s[5] + v[5] * s[0] - v[3] * s[2]) * qk + s[4] * ak
                a[5] += (w0 * s[4] - w1 * s[3] + v[3] * s[1] - v[4] * s[0]) * qk + s[5] * ak
                for i in range(6):
                    v[i] += s[i] * qk
            for i in range(6):
                V[j, i] = v[i]
                A[j, i] = a[i]
                for d in range(m_dir):
                    dV[j, d, i] = dv[d, i]
                    dA[j, d, i] = da[d, i]
            a[3] -= g[0]
            a[4] -= g[1]
            a[5] -= g[2]
            mj = masses[j]
            _body_inertia(j, Rw, pw, masses, coms, inertias, c, Ic)
            _inertia_times(mj, c, Ic, a, f)
            _inertia_times(mj, c, Ic, v, h)
            _add_crf(v, h, f, W[t])
            w0, w1, w2 = v[0], v[1], v[2]
            for d in range(m_dir):
                # df = I da + dv x* (I v) + v x* (I dv)
                _inertia_times(mj, c, Ic, da[d], df)
                _inertia_times(mj, c, Ic, dv[d], dh)
                x0, x1, x2 = dv[d, 0], dv[d, 1], dv[d, 2]
                y3, y4, y5 = dv[d, 3], dv[d, 4], dv[d, 5]
                dW[t, d, 0] += df[0] + x1 * h[2] - x2 * h[1] + y4 * h[5] - y5 * h[4] \
                    + w1 * dh[2] - w2 * dh[1] + v[4] * dh[5] - v[5] * dh[4]
                dW[t, d, 1] += df[1] + x2 * h[0] - x0 * h[2] + y5 * h[3] - y3 * h[5] \
                    + w2 * dh[0] - w0 * dh[2] + v[5] * dh[3] - v[3] * dh[5]
                dW[t, d, 2] += df[2] + x0 * h[1] - x1 * h[0] + y3 * h[4] - y4 * h[3] \
                    + w0 * dh[1] - w1 * dh[0] + v[3] * dh[4] - v[4] * dh[3]
                dW[t, d, 3] += df[3] + x1 * h[5] - x2 * h[4] + w1 * dh[5] - w2 * dh[4]
                dW[t, d, 4] += df[4] + x2 * h[3] - x0 * h[5] + w2 * dh[3] - w0 * dh[5]
                dW[t, d, 5] += df[5] + x0 * h[4] - x1 * h[3] + w0 * dh[4] - w1 * dh[3]


# Both cores (docs/dynamics.md 6i): the clip filter's per-frame kernels are independent over
# frames, so the batch is cut into one contiguous chunk per numba thread, each running the
# serial kernel on its frames -- the same arithmetic per frame, so the same bits.
_PJIT = dict(cache=True, nogil=True, parallel=True)


@nb.njit(**_PJIT)
def filter_terms_batch_par(Q, QD, QDD, g, parents, offsets, rest_rots, dof_start, dof_type,
                           dof_axis, dof_joint, masses, coms, inertias, W, Aw_out, S_out, chunks):
    """:func:`filter_terms_batch` with the frames split into ``chunks`` (the numba threads;
    an argument, not read in here: a kernel that reads the thread count is not cached)."""
    N = Q.shape[0]
    nc = max(1, min(chunks, N))
    full = Aw_out.shape[0] == N
    for ci in nb.prange(nc):
        lo = ci * N // nc
        hi = (ci + 1) * N // nc
        if full:
            filter_terms_batch(Q[lo:hi], QD[lo:hi], QDD[lo:hi], g, parents, offsets, rest_rots,
                               dof_start, dof_type, dof_axis, dof_joint, masses, coms, inertias,
                               W[lo:hi], Aw_out[lo:hi], S_out[lo:hi])
        else:
            filter_terms_batch(Q[lo:hi], QD[lo:hi], QDD[lo:hi], g, parents, offsets, rest_rots,
                               dof_start, dof_type, dof_axis, dof_joint, masses, coms, inertias,
                               W[lo:hi], Aw_out, S_out)


@nb.njit(**_PJIT)
def wrench_batch_par(Q, QD, QDD, ED, g, parents, offsets, rest_rots, dof_start, dof_type,
                     dof_axis, masses, coms, inertias, W, dW, chunks):
    """:func:`wrench_batch` with the frames split into ``chunks`` (the numba threads)."""
    N = Q.shape[0]
    nc = max(1, min(chunks, N))
    for ci in nb.prange(nc):
        lo = ci * N // nc
        hi = (ci + 1) * N // nc
        wrench_batch(Q[lo:hi], QD[lo:hi], QDD[lo:hi], ED[lo:hi], g, parents, offsets, rest_rots,
                     dof_start, dof_type, dof_axis, masses, coms, inertias, W[lo:hi], dW[lo:hi])
