"""The full-body plant: the wheeled rig posed from the two-mass state, its true centre of pressure.

Seed E's controller models the robot as two point masses; the robot itself is a 12-link body.
:class:`FullBody` poses the rig (``wheeled20``) from the two-mass plant's state — the base DoFs
from ``b`` and the yaw, the leg (``knee_pitch``, ``hip_roll``) so that the rig's **true
upper-body centre of mass** (every link but the base, from the rig's masses, arms included)
sits over ``c`` — and computes the CoP the floor must supply for that motion by full-body
inverse dynamics (:func:`animik.dynamics.zmp`, RNEA root wrench, floor ``z = 0``).

Velocities and accelerations come from the pose map along the plant's smooth trajectory:
``q(t ± ε)`` from the states advanced by their constant jerks (``ε`` = 2 ms), central
differences. The velocity impulses of the plant's kicks and pushes are left out, as the
two-mass CoP leaves them out (an impulse has no finite CoP). The leg is solved by Newton's
method on the two leg DoFs to 1e-12 m, so the pose map is smooth and the second differences
are clean (the IK centre-of-mass task does the same job to the app's tolerance; the numbers of
both are in docs/balance.md).
"""

from __future__ import annotations

import numpy as np

from ..dynamics.zmp import zmp
from ..ik import prepare_ik
from ..kinematics import forward_kinematics
from ..skeleton import Skeleton
from .horizon import advance
from .params import BalanceError

BASE_DOFS = ("base_x", "base_y", "base_yaw")
LEAN_DOFS = ("knee_pitch", "hip_roll")  # the leg DoFs that move c relative to b
EPS = 2e-3  # s, the central-difference step along the trajectory
NEWTON_TOL = 1e-12  # m, upper-body CoM residual of the leg solve
IK_TOL = 1e-9  # m, the IK's tolerance (its CoM and base-pin rows)
METHODS = ("leg", "ik")


class FullBody:
    """The rig posed from the two-mass state, and its full-body CoP.

    Args:
        skel: a rig with the DoFs :data:`BASE_DOFS` and :data:`LEAN_DOFS` (``wheeled20``).
        q0: ``(n_dof,)`` pose of the other DoFs (arms, head); default the rest pose.
        method: ``"leg"``: Newton on the leg DoFs (exact, but the hip roll's ±29.5° limit caps
            the sideways lean at about 7 cm); ``"ik"``: the IK centre-of-mass task
            (:func:`animik.ik.prepare_ik`, ``com=(x, y)`` on the whole-body CoM, the ``base``
            site held by a 6-D target) with every DoF but the base's, arms and head included,
            to 1e-9 m, each pose started from the last one.

    Raises:
        BalanceError: the rig lacks a DoF or the ``base`` site (``"ik"``), or an unknown method.
    """

    def __init__(self, skel: Skeleton, q0: np.ndarray | None = None, method: str = "leg"):
        if method not in METHODS:
            raise BalanceError(f"method must be one of {METHODS}, got {method!r}")
        missing = [d for d in BASE_DOFS + LEAN_DOFS if d not in skel.dof_names]
        if missing:
            raise BalanceError(f"rig {skel.name!r} lacks the DoFs {missing} the full-body plant "
                               "poses")
        self.skel = skel
        self.q0 = np.array(skel.rest_q if q0 is None else q0, float)
        self.ib = np.array([skel.dof_names.index(d) for d in BASE_DOFS])
        self.il = np.array([skel.dof_names.index(d) for d in LEAN_DOFS])
        base_joint = int(skel.dof_joint[self.ib[0]])
        self.upper = np.array([j for j in range(skel.n_joints) if j != base_joint])
        self.lean = self.q0[self.il].copy()
        self.newton_iterations = 0
        self.method = method
        self.residual = 0.0  # m, |upper-body CoM - c| of the last pose
        self.last_q = self.q0.copy()  # the IK's start
        self._m_upper = float(skel.masses[self.upper].sum())
        self._m_total = float(skel.masses.sum())
        if method == "ik":
            if "base" not in skel.site_names:
                raise BalanceError(f"rig {skel.name!r} has no 'base' site for the IK to hold")
            self._base_site = skel.site_index("base")
            fk = forward_kinematics(skel, self.q0)
            self._ik = prepare_ik(skel, self.q0, {"base": (fk.site_positions[self._base_site],
                                                           fk.site_rotations[self._base_site])},
                                  com=tuple(fk.joint_positions[0, :2]), max_iterations=100,
                                  tol_position=IK_TOL, tol_rotation=IK_TOL)

    def upper_com(self, q: np.ndarray) -> np.ndarray:
        """World CoM (3,) of every link but the base, from the rig's masses."""
        fk = forward_kinematics(self.skel, q)
        js = self.upper
        pts = fk.joint_positions[js] + np.einsum("jab,jb->ja", fk.joint_rotations[js],
                                                 self.skel.coms[js])
        m = self.skel.masses[js]
        return (m[:, None] * pts).sum(0) / m.sum()

    def pose(self, b: np.ndarray, c: np.ndarray, yaw: float, q: np.ndarray | None = None,
             tol: float = NEWTON_TOL, max_iterations: int = 20) -> np.ndarray:
        """The pose ``(n_dof,)`` with the base at ``b`` (2,) turned by ``yaw`` and the
        upper-body CoM over ``c`` (2,): Newton on the leg DoFs (warm-started from the last
        solve), within their limits; the other DoFs from ``q`` (default ``q0``)."""
        if self.method == "ik":
            return self._pose_ik(b, c, yaw)
        q = np.array(self.q0 if q is None else q, float)
        q[self.ib] = (b[0], b[1], yaw)
        lo, hi = self.skel.lower[self.il], self.skel.upper[self.il]
        lean = self.lean.copy()
        for _ in range(max_iterations):
            q[self.il] = lean
            got = self.upper_com(q)[:2]
            err = np.asarray(c, float) - got
            if np.linalg.norm(err) < tol:
                break
            self.newton_iterations += 1
            jac = np.empty((2, 2))
            for k in range(2):  # central differences: the Jacobian to ~1e-10
                qp, qm = q.copy(), q.copy()
                qp[self.il[k]] += 1e-6
                qm[self.il[k]] -= 1e-6
                jac[:, k] = (self.upper_com(qp)[:2] - self.upper_com(qm)[:2]) / 2e-6
            step = np.linalg.lstsq(jac, err, rcond=1e-9)[0]
            new = np.clip(lean + step, lo, hi)
            if np.allclose(new, lean, rtol=0.0, atol=1e-15):
                break  # at a limit: the lean cannot go further
            lean = new
        q[self.il] = lean
        self.lean = lean
        self.residual = float(np.linalg.norm(self.upper_com(q)[:2] - c))
        return q

    def _pose_ik(self, b: np.ndarray, c: np.ndarray, yaw: float) -> np.ndarray:
        """The IK centre-of-mass task: whole-body CoM over ``(m_base b_com + m_upper c) / m``
        with the base held at ``b``, ``yaw`` (its DoFs then set exactly)."""
        q = self.last_q.copy()
        q[self.ib] = (b[0], b[1], yaw)
        fk = forward_kinematics(self.skel, q)
        base_com = fk.joint_positions[0] + fk.joint_rotations[0] @ self.skel.coms[0]
        m_base = self._m_total - self._m_upper
        com = (m_base * base_com[:2] + self._m_upper * np.asarray(c, float)) / self._m_total
        r = self._ik.solve(q, targets={"base": (fk.site_positions[self._base_site],
                                                fk.site_rotations[self._base_site]),
                                       "com": (float(com[0]), float(com[1]))})
        out = np.array(r.q, float)
        out[self.ib] = (b[0], b[1], yaw)  # the pin is a soft target: put the base exactly
        self.residual = float(np.linalg.norm(self.upper_com(out)[:2] - c))
        return out

    def states_at(self, body: np.ndarray, base: np.ndarray, body_jerk: np.ndarray,
                  base_jerk: np.ndarray, yaw: float, yaw_rate: float,
                  q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, qd, qdd)`` each ``(n_dof,)`` at the state ``body``, ``base`` (2, 3) moving
        with the given jerks (2,) and yaw rate: the pose map at ``t`` and ``t ± ε``."""
        lean, start = self.lean.copy(), self.last_q.copy()
        poses = []
        for h in (-EPS, EPS, 0.0):  # each from the same start: the map is one function of t
            self.lean, self.last_q = lean, start
            bo = advance(body, body_jerk, h) if h else body
            ba = advance(base, base_jerk, h) if h else base
            poses.append(self.pose(ba[:, 0], bo[:, 0], yaw + yaw_rate * h, q))
        qm, qp, q0 = poses
        self.lean, self.last_q = q0[self.il], q0
        return q0, (qp - qm) / (2 * EPS), (qp - 2 * q0 + qm) / EPS ** 2

    def cop(self, body: np.ndarray, base: np.ndarray, body_jerk: np.ndarray,
            base_jerk: np.ndarray, yaw: float = 0.0, yaw_rate: float = 0.0,
            q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(cop (2,), q (n_dof,))``: the full-body CoP (m, floor ``z = 0``) and the pose."""
        q0, qd, qdd = self.states_at(body, base, body_jerk, base_jerk, yaw, yaw_rate, q)
        return zmp(self.skel, q0, qd, qdd)[:2], q0


__all__ = ["BASE_DOFS", "EPS", "LEAN_DOFS", "METHODS", "FullBody"]
