"""Approximate-inverse IK with singular-pose compensation (seed C, eqs 10–11).

The seed's loop (target pose → FK → error ``(Δp, ΔR)`` as position and angle-axis rows → joint
correction → repeat) with the joint correction computed **without any matrix inverse**.

Eq 10 (reconstructed; the image is lost, SEEDS.md gives this form): every task row ``i`` is
weighted by the 1-norms of J's row and column,

    Δq_j = Σ_i J_ij Δx_i / (‖J(:, j)‖₁ · ‖J(i, :)‖₁)          i.e.   Δq = D_c⁻¹ Jᵀ D_r⁻¹ Δx

with ``D_c = diag(‖J(:, j)‖₁)`` and ``D_r = diag(‖J(i, :)‖₁)``. Why it works: by Schur's test
``B = D_r^{-1/2} J D_c^{-1/2}`` has ``‖B‖₂ ≤ 1``, so the linearised error update
``Δx ← (I − J D_c⁻¹ Jᵀ D_r⁻¹) Δx`` has eigenvalues in ``[0, 1]``: the step never overshoots in
the linear model and needs no step-size tuning (``gain`` may go up to 2). Its weakness is the one
the seed describes: at a singular pose (straight legs, all joints zero) a row of J vanishes (a
straight leg cannot move its foot vertically) and ``J_ij / ‖J(i, :)‖₁`` becomes 0/0 — rounding
noise of order 1e-17 divided by a norm of the same order gives weights of order one with random
signs, and a row that is exactly zero gives 0/0. ``compensate=False`` is this plain eq 10 with
only a 1e-300 guard against an exact division by zero (no NaN, but the amplification is kept).

Eq 11 (reconstructed), ``compensate=True`` (default), adds two things:

1. **Floors on every norm**: ``‖J(:, j)‖₁ → max(‖J(:, j)‖₁, floor · max_j ‖J(:, j)‖₁)`` and the
   same for rows (relative to the largest row of the same kind, position or orientation, so
   metres are not compared with radians), so no denominator goes to zero. A floored row simply
   stops contributing (its weight ``J_ij / floor`` is tiny), and the larger denominators keep
   ``‖B‖₂ ≤ 1``.
2. **Joint-angle compensation** that moves the pose off the singular configuration. The
   singular configuration of a leg (or arm) is the *stretched limb*: with the knee straight the
   foot cannot move along the hip–ankle line to first order, whatever the other joints do, and
   eq 10 — which only sees first-order motion — never bends the knee (it even pushes it against
   its limit). The limb is the rigid triangle hip–knee–ankle (``a`` = hip→knee, ``b`` =
   knee→ankle, constant; ``hip`` = the parent joint of the knee DoF's joint, ``ankle`` = the
   knee's child joint on the way to the site, or the site itself when it sits on the shank).
   For every *knee-like* DoF whose limb is bent less than ``compensation_zone`` (and whose own
   angle from its straight end is that bend, within 0.15 rad: it really is the limb's knee), the
   bend that gives the limb the length it needs comes from the law of cosines,

       bend(d) = arccos((d² − a² − b²) / (2ab)),   Δθ = bend(‖ankle_ref − hip‖) − bend(‖ankle − hip‖)

   where ``ankle_ref`` = the site's target minus the site's offset from the ankle, rotated into
   the target orientation (exact for a pose target such as seed C's soles). The DoF moves by
   ``clip(compensation_gain · Δθ, ±compensation_step)`` (positive = away from the straight end;
   the largest need over the targeted sites it moves). The other DoFs then cancel the
   first-order effect of that bend on the task with the same inverse-free operator,
   ``Δq_c ← Δq_c − D_c⁻¹ J_oᵀ D_r⁻¹ (J Δq_c)`` (``J_o``: J without the compensated columns),
   so the compensation changes the limb's length without dragging its end. The compensation
   vanishes at a solution (the ankle is then exactly at ``ankle_ref``). A position-only target
   leaves the ankle free, so the length it needs is not known: there the compensation only
   bends a limb that is within 0.15 rad of straight (it never straightens one).
   Knee-like DoFs (``compensate_dofs="auto"``): rotations with finite limits whose range is
   one-sided about zero (``lower ≥ −0.1`` and ``upper ≥ 0.5`` rad, or the mirror image) — knees,
   elbows, finger flexions; pass a list of DoF names to choose them yourself.

The original paper's formula for the compensation did not survive; this is a reconstruction that
keeps its two stated properties (bounded denominators; a joint-angle term that takes the pose off
the singular configuration) and is documented as such.

Joint limits: DoFs on a limit that the step pushes outward are blocked (column zeroed, step
recomputed), then the pose is clipped into the limits. The step is bounded by ``max_step``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import OptionError
from ._baseline import Loop, bound_step, check_range, parse_options, solve_with_clamping
from .common import check_positive, check_q0, make_result
from .problem import IKProblem
from .result import IKResult

NAME = "approx_inverse"

DEFAULTS = {
    "max_iterations": 2000,
    "stall_window": 50,
    "gain": 1.5,  # scale of the eq-10 step, in (0, 2)
    "compensate": True,  # eq 11 (floors + joint-angle compensation) vs plain eq 10
    "floor": 1e-2,  # norm floors, relative to the largest row / column norm
    "compensate_dofs": "auto",  # "auto" (knee-like DoFs) or a list of DoF names
    "compensation_zone": 0.6,  # rad: limbs bent less than this are compensated (pose targets)
    "compensation_gain": 0.5,  # fraction of the missing bend applied per iteration
    "compensation_step": 0.1,  # rad, largest bend per iteration
    "max_step": 0.5,  # rad or m per DoF per iteration
}

_TINY = 1e-300
_KNEE_MATCH = 0.15  # rad: a limb's bend must equal its knee DoF's angle from straight within this
_POSITION_ZONE = 0.15  # rad: compensation zone for sites with a position-only target


def approx_inverse_step(jac: np.ndarray, dx: np.ndarray, floor: float | None,
                        row_kind: np.ndarray | None = None) -> np.ndarray:
    """Eq 10 / the floored eq 11 operator: ``D_c⁻¹ Jᵀ D_r⁻¹ dx`` ``(n,)``.

    Args:
        jac: ``(m, n)`` task Jacobian.
        dx: ``(m,)`` task-space displacement.
        floor: relative floor of the norms (eq 11), or ``None`` for plain eq 10.
        row_kind: ``(m,)`` 0 for position rows (m/rad), 1 for orientation rows (rad/rad): row
            floors are relative to the largest norm of the same kind, so that metres and
            radians are not compared (default: all rows one kind).
    """
    a = np.abs(jac)
    row = a.sum(axis=1)
    col = a.sum(axis=0)
    if floor is None:
        row = np.maximum(row, _TINY)
        col = np.maximum(col, _TINY)
    else:
        row = np.maximum(row, _row_floor(row, row_kind, floor))
        col = np.maximum(col, max(floor * float(col.max(initial=0.0)), 1e-12))
    return (jac.T @ (dx / row)) / col


def _row_floor(row: np.ndarray, row_kind: np.ndarray | None, rel: float) -> np.ndarray:
    """Per-row ``rel`` times the largest row norm of the same kind (at least 1e-12)."""
    if row_kind is None:
        return np.full_like(row, max(rel * float(row.max(initial=0.0)), 1e-12))
    out = np.empty_like(row)
    for kind in (0, 1):
        sel = row_kind == kind
        if sel.any():
            out[sel] = max(rel * float(row[sel].max()), 1e-12)
    return out


def row_kinds(problem: IKProblem) -> np.ndarray:
    """``(m,)`` 0 for position rows, 1 for orientation rows of a problem."""
    return np.concatenate([[0, 0, 0] if r == 3 else [0, 0, 0, 1, 1, 1]
                           for r in problem.rows]).astype(np.int8) if problem.k else \
        np.zeros(0, dtype=np.int8)


def knee_like_dofs(skel) -> np.ndarray:
    """Bool ``(n,)``: rotation DoFs with a one-sided range about zero (knees, elbows)."""
    rot = skel.dof_type == 0
    lo, hi = skel.lower, skel.upper
    fin = np.isfinite(lo) & np.isfinite(hi)
    bend_pos = (lo >= -0.1) & (hi >= 0.5)
    bend_neg = (hi <= 0.1) & (lo <= -0.5)
    return rot & fin & (bend_pos | bend_neg)


def _compensate_mask(skel, spec) -> np.ndarray:
    if isinstance(spec, str):
        if spec != "auto":
            raise OptionError(f"compensate_dofs must be 'auto' or a list of DoF names, got {spec!r}")
        return knee_like_dofs(skel)
    if not isinstance(spec, Sequence):
        raise OptionError(
            f"compensate_dofs must be 'auto' or a list of DoF names, got {type(spec).__name__}")
    mask = np.zeros(skel.n_dof, dtype=bool)
    for name in spec:
        k = skel.dof_index(name)  # UnknownNameError lists the valid names
        if skel.dof_type[k] != 0 or not (np.isfinite(skel.lower[k]) and np.isfinite(skel.upper[k])):
            raise OptionError(f"compensate_dofs: DoF {name!r} must be a rotation with finite limits")
        mask[k] = True
    return mask


class CompensationPlan:
    """Precomputed (knee-like DoF, targeted site) pairs for :func:`compensation`.

    Args:
        problem: the targets.
        mask: ``(n,)`` knee-like DoFs that may be compensated.
    """

    def __init__(self, problem: IKProblem, mask: np.ndarray):
        skel = problem.skeleton
        lo, hi = skel.lower, skel.upper
        self.n = skel.n_dof
        fin = np.isfinite(lo) & np.isfinite(hi)
        straight = np.where(np.abs(lo) <= np.abs(hi), lo, hi)
        # +1 / -1: the sign of a bend (away from the straight end, toward mid-range).
        mid = 0.5 * (np.where(fin, lo, 0.0) + np.where(fin, hi, 0.0))
        self.straight = np.where(fin, straight, 0.0)
        self.direction = np.where(fin, np.sign(mid - self.straight), 0.0)
        dof, site, distal = [], [], []
        for j in np.flatnonzero(mask):
            knee = int(skel.dof_joint[j])
            if skel.parents[knee] < 0:
                continue
            for i in np.flatnonzero(skel.site_dof_mask[problem.sites, j]):
                # The limb's distal end: the knee's child on the way to the site (the ankle),
                # or -1 when the site sits on the knee's own segment.
                jt = int(skel.site_joint[problem.sites[i]])
                while jt != knee and skel.parents[jt] != knee:
                    jt = int(skel.parents[jt])
                dof.append(j)
                site.append(i)
                distal.append(-1 if jt == knee else jt)
        self.dof = np.array(dof, dtype=np.int64)
        self.site = np.array(site, dtype=np.int64)
        self.distal = np.array(distal, dtype=np.int64)
        self.knee = skel.dof_joint[self.dof]
        self.hip = skel.parents[self.knee]
        self.targets = problem.positions[self.site]
        self.target_rot = problem.rotations[self.site]
        self.has_rot = problem.rows[self.site] == 6


def _bend(d: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bend (rad, 0 = straight) of two-segment limbs ``a``, ``b`` whose ends are ``d`` apart."""
    c = (d * d - a * a - b * b) / np.maximum(2.0 * a * b, 1e-12)
    return np.arccos(np.clip(c, -1.0, 1.0))


def compensation(plan: CompensationPlan, ws, q: np.ndarray, zone: float, gain: float,
                 step: float, floor: float, row_kind: np.ndarray | None = None) -> np.ndarray:
    """Eq 11 joint-angle compensation ``Δq_c (n,)`` (zeros away from stretched limbs).

    Args:
        plan: the problem's knee-like DoFs and the targeted sites they move.
        ws: the problem workspace evaluated at ``q`` (its joint and site positions are used).
        q: current pose ``(n,)``.
        zone: rad; a limb whose hip-knee-ankle triangle is bent less counts as stretched.
        gain: fraction of the missing bend applied per iteration.
        step: rad, largest bend per iteration.
        floor: norm floor of the projection operator.
        row_kind: see :func:`approx_inverse_step`.
    """
    dq = np.zeros(plan.n)
    if not plan.dof.size:
        return dq
    # A position-only target leaves the ankle free, so the limb length it needs is not known:
    # there, only take a straight (singular) limb off its straight end, never straighten.
    zone_k = np.where(plan.has_rot, zone, min(zone, _POSITION_ZONE))
    own = np.abs(q[plan.dof] - plan.straight[plan.dof])
    cand = np.flatnonzero(own < zone_k + _KNEE_MATCH)  # cheap pre-filter (see `sel` below)
    if not cand.size:
        return dq
    jpos = ws.kin.joint_positions
    spos = ws.kin.site_positions[plan.site[cand]]  # the problem's sites, in problem order
    has_rot = plan.has_rot[cand]
    # The triangle hip-knee-ankle is rigid (a, b constant): use the ankle, and the ankle's
    # target = the site target minus the site's offset from the ankle (rotated into the target
    # orientation when the site has one). Both coincide with the site where it sits on the shank.
    distal = plan.distal[cand]
    end = np.where((distal >= 0)[:, None], jpos[np.maximum(distal, 0)], spos)
    off = spos - end
    rot_cur = ws.kin.site_rotations[plan.site[cand]]
    off_tgt = np.where(has_rot[:, None],
                       np.einsum("kij,kjl,kl->ki", plan.target_rot[cand],
                                 np.swapaxes(rot_cur, -1, -2), off), off)
    end_tgt = plan.targets[cand] - off_tgt
    knee, hip = jpos[plan.knee[cand]], jpos[plan.hip[cand]]
    a = np.linalg.norm(knee - hip, axis=1)
    b = np.linalg.norm(end - knee, axis=1)
    bend_now = _bend(np.linalg.norm(end - hip, axis=1), a, b)
    # Stretched limbs only (the hip-knee-ankle triangle bent less than the zone) whose bend is
    # the DoF's own angle from its straight end (a knee, not e.g. a shoulder roll whose range
    # happens to be one-sided: there the triangle's bend has nothing to do with the DoF).
    sel = (a > 1e-6) & (b > 1e-6) & (bend_now < zone_k[cand]) \
        & (np.abs(bend_now - own[cand]) < _KNEE_MATCH)
    if not sel.any():
        return dq
    need = _bend(np.linalg.norm(end_tgt[sel] - hip[sel], axis=1), a[sel], b[sel]) \
        - bend_now[sel]
    need = np.where(has_rot[sel], need, np.maximum(need, 0.0))
    ok = need != 0.0
    dofs = plan.dof[cand][sel][ok]
    need = need[ok]
    if not dofs.size:
        return dq
    # Per DoF: the largest bend any of its sites needs, else the smallest straightening.
    hi_need = np.full(plan.n, -np.inf)
    lo_need = np.full(plan.n, np.inf)
    np.maximum.at(hi_need, dofs, need)
    np.minimum.at(lo_need, dofs, need)
    u = np.unique(dofs)
    per = np.where(hi_need[u] > 0.0, hi_need[u], lo_need[u])
    dq[u] = plan.direction[u] * np.clip(gain * per, -step, step)
    bent = dq != 0.0
    if bent.any():
        # Keep the effectors where they are (to first order): the other DoFs cancel what the
        # task sees of the bend, through the same inverse-free operator.
        others = ws.jac.copy()
        others[:, bent] = 0.0
        dq -= approx_inverse_step(others, ws.jac @ dq, floor, row_kind)
    return dq


def solve(problem: IKProblem, q0: np.ndarray, **options) -> IKResult:
    """Approximate-inverse IK (seed C eq 10, compensated eq 11 by default).

    Args:
        problem: the targets (seed C: sole poses with position and rotation rows).
        q0: start pose ``(n_dof,)`` (clipped into the limits).
        **options: ``tol_position`` (m), ``tol_rotation`` (rad), ``max_iterations`` (2000),
            ``gain`` (0–2, 1.5), ``compensate`` (True), ``floor`` (1e-2),
            ``compensate_dofs`` (``"auto"`` or DoF names), ``compensation_zone`` (rad, 0.6),
            ``compensation_gain`` (0.5), ``compensation_step`` (rad, 0.1), ``max_step`` (rad or
            m, 0.5), ``stall_window`` (50), ``stall_rel``, ``state`` (ignored), ``callback``.

    Raises:
        UnknownNameError: unknown option or DoF name. OptionError: bad option value. ShapeError,
            ValueRangeError: bad ``q0``.
    """
    if problem.tasks:  # its candidate / compensation logic works on site rows only
        raise OptionError(f"solver 'approx_inverse' handles site targets only, not the tasks "
                         f"{[t.name for t in problem.tasks]}; use 'fik', 'dls' or 'pinv'")
    o = parse_options(NAME, options, DEFAULTS)
    gain = check_range("gain", o["gain"], 0.0, 2.0, hi_open=True)
    comp = o["compensate"]
    if not isinstance(comp, (bool, np.bool_)):
        raise OptionError(f"compensate must be True or False, got {comp!r}")
    floor = check_range("floor", o["floor"], 0.0, 1.0, hi_open=True)
    zone = check_positive("compensation_zone", o["compensation_zone"], allow_zero=True)
    c_gain = check_range("compensation_gain", o["compensation_gain"], 0.0, 1.0, lo_open=False)
    c_step = check_positive("compensation_step", o["compensation_step"], allow_zero=True)
    max_step = check_positive("max_step", o["max_step"])
    skel = problem.skeleton
    plan = CompensationPlan(problem, _compensate_mask(skel, o["compensate_dofs"]))
    use_floor = floor if comp else None
    kinds = row_kinds(problem)
    lo, hi = skel.lower, skel.upper
    q = check_q0(problem, q0)
    ws = problem.workspace()
    ws.evaluate(q)
    loop = Loop(o)
    it = 0
    while (reason := loop.check(it, ws, q)) is None:
        it += 1
        e = ws.e
        dq = solve_with_clamping(
            lambda jb, e=e: gain * approx_inverse_step(jb, e, use_floor, kinds), ws.jac, q, lo, hi)
        if comp:
            dq += compensation(plan, ws, q, zone, c_gain, c_step, floor, kinds)
        bound_step(dq, max_step)
        q = np.clip(q + dq, lo, hi)
        ws.evaluate(q)
    return make_result(problem, ws, q, it, reason, NAME, evaluate=False)
