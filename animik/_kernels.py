"""Numba kernels for forward kinematics and site Jacobians (the hot path).

Kept apart from :mod:`animik.kinematics` (the public, validated API) so the kernels take only
plain arrays. All kernels loop over a leading batch dimension ``B``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import numba as nb
import numpy as np

_JIT = dict(cache=True, nogil=True)

# numba reaches BLAS and LAPACK through the Cython modules ``scipy.linalg.cython_blas`` and
# ``scipy.linalg.cython_lapack``: it imports the first when it sets up its CPU target (the BLAS
# check of ``numba.np.arraymath``, on the first kernel loaded in a process, whether or not that
# kernel uses linear algebra) and the second when a kernel first calls ``np.linalg``
# (``gn_refine``'s ``eigh``). Imported the usual way, each first runs ``scipy/linalg/__init__``,
# i.e. all of ``scipy.linalg``: ~0.17 s of CPU, a fifth of an ``animik retarget`` start-up, for
# two modules that need none of it. So they are loaded here from their files straight into
# ``sys.modules`` (~10 ms), where numba's ``import scipy.linalg.cython_blas`` and its C helper's
# ``PyImport_ImportModule`` find them without the package. A later ``import scipy.linalg`` runs
# its ``__init__`` as usual, and its Cython modules ``cimport`` these same module objects (also
# looked up in ``sys.modules``). Anything unexpected (no SciPy, another layout, ``scipy.linalg``
# or numba's target already loaded) leaves it all to the usual imports.
_LAPACK_MODULES = ("scipy.linalg.cython_blas", "scipy.linalg.cython_lapack")


def _preload_lapack() -> bool:
    """Load ``_LAPACK_MODULES`` into ``sys.modules`` without running ``scipy.linalg``'s package
    ``__init__``; True when both are there (loaded now or before)."""
    if all(name in sys.modules for name in _LAPACK_MODULES):
        return True
    if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        return False  # nothing left to save
    try:
        scipy_spec = importlib.util.find_spec("scipy")
        if scipy_spec is None or not scipy_spec.submodule_search_locations:
            return False
        folder = Path(next(iter(scipy_spec.submodule_search_locations))) / "linalg"
        loaded = {}
        for name in _LAPACK_MODULES:
            stem = name.rsplit(".", 1)[1]
            path = next((folder / (stem + s) for s in importlib.machinery.EXTENSION_SUFFIXES
                         if (folder / (stem + s)).is_file()), None)
            spec = None if path is None else importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                return False
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[name] = module
    except (ImportError, OSError):  # pragma: no cover - depends on the environment
        return False
    sys.modules.update(loaded)
    return True


_preload_lapack()


@nb.njit(**_JIT)
def _rot_mul(R, axis, angle, out):
    """out = R @ rot(axis, angle)  (Rodrigues), all 3x3, axis a unit 3-vector."""
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    m00 = t * x * x + c
    m01 = t * x * y - s * z
    m02 = t * x * z + s * y
    m10 = t * x * y + s * z
    m11 = t * y * y + c
    m12 = t * y * z - s * x
    m20 = t * x * z - s * y
    m21 = t * y * z + s * x
    m22 = t * z * z + c
    for i in range(3):
        a0, a1, a2 = R[i, 0], R[i, 1], R[i, 2]
        out[i, 0] = a0 * m00 + a1 * m10 + a2 * m20
        out[i, 1] = a0 * m01 + a1 * m11 + a2 * m21
        out[i, 2] = a0 * m02 + a1 * m12 + a2 * m22


@nb.njit(**_JIT)
def fk_one(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, wax, wpt):
    """FK of one pose.

    Fills world rotations ``Rw (J,3,3)``, positions ``pw (J,3)``, and per DoF its world axis
    ``wax (n,3)`` and the world point it acts at ``wpt (n,3)`` (needed by the Jacobian).
    """
    J = parents.shape[0]
    R = np.empty((3, 3))
    tmp = np.empty((3, 3))
    t = np.empty(3)
    for j in range(J):
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


@nb.njit(**_JIT)
def sites_one(Rw, pw, site_joint, site_off, site_rot, sel, sR, sp):
    """World pose of the selected sites ``sel`` into ``sR (k,3,3)``, ``sp (k,3)``."""
    for i in range(sel.shape[0]):
        s = sel[i]
        j = site_joint[s]
        R = Rw[j]
        o = site_off[s]
        rr = site_rot[s]
        for a in range(3):
            sp[i, a] = pw[j, a] + R[a, 0] * o[0] + R[a, 1] * o[1] + R[a, 2] * o[2]
            for b in range(3):
                sR[i, a, b] = R[a, 0] * rr[0, b] + R[a, 1] * rr[1, b] + R[a, 2] * rr[2, b]


@nb.njit(**_JIT)
def jac_one(sp, sel, site_dof_mask, dof_type, wax, wpt, rows, out):
    """Geometric Jacobians (seed C) of the selected sites, stacked.

    ``rows == 6``: per site 3 linear then 3 angular rows; ``rows == 3``: linear rows only.
    ``out`` has shape ``(rows * k, n)``. Column of a revolute DoF: ``[w x (p_site - p_dof); w]``;
    of a prismatic DoF: ``[w; 0]``; zero for DoFs that do not move the site.
    """
    n = dof_type.shape[0]
    for i in range(sel.shape[0]):
        s = sel[i]
        r0 = rows * i
        px, py, pz = sp[i, 0], sp[i, 1], sp[i, 2]
        mask = site_dof_mask[s]
        for k in range(n):
            if not mask[k]:
                for r in range(rows):
                    out[r0 + r, k] = 0.0
                continue
            w0, w1, w2 = wax[k, 0], wax[k, 1], wax[k, 2]
            if dof_type[k] == 0:
                dx = px - wpt[k, 0]
                dy = py - wpt[k, 1]
                dz = pz - wpt[k, 2]
                out[r0, k] = w1 * dz - w2 * dy
                out[r0 + 1, k] = w2 * dx - w0 * dz
                out[r0 + 2, k] = w0 * dy - w1 * dx
                if rows == 6:
                    out[r0 + 3, k] = w0
                    out[r0 + 4, k] = w1
                    out[r0 + 5, k] = w2
            else:
                out[r0, k] = w0
                out[r0 + 1, k] = w1
                out[r0 + 2, k] = w2
                if rows == 6:
                    out[r0 + 3, k] = 0.0
                    out[r0 + 4, k] = 0.0
                    out[r0 + 5, k] = 0.0


@nb.njit(**_JIT)
def fk_sites_jac_one(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
                     site_joint, site_off, site_rot, sel, site_dof_mask, rows,
                     Rw, pw, wax, wpt, sR, sp, jac):
    """FK + site poses + stacked Jacobian in one call (the IK inner loop)."""
    fk_one(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, wax, wpt)
    sites_one(Rw, pw, site_joint, site_off, site_rot, sel, sR, sp)
    if rows > 0:
        jac_one(sp, sel, site_dof_mask, dof_type, wax, wpt, rows, jac)


@nb.njit(**_JIT)
def fk_batch(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
             site_joint, site_off, site_rot, sel, Rw, pw, sR, sp):
    """Batched FK: ``q (B, n)`` -> ``Rw (B,J,3,3)``, ``pw (B,J,3)``, ``sR (B,k,3,3)``, ``sp (B,k,3)``.

    Serial on purpose: numba's parallel loops cost milliseconds of thread start-up on small
    batches (measured), and callers that want cores split the batch across processes.
    """
    n = q.shape[1]
    wax = np.empty((n, 3))
    wpt = np.empty((n, 3))
    for b in range(q.shape[0]):
        fk_one(q[b], parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
               Rw[b], pw[b], wax, wpt)
        sites_one(Rw[b], pw[b], site_joint, site_off, site_rot, sel, sR[b], sp[b])


@nb.njit(**_JIT)
def jac_batch(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
              site_joint, site_off, site_rot, sel, site_dof_mask, rows, sp, jac):
    """Batched stacked Jacobians: ``q (B, n)`` -> ``jac (B, rows*k, n)``, site positions ``sp``."""
    n = q.shape[1]
    J = parents.shape[0]
    k = sel.shape[0]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    wax = np.empty((n, 3))
    wpt = np.empty((n, 3))
    sR = np.empty((k, 3, 3))
    for b in range(q.shape[0]):
        fk_one(q[b], parents, offsets, rest_rots, dof_start, dof_type, dof_axis,
               Rw, pw, wax, wpt)
        sites_one(Rw, pw, site_joint, site_off, site_rot, sel, sR, sp[b])
        jac_one(sp[b], sel, site_dof_mask, dof_type, wax, wpt, rows, jac[b])


@nb.njit(**_JIT)
def point_sums(Rw, pw, parents, pt_joint, pt_off, pt_coef, S, A, x):
    """Subtree sums of a weighted set of body points (the centre of mass is one).

    Point ``p`` is fixed in joint ``pt_joint[p]``'s frame at ``pt_off[p]`` with coefficient
    ``pt_coef[p]`` (for the whole-body centre of mass: ``m_j / M`` at the segment COM). Fills
    ``S (J, 3)`` with ``Σ coef · x_world`` and ``A (J,)`` with ``Σ coef`` over the points in the
    subtree of each joint (joints are in topological order: parents before children), and
    ``x (3,)`` with the combination itself, ``Σ_p coef_p x_p``.
    """
    S[:, :] = 0.0
    A[:] = 0.0
    for p in range(pt_joint.shape[0]):
        j = pt_joint[p]
        c = pt_coef[p]
        o = pt_off[p]
        for a in range(3):
            S[j, a] += c * (pw[j, a] + Rw[j, a, 0] * o[0] + Rw[j, a, 1] * o[1] + Rw[j, a, 2] * o[2])
        A[j] += c
    x[:] = 0.0
    for j in range(parents.shape[0] - 1, -1, -1):
        pj = parents[j]
        if pj >= 0:
            for a in range(3):
                S[pj, a] += S[j, a]
            A[pj] += A[j]
        else:
            for a in range(3):
                x[a] += S[j, a]


@nb.njit(**_JIT)
def point_jacobian(S, A, dof_type, dof_joint, wax, wpt, jac):
    """``jac (3, n)``: derivative of the point combination of :func:`point_sums` by each DoF.

    DoF ``d`` of joint ``j`` moves every point in ``j``'s subtree (its own segment included,
    which hangs on the joint's final frame): revolute ``w × (S_j − A_j p_d)`` (the rigid
    rotation about the axis ``w`` through ``p_d`` of all those points), prismatic ``A_j w``.
    """
    for d in range(dof_type.shape[0]):
        j = dof_joint[d]
        w0, w1, w2 = wax[d, 0], wax[d, 1], wax[d, 2]
        if dof_type[d] == 0:
            a = A[j]
            dx = S[j, 0] - a * wpt[d, 0]
            dy = S[j, 1] - a * wpt[d, 1]
            dz = S[j, 2] - a * wpt[d, 2]
            jac[0, d] = w1 * dz - w2 * dy
            jac[1, d] = w2 * dx - w0 * dz
            jac[2, d] = w0 * dy - w1 * dx
        else:
            a = A[j]
            jac[0, d] = a * w0
            jac[1, d] = a * w1
            jac[2, d] = a * w2


@nb.njit(**_JIT)
def points_batch(q, parents, offsets, rest_rots, dof_start, dof_type, dof_axis, dof_joint,
                 pt_joint, pt_off, pt_coef, rows, x, jac):
    """Batched point combination ``x (B, 3)`` and (``rows`` > 0) its Jacobian ``jac (B, 3, n)``."""
    n = q.shape[1]
    J = parents.shape[0]
    Rw = np.empty((J, 3, 3))
    pw = np.empty((J, 3))
    wax = np.empty((n, 3))
    wpt = np.empty((n, 3))
    S = np.empty((J, 3))
    A = np.empty(J)
    for b in range(q.shape[0]):
        fk_one(q[b], parents, offsets, rest_rots, dof_start, dof_type, dof_axis, Rw, pw, wax, wpt)
        point_sums(Rw, pw, parents, pt_joint, pt_off, pt_coef, S, A, x[b])
        if rows > 0:
            point_jacobian(S, A, dof_type, dof_joint, wax, wpt, jac[b])
