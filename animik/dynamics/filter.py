"""Seed D's dynamics filter: kinematic references in, physically feasible motion out.

**Method A** (inverse-dynamics check and correction), per frame at state ``(q, qd)``:

(a) desired accelerations from the kinematic constraints, as a weighted least-squares problem
    ``min w_q |qdd - qdd_ref|^2 + w_p sum_i |J_i qdd + Jdot_i qd - a_i,ref|^2``: joint targets
    ``qdd_ref = qdd* + k_p (q* - q) + k_d (qd* - qd)`` (the input clip, or the app's pose),
    clipped so that the next pose stays within the joint limits; pins and dragged links
    ``a_ref = k_p (x* - x) - k_d xdot`` (position and orientation of the pinned joint frame);
(b) the wrench the floor must supply: ``W(qdd) = A_w qdd + b`` (root wrench of inverse
    dynamics; ``A_w``, ``b`` from one Newton-Euler / composite-inertia pass, see
    :func:`animik.dynamics._kernels.filter_terms` -- seed D's ``M_b``, ``c_b`` expressed as a
    world wrench, which avoids the Euler-angle singularity of the root's hinge rows);
(c) the three checks (push, ZMP in the support polygon shrunk by ``margin``, friction within
    ``friction_safety * mu``);
(d) valid: keep ``qdd``;
(e) invalid: the nearest valid wrench ``W^`` (pulling or flight: zero wrench; ZMP moved to the
    nearest point of the shrunk polygon; tangential force scaled onto the friction cone; the
    vertical moment about the ZMP kept) and the least-squares problem re-solved with the six
    equalities ``A_w qdd + b = W^`` (KKT, closed form through the Cholesky factor of the
    weight matrix);
(f) semi-implicit Euler: ``qd += dt qdd``, ``q += dt qd``.

**Method B** (operational-space inverse inertia, contact springs and dampers) is a clip
simulation of its own: :mod:`animik.dynamics.method_b` (docs/dynamics.md 5c).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np
import scipy.linalg as sla

from ..errors import AnimikError
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..skeleton import Skeleton
from . import _kernels as K
from . import _support
from .clip import DEFAULT_WINDOW, ClipFeasibility, check_clip, clip_states, detect_clip_contacts
from .contacts import ContactModel, contact_model, contact_model_for_clip
from .inverse import GRAVITY, model_args, momentum, rnea
from .zmp import FeasibilityError, check_contacts, check_mu


class FilterDivergedError(AnimikError, ArithmeticError):
    """The filtered motion left the reference so far that the step became meaningless."""


@dataclass(frozen=True)
class FilterOptions:
    """Settings of the dynamics filter.

    Attributes:
        method: ``"A"`` (check and correct) or ``"B"`` (contact springs, inverse inertia).
        mu: friction coefficient. friction_safety: fraction of ``mu`` the filter aims for.
        margin: the corrected ZMP is kept this far inside the support polygon (m).
        track_hz: natural frequency of the joint-tracking PD (critically damped), Hz.
        pin_hz: natural frequency of the pins (contact feet, dragged links), Hz.
        w_joint: weight of the joint references. w_pin: weight of the pins.
        pin_feet: the clip filter pins each contact foot where it lands (seed D's pinned
            links); off by default: the mocap's own feet roll and skate (docs/dynamics.md).
        hard_pins: pins are equalities (else least-squares rows weighted ``w_pin``).
        w_root: relative weight of the root's references: the root follows from the pinned
            feet and the joint angles; tracking it hard fights the pins.
        window: Savitzky-Golay window of the input's derivatives (s).
        substeps: integration substeps per frame.
        torsion_radius: the free vertical moment is limited to ``mu f_z torsion_radius`` (m).
        max_accel: joint reference accelerations are clipped to this (rad/s^2 or m/s^2):
            retargeted clips can start with an IK transient of thousands of rad/s^2.
    """

    method: str = "A"
    mu: float = 0.7
    friction_safety: float = 0.9
    margin: float = 0.01
    track_hz: float = 4.0
    pin_hz: float = 6.0
    w_joint: float = 1.0
    w_pin: float = 0.0
    window: float = DEFAULT_WINDOW
    substeps: int = 1
    max_accel: float = 200.0
    w_root: float = 0.01
    pin_rotation: bool = True
    hard_pins: bool = False
    pin_feet: bool = False
    torsion_radius: float = float("inf")
    metric: str = "joint"
    flight_height: float = 0.1
    w_com: float = 0.0
    feedforward: float = 1.0
    dcm_gain: float = 1.0
    dcm: bool = False
    max_deviation: float = 1.0
    com_hz: float = 2.0

    def checked(self) -> FilterOptions:
        if self.method != "A":
            raise FeasibilityError(f"method must be 'A' (seed D method B is "
                                   f"animik.dynamics.method_b), got {self.method!r}")
        check_mu(self.mu)
        for name in ("friction_safety", "track_hz", "pin_hz", "w_joint", "window", "com_hz",
                     "max_accel"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise FeasibilityError(f"{name} must be a positive number, got {v!r}")
        for name in ("w_pin", "w_com"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise FeasibilityError(f"{name} must be >= 0, got {v!r}")
        if not (np.isfinite(self.margin) and self.margin >= 0):
            raise FeasibilityError(f"margin must be >= 0 m, got {self.margin!r}")
        if int(self.substeps) < 1:
            raise FeasibilityError(f"substeps must be >= 1, got {self.substeps!r}")
        return self


@dataclass
class Pin:
    """A joint frame held at a world pose (a contact foot, a dragged hand).

    Attributes:
        joint: joint index. position: ``(3,)`` m target. rotation: ``(3, 3)`` target or
        ``None`` (position only). weight: multiplies ``w_pin``.
    """

    joint: int
    position: np.ndarray
    rotation: np.ndarray | None = None
    weight: float = 1.0


def _rotvec(R: np.ndarray) -> np.ndarray:
    """Rotation vector of a rotation matrix (small-angle safe)."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    th = np.arccos(c)
    v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.sin(th)
    if s < 1e-9:
        return 0.5 * v
    return th / (2.0 * s) * v


@dataclass
class StepInfo:
    """What one filter step saw and did."""

    wrench_wanted: np.ndarray
    wrench: np.ndarray
    corrected: bool
    polygon: np.ndarray
    zmp: np.ndarray = field(default_factory=lambda: np.full(3, np.nan))


class DynamicsFilter:
    """Per-frame seed D filter on one skeleton (reusable workspace; the app's physics mode and
    the clip filter both step it).

    Args:
        skel: the skeleton (free-floating root expected; mass data and contact geometry used).
        options: :class:`FilterOptions`.
        floor: floor height (m).
    """

    def __init__(self, skel: Skeleton, options: FilterOptions = FilterOptions(),
                 floor: float = 0.0, gravity: Any = GRAVITY, contacts: ContactModel | None = None):
        self.skel = skel
        self.opt = options.checked()
        self.floor = float(floor)
        self.g = np.ascontiguousarray(np.asarray(gravity, dtype=float))
        self.contacts = contacts or contact_model(skel)
        n, J = skel.n_dof, skel.n_joints
        self._args = model_args(skel)
        self._dof_joint = np.ascontiguousarray(skel.dof_joint, dtype=np.int64)
        self.Rw = np.empty((J, 3, 3))
        self.pw = np.empty((J, 3))
        self.S = np.empty((n, 6))
        self.V = np.empty((J, 6))
        self.A0 = np.empty((J, 6))
        self.IC = np.empty((J, 6, 6))
        self.Aw = np.empty((6, n))
        self.bias = np.empty(6)
        self.M = np.empty((n, n))
        self.chain = skel.joint_ancestor_mask[:, skel.dof_joint]  # (J, n) DoFs moving joint j
        self.lower, self.upper = skel.lower, skel.upper
        self.finite = np.isfinite(skel.lower) | np.isfinite(skel.upper)
        # The joint each area is pinned by: the joint of its first point (the foot / ankle).
        cm = self.contacts
        self.area_joint = np.array([cm.point_joint[np.flatnonzero(cm.point_area == a)[0]]
                                    for a in range(cm.n_areas)], dtype=np.int64)
        self.weight = skel.total_mass * float(np.linalg.norm(self.g))
        # Diagonal regularisation of the mass-matrix metric: 1e-3 of the mean diagonal of M
        # at the rest pose (kg m^2 scale).
        self.mean_inertia = float(np.mean(np.diag(self.mass_matrix(skel.rest_q))))
        self.reg = 1e-3 * self.mean_inertia
        root = int(np.flatnonzero(skel.parents < 0)[0])
        self.track_scale = np.ones(n)
        self.track_scale[list(skel.joint_dofs(root))] = np.sqrt(self.opt.w_root)

    # ------------------------------------------------------------------ pieces
    def terms(self, q: np.ndarray, qd: np.ndarray) -> None:
        par, off, rr, ds, dt, dax, m, c, ine = self._args
        K.filter_terms(q, qd, self.g, par, off, rr, ds, dt, dax, self._dof_joint, m, c, ine,
                       self.Rw, self.pw, self.S, self.V, self.A0, self.IC, self.Aw, self.bias)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        par, off, rr, ds, dt, dax, m, c, ine = self._args
        K.crba_one(q, par, off, rr, ds, dt, dax, self._dof_joint, m, c, ine, self.Rw, self.pw,
                   self.S, self.IC, self.M)
        return self.M

    def link_motion(self, j: int) -> tuple[np.ndarray, ...]:
        """Joint ``j``'s origin in world axes (after :meth:`terms`): its Jacobian rows
        ``Sv (3, n)`` (linear) and ``Sw (3, n)`` (angular), its velocity ``vp``, angular
        velocity ``w``, and the accelerations at ``qdd = 0`` (``ap``, ``alpha``: ``J̇ q̇``).
        Returns ``(p, Sv, Sw, vp, w, ap, alpha)``."""
        p = self.pw[j]
        mask = self.chain[j]
        Sw = self.S[:, :3].T * mask
        Sv = (self.S[:, 3:] + np.cross(self.S[:, :3], p)).T * mask
        w = self.V[j, :3]
        vp = self.V[j, 3:] + np.cross(w, p)
        alpha = self.A0[j, :3]
        ap = self.A0[j, 3:] + np.cross(alpha, p) + np.cross(w, vp)
        return p, Sv, Sw, vp, w, ap, alpha

    def pin_rows(self, pin: Pin) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Jacobian rows, bias ``Jdot qd`` and current error-free velocity of a pin (after
        :meth:`terms`). Returns ``(J (r, n), bias (r,), (pos err, vel) ...)``."""
        j = pin.joint
        p, Sv, Sw, vp, w, ap, alpha = self.link_motion(j)
        wn = 2.0 * np.pi * self.opt.pin_hz
        kp, kd = wn * wn, 2.0 * wn
        ref_v = kp * (pin.position - p) - kd * vp - ap
        if pin.rotation is None:
            return Sv, ref_v, vp
        ref_w = kp * _rotvec(pin.rotation @ self.Rw[j].T) - kd * w - alpha
        return np.vstack([Sv, Sw]), np.concatenate([ref_v, ref_w]), vp

    def polygon(self, active: np.ndarray) -> np.ndarray:
        """Support polygon ``(k, 2)`` of the active areas at the current FK (after :meth:`terms`)."""
        cm = self.contacts
        sel = active[cm.point_area]
        if not sel.any():
            return np.zeros((0, 2))
        R = self.Rw[cm.point_joint[sel]]
        pts = self.pw[cm.point_joint[sel]] + np.einsum("pab,pb->pa", R, cm.point_local[sel])
        out = np.empty((len(pts), 2))
        m = _support.hull(np.ascontiguousarray(pts[:, :2]), out)
        return out[:m]

    def nearest_valid(self, W: np.ndarray, poly: np.ndarray) -> tuple[np.ndarray, bool, np.ndarray]:
        """Seed D method A (e): the nearest valid contact wrench. Returns ``(W^, changed, zmp)``."""
        o = self.opt
        if len(poly) == 0:  # flight: the floor supplies nothing
            return np.zeros(6), bool(np.abs(W).max() > 1e-9 * self.weight), np.full(3, np.nan)
        n, f = W[:3], W[3:]
        fz = f[2]
        if fz <= 0.0:  # pulling: normal force 0, hence no tangential force and no moment
            return np.zeros(6), True, np.full(3, np.nan)
        h = self.floor
        p = np.array([(h * f[0] - n[1]) / fz, (n[0] + h * f[1]) / fz, h])
        near = np.empty(2)
        d = _support.signed_distance(poly, len(poly), p[0], p[1], near)
        cen = poly.mean(axis=0)
        dc = _support.signed_distance(poly, len(poly), cen[0], cen[1], np.empty(2))
        margin = min(o.margin, 0.5 * max(dc, 0.0))
        changed = False
        q2 = p.copy()
        if d < margin:
            changed = True
            base = near if d < 0 else p[:2]
            to_c = cen - base
            dist = float(np.hypot(*to_c))
            step = min(margin - min(d, 0.0) if d >= 0 else margin, dist)
            q2[:2] = base + (to_c / dist * step if dist > 0 else 0.0)
        ft = f[:2].copy()
        lim = o.friction_safety * o.mu * fz
        nt = float(np.hypot(*ft))
        if nt > lim:
            changed = True
            ft *= lim / nt
        # The vertical (free) moment about the new centre of pressure, limited by torsional
        # friction: |n_z| <= mu_s f_z r_t with r_t = torsion_radius (a patch's effective radius).
        nz = (n - np.cross(q2, f))[2]
        nz_lim = o.friction_safety * o.mu * fz * o.torsion_radius
        if abs(nz) > nz_lim:
            changed = True
            nz = float(np.clip(nz, -nz_lim, nz_lim))
        if not changed:
            return W, False, p
        f2 = np.array([ft[0], ft[1], fz])
        n2 = np.cross(q2, f2) + np.array([0.0, 0.0, nz])
        return np.concatenate([n2, f2]), True, q2

    # ------------------------------------------------------------------ one step
    def com_rows(self, com_ref: tuple[np.ndarray, np.ndarray, np.ndarray] | None
                 ) -> tuple[np.ndarray, np.ndarray] | None:
        """Centre-of-mass acceleration task (after :meth:`terms`): rows ``A_w[3:] / m`` and
        the right-hand side ``cdd_ref - g - b[3:] / m`` with ``cdd_ref`` the reference COM
        acceleration plus a PD on the reference COM position / velocity ``com_ref = (c, cd,
        cdd)``. This is the balance part of the kinematic references: it keeps the body's
        COM on the input's COM path, so that a corrected wrench does not let the body topple
        (method A alone has no look-ahead)."""
        if com_ref is None:
            return None
        m = self.skel.total_mass
        c = self.com_now
        cd = self.com_vel_now
        wn = 2.0 * np.pi * self.opt.com_hz
        cdd = com_ref[2] + wn * wn * (com_ref[0] - c) + 2.0 * wn * (com_ref[1] - cd)
        poly = self._poly
        hz = c[2] - self.floor
        if self.opt.dcm and len(poly) and hz > 0.05:
            # Horizontal: divergent-component-of-motion (capture point) control. With
            # w = sqrt(g / h), xi = c + cd / w obeys xi' = w (xi - p); choosing the ZMP
            # p = xi + k (xi - xi_d) with xi_d the reference's capture point moved into the
            # support polygon, and p clamped into it, keeps xi (hence the COM) recoverable.
            w = np.sqrt(max(-self.g[2], 1e-9) / hz)
            xi = c[:2] + cd[:2] / w
            xi_ref = com_ref[0][:2] + com_ref[1][:2] / w
            xi_d = self._inside(poly, xi_ref)
            p = self._inside(poly, xi + self.opt.dcm_gain * (xi - xi_d))
            cdd = cdd.copy()
            cdd[:2] = w * w * (c[:2] - p)
        return self.Aw[3:] / m, cdd - self.g - self.bias[3:] / m

    def _inside(self, poly: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``x`` moved into the support polygon shrunk by the filter's margin (toward its centre)."""
        near = np.empty(2)
        d = _support.signed_distance(poly, len(poly), x[0], x[1], near)
        cen = poly.mean(axis=0)
        dc = _support.signed_distance(poly, len(poly), cen[0], cen[1], np.empty(2))
        margin = min(2.0 * self.opt.margin, 0.5 * max(dc, 0.0))
        if d >= margin:
            return x
        base = near if d < 0 else x
        to_c = cen - base
        dist = float(np.hypot(*to_c))
        step = min(margin - (d if d > 0 else 0.0), dist)
        return base + (to_c / dist * step if dist > 0 else 0.0)

    def accelerations(self, q: np.ndarray, qd: np.ndarray, qdd_ref: np.ndarray,
                      pins: list[Pin], active: np.ndarray, dt: float,
                      com_ref: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                      ) -> tuple[np.ndarray, StepInfo]:
        """Method A steps (a)-(e) at ``(q, qd)``: the corrected accelerations and what happened."""
        o = self.opt
        n = self.skel.n_dof
        # Joint references weighted by the mass matrix (Gauss's least constraint): a wrench
        # correction then moves the body as the floor force would, mostly through the root,
        # instead of whipping light segments. A small diagonal keeps massless DoFs defined.
        M = self.mass_matrix(q) if o.metric == "mass" else None
        self.terms(q, qd)
        # Joint-limit references: the next pose must stay within the limits.
        if self.finite.any():
            lo = (self.lower - q - dt * qd) / (dt * dt)
            hi = (self.upper - q - dt * qd) / (dt * dt)
            qdd_ref = np.clip(qdd_ref, np.minimum(lo, hi), np.maximum(hi, lo))
        if o.metric == "mass":
            D = self.track_scale
            H = o.w_joint * (D[:, None] * M * D[None, :])
            H[np.diag_indices(n)] += o.w_joint * self.reg
        elif o.metric == "inertia":
            # Deviations of light DoFs cost more: a wrench correction is then made by the
            # trunk and legs, not by whipping clavicles and fingers (their inertia is small,
            # so they would need huge accelerations to move the total momentum).
            dm = np.diag(self.mass_matrix(q)) + self.reg
            H = np.diag(o.w_joint * self.track_scale ** 2 * (self.mean_inertia / dm))
        elif o.metric == "diag":
            H = np.diag(o.w_joint * self.track_scale ** 2 * (np.diag(self.mass_matrix(q)) + self.reg))
        else:
            H = np.diag(o.w_joint * self.track_scale ** 2)
        g = H @ qdd_ref
        hard_J, hard_r = [], []
        for pin in pins:
            Jp, r, _ = self.pin_rows(pin)
            if o.hard_pins:  # pinned links are equalities (the floor holds a contact foot)
                hard_J.append(Jp)
                hard_r.append(r)
            else:
                w = o.w_pin * pin.weight
                H += w * (Jp.T @ Jp)
                g += w * (Jp.T @ r)
        self._poly = self.polygon(active)
        if com_ref is not None:
            mom = momentum_of(self, q, qd)
            self.com_now, self.com_vel_now = mom
            Jc, rc = self.com_rows(com_ref)
            H += o.w_com * (Jc.T @ Jc)
            g += o.w_com * (Jc.T @ rc)
        if not np.isfinite(g).all():
            raise FilterDivergedError("non-finite accelerations in the filter step")
        cf = sla.cho_factor(H, lower=True, check_finite=False)
        qdd = sla.cho_solve(cf, g, check_finite=False)
        if hard_J:
            qdd = _constrain(cf, qdd, np.vstack(hard_J), np.concatenate(hard_r))
        W = self.Aw @ qdd + self.bias
        poly = self._poly
        W2, changed, z = self.nearest_valid(W, poly)
        if changed:
            # (e): the six base rows as equalities, together with the pins.
            C = np.vstack(hard_J + [self.Aw]) if hard_J else self.Aw
            d = np.concatenate(hard_r + [W2 - self.bias]) if hard_J else W2 - self.bias
            qdd = _constrain(cf, qdd, C, d)
        return qdd, StepInfo(W, self.Aw @ qdd + self.bias, changed, poly, z)


@dataclass
class FilterResult:
    """A filtered clip and how it relates to the input.

    Attributes:
        motion: the filtered clip (same skeleton and fps).
        in_contact: ``(T, A)`` the contact flags used. floor: floor height (m).
        check: :class:`ClipFeasibility` of the output (Savitzky-Golay derivatives, same flags).
        check_exact: per-frame feasibility of the integrator's own states.
        corrected: ``(T,)`` bool frames whose wrench was corrected.
        report: JSON-ready dict (RMS joint change, effector drift, foot skate, timings).
    """

    motion: Motion
    in_contact: np.ndarray
    floor: float
    check: ClipFeasibility
    check_exact: np.ndarray
    corrected: np.ndarray
    report: dict


def _constrain(cf: Any, x0: np.ndarray, C: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The point nearest ``x0`` in the metric ``H`` (Cholesky factor ``cf``) with ``C x = d``:
    ``x = x0 + H^-1 C^T (C H^-1 C^T)^-1 (d - C x0)``; a tiny relative ridge keeps dependent
    rows (a pinned foot and the wrench both fixing the root) solvable in least squares."""
    scale = 1.0 / np.maximum(np.linalg.norm(C, axis=1), 1e-300)  # rows in N and m/s^2
    C = C * scale[:, None]
    d = d * scale
    X = sla.cho_solve(cf, C.T, check_finite=False)
    S = C @ X
    S[np.diag_indices_from(S)] += 1e-10 * max(float(np.trace(S)) / len(S), 1e-300)
    return x0 + X @ np.linalg.solve(S, d - C @ x0)


def momentum_of(filt: DynamicsFilter, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """COM and COM velocity (after ``filt.terms``): from the momentum of the wrench matrix
    pass -- ``A_w qd`` is the spatial momentum's time derivative basis, so use the kernel."""
    out = np.empty((1, 12))
    K.momentum_batch(q[None], qd[None], *filt._args, out)
    return out[0, 0:3].copy(), out[0, 3:6].copy()


def _support_gaps(skel: Skeleton, q: np.ndarray, flags: np.ndarray, floor: float,
                  height: float, cm: ContactModel) -> np.ndarray:
    """Close detection gaps: a frame without any contact whose lowest area is within
    ``height`` of the floor is given that area as support (mocap feet rolling heel to toe are
    fast and low; the filter would otherwise make the body fall ballistically through a gap).
    Real flight (both feet higher) is kept."""
    pts = cm.points(skel, q)
    low = np.stack([pts[:, cm.point_area == a, 2].min(axis=1) for a in range(cm.n_areas)], 1)
    out = flags.copy()
    none = ~out.any(axis=1)
    best = np.argmin(low, axis=1)
    near = low[np.arange(len(low)), best] - floor < height
    idx = np.flatnonzero(none & near)
    out[idx, best[idx]] = True
    return out


def _area_skate(skel: Skeleton, q: np.ndarray, flags: np.ndarray, cm: ContactModel) -> np.ndarray:
    """Per area, the largest horizontal travel (m) of its centroid within one contact phase."""
    pts = cm.points(skel, q)
    out = np.zeros(cm.n_areas)
    for a in range(cm.n_areas):
        c = pts[:, cm.point_area == a, :2].mean(axis=1)
        f = flags[:, a]
        d = np.diff(np.concatenate([[0], f.astype(np.int8), [0]]))
        for s, e in zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1), strict=True):
            seg = c[s:e]
            out[a] = max(out[a], float(np.linalg.norm(seg - seg[0], axis=1).max()))
    return out


def filter_clip(motion: Motion, options: FilterOptions = FilterOptions(),
                in_contact: Any = None, floor: float | None = None) -> FilterResult:
    """Seed D's filter over a whole clip: the input poses are the joint targets, contact feet
    are pinned where they land, and every frame's floor wrench is made valid.

    Args:
        motion: input clip (free-floating root).
        options: :class:`FilterOptions`.
        in_contact: ``(T, A)`` contact flags, or ``None`` to detect them on the input.
        floor: floor height (m); ``None``: estimated with the contacts.

    Returns:
        :class:`FilterResult`.

    Raises:
        FeasibilityError: bad options; ContactGeometryError: no contact geometry.
    """
    opt = options.checked()
    skel = motion.skeleton
    t0 = time.perf_counter()
    ref = clip_states(skel, motion.q, motion.fps, window=opt.window)
    cm = contact_model_for_clip(skel, motion.q)
    if in_contact is None:
        flags, floor = detect_clip_contacts(skel, ref.q, motion.fps, floor, cm)
        flags = _support_gaps(skel, ref.q, flags, floor, opt.flight_height, cm)
    else:
        flags = cm.in_contact_mask(in_contact, (ref.q.shape[0],))
        floor = 0.0 if floor is None else float(floor)
    filt = DynamicsFilter(skel, opt, floor, contacts=cm)
    T, n = ref.q.shape
    mref = momentum(skel, ref.q, ref.qd)
    cdd_ref = rnea(skel, ref.q, ref.qd, ref.qdd).wrench[:, 3:] / skel.total_mass + filt.g
    dt = 1.0 / motion.fps / opt.substeps
    wn = 2.0 * np.pi * opt.track_hz
    kp, kd = wn * wn, 2.0 * wn
    q = ref.q[0].copy()
    v = ref.qd[0].copy()
    out = np.empty((T, n))
    qd_out = np.empty((T, n))
    qdd_out = np.empty((T, n))
    corrected = np.zeros(T, dtype=bool)
    pins: dict[int, Pin] = {}
    t1 = time.perf_counter()
    for t in range(T):
        active = flags[t]
        filt.terms(q, v)
        for a in range(len(active)):
            if active[a] and a not in pins and opt.pin_feet:
                j = int(filt.area_joint[a])
                pins[a] = Pin(j, filt.pw[j].copy(), filt.Rw[j].copy() if opt.pin_rotation else None)
            elif not active[a] and a in pins:
                del pins[a]
        out[t] = q
        qd_out[t] = v
        for s in range(opt.substeps):
            qdd_ref = opt.feedforward * ref.qdd[t] + kp * (ref.q[t] - q) + kd * (ref.qd[t] - v)
            np.clip(qdd_ref, -opt.max_accel, opt.max_accel, out=qdd_ref)
            cref = ((mref.com[t], mref.com_velocity[t], opt.feedforward * cdd_ref[t])
                    if opt.w_com > 0 else None)
            qdd, info = filt.accelerations(q, v, qdd_ref, list(pins.values()), active, dt, cref)
            if not (np.isfinite(qdd).all() and np.abs(q - ref.q[t]).max() < opt.max_deviation):
                raise FilterDivergedError(
                    f"method A diverged at frame {t} of {T}: the corrected motion is "
                    f"{np.abs(q - ref.q[t]).max():.3g} (rad or m) away from the input "
                    f"(limit max_deviation = {opt.max_deviation}); the input is too far from "
                    f"feasible for this filter (see docs/dynamics.md)")
            corrected[t] |= info.corrected
            if s == 0:
                qdd_out[t] = qdd
            v = v + dt * qdd
            q = q + dt * v
    t2 = time.perf_counter()
    result = Motion(skel, out, motion.fps, dict(motion.meta))
    check = check_clip(result, mu=opt.mu, in_contact=flags, floor=floor, window=opt.window,
                       contacts=cm)
    # The integrator's own states (exact accelerations of each step).
    exact = check_contacts(skel, out, qd_out, qdd_out, flags, mu=opt.mu, floor=floor,
                           contacts=cm).feasible
    t3 = time.perf_counter()
    report = _report(motion, result, ref.q, flags, check, exact, corrected,
                     {"prepare_s": t1 - t0, "filter_s": t2 - t1, "check_s": t3 - t2})
    return FilterResult(result, flags, float(floor), check, exact, corrected, report)


def _report(inp: Motion, out: Motion, ref_q: np.ndarray, flags: np.ndarray,
            check: ClipFeasibility, exact: np.ndarray, corrected: np.ndarray,
            times: dict) -> dict:
    skel = inp.skeleton
    T = out.n_frames
    root = int(np.flatnonzero(skel.parents < 0)[0])
    rot = (skel.dof_type == 0)
    rot[list(skel.joint_dofs(root))] = False
    dq = out.q - ref_q
    rms = float(np.sqrt(np.mean(dq[:, rot] ** 2))) if rot.any() else 0.0
    fk_in = forward_kinematics(skel, ref_q)
    fk_out = forward_kinematics(skel, out.q)
    drift = {}
    for s, name in enumerate(skel.site_names):
        d = np.linalg.norm(fk_out.site_positions[:, s] - fk_in.site_positions[:, s], axis=1)
        drift[name] = {"mean_cm": round(float(d.mean()) * 100, 3),
                       "max_cm": round(float(d.max()) * 100, 3)}
    root_d = np.linalg.norm(fk_out.joint_positions[:, root] - fk_in.joint_positions[:, root], axis=1)
    cm = check.contacts
    areas = cm.names
    sk_in = _area_skate(skel, ref_q, flags, cm)
    sk_out = _area_skate(skel, out.q, flags, cm)
    return {
        "frames": T, "fps": out.fps,
        "feasible_frames": int(check.feasible.sum()),
        "feasible_frames_exact": int(exact.sum()),
        "corrected_frames": int(corrected.sum()),
        "rms_joint_change_deg": round(float(np.degrees(rms)), 4),
        "max_joint_change_deg": round(float(np.degrees(np.abs(dq[:, rot]).max())) if rot.any()
                                      else 0.0, 4),
        "root_drift_cm": {"mean": round(float(root_d.mean()) * 100, 3),
                          "max": round(float(root_d.max()) * 100, 3)},
        "effector_drift": drift,
        "foot_skate_cm": {a: {"input": round(float(sk_in[i]) * 100, 3),
                              "output": round(float(sk_out[i]) * 100, 3)}
                          for i, a in enumerate(areas)},
        "seconds": {k: round(v, 4) for k, v in times.items()},
        "filter_frames_per_second": round(T / max(times["filter_s"], 1e-9), 1),
    }




# With PARALLEL, batches of at least PARALLEL_MIN states run on numba's threads (the frames
# split into one chunk a thread, :func:`animik.dynamics._kernels.filter_terms_batch_par`; the
# thread count is numba's: ``NUMBA_NUM_THREADS``, ``numba.set_num_threads``). Off by default:
# measured on the shared 2-core machine at load 13-26 the second thread cost CPU (its OpenMP
# worker waits spinning) and gained no wall time (docs/dynamics.md 6i); ``animik bench
# dynamics --threads 2`` turns it on to measure it.
PARALLEL = False
PARALLEL_MIN = 64


def _parallel(N: int) -> bool:
    return PARALLEL and N >= PARALLEL_MIN and nb.get_num_threads() > 1


def terms_batch(filt: DynamicsFilter, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                full: bool = False) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """:meth:`DynamicsFilter.terms` over states ``(N, n)`` in one numba call.

    Returns:
        ``W (N, 6)`` the root wrench ``Aw qdd + bias``; with ``full``, also ``Aw (N, 6, n)``
        and the DoF axes ``S (N, n, 6)`` (else ``None``).
    """
    par, off, rr, ds, dt, dax, m, c, ine = filt._args
    q, qd, qdd = (np.ascontiguousarray(a, dtype=float) for a in (q, qd, qdd))
    N, n = q.shape
    W = np.empty((N, 6))
    Aw = np.empty((N if full else 0, 6, n))
    S = np.empty((N if full else 0, n, 6))
    args = (q, qd, qdd, filt.g, par, off, rr, ds, dt, dax, filt._dof_joint, m, c, ine, W, Aw, S)
    if _parallel(N):
        K.filter_terms_batch_par(*args, nb.get_num_threads())
    else:
        K.filter_terms_batch(*args)
    return W, (Aw if full else None), (S if full else None)


def wrench_batch(filt: DynamicsFilter, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                 qd_dirs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The root wrench of states ``(N, n)`` (equal to :func:`terms_batch`'s ``W``, without the
    wrench matrix: the clip filter's perturbed states need only ``W``) and, for velocity
    directions ``qd_dirs (N, n, m)``, its exact derivatives ``dW/dqd . qd_dirs``.

    Returns:
        ``W (N, 6)`` and ``dW (N, m, 6)`` (``m = 0`` without ``qd_dirs``).
    """
    par, off, rr, ds, dt, dax, m, c, ine = filt._args
    q, qd, qdd = (np.ascontiguousarray(a, dtype=float) for a in (q, qd, qdd))
    N, n = q.shape
    E = (np.zeros((N, n, 0)) if qd_dirs is None
         else np.ascontiguousarray(qd_dirs, dtype=float))
    W = np.empty((N, 6))
    dW = np.empty((N, E.shape[2], 6))
    args = (q, qd, qdd, E, filt.g, par, off, rr, ds, dt, dax, m, c, ine, W, dW)
    if _parallel(N):
        K.wrench_batch_par(*args, nb.get_num_threads())
    else:
        K.wrench_batch(*args)
    return W, dW
