"""Zero-moment point, support polygon and seed D's three contact checks, batched.

The total external wrench a motion needs is the root wrench of inverse dynamics
(:func:`animik.dynamics.rnea`): ``(N, F)``, moment about the world origin and force. On a
floor ``z = h`` the point where its moment has no horizontal part -- the zero-moment point, or
centre of pressure of the contact forces -- is (docs/dynamics.md)::

    p_x = (h F_x - N_y) / F_z,   p_y = (N_x + h F_y) / F_z,   p_z = h     (F_z > 0)

Seed D's checks of that wrench as a floor contact force, per frame:
(1) the normal force pushes: ``F_z >= 0``;
(2) the ZMP lies in the support polygon: signed margin ``>= 0`` m (positive inside);
(3) no slip: ``|F_t| <= mu F_z`` (friction ratio ``|F_t| / F_z``).
A frame with no area in contact is a flight phase: the wrench must then vanish (within
``flight_tol`` x body weight for the force, and x body weight x 1 m for the moment about the
centre of mass).

On frames where a support other than the floor is active (a seat, pedals, hand holds:
:mod:`animik.dynamics.supports`) the three checks are replaced by the contact-wrench-cone check
(:mod:`animik.dynamics.cone`) over the floor contacts and the supports together: reason
:data:`CONE` when the residual exceeds :data:`CONE_TOL` body weights.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import AnimikError
from ..skeleton import Skeleton
from . import _support
from .contacts import ContactModel, contact_model
from .inverse import GRAVITY, momentum, rnea
from .supports import SupportFrames

PULL, OUTSIDE, SLIP, FLIGHT, CONE, THROUGH = 1, 2, 4, 8, 16, 32
REASONS = {PULL: "pulling", OUTSIDE: "zmp outside", SLIP: "slipping", FLIGHT: "flight wrench",
           CONE: "outside wrench cone", THROUGH: "through support"}
#: a frame with a support is feasible when the cone residual is below this (body weights)
CONE_TOL = 1e-6


class FeasibilityError(AnimikError, ValueError):
    """Bad arguments to a feasibility check (``mu``, ``fps``, contact flags...)."""


def zmp_from_wrench(wrench: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """ZMP ``(..., 3)`` on the floor ``z = floor`` from wrenches ``(..., 6)`` (moment about the
    world origin; force). NaN where ``F_z <= 0`` (pulling or flight: no centre of pressure)."""
    n, f = wrench[..., :3], wrench[..., 3:]
    fz = f[..., 2]
    ok = fz > 0.0
    safe = np.where(ok, fz, 1.0)
    x = np.where(ok, (floor * f[..., 0] - n[..., 1]) / safe, np.nan)
    y = np.where(ok, (n[..., 0] + floor * f[..., 1]) / safe, np.nan)
    return np.stack([x, y, np.where(ok, floor, np.nan)], axis=-1)


def zmp(skel: Skeleton, q: Any, qd: Any, qdd: Any, gravity: Any = GRAVITY,
        floor: float = 0.0) -> np.ndarray:
    """Zero-moment point ``(..., 3)`` m on the floor ``z = floor`` for states ``(..., n_dof)``.

    NaN where the required vertical force is not positive (see :func:`zmp_from_wrench`).
    """
    return zmp_from_wrench(rnea(skel, q, qd, qdd, gravity).wrench, floor)


def support_polygon(skel: Skeleton, q: Any, in_contact: Any = True,
                    contacts: ContactModel | None = None) -> np.ndarray:
    """Convex hull ``(k, 2)`` (counter-clockwise, m) of the floor projections of the active
    contact areas at one pose ``q (n_dof,)``.

    Args:
        in_contact: bool ``(A,)`` per area, area names, or ``True`` (all areas).
        contacts: contact geometry (default: :func:`contact_model` of ``skel``).

    Returns:
        ``(k, 2)`` vertices; ``k = 0`` without contact, 1 or 2 for a point or a segment.
    """
    q = skel.check_q(q)
    if q.ndim != 1:
        raise FeasibilityError(f"support_polygon takes one pose (n_dof,), got shape {q.shape}")
    cm = contacts or contact_model(skel)
    act = np.ascontiguousarray(cm.in_contact_mask(in_contact, (1,)))
    pts = cm.points(skel, q)[None]
    poly = np.empty((1, pts.shape[1], 2))
    nv = np.zeros(1, dtype=np.int64)
    margin, nearest = np.empty(1), np.empty((1, 2))
    _support.margins_batch(np.ascontiguousarray(pts), cm.point_area, act, np.full(1, np.nan),
                           np.full(1, np.nan), poly, nv, margin, nearest)
    return poly[0, :nv[0]].copy()


class ContactCheck(NamedTuple):
    """Per-frame result of :func:`check_contacts` (leading shape ``(...)`` of the states).

    Attributes:
        wrench: ``(..., 6)`` required external wrench (moment about the origin N m; force N).
        zmp: ``(..., 3)`` m (NaN when ``F_z <= 0``).
        normal_force: ``(..., )`` N, ``F_z``.
        friction_ratio: ``(...)`` ``|F_t| / F_z`` (inf when ``F_z <= 0``, NaN in flight).
        margin: ``(...)`` m, signed ZMP distance to the support polygon (NaN without ZMP or
            contact).
        nearest: ``(..., 2)`` m, the polygon point nearest the ZMP.
        flight_residual: ``(...)`` the wrench in flight relative to the weight (0 with contact).
        in_contact: ``(..., A)`` bool.
        reasons: ``(...)`` int bit set of :data:`PULL` :data:`OUTSIDE` :data:`SLIP` :data:`FLIGHT`.
        feasible: ``(...)`` bool (``reasons == 0``).
        com: ``(..., 3)`` m centre of mass.
        support_active: ``(..., S)`` bool per support (``S = 0`` without supports).
        cone_residual: ``(...)`` body weights, the wrench part the contacts and supports cannot
            give (NaN on frames checked by the ZMP, 0 = feasible).
        cone_axis: ``(...)`` int, index into :data:`animik.dynamics.cone.AXES` of the
            residual's largest component (-1 when feasible or not cone-checked).
    """

    wrench: np.ndarray
    zmp: np.ndarray
    normal_force: np.ndarray
    friction_ratio: np.ndarray
    margin: np.ndarray
    nearest: np.ndarray
    flight_residual: np.ndarray
    in_contact: np.ndarray
    reasons: np.ndarray
    feasible: np.ndarray
    com: np.ndarray
    support_active: np.ndarray
    cone_residual: np.ndarray
    cone_axis: np.ndarray


def positive_number(value: Any, name: str) -> float:
    """``value`` as a float, or a :class:`FeasibilityError` naming ``name`` unless finite, > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise FeasibilityError(f"{name} must be a positive number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0.0:
        raise FeasibilityError(f"{name} must be a positive finite number, got {value!r}")
    return v


def check_mu(mu: Any) -> float:
    """Validate a friction coefficient (finite, > 0)."""
    return positive_number(mu, "mu")


def evaluate_wrench(skel: Skeleton, wrench: np.ndarray, points: np.ndarray, active: np.ndarray,
                    com: np.ndarray, mu: float, floor: float = 0.0, flight_tol: float = 0.05,
                    contacts: ContactModel | None = None,
                    supports: SupportFrames | None = None) -> ContactCheck:
    """The three checks for given wrenches ``(B, 6)``, contact points ``(B, P, 3)``, flags
    ``(B, A)`` and COMs ``(B, 3)`` (flat batch; see :func:`check_contacts`).

    ``supports`` (:meth:`animik.dynamics.supports.SupportSet.at` of the same frames): on frames
    where one is active, the contact-wrench-cone check of the floor contacts (their points on
    the floor plane) and the supports replaces the three checks; other frames are unchanged."""
    cm = contacts or contact_model(skel)
    B = wrench.shape[0]
    f = wrench[:, 3:]
    fz = f[:, 2]
    z = zmp_from_wrench(wrench, floor)
    any_c = active.any(axis=1)
    ft = np.hypot(f[:, 0], f[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(fz > 0, ft / np.where(fz > 0, fz, 1.0), np.inf)
    ratio = np.where(any_c, ratio, np.nan)
    poly = np.empty((B, points.shape[1], 2))
    nv = np.zeros(B, dtype=np.int64)
    margin, nearest = np.empty(B), np.empty((B, 2))
    zx = np.where(any_c, z[:, 0], np.nan)
    _support.margins_batch(np.ascontiguousarray(points), cm.point_area,
                           np.ascontiguousarray(active), np.ascontiguousarray(zx),
                           np.ascontiguousarray(z[:, 1]), poly, nv, margin, nearest)
    weight = max(skel.total_mass * float(np.linalg.norm(GRAVITY)), 1e-12)
    n_com = wrench[:, :3] - np.cross(com, f)  # moment about the COM
    resid = np.where(any_c, 0.0, np.maximum(np.linalg.norm(f, axis=1),
                                            np.linalg.norm(n_com, axis=1)) / weight)
    reasons = np.zeros(B, dtype=np.int64)
    reasons |= np.where(any_c & (fz < 0.0), PULL, 0)
    reasons |= np.where(any_c & (fz >= 0.0) & ~(margin >= 0.0), OUTSIDE, 0)
    reasons |= np.where(any_c & ~(ratio <= mu), SLIP, 0)
    reasons |= np.where(~any_c & (resid > flight_tol), FLIGHT, 0)
    S = 0 if supports is None else supports.active.shape[1]
    sup_act = np.zeros((B, 0), dtype=bool) if supports is None else supports.active
    cres, caxis = np.full(B, np.nan), np.full(B, -1, dtype=np.int64)
    rows = np.flatnonzero(sup_act.any(axis=1)) if S else np.zeros(0, dtype=np.int64)
    if len(rows):
        from .cone import cone_residual

        sf = supports
        fpts = np.array(points[rows])
        fpts[..., 2] = floor  # the floor contacts on the floor plane, as the ZMP check has them
        fon = active[rows][:, cm.point_area]
        push_pts = np.concatenate([fpts, sf.push_points[rows]], axis=1)
        push_n = np.concatenate([np.broadcast_to([0.0, 0.0, 1.0], fpts.shape),
                                 sf.push_normals[rows]], axis=1)
        push_mu = np.concatenate([np.full(fpts.shape[1], mu), sf.push_mu])
        # a world surface pushes only where the body touches it (supports.SupportFrames)
        push_on = np.concatenate([fon, sup_act[rows][:, sf.push_support]
                                  & _touch(sf.push_touch, rows, sf.push_support)], axis=1)
        grip_on = sup_act[rows][:, sf.grip_support] & _touch(sf.grip_touch, rows,
                                                             sf.grip_support)
        cres[rows], caxis[rows] = cone_residual(
            wrench[rows], com[rows], weight, push_pts, push_n, push_mu, push_on,
            sf.grip_points[rows], sf.grip_bound, grip_on)
        # the cone check replaces the floor-only ones (a supported frame is not a flight)
        reasons[rows] = np.where(cres[rows] > CONE_TOL, CONE, 0)
        if sf.sunk is not None:  # the body through a world-fixed seat or foot rest
            reasons[rows] |= np.where(sf.sunk[rows].any(axis=1), THROUGH, 0)
        margin[rows] = np.nan
        nearest[rows] = np.nan
        ratio[rows] = np.nan
        resid[rows] = 0.0
    return ContactCheck(wrench, z, fz, ratio, margin, nearest, resid, active, reasons,
                        reasons == 0, com, sup_act, cres, caxis)


def _touch(touch: np.ndarray | None, rows: np.ndarray, support: np.ndarray) -> np.ndarray:
    """``(len(rows), k)`` bool: the supports' points touching the body on those frames."""
    if touch is None:
        return np.ones((len(rows), len(support)), dtype=bool)
    return touch[rows]


def check_contacts(skel: Skeleton, q: Any, qd: Any, qdd: Any, in_contact: Any = True,
                   mu: float = 0.7, floor: float = 0.0, gravity: Any = GRAVITY,
                   flight_tol: float = 0.05, contacts: ContactModel | None = None) -> ContactCheck:
    """Seed D's three checks of the wrench a motion needs, for states ``(..., n_dof)``.

    Args:
        skel: the skeleton (with contact geometry, see :mod:`animik.dynamics.contacts`).
        q, qd, qdd: ``(..., n_dof)`` states.
        in_contact: bool ``(..., A)`` per contact area, area names, or ``True`` (all).
        mu: static friction coefficient (> 0).
        floor: floor height (m).
        flight_tol: allowed wrench in flight, fraction of the body weight (and weight x 1 m).

    Returns:
        :class:`ContactCheck` with the states' leading shape.

    Raises:
        FeasibilityError: ``mu <= 0``; ContactGeometryError: no contact geometry / bad flags;
        ShapeError: bad states.
    """
    mu = check_mu(mu)
    cm = contacts or contact_model(skel)
    res = rnea(skel, q, qd, qdd, gravity)
    lead = res.wrench.shape[:-1]
    B = int(np.prod(lead))
    qb = np.array(np.broadcast_to(skel.check_q(q), lead + (skel.n_dof,))).reshape(B, skel.n_dof)
    act = cm.in_contact_mask(in_contact, lead).reshape(B, cm.n_areas)
    pts = cm.points(skel, qb)
    c = momentum(skel, qb).com
    out = evaluate_wrench(skel, res.wrench.reshape(B, 6), pts, act, c, mu, floor, flight_tol, cm)
    return ContactCheck(*[a.reshape(lead + a.shape[1:]) for a in out])
