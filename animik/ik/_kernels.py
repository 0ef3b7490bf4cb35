"""Numba kernels shared by the IK solvers: task error and weighted row selection."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def task_error(sp, sR, ref_p, ref_R, rows, weights, out, norms):
    """Task error of k sites into ``out (m,)``; per-site position / angle errors into ``norms (k, 2)``.

    Position rows: ``p_ref - p``. Orientation rows (when ``rows[i] == 6``): the rotation vector
    of ``R_ref @ R.T`` (world frame, pairs with the world angular Jacobian rows; seed C takes
    ``R.T @ R_ref`` in the link frame — the same rotation expressed in world axes).
    Rows are multiplied by ``weights[i]``.
    """
    r = 0
    for i in range(sp.shape[0]):
        w = weights[i]
        ex = ref_p[i, 0] - sp[i, 0]
        ey = ref_p[i, 1] - sp[i, 1]
        ez = ref_p[i, 2] - sp[i, 2]
        out[r] = w * ex
        out[r + 1] = w * ey
        out[r + 2] = w * ez
        norms[i, 0] = np.sqrt(ex * ex + ey * ey + ez * ez)
        norms[i, 1] = 0.0
        r += 3
        if rows[i] == 6:
            # M = R_ref @ R^T
            m = np.empty((3, 3))
            for a in range(3):
                for b in range(3):
                    m[a, b] = (ref_R[i, a, 0] * sR[i, b, 0] + ref_R[i, a, 1] * sR[i, b, 1]
                               + ref_R[i, a, 2] * sR[i, b, 2])
            vx, vy, vz = _log_so3(m)
            out[r] = w * vx
            out[r + 1] = w * vy
            out[r + 2] = w * vz
            norms[i, 1] = np.sqrt(vx * vx + vy * vy + vz * vz)
            r += 3


@nb.njit(cache=True, nogil=True, inline="always")
def _log_so3(m):
    """Rotation vector of a rotation matrix (stable near 0 and pi, via Shepperd's quaternion)."""
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr >= m[0, 0] and tr >= m[1, 1] and tr >= m[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + tr, 0.0))
        w = 0.25 * s
        x = (m[2, 1] - m[1, 2]) / s
        y = (m[0, 2] - m[2, 0]) / s
        z = (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] >= m[1, 1] and m[0, 0] >= m[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + m[0, 0] - m[1, 1] - m[2, 2], 1e-300))
        w = (m[2, 1] - m[1, 2]) / s
        x = 0.25 * s
        y = (m[0, 1] + m[1, 0]) / s
        z = (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] >= m[2, 2]:
        s = 2.0 * np.sqrt(max(1.0 + m[1, 1] - m[0, 0] - m[2, 2], 1e-300))
        w = (m[0, 2] - m[2, 0]) / s
        x = (m[0, 1] + m[1, 0]) / s
        y = 0.25 * s
        z = (m[1, 2] + m[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(max(1.0 + m[2, 2] - m[0, 0] - m[1, 1], 1e-300))
        w = (m[1, 0] - m[0, 1]) / s
        x = (m[0, 2] + m[2, 0]) / s
        y = (m[1, 2] + m[2, 1]) / s
        z = 0.25 * s
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    sn = np.sqrt(x * x + y * y + z * z)
    if sn < 1e-12:
        f = 2.0 / max(w, 1e-12)
    else:
        f = 2.0 * np.arctan2(sn, w) / sn
    return x * f, y * f, z * f


@nb.njit(cache=True, nogil=True)
def select_rows(jac6, row_select, weights_rows, out):
    """``out[i] = weights_rows[i] * jac6[row_select[i]]`` (weighted task Jacobian)."""
    n = jac6.shape[1]
    for i in range(row_select.shape[0]):
        src = row_select[i]
        w = weights_rows[i]
        for k in range(n):
            out[i, k] = w * jac6[src, k]
