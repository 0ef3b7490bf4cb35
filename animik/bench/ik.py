"""``animik bench ik``: IK solvers on random reachable problems and a tracking task.

Problems (:mod:`animik.ik.problems`), the same for every solver and peer:

* ``random_reachable``: position targets for **all** effector sites at the FK of a random pose
  within the limits; start = that pose perturbed by ±0.3 rad (±3 cm for translations). Seeded
  (``--seed``, and the rig name), so every run and every solver sees the same problems.
  *Success* = every effector within 1 mm of its target **and** q within the joint limits, both
  checked afterwards with animik's FK, independently of what the solver reports.
* tracking: the hand (``r_hand``, else the first hand-like site) dragged around a 20 cm circle at
  1 m/s, 60 fps (76 frames, one turn), every other site pinned where it is in the rest pose.
  Warm-started: each frame starts from the previous frame's pose and solver state
  (``result.state``). The first frame jumps one radius (the circle is centred on the hand).
  animik's solvers run on the per-frame path (``animik.ik.prepare_ik`` once, then
  ``ik.solve(q, targets={site: p}, state=...)`` per frame: the timed call parses the frame's
  target; it does not re-validate the options or rebuild the problem).

Timing: ``time.perf_counter`` around each solve call — everything a solve does (validation,
building the problem, iterations) and nothing done once (loading, exporting, compiling: one
untimed warm-up solve per solver and rig). Peers (``--peers``) run in the same process on the
same problems, loading animik's own URDF / MJCF export:

* **pinocchio DLS**: the damped-least-squares loop of pinocchio's inverse-kinematics example,
  stacked over the sites: ``computeJointJacobians`` + ``updateFramePlacements``, position error
  per site frame, ``getFrameJacobian(..., LOCAL_WORLD_ALIGNED)[:3]`` stacked,
  ``dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e`` (λ = 1e-2 m, ``np.linalg.solve``), ``pin.integrate`` with unit
  step, clipped to the position limits, until every site is within 1 mm (at most 1000
  iterations). The example's 0.1 step factor is left out: it only multiplies the iteration count.
* **mink**: one ``FrameTask`` per MJCF site (position cost 1, orientation cost 0),
  ``ConfigurationLimit``, ``mink.solve_ik(..., solver="daqp", damping=1e-3)`` and
  ``integrate_inplace`` until every site is within 1 mm (at most 200 iterations).

``ratio`` columns are animik's median time divided by the peer's on the same rig (< 1: animik is
faster). Benchmarks print tables; they never fail on speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import version

import numpy as np
from tqdm import tqdm

from .. import _cli_args as _args
from .._table import format_table
from ..errors import AnimikError
from ..ik import SOLVERS, build_problem, get_solver, prepare_problem, solve_ik
from ..ik.problems import circle_tracking, random_reachable
from ..io.mjcf import write_mjcf
from ..io.urdf import write_urdf
from ..kinematics import site_positions
from ..rigs import load_rig

TOL = 1e-3  # m, success threshold
_LIMIT_TOL = 1e-9

BASELINES = ("dls", "pinv", "jt", "jt_speculative", "approx_inverse")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench ik``."""
    p = subparsers.add_parser(
        "ik", help="IK solvers: success rate, iterations, time; tracking; peers",
        description="IK solvers on seeded random reachable problems (all effectors, 1 mm) and a "
                    "hand-dragging tracking task; with --peers, pinocchio (DLS loop) and mink "
                    "(QP IK with daqp) on animik's URDF / MJCF export, same problems, same "
                    "process. Times are per solve (median, p90) in ms.")
    p.add_argument("--rigs", default="fig2,body95", help="comma-separated rigs (default "
                   "fig2,body95; all four: fig2,body95,wheeled20,biped12)")
    p.add_argument("--solvers", default=None, type=_args.name_list(SOLVERS, "solvers"),
                   help="comma-separated solvers (default: every registered solver)")
    p.add_argument("--problems", type=_args.count, default=50, metavar="N",
                   help="random problems per rig (default 50)")
    p.add_argument("--peers", action="store_true",
                   help="also run pinocchio and mink (pip install 'animik[bench]' mink daqp)")
    p.add_argument("--seed", type=_args.seed, default=0, help="problem seed (default 0)")
    p.add_argument("--no-tracking", action="store_true", help="skip the tracking task")
    p.set_defaults(func=run_cli)
    return p


# ---------------------------------------------------------------------------------- results
@dataclass
class Stats:
    """Per (rig, solver) outcomes of the random problems or the tracking frames."""

    rig: str
    solver: str
    success: list[bool] = field(default_factory=list)
    iterations: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    errors: list[float] = field(default_factory=list)  # m, max site error per solve
    note: str = ""

    def median_ms(self) -> float:
        return float(np.median(self.seconds) * 1e3) if self.seconds else float("nan")


def _check(skel, q: np.ndarray, targets: dict[str, np.ndarray]) -> tuple[bool, float]:
    """Independent success check: (every site within TOL and q within limits, max error m)."""
    pos = site_positions(skel, q)
    err = max((float(np.linalg.norm(pos[skel.site_index(s)] - p)) for s, p in targets.items()),
              default=0.0)
    return bool(err <= TOL + 1e-12 and skel.within_limits(q, _LIMIT_TOL)), err


def _rig_rng(seed: int, rig: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(rig.encode())])


def _progress(iterable, desc: str, total: int | None = None):
    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, leave=False, disable=None)


# ---------------------------------------------------------------------------------- ours
def _run_ours(skel, name: str, rig: str, problems, case, tracking: bool):
    stats = Stats(rig, name)
    track = Stats(rig, name)
    targets0, q_start0, _ = problems[0]
    solve_ik(skel, q_start0, targets0, solver=name)  # warm-up: imports, JIT
    for targets, q_start, _ in _progress(problems, f"{rig} {name}"):
        t0 = time.perf_counter()
        r = solve_ik(skel, q_start, targets, solver=name)
        dt = time.perf_counter() - t0
        ok, err = _check(skel, r.q, targets)
        stats.success.append(ok)
        stats.iterations.append(r.iterations)
        stats.seconds.append(dt)
        stats.errors.append(err)
    if tracking and case is not None:
        q = case.q0
        # the per-frame API (validated once, per frame only the targets and the state)
        ik = prepare_problem(build_problem(skel, q, {case.site: case.positions[0]},
                                           pinned=case.pinned), name)
        pinned_pos = _pinned_positions(skel, case)
        ik.solve(q)  # warm-up
        state = None
        for tgt in _progress(case.frames(), f"{rig} {name} tracking", case.n_frames):
            t0 = time.perf_counter()
            r = ik.solve(q, targets=tgt, state=state)
            dt = time.perf_counter() - t0
            q, state = r.q, r.state
            ok, err = _check(skel, q, {**tgt, **pinned_pos})
            track.success.append(ok)
            track.iterations.append(r.iterations)
            track.seconds.append(dt)
            track.errors.append(err)
    return stats, track


def _pinned_positions(skel, case) -> dict[str, np.ndarray]:
    pos = site_positions(skel, case.q0)
    return {s: pos[skel.site_index(s)] for s in case.pinned}


# ---------------------------------------------------------------------------------- peers
class PinocchioDLS:
    """pinocchio's damped-least-squares IK loop on animik's URDF export (position targets)."""

    name = "pinocchio DLS"
    damping = 1e-2  # λ, m
    max_iterations = 1000

    def __init__(self, skel, tmp: str):
        import pinocchio as pin

        self.pin = pin
        self.skel = skel
        path = os.path.join(tmp, f"{skel.name}.urdf")
        write_urdf(skel, path)
        self.model = pin.buildModelFromUrdf(path)
        self.data = self.model.createData()
        joints = [self.model.joints[self.model.getJointId(d)] for d in skel.dof_names]
        if any(j.nq != 1 or j.nv != 1 for j in joints):
            raise RuntimeError("expected one scalar pinocchio coordinate per DoF")
        self.iq = np.array([j.idx_q for j in joints])
        self.lower = np.array(self.model.lowerPositionLimit)
        self.upper = np.array(self.model.upperPositionLimit)
        self.frames = {s: self.model.getFrameId(s) for s in skel.site_names}
        self.note = f"pinocchio {pin.__version__}"

    def to_ours(self, qp: np.ndarray) -> np.ndarray:
        return np.asarray(qp)[self.iq]

    def solve(self, q_start: np.ndarray, targets: dict[str, np.ndarray]):
        pin, model, data = self.pin, self.model, self.data
        frame = pin.LOCAL_WORLD_ALIGNED
        fids = [self.frames[s] for s in targets]
        ref = np.concatenate([np.asarray(p, float) for p in targets.values()])
        k = len(fids)
        q = np.zeros(model.nq)
        q[self.iq] = q_start
        lam2 = self.damping ** 2
        it = 0
        while True:
            pin.computeJointJacobians(model, data, q)  # includes forwardKinematics
            pin.updateFramePlacements(model, data)
            err = ref - np.concatenate([data.oMf[f].translation for f in fids])
            if np.max(np.linalg.norm(err.reshape(k, 3), axis=1)) <= TOL or \
                    it >= self.max_iterations:
                break
            jac = np.vstack([pin.getFrameJacobian(model, data, f, frame)[:3] for f in fids])
            dq = jac.T @ np.linalg.solve(jac @ jac.T + lam2 * np.eye(3 * k), err)
            q = np.clip(pin.integrate(model, q, dq), self.lower, self.upper)
            it += 1
        return self.to_ours(q), it


class MinkIK:
    """mink differential IK (QP with daqp) on animik's MJCF export (position targets)."""

    name = "mink (daqp)"
    damping = 1e-3
    dt = 0.01  # s; the QP step is v*dt, so dt cancels out except in the limit constraint
    max_iterations = 200

    def __init__(self, skel, tmp: str):
        import daqp  # noqa: F401 - the QP solver mink is asked to use; fail early when absent
        import mink
        import mujoco

        self.mink = mink
        self.skel = skel
        path = os.path.join(tmp, f"{skel.name}.xml")
        write_mjcf(skel, path)
        self.model = mujoco.MjModel.from_xml_path(path)
        self.adr = np.array([self.model.joint(d).qposadr[0] for d in skel.dof_names])
        self.configuration = mink.Configuration(self.model)
        self.tasks = {s: mink.FrameTask(s, "site", position_cost=1.0, orientation_cost=0.0)
                      for s in skel.site_names}
        self.site_ids = {s: self.model.site(s).id for s in skel.site_names}
        self.limits = [mink.ConfigurationLimit(self.model)]
        self.note = f"mink {_version('mink')}, daqp {_version('daqp')}"

    def solve(self, q_start: np.ndarray, targets: dict[str, np.ndarray]):
        mink, conf = self.mink, self.configuration
        q = np.array(self.model.qpos0)
        q[self.adr] = q_start
        conf.update(q)
        tasks = []
        for s, p in targets.items():
            task = self.tasks[s]
            task.set_target(mink.SE3.from_translation(np.asarray(p, float)))
            tasks.append(task)
        sids = [self.site_ids[s] for s in targets]
        ref = np.array([np.asarray(p, float) for p in targets.values()])
        it = 0
        while True:
            err = np.linalg.norm(ref - conf.data.site_xpos[sids], axis=1)
            if np.max(err) <= TOL or it >= self.max_iterations:
                break
            vel = mink.solve_ik(conf, tasks, self.dt, solver="daqp", damping=self.damping,
                                limits=self.limits)
            conf.integrate_inplace(vel, self.dt)
            it += 1
        return np.array(conf.q[self.adr]), it


def _version(mod: str) -> str:
    try:
        return version(mod)
    except Exception:  # noqa: BLE001 - only for a label
        return "?"


def _run_peer(peer, skel, rig: str, problems, case, tracking: bool):
    stats = Stats(rig, peer.name, note=peer.note)
    track = Stats(rig, peer.name, note=peer.note)
    peer.solve(problems[0][1], problems[0][0])  # warm-up
    for targets, q_start, _ in _progress(problems, f"{rig} {peer.name}"):
        t0 = time.perf_counter()
        q, it = peer.solve(q_start, targets)
        dt = time.perf_counter() - t0
        ok, err = _check(skel, q, targets)
        stats.success.append(ok)
        stats.iterations.append(it)
        stats.seconds.append(dt)
        stats.errors.append(err)
    if tracking and case is not None:
        pinned_pos = _pinned_positions(skel, case)
        q = np.array(case.q0)
        for tgt in _progress(case.frames(), f"{rig} {peer.name} tracking", case.n_frames):
            all_t = {**tgt, **pinned_pos}
            t0 = time.perf_counter()
            q, it = peer.solve(q, all_t)
            dt = time.perf_counter() - t0
            ok, err = _check(skel, q, all_t)
            track.success.append(ok)
            track.iterations.append(it)
            track.seconds.append(dt)
            track.errors.append(err)
    return stats, track


# ---------------------------------------------------------------------------------- driver
def run(rigs: Sequence[str] = ("fig2", "body95"), solvers: Sequence[str] | None = None,
        problems: int = 50, peers: bool = False, seed: int = 0,
        tracking: bool = True) -> tuple[list[Stats], list[Stats], list[str]]:
    """Run the benchmark.

    Returns:
        ``(random-problem stats, tracking stats, notes)``; one :class:`Stats` per rig and solver
        (peers included).
    """
    if problems < 1:
        raise AnimikError(f"--problems must be at least 1, got {problems}")
    notes: list[str] = []
    if solvers is None:
        solvers = list(SOLVERS)
    names = []
    for s in solvers:
        if s not in SOLVERS:
            get_solver(s)  # unknown name -> UnknownNameError (lists the solvers)
        try:
            get_solver(s)
        except Exception as e:  # noqa: BLE001 - a registered solver that fails to import
            if s in BASELINES:
                raise
            notes.append(f"solver {s!r} skipped: {type(e).__name__}: {e}")
            continue
        names.append(s)
    random_stats: list[Stats] = []
    track_stats: list[Stats] = []
    for rig in rigs:
        skel = load_rig(rig)
        rng = _rig_rng(seed, rig)
        probs = [random_reachable(skel, rng) for _ in range(problems)]
        case = circle_tracking(skel) if tracking and skel.n_sites else None
        for s in names:
            try:
                a, b = _run_ours(skel, s, rig, probs, case, tracking)
            except Exception as e:  # noqa: BLE001 - one broken solver must not sink the table
                msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
                notes.append(f"solver {s!r} failed on {rig}: {type(e).__name__}: {msg[:200]}")
                continue
            random_stats.append(a)
            track_stats.append(b)
        if peers:
            with tempfile.TemporaryDirectory() as tmp:
                for cls, pkg in ((PinocchioDLS, "pin"), (MinkIK, "mink daqp")):
                    try:
                        peer = cls(skel, tmp)
                    except ImportError as e:
                        notes.append(f"{cls.name} skipped ({e}); pip install {pkg}")
                        continue
                    a, b = _run_peer(peer, skel, rig, probs, case, tracking)
                    random_stats.append(a)
                    track_stats.append(b)
    return random_stats, track_stats, notes


def _pct(a: Sequence[float], p: float) -> float:
    return float(np.percentile(a, p)) if len(a) else float("nan")


def format_tables(random_stats: list[Stats], track_stats: list[Stats], problems: int,
                  seed: int) -> str:
    """The two result tables as text."""
    peer_names = (PinocchioDLS.name, MinkIK.name)
    peer_ms = {(s.rig, s.solver): s.median_ms() for s in random_stats if s.solver in peer_names}
    peer_track = {(s.rig, s.solver): s.median_ms() for s in track_stats if s.solver in peer_names}
    have = [p for p in peer_names if any(k[1] == p for k in peer_ms)]
    rows = []
    for s in random_stats:
        ms = np.array(s.seconds) * 1e3
        row = [s.rig, s.solver, 100.0 * float(np.mean(s.success)),
               float(np.median(s.iterations)), _pct(s.iterations, 90), float(np.median(ms)),
               _pct(ms, 90)]
        for p in have:
            ref = peer_ms.get((s.rig, p))
            row.append("" if s.solver in peer_names or ref is None else f"{row[5] / ref:.2f}x")
        rows.append(row)
    head = ["rig", "solver", "success %", "iters med", "iters p90", "ms med", "ms p90"]
    head += [f"/ {p.split()[0]}" for p in have]
    out = [format_table(head, rows, title=(
        f"animik bench ik: {problems} random reachable problems per rig (all effectors, "
        f"success = every site within {TOL * 1e3:g} mm and q within limits), seed {seed}; "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"))]
    if track_stats and any(s.seconds for s in track_stats):
        rows = []
        for s in track_stats:
            if not s.seconds:
                continue
            ms = np.array(s.seconds) * 1e3
            row = [s.rig, s.solver, len(ms), 100.0 * float(np.mean(s.success)),
                   1e3 * max(s.errors), float(np.median(s.iterations)), float(np.median(ms)),
                   _pct(ms, 95)]
            for p in have:
                ref = peer_track.get((s.rig, p))
                row.append("" if s.solver in peer_names or ref is None
                           else f"{row[6] / ref:.2f}x")
            rows.append(row)
        head = ["rig", "solver", "frames", "frames ok %", "max err mm", "iters med", "ms med",
                "ms p95"] + [f"/ {p.split()[0]}" for p in have]
        out.append(format_table(head, rows, title=(
            "tracking: hand on a 20 cm circle at 1 m/s, 60 fps, other sites pinned, warm-started "
            "(per frame)")))
    return "\n\n".join(out)


def run_cli(args: argparse.Namespace) -> int:
    """``animik bench ik``."""
    rigs = [r.strip() for r in args.rigs.split(",") if r.strip()]
    solvers = args.solvers
    a, b, notes = run(rigs, solvers, args.problems, args.peers, args.seed,
                      tracking=not args.no_tracking)
    print(format_tables(a, b, args.problems, args.seed))
    for n in notes:
        print(f"note: {n}")
    return 0
