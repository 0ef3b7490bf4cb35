"""Per-clip quality report of a retarget: effector errors, foot skate, ground penetration,
joint-limit violations, convergence.

Lengths in the report are centimetres (fields end in ``_cm``): they are meant to be read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..semantics.contacts import contact_phases

#: Quality goals checked by :attr:`RetargetReport.goals`.
GOALS_CM = {"hand_foot_mean_error": 1.0, "skate_per_contact": 1.0, "penetration": 0.5}


@dataclass(frozen=True)
class EffectorStats:
    """Position error of one effector site against its retarget target over the clip.

    Attributes:
        site: target site name; ``role``: ``l_hand`` … ``head``, ``root``, or ``l_ball`` /
            ``r_ball`` (the soft ball sites under a toe-less source's feet).
        mean_error_cm, max_error_cm: mean / largest distance to the target, cm.
        within_1cm: fraction of frames within 1 cm.
    """

    site: str
    role: str
    mean_error_cm: float
    max_error_cm: float
    within_1cm: float


@dataclass(frozen=True)
class FootStats:
    """Contacts of one foot.

    Attributes:
        site: foot site; ``contacts``: number of contact phases; ``contact_frames``: frames in
            contact.
        max_skate_cm: largest horizontal slide of the foot within one contact (from where the
            contact started), cm; ``mean_skate_cm``: the mean over contacts.
        max_penetration_cm: deepest point of the foot site below the ground over the clip, cm.
    """

    site: str
    contacts: int
    contact_frames: int
    max_skate_cm: float
    mean_skate_cm: float
    max_penetration_cm: float


@dataclass(frozen=True)
class RetargetReport:
    """Quality report of one retargeted clip (``to_dict()`` for JSON).

    Attributes:
        source, target: names (the source file's path when known).
        frames, fps: clip size and rate.
        effectors: :class:`EffectorStats` per driven site; ``feet``: :class:`FootStats`.
        limit_violations: DoF values outside the target's limits (must be 0);
            ``max_limit_excess``: the largest excess (rad or m).
        frames_not_converged: frames where a hand, foot or head ended farther than
            ``tolerance_m`` from its target (the root is a soft target, its error is in
            ``effectors``); ``mean_iterations``: IK iterations per frame.
        finite: every output value is finite.
        scale, root_offset_z_m, source_rest: alignment facts; ``mapping``: pairs and unmapped
            joints (:meth:`JointMapping.to_dict`).
        time_s, frames_per_second: wall time of the retarget: mapping, alignment, the batched
            preparation and the per-frame solves (file IO excluded).
    """

    source: str
    target: str
    frames: int
    fps: float
    effectors: tuple[EffectorStats, ...]
    feet: tuple[FootStats, ...]
    limit_violations: int
    max_limit_excess: float
    frames_not_converged: int
    tolerance_m: float
    mean_iterations: float
    finite: bool
    scale: float
    root_offset_z_m: float
    source_rest: str
    mapping: Mapping[str, Any] = field(default_factory=dict)
    time_s: float = 0.0
    frames_per_second: float = 0.0

    def effector(self, role: str) -> EffectorStats | None:
        return next((e for e in self.effectors if e.role == role), None)

    @property
    def hand_foot_mean_error_cm(self) -> float:
        """Mean error over the hand and foot effectors (NaN if there are none), cm."""
        v = [e.mean_error_cm for e in self.effectors if e.role.endswith(("_hand", "_foot"))]
        return float(np.mean(v)) if v else float("nan")

    @property
    def max_skate_cm(self) -> float:
        return max((f.max_skate_cm for f in self.feet), default=0.0)

    @property
    def max_penetration_cm(self) -> float:
        return max((f.max_penetration_cm for f in self.feet), default=0.0)

    @property
    def goals(self) -> dict[str, bool]:
        """Which quality goals the clip meets (:data:`GOALS_CM`)."""
        hf = self.hand_foot_mean_error_cm
        return {
            "finite": self.finite,
            "no_limit_violations": self.limit_violations == 0,
            "hand_foot_mean_error_below_1cm": not (hf >= GOALS_CM["hand_foot_mean_error"]),
            "skate_below_1cm_per_contact": self.max_skate_cm < GOALS_CM["skate_per_contact"],
            "penetration_below_0.5cm": self.max_penetration_cm < GOALS_CM["penetration"],
        }

    @property
    def goals_met(self) -> bool:
        return all(self.goals.values())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["mapping"] = _plain(self.mapping)
        d["hand_foot_mean_error_cm"] = self.hand_foot_mean_error_cm
        d["max_skate_cm"] = self.max_skate_cm
        d["max_penetration_cm"] = self.max_penetration_cm
        d["goals"] = self.goals
        d["goals_met"] = self.goals_met
        return _plain(d)


def _plain(v: Any) -> Any:
    """JSON-ready copy: mappings → dicts, tuples → lists, numpy scalars → floats, NaN → None."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if np.isfinite(f) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def effector_stats(sites: Sequence[str], roles: Sequence[str], achieved: np.ndarray,
                   targets: np.ndarray) -> tuple[EffectorStats, ...]:
    """Per-site stats from achieved and target positions ``(T, k, 3)`` (m)."""
    err = np.linalg.norm(achieved - targets, axis=-1) * 100.0  # cm
    out = []
    for i, (s, r) in enumerate(zip(sites, roles, strict=True)):
        e = err[:, i]
        out.append(EffectorStats(s, r, float(e.mean()) if len(e) else 0.0,
                                 float(e.max()) if len(e) else 0.0,
                                 float(np.mean(e <= 1.0)) if len(e) else 1.0))
    return tuple(out)


def foot_stats(sites: Sequence[str], positions: np.ndarray, flags: np.ndarray,
               h_sole: Sequence[float]) -> tuple[FootStats, ...]:
    """Per-foot contact stats from foot positions ``(T, F, 3)`` in the (virtual) world, contact
    flags ``(T, F)`` and sole heights ``(F,)`` (m)."""
    out = []
    phases = contact_phases(flags) if flags.size else [[] for _ in sites]
    for f, site in enumerate(sites):
        skates = []
        for a, b in phases[f]:
            d = np.linalg.norm(positions[a:b, f, :2] - positions[a, f, :2], axis=-1)
            skates.append(float(d.max()) * 100.0)
        pen = float(np.maximum(h_sole[f] - positions[:, f, 2], 0.0).max()) * 100.0 \
            if len(positions) else 0.0
        out.append(FootStats(site, len(phases[f]), int(flags[:, f].sum()) if flags.size else 0,
                             max(skates, default=0.0), float(np.mean(skates)) if skates else 0.0,
                             pen))
    return tuple(out)


def report_rows(reports: Sequence[tuple[str, RetargetReport | None, str]]) -> tuple[list[str], list[tuple]]:
    """Headers and rows of the printed table for ``(name, report or None, status)`` items.

    Errors are means over the frames (cm); "max err" is the largest hand, foot or head error;
    the root (a soft target) has its own column; the balls of toe-less sources' feet (soft,
    ``Retargeter``) are in the report's effectors only.
    """
    headers = ["clip", "status", "frames", "hand err", "foot err", "head err", "max err",
               "root err", "skate", "penetr.", "limit viol.", "not conv.", "it/frame",
               "frames/s"]
    rows = []
    for name, rep, status in reports:
        if rep is None:
            rows.append((name, status, *["-"] * (len(headers) - 2)))
            continue

        def mean(suffix: str, effs=rep.effectors):
            v = [e.mean_error_cm for e in effs if e.role.endswith(suffix)]
            return round(float(np.mean(v)), 3) if v else "-"

        hard = [e.max_error_cm for e in rep.effectors
                if e.role != "root" and not e.role.endswith("_ball")]  # soft, like the root
        rows.append((name, status, rep.frames, mean("_hand"), mean("_foot"), mean("head"),
                     round(max(hard), 2) if hard else "-", mean("root"),
                     round(rep.max_skate_cm, 3), round(rep.max_penetration_cm, 3),
                     rep.limit_violations, rep.frames_not_converged,
                     round(rep.mean_iterations, 2), round(rep.frames_per_second)))
    return headers, rows
