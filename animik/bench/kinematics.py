"""``animik bench kinematics``: FK + site Jacobians of a rig, against pinocchio and MuJoCo.

Peers load the URDF / MJCF that animik exports, so every library computes the same model in
the same process on the same poses.
"""

from __future__ import annotations

import tempfile

import numpy as np

from ..kinematics import Kinematics, joint_positions, site_jacobians
from ..rigs import load_rig
from ..skeleton import Skeleton
from .peers import mujoco_model, pinocchio_model, random_poses, time_per_call, to_pinocchio_q


def run(rig: str = "body95", batch: int = 10_000, peers: bool = True, seed: int = 0) -> list[tuple]:
    """Run the benchmark; returns rows ``(implementation, task, value, unit, note)``."""
    skel = load_rig(rig)
    rng = np.random.default_rng(seed)
    q = np.ascontiguousarray(random_poses(skel, rng, 1)[0])
    qb = random_poses(skel, rng, batch)
    n_sites = skel.n_sites
    rows: list[tuple] = []
    task = f"FK + {n_sites} site Jacobians, 1 pose"

    ws = Kinematics(skel)
    t = time_per_call(lambda: ws.update(q))
    rows.append(("animik Kinematics.update", task, t * 1e6, "us", "workspace, compiled (numba)"))
    t = time_per_call(lambda: site_jacobians(skel, q))
    rows.append(("animik site_jacobians()", task, t * 1e6, "us", "public API incl. validation"))
    t = time_per_call(lambda: joint_positions(skel, qb), min_time=1.0, repeats=3)
    rows.append(("animik joint_positions()", f"batched FK, {batch:,} poses", batch / t, "poses/s",
                 "one thread"))

    if peers:
        rows += _peer_rows(skel, q, qb[: min(batch, 2000)], task)
    return rows


def _peer_rows(skel: Skeleton, q: np.ndarray, qb: np.ndarray, task: str) -> list[tuple]:
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            pin, model, data = pinocchio_model(skel, tmp)
            qp = to_pinocchio_q(skel, model, q)
            fids = [model.getFrameId(s) for s in skel.site_names]
            frame = pin.LOCAL_WORLD_ALIGNED

            def pin_step():
                pin.computeJointJacobians(model, data, qp)  # includes forward kinematics
                pin.updateFramePlacements(model, data)
                for f in fids:
                    pin.getFrameJacobian(model, data, f, frame)

            t = time_per_call(pin_step)
            rows.append((f"pinocchio {pin.__version__}", task, t * 1e6, "us",
                         "computeJointJacobians + frames + getFrameJacobian x sites"))
            qbp = np.array([to_pinocchio_q(skel, model, x) for x in qb])

            def pin_batch():
                for x in qbp:
                    pin.forwardKinematics(model, data, x)

            t = time_per_call(pin_batch, min_time=0.6, repeats=3)
            rows.append((f"pinocchio {pin.__version__}", "batched FK (Python loop)",
                         len(qb) / t, "poses/s", "forwardKinematics per pose"))
        except ImportError:
            rows.append(("pinocchio", task, float("nan"), "us", "not installed: pip install pin"))
        try:
            mujoco, model, data = mujoco_model(skel, tmp)
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

            t = time_per_call(mj_step)
            rows.append((f"MuJoCo {mujoco.__version__}", task, t * 1e6, "us",
                         "mj_kinematics + mj_comPos + mj_jacSite x sites"))
        except ImportError:
            rows.append(("MuJoCo", task, float("nan"), "us", "not installed: pip install mujoco"))
    return rows
