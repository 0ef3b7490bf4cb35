"""``animik warmup``: compile animik's numba kernels now, with progress, instead of at the
first IK solve (~20 s to a minute after installing; +7 s for orientation targets).

numba caches compiled kernels on disk (``cache=True``, in ``__pycache__``): after one warm-up
every later process only loads them (~1 s). ``scripts/setup.sh`` runs this once after
installing, and the app runs :func:`warm_up` with progress before its window opens, so the
first drag never freezes the window. Kernel types do not depend on the rig: solving on the
small ``fig2`` compiles what ``body95`` uses.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

#: (label, step) pairs: each step touches one group of kernels.
Progress = Callable[[int, int, str], None]


def _steps():
    from ..ik import solve_ik
    from ..kinematics import site_jacobian, site_positions
    from ..rigs import load_rig

    skel = load_rig("fig2")
    q = skel.rest_q
    p = site_positions(skel, q)
    hand = skel.site_names.index("l_hand")
    goal = p[hand] + np.array([0.02, 0.0, 0.02])

    def kinematics():
        site_jacobian(skel, q, "l_hand")

    def ik_position(solver):
        return lambda: solve_ik(skel, q, {"l_hand": goal}, solver=solver, pinned=["l_foot"],
                                max_iterations=3)

    def ik_orientation():
        solve_ik(skel, q, {"l_hand": (goal, np.eye(3))}, pinned=["l_foot"], max_iterations=3)

    def dynamics():
        from ..dynamics import inverse_dynamics

        z = np.zeros_like(q)
        inverse_dynamics(skel, q, z, z)

    def retarget_fit():
        from ..retarget._fit_kernels import gn_refine, local_rotations

        eye = np.broadcast_to(np.eye(3), (2, 3, 3)).copy()
        gn_refine(eye[:1], np.zeros((1, 3)), eye[:1].copy(), np.zeros((1, 3)),
                  np.zeros((1, 3), dtype=np.bool_), np.ones(1), 1e-3, 1)
        local_rotations(eye[None], np.array([-1, 0], dtype=np.int64), eye)

    return [("kinematics", kinematics), ("FIK, position targets", ik_position("fik")),
            ("FIK, orientation targets", ik_orientation),
            ("FIK fixed step", ik_position("fik_fixed")),
            ("damped least squares", ik_position("dls")), ("dynamics", dynamics),
            ("retarget fit", retarget_fit)]


def warm_up(progress: Progress | None = None) -> float:
    """Compile (or load from numba's cache) every kernel group; returns the seconds taken.

    Args:
        progress: called as ``progress(i, n, label)`` before step ``i`` of ``n`` and once with
            ``i == n`` at the end.
    """
    t0 = time.perf_counter()
    steps = _steps()
    for i, (label, step) in enumerate(steps):
        if progress is not None:
            progress(i, len(steps), label)
        step()
    if progress is not None:
        progress(len(steps), len(steps), "done")
    return time.perf_counter() - t0


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik warmup``."""
    p = subparsers.add_parser(
        "warmup", help="compile the numba kernels now (first run after installing)",
        description="Compile animik's numba kernels (or load them from numba's on-disk cache) "
                    "so that the first IK solve in the app or a command does not wait for the "
                    "compiler. scripts/setup.sh runs it once after installing.")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    bar = None if args.quiet else tqdm(total=1, desc="animik: compiling kernels", unit="step")

    def progress(i: int, n: int, label: str) -> None:
        if bar is not None:
            bar.total = n
            bar.n = i
            bar.set_postfix_str(label)
            bar.refresh()

    seconds = warm_up(progress)
    if bar is not None:
        bar.close()
        print(f"animik warmup: kernels ready ({seconds:.1f} s)")
    return 0
