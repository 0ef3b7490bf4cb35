"""Centre of pressure of the two-mass model, the octagon, the true support and ζ (seed E)."""

from __future__ import annotations

import numpy as np

from .params import RobotModel

OCTAGON_HALF_PLANES = 8


def octagon_normals() -> np.ndarray:
    """(8, 2) outward unit normals ``n_i = (cos(iπ/4 + π/8), sin(iπ/4 + π/8))``.

    The octagon inscribed in the circle of radius ``r`` is ``{d : n_i · d ≤ r cos(π/8)}``: its
    vertices lie on the circle at angles ``iπ/4``.
    """
    ang = np.arange(OCTAGON_HALF_PLANES) * np.pi / 4 + np.pi / 8
    return np.stack([np.cos(ang), np.sin(ang)], axis=1)


def octagon_apothem(radius: float) -> float:
    """Distance from the centre to each side of the octagon inscribed in a circle of ``radius``."""
    return float(radius * np.cos(np.pi / 8))


def octagon_vertices(center: np.ndarray, radius: float) -> np.ndarray:
    """(8, 2) vertices of the octagon inscribed in the circle of ``radius`` about ``center``."""
    ang = np.arange(OCTAGON_HALF_PLANES) * np.pi / 4
    return np.asarray(center, float)[..., None, :2] + radius * np.stack([np.cos(ang), np.sin(ang)], 1)


def cop(model: RobotModel, base_pos, base_acc, body_pos, body_acc) -> np.ndarray:
    """Seed E's CoP of two point masses at constant heights (flat ground, no angular momentum).

    ``p = [m_c (g c − h c̈) + m_b (g b − l b̈)] / ((m_c + m_b) g)`` (reconstructed, see SEEDS.md).

    Args:
        base_pos, base_acc, body_pos, body_acc: (..., 2) horizontal positions (m) and
            accelerations (m/s²) of ``b`` and ``c``.

    Returns:
        (..., 2) CoP on the floor, m.
    """
    m = model
    g = m.gravity
    b, bdd = np.asarray(base_pos, float), np.asarray(base_acc, float)
    c, cdd = np.asarray(body_pos, float), np.asarray(body_acc, float)
    return (m.body_mass * (g * c - m.body_height * cdd)
            + m.base_mass * (g * b - m.base_height * bdd)) / (m.total_mass * g)


def zeta(model: RobotModel, cop_xy, base_pos, body_pos, zeta_f: float) -> np.ndarray:
    """Robustness criterion ``ζ = ζ_f ‖p − b‖/r + (1 − ζ_f) ‖c − b‖/k`` (..., ) ; ζ ≤ 1 required.

    Seed E writes ``ζ_f ‖p − b‖ + (1 − ζ_f) ‖c − b‖``; we divide each distance by its bound (the
    support radius ``r`` and the body offset ``k_xy``) so that the seed's ``ζ ≤ 1`` means "inside
    both" (reconstructed normalisation). With ``k_xy = 0`` the second term is dropped.
    """
    d_p = np.linalg.norm(np.asarray(cop_xy, float) - np.asarray(base_pos, float), axis=-1)
    d_c = np.linalg.norm(np.asarray(body_pos, float) - np.asarray(base_pos, float), axis=-1)
    term_c = d_c / model.body_offset if model.body_offset > 0 else 0.0 * d_c
    return zeta_f * d_p / model.support_radius + (1.0 - zeta_f) * term_c


def support_polygon(model: RobotModel, base_pos, base_yaw=0.0) -> np.ndarray:
    """(..., K, 2) world wheel contacts: the true support polygon (convex hull, CCW order)."""
    w = model.wheel_contacts
    order = np.argsort(np.arctan2(w[:, 1] - w[:, 1].mean(), w[:, 0] - w[:, 0].mean()))
    w = w[order]
    yaw = np.asarray(base_yaw, float)[..., None]
    cy, sy = np.cos(yaw), np.sin(yaw)
    x = cy * w[:, 0] - sy * w[:, 1]
    y = sy * w[:, 0] + cy * w[:, 1]
    return np.stack([x, y], -1) + np.asarray(base_pos, float)[..., None, :2]


def support_margin(model: RobotModel, cop_xy, base_pos, base_yaw=0.0) -> np.ndarray:
    """Signed distance (m) from the CoP to the nearest edge of the true support: > 0 inside."""
    poly = support_polygon(model, base_pos, base_yaw)
    p = np.asarray(cop_xy, float)[..., None, :]
    a, b = poly, np.roll(poly, -1, axis=-2)
    e = b - a
    n = np.stack([e[..., 1], -e[..., 0]], -1) / np.linalg.norm(e, axis=-1, keepdims=True)
    # CCW polygon: the inward normal of edge a->b is (-e_y, e_x); n above is outward.
    return -np.max(np.sum((p - a) * n, axis=-1), axis=-1)
