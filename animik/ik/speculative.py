"""Speculative parallel Jacobian-transpose IK (seed B).

Jacobian transpose whose step size is chosen *speculatively*: K candidate steps along the same
direction are all evaluated and the best one is kept (seed B, steps 1–7):

1. ``Δe = P_target − f(θ)``; stop when every effector is within tolerance.
2. ``J(θ)``, direction ``v = Jᵀ Δe`` (DoFs on a limit that ``v`` pushes out are removed).
3. K candidates ``θ_k = clip(θ + α_k v)``, k = 1..K.
4. **One batched forward-kinematics call** over the ``(K, n)`` candidate poses
   (:func:`animik.kinematics.forward_kinematics`): the vectorised form of the patent's one
   candidate per thread / GPU lane. ``error_k = ‖Δe_k‖`` (weighted task error).
5. ``θ ← θ_k`` of the smallest ``error_k``, only if it is smaller than the current error, so
   the error never increases (if no candidate improves, θ stays and the next ladder is scaled
   down by the ladder's smallest factor).

Reconstruction of the lost candidate formula (documented as such in SEEDS.md): the patent
draws α_k in (0, 1) for its own units; here every candidate is a multiple of the classic
optimal transpose step ``α* = ⟨Δe, JJᵀΔe⟩ / ⟨JJᵀΔe, JJᵀΔe⟩`` (Buss), which makes the ladder
unit-free:

* ``ladder="geometric"`` (default): ``α_k = α* · c_k`` with ``c`` log-spaced over
  ``[1/32, 4]`` (K = 8: 1/32, 1/12.7, … , 1.59, 4). Factors above 1 let the solver take the
  longer steps that plain JT's linearised optimum never takes, factors below 1 handle strong
  non-linearity; this is the faster variant.
* ``ladder="linear"``: ``α_k = (k / K) · α*`` — the literal reading (all candidates in
  ``(0, α*]``).

Each iteration costs one FK + Jacobian at θ and one batched FK over K poses.

What to expect: near a solution the kinematics is almost linear and α* is the exact minimiser
of the error along ``v``, so the candidate closest to α* wins every time and the iterates are
those of :mod:`animik.ik.transpose` (same iteration counts in ``animik bench ik``), at K extra
FK evaluations per iteration. The speculative choice pays off far from the solution, where α*
overshoots and a shorter candidate is picked, and on hardware where the K evaluations really
run in parallel (the patent's point: no step-size computation on the critical path).
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionError
from ..kinematics import forward_kinematics
from ..rotations import matrix_to_rotvec
from ._baseline import bound_step, check_choice, check_count, parse_options, start
from .common import check_positive, make_result
from .problem import IKProblem
from .result import IKResult
from .transpose import transpose_direction

NAME = "jt_speculative"

DEFAULTS = {
    "max_iterations": 5000,
    "stall_window": 50,
    "candidates": 8,  # K
    "ladder": "geometric",  # "geometric" | "linear"
    "max_step": 0.5,  # rad or m per DoF, for the largest candidate
}


def ladder_factors(kind: str, count: int) -> np.ndarray:
    """Multiples of α* tried by each candidate, ``(K,)`` increasing."""
    if kind == "linear":
        return np.arange(1, count + 1) / count
    if count == 1:
        return np.ones(1)
    return np.geomspace(1.0 / 32.0, 4.0, count)


def batched_error_sq(problem: IKProblem, site_positions: np.ndarray,
                     site_rotations: np.ndarray) -> np.ndarray:
    """Squared weighted task error ``‖e‖²`` of K poses, ``(K,)``.

    Args:
        problem: the targets.
        site_positions: ``(K, S, 3)`` world positions of **all** sites (from FK).
        site_rotations: ``(K, S, 3, 3)``.
    """
    sel = problem.sites
    w = problem.weights
    dp = (problem.positions - site_positions[:, sel]) * w[:, None]
    out = np.einsum("kij,kij->k", dp, dp)
    rot = problem.rows == 6
    if rot.any():
        r_ref = problem.rotations[rot]
        r_cur = site_rotations[:, sel[rot]]
        # Same convention as the workspace: rotation vector of R_ref @ Rᵀ (world frame).
        rv = matrix_to_rotvec(r_ref @ np.swapaxes(r_cur, -1, -2)) * w[rot][:, None]
        out += np.einsum("kij,kij->k", rv, rv)
    return out


def solve(problem: IKProblem, q0: np.ndarray, **options) -> IKResult:
    """Speculative Jacobian-transpose IK (seed B).

    Args:
        problem: the targets.
        q0: start pose ``(n_dof,)`` (clipped into the limits).
        **options: ``tol_position`` (m), ``tol_rotation`` (rad), ``max_iterations`` (5000),
            ``candidates`` (K, 8), ``ladder`` (``"geometric"`` or ``"linear"``), ``max_step``
            (rad or m per DoF for any candidate, 0.5), ``stall_window`` (50), ``stall_rel``,
            ``state`` (ignored), ``callback``.

    Raises:
        UnknownNameError: unknown option. OptionError: bad option value. ShapeError,
            ValueRangeError: bad ``q0``.
    """
    if problem.tasks:  # its candidate / compensation logic works on site rows only
        raise OptionError(f"solver 'jt_speculative' handles site targets only, not the tasks "
                         f"{[t.name for t in problem.tasks]}; use 'fik', 'dls' or 'pinv'")
    o = parse_options(NAME, options, DEFAULTS)
    count = check_count("candidates", o["candidates"], minimum=1)
    kind = check_choice("ladder", o["ladder"], ("geometric", "linear"))
    max_step = check_positive("max_step", o["max_step"])
    factors = ladder_factors(kind, count)
    q, ws, loop, lo, hi = start(problem, q0, o)
    scale = 1.0
    it = 0
    while (reason := loop.check(it, ws, q)) is None:
        it += 1
        err_sq = float(ws.e @ ws.e)
        v, alpha = transpose_direction(ws.jac, ws.e, q, lo, hi)
        # Bound the largest candidate; the others keep their ratio to it.
        top = bound_step(alpha * scale * factors[-1] * v, max_step)
        cand = np.clip(q + (factors / factors[-1])[:, None] * top[None, :], lo, hi)
        fk = forward_kinematics(problem.skeleton, cand)  # the one batched FK call over K candidates
        errs = batched_error_sq(problem, fk.site_positions, fk.site_rotations)
        best = int(np.argmin(errs))
        if errs[best] < err_sq:
            q = np.ascontiguousarray(cand[best])
            ws.evaluate(q)
            scale = 1.0
        else:  # no candidate improves: keep θ, try a ladder of shorter steps next time
            scale *= float(factors[0] / factors[-1]) if count > 1 else 0.5
    return make_result(problem, ws, q, it, reason, NAME, evaluate=False)
