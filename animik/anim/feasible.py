"""A clip's poses made dynamically feasible: seed D's interactive filter
(:mod:`animik.dynamics.interactive`) with the corrective IK that holds the feet, and the app's
whole "Make feasible" job (:func:`feasible_clip`: that filter, then ``animik filter --plant``'s
method A, with the clip's supports off the floor).

Lives in ``anim`` because it joins the two layers below it (``ik`` and ``dynamics`` do not
import each other). No GL: the app runs :func:`feasible_clip` in a worker process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..dynamics.clip import check_clip
from ..dynamics.correct import plant_and_correct
from ..dynamics.filter import FilterOptions
from ..dynamics.interactive import BalanceOptions, FeasibleClip, foot_sites, make_clip_feasible
from ..dynamics.offfloor import resolve_supports
from ..dynamics.progress import Progress, scaled
from ..dynamics.support_smooth import smooth_supported
from ..dynamics.supports import SupportSet, supports_from_dict
from ..dynamics.zmp import FeasibilityError
from ..ik import prepare_ik
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..skeleton import Skeleton
from .clip import Clip
from .edit import clip_from_poses
from .serialize import SUPPORTS_META

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


def clip_supports(clip: Clip, motion: Motion, mu: float) -> SupportSet | None:
    """The supports a clip is checked with: the ones recorded in ``clip.meta[SUPPORTS_META]``
    (Make feasible records the supports it corrected the clip with, ``"floor"`` for none),
    else ``--supports auto``'s inference on ``motion`` (the clip's frames). None: the floor
    only.

    Raises:
        SupportError: a malformed record.
    """
    rec = clip.meta.get(SUPPORTS_META)
    if rec is None:
        return resolve_supports("auto", motion, mu=mu)
    if rec == "floor":
        return None
    return supports_from_dict(json.loads(rec), motion.skeleton, mu, motion.n_frames,
                              source=f"clip {clip.name!r}")


@dataclass(frozen=True)
class FeasibleClipResult:
    """What :func:`feasible_clip` made of a clip (plain data: it crosses a process boundary).

    Attributes:
        q: ``(T, n_dof)`` the corrected poses at the clip's frames.
        supports: the supports they were corrected and judged with, as
            ``Clip.meta[SUPPORTS_META]`` records them (JSON, or ``"floor"``).
        feasible: frames of the new clip that pass the check (with those supports).
        input_feasible: frames of the input that pass it.
        frames: ``T``.
        seconds: wall time of the job.
    """

    q: np.ndarray
    supports: str
    feasible: int
    input_feasible: int
    frames: int
    seconds: float

    def clip(self, source: Clip, name: str) -> Clip:
        """The corrected poses as a clip keyed at every frame, on ``source``'s skeleton (the
        caller's object, whatever process computed the poses), carrying the supports."""
        return _new_clip(source.skeleton, self.q, source.fps, name, source, self.supports)


def feasible_clip(clip: Clip, options: BalanceOptions | None = None, mu: float = 0.7,
                  progress: Progress | None = None) -> FeasibleClipResult:
    """The app's Make feasible: ``clip`` corrected as ``animik filter`` would, judged as
    ``animik feasibility`` judges the new clip.

    With supports off the floor (recorded in the clip, else inferred as ``--supports auto``
    does: a seat, hand holds, pedals) it runs ``animik filter --plant --supports auto``'s route
    (the supported frames' capture spikes smoothed, then :func:`plant_and_correct` with the
    supports); a result worse than the input keeps the input's poses. Floor only: the physics
    mode's law over the clip (:func:`feasible_clip_poses`: the feet held, the COM moved), then
    what still fails through :func:`plant_and_correct` from that result and from the input (a
    walk's feet cannot be held where they are), the best kept.

    Args:
        clip: the clip (keyed poses). options: the physics mode's filter settings. mu: friction.
        progress: ``progress(fraction, message)`` (:mod:`animik.dynamics.progress`); an
            exception it raises stops the work.

    Returns:
        :class:`FeasibleClipResult`.

    Raises:
        FeasibilityError: a clip of one frame.
        AnimikError: as the filters (no contact geometry, ...).
    """
    say = progress or (lambda *_: None)
    t0 = time.perf_counter()
    say(0.0, "reading the clip")
    m = clip.to_motion()
    skel, fps = m.skeleton, clip.fps
    if m.n_frames < 2:  # no velocity to judge: numpy's gradient would fail further down
        raise FeasibilityError(f"clip {clip.name!r} has {m.n_frames} frame; a motion of at "
                               "least 2 frames is needed (key a second pose)")
    # supports off the floor as `animik filter --supports auto` (default) finds them: a seat,
    # hand holds, pedals — the floor-only law below would pull a rider off the bike
    sup = clip_supports(clip, m, mu)
    if sup is not None:
        rec = json.dumps(sup.to_dict(skel))
        opts = FilterOptions(mu=mu)
        say(0.02, "supports: smoothing the capture's spikes")
        sm = smooth_supported(m, sup, opts.mu, opts.window)
        r = plant_and_correct(sm.motion, opts, supports=sup,
                              progress=scaled(progress, 0.05, 0.97, "method A with supports: "))[0]
        before = int(check_clip(m, mu=mu, window=opts.window, contacts=r.check.contacts,
                                supports=sup).feasible.sum())
        say(0.98, "judging the new clip")
        q, ok = r.motion.q, _judged(skel, r.motion.q, clip, mu, sup, rec)
        if ok < before:  # never worse than the input: its poses are kept
            q, ok = m.q, before
        say(1.0, f"{ok} of {len(q)} frames feasible")
        return FeasibleClipResult(np.asarray(q), rec, ok, before, len(q),
                                  time.perf_counter() - t0)
    # 1. the physics mode's law over the clip: the feet held, the COM moved (keyed poses)
    res = feasible_clip_poses(skel, m.q, fps, options,
                              progress=lambda done, total: say(
                                  0.5 * done / total, f"balance law: frame {done} of {total}"))
    q, chk = res.q, check_clip(Motion(skel, res.q, fps), mu=mu)
    # 2. judged as `animik feasibility` judges a clip; what still fails goes through `animik
    # filter --plant`'s method A, from that result and from the input, the best kept
    opts = FilterOptions(mu=mu)
    for k, start in enumerate((Motion(skel, q, fps), m)):
        if chk.feasible.all():
            break
        part = scaled(progress, 0.5 + 0.24 * k, 0.74 + 0.24 * k,
                      f"method A from the {('balanced clip', 'input')[k]}: ")
        r = plant_and_correct(start, opts, progress=part)[0]
        if (~r.check.feasible).sum() < (~chk.feasible).sum():
            q, chk = r.motion.q, r.check
    say(0.98, "judging the new clip")
    before = int(check_clip(m, mu=mu).feasible.sum())
    ok = _judged(skel, q, clip, mu, None, "floor")
    say(1.0, f"{ok} of {len(q)} frames feasible")
    return FeasibleClipResult(np.asarray(q), "floor", ok, before, len(q), time.perf_counter() - t0)


def _judged(skel: Skeleton, q: np.ndarray, source: Clip, mu: float, sup: SupportSet | None,
            rec: str) -> int:
    """Frames of the new clip that pass the check its timeline marks run (``animik
    feasibility``'s, with the supports it carries). Judged on the clip, not on the filter's
    poses: a clip holds its joints within their limits, and the filter's plant passes can
    leave a knee 0.5° past one (the seated test clip: 135 frames passed on the filter's poses,
    130 on the clip)."""
    new = _new_clip(skel, q, source.fps, source.name, source, rec)
    return int(check_clip(new.to_motion(), mu=mu, supports=sup).feasible.sum())


def _new_clip(skel: Skeleton, q: np.ndarray, fps: float, name: str, source: Clip,
              rec: str) -> Clip:
    """The poses as a clip keyed at every frame, carrying the supports record ``rec``
    (``meta[SUPPORTS_META]``: the timeline's marks and the overlay use them instead of
    inferring them again from the new poses)."""
    new = clip_from_poses(skel, np.arange(len(q)) / fps, q, name=name, fps=fps,
                          interpolation="linear")
    return new.replace(fixed_length=source.fixed_length,
                       meta={**dict(new.meta), SUPPORTS_META: rec})


__all__ = ["FeasibleClipResult", "clip_supports", "feasible_clip", "feasible_clip_poses"]
