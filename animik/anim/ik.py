"""IK-driven sampling of clips with effector tracks.

At every sampled time ``t`` (in increasing order) the interpolated effector targets are solved
with :func:`animik.ik.solve_problem` on one :class:`~animik.ik.IKProblem` whose targets are
updated per frame (:meth:`~animik.ik.IKProblem.with_targets`):

* start pose: the pose sampled from the joint tracks at ``t`` (``q_ref``), with the DoFs IK
  may move taken from the previous frame's solution (warm start), and the solver state of the
  previous frame passed back (``state=result.state``: FIK's filters continue instead of
  restarting);
* null-space reference (FIK): ``reference=q_ref`` unless the clip's IK options give one, so the
  keyed pose shapes the redundancy (elbow swivel, spine) while the effectors follow their
  targets;
* DoFs that move no targeted site, and DoFs outside :attr:`IKSettings.dofs`, are the joint
  tracks' values exactly.

Not converging is reported (:class:`ClipIKResult`), not raised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..ik import build_problem, solve_problem
from ..ik.options import per_dof
from .sampling import sample_effector, sample_pose
from .tracks import ClipError, ik_dof_mask

if TYPE_CHECKING:  # Clip.sample calls this module
    from .clip import Clip

_PER_DOF_GAIN_SOLVERS = ("fik", "fik_fixed")


@dataclass(frozen=True, eq=False)
class ClipIKResult:
    """IK solutions of a clip at sampled times.

    Attributes:
        times: ``(T,)`` the times, in the order requested.
        q: ``(T, n_dof)`` poses.
        converged: ``(T,)`` bool.
        error: ``(T, k)`` position error of every effector track's site, m.
        sites: the ``k`` site names.
    """

    times: np.ndarray
    q: np.ndarray
    converged: np.ndarray
    error: np.ndarray
    sites: tuple[str, ...]


def solve_clip_ik(clip: Clip, times: np.ndarray, q_ref: np.ndarray | None = None,
                  progress: Callable[[float], object] | None = None) -> ClipIKResult:
    """Solve IK for a clip's effector tracks at the given times.

    Args:
        clip: the clip (with at least one effector track).
        times: ``(T,)`` times, s.
        q_ref: ``(T, n)`` reference poses (default: sampled from the joint tracks).
        progress: called with the fraction of frames solved (a background task's progress bar;
            an exception it raises, e.g. a cancel, stops the solve).

    Returns:
        :class:`ClipIKResult`.

    Raises:
        ClipError: no effector tracks, or ``ik.dofs`` with a solver without per-DoF gains.
    """
    skel = clip.skeleton
    t = np.asarray(times, dtype=float).reshape(-1)
    if not clip.effectors:
        raise ClipError(f"clip {clip.name!r} has no effector tracks to solve")
    if q_ref is None:
        q_ref = sample_pose(clip, t)
    sites = tuple(ef.site for ef in clip.effectors)
    site_idx = np.array([skel.site_index(s) for s in sites])
    chain = skel.site_dof_mask[site_idx].any(axis=0)
    solver = clip.ik.solver
    movable = chain.copy()
    opts = dict(clip.ik.options)
    opts.pop("state", None)
    if clip.ik.dofs is not None:
        if solver not in _PER_DOF_GAIN_SOLVERS:
            raise ClipError(f"clip {clip.name!r}: IK dofs restricts the DoFs IK may move, which "
                            f"needs a solver with per-DoF gains {list(_PER_DOF_GAIN_SOLVERS)}, got "
                            f"{solver!r}")
        movable &= ik_dof_mask(skel, clip.ik.dofs, f"clip {clip.name!r} IK dofs")
        gains = np.ones(skel.n_dof)
        if opts.get("dof_gains") is not None:
            gains, _ = per_dof(skel, "dof_gains", opts["dof_gains"], 1.0)
        opts["dof_gains"] = np.where(movable, gains, 0.0)
    fixed = ~movable
    targets_all = [sample_effector(ef, t) for ef in clip.effectors]

    def targets_at(i: int) -> dict:
        out = {}
        for ef, (pos, rot) in zip(clip.effectors, targets_all, strict=True):
            out[ef.site] = pos[i] if rot is None else (pos[i], rot[i])
        return out

    order = np.argsort(t, kind="stable")
    q_out = np.empty_like(q_ref)
    conv = np.zeros(t.shape[0], dtype=bool)
    err = np.zeros((t.shape[0], len(sites)))
    weights = {ef.site: ef.weight for ef in clip.effectors}
    problem = None
    prev_q = None
    state = None
    n_done = 0
    for i in order:
        if progress is not None and n_done % 10 == 0:
            progress(n_done / len(order))
        n_done += 1
        q0 = np.array(q_ref[i], dtype=float)
        if prev_q is not None:
            q0[movable] = prev_q[movable]
        if problem is None:
            problem = build_problem(skel, q0, targets_at(i), weights=weights)
        else:
            problem = problem.with_targets(targets_at(i))
        o = dict(opts)
        if solver in _PER_DOF_GAIN_SOLVERS and "reference" not in o:
            o["reference"] = q_ref[i]
        res = solve_problem(problem, q0, solver, state=state, **o)
        q = np.array(res.q, dtype=float)
        q[fixed] = q_ref[i][fixed]
        q_out[i] = q
        conv[i] = res.converged
        err[i] = [res.error.get(s, np.nan) for s in sites]
        prev_q, state = q, res.state
    q_out.setflags(write=False)
    return ClipIKResult(t, q_out, conv, err, sites)


__all__ = ["ClipIKResult", "solve_clip_ik"]
