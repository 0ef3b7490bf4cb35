"""``animik bench posing``: does dragging one effector keep the rest of the body still?

Scripted drags, the same for every method (seeded: ``--seed`` and the rig name): from the rest
pose, each major effector (hands, feet, head: the sites not inside another site's subtree) is
dragged by 10–30 cm in a random direction, its target moving in a straight line over
``--frames`` frames (an interactive drag), with the two lowest other major sites (the feet;
the standing foot when a foot is dragged) pinned. Every frame is one warm-started solve from
the previous frame's pose, as in the app.

Methods (same problems, same process):

* **min-norm (before)** — FIK as it was the default before natural posing: uniform per-DoF
  gains, no reference, limit avoidance on, pins as weighted rows (``dof_gains=None,
  reference=None, limits=True, hard_pins=False``).
* **natural (default)** — ``animik.ik.NATURAL_POSING``: per-region stiffness, the drag's
  start pose as the null-space reference (passed per frame, as the app does), hard pins.
* **mink + posture** — mink's QP IK on animik's MJCF export: a position ``FrameTask`` for the
  dragged site (cost 1) and for each pin (cost 10), a ``PostureTask`` on the drag's start pose
  (cost 1e-2), ``ConfigurationLimit``, daqp; per frame iterated until the dragged site is within
  0.1 mm or 50 iterations.

Measured at the last frame: reach error (mm); the largest displacement of the untouched free
effectors (the major sites neither dragged nor pinned, cm) and of the pins (mm); the RMS change
of the rotational DoFs outside the dragged limb (degrees; the limb: the site's joint and its
ancestors up to the trunk, :func:`animik.semantics.stiffness.limb_dofs`); time per frame.
A drag is *limb-reachable* when FIK with only the limb's DoFs free converges (the goal, met
when untouched effectors move ≤ 1 cm with the reach within 1 mm, is stated for those).
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

import numpy as np

from .. import _cli_args as _args
from .._table import format_table
from ..errors import AnimikError
from ..ik import NATURAL_POSING, prepare_ik, solve_ik
from ..kinematics import site_positions
from ..rigs import load_rig
from ..semantics.stiffness import _major_sites, limb_dofs

FRAME_ITERATIONS = 20  # per-frame iteration cap of our solvers (the app's default)
DRAG_MIN, DRAG_MAX = 0.10, 0.30  # m

BEFORE = {"dof_gains": None, "reference": None, "limits": True, "hard_pins": False}


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench posing``."""
    p = subparsers.add_parser(
        "posing", help="natural posing: scripted drags, untouched effectors, pins, peers",
        description="Scripted 10-30 cm drags of each hand, foot and the head (feet pinned) on "
                    "each rig: reach error, displacement of the untouched effectors and pins, "
                    "RMS change of the DoFs outside the dragged limb; FIK before / the natural "
                    "default / mink with a posture task.")
    p.add_argument("--rigs", default="body95,fig2", help="comma-separated rigs (default "
                   "body95,fig2)")
    p.add_argument("--drags", type=_args.count, default=10, metavar="N",
                   help="drags per effector (default 10)")
    p.add_argument("--frames", type=_args.count, default=20, metavar="N",
                   help="frames per drag (default 20)")
    p.add_argument("--seed", type=_args.seed, default=0, help="drag seed (default 0)")
    p.add_argument("--no-peers", action="store_true", help="skip mink")
    p.set_defaults(func=run_cli)
    return p


@dataclass
class Drag:
    site: str
    pins: list[str]
    free: list[str]
    start: np.ndarray  # (3,) m
    goal: np.ndarray  # (3,) m
    limb: np.ndarray  # (n,) bool
    reachable: bool = False


@dataclass
class Outcome:
    """One method on one drag, at its last frame."""

    reach: float  # m
    untouched: float  # m, max over free effectors
    pins: float  # m
    rms_deg: float
    ms_frame: float


@dataclass
class Row:
    rig: str
    group: str
    method: str
    outcomes: list[tuple[Drag, Outcome]] = field(default_factory=list)


def make_drags(skel, n: int, seed: int, rig: str) -> list[Drag]:
    """The seeded drags of every major effector (pins: the two lowest other major sites)."""
    rng = np.random.default_rng([seed, zlib.crc32(rig.encode())])
    q0 = skel.rest_q
    p0 = site_positions(skel, q0)
    major = [skel.site_names[s] for s in _major_sites(skel)]
    if len(major) < 2:
        raise AnimikError(f"rig {rig!r} has fewer than two major sites to drag and pin")
    out = []
    for site in major:
        others = sorted((s for s in major if s != site), key=lambda s: p0[skel.site_index(s), 2])
        pins = others[:2]
        free = [s for s in major if s != site and s not in pins]
        limb = limb_dofs(skel, site)
        for _ in range(n):
            d = rng.normal(size=3)
            d *= rng.uniform(DRAG_MIN, DRAG_MAX) / np.linalg.norm(d)
            start = p0[skel.site_index(site)].copy()
            drag = Drag(site, pins, free, start, start + d, limb)
            r = solve_ik(skel, q0, {site: drag.goal}, pinned=pins, dof_gains=limb.astype(float),
                         reference=None, max_iterations=300)
            drag.reachable = bool(r.converged)
            out.append(drag)
    return out


def _group(site: str) -> str:
    s = site.lower()
    return "hands" if "hand" in s else "feet" if "foot" in s else "head" if "head" in s else site


def _measure(skel, drag: Drag, q: np.ndarray, q0: np.ndarray, ms: float) -> Outcome:
    p0 = site_positions(skel, q0)
    p = site_positions(skel, q)

    def moved(names):
        return max((float(np.linalg.norm(p[skel.site_index(s)] - p0[skel.site_index(s)]))
                    for s in names), default=0.0)

    rot = np.asarray(skel.dof_type) == 0
    other = ~drag.limb & rot
    dq = (q - q0)[other]
    rms = float(np.degrees(np.sqrt(np.mean(dq ** 2)))) if dq.size else 0.0
    reach = float(np.linalg.norm(p[skel.site_index(drag.site)] - drag.goal))
    return Outcome(reach, moved(drag.free), moved(drag.pins), rms, ms)


def _frames(drag: Drag, n: int) -> np.ndarray:
    s = np.arange(1, n + 1)[:, None] / n
    return drag.start + s * (drag.goal - drag.start)


def run_fik(skel, drag: Drag, frames: int, natural: bool) -> Outcome:
    q0 = np.array(skel.rest_q)
    opts = dict(NATURAL_POSING) if natural else dict(BEFORE)
    ref = opts.pop("reference")
    ik = prepare_ik(skel, q0, {drag.site: drag.start}, pinned=drag.pins, **opts)
    q, state, total = q0, None, 0.0
    for tgt in _frames(drag, frames):
        t0 = time.perf_counter()
        r = ik.solve(q, targets={drag.site: tgt}, state=state, max_iterations=FRAME_ITERATIONS,
                     reference=q0 if ref is not None else None)
        total += time.perf_counter() - t0
        q, state = r.q, r.state
    return _measure(skel, drag, np.asarray(q), q0, 1e3 * total / frames)


class MinkPosture:
    """mink QP IK with a posture task on the drag's start pose (see the module docstring)."""

    name = "mink + posture"
    dt = 0.01
    max_iterations = 50

    def __init__(self, skel, tmp: str):
        import daqp  # noqa: F401 - the QP solver asked for; fail early when absent
        import mink
        import mujoco

        from ..io.mjcf import write_mjcf

        self.mink, self.skel = mink, skel
        path = os.path.join(tmp, f"{skel.name}.xml")
        write_mjcf(skel, path)
        self.model = mujoco.MjModel.from_xml_path(path)
        self.adr = np.array([self.model.joint(d).qposadr[0] for d in skel.dof_names])
        self.conf = mink.Configuration(self.model)
        self.limits = [mink.ConfigurationLimit(self.model)]

    def run(self, drag: Drag, frames: int) -> Outcome:
        mink, conf, skel = self.mink, self.conf, self.skel
        q0 = np.array(skel.rest_q)
        qm = np.array(self.model.qpos0)
        qm[self.adr] = q0
        conf.update(qm)
        posture = mink.PostureTask(self.model, cost=1e-2)
        posture.set_target(qm)
        reach = mink.FrameTask(drag.site, "site", position_cost=1.0, orientation_cost=0.0)
        tasks = [reach, posture]
        p0 = site_positions(skel, q0)
        for s in drag.pins:
            t = mink.FrameTask(s, "site", position_cost=10.0, orientation_cost=0.0)
            t.set_target(mink.SE3.from_translation(p0[skel.site_index(s)]))
            tasks.append(t)
        sid = self.model.site(drag.site).id
        total = 0.0
        for tgt in _frames(drag, frames):
            t0 = time.perf_counter()
            reach.set_target(mink.SE3.from_translation(tgt))
            for _ in range(self.max_iterations):
                if np.linalg.norm(conf.data.site_xpos[sid] - tgt) <= 1e-4:
                    break
                vel = mink.solve_ik(conf, tasks, self.dt, solver="daqp", damping=1e-3,
                                    limits=self.limits)
                conf.integrate_inplace(vel, self.dt)
            total += time.perf_counter() - t0
        return _measure(skel, drag, np.array(conf.q[self.adr]), q0, 1e3 * total / frames)


def run(rigs: Sequence[str] = ("body95", "fig2"), drags: int = 10, frames: int = 20,
        seed: int = 0, peers: bool = True) -> tuple[list[Row], list[str]]:
    """Run the benchmark: one :class:`Row` per rig, effector group and method."""
    rows: list[Row] = []
    notes: list[str] = []
    for rig in rigs:
        skel = load_rig(rig)
        all_drags = make_drags(skel, drags, seed, rig)
        methods = [("min-norm (before)", lambda d, sk=skel: run_fik(sk, d, frames, False)),
                   ("natural (default)", lambda d, sk=skel: run_fik(sk, d, frames, True))]
        tmp = None
        if peers:
            try:
                tmp = tempfile.TemporaryDirectory()
                peer = MinkPosture(skel, tmp.name)
                methods.append((peer.name, lambda d, pr=peer: pr.run(d, frames)))
            except ImportError as e:
                notes.append(f"mink skipped: {e} (pip install 'animik[bench]')")
        run_fik(skel, all_drags[0], 2, True)  # warm-up (JIT)
        for name, fn in methods:
            by_group: dict[str, Row] = {}
            for d in all_drags:
                g = _group(d.site)
                row = by_group.setdefault(g, Row(rig, g, name))
                row.outcomes.append((d, fn(d)))
            rows.extend(by_group.values())
        if tmp is not None:
            tmp.cleanup()
    return rows, notes


def _med(x) -> float:
    return float(np.median(x)) if len(x) else float("nan")


def table(rows: list[Row]) -> str:
    head = ["rig", "drag", "method", "drags", "limb-reach.", "reach mm med/max",
            "untouched cm med/max (limb-reach.)", "untouched cm med (all)", "pins mm max",
            "RMS other deg med", "goal met", "ms/frame"]
    out = []
    for r in rows:
        oc = [o for _, o in r.outcomes]
        lr = [o for d, o in r.outcomes if d.reachable]
        goal = sum(o.untouched <= 0.01 and o.reach <= 1e-3 for o in lr)
        out.append([
            r.rig, r.group, r.method, len(oc), len(lr),
            f"{_med([o.reach for o in oc]) * 1e3:.2f} / {max(o.reach for o in oc) * 1e3:.1f}",
            (f"{_med([o.untouched for o in lr]) * 100:.2f} / "
             f"{max(o.untouched for o in lr) * 100:.2f}") if lr else "-",
            f"{_med([o.untouched for o in oc]) * 100:.2f}",
            f"{max(o.pins for o in oc) * 1e3:.4f}",
            f"{_med([o.rms_deg for o in oc]):.2f}",
            f"{goal}/{len(lr)}",
            f"{_med([o.ms_frame for o in oc]):.3f}",
        ])
    return format_table(head, out)


def run_cli(args) -> int:
    rigs = [r.strip() for r in args.rigs.split(",") if r.strip()]
    rows, notes = run(rigs, args.drags, args.frames, args.seed, not args.no_peers)
    print(f"animik bench posing: {args.drags} drags of {DRAG_MIN * 100:.0f}-{DRAG_MAX * 100:.0f} cm "
          f"per effector over {args.frames} frames, seed {args.seed}, feet pinned; "
          f"{platform.machine()}, Python {platform.python_version()}")
    print(table(rows))
    print("goal met: untouched effectors <= 1 cm and reach <= 1 mm, on limb-reachable drags")
    for n in notes:
        print(n, file=sys.stderr)
    return 0
