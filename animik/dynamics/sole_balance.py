"""The balance law of seed D method B: a capture-point law for the centre of mass, realised by
the sole pins' reference accelerations (docs/dynamics.md 5c).

Method B's floor wrench is the sum of its contact springs (``f = k_S d + k_D u``), so the only
way the motion can move the centre of pressure or push the body sideways is through where the
soles are: how deep each sole point sits in the floor and how far its tangential spring is
stretched. This module turns a wanted centre-of-mass acceleration into sole pin targets:

1. **COM law** (linear inverted pendulum, ``ω = √(g / h)``): the capture point
   ``ξ = c + ċ/ω`` obeys ``ξ̇ = ω (ξ − p)``; the centre of pressure
   ``p = ξ + (k/ω)(ξ − ξ_ref)`` (``ξ_ref`` the input's capture point moved ``ref_margin``
   inside the support polygon) drives ``ξ`` to ``ξ_ref`` at rate ``k``; ``p`` itself is clamped
   ``margin`` inside the polygon. Vertically a critically damped PD pulls the COM height to
   the input's (``|z̈| ≤ 0.5 g``; used with ``vertical``).
   The wanted force goes through the COM (no moment about it):
   ``F_z = m (g + z̈)``, ``F_xy = F_z (c − p) / h``.
2. **Sole stiffness**: the wanted wrench is ``W* = (p × F + n_z e_z, F)`` (``n_z`` the
   springs' present free moment: yaw is left to the tangential springs). Moving sole ``s`` by
   a small rigid displacement ``δ_s`` changes the springs' wrench by ``K δ`` (every point of a
   support area counted as a spring ``k_S``, :func:`sole_stiffness`).
3. **Sole targets**: ``δ = K⁺ (W* − W)`` (least norm, ridged, :func:`sole_displacements`); the
   pin target of each support area's joint is its present pose moved by ``δ_s``. With the
   pin's PD at ``sole_hz`` (``ẍ = k_p δ − k_d ẋ``) the wrench error obeys
   ``Ẅ + k_d Ẇ + k_p (W − W*) = 0``: the springs deliver the wanted wrench, exactly at rest,
   with a lag of ~1/(2π sole_hz) -- closed on the springs' actual wrench, so a toe joint that
   bends or a heel off the floor does not leave a steady error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _support
from .zmp import FeasibilityError


@dataclass(frozen=True)
class SoleBalanceOptions:
    """The balance law of method B.

    Attributes:
        enabled: off reproduces method B without a balance law (the soles pinned where they
            land, weakly: docs/dynamics.md 5c).
        dcm_gain: ``k`` (1/s), the decay rate of the capture-point error.
        com_z_hz: natural frequency of the COM height PD (Hz).
        sole_hz: natural frequency of the sole pins (Hz): the lag of the springs' wrench.
        w_sole: weight of the sole pin rows (m/s²) against the joint references (rad/s²).
        margin: the centre of pressure is kept this far inside the support polygon (m).
        ref_margin: the input's capture point, the law's goal, is moved this far inside the
            support polygon (m): a goal near the edge leaves the law no room to stop a push.
        vertical: also track the input's COM height with the springs' normal force (off: the
            height is whatever the springs and the joint references give; straight legs
            cannot push the soles down anyway).
        feedforward: add the input's own LIP centre of pressure, ``p = p_ref + (1 + k/ω)(ξ −
            ξ_ref)`` (off: on an infeasible input the clamped feed-forward kicks the COM behind
            the heels -- measured on the lumbar sway, docs/dynamics.md 5c).
        ridge: ridge of the sole displacement solve (relative to the mean eigenvalue).
        length: the sole scale (m) that makes moments comparable with forces.
        max_step: a sole target moves no point of the sole further than this (m): a heel far
            above the floor comes down at ~``2π sole_hz max_step`` m/s instead of at once.
        step: the step-aware law (docs/dynamics.md 5c): the goal ``ξ_ref`` is clamped into the
            hull of the present support and the input's **next** footprints (those landing
            within ``preview``), not into the present support alone; the centre of pressure
            leaves a sole ``lift_lead`` before the input lifts it; the swing feet track the
            input's feet in task space (``swing_hz``, ``w_swing``) so that they land where
            the input lands them. Off: the previous law (the goal in the present support).
        preview: how far ahead (s) a landing footprint joins the goal's polygon.
        lift_lead: how long (s) before the input lifts a sole the centre of pressure is kept
            off it (on the soles that stay down).
        swing_hz: natural frequency of the swing feet's task-space PD (Hz).
        w_swing: weight of the swing feet's rows (m/s²) against the joint references.
        vertical_band: without ``vertical``, the springs' vertical force is left alone while
            within this fraction of the COM height law's ``F_z`` (outside it, it is pulled to
            the band's edge: an unloaded stance sole is asked down). ``inf``: never.
        reach: while the input has a foot off the floor, only the support soles' points
            less than this above the floor (m) bound the centre of pressure and enter the sole
            stiffness (with every foot down, and with ``inf``, every point of a support area
            counts, as the check's polygon does).
        swing_accel: a swing foot's reference acceleration is clipped to this (m/s²; its
            angular one to 10× in rad/s²).
        settle_free: while method B settles (the first frame held, not written), the law's
            centre of pressure is not clamped into the support: the held body is brought to
            the goal ``ref_margin`` inside it even when the clip starts at its edge.
        clearance: a swing foot's target keeps its lowest sole point this far above the
            floor (m).
        leg_hold: the stance leg's vertical loop: a support sole whose springs carry less
            than this fraction of the weight tracks the input's height of its foot joint
            under the root (the leg's length) instead of its world pin, so that it falls
            with the body and lands (0: off).
        land_accel: a descending swing foot brakes (``v²/(2 gap)``) once stopping at its
            clearance needs more than this (m/s²), and one still in the floor is lifted out
            with its rotation let go (0: off).
        step_gain: the stepping rule: a swing foot's target is moved by this times the
            simulated capture point's offset from the input's (ramped in over the swing, at
            most ``step_max`` m): the foot lands where the body's capture point needs it.
        step_max: the stepping rule's largest offset (m).
        settle_track: for a clip whose first frame moves at ``settle_speed`` (m/s) or more
            (a walk), the settle brings the COM onto the input's (ramped) path with the law's
            held wrench, vertical included, so the clip starts with the input's COM state.
        settle_speed: see ``settle_track``.
    """

    enabled: bool = True
    dcm_gain: float = 3.0
    com_z_hz: float = 2.0
    sole_hz: float = 15.0
    w_sole: float = 100.0
    margin: float = 0.01
    ridge: float = 1e-3
    length: float = 0.1
    max_step: float = 0.002
    vertical: bool = False
    ref_margin: float = 0.03
    feedforward: bool = False
    step: bool = True
    preview: float = 0.6
    lift_lead: float = 0.1
    swing_hz: float = 8.0
    w_swing: float = 30.0
    clearance: float = 0.005
    vertical_band: float = 0.3
    reach: float = 0.01
    swing_accel: float = 30.0
    settle_free: bool = False
    leg_hold: float = 0.02
    land_accel: float = 15.0
    step_gain: float = 1.0
    step_max: float = 0.25
    settle_track: bool = True
    settle_speed: float = 0.3

    def checked(self) -> SoleBalanceOptions:
        for name in ("dcm_gain", "com_z_hz", "sole_hz", "w_sole", "ridge", "length",
                     "max_step", "swing_hz", "w_swing", "swing_accel"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise FeasibilityError(f"{name} must be a positive number, got {v!r}")
        for name in ("margin", "ref_margin", "preview", "lift_lead", "clearance",
                     "vertical_band", "leg_hold", "land_accel", "step_gain", "step_max",
                     "settle_speed"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise FeasibilityError(f"{name} must be >= 0 m, got {v!r}")
        return self


def inside(poly: np.ndarray, x: np.ndarray, margin: float) -> np.ndarray:
    """``x`` ``(2,)`` moved toward the polygon's centre until it is ``margin`` inside (or at the
    centre, for a polygon narrower than ``2 margin``)."""
    near = np.empty(2)
    d = _support.signed_distance(poly, len(poly), x[0], x[1], near)
    cen = poly.mean(axis=0)
    dc = _support.signed_distance(poly, len(poly), cen[0], cen[1], np.empty(2))
    margin = min(margin, 0.5 * max(dc, 0.0))
    if d >= margin:
        return x
    base = near if d < 0 else x
    to_c = cen - base
    dist = float(np.hypot(*to_c))
    step = min(margin - max(d, 0.0), dist)
    return base + (to_c / dist * step if dist > 0 else 0.0)


def desired_force(c: np.ndarray, cd: np.ndarray, c_ref: np.ndarray, cd_ref: np.ndarray,
                  cdd_ref: np.ndarray, poly: np.ndarray, floor: float, g: float, mass: float,
                  o: SoleBalanceOptions, goal_poly: np.ndarray | None = None,
                  clamp: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Step 1: the wanted floor force ``(3,)`` N through the COM and its centre of pressure
    ``(2,)`` m, from the COM state ``c, cd`` and the input's ``c_ref, cd_ref, cdd_ref``.

    ``poly`` ``(k, 2)`` is where the centre of pressure may go; ``goal_poly`` (default
    ``poly``) is where the goal ``ξ_ref`` is clamped -- with the step-aware law, the hull of
    the present support and the input's next footprints, so that a walk's capture point may
    run ahead of the stance sole toward the next one. With ``feedforward`` the input's own LIP
    centre of pressure ``p_ref = c_ref − c̈_ref/ω²`` is added; only the sum is clamped:
    ``ξ̇ − ξ̇_ref = −k (ξ − ξ_ref)`` while ``p`` is inside. ``clamp=False`` leaves ``p`` where
    the law puts it (method B's settling, which is not written, brings a body that starts at
    the edge of its support -- a walk's first frame -- to its goal that way)."""
    h = max(c[2] - floor, 0.05)
    w = np.sqrt(g / h)
    xi = c[:2] + cd[:2] / w
    gp = poly if goal_poly is None else goal_poly
    xi_raw = c_ref[:2] + cd_ref[:2] / w
    xi_ref = inside(gp, xi_raw, o.ref_margin)
    if o.feedforward:
        p_ref = c_ref[:2] - cdd_ref[:2] / (w * w)
        if goal_poly is None:  # the previous law: its feed-forward is clamped too
            p_ref = inside(poly, p_ref, o.margin)
        else:  # the goal was moved: the feed-forward moves with it (ξ_ref − p_ref kept)
            p_ref = p_ref + (xi_ref - xi_raw)
        p = p_ref + (1.0 + o.dcm_gain / w) * (xi - xi_ref)
    else:
        p = xi + (o.dcm_gain / w) * (xi - xi_ref)
    if clamp:
        p = inside(poly, p, o.margin)
    wz = 2.0 * np.pi * o.com_z_hz
    zdd = cdd_ref[2] + wz * wz * (c_ref[2] - c[2]) + 2.0 * wz * (cd_ref[2] - cd[2])
    fz = mass * (g + float(np.clip(zdd, -0.5 * g, 0.5 * g)))
    F = np.array([*(fz * (c[:2] - p) / h), fz])
    return F, p


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def sole_stiffness(x: np.ndarray, sole: np.ndarray, origins: np.ndarray, k_s: float,
                   length: float) -> np.ndarray:
    """Step 2: the change of the floor wrench ``(N (about the origin), F)`` per small rigid
    displacement ``(dp, dθ·length)`` of each sole, ``(6, 6 S)``.

    Every point ``x`` ``(k, 3)`` of sole ``sole[i]`` (about ``origins[sole[i]]``) counts as
    touching with spring ``k_S`` (isotropic: normal and tangential springs): moving it by ``δx``
    changes its force by ``−k_S δx``. A point just above the floor is included too, so the law
    can ask a lifted heel to come down; its force appears when it touches.
    """
    S = len(origins)
    K = np.zeros((6, 6 * S))
    for xm, s in zip(x, sole, strict=True):
        G = np.hstack([np.eye(3), -_skew(xm - origins[s]) * (1.0 / length)])  # δx per column
        Fm = -k_s * G
        K[:3, 6 * s:6 * s + 6] += _skew(xm) @ Fm
        K[3:, 6 * s:6 * s + 6] += Fm
    return K


def sole_displacements(K: np.ndarray, error: np.ndarray, length: float, ridge: float
                       ) -> np.ndarray:
    """Step 3: the least-norm sole displacements ``(S, 6)`` (``dp`` m, ``dθ`` rad) whose
    stiffness ``K`` (:func:`sole_stiffness`) gives the wrench error ``(6,)``; the moment rows
    are scaled by ``1 / length`` so that force and moment errors count alike, and a ridge of
    ``ridge`` times the mean eigenvalue keeps directions the soles cannot push (a sole on two
    points cannot roll about their line) from blowing up."""
    scale = np.array([1.0 / length] * 3 + [1.0] * 3)
    Ks = K * scale[:, None]
    A = Ks @ Ks.T
    A[np.diag_indices(6)] += ridge * max(float(np.trace(A)) / 6.0, 1e-300)
    d = Ks.T @ np.linalg.solve(A, error * scale)
    d = d.reshape(-1, 6)
    d[:, 3:] /= length
    return d


def small_rotation(theta: np.ndarray) -> np.ndarray:
    """Rotation matrix ``(3, 3)`` of the rotation vector ``theta`` (Rodrigues)."""
    a = float(np.linalg.norm(theta))
    if a < 1e-12:
        return np.eye(3)
    k = theta / a
    Kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(a) * Kx + (1.0 - np.cos(a)) * (Kx @ Kx)
