"""Numba kernels for support polygons: 2-D convex hulls, signed distances, nearest points."""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = dict(cache=True, nogil=True)


@nb.njit(**_JIT)
def hull(pts, out):
    """Convex hull (Andrew's monotone chain) of ``pts (k, 2)`` into ``out`` (counter-clockwise,
    no repeated end point). Returns the number of hull vertices (1 or 2 for degenerate sets)."""
    k = pts.shape[0]
    if k == 0:
        return 0
    for i in range(k):
        if not (np.isfinite(pts[i, 0]) and np.isfinite(pts[i, 1])):
            return 0
    order = np.argsort(pts[:, 0] + 1e-9 * pts[:, 1])
    # stable lexicographic order: sort by x then y
    for i in range(1, k):
        j = i
        while j > 0:
            a = order[j - 1]
            b = order[j]
            if pts[a, 0] > pts[b, 0] or (pts[a, 0] == pts[b, 0] and pts[a, 1] > pts[b, 1]):
                order[j - 1] = b
                order[j] = a
                j -= 1
            else:
                break
    h = np.empty((2 * k + 1, 2))
    m = 0
    for ii in range(k):
        p = pts[order[ii]]
        while m >= 2 and ((h[m - 1, 0] - h[m - 2, 0]) * (p[1] - h[m - 2, 1])
                          - (h[m - 1, 1] - h[m - 2, 1]) * (p[0] - h[m - 2, 0])) <= 1e-15:
            m -= 1
        h[m, 0] = p[0]
        h[m, 1] = p[1]
        m += 1
    lo = m + 1
    for ii in range(k - 2, -1, -1):
        p = pts[order[ii]]
        while m >= lo and ((h[m - 1, 0] - h[m - 2, 0]) * (p[1] - h[m - 2, 1])
                           - (h[m - 1, 1] - h[m - 2, 1]) * (p[0] - h[m - 2, 0])) <= 1e-15:
            m -= 1
        h[m, 0] = p[0]
        h[m, 1] = p[1]
        m += 1
    m -= 1  # the last point repeats the first
    if m < 1:
        m = 1
    if m > k:
        m = k
    # Degenerate: all points (nearly) equal -> one vertex.
    if m == 2 and abs(h[0, 0] - h[1, 0]) + abs(h[0, 1] - h[1, 1]) < 1e-12:
        m = 1
    for i in range(m):
        out[i, 0] = h[i, 0]
        out[i, 1] = h[i, 1]
    return m


@nb.njit(**_JIT)
def signed_distance(poly, m, x, y, nearest):
    """Signed distance of ``(x, y)`` to the convex polygon ``poly[:m]`` (ccw): positive inside
    (distance to the boundary), negative outside; ``nearest (2,)`` gets the closest point of the
    polygon (the point itself when inside)."""
    best = np.inf
    bx = poly[0, 0]
    by = poly[0, 1]
    inside = m >= 3
    for i in range(m):
        ax, ay = poly[i, 0], poly[i, 1]
        j = i + 1 if i + 1 < m else 0
        ex, ey = poly[j, 0] - ax, poly[j, 1] - ay
        ll = ex * ex + ey * ey
        t = 0.0
        if ll > 0.0:
            t = ((x - ax) * ex + (y - ay) * ey) / ll
            t = min(max(t, 0.0), 1.0)
        px, py = ax + t * ex, ay + t * ey
        d = (x - px) * (x - px) + (y - py) * (y - py)
        if d < best:
            best = d
            bx, by = px, py
        if m >= 3 and ex * (y - ay) - ey * (x - ax) < 0.0:
            inside = False
    d = np.sqrt(best)
    if inside:
        nearest[0] = x
        nearest[1] = y
        return d
    nearest[0] = bx
    nearest[1] = by
    return -d


@nb.njit(**_JIT)
def margins_batch(points, point_area, active, zx, zy, poly_out, nvert, margin, nearest):
    """Per frame: hull of the floor projections of the active areas' points, then the signed
    ZMP margin and the nearest polygon point.

    Args:
        points: ``(B, P, 3)`` world contact points. point_area: ``(P,)``.
        active: ``(B, A)`` bool. zx, zy: ``(B,)`` ZMP (NaN skips the margin).
        poly_out: ``(B, P, 2)`` hull vertices; nvert: ``(B,)`` their count (0: no contact).
        margin: ``(B,)`` m. nearest: ``(B, 2)``.
    """
    B, P = points.shape[0], points.shape[1]
    buf = np.empty((P, 2))
    for b in range(B):
        k = 0
        for p in range(P):
            if active[b, point_area[p]]:
                buf[k, 0] = points[b, p, 0]
                buf[k, 1] = points[b, p, 1]
                k += 1
        m = hull(buf[:k], poly_out[b])
        nvert[b] = m
        if m == 0 or np.isnan(zx[b]):
            margin[b] = np.nan
            nearest[b, 0] = np.nan
            nearest[b, 1] = np.nan
        else:
            margin[b] = signed_distance(poly_out[b], m, zx[b], zy[b], nearest[b])
