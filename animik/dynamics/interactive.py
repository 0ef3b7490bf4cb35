"""Seed D's interactive use: keep a stream of kinematic references dynamically feasible.

Every frame a kinematic reference pose arrives (the app's IK step with the user's pins and
dragged links, or a frame of a keyed clip). :class:`BalanceFilter` does seed D's three steps on
it, with one change that makes it hold up on leans:

(a) **kinematic reference**: the pose ``q_ref`` the caller's IK produced (pins, drags, limits);
(b) **dynamic check**: velocity and acceleration by backward differences over the last two
    *output* poses and ``q_ref`` (the same estimate the app's physics overlay uses), inverse
    dynamics, seed D's three checks (``F_z ≥ 0``, ZMP in the support polygon, friction) — plus
    one look-ahead test seed D does not have: the **capture point** (divergent component of
    motion, DCM) ``ξ = c + ċ/ω`` of the reference must lie in the support polygon shrunk by
    ``margin``. A ZMP that is still inside while ``ξ`` is outside means the COM can no longer be
    stopped over the feet: the greedy per-frame check of method A passes such frames and then
    has no way back (docs/dynamics.md, section 5);
(c) **correction** when either test fails: instead of seed D method A's nearest valid wrench
    imposed on the accelerations (which diverged on held leans), the correction is a centre-of-
    mass target for the caller's IK. The COM moves as a linear inverted pendulum (cart-table,
    ``p = c − (z_c / g) c̈``) whose ZMP ``p`` is chosen by the capture-point law
    ``p = ξ + (k/ω)(ξ − ξ*)`` (``ξ*``: the reference's COM projection clamped into the shrunk
    polygon), clamped along the ray from ``ξ`` so that ``p`` stays in the shrunk polygon; the
    next COM position follows from the discrete cart-table relation with the same backward
    differences as the check:
    ``c_n = (2 c_{n−1} − c_{n−2} − h²ω² p) / (1 − h²ω²)``. While ``ξ`` is inside, a clamped
    ``p`` still moves ``ξ`` toward ``ξ*``, so the state stays capturable (the property the
    greedy correction lacks). The caller re-solves its IK with the pins and the drags kept and
    the COM task ``com=(x, y)`` at that point (:meth:`BalanceFilter.step` takes the solve as a
    callable), and the result is checked again with full inverse dynamics;
(g) **lag, never fail**: if the corrected pose still fails (the limbs' angular momentum: a
    dragged hand that jumped, docs/dynamics.md section 8), the first feasible pose on the way
    from it to the constant-velocity prediction and on to the last output is kept (one batched
    check), the soles held; the output reaches the reference over the next frames.

Numeric core: no GL; the app's physics mode (:mod:`animik.app.modes.physics`) and
:func:`make_clip_feasible` use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..errors import AnimikError
from ..skeleton import Skeleton
from . import _kernels as K
from . import _support
from .contacts import ContactModel, contact_model
from .inverse import GRAVITY, com, model_args
from .zmp import ContactCheck, check_contacts, check_mu, evaluate_wrench


class BalanceOptionsError(AnimikError, ValueError):
    """A :class:`BalanceOptions` value out of range."""


@dataclass(frozen=True)
class BalanceOptions:
    """Settings of :class:`BalanceFilter`.

    Attributes:
        margin: the correction keeps the ZMP and the capture point this far inside the support
            polygon (m); the check accepts a reference whose ZMP is ``check_margin`` inside and
            whose capture point is ``margin`` inside.
        check_margin: ZMP margin a reference must have to pass unchanged (m).
        mu: static friction coefficient.
        dcm_gain: capture-point convergence rate ``k`` (1/s).
        contact_height: a contact area touches the floor when its lowest point is below
            ``floor + contact_height`` (m).
        floor: floor height (m).
        h_min, h_max: the frame time is clipped to this range (s), as the app's overlay does.
        vertical_accel: largest vertical COM acceleration of a correction, in g.
        refinements: extra IK solves per corrected frame when the corrected pose's true ZMP
            (full inverse dynamics) is still within ``check_margin`` of the edge.
        refine_step: largest COM move of one refinement (m).
    """

    margin: float = 0.02
    check_margin: float = 0.005
    mu: float = 0.7
    dcm_gain: float = 3.0
    contact_height: float = 0.02
    floor: float = 0.0
    h_min: float = 1.0 / 240.0
    h_max: float = 1.0 / 15.0
    refinements: int = 4
    refine_step: float = 0.005
    vertical_accel: float = 0.3

    def checked(self) -> BalanceOptions:
        check_mu(self.mu)
        for name in ("margin", "check_margin", "contact_height"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise BalanceOptionsError(f"{name} must be a finite number >= 0, got {v!r}")
        if not (math.isfinite(self.vertical_accel) and 0 <= self.vertical_accel < 1):
            raise BalanceOptionsError(f"vertical_accel must be in [0, 1) g, got "
                                      f"{self.vertical_accel!r}")
        if not (math.isfinite(self.dcm_gain) and self.dcm_gain > 0):
            raise BalanceOptionsError(f"dcm_gain must be > 0 (1/s), got {self.dcm_gain!r}")
        if not (0 < self.h_min <= self.h_max):
            raise BalanceOptionsError(f"need 0 < h_min <= h_max, got {self.h_min}, {self.h_max}")
        return self


class BalanceStep(NamedTuple):
    """One frame of :meth:`BalanceFilter.step`.

    Attributes:
        q: ``(n_dof,)`` the output pose.
        corrected: the reference failed the check and the COM correction was applied.
        check: :class:`~animik.dynamics.zmp.ContactCheck` of the output pose (full inverse
            dynamics on the backward differences).
        reference_check: the same for the reference pose.
        dcm: ``(2,)`` capture point of the output (m). dcm_margin: its signed distance to the
            support polygon (m; NaN without a polygon).
        com_target: ``(3,)`` the COM target of the correction (NaN when not corrected).
        zmp_target: ``(2,)`` the cart-table ZMP the correction aimed at (NaN when not).
    """

    q: np.ndarray
    corrected: bool
    check: ContactCheck
    reference_check: ContactCheck
    dcm: np.ndarray
    dcm_margin: float
    com_target: np.ndarray
    zmp_target: np.ndarray

    @property
    def feasible(self) -> bool:
        return bool(self.check.feasible)


def _edges(poly: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inward unit normals ``(k, 2)`` and offsets ``(k,)`` of a ccw convex polygon: a point
    ``x`` is ``n·x − d`` inside each edge."""
    a = poly
    b = np.roll(poly, -1, axis=0)
    e = b - a
    ln = np.hypot(e[:, 0], e[:, 1])
    keep = ln > 1e-12
    n = np.column_stack([-e[keep, 1], e[keep, 0]]) / ln[keep, None]  # left of the edge: inside
    return n, np.einsum("ij,ij->i", n, a[keep])


def _distance(poly: np.ndarray, x: np.ndarray) -> float:
    """Signed distance of ``x (2,)`` to ``poly`` (positive inside; -inf for < 3 vertices)."""
    if len(poly) < 3:
        return -math.inf
    near = np.empty(2)
    return float(_support.signed_distance(np.ascontiguousarray(poly, dtype=float), len(poly),
                                          float(x[0]), float(x[1]), near))


def _clamp_inside(poly: np.ndarray, x: np.ndarray, margin: float) -> np.ndarray:
    """The point of ``poly`` shrunk by ``margin`` nearest ``x`` (its centroid if the shrunk
    polygon is empty)."""
    if _distance(poly, x) >= margin:
        return x.copy()
    n, d = _edges(poly)
    # the shrunk polygon is {y : n·y ≥ d + margin}; project by a few rounds of cyclic
    # projections onto the violated half-planes (exact for a point past one edge, converging
    # at a corner), then fall back to the centroid if it is still outside
    y = x.copy()
    for _ in range(20):
        s = n @ y - d - margin
        i = int(np.argmin(s))
        if s[i] >= -1e-12:
            return y
        y = y - s[i] * n[i]
    c = poly.mean(axis=0)
    return y if _distance(poly, y) >= margin - 1e-9 else c


def _ray_clamp(poly: np.ndarray, start: np.ndarray, end: np.ndarray, margin: float) -> np.ndarray:
    """The farthest point of the segment ``start → end`` that stays in ``poly`` shrunk by
    ``margin`` (``start`` must be inside it)."""
    n, d = _edges(poly)
    u = end - start
    nu = n @ u
    slack = n @ start - d - margin
    t = 1.0
    for i in np.flatnonzero(nu < -1e-15):
        t = min(t, max(slack[i], 0.0) / -nu[i])
    return start + t * u


@dataclass
class BalanceFilter:
    """Seed D's check and a capture-point COM correction on a stream of reference poses.

    Keep one filter per stream (the app's physics mode holds one); call :meth:`step` once per
    frame with the reference and the frame time, and :meth:`reset` when the pose jumps (undo,
    a new clip frame that is not a continuation).

    Attributes:
        skeleton: the character (with contact geometry, see :mod:`animik.dynamics.contacts`).
        options: :class:`BalanceOptions`.
    """

    skeleton: Skeleton
    options: BalanceOptions = field(default_factory=BalanceOptions)
    contacts: ContactModel | None = None
    _hist: list = field(default_factory=list)  # the last two output poses
    _chist: list = field(default_factory=list)  # and their centres of mass
    _pts_cache: tuple | None = None  # (q, contact points) of the last pose asked about
    last_lag: float = 0.0  # the last step's lag along the blend path (0: none; :meth:`_blend`)
    _captured: bool = True  # the last correction's capture point was inside the polygon

    def __post_init__(self) -> None:
        self.options = self.options.checked()
        if self.contacts is None:
            self.contacts = contact_model(self.skeleton)  # raises ContactGeometryError
        self._g = np.array(GRAVITY, dtype=float)

    def reset(self, q: np.ndarray | None = None) -> None:
        """Forget the history (the next pose starts at rest), or start it at rest at ``q``."""
        self._hist = [] if q is None else [np.array(q, float), np.array(q, float)]
        self._chist = [] if q is None else [com(self.skeleton, q)] * 2

    @property
    def history(self) -> tuple[np.ndarray, ...]:
        """The last (up to two) output poses, oldest first."""
        return tuple(self._hist)

    def snapshot(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """The filter's state (its last two outputs and their centres of mass), for
        :meth:`restore`: a caller that tries a step and wants it undone."""
        return tuple(self._hist), tuple(self._chist)

    def restore(self, snap: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]) -> None:
        """Go back to a :meth:`snapshot` (the steps since are forgotten)."""
        self._hist, self._chist = list(snap[0]), list(snap[1])

    def push(self, q: np.ndarray, c: np.ndarray | None = None) -> None:
        """Record an output pose (its COM ``c`` if known); :meth:`step` does this."""
        q = np.array(q, dtype=float)
        self._hist = (self._hist + [q])[-2:]
        c = com(self.skeleton, q) if c is None else np.array(c, dtype=float)
        self._chist = (self._chist + [c])[-2:]

    def frame_time(self, dt: float) -> float:
        o = self.options
        return float(np.clip(dt, o.h_min, o.h_max))

    def states(self, q: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
        """``(qd, qdd)`` of ``q`` after the history by backward differences (zeros at start)."""
        P = self._hist[-2:] + [q]
        qd = (P[-1] - P[-2]) / h if len(P) >= 2 else np.zeros_like(q)
        qdd = (P[-1] - 2 * P[-2] + P[-3]) / (h * h) if len(P) >= 3 else np.zeros_like(q)
        return qd, qdd

    def _points(self, q: np.ndarray) -> np.ndarray:
        """World contact points ``(P, 3)`` at ``q``; the last pose's are kept (a step asks for
        them up to three times per pose: contact flags, check, support polygon)."""
        last = self._pts_cache
        if last is not None and last[0].shape == q.shape and np.array_equal(last[0], q):
            return last[1]
        pts = self.contacts.points(self.skeleton, q)
        self._pts_cache = (np.array(q, dtype=float), pts)
        return pts

    def active(self, q: np.ndarray) -> np.ndarray:
        """``(A,)`` contact areas whose lowest point touches the floor at ``q``."""
        cm = self.contacts
        pts = self._points(np.asarray(q, dtype=float))
        low = np.full(cm.n_areas, np.inf)
        np.minimum.at(low, cm.point_area, pts[:, 2])
        return low < self.options.floor + self.options.contact_height

    def polygon(self, q: np.ndarray, active: np.ndarray) -> np.ndarray:
        """Support polygon ``(k, 2)`` of the ``active`` areas at ``q`` (as
        :func:`animik.dynamics.zmp.support_polygon`)."""
        cm = self.contacts
        pts = self._points(np.asarray(q, dtype=float))[None]
        poly = np.empty((1, pts.shape[1], 2))
        nv = np.zeros(1, dtype=np.int64)
        act = np.ascontiguousarray(np.asarray(active, dtype=bool)[None])
        _support.margins_batch(np.ascontiguousarray(pts), cm.point_area, act, np.full(1, np.nan),
                               np.full(1, np.nan), poly, nv, np.empty(1), np.empty((1, 2)))
        return poly[0, :nv[0]].copy()

    def check(self, q: np.ndarray, h: float) -> ContactCheck:
        """Seed D's three checks of ``q`` after the history (full inverse dynamics; equal to
        :func:`animik.dynamics.zmp.check_contacts`, without its per-call validation and with
        one forward-kinematics pass for the contact points: the live filter's budget is ~2 ms
        a frame and calls this 2-5 times)."""
        skel = self.skeleton
        q = np.ascontiguousarray(skel.check_q(q), dtype=float)
        qd, qdd = self.states(q, h)
        o = self.options
        args = model_args(skel)
        tau, wrench = np.empty((1, skel.n_dof)), np.empty((1, 6))
        K.rnea_batch(q[None], np.ascontiguousarray(qd)[None], np.ascontiguousarray(qdd)[None],
                     self._g, *args, tau, wrench)
        mom = np.empty((1, 12))
        K.momentum_batch(q[None], np.zeros((1, skel.n_dof)), *args, mom)
        act = self.active(q)
        out = evaluate_wrench(skel, wrench, self._points(q)[None], act[None], mom[:, :3], o.mu,
                              o.floor, contacts=self.contacts)
        return ContactCheck(*[a.reshape(a.shape[1:]) for a in out])

    def check_batch(self, Q: np.ndarray, h: float) -> ContactCheck:
        """:meth:`check` of ``B`` candidate poses ``Q (B, n_dof)`` for this frame, each after
        the same history, in one batched pass (the blend search of :meth:`step`)."""
        skel = self.skeleton
        Q = np.ascontiguousarray(Q, dtype=float)
        B = len(Q)
        P = self._hist[-2:]
        if len(P) >= 2:
            qd = (Q - P[-1]) / h
            qdd = (Q - 2 * P[-1] + P[-2]) / (h * h)
        elif P:
            qd, qdd = (Q - P[-1]) / h, np.zeros_like(Q)
        else:
            qd, qdd = np.zeros_like(Q), np.zeros_like(Q)
        o = self.options
        args = model_args(skel)
        tau, wrench = np.empty((B, skel.n_dof)), np.empty((B, 6))
        K.rnea_batch(Q, np.ascontiguousarray(qd), np.ascontiguousarray(qdd), self._g, *args, tau,
                     wrench)
        mom = np.empty((B, 12))
        K.momentum_batch(Q, np.zeros_like(Q), *args, mom)
        cm = self.contacts
        pts = np.ascontiguousarray(cm.points(skel, Q))
        low = np.full((B, cm.n_areas), np.inf)
        for a in range(cm.n_areas):
            low[:, a] = pts[:, cm.point_area == a, 2].min(axis=1)
        act = low < o.floor + o.contact_height
        self._batch_points = pts
        return evaluate_wrench(skel, wrench, pts, act, mom[:, :3], o.mu, o.floor, contacts=cm)

    def _blend(self, anchors: list[np.ndarray], poly: np.ndarray, h: float
               ) -> tuple[np.ndarray, ContactCheck, float]:
        """(g) The output may lag the reference, it must not be infeasible: the poses on the
        polyline through ``anchors`` (from the corrected pose toward the constant-velocity
        prediction, whose joint accelerations are zero: no whipping limb) are checked in one
        batch, and the first one along it whose full-inverse-dynamics check passes with the
        capture point still in the polygon is kept (one with the ZMP ``check_margin`` inside
        first). Between two poses the joint accelerations — the limbs' angular momentum
        included — scale linearly; the pose reaches the reference over the next frames.
        Returns ``(q, check, position along the polyline from 0)``."""
        o = self.options
        # geometric steps: the accelerations scale with the step, and a corrected pose far
        # from the prediction may allow only a few per cent of it
        S = 1.0 - self.BLEND_FRACTIONS
        Q = np.concatenate([a[None] + S[:, None] * (b - a)[None]
                            for a, b in zip(anchors[:-1], anchors[1:], strict=True)]
                           + [anchors[-1][None]])
        n = len(S)
        cb = self.check_batch(Q, h)
        c1 = self._chist[-1]
        xi_m = np.array([_distance(poly, cb.com[i, :2] + (cb.com[i, :2] - c1[:2]) / h
                                   / self._omega(cb.com[i])) for i in range(len(Q))])
        m = np.where(np.isfinite(cb.margin), cb.margin, -np.inf)
        feas = np.asarray(cb.feasible, bool) & (xi_m >= 0.0)
        # a blend is not an IK solve: far along the prediction the soles would slide (and the
        # next frames' IK pull them back: whipping again). The contact points on the floor may
        # not move more than SLIDE in a frame (the last anchor, the last output, never does)
        cm = self.contacts
        last = self._hist[-1]
        prev = cm.points(self.skeleton, last)
        on = np.asarray(self.active(last), bool)[cm.point_area]
        slide = (np.abs(self._batch_points[:, on] - prev[None, on]).max(axis=(1, 2))
                 if on.any() else np.zeros(len(Q)))
        still = slide <= self.SLIDE
        if on.any():
            # nor drift away from where the corrected pose (the IK's, pins met) has them: the
            # prediction continues the soles' last motion, and frame after frame of ≤ SLIDE
            # adds up (a pelvis dragged by its arrow: 17 mm in 3 s before this rule)
            pts = self._batch_points[:, on]
            away = np.abs(pts - pts[:1]).max(axis=(1, 2))
            last_away = float(np.abs(prev[on] - pts[0]).max())
            still &= away <= max(last_away, self.SLIDE)
        for good in (feas & still & (m >= o.check_margin) & (xi_m >= o.check_margin),
                     feas & still):
            if good.any():
                i = int(np.flatnonzero(good)[0])  # the first along the polyline
                break
        else:
            # nothing passes. A whipping state no blend can save, the capture point over the
            # feet: the least bad pose whose soles stay put. The capture point already past
            # the edge: the corrected pose, whose COM target puts it back over the feet (the
            # next frames recover; holding or coasting would freeze the state there)
            seg = np.arange(len(Q)) <= n  # the corrected pose → the prediction
            i = int(np.argmax(np.where(still & seg, np.minimum(m, xi_m), -np.inf))) \
                if self._captured else 0
        one = ContactCheck(*[np.asarray(a)[i] for a in cb])
        return Q[i], one, i / n

    #: largest move of a floor contact point in one frame of a blended pose (m, :meth:`_blend`)
    SLIDE = 5e-4
    #: the fractions of a blend segment's first pose kept (see :meth:`_blend`)
    BLEND_FRACTIONS = np.array([1.0, 0.7, 0.5, 0.35, 0.25, 0.18, 0.12, 0.08, 0.05, 0.03, 0.015])

    def _omega(self, c: np.ndarray) -> float:
        return math.sqrt(-GRAVITY[2] / max(float(c[2]) - self.options.floor, 0.05))

    def dcm(self, q: np.ndarray, h: float, c: np.ndarray | None = None) -> np.ndarray:
        """Capture point ``c + ċ/ω`` (xy, m) of ``q`` (its COM ``c`` if known) after the
        history."""
        c = com(self.skeleton, q) if c is None else c
        if not self._hist:
            return c[:2].copy()
        cp = self._chist[-1]
        return c[:2] + (c[:2] - cp[:2]) / h / self._omega(c)

    def com_target(self, c_ref: np.ndarray, poly: np.ndarray, h: float
                   ) -> tuple[np.ndarray, np.ndarray]:
        """Correction (c): the next COM ``(3,)`` and its cart-table ZMP ``(2,)`` (module doc).

        Vertically the COM follows the reference with its acceleration clipped to
        ``±vertical_accel · g`` (a squatting IK must not ask the floor to pull, ``F_z < 0``)."""
        o = self.options
        c1 = self._chist[-1] if self._hist else c_ref
        c2 = self._chist[-2] if len(self._hist) >= 2 else c1
        g = -GRAVITY[2]
        # vertical: a critically damped pull toward the reference height (2 Hz), its
        # acceleration clipped to ±vertical_accel·g (a squatting reference must not ask the
        # floor to pull, F_z < 0, nor build up a fall)
        wz = 2 * math.pi * 2.0
        vz = (c1[2] - c2[2]) / h
        az = float(np.clip(wz * wz * (c_ref[2] - c1[2]) - 2 * wz * vz,
                           -o.vertical_accel * g, o.vertical_accel * g))
        cz = 2 * c1[2] - c2[2] + az * h * h
        w = math.sqrt((g + az) / max(cz - o.floor, 0.05))  # cart-table with the vertical term
        # the capture point as :meth:`dcm` and the blend (g) judge it (ω without the vertical
        # term): a ξ they call inside must not send this law to its last branch
        xi = c1[:2] + (c1[:2] - c2[:2]) / h / self._omega(c1)
        xi_star = _clamp_inside(poly, c_ref[:2], 1.5 * o.margin)
        a = (h * w) ** 2  # < 1 for h <= 1/15 s and a COM above 5 cm
        c_next = np.empty(3)
        c_next[2] = cz
        dxi = _distance(poly, xi)
        self._captured = dxi > 0.0
        if dxi > 0.0:
            # the ZMP p beyond ξ (seen from ξ*) moves ξ toward ξ*; clamped along that ray to
            # stay `margin` inside — or, for a ξ already closer to the edge than that (a frame
            # that had to lag, a jittered frame time), halfway between ξ and the edge: ξ then
            # still moves inward and the ZMP stays inside (no frame "gives up")
            p_des = xi + (o.dcm_gain / w) * (xi - xi_star)
            p = _ray_clamp(poly, xi, p_des, min(o.margin, 0.5 * dxi))
            c_next[:2] = (2 * c1[:2] - c2[:2] - a * p) / (1.0 - a)
        else:
            # no longer capturable (a jump of the reference, a frame the IK could not
            # follow): the pendulum would run away. Give up feasibility for this frame and put
            # the capture point back on the shrunk polygon kinematically — ξ_n = c_n +
            # (c_n − c_{n−1})/(hω) = ξ_goal — the frame is reported infeasible, the next
            # ones are capturable again
            k = 1.0 / (h * w)
            goal = _clamp_inside(poly, xi, o.margin)
            c_next[:2] = (goal + k * c1[:2]) / (1.0 + k)
            p = c_next[:2] - (c_next[:2] - 2 * c1[:2] + c2[:2]) / (h * h * w * w)
        return c_next, p

    def step(self, q_ref: np.ndarray, dt: float,
             solve_com: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> BalanceStep:
        """One frame: check the reference, correct it if needed, record the output.

        Args:
            q_ref: ``(n_dof,)`` kinematic reference of this frame.
            dt: frame time (s), clipped to ``[h_min, h_max]``.
            solve_com: ``solve_com(c, q_start) -> q``: the caller's IK with its pins and drags
                and the COM task ``com=c`` at ``c (3,)`` (m), started from ``q_start (n_dof,)``
                (the constant-velocity prediction ``2 q_{n−1} − q_{n−2}``).

        Returns:
            :class:`BalanceStep` (its ``q`` is now the history's last pose).
        """
        h = self.frame_time(dt)
        q_ref = np.asarray(q_ref, dtype=float)
        self.last_lag = 0.0
        o = self.options
        ref = self.check(q_ref, h)
        act = np.asarray(ref.in_contact, bool)
        poly = self.polygon(q_ref, act)
        xi = self.dcm(q_ref, h, ref.com)
        xi_m = _distance(poly, xi) if len(poly) >= 3 else math.nan
        ok = (not act.any()) or len(poly) < 3 or (
            bool(ref.feasible) and float(ref.margin) >= o.check_margin and xi_m >= o.margin)
        nan2 = np.full(2, np.nan)
        if ok:
            out, chk, c_t, p_t = q_ref, ref, np.full(3, np.nan), nan2
        else:
            c_t, p_t = self.com_target(ref.com, poly, h)
            # start the corrective solve from the constant-velocity prediction, not from the
            # reference: the IK's least change from it is the least acceleration, so the limbs
            # do not whip (the reference's jerk is what made it fail)
            start = 2 * self._hist[-1] - self._hist[-2] if len(self._hist) >= 2 else q_ref
            out = np.asarray(solve_com(c_t, start), dtype=float)
            chk = self.check(out, h)
            for _ in range(o.refinements):
                if not (np.isfinite(chk.zmp[:2]).all() and float(chk.margin) < o.check_margin):
                    break
                # (e) the true ZMP (full inverse dynamics: the segments' angular momentum, a
                # stopping arm) is outside: move it to the nearest point of the shrunk polygon
                # through the COM, dp/dc_n = 1 − 1/(hω)² of the cart-table relation
                a = (h * self._omega(chk.com)) ** 2
                goal = _clamp_inside(poly, chk.zmp[:2], o.margin)
                c_t = c_t.copy()
                dc = (goal - chk.zmp[:2]) / (1.0 - 1.0 / a)
                n = float(np.hypot(*dc))
                # a ZMP far out (a jump of the limbs) is not the COM's to fix: ≤ 5 mm a solve
                c_t[:2] += dc * min(1.0, o.refine_step / n) if n > 0 else 0.0
                out2 = np.asarray(solve_com(c_t, start), dtype=float)
                chk2 = self.check(out2, h)
                if _distance(poly, self.dcm(out2, h, chk2.com)) < o.margin - 1e-9 <= \
                        _distance(poly, self.dcm(out, h, chk.com)):
                    break  # fixing the ZMP this way would lose the capture point: keep it
                out, chk = out2, chk2
            xi = self.dcm(out, h, chk.com)
            xi_m = _distance(poly, xi)
            if len(self._hist) >= 2 and not (bool(chk.feasible) and xi_m >= 0.0):
                # (g) lag instead of failing: the first feasible pose on the way from the
                # corrected pose to the constant-velocity prediction is the output
                out, chk, self.last_lag = self._blend([out, start, self._hist[-1]], poly, h)
                xi = self.dcm(out, h, chk.com)
                xi_m = _distance(poly, xi)
        self.push(out, chk.com)
        return BalanceStep(out, not ok, chk, ref, xi, float(xi_m), c_t, p_t)


def track_target(p1: np.ndarray, p2: np.ndarray, target: np.ndarray, h: float,
                 omega: float = 10.0, accel: float = 4.0) -> np.ndarray:
    """Where a dragged site should be this frame: a critically damped second-order tracker of
    ``target (3,)`` from the site's last two output positions ``p1, p2 (3,)`` (m) at frame time
    ``h`` (s), rate ``omega`` (1/s), its acceleration bounded by ``accel`` (m/s²).

    The physics mode's corrective solve drags toward this point instead of the mouse's: a
    mouse that jumps 5 cm in a frame must not whip the arm (the arm's angular momentum moves
    the ZMP by metres); the site reaches a still target in about ``6 / omega`` s."""
    p1 = np.asarray(p1, dtype=float)
    v = (p1 - np.asarray(p2, dtype=float)) / h
    a = omega * omega * (np.asarray(target, dtype=float) - p1) - 2.0 * omega * v
    na = float(np.linalg.norm(a))
    if na > accel:
        a *= accel / na
    return p1 + v * h + a * h * h


class ClipCheck(NamedTuple):
    """Result of :func:`clip_feasibility`: ``(T,)`` arrays ``feasible``, ``margin`` (m),
    ``reasons`` (bit set, :mod:`animik.dynamics.zmp`)."""

    feasible: np.ndarray
    margin: np.ndarray
    reasons: np.ndarray


def clip_feasibility(skel: Skeleton, q: np.ndarray, fps: float, mu: float = 0.7,
                     contact_height: float = 0.02, floor: float = 0.0,
                     contacts: ContactModel | None = None) -> ClipCheck:
    """Seed D's checks on every frame of ``q (T, n_dof)``, batched, as the live overlay and
    :class:`BalanceFilter` see them: backward differences at ``fps`` (the first frames start at
    rest), an area in contact when its lowest point is within ``contact_height`` of the floor.

    Raises:
        BalanceOptionsError: bad ``q`` or ``fps``; ContactGeometryError: no contact geometry.
    """
    q = skel.check_q(q)
    if q.ndim != 2:
        raise BalanceOptionsError(f"q must be frames (T, n_dof), got shape {q.shape}")
    if not (isinstance(fps, (int, float)) and math.isfinite(fps) and fps > 0):
        raise BalanceOptionsError(f"fps must be a number > 0, got {fps!r}")
    cm = contacts or contact_model(skel)
    P = np.concatenate([q[:1], q[:1], q])
    qd = (P[2:] - P[1:-1]) * fps
    qdd = (P[2:] - 2 * P[1:-1] + P[:-2]) * fps * fps
    pts = cm.points(skel, q)  # (T, P, 3)
    low = np.stack([pts[:, cm.point_area == a, 2].min(axis=1) for a in range(cm.n_areas)], -1)
    chk = check_contacts(skel, q, qd, qdd, low < floor + contact_height, mu=mu, floor=floor,
                         contacts=cm)
    return ClipCheck(np.asarray(chk.feasible), np.asarray(chk.margin), np.asarray(chk.reasons))


def foot_sites(skel: Skeleton, contacts: ContactModel | None = None) -> tuple[str, ...]:
    """Sites fixed to a joint that carries contact points (the feet the correction holds)."""
    cm = contacts or contact_model(skel)
    joints = set(np.asarray(cm.point_joint).tolist())
    return tuple(n for n, j in zip(skel.site_names, skel.site_joint, strict=True)
                 if int(j) in joints)


class FeasibleClip(NamedTuple):
    """Result of :func:`make_clip_feasible`.

    Attributes:
        q: ``(T, n_dof)`` the filtered poses.
        corrected: ``(T,)`` bool, frames the COM correction changed.
        feasible: ``(T,)`` bool, frames passing seed D's checks (backward differences).
        margin: ``(T,)`` m, ZMP margin of the output.
        reference_feasible: ``(T,)`` bool, the same check on the input.
    """

    q: np.ndarray
    corrected: np.ndarray
    feasible: np.ndarray
    margin: np.ndarray
    reference_feasible: np.ndarray


def make_clip_feasible(skel: Skeleton, q: np.ndarray, fps: float,
                       solve_frame: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
                       options: BalanceOptions | None = None,
                       progress: Callable[[int, int], None] | None = None) -> FeasibleClip:
    """Seed D's interactive filter over a clip: each frame is the kinematic reference.

    A frame that fails the check (module doc) is re-solved by ``solve_frame(t, c, start)``
    — the caller's IK for frame ``t`` (typically the feet held at their pose in that frame,
    the frame as posture reference, :func:`animik.anim.feasible.feasible_clip_poses`) with the
    COM task at ``c (3,)``, started from ``start``. Frames that pass are kept.

    Args:
        skel: the character. q: ``(T, n_dof)`` poses at ``fps`` (frames/s, > 0).
        solve_frame: the corrective IK. options: :class:`BalanceOptions`.
        progress: ``progress(done, total)`` after every frame.

    Returns:
        :class:`FeasibleClip`.

    Raises:
        ShapeError: bad ``q``; BalanceOptionsError: bad options or fps;
        ContactGeometryError: a skeleton without contact geometry.
    """
    q = skel.check_q(q)
    if q.ndim != 2:
        raise BalanceOptionsError(f"q must be frames (T, n_dof), got shape {q.shape}")
    if not (isinstance(fps, (int, float)) and math.isfinite(fps) and fps > 0):
        raise BalanceOptionsError(f"fps must be a number > 0, got {fps!r}")
    filt = BalanceFilter(skel, options or BalanceOptions())
    h = 1.0 / float(fps)
    T = len(q)
    out = np.empty_like(q)
    corrected = np.zeros(T, bool)
    feasible = np.zeros(T, bool)
    ref_ok = np.zeros(T, bool)
    margin = np.full(T, np.nan)
    filt.reset(q[0])
    for t in range(T):
        st = filt.step(q[t], h, lambda c, start, t=t: solve_frame(t, c, start))
        out[t] = st.q
        corrected[t] = st.corrected
        feasible[t] = st.feasible
        ref_ok[t] = bool(st.reference_check.feasible)
        margin[t] = float(st.check.margin)
        if progress is not None:
            progress(t + 1, T)
    return FeasibleClip(out, corrected, feasible, margin, ref_ok)


__all__ = ["BalanceFilter", "BalanceOptions", "BalanceOptionsError", "BalanceStep", "ClipCheck",
           "FeasibleClip", "clip_feasibility", "foot_sites", "make_clip_feasible", "track_target"]
