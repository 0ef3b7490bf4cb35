"""``animik bench dynamics``: inverse dynamics against pinocchio and MuJoCo, clip checks.

Rows:

1. Inverse dynamics of one frame of a rig (default body95): animik's compiled kernel with
   preallocated buffers, the public :func:`animik.dynamics.inverse_dynamics` (validation and
   allocation included), pinocchio ``rnea`` and MuJoCo ``mj_inverse`` on the URDF / MJCF animik
   exports, in the same process on the same state.
2. Mass matrix (CRBA) of one frame against pinocchio ``crba``.
3. The feasibility check of a whole clip, batched (frames/s; the clip is random smooth
   motion of the rig, so no file or retargeting is timed).
4. Seed D's filter (method A over the clip, :func:`animik.dynamics.correct.correct_clip`):
   frames/s of the whole correction (all QP rounds and checks, warm) next to the whole
   ``animik filter`` command (a subprocess, start-up included), on the raw SFU walk (270
   frames) and on a longer clip retargeted onto body95 (louise's first 800 frames).
5. ``animik feasibility`` as a user runs it: a subprocess on a shared mocap clip retargeted
   onto the rig (wall time incl. interpreter start-up, imports, reading, retargeting, I/O).
6. The filter's inner loop on every shared mocap clip retargeted onto body95 (as ``animik
   filter X.bvh --model body95`` reads the output of ``animik retarget --to body95``): warm
   frames/s, wall and CPU, with the rounds' infeasible counts (docs/dynamics.md section 6d).
   With ``--plant``, also ``animik filter --plant``'s filter (:func:`plant_and_correct` as the
   command runs it) per clip (docs/dynamics.md section 6f).

Benchmarks print tables; they never fail on speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .._table import format_table
from ..dynamics import _kernels as K
from ..dynamics.clip import check_clip
from ..dynamics.correct import correct_clip
from ..dynamics.inverse import inverse_dynamics, mass_matrix, model_args
from ..dynamics.model import on_model
from ..io.bvh import read_bvh
from ..io.bvh_compat import write_bvh_compatible
from ..motion import Motion
from ..retarget import retarget
from ..rigs import load_rig
from .peers import mujoco_model, pinocchio_model, random_poses, time_per_call, to_pinocchio_q

DEFAULT_CLIP = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "bvh" / "cmu" / "02_01.bvh"
#: The filter rows' clip: the shared SFU walk, which `animik filter` makes feasible raw.
DEFAULT_FILTER_CLIP = DEFAULT_CLIP.parents[1] / "sfu" / "0005_Walking001.bvh"
#: The long clip of the filter rows, retargeted onto body95 by the bench: louise's first
#: LONG_FRAMES frames (standing, then stepping onto a stationary bike; from 8.6 s she pedals,
#: a clip `animik filter` refuses up front as held off the floor: docs/dynamics.md 5f).
DEFAULT_LONG_CLIP = DEFAULT_CLIP.parents[1] / "optitrack_adelaide" / "louise.bvh"
LONG_FRAMES = 800


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik bench dynamics``."""
    p = subparsers.add_parser(
        "dynamics", help="inverse dynamics vs pinocchio / MuJoCo, clip feasibility frames/s",
        description="Inverse dynamics and CRBA of one frame against pinocchio and MuJoCo on the "
                    "exported URDF/MJCF, the batched feasibility check (frames/s) and "
                    "`animik feasibility` as a whole command (wall time).")
    p.add_argument("--rig", default="body95")
    p.add_argument("--frames", type=int, default=20_000, help="frames of the batched check")
    p.add_argument("--clip", default=str(DEFAULT_CLIP), help="BVH clip for the command row")
    p.add_argument("--filter-clip", default=str(DEFAULT_FILTER_CLIP),
                   help="BVH clip for the filter rows (inner loop and `animik filter` command)")
    p.add_argument("--long-clip", default=str(DEFAULT_LONG_CLIP),
                   help="long BVH clip for the filter rows, retargeted onto body95 first "
                        "(start-up amortised over many frames); '' to skip")
    p.add_argument("--retargets", default=str(DEFAULT_CLIP.parents[1]),
                   help="directory of BVH clips for the per-clip filter rows: clips already "
                        "retargeted onto body95 (`animik retarget --to body95` output; any "
                        "*.retarget.json beside them) are used as they are, others are "
                        "retargeted first; '' to skip")
    p.add_argument("--plant", action="store_true",
                   help="per-clip rows of the retargets also for `animik filter --plant` "
                        "(plant_and_correct as the command runs it: supports, smoothing, plant "
                        "passes; slow on clips that fail: each runs its fallbacks)")
    p.add_argument("--threads", type=int, default=None,
                   help="numba threads for the filter's per-frame kernels (default: one, "
                        "serial; N > 1 runs them on N threads, at most NUMBA_NUM_THREADS)")
    p.add_argument("--no-peers", action="store_true", help="skip pinocchio and MuJoCo")
    p.add_argument("--no-command", action="store_true", help="skip the whole-command row")
    p.set_defaults(func=run_cli)
    return p


def run(rig: str = "body95", frames: int = 20_000, peers: bool = True, clip: str | None = None,
        seed: int = 0, filter_clip: str | None = None, long_clip: str | None = None,
        retargets: str | None = None, plant: bool = False) -> list[tuple]:
    """Run the benchmark; rows ``(implementation, task, value, unit, note)``."""

    skel = load_rig(rig)
    rng = np.random.default_rng(seed)
    n, J = skel.n_dof, skel.n_joints
    q = np.ascontiguousarray(random_poses(skel, rng, 1)[0])
    qd = rng.normal(size=n)
    qdd = rng.normal(size=n)
    rows: list[tuple] = []
    task = f"inverse dynamics, 1 frame ({n} DoF)"
    args = model_args(skel)
    g = np.array([0.0, 0.0, -9.81])
    bufs = (np.empty((J, 3, 3)), np.empty((J, 3)), np.empty((n, 6)), np.empty((J, 6)),
            np.empty((J, 6)), np.empty((J, 6)), np.empty(n), np.empty(6))
    t = time_per_call(lambda: K.rnea_one(q, qd, qdd, g, *args, *bufs))
    rows.append(("animik rnea kernel", task, t * 1e6, "us", "compiled (numba), buffers reused"))
    t = time_per_call(lambda: inverse_dynamics(skel, q, qd, qdd))
    rows.append(("animik inverse_dynamics()", task, t * 1e6, "us", "public API incl. validation"))
    t = time_per_call(lambda: mass_matrix(skel, q))
    rows.append(("animik mass_matrix()", f"mass matrix, 1 frame ({n} DoF)", t * 1e6, "us", "CRBA"))
    if peers:
        rows += _peer_rows(skel, q, qd, qdd, task, time_per_call, to_pinocchio_q)
    # Batched clip check: smooth random motion around the rest pose, feet on the floor.
    T = frames
    tt = np.arange(T)[:, None] / 120.0
    amp = 0.05 * rng.normal(size=(1, n))
    qs = skel.rest_q + amp * np.sin(2 * np.pi * 0.7 * tt + rng.uniform(0, 6, size=(1, n)))
    motion = Motion(skel, qs, 120.0)
    check_clip(motion, in_contact=True, floor=0.0)  # warm-up (numba cache load)
    t0 = time.perf_counter()
    check_clip(motion, in_contact=True, floor=0.0)
    dt = time.perf_counter() - t0
    rows.append(("animik check_clip()", f"feasibility of a clip, {T:,} frames", T / dt, "frames/s",
                 "derivatives + RNEA + contacts + hull, one thread"))
    t0 = time.perf_counter()
    check_clip(motion, floor=0.0)
    dt = time.perf_counter() - t0
    rows.append(("animik check_clip()", f"same, contacts detected, {T:,} frames", T / dt,
                 "frames/s", "incl. contact detection (Python loop)"))
    # The same clip held by supports on every frame (a seat under the pelvis, a hold on each
    # hand, the soles): each frame is a contact-wrench-cone LP (docs/dynamics.md 5f).
    rows += _supports_rows(skel, motion)
    if rig == "body95":
        rows += _interactive_rows()
    if clip:
        rows += _command_rows(clip, rig)
    if filter_clip:
        rows += _filter_rows(filter_clip, long_clip)
    if retargets:
        rows += _retarget_rows(retargets, plant=plant)
    return rows


def _retarget_rows(folder: str, plant: bool = False) -> list[tuple]:
    """The filter's inner loop (:func:`correct_clip`, warm) on every BVH clip under ``folder``
    on body95: a clip already on body95 (its joints are body95's, as ``animik retarget --to
    body95`` writes them) is read as ``--model body95`` reads it (body95 itself,
    :func:`~animik.dynamics.model.on_model`); any other clip is retargeted onto body95 and
    written / read back as BVH first. With ``plant`` also ``animik filter --plant``'s loop
    (:func:`_plant_row`)."""
    rows: list[tuple] = []
    paths = sorted(Path(folder).rglob("*.bvh")) if Path(folder).is_dir() else []
    if not paths:
        return [("animik correct_clip()", "filter, body95 retargets", float("nan"), "frames/s",
                 f"no BVH clips under {folder}")]
    rig = load_rig("body95")
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            src = read_bvh(str(path))
            if set(src.skeleton.joint_names) != set(rig.joint_names):
                out = os.path.join(tmp, path.name)
                write_bvh_compatible(retarget(src, rig), out)
                src = read_bvh(out)
            motion = on_model(src, rig)  # as `animik filter --model body95` reads it
            correct_clip(motion)  # first use: numba cache loads
            best = None
            for _ in range(2):
                c0, t0 = time.process_time(), time.perf_counter()
                res = correct_clip(motion)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                best = (wall, cpu) if best is None or cpu < best[1] else best
            T = motion.n_frames
            rounds = [h[0] for h in res.history]
            rows.append(("animik correct_clip()",
                         f"filter inner loop, {path.stem} on body95 ({T} frames), warm",
                         T / best[0], "frames/s",
                         f"CPU {T / max(best[1], 1e-9):.0f} frames/s; infeasible per check "
                         f"{rounds}"))
            if plant:
                rows.append(_plant_row(motion, path.stem))
    return rows


def _plant_row(motion: Motion, name: str) -> tuple:
    """``animik filter --plant``'s filter on one clip as the command runs it (supports
    ``auto``, supported frames smoothed first, :func:`plant_and_correct`), warm, best CPU of
    two: the figure the command's ``--json`` reports as ``filter_frames_per_second``, without
    the first use's kernel loads."""
    from ..dynamics.correct import plant_and_correct
    from ..dynamics.filter import FilterOptions
    from ..dynamics.offfloor import held_off_floor, resolve_supports
    from ..dynamics.support_smooth import smooth_supported

    opts = FilterOptions().checked()
    T = motion.n_frames
    task = f"filter --plant inner loop, {name} on body95 ({T} frames), warm"
    supports = resolve_supports("auto", motion, mu=opts.mu)
    if supports is None and held_off_floor(motion):
        return ("animik plant_and_correct()", task, float("nan"), "frames/s",
                "refused by the command (held off the floor, no supports)")
    src = motion if supports is None else smooth_supported(motion, supports, opts.mu,
                                                           opts.window).motion
    plant_and_correct(src, opts, supports=supports)  # first use
    best = None
    for _ in range(2):
        c0, t0 = time.process_time(), time.perf_counter()
        res, plants = plant_and_correct(src, opts, supports=supports)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        best = (wall, cpu) if best is None or cpu < best[1] else best
    bad = int((~res.check.feasible).sum())
    return ("animik plant_and_correct()", task, T / best[0], "frames/s",
            f"wall {T / best[0]:.0f} / CPU {T / max(best[1], 1e-9):.0f} frames/s; "
            f"{len(plants)} passes, best "
            f"{[h[0] for h in res.history]}; {bad} infeasible")


def _filter_rows(clip: str, long_clip: str | None = None) -> list[tuple]:
    """Seed D method A over a whole clip (the filter of ``animik filter``): the inner loop
    (:func:`correct_clip`, warm: a second run in this process) next to the whole command as a
    user runs it (a subprocess: start-up, reading, filtering, re-check, writing), on ``clip``
    as it is and on ``long_clip`` retargeted onto body95 (filtered with ``--model body95``):
    the long clip shows how the command's fixed start-up cost amortises."""
    rows: list[tuple] = []
    if not Path(clip).is_file():
        return [("animik correct_clip()", "filter", float("nan"), "frames/s", f"no clip {clip}")]
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(clip, read_bvh(clip), [], Path(clip).name)]
        if long_clip and Path(long_clip).is_file():
            src = read_bvh(long_clip)
            src = Motion(src.skeleton, src.q[:LONG_FRAMES], src.fps, dict(src.meta))
            rig = load_rig("body95")
            path = os.path.join(tmp, "long_body95.bvh")
            write_bvh_compatible(retarget(src, rig), path)
            back = read_bvh(path)  # what the command reads
            motion = on_model(back, rig)
            label = f"{Path(long_clip).name} (first {len(src.q)}) on body95"
            cases.append((path, motion, ["--model", "body95"], label))
        for path, motion, extra, label in cases:
            rows += _filter_case(path, motion, extra, label, tmp)
    return rows


def _filter_case(path: str, motion: Motion, extra: list[str], label: str, tmp: str
                 ) -> list[tuple]:
    correct_clip(motion)  # first use: lazy imports, numba cache loads
    c0, t0 = time.process_time(), time.perf_counter()
    res = correct_clip(motion)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    r = res.report(motion)
    T = motion.n_frames
    name = f"{label} ({T} frames)"
    rows = [("animik correct_clip()", f"filter inner loop, {name}, warm", T / wall, "frames/s",
             f"CPU {T / max(cpu, 1e-9):.0f} frames/s; {len(r['rounds'])} checks, infeasible "
             f"{r['infeasible_frames_input']} -> {r['infeasible_frames']}")]
    exe = [sys.executable, "-c", "import sys; from animik.cli import main; sys.exit(main())"]
    cmd = exe + ["filter", path, "-o", os.path.join(tmp, "out.bvh")] + extra
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    rows.append(("animik filter", f"whole command, {name}", T / wall, "frames/s",
                 f"wall {wall:.2f} s, CPU {cpu:.2f} s incl. start-up (exit {proc.returncode})"))
    return rows


def _peer_rows(skel, q, qd, qdd, task, time_per_call, to_pin) -> list[tuple]:
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            # optional dependency: the row says when it is missing
            pin, model, data = pinocchio_model(skel, tmp)
            qp = to_pin(skel, model, q)
            idx = np.array([model.joints[model.getJointId(nm)].idx_v for nm in skel.dof_names])
            vp, ap = np.zeros(model.nv), np.zeros(model.nv)
            vp[idx], ap[idx] = qd, qdd
            t = time_per_call(lambda: pin.rnea(model, data, qp, vp, ap))
            rows.append((f"pinocchio {pin.__version__}", task, t * 1e6, "us", "rnea"))
            t = time_per_call(lambda: pin.crba(model, data, qp))
            rows.append((f"pinocchio {pin.__version__}", f"mass matrix, 1 frame ({skel.n_dof} DoF)",
                         t * 1e6, "us", "crba (upper triangle)"))
        except ImportError:
            rows.append(("pinocchio", task, float("nan"), "us", "not installed: pip install pin"))
        try:
            mujoco, model, data = mujoco_model(skel, tmp)  # optional dependency
            model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
            data = mujoco.MjData(model)
            qa = np.array([model.joint(nm).qposadr[0] for nm in skel.dof_names])
            da = np.array([model.joint(nm).dofadr[0] for nm in skel.dof_names])
            data.qpos[qa], data.qvel[da], data.qacc[da] = q, qd, qdd
            t = time_per_call(lambda: mujoco.mj_inverse(model, data))
            rows.append((f"MuJoCo {mujoco.__version__}", task, t * 1e6, "us",
                         "mj_inverse (constraints off; includes its kinematics and M)"))
        except ImportError:
            rows.append(("MuJoCo", task, float("nan"), "us", "not installed: pip install mujoco"))
    return rows


def _supports_rows(skel, motion) -> list[tuple]:
    from unittest import mock

    from ..dynamics import cone
    from ..dynamics.contacts import contact_model
    from ..dynamics.supports import Support, SupportSet
    from ..semantics.roles import classify_joints

    roles = classify_joints(skel).roles
    root = int(np.flatnonzero(skel.parents < 0)[0])
    hips = skel.joint_names.index(roles["hips"]) if "hips" in roles else root
    seat = np.array([[x, y, -0.1] for x in (0.05, -0.05) for y in (0.08, -0.08)])
    sup = [Support("seat", "seat", hips, seat, np.array([0.0, 0.0, 1.0]), 0.7, np.inf)]
    for s in ("l_hand", "r_hand"):
        if s in roles:
            sup.append(Support(s, "hold", skel.joint_names.index(roles[s]), np.zeros((1, 3)),
                               np.array([0.0, 0.0, 1.0]), 0.7, 300.0))
    cm = contact_model(skel)
    supports = SupportSet(tuple(sup), "bench")
    T = len(motion.q)
    out = []
    # the same check with the programmes solved by HiGHS (the tests' reference, the solver of
    # earlier rounds), swapped in for the measurement only
    for solver, fn in (("batched simplex", cone.cone_residual),
                       ("HiGHS", cone.cone_residual_highs)):
        with mock.patch.object(cone, "cone_residual", fn):
            check_clip(motion, in_contact=True, floor=0.0, contacts=cm, supports=supports)
            t0 = time.process_time()
            res = check_clip(motion, in_contact=True, floor=0.0, contacts=cm, supports=supports)
            dt = time.process_time() - t0
        out.append(("animik check_clip(supports=)", f"same, a seat + 2 holds on every frame, "
                    f"{T:,} frames ({int(res.feasible.sum())} feasible)", T / dt, "frames/s",
                    f"contact-wrench-cone LP per frame ({solver}, CPU time)"))
    return out


def _interactive_rows(frames: int = 60, hold: int = 60, reach: float = 0.6) -> list[tuple]:
    """The app's physics mode without the window: body95 in the default scene (feet pinned, its
    solver options), the right hand's target moved ``reach`` m forward over ``frames`` frames
    at 60 Hz, then held; per frame the reference IK and seed D's filter (check + correction,
    the corrective IK included) are timed."""
    import importlib.util

    from ..dynamics.interactive import BalanceFilter
    from ..ik import prepare_ik
    from ..kinematics import forward_kinematics
    from ..scene import load_scene

    # scenes/ of a checkout or editable install, else the packaged animik._scenes (as the app)
    path = Path(__file__).resolve().parents[2] / "scenes" / "default.toml"
    if not path.is_file():
        spec = importlib.util.find_spec("animik._scenes")
        locs = list(spec.submodule_search_locations or []) if spec is not None else []
        path = Path(locs[0]) / "default.toml" if locs else path
    if not path.is_file():
        return [("animik physics mode", "live filter, body95", float("nan"), "ms",
                 "scenes/default.toml not found")]
    scene = load_scene(path)
    skel, opts = scene.skeleton, dict(scene.solver_options)
    q = np.array(scene.q, float)
    fk = forward_kinematics(skel, q)
    pins = {s: fk.site_positions[skel.site_index(s)].copy() for s in ("l_foot", "r_foot")}
    hand0 = fk.site_positions[skel.site_index("r_hand")].copy()
    w = {"l_foot": 10.0, "r_foot": 10.0, "r_hand": 1.0}
    ref = prepare_ik(skel, q, {**pins, "r_hand": hand0}, "fik", weights=w, tol_position=1e-4,
                     **opts)
    for _ in range(30):
        q = ref.solve(q, max_iterations=20).q
    copts = {k: v for k, v in opts.items() if k not in ("reference", "reference_gain")}
    cor = prepare_ik(skel, q, {**pins, "r_hand": hand0}, "fik", weights={**w, "com": 10.0},
                     com=(0.0, 0.0, 1.0), tol_position=1e-5, **copts)
    filt = BalanceFilter(skel)
    t_ref, t_filt, n_cor, n_ok = [], [], 0, 0
    for _rep in range(2):  # the first pass compiles and warms the caches
        filt.reset(q)
        qi, state = q, None
        t_ref.clear(), t_filt.clear()
        n_cor = n_ok = 0
        for i in range(frames + hold):
            hand = hand0 + [reach * min(i + 1, frames) / frames, 0.0, 0.0]
            t0 = time.perf_counter()
            r = ref.solve(qi, targets={"r_hand": hand}, max_iterations=20, state=state)
            t1 = time.perf_counter()
            st = filt.step(r.q, 1 / 60, lambda c, start, hand=hand: cor.solve(
                start, targets={"r_hand": hand, "com": c}, max_iterations=50).q)
            t2 = time.perf_counter()
            state, qi = r.state, st.q
            t_ref.append(t1 - t0)
            t_filt.append(t2 - t1)
            n_cor += int(st.corrected)
            n_ok += int(st.feasible)
    tf = 1e3 * np.array(t_filt)
    tr = 1e3 * np.array(t_ref)
    task = f"live filter, body95, hand {reach} m forward, {frames + hold} frames"
    note = f"{n_ok}/{frames + hold} frames feasible, {n_cor} corrected"
    return [("animik physics mode", f"{task}: filter median", float(np.median(tf)), "ms",
             "check + correction incl. corrective IK; " + note),
            ("animik physics mode", f"{task}: filter 95th pct", float(np.percentile(tf, 95)), "ms",
             "same"),
            ("animik physics mode", f"{task}: reference IK median", float(np.median(tr)), "ms",
             "the pose mode's IK step (FIK, 20 iterations)"),
            ("animik physics mode", f"{task}: frame total median", float(np.median(tf + tr)),
             "ms", "reference IK + filter")]


def _command_rows(clip: str, rig: str) -> list[tuple]:
    if not Path(clip).is_file():
        return [("animik feasibility", "whole command", float("nan"), "s", f"no clip {clip}")]
    exe = [sys.executable, "-c", "import sys; from animik.cli import main; sys.exit(main())"]
    rows = []
    for label, extra in (("read + check", []), (f"read + retarget to {rig} + check", ["--rig", rig])):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = exe + ["feasibility", clip, "--every", "0", "--json", os.path.join(tmp, "r.json"),
                         "--plot", os.path.join(tmp, "r.png")] + extra
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            dt = time.perf_counter() - t0
        rows.append(("animik feasibility", f"{Path(clip).name}: {label}, JSON + PNG", dt, "s",
                     f"wall time incl. start-up (exit {proc.returncode})"))
    return rows


def _filter_threads() -> int:
    import numba

    from ..dynamics import filter as _filter

    return numba.get_num_threads() if _filter.PARALLEL else 1


def run_cli(args: argparse.Namespace) -> int:
    import numba

    if args.frames < 10:
        print("animik bench dynamics: error: --frames must be >= 10", file=sys.stderr)
        return 2
    if args.threads is not None:
        top = numba.config.NUMBA_NUM_THREADS
        if not 1 <= args.threads <= top:
            print(f"animik bench dynamics: error: --threads must be 1..{top} (NUMBA_NUM_THREADS), "
                  f"got {args.threads}", file=sys.stderr)
            return 2
        numba.set_num_threads(args.threads)
        from ..dynamics import filter as _filter

        _filter.PARALLEL = args.threads > 1  # the filter's per-frame batches on the threads
    load0 = os.getloadavg()[0]
    rows = run(args.rig, args.frames, not args.no_peers, None if args.no_command else args.clip,
               filter_clip=None if args.no_command else args.filter_clip,
               long_clip=None if args.no_command else (args.long_clip or None),
               retargets=args.retargets or None, plant=args.plant)
    print(format_table(["implementation", "task", "value", "unit", "note"],
                       [[a, b, round(c, 2) if c == c else "n/a", d, e] for a, b, c, d, e in rows],
                       title=f"animik bench dynamics: rig {args.rig} "
                             f"({platform.processor() or platform.machine()}, "
                             f"{os.cpu_count()} cores; kernels one thread, the filter's "
                             f"per-frame batches {_filter_threads()} numba thread(s); "
                             f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f})"))
    return 0
