"""``animik bench kinematics``: FK + site Jacobians of a rig, against pinocchio and MuJoCo.

Peers load the URDF / MJCF that animik exports, so every library computes the same model in
the same process on the same poses.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable

import numpy as np

from ..kinematics import Kinematics, joint_positions, site_jacobians
from ..rigs import load_rig
from ..skeleton import Skeleton


def _time_per_call(fn: Callable[[], object], min_time: float = 0.3, repeats: int = 5) -> float:
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


def _random_poses(skel: Skeleton, rng: np.random.Generator, count: int) -> np.ndarray:
    lo = np.where(np.isfinite(skel.lower), skel.lower, -np.where(skel.dof_type == 1, 1.0, np.pi))
    hi = np.where(np.isfinite(skel.upper), skel.upper, np.where(skel.dof_type == 1, 1.0, np.pi))
    return rng.uniform(lo, hi, size=(count, skel.n_dof))


def run(rig: str = "body95", batch: int = 10_000, peers: bool = True, seed: int = 0) -> list[tuple]:
    """Run the benchmark; returns rows ``(implementation, task, value, unit, note)``."""
    skel = load_rig(rig)
    rng = np.random.default_rng(seed)
    q = np.ascontiguousarray(_random_poses(skel, rng, 1)[0])
    qb = _random_poses(skel, rng, batch)
    n_sites = skel.n_sites
    rows: list[tuple] = []
    task = f"FK + {n_sites} site Jacobians, 1 pose"

    ws = Kinematics(skel)
    t = _time_per_call(lambda: ws.update(q))
    rows.append(("animik Kinematics.update", task, t * 1e6, "us", "workspace, compiled (numba)"))
    t = _time_per_call(lambda: site_jacobians(skel, q))
    rows.append(("animik site_jacobians()", task, t * 1e6, "us", "public API incl. validation"))
    t = _time_per_call(lambda: joint_positions(skel, qb), min_time=1.0, repeats=3)
    rows.append(("animik joint_positions()", f"batched FK, {batch:,} poses", batch / t, "poses/s",
                 "one thread"))

    if peers:
        rows += _peer_rows(skel, q, qb[: min(batch, 2000)], task)
    return rows


def _peer_rows(skel: Skeleton, q: np.ndarray, qb: np.ndarray, task: str) -> list[tuple]:
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            import pinocchio as pin

            from ..io.urdf import write_urdf

            path = os.path.join(tmp, "rig.urdf")
            write_urdf(skel, path)
            model = pin.buildModelFromUrdf(path)
            data = model.createData()
            qp = _to_pinocchio_q(skel, model, q)
            fids = [model.getFrameId(s) for s in skel.site_names]
            frame = pin.LOCAL_WORLD_ALIGNED

            def pin_step():
                pin.computeJointJacobians(model, data, qp)  # includes forward kinematics
                pin.updateFramePlacements(model, data)
                for f in fids:
                    pin.getFrameJacobian(model, data, f, frame)

            t = _time_per_call(pin_step)
            rows.append((f"pinocchio {pin.__version__}", task, t * 1e6, "us",
                         "computeJointJacobians + frames + getFrameJacobian x sites"))
            qbp = np.array([_to_pinocchio_q(skel, model, x) for x in qb])

            def pin_batch():
                for x in qbp:
                    pin.forwardKinematics(model, data, x)

            t = _time_per_call(pin_batch, min_time=0.6, repeats=3)
            rows.append((f"pinocchio {pin.__version__}", "batched FK (Python loop)",
                         len(qb) / t, "poses/s", "forwardKinematics per pose"))
        except ImportError:
            rows.append(("pinocchio", task, float("nan"), "us", "not installed: pip install pin"))
        try:
            import mujoco

            from ..io.mjcf import write_mjcf

            path = os.path.join(tmp, "rig.xml")
            write_mjcf(skel, path)
            model = mujoco.MjModel.from_xml_path(path)
            data = mujoco.MjData(model)
            adr = np.array([model.joint(nm).qposadr[0] for nm in skel.dof_names], dtype=int)
            data.qpos[adr] = q
            sids = [model.site(s).id for s in skel.site_names]
            jacp = np.zeros((3, model.nv))
            jacr = np.zeros((3, model.nv))

            def mj_step():
                mujoco.mj_kinematics(model, data)
                mujoco.mj_comPos(model, data)
                for s in sids:
                    mujoco.mj_jacSite(model, data, jacp, jacr, s)

            t = _time_per_call(mj_step)
            rows.append((f"MuJoCo {mujoco.__version__}", task, t * 1e6, "us",
                         "mj_kinematics + mj_comPos + mj_jacSite x sites"))
        except ImportError:
            rows.append(("MuJoCo", task, float("nan"), "us", "not installed: pip install mujoco"))
    return rows


def _to_pinocchio_q(skel: Skeleton, model, q: np.ndarray) -> np.ndarray:
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
