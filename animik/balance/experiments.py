"""Seed E's four experiments: a corner at constant speed, closed loop on the two-mass plant.

Common setting (seed E): horizon 2 s, ``T`` = 100 ms, ``N`` = 20; the reference moves at constant
speed along +x, then its direction turns abruptly by 90° (to +y) mid-way — an infeasible
reference (infinite acceleration). The MPC sees the reference over its horizon (it is known in
advance), so it can anticipate the corner.

1. α1 = α2 = 100, α3 = 10, α4 = 0.0001: tracking first.
2. α3 = 500000: robustness first.
3. the one-mass model (the whole mass at the base height, the upper body carried rigidly) with
   the weights of 1, at high speed, against the two-mass model in the same run.
4. open loop: the controller's own prediction replaces the measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..skeleton import Skeleton
from .cop import support_margin, zeta
from .full_body import FullBody
from .horizon import advance
from .mpc import BalanceMPC
from .params import BalanceError, RobotModel, Weights
from .plant import Disturbances, PlantSamples, TwoMassPlant

SEED_WEIGHTS = Weights(velocity=100.0, position=100.0, robustness=10.0, jerk=1e-4)
"""Experiment 1's weights (seed E)."""


@dataclass(frozen=True)
class CornerReference:
    """Constant speed along ``d1`` until ``turn_time``, then along ``d2``; starts at the origin.

    Attributes:
        speed: m/s. turn_time: s. d1, d2: unit directions (2,). start: (2,) start position, m.
    """

    speed: float
    turn_time: float
    d1: tuple = (1.0, 0.0)
    d2: tuple = (0.0, 1.0)
    start: tuple = (0.0, 0.0)

    def velocity(self, t) -> np.ndarray:
        t = np.asarray(t, float)[..., None]
        return self.speed * np.where(t < self.turn_time, np.array(self.d1), np.array(self.d2))

    def position(self, t) -> np.ndarray:
        t = np.asarray(t, float)[..., None]
        before = np.minimum(t, self.turn_time)
        after = np.maximum(t - self.turn_time, 0.0)
        return np.array(self.start) + self.speed * (before * np.array(self.d1)
                                                    + after * np.array(self.d2))


@dataclass(frozen=True)
class Experiment:
    """One configuration of the corner experiment."""

    number: int
    title: str
    weights: Weights = SEED_WEIGHTS
    one_mass: bool = False
    closed_loop: bool = True
    speed: float = 0.5
    duration: float = 10.0
    turn_time: float = 5.0
    period: float = 0.1
    steps: int = 20
    max_acceleration: float | None = None  # overrides the rig's (experiment 3's high-speed run)
    disturbances: Disturbances = Disturbances(slip=0.03, kick_std=0.005,
                                              pushes=((7.5, (0.0, -0.15)),), seed=1)


EXPERIMENTS: dict[int, Experiment] = {
    1: Experiment(1, "tracking first: alpha1 = alpha2 = 100, alpha3 = 10, alpha4 = 1e-4"),
    2: Experiment(2, "robustness first: alpha3 = 500000",
                  weights=replace(SEED_WEIGHTS, robustness=500000.0)),
    3: Experiment(3, "one-mass model, weights of 1, high speed", one_mass=True, speed=1.4,
                  max_acceleration=3.0),
    4: Experiment(4, "open loop, weights of 1", closed_loop=False),
}


@dataclass
class RunResult:
    """A run: metrics (JSON-ready) and the time series for plots."""

    experiment: Experiment
    metrics: dict
    series: dict = field(repr=False)
    plan_times: np.ndarray = field(repr=False, default=None)


PLANTS = ("two-mass", "full-body")


def run(exp: Experiment, model: RobotModel, solver: str | None = None, substeps: int = 10,
        one_mass: bool | None = None, closed_loop: bool | None = None,
        record: list | None = None, plant: str = "two-mass",
        skeleton: Skeleton | None = None, pose: str = "leg") -> RunResult:
    """Run the corner experiment ``exp`` on the two-mass plant (or the full body).

    Args:
        exp: the configuration.
        model: the robot (``RobotModel.from_rig(load_rig("wheeled20"))``).
        solver: QP solver name (default: the first installed).
        substeps: plant samples per period.
        one_mass, closed_loop: override the experiment's choice (experiment 3 runs both models).
        record: if a list, each cycle's MPC input ``(body, base, vel_ref, pos_ref)`` is appended
            (``animik bench balance`` replays them).
        plant: ``"two-mass"`` or ``"full-body"``: the rig ``skeleton`` posed from the two-mass
            state at every sample, the CoP (and every CoP figure) its full-body one
            (:class:`~animik.balance.full_body.FullBody`); ``cop_model_gap_*`` compare the two.
        skeleton: the rig (needed for the full-body plant).
        pose: how the full body follows ``c``: ``"leg"`` or ``"ik"`` (:class:`FullBody`).
    """
    if plant not in PLANTS:
        raise BalanceError(f"plant must be one of {PLANTS}, got {plant!r}")
    if plant == "full-body" and skeleton is None:
        raise BalanceError("the full-body plant needs the rig (skeleton=...)")
    one_mass = exp.one_mass if one_mass is None else one_mass
    closed_loop = exp.closed_loop if closed_loop is None else closed_loop
    if exp.max_acceleration is not None:
        model = model.replace(max_acceleration=exp.max_acceleration)
    mpc = BalanceMPC(model, exp.weights, exp.period, exp.steps, one_mass=one_mass, solver=solver)
    ref = CornerReference(exp.speed, exp.turn_time)
    full_body = FullBody(skeleton, method=pose) if plant == "full-body" else None
    plant_name = plant
    plant = TwoMassPlant(model, exp.disturbances, rigid=one_mass, full_body=full_body)
    samples = PlantSamples()
    plant._record(samples)
    t_k = exp.period * np.arange(1, exp.steps + 1)
    n_cycles = int(round(exp.duration / exp.period))
    est_body, est_base = plant.body.copy(), plant.base.copy()  # open loop: the model's own state
    cycle_ms, statuses = [], []
    for i in range(n_cycles):
        t = i * exp.period
        if closed_loop:  # seed E: the measured state is the initial state of each cycle
            body, base = plant.body.copy(), plant.base.copy()
        else:
            body, base = est_body, est_base
        vel_ref, pos_ref = ref.velocity(t + t_k), ref.position(t + t_k)
        if record is not None:
            record.append((body.copy(), base.copy(), vel_ref, pos_ref))
        res = mpc.solve(body, base, vel_ref, pos_ref)
        cycle_ms.append(res.solve_ms)
        statuses.append(res.status)
        plant.step(res.body_jerk[0], res.base_jerk[0], exp.period, substeps, samples)
        if not closed_loop:
            est_base = advance(est_base, res.base_jerk[0], exp.period)
            est_body = est_base.copy() if one_mass else advance(est_body, res.body_jerk[0], exp.period)
    s = samples.arrays()
    s["ref"] = ref.position(s["t"])
    s["ref_vel"] = ref.velocity(s["t"])
    s["zeta"] = zeta(model, s["cop"], s["base"], s["body"], exp.weights.zeta_f)
    s["margin"] = support_margin(model, s["cop"], s["base"])
    metrics = _metrics(exp, model, s, ref, cycle_ms, statuses, one_mass, closed_loop, mpc.solver)
    gap = np.linalg.norm(s["cop"] - s["cop_model"], axis=1)
    metrics |= {"plant": plant_name if full_body is None else f"{plant_name} ({pose})",
                "cop_model_gap_max_m": float(np.nanmax(gap)),
                "cop_model_gap_rms_m": float(np.sqrt(np.nanmean(gap ** 2))),
                "com_error_max_m": float(s["com_error"].max()),
                "com_unreached_samples": int(np.sum(s["com_error"] > 1e-3))}
    return RunResult(exp, metrics, s)


def _anticipation(s: dict, ref: CornerReference) -> float:
    """How long before the reference turns the base starts turning, s (0 if it does not).

    "Turning": the base velocity component towards the new direction (perpendicular to the old
    one) above 5 % of the speed. We take the start of the last uninterrupted stretch above that
    threshold that reaches the turn, so noise earlier on does not count.
    """
    d1, d2 = np.array(ref.d1), np.array(ref.d2)
    perp = d2 - (d2 @ d1) * d1
    perp /= np.linalg.norm(perp)
    lateral = s["base_vel"] @ perp
    above = lateral > 0.05 * ref.speed
    t = s["t"]
    idx = int(np.searchsorted(t, ref.turn_time))
    if idx >= len(t) or not above[min(idx, len(t) - 1)]:
        return 0.0
    j = idx
    while j > 0 and above[j - 1]:
        j -= 1
    return float(max(ref.turn_time - t[j], 0.0))


def _metrics(exp, model, s, ref, cycle_ms, statuses, one_mass, closed_loop, solver) -> dict:
    err = np.linalg.norm(s["base"] - s["ref"], axis=1)
    d_cop = np.linalg.norm(s["cop"] - s["base"], axis=1)
    corner = (s["t"] >= exp.turn_time - 1.0) & (s["t"] <= exp.turn_time + 2.0)
    # measured base jerk from the sampled accelerations (the plant's own, at the period)
    acc = s["base_acc"]
    dt = s["t"][1] - s["t"][0]
    jerk = np.linalg.norm(np.diff(acc, axis=0), axis=1) / dt
    return {
        "experiment": exp.number,
        "title": exp.title,
        "model": "one-mass" if one_mass else "two-mass",
        "loop": "closed" if closed_loop else "open",
        "solver": solver,
        "speed_m_s": exp.speed,
        "weights": {"alpha1": exp.weights.velocity, "alpha2": exp.weights.position,
                    "alpha3": exp.weights.robustness, "alpha4": exp.weights.jerk,
                    "alpha5": exp.weights.stability, "zeta_f": exp.weights.zeta_f},
        "support_radius_m": model.support_radius,
        "max_base_acceleration_m_s2": model.max_acceleration,
        "tracking_rmse_m": float(np.sqrt(np.mean(err ** 2))),
        "corner_tracking_rmse_m": float(np.sqrt(np.mean(err[corner] ** 2))) if corner.any() else None,
        # a NaN CoP (the full body would need a pulling floor, F_z <= 0) counts as outside
        "max_cop_base_distance_m": float(np.nanmax(d_cop)),
        "max_zeta": float(np.nanmax(s["zeta"])),
        "min_support_margin_m": float(np.nanmin(s["margin"])),
        "cop_outside_samples": int(np.sum(~(s["margin"] >= 0.0))),
        "cop_outside_octagon_circle_samples": int(np.sum(~(d_cop <= model.support_radius + 1e-9))),
        "cop_undefined_samples": int(np.sum(np.isnan(s["cop"]).any(axis=1))),
        "samples": int(len(s["t"])),
        "anticipation_s": round(_anticipation(s, ref), 6),
        "final_position_error_m": float(err[-1]),
        "base_jerk_rms_m_s3": float(np.sqrt(np.mean(jerk ** 2))),
        "cycle_ms_median": float(np.median(cycle_ms)),
        "cycle_ms_p99": float(np.percentile(cycle_ms, 99)),
        "infeasible_cycles": int(sum(st != "optimal" for st in statuses)),
        "cycles": len(statuses),
    }


def run_experiment(number: int, model: RobotModel, solver: str | None = None,
                   experiment: Experiment | None = None, plant: str = "two-mass",
                   skeleton: Skeleton | None = None, pose: str = "leg") -> list[RunResult]:
    """Run experiment ``number`` (1–4); returns its runs (3 and 4 add the comparison run:
    the two-mass model, resp. the closed loop, in the same setting). ``experiment`` replaces
    the built-in configuration (weights, horizon... changed); ``plant``, ``skeleton``: see
    :func:`run`; ``pose``: see :func:`run`."""
    if number not in EXPERIMENTS:
        raise BalanceError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {number!r}")
    exp = EXPERIMENTS[number] if experiment is None else experiment
    kw = {"plant": plant, "skeleton": skeleton, "pose": pose}
    runs = [run(exp, model, solver, **kw)]
    if number == 3:
        runs.append(run(exp, model, solver, one_mass=False, **kw))
    if number == 4:
        runs.append(run(exp, model, solver, closed_loop=True, **kw))
    return runs

