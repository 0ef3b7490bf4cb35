"""What the benchmarks share: a timing loop, random poses within limits, and the peers
(pinocchio, MuJoCo) loaded from the URDF / MJCF we export. The peers are optional: importing
this module loads neither; :func:`pinocchio_model` and :func:`mujoco_model` raise ImportError
when one is missing (the benchmark's row then says so)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

from ..io.mjcf import write_mjcf
from ..io.urdf import write_urdf
from ..skeleton import Skeleton


def time_per_call(fn: Callable[[], object], min_time: float = 0.3, repeats: int = 5) -> float:
    """Median over ``repeats`` of the mean seconds per call, each run lasting ~min_time/repeats."""
    fn()
    n = 1
    while True:  # calibrate
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / repeats / 4 or n > 1 << 22:
            break
        n *= 4
    n = max(1, int(n * (min_time / repeats) / max(dt, 1e-9)))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return float(np.median(samples))


def random_poses(skel: Skeleton, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` poses uniform within the joint limits (±π or ±1 m where a DoF has none)."""
    lo = np.where(np.isfinite(skel.lower), skel.lower, -np.where(skel.dof_type == 1, 1.0, np.pi))
    hi = np.where(np.isfinite(skel.upper), skel.upper, np.where(skel.dof_type == 1, 1.0, np.pi))
    return rng.uniform(lo, hi, size=(count, skel.n_dof))


def pinocchio_model(skel: Skeleton, folder: str):
    """``(pinocchio, model, data)`` of ``skel`` built from our URDF export (written in ``folder``).

    Raises:
        ImportError: pinocchio is not installed.
    """
    import pinocchio as pin  # optional peer

    path = os.path.join(folder, "rig.urdf")
    write_urdf(skel, path)
    model = pin.buildModelFromUrdf(path)
    return pin, model, model.createData()


def mujoco_model(skel: Skeleton, folder: str):
    """``(mujoco, model, data)`` of ``skel`` built from our MJCF export (written in ``folder``).

    Raises:
        ImportError: MuJoCo is not installed.
    """
    import mujoco  # optional peer

    path = os.path.join(folder, "rig.xml")
    write_mjcf(skel, path)
    model = mujoco.MjModel.from_xml_path(path)
    return mujoco, model, mujoco.MjData(model)


def to_pinocchio_q(skel: Skeleton, model, q: np.ndarray) -> np.ndarray:
    """Our q in pinocchio's layout (continuous joints take cos, sin)."""
    out = np.zeros(model.nq)
    for k, nm in enumerate(skel.dof_names):
        jid = model.getJointId(nm)
        j = model.joints[jid]
        if j.nq == 2:
            out[j.idx_q], out[j.idx_q + 1] = np.cos(q[k]), np.sin(q[k])
        else:
            out[j.idx_q] = q[k]
    return out
