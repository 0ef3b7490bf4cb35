"""Seed E's linear MPC: the QP over the jerks of ``c`` and ``b`` with O1–O5 and R1–R3.

Decision vector ``X = [U_cx, U_cy, U_bx, U_by]`` (4N jerks, m/s³); the one-mass variant keeps
only ``[U_bx, U_by]`` and assumes ``c = b`` with the whole mass at the base height ``l``.

Every term is affine in ``X`` and in the measured state ``s`` (12 values: ``(x, ẋ, ẍ)`` of
``c_x, c_y, b_x, b_y``): ``E = G X + W s``. ``Q`` and the constraint matrix ``V`` depend only on
the horizon, so they are built once; each cycle only recomputes ``p`` and the bounds.

Objectives (seed E, ``Q = Σ αi Qi``, ``p = Σ αi pi``), summed over the samples ``k = 1..N`` and
both axes:
    O1 ``½‖Ḃ − Ḃ_ref‖²``, O2 ``½‖B − B_ref‖²``,
    O3 ``½[ζ_f ‖P − B‖² + (1 − ζ_f) ‖C − B‖²]`` (the squared terms of ζ: our quadratic form),
    O4 ``½‖X‖²`` (jerks), O5 ``½‖X‖²`` with a tiny α5: keeps ``Q`` positive definite when α4 = 0.
Constraints:
    R1 ``|n_i · (P_k − B_k)| ≤ r cos(π/8)``, i = 0..3 (the 8 half-planes of the octagon as four
       two-sided rows);
    R2 ``|ḃ_x|, |ḃ_y| ≤ v_max``, ``|b̈_x|, |b̈_y| ≤ a_max`` (per axis, as the seed writes
       ``xy`` bounds);
    R3 ``|c_x − b_x|, |c_y − b_y| ≤ k_xy`` (two-mass only).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import qp
from .cop import octagon_apothem, octagon_normals
from .horizon import Horizon
from .params import BalanceError, RobotModel, Weights

# Offsets of each mass/axis in the 12-vector state and (two-mass) in X.
_STATE = {("c", 0): 0, ("c", 1): 3, ("b", 0): 6, ("b", 1): 9}


@dataclass
class MPCResult:
    """One cycle's answer.

    Attributes:
        body_jerk: (N, 2) planned jerks of ``c`` (equal to ``base_jerk`` in the one-mass model).
        base_jerk: (N, 2) planned jerks of ``b``.
        status: ``"optimal"``, or ``"relaxed: ..."`` (best effort: the full QP was infeasible and
            a relaxed one was solved) — never an exception.
        feasible: the full QP (R1–R3) was solved.
        solve_ms: wall time of the cycle (build ``p``, bounds, solve), ms.
        x: (n,) the decision vector.
        notes: warnings about the input (e.g. a reference beyond the speed limit).
    """

    body_jerk: np.ndarray
    base_jerk: np.ndarray
    status: str
    feasible: bool
    solve_ms: float
    x: np.ndarray
    notes: list[str] = field(default_factory=list)


def pack_state(body: np.ndarray, base: np.ndarray) -> np.ndarray:
    """(12,) state from ``body`` and ``base`` (2, 3): rows x, y; columns (pos, vel, acc)."""
    return np.concatenate([np.asarray(body, float).reshape(6), np.asarray(base, float).reshape(6)])


class BalanceMPC:
    """The MPC of seed E for one robot, weights and horizon; reusable cycle after cycle.

    Args:
        model: the robot (:class:`RobotModel`).
        weights: α1…α5 and ζ_f.
        period: ``T`` in s (seed: 0.1).
        steps: ``N`` (seed: 20).
        one_mass: the one-mass variant (experiment 3).
        solver: a QP solver name (:func:`animik.balance.qp.available_solvers`).
        warm_start: pass the previous solution, shifted by one period, as the initial guess.
    """

    def __init__(self, model: RobotModel, weights: Weights | None = None, period: float = 0.1,
                 steps: int = 20, one_mass: bool = False, solver: str | None = None,
                 warm_start: bool = True):
        if not isinstance(model, RobotModel):
            raise BalanceError(f"model must be a RobotModel, got {type(model).__name__}")
        self.model = model
        self.weights = weights if weights is not None else Weights()
        if not isinstance(self.weights, Weights):
            raise BalanceError(f"weights must be a Weights, got {type(self.weights).__name__}")
        self.horizon = Horizon.build(period, steps)
        self.one_mass = bool(one_mass)
        self.solver = qp.check_solver(solver) if solver is not None else qp.default_solver()
        self.warm_start = bool(warm_start)
        self._prev: qp.QPSolution | None = None
        self._build()

    # -- construction ----------------------------------------------------------------------
    @property
    def n_vars(self) -> int:
        return (2 if self.one_mass else 4) * self.horizon.steps

    def _block(self, mass: str, axis: int) -> slice:
        n = self.horizon.steps
        if self.one_mass:
            return slice(axis * n, (axis + 1) * n)  # c's jerks are b's
        return slice(((0 if mass == "c" else 2) + axis) * n, ((0 if mass == "c" else 2) + axis + 1) * n)

    def _affine(self, mass: str, axis: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """``(G (N, n), W (N, 12))`` of position / velocity / acceleration of a mass on an axis."""
        hz = self.horizon
        n = hz.steps
        g = np.zeros((n, self.n_vars))
        w = np.zeros((n, 12))
        su = {"pos": (hz.pos_s, hz.pos_u), "vel": (hz.vel_s, hz.vel_u), "acc": (hz.acc_s, hz.acc_u)}
        s_mat, u_mat = su[kind]
        g[:, self._block(mass, axis)] = u_mat
        src = "b" if self.one_mass else mass  # one-mass: c is b
        off = _STATE[(src, axis)]
        w[:, off:off + 3] = s_mat
        return g, w

    def _cop_affine(self, axis: int) -> tuple[np.ndarray, np.ndarray]:
        m = self.model
        gb, wb = self._affine("b", axis, "pos")
        gbdd, wbdd = self._affine("b", axis, "acc")
        if self.one_mass:  # the whole mass at the base height l (the model that ignores the body)
            k = m.base_height / m.gravity
            return gb - k * gbdd, wb - k * wbdd
        gc, wc = self._affine("c", axis, "pos")
        gcdd, wcdd = self._affine("c", axis, "acc")
        fc, fb = m.body_mass / m.total_mass, m.base_mass / m.total_mass
        kc, kb = m.body_height / m.gravity, m.base_height / m.gravity
        return (fc * (gc - kc * gcdd) + fb * (gb - kb * gbdd),
                fc * (wc - kc * wcdd) + fb * (wb - kb * wbdd))

    def _build(self) -> None:
        wts, m, n = self.weights, self.model, self.horizon.steps
        nx = self.n_vars
        q_mat = (wts.jerk + wts.stability) * np.eye(nx)
        # Linear term pieces: p = Σ_terms w Gᵀ (W s − ref)  ->  pw @ s − Σ w Gᵀ ref.
        self._p_state = np.zeros((nx, 12))
        self._p_vel_ref: list[np.ndarray] = []  # per axis (nx, N): multiplies the velocity ref
        self._p_pos_ref: list[np.ndarray] = []
        rows_g, rows_w, lo, hi = [], [], [], []
        cop_rel = []
        for axis in (0, 1):
            gv, wv = self._affine("b", axis, "vel")
            gp, wp = self._affine("b", axis, "pos")
            ga, wa = self._affine("b", axis, "acc")
            gz, wz = self._cop_affine(axis)
            terms = [(wts.velocity, gv, wv), (wts.position, gp, wp),
                     (wts.robustness * wts.zeta_f, gz - gp, wz - wp)]
            if not self.one_mass:
                gc, wc = self._affine("c", axis, "pos")
                terms.append((wts.robustness * (1 - wts.zeta_f), gc - gp, wc - wp))
                # R3: body-base offset box
                rows_g.append(gc - gp)
                rows_w.append(wc - wp)
                lo.append(np.full(n, -m.body_offset))
                hi.append(np.full(n, m.body_offset))
            for a, g, w in terms:
                if a:
                    q_mat += a * g.T @ g
                    self._p_state += a * g.T @ w
            self._p_vel_ref.append(-wts.velocity * gv.T)
            self._p_pos_ref.append(-wts.position * gp.T)
            # R2: per-axis speed and acceleration bounds of the base
            rows_g += [gv, ga]
            rows_w += [wv, wa]
            lo += [np.full(n, -m.max_speed), np.full(n, -m.max_acceleration)]
            hi += [np.full(n, m.max_speed), np.full(n, m.max_acceleration)]
            cop_rel.append((gz - gp, wz - wp))
        n_r23 = sum(len(r) for r in rows_g)
        # R1: octagon about b, four two-sided rows per sample (normals i and i+4 are opposite).
        apo = octagon_apothem(m.support_radius)
        for nrm in octagon_normals()[:4]:
            rows_g.append(nrm[0] * cop_rel[0][0] + nrm[1] * cop_rel[1][0])
            rows_w.append(nrm[0] * cop_rel[0][1] + nrm[1] * cop_rel[1][1])
            lo.append(np.full(n, -apo))
            hi.append(np.full(n, apo))
        self.q_mat = 0.5 * (q_mat + q_mat.T)
        self.v_mat = np.vstack(rows_g)
        self.v_state = np.vstack(rows_w)
        self.v_lo = np.concatenate(lo)
        self.v_hi = np.concatenate(hi)
        # Rows of R2 alone (the relaxation when the full QP is infeasible).
        r2 = np.zeros(len(self.v_mat), bool)
        start = 0
        for _axis in (0, 1):
            if not self.one_mass:
                start += n  # R3 rows of this axis come first
            r2[start:start + 2 * n] = True
            start += 2 * n
        assert start == n_r23
        self._r2_rows = r2

    # -- one cycle --------------------------------------------------------------------------
    def linear_term(self, state: np.ndarray, vel_ref: np.ndarray, pos_ref: np.ndarray) -> np.ndarray:
        """``p`` (n,) for the measured ``state`` (12,) and the references (N, 2) over the horizon."""
        p = self._p_state @ state
        for axis in (0, 1):
            p = p + self._p_vel_ref[axis] @ vel_ref[:, axis] + self._p_pos_ref[axis] @ pos_ref[:, axis]
        return p

    def bounds(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(v⁻, v⁺)`` of ``v⁻ ≤ V X ≤ v⁺`` for the measured state."""
        off = self.v_state @ state
        return self.v_lo - off, self.v_hi - off

    def solve(self, body: np.ndarray, base: np.ndarray, vel_ref, pos_ref) -> MPCResult:
        """One MPC cycle from the measured state.

        Args:
            body: (2, 3) ``c``: rows x, y; columns position (m), velocity (m/s), acceleration
                (m/s²). Ignored in the one-mass model (``c = b``).
            base: (2, 3) ``b``, same layout.
            vel_ref: (N, 2) base velocity reference at the samples ``k = 1..N``, m/s.
            pos_ref: (N, 2) base position reference at the same samples, m.

        Returns:
            :class:`MPCResult`; an infeasible QP gives a best-effort answer flagged
            ``feasible=False`` (first R1 and R3 are dropped, then every constraint).
        """
        t0 = time.perf_counter()
        n = self.horizon.steps
        body = np.asarray(body, float)
        base = np.asarray(base, float)
        vel_ref = np.asarray(vel_ref, float)
        pos_ref = np.asarray(pos_ref, float)
        for name, arr, shape in (("body", body, (2, 3)), ("base", base, (2, 3)),
                                 ("vel_ref", vel_ref, (n, 2)), ("pos_ref", pos_ref, (n, 2))):
            if arr.shape != shape or not np.isfinite(arr).all():
                raise BalanceError(f"{name} must be a finite array of shape {shape}, got "
                                   f"{arr.shape}{'' if np.isfinite(arr).all() else ' with NaN/inf'}")
        notes = []
        if np.any(np.abs(vel_ref) > self.model.max_speed + 1e-12):
            notes.append(f"velocity reference beyond the speed limit {self.model.max_speed} m/s")
        state = pack_state(body, base)
        p = self.linear_term(state, vel_ref, pos_ref)
        lo, hi = self.bounds(state)
        warm = self._shifted(self._prev) if (self.warm_start and self._prev is not None) else None
        sol = qp.solve(self.q_mat, p, self.v_mat, lo, hi, self.solver, warm)
        status, feasible = "optimal", True
        if sol is None:
            feasible = False
            keep = self._r2_rows
            sol = qp.solve(self.q_mat, p, self.v_mat[keep], lo[keep], hi[keep], self.solver)
            status = "relaxed: R1 (CoP octagon) and R3 dropped, infeasible"
            if sol is None:
                sol = qp.QPSolution(np.linalg.solve(self.q_mat, -p))
                status = "relaxed: every constraint dropped, infeasible"
            sol.lam = None  # multipliers of a relaxed problem do not fit the full one
        self._prev = sol
        x = sol.x
        if self.one_mass:
            ub = np.stack([x[:n], x[n:2 * n]], 1)
            uc = ub
        else:
            uc = np.stack([x[:n], x[n:2 * n]], 1)
            ub = np.stack([x[2 * n:3 * n], x[3 * n:]], 1)
        return MPCResult(uc, ub, status, feasible, (time.perf_counter() - t0) * 1e3, x, notes)

    def _shifted(self, prev: qp.QPSolution) -> qp.QPSolution:
        """The previous answer one period later: every block of ``N`` values (jerks, and the
        multipliers of each constraint kind) drops its first value and repeats its last."""
        n = self.horizon.steps

        def shift(v):
            blocks = v.reshape(-1, n)
            return np.concatenate([blocks[:, 1:], blocks[:, -1:]], axis=1).reshape(-1)

        return qp.QPSolution(shift(prev.x), None if prev.lam is None else shift(prev.lam))

    def reset(self) -> None:
        """Forget the warm start."""
        self._prev = None
