"""A clip's poses made dynamically feasible: seed D's interactive filter
(:mod:`animik.dynamics.interactive`) with the corrective IK that holds the feet.

Lives in ``anim`` because it joins the two layers below it (``ik`` and ``dynamics`` do not
import each other)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..dynamics.interactive import BalanceOptions, FeasibleClip, foot_sites, make_clip_feasible
from ..ik import prepare_ik
from ..kinematics import forward_kinematics
from ..skeleton import Skeleton

FOOT_WEIGHT = 10.0
COM_WEIGHT = 10.0


def feasible_clip_poses(skel: Skeleton, q: np.ndarray, fps: float,
                        options: BalanceOptions | None = None,
                        sites: tuple[str, ...] | None = None, max_iterations: int = 50,
                        progress: Callable[[int, int], None] | None = None) -> FeasibleClip:
    """:func:`~animik.dynamics.interactive.make_clip_feasible` with FIK as the corrective
    solve: the feet (``sites``, default :func:`~animik.dynamics.interactive.foot_sites`) held
    at their pose (position and rotation) in each frame, the frame itself as the posture
    reference, and the COM task.

    Args:
        skel: the character. q: ``(T, n_dof)`` poses at ``fps`` (frames/s).
        options: the filter's settings. sites: the feet. max_iterations: IK iterations per
            corrected solve. progress: ``progress(done, total)``.

    Returns:
        :class:`~animik.dynamics.interactive.FeasibleClip`.

    Raises:
        ShapeError, BalanceOptionsError, ContactGeometryError: as ``make_clip_feasible``;
        UnknownNameError: a site the skeleton does not have.
    """
    q = skel.check_q(q)
    feet = foot_sites(skel) if sites is None else tuple(sites)
    idx = [skel.site_index(s) for s in feet]
    solver = None

    def solve_frame(t: int, c: np.ndarray, start: np.ndarray) -> np.ndarray:
        nonlocal solver
        fk = forward_kinematics(skel, q[t])
        tg = {s: (fk.site_positions[i], fk.site_rotations[i]) for s, i in zip(feet, idx, strict=True)}
        if solver is None:
            solver = prepare_ik(skel, q[t], tg, "fik", com=tuple(c),
                                weights={**dict.fromkeys(feet, FOOT_WEIGHT), "com": COM_WEIGHT},
                                reference_gain=0.1, tol_position=1e-5)
        return solver.solve(start, targets={**tg, "com": c}, reference=q[t],
                            max_iterations=max_iterations).q

    return make_clip_feasible(skel, q, fps, solve_frame, options, progress)


__all__ = ["feasible_clip_poses"]
