"""Feedback inverse kinematics (FIK), seed A — the default solver of :func:`animik.solve_ik`.

The inverse-kinematics block is replaced by a feedback loop whose filter state ``z`` (one entry
per task row) drives the joint step through a full positive-definite gain ``P``:

* ``solver="fik"`` — **variable step** (eqs 9d–9e), iterated inside one frame::

      dq = V Jᵀ(q) P z                                          (9d)
      q ← Π(q + h dq)               Π: projection onto the joint limits
      z ← z + h (A z − J dq) + h dxd                            (9e)

  with ``dxd = e`` (the remaining task error, target − current) and the linearised achieved
  displacement ``h J dq`` replaced by the *measured* change of error, so the loop corrects its
  own linearisation error: ``z ← (1 + hA) z + h e_old + (e_new − e_old)``.
* ``solver="fik_fixed"`` — **fixed sampling interval** (eqs 9a–9c), one step per sample with the
  source's one-sample delay: ``dq(t) = Jᵀ P z(t−1)``, ``z(t) = A z(t−1) + e(t)``.

Default design (docs/fik.md has the derivation and the measurements): ``P = (J V Jᵀ + μI)⁻¹``
kept as a Cholesky factor and recomputed every iteration (``J V Jᵀ`` is assembled from the
tree's sparsity, so a refresh costs about one FK evaluation; ``refresh="auto"`` keeps a stale
P between refreshes, the source's cheap multiply–accumulate iterations), ``A = −1``, ``h = 1``
(then the loop is dead-beat on the linearised problem), ``h`` halved when a step raises the
error (the step is undone) and doubled back while it falls. ``μ`` (``damping``, relative to the
mean diagonal of ``J V Jᵀ``) bounds the gain in near-singular directions: the step there is at
most ``‖z‖ / (2 sqrt(μ))``. The whole loop runs in one compiled call (:mod:`._fik_kernels`).

Null-space tasks (eqs 9f–9j, :mod:`animik.ik.nullspace`): joint-limit avoidance and reference
poses act through ``dq0 − bdq``, which moves no effector. Joint limits are also hard: every
iterate is projected into the limits, and a DoF held on a limit has its gain ``v_k`` zeroed.

Warm start: ``result.state`` (:class:`FIKState`) holds ``z``, ``bz``, the gain factor and the
adapted step; pass it back (``solve_ik(..., state=result.state)``) on the next frame and the
filter continues instead of restarting. A state whose DoF count, sites or task rows differ from
the problem's is **rejected** with a :class:`~animik.errors.OptionError` (another solver, not a state) or
:class:`~animik.errors.ShapeError` (other DoFs or rows) (pass ``state=None`` to
restart the filter).

Stored per-skeleton tuning (``animik tune RIG``, :mod:`animik.ik.tuning`) is applied by default;
explicit options override it.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from os import PathLike
from typing import Any

import numpy as np

from ..cache import cached
from ..errors import OptionError, ShapeError, UnknownNameError, ValueRangeError, names_hint
from ..kinematics import FKResult, kernel_args
from ..semantics import stiffness
from ..skeleton import Skeleton
from . import _bend, tuning
from . import _fik_kernels as K
from ._fik_sequence import fik_sequence
from .common import (
    DEFAULT_TOL_POSITION,
    DEFAULT_TOL_ROTATION,
    StallDetector,
    check_count,
    check_positive,
    check_q0,
)
from .options import check_choice, check_real, per_dof
from .problem import IKProblem, _parse_target
from .problem import build_problem as build_pins_problem
from .result import IKResult
from .tasks import limits, posture
from .tuning import FIKTuning, hinf_gain, load_tuning, read_tuning

NAME = "fik"
NAME_FIXED = "fik_fixed"

#: Options of ``solver="fik"`` and their built-in defaults (stored tuning overrides these,
#: explicit options override both).
DEFAULTS: dict[str, Any] = {
    "tol_position": DEFAULT_TOL_POSITION,  # m
    "tol_rotation": DEFAULT_TOL_ROTATION,  # rad
    "max_iterations": 100,
    "stall_window": 20,  # iterations without relative improvement stall_rel -> "stalled"
    "stall_rel": 1e-4,
    "state": None,  # FIKState from the previous frame's result (warm start)
    "callback": None,  # callback(iteration, q (n,), error_norm); slows the solve
    "tuning": None,  # None: stored tuning of the skeleton; False: built-in defaults; a mapping
    # --- filter (9d–9e)
    "A": -1.0,  # filter constant (< 0), per unit of pseudo-time (h = 1 per iteration)
    "h": 1.0,  # step: start value and largest value of the variable step
    "h_min": None,  # smallest variable step (None: h / 64)
    "step_grow": 2.0,  # h *= step_grow after a step that lowered the error
    "step_cut": 0.5,  # h *= step_cut after a step that raised it (the step is undone)
    "cold_start": "bumpless",  # "bumpless": z starts at e/|A|; "zero": z = 0 (the source)
    # --- gain P
    "gain": "full",  # "full" | "scalar" | "hinf" | an (m, m) SPD matrix
    "damping": 1e-5,  # μ / mean diag(J V Jᵀ) of P = (J V Jᵀ + μ I)⁻¹
    "damping_abs": 1e-9,  # added to μ, (task units)²
    "damping_max_factor": 1e6,  # a rejected step multiplies μ by 10 up to this factor
    "refresh": "always",  # "always" | "auto" | "once": when P is recomputed
    "refresh_ratio": 0.3,  # auto: recompute P after a step with ‖e_new‖/‖e‖ above this
    "refresh_dq": 0.2,  # auto: recompute a warm-start P if the pose moved more (rad or m)
    "gain_scale": 0.5,  # "scalar": P = gain_scale / trace(J V Jᵀ)
    "hinf_m": 5.0,  # "hinf": m_i of M = −m_i I (eq 13)
    "hinf_w": 4.0,  # "hinf": cut-off frequency w, CᵀC = w² I
    "hinf_s": None,  # "hinf": attenuation s (None: 1.05 × the smallest feasible at the pose)
    "hinf_v1": None,  # "hinf": P = v1 · Pa (None: fastest rate dead-beat at the start pose)
    # --- per-DoF gains V
    "dof_gains": None,  # None (ones) | "regions" (natural posing) | (n,) array | {dof: gain}
    "max_step": 0.5,  # largest change of one DoF per iteration, rad or m
    # --- null-space tasks (9f–9j)
    "limits": True,  # joint-limit avoidance term (the hard clamp is always on)
    "limit_gain": 0.1,  # 1/iteration
    "limit_margin": 0.1,  # active in the outer fraction of each half-range (>= 1: everywhere)
    "reference": None,  # bq: (n,) pose, {dof name: value} or "start" (the solve's start pose)
    "reference_gain": 0.5,  # 1/iteration
    "reference_weights": None,  # (n,) or {dof name: weight} (default 1 where a value is given)
    "null_tol": 1e-3,  # rad: with a reference, iterate until this close to its optimum
    "null_max_step": 0.05,  # rad or m: largest null-space change of one DoF per iteration
    "null_A": 0.0,  # filter constant of bz (9j); 0: exact cancellation of the effector motion
    # --- priorities
    "hard_pins": True,  # pinned sites strictly before targets (their rows nearly undamped)
    "tol_pin": 1e-7,  # m: with hard_pins, a pinned site counts as converged this close
}

#: Relative damping of a hard (pinned) row: this times the base μ, never raised by the
#: Levenberg–Marquardt factor (``_fik_kernels._refresh``).
PIN_DAMPING = 0.1
#: With ``dof_gains="regions"``: iterations of the first stage (root and trunk held, the limbs
#: alone) before the trunk is allowed to join (:func:`_execute`).
LIMB_STAGE_ITERATIONS = 20
#: ... and only for a posing problem: at most this many targeted (not pinned) sites and no
#: point task. A problem that targets many sites (a whole pose, a retargeted frame) moves the
#: root and trunk anyway; the first stage would only cost iterations there.
LIMB_STAGE_MAX_TARGETS = 2

_FIXED_ONLY_DEFAULTS = {"A": -1.0, "refresh": "always"}
#: Options of ``solver="fik_fixed"`` (no variable step).
DEFAULTS_FIXED: dict[str, Any] = {k: v for k, v in {**DEFAULTS, **_FIXED_ONLY_DEFAULTS}.items()
                                  if k not in ("h", "h_min", "step_grow", "step_cut")}
_SLOW_GAIN_DEFAULTS = {"max_iterations": 20000, "stall_window": 500, "stall_rel": 1e-6}
_VARIABLE_ONLY = ("h", "h_min", "step_grow", "step_cut")
_GAINS = {"full": K.GAIN_FULL, "scalar": K.GAIN_SCALAR, "hinf": K.GAIN_CONSTANT}
_REFRESH = {"auto": K.REFRESH_AUTO, "always": K.REFRESH_ALWAYS, "once": K.REFRESH_ONCE}


@dataclass(frozen=True, eq=False)
class FIKState:
    """Filter state of FIK carried from one frame to the next (``IKResult.state``).

    Attributes:
        form: ``"fik"`` or ``"fik_fixed"``.
        n_dof: DoF count of the skeleton.
        sites: ``(k,)`` targeted site indices of the problem, ``rows`` ``(k,)`` their task rows.
        row_perm: ``(m,)`` the solver works on the task rows sorted by the skeleton's
            depth-first order (then the rows a DoF moves are contiguous); ``row_perm[r]`` is the
            problem's row of internal row ``r``. ``z``, ``z_e``, ``bz`` and ``factor`` use the
            internal order; :attr:`P` and :meth:`z_rows` return the problem's order.
        z: ``(m,)`` effector-task filter state. ``z_e``: ``(m,)`` the measured error it last saw.
        bz: ``(m,)`` null-space filter state.
        gain: gain kind the factor below belongs to (``"full"``, ``"scalar"``, ``"hinf"``,
            ``"constant"``).
        factor: ``(m, m)`` Cholesky factor of ``J V Jᵀ + μI`` (``"full"``) or the explicit P.
        scalar: scalar gain (``"scalar"``).
        gain_q: ``(n,)`` pose where the gain was computed; ``gain_valid``: whether it is usable.
        blocked: ``(n,)`` bool, DoFs held on a limit.
        h: adapted step.
        refreshes: gain computations in the solve that produced this state (diagnostic).
        rejected: steps undone by the variable step in that solve (diagnostic).
    """

    form: str
    n_dof: int
    sites: np.ndarray
    rows: np.ndarray
    row_perm: np.ndarray
    z: np.ndarray
    z_e: np.ndarray
    bz: np.ndarray
    gain: str
    factor: np.ndarray
    scalar: float
    gain_q: np.ndarray
    gain_valid: bool
    blocked: np.ndarray
    h: float
    refreshes: int = 0
    rejected: int = 0

    @property
    def m(self) -> int:
        return int(self.z.shape[0])

    @property
    def P(self) -> np.ndarray:
        """The gain ``P`` ``(m, m)`` in the problem's row order (computed on demand)."""
        if self.gain == "full":
            L = np.tril(self.factor)
            inv = np.linalg.inv(L)
            p_int = inv.T @ inv
        elif self.gain == "scalar":
            p_int = self.scalar * np.eye(self.m)
        else:
            p_int = np.array(self.factor)
        out = np.empty_like(p_int)
        out[np.ix_(self.row_perm, self.row_perm)] = p_int
        return out

    def z_rows(self) -> np.ndarray:
        """``z`` ``(m,)`` in the problem's row order."""
        out = np.empty(self.m)
        out[self.row_perm] = self.z
        return out


def solve(problem: IKProblem, q0: np.ndarray, **options: Any) -> IKResult:
    """Feedback IK, variable step (eqs 9d–9e) — ``solver="fik"``.

    Args:
        problem: the targets (:func:`animik.ik.build_problem`).
        q0: start pose ``(n_dof,)`` (clipped into the limits).
        **options: see :data:`DEFAULTS` and docs/fik.md. The main ones: ``tol_position`` (m),
            ``tol_rotation`` (rad), ``max_iterations``, ``state`` (warm start), ``dof_gains``
            (V), ``A``, ``h``, ``gain``, ``damping``, ``limits`` / ``limit_gain``,
            ``reference`` / ``reference_gain`` / ``reference_weights``, ``tuning``.

    Returns:
        :class:`IKResult` with ``state`` a :class:`FIKState`; ``q`` is always within limits.

    Raises:
        UnknownNameError: unknown option or DoF name. OptionError: bad option value, bad
            ``q0``, or a ``state`` that belongs to another problem.
    """
    return _solve(problem, q0, options, K.FORM_VARIABLE)


def solve_fixed(problem: IKProblem, q0: np.ndarray, **options: Any) -> IKResult:
    """Feedback IK, fixed sampling interval (eqs 9a–9c) — ``solver="fik_fixed"``.

    Same options as :func:`solve` except the variable-step ones (``h``, ``h_min``,
    ``step_grow``, ``step_cut``); defaults ``A = −1`` (dead-beat for the one-sample delay of
    9c when ``J Jᵀ P ≈ I``) and ``refresh="always"``. Every step is taken (a robot cannot undo
    a sample); about twice the iterations of ``"fik"``.
    """
    return _solve(problem, q0, options, K.FORM_FIXED)


# --------------------------------------------------------------------------- options
def resolve_options(problem_or_skel: IKProblem | Skeleton, options: Mapping[str, Any],
                    fixed: bool = False) -> dict[str, Any]:
    """Merge built-in defaults, the stored tuning of the skeleton and explicit options.

    Raises:
        UnknownNameError: unknown option names (the valid ones are listed).
        OptionError, ValueRangeError, ShapeError: bad values, non-finite or negative per-DoF
            values, per-DoF arrays of the wrong shape (the message names the option).
    """
    skel = problem_or_skel.skeleton if isinstance(problem_or_skel, IKProblem) else problem_or_skel
    allowed = DEFAULTS
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        solver = NAME_FIXED if fixed else NAME
        raise UnknownNameError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"for solver {solver!r}; its options are {names_hint(sorted(allowed), limit=60)}")
    out = dict(DEFAULTS)
    if fixed:
        out.update(_FIXED_ONLY_DEFAULTS)
    tuning = options.get("tuning", None)
    tuned = _tuning_options(skel, tuning, fixed)
    out.update(tuned)
    out.update(options)
    if isinstance(out["gain"], str) and out["gain"] in ("scalar", "hinf"):
        # the source's gains converge linearly at rates spread by the conditioning of J:
        # give them room (explicit options still win)
        for key, val in _SLOW_GAIN_DEFAULTS.items():
            if key not in options and key not in tuned:
                out[key] = val
    return out


def _tuning_options(skel: Skeleton, tuning: Any, fixed: bool) -> dict[str, Any]:
    if tuning is False:
        return {}

    if tuning is None:
        t = load_tuning(skel)
    elif isinstance(tuning, FIKTuning):
        t = tuning
    elif isinstance(tuning, Mapping):
        t = FIKTuning.from_mapping(tuning, source="tuning option")
    else:
        if isinstance(tuning, (str, PathLike)):
            t = read_tuning(tuning)
        else:
            raise OptionError("tuning must be None (stored tuning), False (built-in defaults), a "
                             f"mapping of options, a FIKTuning or a path, got {tuning!r}")
    if t is None:
        return {}
    opts = {f"hinf_{k}": t.hinf[k] for k in ("m", "w", "s", "v1") if k in t.hinf}
    opts.update(t.options)
    if fixed:
        for key in (*_VARIABLE_ONLY, "A", "refresh"):
            opts.pop(key, None)
    return opts


class _Setup:
    """Validated numeric inputs of the kernel for one solve."""

    __slots__ = ("contexts", "fp", "ip", "v", "ref_q", "ref_w", "gain_kind", "P_const", "callback",
                 "cold", "o", "tuning_id", "hinf", "ref_start", "hard_pins", "v_limbs", "tol_pin")


def _setup(problem: IKProblem, o: dict[str, Any], form: int) -> _Setup:
    skel = problem.skeleton
    m = problem.m
    s = _Setup()
    s.contexts = {}  # _Layout -> _Context
    s.o = o
    fp = np.zeros(K.N_FP)
    ip = np.zeros(K.N_IP, dtype=np.int64)
    tol_p = check_positive("tol_position", o["tol_position"])
    tol_r = check_positive("tol_rotation", o["tol_rotation"])
    fp[K.F_TOLP] = tol_p
    fp[K.F_TOLR] = tol_r
    ip[K.I_MAXIT] = check_count("max_iterations", o["max_iterations"], 0)
    ip[K.I_STALLWIN] = check_count("stall_window", o["stall_window"], 1)
    fp[K.F_STALLREL] = check_real("stall_rel", o["stall_rel"], 0.0, 1.0, hi_open=True)
    A = check_real("A", o["A"], -1e6, 0.0, hi_open=True)
    if form == K.FORM_FIXED and A <= -2.0:
        raise OptionError(f"A must be in (-2, 0) for the fixed-sample form (a stable filter), "
                         f"got {o['A']!r}")
    fp[K.F_A] = A
    h = check_real("h", o["h"], 0.0, None, lo_open=True)
    h_min = h / 64.0 if o["h_min"] is None else check_real("h_min", o["h_min"], 0.0, None,
                                                           lo_open=True)
    if h_min > h:
        raise OptionError(f"h_min ({h_min}) must not exceed h ({h})")
    if form == K.FORM_VARIABLE and h * abs(A) > 2.0:
        raise OptionError(f"h * |A| must be at most 2 (the filter z ← (1 + hA) z + ... is unstable "
                         f"beyond), got h={h}, A={A}")
    fp[K.F_H] = h
    fp[K.F_HMIN] = h_min
    fp[K.F_HMAX] = h
    fp[K.F_GROW] = check_real("step_grow", o["step_grow"], 1.0, 100.0)
    fp[K.F_CUT] = check_real("step_cut", o["step_cut"], 0.0, 1.0, lo_open=True, hi_open=True)
    fp[K.F_REJECT] = 0.0
    s.cold = check_choice("cold_start", o["cold_start"], ("bumpless", "zero"))
    ip[K.I_COLD] = 1 if s.cold == "zero" else 0
    ip[K.I_FORM] = form

    gain = o["gain"]
    s.P_const = None
    if isinstance(gain, str):
        check_choice("gain", gain, _GAINS)
        ip[K.I_GAIN] = _GAINS[gain]
        s.gain_kind = gain
    else:
        try:
            P = np.array(gain, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"gain must be one of {sorted(_GAINS)} or an ({m}, {m}) matrix, got "
                             f"{type(gain).__name__}") from None
        if P.shape != (m, m):
            raise ShapeError(f"gain matrix must have shape ({m}, {m}) (the problem's task rows), "
                             f"got {P.shape}")
        if not np.all(np.isfinite(P)) or np.max(np.abs(P - P.T)) > 1e-9 * max(1.0, np.abs(P).max()):
            raise ValueRangeError("gain matrix must be finite and symmetric")
        if np.linalg.eigvalsh(P).min() <= 0:
            raise ValueRangeError("gain matrix must be positive definite")
        ip[K.I_GAIN] = K.GAIN_CONSTANT
        s.gain_kind = "constant"
        s.P_const = np.ascontiguousarray(P)
    fp[K.F_MUREL] = check_real("damping", o["damping"], 0.0, None, lo_open=True)
    fp[K.F_MUABS] = check_real("damping_abs", o["damping_abs"], 0.0, None)
    fp[K.F_MUFAC] = 1.0
    fp[K.F_MUFACMAX] = check_real("damping_max_factor", o["damping_max_factor"], 1.0, 1e12)
    ip[K.I_REFRESH] = _REFRESH[check_choice("refresh", o["refresh"], _REFRESH)]
    fp[K.F_RRATIO] = check_real("refresh_ratio", o["refresh_ratio"], 0.0, 1.0, lo_open=True)
    fp[K.F_RDQ] = check_real("refresh_dq", o["refresh_dq"], 0.0, None)
    fp[K.F_PSCALE] = check_real("gain_scale", o["gain_scale"], 0.0, None, lo_open=True)
    hm = check_real("hinf_m", o["hinf_m"], 0.0, None, lo_open=True)
    hw = check_real("hinf_w", o["hinf_w"], 0.0, None, lo_open=True)
    hs = o["hinf_s"]
    hs = None if hs is None else check_real("hinf_s", hs, 0.0, None, lo_open=True)
    v1 = o["hinf_v1"]
    v1 = None if v1 is None else check_real("hinf_v1", v1, 0.0, None, lo_open=True)
    s.hinf = (hm, hw, hs, v1)
    fp[K.F_MAXSTEP] = check_real("max_step", o["max_step"], 0.0, None, lo_open=True)

    gains = o["dof_gains"]
    s.v_limbs = None
    if gains is None:
        s.v = np.ones(skel.n_dof)
    elif isinstance(gains, str):
        if gains != "regions":
            raise OptionError(f"dof_gains must be None, 'regions', an (n,) array or a mapping "
                              f"{{dof: gain}}, got {gains!r}")
        s.v = np.array(stiffness.posing_gains(skel))
        # natural posing starts with the trunk held (see _execute)
        trunk = np.isin(np.array(stiffness.dof_regions(skel)), ("root", "spine"))
        s.v_limbs = np.where(trunk, 0.0, s.v) if trunk.any() and not trunk.all() else None
    else:
        s.v, _ = per_dof(skel, "dof_gains", gains, 1.0, positive=True, allow_zero=True)
        if not np.any(s.v > 0):
            raise ValueRangeError("dof_gains must have at least one positive entry")

    # null-space tasks
    limits = o["limits"]
    if not isinstance(limits, (bool, np.bool_)):
        raise OptionError(f"limits must be True or False, got {limits!r}")
    ip[K.I_LIMNULL] = 1 if limits else 0
    fp[K.F_LIMGAIN] = check_real("limit_gain", o["limit_gain"], 0.0, 1.0)
    fp[K.F_LIMMARGIN] = check_real("limit_margin", o["limit_margin"], 0.0, None, lo_open=True)
    # the posture task (tasks/posture.py) lowered to the kernel's (bq, gain·weight) arrays
    ref = o["reference"]
    s.ref_start = isinstance(ref, str)
    if s.ref_start:
        if ref != "start":
            raise OptionError(f"reference must be an (n,) pose, a mapping {{dof: value}}, "
                              f"'start' or None, got {ref!r}")
        ref = skel.rest_q  # a placeholder of the right shape: each solve uses its start pose
    task = posture.from_options(skel, ref, o["reference_gain"], o["reference_weights"])
    s.ref_q, s.ref_w = (None, None) if task is None else (task.reference, task.gain_weights)
    ip[K.I_REF] = 1 if s.ref_w is not None else 0
    if s.ref_w is None:
        s.ref_q = _zeros(skel.n_dof)
        s.ref_w = s.ref_q
    # a fixed reference is a goal the solve iterates to (null_tol); the start pose is not: it
    # only keeps the DoFs the targets do not need where they were, at no extra iterations
    ip[K.I_WAITNULL] = 0 if s.ref_start else ip[K.I_REF]
    hp = o["hard_pins"]
    if not isinstance(hp, (bool, np.bool_)):
        raise OptionError(f"hard_pins must be True or False, got {hp!r}")
    s.hard_pins = bool(hp)
    s.tol_pin = min(check_positive("tol_pin", o["tol_pin"]), tol_p)
    fp[K.F_NULLTOL] = check_positive("null_tol", o["null_tol"])
    fp[K.F_ANULL] = check_real("null_A", o["null_A"], -1.0, 0.0)
    fp[K.F_NULLMAX] = check_real("null_max_step", o["null_max_step"], 0.0, None, lo_open=True)
    fp[K.F_NULLSCALE] = 1.0
    fp[K.F_HNULL] = 1.0
    cb = o["callback"]
    if cb is not None and not callable(cb):
        raise OptionError(f"callback must be callable or None, got {type(cb).__name__}")
    s.callback = cb
    s.fp = fp
    s.ip = ip
    return s


_ZEROS: dict[int, np.ndarray] = {}


def _zeros(n: int) -> np.ndarray:
    z = _ZEROS.get(n)
    if z is None:
        z = np.zeros(n)
        z.setflags(write=False)
        _ZEROS[n] = z
    return z


# --------------------------------------------------------------------------- per-skeleton cache
_SKEL_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _skeleton_arrays(skel: Skeleton) -> tuple:
    """Kernel inputs that depend only on the skeleton (cached)."""
    try:
        return _SKEL_CACHE[skel]
    except KeyError:
        pass
    lim = limits.for_skeleton(skel)  # the limit task's range centres and half-widths
    centre, half = lim.centre, lim.half
    args = kernel_args(skel)
    out = (args, np.ascontiguousarray(skel.lower, dtype=float),
           np.ascontiguousarray(skel.upper, dtype=float), centre, half, {})
    _SKEL_CACHE[skel] = out
    return out


def _dfs_preorder(parents: np.ndarray) -> np.ndarray:
    """Depth-first preorder index of every joint (a subtree is a contiguous range)."""
    nj = len(parents)
    children: list[list[int]] = [[] for _ in range(nj)]
    roots = []
    for j, p in enumerate(parents):
        (roots if p < 0 else children[p]).append(j)
    pre = np.empty(nj, dtype=np.int64)
    stack = list(reversed(roots))
    c = 0
    while stack:
        j = stack.pop()
        pre[j] = c
        c += 1
        stack.extend(reversed(children[j]))
    return pre


class _Layout:
    """Internal task-row layout of a problem (cached per skeleton and site/row layout).

    Sites are sorted by the depth-first order of their joints, so that the sites a DoF moves
    (those in its joint's subtree) are contiguous and so are their task rows: DoF ``d`` moves
    internal rows ``r0[d]:r1[d]``. ``perm[i]`` is the problem's index of internal site ``i``;
    ``row_perm[r]`` the problem's row of internal row ``r``.
    """

    __slots__ = ("perm", "identity", "sites", "rows", "rstart", "struct", "row_perm")


def _problem_arrays(problem: IKProblem) -> _Layout:
    skel = problem.skeleton
    cache = _skeleton_arrays(skel)[5]
    mx = 0
    if problem.tasks:
        for t in problem.tasks:
            if t.kind != "points":
                raise OptionError(
                    f"task {t.name!r} ({type(t).__name__}, kind {t.kind!r}) has no block in "
                    "FIK's compiled loop (site poses and point combinations such as the centre "
                    "of mass do); solve it with solver='dls' or 'pinv'")
        mx = sum(t.rows for t in problem.tasks)
    key = (problem.sites.tobytes(), problem.rows.tobytes(), mx)
    hit = cache.get(key)
    if hit is not None:
        return hit
    pre = cache.get("dfs")
    if pre is None:
        pre = cache["dfs"] = _dfs_preorder(np.asarray(skel.parents))
    site_joint = np.asarray(skel.site_joint)
    sites = np.asarray(problem.sites, dtype=np.int64)
    rows = np.asarray(problem.rows, dtype=np.int64)
    perm = np.argsort(pre[site_joint[sites]], kind="stable")
    lay = _Layout()
    lay.perm = perm
    lay.identity = bool(np.array_equal(perm, np.arange(len(perm))))
    lay.sites = np.ascontiguousarray(sites[perm])
    lay.rows = np.ascontiguousarray(rows[perm])
    lay.rstart = np.ascontiguousarray(np.concatenate([[0], np.cumsum(lay.rows)[:-1]]).astype(np.int64))
    ms = int(rows.sum())
    prob_rstart = np.concatenate([[0], np.cumsum(rows)[:-1]])
    lay.row_perm = np.concatenate(
        [prob_rstart[i] + np.arange(rows[i]) for i in perm] + [np.arange(ms, ms + mx)]
    ).astype(np.int64) if ms + mx else np.zeros(0, dtype=np.int64)
    site_of_row = np.repeat(np.arange(len(perm)), lay.rows).astype(np.int64)
    mask = np.asarray(skel.site_dof_mask)[lay.sites]  # (k, n): DoF moves internal site i
    n = skel.n_dof
    r0 = np.zeros(n, dtype=np.int64)
    r1 = np.zeros(n, dtype=np.int64)
    for d in range(n):
        moved = np.flatnonzero(mask[:, d])
        if len(moved):
            if moved[-1] - moved[0] + 1 != len(moved):  # cannot happen in depth-first order
                raise AssertionError(f"sites moved by DoF {d} are not contiguous")
            r0[d] = lay.rstart[moved[0]]
            r1[d] = lay.rstart[moved[-1]] + lay.rows[moved[-1]]
    rs1 = r1.copy()
    if mx:
        # point tasks (the centre of mass) depend on every DoF: each run extends to the last
        # row (rows between a DoF's sites and the point rows stay zero in the Jacobian)
        r0[r0 == r1] = ms
        r1[:] = ms + mx
    lay.struct = (r0, r1, site_of_row, rs1)
    for arr in (lay.perm, lay.sites, lay.rows, lay.rstart, lay.row_perm, r0, r1, site_of_row, rs1):
        arr.setflags(write=False)
    if len(cache) > 64:
        cache.clear()
        cache["dfs"] = pre
    cache[key] = lay
    return lay


# --------------------------------------------------------------------------- state
def _check_state(state: Any, problem: IKProblem, form_name: str) -> FIKState | None:
    if state is None:
        return None
    if not isinstance(state, FIKState):
        raise OptionError(f"state must be the FIKState of a previous {form_name!r} result "
                         f"(result.state) or None, got {type(state).__name__}")
    skel = problem.skeleton
    if state.form != form_name:
        raise OptionError(f"state comes from solver {state.form!r}, not {form_name!r}; pass "
                         "state=None to restart the filter")
    if state.n_dof != skel.n_dof:
        raise ShapeError(f"state is for a skeleton with {state.n_dof} DoFs, this one has "
                         f"{skel.n_dof}; pass state=None to restart the filter")
    same = (state.sites is problem.sites and state.rows is problem.rows) or (
        state.m == problem.m and np.array_equal(state.sites, problem.sites)
        and np.array_equal(state.rows, problem.rows))
    if not same:
        have = [skel.site_names[i] for i in state.sites] if state.sites.max(initial=-1) < \
            skel.n_sites else list(state.sites)
        raise ShapeError(
            f"state has {state.m} task rows for sites {have}, this problem has {problem.m} rows "
            f"for sites {list(problem.site_names)}; pass state=None to restart the filter")
    return state


def _ro(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (arrays of a fresh solve are not shared: no copy)."""
    a.setflags(write=False)
    return a


# --------------------------------------------------------------------------- solve
def _freeze(value: Any) -> Any:
    """A hashable key for an option value (arrays by content), or raise TypeError."""
    if isinstance(value, np.ndarray):
        return ("nd", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Mapping):
        return ("map", tuple(sorted((str(k), _freeze(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_freeze(v) for v in value))
    hash(value)
    return value


_SETUP_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cached_setup(problem: IKProblem, options: Mapping[str, Any], form: int) -> _Setup:
    """Validated kernel inputs for these options, cached per skeleton (options by value)."""
    skel = problem.skeleton
    try:
        items = [(k, _freeze(v)) for k, v in options.items() if k != "state"]
        if len(items) > 1:
            items.sort()
        key = (form, problem.m, problem.rows.tobytes(), tuple(items))
    except TypeError:
        key = None
    if key is not None:
        per_skel = _SETUP_CACHE.get(skel)
        if per_skel is not None:
            hit = per_skel.get(key)
            if hit is not None and hit.tuning_id == _tuning_identity(skel, options):
                return hit
    o = resolve_options(problem, options, fixed=form == K.FORM_FIXED)
    s = _setup(problem, o, form)
    s.tuning_id = _tuning_identity(skel, options)
    if key is not None:
        per_skel = _SETUP_CACHE.setdefault(skel, {})
        if len(per_skel) > 256:
            per_skel.clear()
        per_skel[key] = s
    return s


def _tuning_identity(skel: Skeleton, options: Mapping[str, Any]) -> int:
    """Changes whenever the stored tunings may have changed (written, cache cleared)."""
    return tuning._GENERATION[0]


class _Context:
    """Everything a solve needs that depends only on the problem's layout and the options:
    kernel model / task / structure arrays, limits, parameter vectors (built once per
    :class:`PreparedFIK`, or per call of :func:`solve` from the caches)."""

    __slots__ = ("s", "name", "fixed", "n", "m", "k", "lay", "model", "struct",
                 "lower", "upper", "centre", "half", "all_sites", "skel", "no_frames", "chains")


def _context(problem: IKProblem, s: _Setup, form: int) -> _Context:
    """The context of ``problem``'s layout with setup ``s`` (cached on ``s`` per layout)."""
    lay = _problem_arrays(problem)
    ctxs = s.contexts
    c = ctxs.get(lay)
    if c is not None:
        return c
    c = _Context()
    skel = problem.skeleton
    c.s, c.skel = s, skel
    c.fixed = form == K.FORM_FIXED
    c.name = NAME_FIXED if c.fixed else NAME
    c.n, c.m, c.k = skel.n_dof, problem.m, problem.k
    margs, c.lower, c.upper, c.centre, c.half, cache = _skeleton_arrays(skel)
    c.lay = lay
    c.chains = None  # natural posing: each site's limb DoFs (_bend.limb_chains), on first use
    c.struct = c.lay.struct
    c.model = (*margs[:9], c.lay.sites, margs[9])
    all_sites = cache.get("all_sites")
    if all_sites is None:
        all_sites = cache["all_sites"] = np.arange(skel.n_sites, dtype=np.int64)
        cache["no_frames"] = (np.empty((0, 3, 3)), np.empty((0, 3)), np.empty((0, 3, 3)),
                              np.empty((0, 3)), all_sites)
    c.all_sites = all_sites
    c.no_frames = cache["no_frames"]
    if len(ctxs) > 16:
        ctxs.clear()
    ctxs[lay] = c
    return c


def _task_arrays(problem: IKProblem, lay: _Layout, hard_pins: bool = True) -> tuple:
    xb = _point_block(problem) if problem.tasks else _no_points(problem.skeleton)
    hard = _hard_rows(problem, lay, hard_pins)
    if lay.identity:
        return (problem.positions, problem.rotations, lay.rows, problem.weights, lay.rstart, xb,
                hard)
    pm = lay.perm
    return (problem.positions[pm], problem.rotations[pm], lay.rows, problem.weights[pm],
            lay.rstart, xb, hard)


def _hard_rows(problem: IKProblem, lay: _Layout, hard_pins: bool) -> np.ndarray:
    """``(m,)`` per internal row: :data:`PIN_DAMPING` on the rows of pinned sites (with
    ``hard_pins``), 0 elsewhere (see ``_fik_kernels._refresh``)."""
    m = problem.m
    if not hard_pins or not problem.pinned.any():
        return _zeros(m)
    hard = np.zeros(m)
    pinned = problem.pinned[lay.perm]
    for i in np.flatnonzero(pinned):
        hard[lay.rstart[i]:lay.rstart[i] + lay.rows[i]] = PIN_DAMPING
    hard.setflags(write=False)
    return hard


def _point_block(problem: IKProblem) -> tuple:
    """Kernel arrays ``(xi, xf)`` of the point-combination tasks (layout:
    :func:`._fik_kernels._point_tasks`)."""
    skel = problem.skeleton
    if not problem.tasks:
        return _no_points(skel)
    pj, po, pc, start, rt, ra, rw, tg = [], [], [], [0], [], [], [], []
    for t, task in enumerate(problem.tasks):
        j, o, c = task.points(skel)
        pj.append(j)
        po.append(np.asarray(o, dtype=float).reshape(-1))
        pc.append(c)
        start.append(start[-1] + len(j))
        for ax in task.axes:
            rt.append(t)
            ra.append(ax)
            rw.append(task.weight)
            tg.append(task.target[ax])
    P, T, mx = start[-1], len(problem.tasks), len(rt)
    xi = np.concatenate([[T, P, mx], *pj, start, rt, ra, _dof_joint(skel)]).astype(np.int64)
    xf = np.concatenate([*po, *pc, rw, tg]).astype(float)
    return (xi, xf)


def _point_targets(xb: tuple) -> np.ndarray:
    """The writable view of the row targets inside a point block's ``xf``."""
    xi, xf = xb
    P, mx = int(xi[1]), int(xi[2])
    return xf[4 * P + mx:4 * P + 2 * mx]


def _no_points(skel: Skeleton) -> tuple:
    """The (cached) empty point block of a problem without point tasks."""
    return cached(skel, "fik.no_points", lambda: (np.zeros(3, dtype=np.int64), np.zeros(0)))


def _dof_joint(skel: Skeleton) -> np.ndarray:
    cache = _skeleton_arrays(skel)[5]
    dj = cache.get("dof_joint")
    if dj is None:
        dj = cache["dof_joint"] = np.ascontiguousarray(skel.dof_joint, dtype=np.int64)
    return dj


def _clipped_q(c: _Context, problem: IKProblem, q0: Any) -> np.ndarray:
    """A fresh copy of ``q0`` within the limits (fast path for a float64 ``(n,)`` array)."""
    if type(q0) is np.ndarray and q0.dtype == np.float64 and q0.shape == (c.n,):
        if not math.isfinite(q0.sum()):  # NaN and inf propagate into the sum
            raise ValueRangeError("q0 contains NaN or infinite values")
        return np.minimum(np.maximum(q0, c.lower), c.upper)
    return check_q0(problem, q0)


def _solve(problem: IKProblem, q0: np.ndarray, options: Mapping[str, Any], form: int) -> IKResult:
    if not isinstance(problem, IKProblem):
        raise OptionError(f"problem must be an IKProblem (see animik.ik.build_problem), got "
                         f"{type(problem).__name__}")
    fixed = form == K.FORM_FIXED
    if fixed:
        bad = sorted(set(options) & set(_VARIABLE_ONLY))
        if bad:
            raise UnknownNameError(
                f"option{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))} belong to the "
                f"variable-step form (solver 'fik'); solver 'fik_fixed' has no step h")
    s = _cached_setup(problem, options, form)
    c = _context(problem, s, form)
    q = _clipped_q(c, problem, q0)
    state = _check_state(options.get("state", None), problem, c.name)
    ref_q = q.copy() if s.ref_start else s.ref_q  # reference="start": this solve's start pose
    return _execute(c, problem, q, state, s.fp.copy(), s.ip.copy(),
                    _task_arrays(problem, c.lay, s.hard_pins), ref_q, s.ref_w, False)


def _execute(c: _Context, problem: IKProblem, q: np.ndarray, state: FIKState | None,
             fp: np.ndarray, ip: np.ndarray, task: tuple, ref_q: np.ndarray, ref_w: np.ndarray,
             want_frames: bool) -> IKResult:
    """Run the solve; with ``dof_gains="regions"`` in two stages.

    Natural posing (a problem with at most :data:`LIMB_STAGE_MAX_TARGETS` targets): the limbs
    alone first (root and trunk DoFs held, at most
    :data:`LIMB_STAGE_ITERATIONS`), then — only if that did not converge — on from where it
    stopped with every DoF at its region's gain. The gains alone cannot do this: from a
    straight limb (a T-pose arm) only the trunk moves the hand along the arm to first order,
    so the dead-beat step gives that motion to the trunk however stiff it is; held in the first
    stage, the limb bends out of its singularity instead.
    """
    s = c.s
    max_it = int(ip[K.I_MAXIT])
    tol_pin = s.tol_pin
    limbs_first = not (s.v_limbs is None or max_it == 0 or problem.tasks
                       or int((~problem.pinned).sum()) > LIMB_STAGE_MAX_TARGETS)
    if not limbs_first:
        r = _execute_stage(c, problem, q, state, fp, ip, task, ref_q, ref_w, want_frames, s.v)
    else:
        fp1, ip1 = fp.copy(), ip.copy()
        ip1[K.I_MAXIT] = min(LIMB_STAGE_ITERATIONS, max(1, max_it // 2))
        bent = _bend_limbs(c, problem, q, task, float(fp[K.F_TOLP]))
        if bent is not None:
            q = bent
        r = _execute_stage(c, problem, q, state, fp1, ip1, task, ref_q,
                           _free_limbs(c, problem, ref_w), want_frames, s.v_limbs)
        if not r.converged:
            r = replace(r, _trunk_joined=True)
            if r.iterations < max_it:
                ip[K.I_MAXIT] = max_it - r.iterations
                r2 = _execute_stage(c, problem, r.q.copy(), r.state, fp, ip, task, ref_q,
                                    ref_w, want_frames, s.v)
                r = replace(r2, iterations=r.iterations + r2.iterations, _trunk_joined=True)
    # restoration (a second, pins-only solve) where a pin can be off by more than tol_pin: a
    # target out of reach, natural posing's second stage (the root and trunk moved), and any
    # natural posing solve — the loop's own tolerance is tol_position for every row, and a
    # warm-started drag frame after a restored one could end converged with a pin 0.3 mm off
    # (body95 foot drags). A no-op when the pins are within tol_pin. Not after the plain
    # converged solves of the per-frame tracking path (prepare_problem): with many pinned
    # sites (fingers) they end a little outside tol_pin on most frames, and restoring there
    # cost 5-15x the frame time (animik bench ik, tracking).
    if s.hard_pins and (not r.converged or r._trunk_joined or limbs_first) \
            and problem.pinned.any() and not problem.tasks:
        r = _restore_pins(c, problem, task, r, tol_pin, want_frames)
    return r


def _bend_limbs(c: _Context, problem: IKProblem, q: np.ndarray, task: tuple,
                tol: float) -> np.ndarray | None:
    """Natural posing's limbs-only stage starts with each targeted limb that rests straight on
    a limit bent to its target's distance (:mod:`animik.ik._bend`; None: nothing to bend)."""
    if c.chains is None:
        c.chains = _bend.limb_chains(c.skel, problem.sites, c.s.v_limbs)
    pos = np.empty((c.k, 3))
    pos[c.lay.perm] = task[0]
    return _bend.bend_straight_limbs(c.skel, q, c.lower, c.upper, c.chains, problem.sites, pos,
                                     ~problem.pinned, tol)


def _free_limbs(c: _Context, problem: IKProblem, ref_w: np.ndarray) -> np.ndarray:
    """The null-space reference weights of the limbs-only stage: none on the targeted limbs.

    The reference keeps the *untouched* parts where they were. On the dragged limb it pulls
    the bend the reach needs back towards the straight start pose (a second-order pull on the
    reach: from a straight arm, each frame undid the last frame's bend and the stage stalled),
    so the dragged limb follows its minimum-norm steps instead."""
    if not ref_w.any():
        return ref_w
    if c.chains is None:
        c.chains = _bend.limb_chains(c.skel, problem.sites, c.s.v_limbs)
    w = np.array(ref_w)
    for i in np.flatnonzero(~problem.pinned):
        w[c.chains[i]] = 0.0
    return w


def _restore_pins(c: _Context, problem: IKProblem, task: tuple, r: IKResult, tol_pin: float,
                  want_frames: bool) -> IKResult:
    """Put pinned sites that drifted more than ``tol_pin`` back: the pins alone, from the
    result, minimum-norm (a no-op when they are within ``tol_pin``, the usual case).

    The hard rows keep the pins to first order at every step; what remains is the
    second-order drift of long steps and of steps clipped at joint limits (up to ~0.5 mm on
    body95 with an unreachable hand), and the slack of the loop's own tolerance
    (``tol_position``). The pins are strictly first: they win over an unreachable target. A
    converged solve keeps its pose when restoring would move a target out of tolerance
    (singular pins, such as straight pinned fingers).
    """
    pins = np.flatnonzero(problem.pinned)
    names = problem.site_names
    if max(r.error[names[i]] for i in pins) <= tol_pin:
        return r
    skel = c.skel
    # this call's targets: the kernel's buffers (a prepared solve updates them per frame)
    perm = c.lay.perm
    pos = np.empty((c.k, 3))
    rot = np.empty((c.k, 3, 3))
    pos[perm] = task[0]
    rot[perm] = task[1]
    problem = problem.with_targets({names[i]: (pos[i] if problem.rows[i] == 3 else (pos[i], rot[i]))
                                    for i in range(c.k)})
    targets = {names[i]: (pos[i] if problem.rows[i] == 3 else (pos[i], rot[i])) for i in pins}
    sub = build_pins_problem(skel, r.q, targets)
    rp = _solve(sub, np.array(r.q), {"dof_gains": None, "reference": None, "limits": False,
                                     "hard_pins": False, "tol_position": tol_pin,
                                     "max_iterations": 30}, K.FORM_VARIABLE)
    ws = problem.workspace().evaluate(np.ascontiguousarray(rp.q), jacobian=False)
    se = ws.site_error
    item_names = problem.item_names if problem.tasks else names
    err = {nm: float(se[i, 0]) for i, nm in enumerate(item_names)}
    ang = {nm: float(se[i, 1]) for i, nm in enumerate(names) if problem.rows[i] == 6}
    o = c.s.o
    if r.converged and not ws.converged(float(o["tol_position"]), float(o["tol_rotation"])):
        # restoring singular pins (straight fingers) would cost the reach: keep the solve's
        # pose, whose pins are within the loop's tolerance
        return r
    return replace(r, q=rp.q, error=err, angle_error=ang,
                   _frames=None if not want_frames else rp.fk, _skeleton=skel)


def _execute_stage(c: _Context, problem: IKProblem, q: np.ndarray, state: FIKState | None,
                   fp: np.ndarray, ip: np.ndarray, task: tuple, ref_q: np.ndarray,
                   ref_w: np.ndarray, want_frames: bool, v: np.ndarray) -> IKResult:
    """Run the kernel from ``q`` (a fresh, clipped copy; becomes ``result.q``) and build the
    result. ``fp`` / ``ip`` are this call's parameter vectors (modified). ``want_frames``: the
    kernel copies out the frames at the final pose (``result.fk`` without a second FK pass;
    otherwise ``result.fk`` is computed on first access)."""
    s, lay = c.s, c.lay
    n, m, k, fixed = c.n, c.m, c.k, c.fixed
    zs = np.zeros((3, m))  # z, z_e, bz (state views)
    z, z_e, bz = zs[0], zs[1], zs[2]
    full = s.gain_kind == "full"
    L = np.zeros((m, m) if full else (1, 1))
    Pm = np.zeros((1, 1) if full or s.gain_kind == "scalar" else (m, m))
    scal = np.zeros(1)
    p_q = q.copy()
    blocked = np.zeros(n, dtype=np.bool_)
    if state is not None:
        z[:] = state.z
        z_e[:] = state.z_e
        bz[:] = state.bz
        blocked[:] = state.blocked
        ip[K.I_WARM] = 1
        if not fixed:
            fp[K.F_H] = min(max(state.h, fp[K.F_HMIN]), fp[K.F_HMAX])
        if state.gain_valid and state.gain == s.gain_kind and s.gain_kind != "constant":
            if state.gain == "full":
                L[:, :] = state.factor
            elif state.gain == "scalar":
                scal[0] = state.scalar
            else:
                Pm[:, :] = state.factor
            p_q[:] = state.gain_q
            ip[K.I_PVALID] = 1
    if s.P_const is not None:  # the caller's P is in the problem's row order
        Pm[:, :] = s.P_const[np.ix_(lay.row_perm, lay.row_perm)]
        ip[K.I_PVALID] = 1
    elif s.gain_kind == "hinf":
        # H∞ gain of eq 13 at the start pose (closed form), constant for this frame
        jac = problem.workspace().evaluate(q).jac[lay.row_perm]
        hm, hw, hs, v1 = s.hinf
        Pm[:, :], _, _ = hinf_gain(jac, s.v, hm, hw, hs, v1)
        ip[K.I_PVALID] = 1

    info = np.zeros(4, dtype=np.int64)
    fout = np.zeros(2)
    se = np.zeros((k + len(problem.tasks), 2))
    skel = c.skel
    if want_frames:
        nj, ns = skel.n_joints, skel.n_sites
        frames = (np.empty((nj, 3, 3)), np.empty((nj, 3)), np.empty((ns, 3, 3)),
                  np.empty((ns, 3)), c.all_sites)
    else:
        frames = c.no_frames
    if s.callback is None:
        K.fik_loop(q, c.lower, c.upper, v, c.model, task, c.struct, z, z_e, bz, L, Pm, scal,
                   p_q, blocked, c.centre, c.half, ref_q, ref_w, fp, ip, info, fout, se, frames)
        iterations, reason = int(info[0]), K.REASONS[int(info[1])]
    else:
        iterations, reason = _loop_with_callback(
            s, v, fp, ip, q, c.lower, c.upper, c.model, task, c.struct, z, z_e, bz, L, Pm, scal,
            p_q, blocked, c.centre, c.half, ref_q, ref_w, info, fout, se, frames)

    if not lay.identity:
        se_int = se
        se = np.empty_like(se_int)
        se[lay.perm] = se_int[:k]
        se[k:] = se_int[k:]
    new_state = FIKState(
        form=c.name, n_dof=n, sites=problem.sites, rows=problem.rows,
        row_perm=lay.row_perm, z=_ro(z),
        z_e=_ro(z_e), bz=_ro(bz), gain=s.gain_kind,
        factor=_ro(L if s.gain_kind == "full" else Pm), scalar=float(scal[0]),
        gain_q=_ro(p_q), gain_valid=bool(ip[K.I_PVALID]), blocked=_ro(blocked),
        h=float(fp[K.F_H]), refreshes=int(info[2]), rejected=int(info[3]))
    names = problem.item_names if problem.tasks else problem.site_names
    err = {nm: float(se[i, 0]) for i, nm in enumerate(names)}
    ang = {nm: float(se[i, 1]) for i, nm in enumerate(problem.site_names) if problem.rows[i] == 6}
    q.setflags(write=False)
    if want_frames:
        fk = FKResult(_ro(frames[0]), _ro(frames[1]), _ro(frames[2]), _ro(frames[3]))
        return IKResult(q=q, converged=reason == "converged", iterations=iterations, error=err,
                        angle_error=ang, state=new_state, reason=reason, solver=c.name,
                        _frames=fk)
    return IKResult(q=q, converged=reason == "converged", iterations=iterations, error=err,
                    angle_error=ang, state=new_state, reason=reason, solver=c.name,
                    _skeleton=skel)


def _loop_with_callback(s: _Setup, v, fp, ip, q, lower, upper, model, task, struct, z, z_e,
                        bz, L, Pm, scal, p_q, blocked, centre, half, ref_q, ref_w, info, fout, se,
                        frames) -> tuple[int, str]:
    """The kernel one iteration per call, so that ``callback`` sees every iterate (the
    loop-carried scalars live in ``fp`` / ``ip``: the run is the same as one call's)."""
    fp_out, ip_out = fp, ip
    fp, ip = fp.copy(), ip.copy()
    max_it = int(ip[K.I_MAXIT])
    stall = StallDetector(int(ip[K.I_STALLWIN]), float(fp[K.F_STALLREL]))
    ip[K.I_STALLWIN] = 1 << 30
    if ip[K.I_REFRESH] == K.REFRESH_ONCE:
        ip[K.I_REFRESH] = K.REFRESH_AUTO  # "once" would refresh on every call
    it = 0
    refreshes = rejected = 0
    reason = "max_iterations"
    while True:
        ip[K.I_MAXIT] = 0 if it >= max_it else 1
        K.fik_loop(q, lower, upper, v, model, task, struct, z, z_e, bz, L, Pm, scal, p_q,
                   blocked, centre, half, ref_q, ref_w, fp, ip, info, fout, se, frames)
        refreshes += int(info[2])
        rejected += int(info[3])
        ip[K.I_WARM] = 1
        if it == 0:
            s.callback(0, q.copy(), float(fout[0]))
        if info[0] == 0:  # converged (or capped) without a step
            reason = K.REASONS[int(info[1])]
            break
        it += 1
        if info[3] == 0:  # the step was taken (a rejected step leaves q unchanged)
            s.callback(it, q.copy(), float(fout[0]))
        if info[1] == K.REASON_STALLED:
            reason = "stalled"
            break
        if stall.update(it, float(fout[0])):
            reason = "stalled"
            break
    fp_out[K.F_H] = fp[K.F_H]
    ip_out[K.I_PVALID] = ip[K.I_PVALID]
    info[0], info[2], info[3] = it, refreshes, rejected
    return it, reason


# --------------------------------------------------------------------------- trusted per-frame path
class PreparedFIK:
    """A validated FIK problem for per-frame solves (``animik.ik.prepare_ik``; docs/fik.md §9).

    Everything that does not change from frame to frame — the problem's sites, rows and
    weights, the solver options (with the stored tuning), the kernel's layout arrays — is
    validated and built once here. :meth:`solve` then takes only what a frame changes (the
    pose, target poses, a reference pose, the previous state, the iteration cap) with cheap
    checks (shape, finiteness) and no option re-validation or problem rebuilding.

    Not thread-safe: the target buffers are reused between calls (use one per thread).

    Attributes:
        problem: the :class:`~animik.ik.IKProblem` at preparation (its targets are only the
            initial values of the buffers below).
        site_names: ``(k,)`` targeted and pinned sites, the row order of ``positions``.
        positions: ``(k, 3)`` current target positions (read-only view), m.
    """

    def __init__(self, problem: IKProblem, options: Mapping[str, Any], form: int = K.FORM_VARIABLE):
        if not isinstance(problem, IKProblem):
            raise OptionError(f"problem must be an IKProblem (see animik.ik.build_problem), got "
                             f"{type(problem).__name__}")
        options = dict(options)
        if options.get("state") is not None:
            raise OptionError("state is per frame: pass it to solve(q, state=...), not to "
                             "prepare_ik")
        options.pop("state", None)
        # reference_weights may come without a reference: the reference pose is then given
        # per frame (solve(q, reference=...)) and weighted by them
        ref_weights = options.get("reference_weights")
        if options.get("reference") is None and ref_weights is not None:
            options.pop("reference_weights")
        if "callback" in options and options["callback"] is not None:
            raise OptionError("callback is not supported by a prepared solve (it steps the kernel "
                             "one iteration per call); use solve_ik(..., callback=...)")
        fixed = form == K.FORM_FIXED
        if fixed:
            bad = sorted(set(options) & set(_VARIABLE_ONLY))
            if bad:
                raise UnknownNameError(f"options {bad} belong to the variable-step form (solver "
                                       "'fik'); solver 'fik_fixed' has no step h")
        o = resolve_options(problem, options, fixed=fixed)
        self._s = _setup(problem, o, form)
        self._c = _context(problem, self._s, form)
        c = self._c
        self.problem = problem
        self.site_names = problem.site_names
        self._state = None
        lay = c.lay
        # task buffers in the kernel's (depth-first) site order, refilled per frame
        self._pos = np.ascontiguousarray(problem.positions[lay.perm])
        self._rot = np.ascontiguousarray(problem.rotations[lay.perm])
        self._task = (self._pos, self._rot, lay.rows, np.ascontiguousarray(problem.weights[lay.perm]),
                      lay.rstart, _point_block(problem), _hard_rows(problem, lay, self._s.hard_pins))
        self._index = {nm: i for i, nm in enumerate(problem.site_names)}
        self._task_rows: dict[str, tuple[int, int]] = {}
        r = 0
        for t, task in enumerate(problem.tasks):
            self._task_rows[task.name] = (t, r)
            r += task.rows
        if problem.tasks:  # own copy of the point block: its targets change per frame
            xi, xf = self._task[5]
            self._task = (*self._task[:5], (xi, xf.copy()), self._task[6])
        self._inv = np.empty(c.k, dtype=np.int64)  # problem index -> internal index
        self._inv[lay.perm] = np.arange(c.k)
        # reference task: the prepared weights (gain · weight per DoF) apply to any per-frame
        # reference pose given as an array
        g = check_real("reference_gain", o["reference_gain"], 0.0, 1.0, lo_open=True)
        if ref_weights is None:
            ref_weights = o["reference_weights"]
        if ref_weights is None:
            self._ref_w_frame = np.full(c.n, g)
        else:
            w, _ = per_dof(problem.skeleton, "reference_weights", ref_weights, 0.0,
                           positive=True)
            if not np.any(w > 0):
                raise ValueRangeError("reference task has no DoF with a positive weight")
            self._ref_w_frame = np.ascontiguousarray(g * w)
        self._ref_q = np.empty(c.n)

    @property
    def positions(self) -> np.ndarray:
        """``(k, 3)`` current target positions in :attr:`site_names` order (read-only), m."""
        out = np.empty((self._c.k, 3))
        out[self._c.lay.perm] = self._pos
        out.setflags(write=False)
        return out

    @property
    def options(self) -> dict[str, Any]:
        """The resolved options (defaults, stored tuning, explicit) the solver runs with."""
        return dict(self._s.o)

    def solve(self, q: np.ndarray, *, targets: Mapping[str, Any] | None = None,
              positions: np.ndarray | None = None, reference: np.ndarray | None = None,
              state: FIKState | None = None, max_iterations: int | None = None,
              stall_window: int | None = None, stall_rel: float | None = None) -> IKResult:
        """One solve from ``q`` with this frame's targets.

        Args:
            q: start pose ``(n_dof,)`` (float64; clipped into the limits; finiteness checked).
            targets: ``{site: position}`` or ``{site: (position, rotation)}`` for some of the
                sites (validated like :func:`animik.ik.build_problem`); the others keep their
                last target. Changes persist to later calls.
            positions: ``(k, 3)`` target positions of every site in :attr:`site_names` order
                (the cheapest update; checked for shape and finiteness only). Persists.
            reference: ``(n_dof,)`` reference pose of the null-space task for this call (clipped
                into the limits), weighted by the prepared ``reference_gain`` ·
                ``reference_weights``; ``None``: the prepared ``reference`` option (if any).
            state: the previous frame's ``result.state`` (warm start), or None.
            max_iterations, stall_window, stall_rel: override the prepared values for this call.

        Returns:
            :class:`~animik.ik.IKResult` with ``fk`` (every joint and site frame at ``q``).

        Raises:
            ShapeError: bad shapes, a ``state`` of another problem's rows or DoFs.
            ValueRangeError: non-finite values. OptionError: a ``state`` of another solver.
            UnknownNameError: a target site that is not part of the prepared problem.
        """
        c, s = self._c, self._s
        if positions is not None:
            if type(positions) is not np.ndarray or positions.shape != (c.k, 3):
                positions = np.asarray(positions, dtype=float)
                if positions.shape != (c.k, 3):
                    raise ShapeError(f"positions must have shape ({c.k}, 3) (sites "
                                     f"{list(self.site_names)}), got {positions.shape}")
            if not math.isfinite(positions.sum()):
                raise ValueRangeError("positions contain NaN or infinite values")
            if c.lay.identity:
                self._pos[:] = positions
            else:
                self._pos[:] = positions[c.lay.perm]
        if targets is not None:
            self._set_targets(targets)
        q = _clipped_q(c, self.problem, q)
        if state is not None and state is not self._state:
            state = _check_state(state, self.problem, c.name)
            self._state = state
        fp, ip = s.fp.copy(), s.ip.copy()
        if max_iterations is not None:
            ip[K.I_MAXIT] = check_count("max_iterations", max_iterations, 0)
        if stall_window is not None:
            ip[K.I_STALLWIN] = check_count("stall_window", stall_window, 1)
        if stall_rel is not None:
            fp[K.F_STALLREL] = check_real("stall_rel", stall_rel, 0.0, 1.0, hi_open=True)
        ref_q, ref_w = s.ref_q, s.ref_w
        if reference is None and s.ref_start:
            self._ref_q[:] = q  # reference="start": this call's start pose
            ref_q = self._ref_q
        if reference is not None:
            r = reference
            if type(r) is not np.ndarray or r.shape != (c.n,):
                r = np.asarray(r, dtype=float)
                if r.shape != (c.n,):
                    raise ShapeError(f"reference must have shape ({c.n},), got {r.shape}")
            if not math.isfinite(r.sum()):
                raise ValueRangeError("reference contains NaN or infinite values")
            np.minimum(np.maximum(r, c.lower), c.upper, out=self._ref_q)
            ref_q, ref_w = self._ref_q, self._ref_w_frame
            ip[K.I_REF] = 1
            ip[K.I_WAITNULL] = 1
        result = _execute(c, self.problem, q, state, fp, ip, self._task, ref_q, ref_w, True)
        self._state = result.state
        return result

    @property
    def sequence_supported(self) -> bool:
        """Whether :meth:`solve_sequence` can run this problem: gain ``"full"`` or
        ``"scalar"``, no tasks, and every solve a single stage (no natural-posing limb stage,
        no pin restoration)."""
        c, s, p = self._c, self._s, self.problem
        return (s.gain_kind in ("full", "scalar") and s.P_const is None and not p.tasks
                and (s.v_limbs is None or int((~p.pinned).sum()) > LIMB_STAGE_MAX_TARGETS)
                and not (s.hard_pins and p.pinned.any()) and c.k == len(p.site_names))

    def solve_sequence(self, positions: np.ndarray, references: np.ndarray, *,
                       iterations: int, first_iterations: int, tol: float,
                       catch_tol: float, jump: float, skip_sites: tuple[str, ...] = (),
                       stall_window: int = 5, stall_rel: float = 1e-3
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Warm-started solves of a whole sequence in one compiled call.

        Frame ``t`` is :meth:`solve` ``(q, positions=positions[t], reference=references[t],
        state=previous state, max_iterations=iterations)`` (frame 0: from ``references[0]``, no
        state, ``first_iterations``); when that frame ends on its cap, not converged even to
        ``catch_tol`` and its targets moved more than ``jump`` since the previous frame, a
        second solve continues it (``max(first_iterations − its iterations, 1)`` iterations,
        ``stall_window`` / ``stall_rel``) — what :meth:`animik.retarget.Retargeter.step` does
        frame after frame, with the same results (:mod:`animik.ik._fik_sequence`). A frame
        counts as converged when every site but ``skip_sites`` is within ``tol`` (m).

        Args:
            positions: ``(T, k, 3)`` targets of every site in :attr:`site_names` order, m.
            references: ``(T, n_dof)`` null-space reference poses (clipped into the limits).

        Returns:
            ``(q (T, n_dof), iterations (T,))``. The prepared solver's last-state and target
            buffers are left at the last frame's.

        Raises:
            OptionError: a problem :attr:`sequence_supported` says no to.
            ShapeError / ValueRangeError: bad shapes, non-finite values.
        """
        if not self.sequence_supported:
            raise OptionError("solve_sequence needs gain 'full' or 'scalar', no tasks and "
                             "single-stage solves (no natural posing, no pins)")
        c, s = self._c, self._s
        pos = np.ascontiguousarray(positions, dtype=float)
        ref = np.ascontiguousarray(references, dtype=float)
        if pos.ndim != 3 or pos.shape[1:] != (c.k, 3) or ref.shape != (pos.shape[0], c.n):
            raise ShapeError(f"positions must have shape (T, {c.k}, 3) and references (T, {c.n}), "
                             f"got {pos.shape} and {ref.shape}")
        if not (math.isfinite(pos.sum()) and math.isfinite(ref.sum())):
            raise ValueRangeError("positions / references contain NaN or infinite values")
        T, m = pos.shape[0], c.m
        full = s.gain_kind == "full"
        bufs = (np.zeros(m), np.zeros(m), np.zeros(m), np.zeros((m, m) if full else (1, 1)),
                np.zeros((1, 1)), np.zeros(1), np.zeros(c.n), np.zeros(1),
                np.zeros(1, dtype=np.int64), np.zeros(c.n, dtype=np.bool_))
        names = self.problem.site_names
        count = np.array([names[i] not in skip_sites for i in c.lay.perm], dtype=np.bool_)
        q = np.empty((T, c.n))
        its = np.zeros(T, dtype=np.int64)
        if T:
            fik_sequence(pos, ref, np.ascontiguousarray(c.lay.perm, dtype=np.int64), c.lower,
                         c.upper, s.v, c.model, self._task, c.struct, bufs, c.centre, c.half,
                         self._ref_w_frame, s.fp, s.ip, c.fixed, full,
                         check_count("first_iterations", first_iterations, 0),
                         check_count("iterations", iterations, 0), count, float(tol),
                         float(catch_tol), float(jump), check_count("stall_window", stall_window, 1),
                         check_real("stall_rel", stall_rel, 0.0, 1.0, hi_open=True), c.no_frames,
                         q, its)
        self._state = None  # the sequence's states were never objects
        return q, its

    def _set_targets(self, targets: Mapping[str, Any]) -> None:
        if not isinstance(targets, Mapping):
            raise OptionError(f"targets must be a mapping of site name to target, got "
                             f"{type(targets).__name__}")
        rows = self.problem.rows
        for name, tgt in targets.items():
            i = self._index.get(name)
            if i is None and name in self._task_rows:
                t, r = self._task_rows[name]
                task = self.problem.tasks[t].with_target(tgt)  # validates
                _point_targets(self._task[5])[r:r + task.rows] = task.target[list(task.axes)]
                continue
            if i is None:
                raise UnknownNameError(
                    f"site {name!r} is not part of this problem; its sites are "
                    f"{names_hint(self.site_names)}")
            p, r = _parse_target(name, tgt)
            if (r is None) != (rows[i] == 3):
                raise OptionError(f"target {name!r}: cannot change between position and pose")
            j = self._inv[i]
            self._pos[j] = p
            if r is not None:
                self._rot[j] = r


def prepare(problem: IKProblem, **options: Any) -> PreparedFIK:
    """:class:`PreparedFIK` for ``solver="fik"`` (options validated once)."""
    return PreparedFIK(problem, options, K.FORM_VARIABLE)


def prepare_fixed(problem: IKProblem, **options: Any) -> PreparedFIK:
    """:class:`PreparedFIK` for ``solver="fik_fixed"``."""
    return PreparedFIK(problem, options, K.FORM_FIXED)
