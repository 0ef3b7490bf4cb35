"""The constant-gain tuning procedure of feedback IK (seed A steps 1–5) and the H∞ design of a
skeleton, measured on a dummy target trajectory; the result is a
:class:`~animik.ik.tuning.FIKTuning` (stored by :func:`animik.ik.tuning.save_tuning`).

**Constant-gain procedure** (seed A steps 1–5, automated by :func:`tune`, run once per
skeleton by ``animik tune RIG``). On a seeded "dummy target trajectory" — random reachable
targets for every site plus, when the rig has a hand, a hand dragged around a circle with
the other sites pinned — it does what the source asks a person to do:

1. start from the filter constant ``A`` (−1 for the full gain, −20 for the scalar one);
2. start from the step ``h`` (``1/|A|`` for the full gain, 0.02 for the scalar one);
3. start from a conservative gain level (the full gain's damping ``μ`` at 1e-2 of the mean
   diagonal of ``J V Jᵀ``; the scalar gain at the source's bound ``(π/h − A)/trace(J V Jᵀ)``,
   dimensionally corrected: the source divides by ``sqrt(trace)``);
4. raise the gain (``μ`` ÷ 10, or the scalar gain × 2) while the mean iteration count falls;
   when the response becomes unstable (a problem that converged no longer does) halve ``h``;
5. adjust ``A`` (several values around the start) and keep the best;

then it records the measured success rate and iteration counts. The objective is the mean
iteration count subject to the success rate not dropping below the start's — deterministic
(no timing), so a tuning is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import OptionError
from ..kinematics import stacked_jacobian
from ..skeleton import Skeleton
from .fik import solve
from .problem import build_problem
from .problems import circle_tracking, random_reachable, sample_q
from .tuning import FIKTuning, fingerprint, hinf_bisection, riccati_residual


@dataclass
class DummyTrajectory:
    """The seeded problems a tuning is measured on."""

    problems: list  # [(IKProblem, q_start)]
    tracking: list  # [IKProblem per frame] (warm-started), may be empty
    tracking_q0: np.ndarray | None


def dummy_trajectory(skel: Skeleton, n_problems: int = 40, seed: int = 0,
                     tracking_frames: int = 60) -> DummyTrajectory:
    """Random reachable targets for every site (start ±0.3 rad from a solution) plus, if the
    rig has a hand-like site and other sites, a hand dragged along a 0.2 m circle at 1 m/s,
    60 fps, the other sites pinned."""
    rng = np.random.default_rng(seed)
    probs = []
    for _ in range(int(n_problems)):
        rp = random_reachable(skel, rng)
        probs.append((build_problem(skel, rp.q_start, rp.targets), rp.q_start))
    tracking, tq0 = [], None
    if skel.n_sites >= 2 and tracking_frames > 0:
        case = circle_tracking(skel, frames=int(tracking_frames))
        base = build_problem(skel, case.q0, {case.site: case.positions[0]}, pinned=case.pinned)
        tracking = [base.with_targets(t) for t in case.frames()]
        tq0 = np.array(case.q0)
    return DummyTrajectory(probs, tracking, tq0)


def measure(traj: DummyTrajectory, options: Mapping[str, Any], tol: float = 1e-3) -> dict:
    """Success rate and iteration counts of FIK with ``options`` on a dummy trajectory.

    Success: converged, every effector within ``tol`` (m) and the pose within limits.
    """
    opts = dict(options)
    opts["tuning"] = False
    ok, its, rejected = 0, [], 0
    for prob, q0 in traj.problems:
        r = solve(prob, q0, **opts)
        skel = prob.skeleton
        good = r.converged and r.max_error <= tol and bool(skel.within_limits(r.q))
        ok += good
        its.append(r.iterations)
        rejected += r.state.rejected
    track_ok, track_its = 0, []
    if traj.tracking:
        q, state = traj.tracking_q0, None
        for prob in traj.tracking:
            r = solve(prob, q, state=state, **opts)
            q, state = np.array(r.q), r.state
            track_ok += r.converged and r.max_error <= tol
            track_its.append(r.iterations)
    n = max(len(traj.problems), 1)
    return {
        "success": ok / n,
        "mean_iterations": float(np.mean(its)) if its else 0.0,
        "max_iterations": int(max(its)) if its else 0,
        "tracking_success": (track_ok / len(traj.tracking)) if traj.tracking else 1.0,
        "tracking_mean_iterations": float(np.mean(track_its)) if track_its else 0.0,
        # steps undone because they raised the error: the source's "dq grows" instability
        "rejected_fraction": rejected / max(sum(its), 1),
    }


def _score(r: dict) -> tuple:
    # feasibility first (success, tracking), then fewer iterations
    return (-round(r["success"], 4), -round(r["tracking_success"], 4),
            r["mean_iterations"] + r["tracking_mean_iterations"])


def tune(skel: Skeleton, mode: str = "full", n_problems: int = 40, seed: int = 0,
         tracking_frames: int = 60, hinf: bool = True, verbose: bool = False,
         log=print) -> FIKTuning:
    """Seed A's constant-gain tuning (steps 1–5) automated on a dummy target trajectory.

    Args:
        skel: the skeleton.
        mode: ``"full"`` (default, the design of docs/fik.md: tune damping μ, A, h) or
            ``"scalar"`` (the source's scalar gain: tune gain_scale, A, h).
        n_problems: random reachable problems in the dummy trajectory.
        seed: its seed. tracking_frames: frames of the circle-tracking part (0: none).
        hinf: also compute the H∞ design of eq 13 (stored in the ``hinf`` table).
        verbose: log every trial through ``log``.

    Returns:
        The :class:`FIKTuning` (write it with :func:`write_tuning` / :func:`save_tuning`).
    """
    if mode not in ("full", "scalar"):
        raise OptionError(f"mode must be 'full' or 'scalar', got {mode!r}")
    traj = dummy_trajectory(skel, n_problems, seed, tracking_frames)
    trials: list[tuple[dict, dict]] = []

    def run(opts: dict) -> dict:
        r = measure(traj, opts)
        trials.append((dict(opts), r))
        if verbose:
            log(f"  {opts}: success {r['success']:.3f}, tracking {r['tracking_success']:.3f}, "
                f"mean iterations {r['mean_iterations']:.2f} + tracking "
                f"{r['tracking_mean_iterations']:.2f}, rejected {r['rejected_fraction']:.3f}")
        return r

    if mode == "full":
        # steps 1-3: A = -1, h = 1/|A|, conservative damping
        best = {"gain": "full", "A": -1.0, "h": 1.0, "damping": 1e-2}
        best_r = run(best)
        base_success = best_r["success"]
        # step 4: raise the gain (smaller μ) while iterations fall; on instability halve h
        mu = best["damping"]
        while mu > 1e-9:
            cand = dict(best, damping=mu / 10.0)
            r = run(cand)
            if r["success"] < base_success or r["tracking_success"] < best_r["tracking_success"]:
                cand_h = dict(cand, h=cand["h"] / 2.0)
                r_h = run(cand_h)
                if _score(r_h) < _score(best_r):
                    best, best_r = cand_h, r_h
                break
            if _score(r) < _score(best_r):
                best, best_r = cand, r
                mu /= 10.0
            else:
                break
        # step 5: adjust A around the start (with h = min(h, 1/|A|)·... kept stable)
        for a in (-0.5, -0.75, -1.5):
            cand = dict(best, A=a, h=min(best["h"], 2.0 / abs(a) * 0.5 if a < -1 else best["h"]))
            r = run(cand)
            if _score(r) < _score(best_r):
                best, best_r = cand, r
    else:
        # the source's constant choice: A = -20, h = 0.02, P <= (pi/h - A) / trace
        A, h = -20.0, 0.02
        scale = math.pi / h - A
        best = {"gain": "scalar", "A": A, "h": h, "gain_scale": scale, "max_iterations": 5000,
                "refresh": "always"}
        best_r = run(best)

        def unstable(r: dict) -> bool:
            return r["rejected_fraction"] > 0.05

        for _ in range(8):  # step 4, first half: unstable -> reduce h
            if not unstable(best_r):
                break
            cand = dict(best, h=best["h"] / 2.0)
            r = run(cand)
            best, best_r = cand, r
        for _ in range(12):  # step 4: increase P while iterations fall; unstable -> reduce h
            cand = dict(best, gain_scale=best["gain_scale"] * 2.0)
            r = run(cand)
            if unstable(r):
                cand = dict(cand, h=cand["h"] / 2.0)
                r = run(cand)
            if _score(r) < _score(best_r) and not unstable(r):
                best, best_r = cand, r
            else:
                break
        for f in (0.5, 2.0):  # step 5: adjust A
            a = best["A"] * f
            if best["h"] * abs(a) > 2.0:
                continue
            cand = dict(best, A=a)
            r = run(cand)
            if _score(r) < _score(best_r) and not unstable(r):
                best, best_r = cand, r

    hinf_table: dict[str, Any] = {}
    if hinf:
        hinf_table = hinf_design(skel)
    measured = {
        "success": round(best_r["success"], 4),
        "mean_iterations": round(best_r["mean_iterations"], 3),
        "max_iterations": best_r["max_iterations"],
        "tracking_success": round(best_r["tracking_success"], 4),
        "tracking_mean_iterations": round(best_r["tracking_mean_iterations"], 3),
        "rejected_fraction": round(best_r["rejected_fraction"], 4),
        "problems": len(traj.problems),
        "tracking_frames": len(traj.tracking),
        "seed": int(seed),
        "trials": len(trials),
    }
    return FIKTuning(rig=skel.name, fingerprint=fingerprint(skel), options=best,
                     measured=measured, hinf=hinf_table)


def hinf_design(skel: Skeleton, sites: Sequence[str] | None = None, m_i: float = 5.0,
                w: float = 4.0, tries: int = 64, seed: int = 0) -> dict[str, Any]:
    """The H∞ design of eq 13 for a skeleton's position targets at a non-singular pose q0.

    q0 is the rest pose if ``J(q0)`` has full row rank, else the best-conditioned of ``tries``
    random poses within the limits (the source needs non-zero singular values). The
    s-bisection runs on the general Riccati solver; the stored ``s`` is 1.05 × the smallest
    feasible value (at exactly the infimum the solution blows up).
    """

    names = list(skel.site_names if sites is None else sites)
    rng = np.random.default_rng(seed)

    def sv_min(q):
        J = stacked_jacobian(skel, q, names, rows="position")
        return float(np.linalg.svd(J, compute_uv=False).min()) if min(J.shape) else 0.0, J

    q0 = np.array(skel.rest_q, dtype=float)
    smin, J = sv_min(q0)
    where = "rest pose"
    if J.shape[0] > J.shape[1] or smin < 1e-3:
        best = (smin, q0, J)
        for _ in range(int(tries)):
            q = sample_q(skel, rng)
            val, Jq = sv_min(q)
            if val > best[0]:
                best = (val, q, Jq)
        smin, q0, J = best
        where = f"best of {tries} random poses"
    s, Pa = hinf_bisection(J, m_i, w)
    m = J.shape[0]
    residual = riccati_residual(-m_i * np.eye(m), J @ J.T - np.eye(m) / s**2, w * w * np.eye(m), Pa)
    return {
        "m": m_i, "w": w, "s_min": float(s), "s": float(1.05 * s),
        "q0": where, "sigma_min": float(smin),
        "pa_min_eig": float(np.linalg.eigvalsh(Pa).min()),
        "pa_max_eig": float(np.linalg.eigvalsh(Pa).max()),
        "rows": int(J.shape[0]),
        "riccati_residual": float(residual),
    }
