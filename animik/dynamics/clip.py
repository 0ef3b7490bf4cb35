"""Whole clips: velocities and accelerations from poses, contact flags, and the feasibility
check of every frame (batched).

Velocities and accelerations of mocap are reconstructed with a Savitzky-Golay filter
(a local cubic fit over ``window`` seconds, ``scipy.signal.savgol_filter``) applied to the
poses (rotation DoFs unwrapped first), which gives ``q``, ``qd`` and ``qdd`` of one smooth
local polynomial; ``method="central"`` uses plain central differences instead (noisier: second
differences amplify noise by ``1/dt^2``). docs/dynamics.md measures both on a standing clip.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import SkeletonError
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..semantics.contacts import detect_contacts, estimate_ground, horizontal_speed
from ..skeleton import Skeleton
from ._savgol import savgol_matrix
from .contacts import ContactModel, contact_model_for_clip
from .inverse import GRAVITY, rnea
from .rotation_rates import group_states, lock_groups, near_lock_joints
from .supports import SupportSet
from .zmp import ContactCheck, FeasibilityError, check_mu, evaluate_wrench, positive_number

DEFAULT_WINDOW = 0.1  # s


class ClipStates(NamedTuple):
    """Reconstructed states of a clip: ``q``, ``qd``, ``qdd`` ``(T, n_dof)``."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray


def _check_fps(fps: Any) -> float:
    return positive_number(fps, "fps")


def clip_states(skel: Skeleton, q: Any, fps: float, method: str = "savgol",
                window: float = DEFAULT_WINDOW, order: int = 3,
                near_lock: np.ndarray | None = None) -> ClipStates:
    """Poses, velocities and accelerations of a clip ``q (T, n_dof)`` sampled at ``fps``.

    Args:
        method: ``"savgol"`` (Savitzky-Golay fit of degree ``order`` over ``window`` s, odd
            number of frames >= order + 2; the fitted poses replace the raw ones) or
            ``"central"`` (``np.gradient`` twice, raw poses kept).
        window: Savitzky-Golay window (s).
        near_lock: ``(J,)`` bool, joints whose three Euler angles take their states from the
            rotation when they come near gimbal lock (:mod:`.rotation_rates`; any joint does
            when its angles jump between branches).

    Raises:
        FeasibilityError: bad ``fps``, ``method`` or ``window``; ShapeError: NaN / bad shape.
    """
    fps = _check_fps(fps)
    q = skel.check_q(q)
    if q.ndim != 2:
        raise FeasibilityError(f"a clip is (T, n_dof) poses, got shape {q.shape}")
    T = q.shape[0]
    rot = skel.dof_type == 0
    qu = q.copy()
    if T > 1:
        qu[:, rot] = np.unwrap(q[:, rot], axis=0)
    dt = 1.0 / fps
    if T < 3:
        return ClipStates(qu, np.zeros_like(qu), np.zeros_like(qu))
    if method == "central":
        qd = np.gradient(qu, dt, axis=0)
        return ClipStates(qu, qd, np.gradient(qd, dt, axis=0))
    if method != "savgol":
        raise FeasibilityError(f"method must be 'savgol' or 'central', got {method!r}")
    if not (np.isfinite(window) and window > 0):
        raise FeasibilityError(f"window must be a positive number of seconds, got {window!r}")
    n = max(int(round(window * fps)) | 1, order + 2 | 1)
    n = min(n, T if T % 2 else T - 1)
    if n <= order:
        return ClipStates(qu, np.gradient(qu, dt, axis=0),
                          np.gradient(np.gradient(qu, dt, axis=0), dt, axis=0))
    # Our own banded operator (equal to scipy.signal.savgol_filter(mode="interp"), tested):
    # importing scipy.signal costs 1.7-2.7 s, which every `animik feasibility` / `filter` paid.
    flat = qu.reshape(T, -1)
    D0, D1, D2 = (savgol_matrix(T, n, order, d, dt) for d in range(3))
    st = ClipStates(np.asarray(D0 @ flat), np.asarray(D1 @ flat), np.asarray(D2 @ flat))
    # ball joints near gimbal lock or jumping Euler branches: from the rotation (5j)
    for dofs in lock_groups(skel, qu, near_lock):
        st.q[:, dofs], st.qd[:, dofs], st.qdd[:, dofs] = group_states(skel, qu, dofs, D0, D1, D2)
    return st


def detect_clip_contacts(skel: Skeleton, q: np.ndarray, fps: float,
                         floor: float | None = None, contacts: ContactModel | None = None,
                         points: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Contact flags ``(T, A)`` per contact area of a clip, and the floor height used.

    An area's height is its lowest point above the floor, its speed the horizontal speed of
    its points' mean; the retargeter's detector (:func:`animik.semantics.contacts.detect_contacts`,
    hysteresis and minimum durations) turns them into flags. ``floor=None`` estimates a level
    floor from the clip (:func:`animik.semantics.contacts.estimate_ground`). ``points``: the
    contact points ``cm.points(skel, q)`` when the caller has them already.
    """
    cm = contacts or contact_model_for_clip(skel, q)
    pts = cm.points(skel, q) if points is None else points  # (T, P, 3)
    A = cm.n_areas
    low = np.stack([pts[:, cm.point_area == a, 2].min(axis=1) for a in range(A)], axis=1)
    mid = np.stack([pts[:, cm.point_area == a].mean(axis=1) for a in range(A)], axis=1)
    speed = horizontal_speed(mid, fps)
    if floor is None:
        feet = mid.copy()
        feet[..., 2] = low
        floor = float(estimate_ground(feet, speed)[0])
    return detect_contacts(low - floor, speed, fps), float(floor)


class ClipFeasibility(NamedTuple):
    """Feasibility of every frame of a clip (see :func:`check_clip`).

    Attributes:
        check: per-frame :class:`~animik.dynamics.zmp.ContactCheck` (leading shape ``(T,)``).
        tau: ``(T, n_dof)`` generalised forces (N m / N).
        peak_torque: ``(T,)`` max ``|tau|`` over the DoFs of the non-root joints.
        peak_dof: ``(T,)`` int, the DoF of that peak.
        floor: floor height (m). fps: frame rate. mu: friction coefficient.
        states: the reconstructed :class:`ClipStates`.
        contacts: the :class:`~animik.dynamics.contacts.ContactModel` used.
        supports: the :class:`~animik.dynamics.supports.SupportSet` used (``None``: the floor
            only).
        points: ``(T, P, 3)`` world contact points at ``states.q`` (the clip filter reuses
            them instead of another forward-kinematics pass).
        fk: the forward kinematics of ``states.q`` (``check_clip(keep_fk=True)``, else
            ``None``); gravity, flight_tol: the check's settings (``check_clip(previous=...)``
            reuses the frames a new clip leaves unchanged).
    """

    check: ContactCheck
    tau: np.ndarray
    peak_torque: np.ndarray
    peak_dof: np.ndarray
    floor: float
    fps: float
    mu: float
    states: ClipStates
    contacts: ContactModel
    supports: SupportSet | None = None
    points: np.ndarray | None = None
    fk: Any = None
    gravity: np.ndarray | None = None
    flight_tol: float | None = None

    @property
    def feasible(self) -> np.ndarray:
        return self.check.feasible

    @property
    def infeasible_frames(self) -> np.ndarray:
        return np.flatnonzero(~self.check.feasible)


def _com_from_fk(skel: Skeleton, fk) -> np.ndarray:
    """Whole-body centre of mass ``(..., 3)`` from a forward-kinematics result: the segments'
    COMs ``p_j + R_j c_j`` weighted by mass (:func:`animik.dynamics.inverse.com` without its
    own kinematics pass; tested equal)."""
    if not skel.total_mass > 0.0:
        raise SkeletonError(f"skeleton {skel.name!r} has zero total mass: no centre of mass")
    m = np.asarray(skel.masses, dtype=float)
    seg = fk.joint_positions + np.einsum("...jab,jb->...ja", fk.joint_rotations,
                                         np.asarray(skel.coms, dtype=float))
    return np.einsum("...ja,j->...a", seg, m) / m.sum()


def check_clip(motion: Motion, mu: float = 0.7, in_contact: Any = None,
               floor: float | None = None, method: str = "savgol",
               window: float = DEFAULT_WINDOW, gravity: Any = GRAVITY,
               flight_tol: float = 0.05, contacts: ContactModel | None = None,
               supports: SupportSet | None = None,
               previous: ClipFeasibility | None = None, keep_fk: bool = False
               ) -> ClipFeasibility:
    """Seed D's three checks at every frame of a clip (batched inverse dynamics).

    Args:
        motion: the clip.
        mu: friction coefficient (> 0).
        in_contact: ``(T, A)`` flags, or ``None`` to detect them (:func:`detect_clip_contacts`).
        floor: floor height (m); ``None``: estimated from the clip when contacts are detected,
            else 0.
        method, window: derivative reconstruction (:func:`clip_states`).
        supports: contacts off the floor (:mod:`animik.dynamics.supports`); frames where one is
            active get the contact-wrench-cone check instead of the ZMP checks.
        previous: the check of another clip of the same skeleton and length with the same
            settings (the clip filter's previous round): the forward kinematics, inverse
            dynamics and checks of the frames whose reconstructed states, contact flags,
            points and centre of mass it has bit for bit are taken from it instead of computed
            again (each frame's are a function of those alone, so the result is the full
            check's, bit for bit; docs/dynamics.md 6j). Ignored when its settings differ.

    Raises:
        FeasibilityError: bad ``mu`` / ``fps`` / method; ContactGeometryError: no contact
        geometry; ShapeError: NaN in the clip.
    """
    mu = check_mu(mu)
    skel = motion.skeleton
    cm = contacts or contact_model_for_clip(skel, motion.q)
    st = clip_states(skel, motion.q, motion.fps, method, window,
                     near_lock=near_lock_joints(skel, cm.point_joint))
    g = np.asarray(gravity, dtype=float)
    prev = previous if _reusable(previous, motion, mu, g, flight_tol, cm, supports) else None
    same = None if prev is None else _same_states(st, prev.states)
    # one FK pass for the detector, the checks and the centre of mass
    fk = forward_kinematics(skel, st.q) if same is None else _fk_update(skel, st.q, prev.fk,
                                                                        same)
    pts = cm.points(skel, st.q, fk)
    if in_contact is None:
        flags, floor = detect_clip_contacts(skel, st.q, motion.fps, floor, cm, pts)
    else:
        flags = cm.in_contact_mask(in_contact, (st.q.shape[0],))
        floor = 0.0 if floor is None else float(floor)
    c = _com_from_fk(skel, fk)
    sf = supports.at(skel, st.q, fk=fk) if supports is not None and len(supports) else None
    if same is None:
        res = rnea(skel, st.q, st.qd, st.qdd, gravity)
        tau, wrench = res.tau, res.wrench
    else:
        tau, wrench = _rnea_update(skel, st, same, prev, g)
    if same is not None and float(floor) == prev.floor:
        # the floor is estimated from the whole clip: when it moved, every frame is checked
        # again; a frame's supports are a function of its pose and forward kinematics
        same &= ((flags == prev.check.in_contact).all(axis=1)
                 & (pts == prev.points).all(axis=(1, 2)) & (c == prev.check.com).all(axis=1))
        chk = _check_update(skel, same, prev, wrench, pts, flags, c, mu, floor, flight_tol, cm,
                            sf)
    else:
        chk = evaluate_wrench(skel, wrench, pts, flags, c, mu, floor, flight_tol, cm, sf)
    root = np.flatnonzero(skel.parents < 0)[0]
    actuated = np.ones(skel.n_dof, dtype=bool)
    actuated[skel.joint_dofs(int(root))] = False
    if actuated.any():
        a = np.abs(tau[:, actuated])
        idx = np.argmax(a, axis=1)
        peak = a[np.arange(len(a)), idx]
        peak_dof = np.flatnonzero(actuated)[idx]
    else:
        peak = np.zeros(len(st.q))
        peak_dof = np.zeros(len(st.q), dtype=np.int64)
    return ClipFeasibility(chk, tau, peak, peak_dof, float(floor), motion.fps, mu, st, cm,
                           supports, pts, fk if keep_fk else None, g, flight_tol)


def _reusable(prev: ClipFeasibility | None, motion: Motion, mu: float, gravity: np.ndarray,
              flight_tol: float, cm: ContactModel, supports: SupportSet | None) -> bool:
    """``prev`` is a check of a clip like ``motion`` with these settings (:func:`check_clip`'s
    ``previous``)."""
    return (prev is not None and prev.fk is not None and prev.contacts is cm
            and prev.supports is supports and prev.mu == mu and prev.fps == motion.fps
            and prev.flight_tol == flight_tol and prev.gravity is not None
            and np.array_equal(prev.gravity, gravity)
            and prev.states.q.shape == np.shape(motion.q))


def _same_states(st: ClipStates, old: ClipStates) -> np.ndarray:
    """``(T,)`` bool: the frames whose ``q``, ``qd`` and ``qdd`` are ``old``'s bit for bit."""
    return ((st.q == old.q).all(axis=1) & (st.qd == old.qd).all(axis=1)
            & (st.qdd == old.qdd).all(axis=1))


def _fk_update(skel: Skeleton, q: np.ndarray, old, same: np.ndarray):
    """The forward kinematics of ``q``: ``old``'s on the ``same`` frames, a pass over the
    others (the kernel computes each frame on its own: the same bits as one pass)."""
    ch = np.flatnonzero(~same)
    out = type(old)(*[a.copy() for a in old])
    if len(ch):
        new = forward_kinematics(skel, q[ch])
        for a, b in zip(out, new, strict=True):
            a[ch] = b
    return out


def _rnea_update(skel: Skeleton, st: ClipStates, same: np.ndarray, prev: ClipFeasibility,
                 gravity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(tau, wrench)`` of ``st``: ``prev``'s on the ``same`` frames, the inverse dynamics of
    the others (the kernel computes every frame on its own: the same bits as one pass)."""
    ch = np.flatnonzero(~same)
    tau, wrench = prev.tau.copy(), prev.check.wrench.copy()
    if len(ch):
        res = rnea(skel, st.q[ch], st.qd[ch], st.qdd[ch], gravity)
        tau[ch], wrench[ch] = res.tau, res.wrench
    return tau, wrench


def _check_update(skel, same, prev, wrench, pts, flags, c, mu, floor, flight_tol, cm, sf):
    """:func:`evaluate_wrench` of every frame: ``prev``'s check on the ``same`` frames (their
    wrench, points, flags, centre of mass and supports are ``prev``'s), computed on the
    others (it checks every frame on its own)."""
    ch = np.flatnonzero(~same)
    fields = [np.array(a, copy=True) for a in prev.check]
    if len(ch):
        sub = evaluate_wrench(skel, wrench[ch], pts[ch], flags[ch], c[ch], mu, floor,
                              flight_tol, cm, None if sf is None else _support_rows(sf, ch))
        for a, b in zip(fields, sub, strict=True):
            a[ch] = b
    return type(prev.check)(*fields)


def _support_rows(sf, rows: np.ndarray):
    """The :class:`~animik.dynamics.supports.SupportFrames` of the frames ``rows``."""
    per_frame = ("active", "push_points", "push_normals", "grip_points", "push_touch",
                 "grip_touch", "sunk", "gap")
    return sf._replace(**{k: getattr(sf, k)[rows] for k in per_frame
                          if getattr(sf, k) is not None})
