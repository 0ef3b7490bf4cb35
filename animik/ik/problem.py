"""IK problems: tasks turned into a task error ``e (m,)`` and Jacobian ``J (m, n)``.

A target maps a site name to a position ``(3,)`` (3 task rows) or a ``(position, rotation)``
pair (6 rows: position, then orientation error as a world-frame rotation vector). *Pinned* sites
hold the pose they have at ``q0``; sites with no target are free. Per-site weights scale the
rows. Other tasks (:mod:`animik.ik.tasks`: the centre of mass, ``com=...``) add their rows after
the sites'. Every solver in :mod:`animik.ik` works on an :class:`IKProblem`.

Site targets are the hot path: they are kept as arrays (the compiled form of
:class:`~animik.ik.tasks.position.SitePositionTask` / ``SitePoseTask``, evaluated by numba
kernels); :meth:`IKProblem.task_list` gives them as task objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import OptionError, ShapeError, UnknownNameError, ValueRangeError, names_hint
from ..kinematics import Kinematics
from ..skeleton import Skeleton
from . import _kernels as K
from .tasks.base import Task, TaskFrames
from .tasks.pin import PIN_WEIGHT  # default row weight of pinned sites (targets: 1)


@dataclass(frozen=True, eq=False)
class IKProblem:
    """A validated set of effector targets on a skeleton.

    Attributes:
        skeleton: the skeleton.
        site_names: ``k`` targeted site names (targets first, then pinned sites).
        sites: ``(k,)`` site indices.
        rows: ``(k,)`` 3 (position target) or 6 (position + orientation).
        positions: ``(k, 3)`` target positions, m.
        rotations: ``(k, 3, 3)`` target rotations (identity where ``rows == 3``).
        weights: ``(k,)`` row weights (> 0).
        pinned: ``(k,)`` bool, True for sites pinned at their ``q0`` pose.
        tasks: further tasks (:mod:`animik.ik.tasks`, e.g. the centre of mass), rows after the
            sites' in this order.
        m: number of task rows.
    """

    skeleton: Skeleton
    site_names: tuple[str, ...]
    sites: np.ndarray
    rows: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray
    weights: np.ndarray
    pinned: np.ndarray
    _row_select: np.ndarray = field(repr=False)
    _row_weights: np.ndarray = field(repr=False)
    tasks: tuple[Task, ...] = ()

    @property
    def m(self) -> int:
        ms = int(self.rows.sum())
        return ms + sum(t.rows for t in self.tasks) if self.tasks else ms

    @property
    def k(self) -> int:
        return len(self.site_names)

    @property
    def item_names(self) -> tuple[str, ...]:
        """Names of the error entries: the ``k`` sites, then the further tasks."""
        return self.site_names + tuple(t.name for t in self.tasks)

    def task_list(self) -> list[Task]:
        """Every task of the problem as task objects (sites first, then :attr:`tasks`)."""
        from .tasks.orientation import SitePoseTask
        from .tasks.position import SitePositionTask

        out: list[Task] = []
        for i, name in enumerate(self.site_names):
            w, pin = float(self.weights[i]), bool(self.pinned[i])
            if self.rows[i] == 6:
                out.append(SitePoseTask(name, int(self.sites[i]), self.positions[i].copy(),
                                        self.rotations[i].copy(), w, pin))
            else:
                out.append(SitePositionTask(name, int(self.sites[i]), self.positions[i].copy(), w,
                                            pin))
        return out + list(self.tasks)

    def workspace(self) -> ProblemWorkspace:
        """Preallocated buffers to evaluate this problem many times (solver inner loops)."""
        return ProblemWorkspace(self)

    def with_targets(self, targets: Mapping[str, Any]) -> IKProblem:
        """Same sites, new target poses for some of them (fast path for per-frame updates)."""
        pos = self.positions.copy()
        rot = self.rotations.copy()
        index = {n: i for i, n in enumerate(self.site_names)}
        tasks = list(self.tasks)
        for name, tgt in targets.items():
            if name not in index:
                t = next((j for j, tk in enumerate(tasks) if tk.name == name), None)
                if t is not None:
                    tasks[t] = tasks[t].with_target(tgt)
                    continue
                raise UnknownNameError(
                    f"site {name!r} is not part of this problem; its sites are "
                    f"{names_hint(self.item_names)}")
            p, r = _parse_target(name, tgt)
            if (r is None) != (self.rows[index[name]] == 3):
                raise OptionError(f"target {name!r}: cannot change between position and pose")
            pos[index[name]] = p
            if r is not None:
                rot[index[name]] = r
        return IKProblem(self.skeleton, self.site_names, self.sites, self.rows, pos, rot,
                         self.weights, self.pinned, self._row_select, self._row_weights,
                         tuple(tasks))


class ProblemWorkspace:
    """Evaluates ``e`` and ``J`` of an :class:`IKProblem` at a pose with no allocation.

    After :meth:`evaluate`, ``e (m,)`` holds the weighted task error, ``jac (m, n)`` the
    weighted task Jacobian (``d(current)/dq``, so that ``e ≈ J dq`` for the step ``dq`` that
    removes the error), ``site_error (k, 2)`` the unweighted position (m) and angle (rad) error
    of every targeted site, and ``kin`` the underlying :class:`~animik.kinematics.Kinematics`.
    """

    def __init__(self, problem: IKProblem):
        self.problem = problem
        n = problem.skeleton.n_dof
        self.kin = Kinematics(problem.skeleton, problem.sites, rows=6)
        self.e = np.zeros(problem.m)
        self.jac = np.zeros((problem.m, n))
        self.site_error = np.zeros((problem.k + len(problem.tasks), 2))
        ms = int(problem.rows.sum())
        self._ms = ms
        self._site_views = (self.e[:ms], self.jac[:ms], self.site_error[:problem.k])

    def evaluate(self, q: np.ndarray, jacobian: bool = True) -> ProblemWorkspace:
        """Compute FK, the error and (optionally) the Jacobian at ``q`` (float64, contiguous)."""
        p = self.problem
        kin = self.kin.update(q)
        if not p.tasks:
            K.task_error(kin.site_positions, kin.site_rotations, p.positions, p.rotations, p.rows,
                         p.weights, self.e, self.site_error)
            if jacobian:
                K.select_rows(kin.jacobian, p._row_select, p._row_weights, self.jac)
            return self
        e, jac, se = self._site_views
        K.task_error(kin.site_positions, kin.site_rotations, p.positions, p.rotations, p.rows,
                     p.weights, e, se)
        if jacobian:
            K.select_rows(kin.jacobian, p._row_select, p._row_weights, jac)
        # further tasks: their own error / Jacobian (tasks/*.py), weighted, after the sites
        frames = TaskFrames(kin, q)
        r = self._ms
        for i, t in enumerate(p.tasks):
            err = t.compute_error(frames)
            self.e[r:r + t.rows] = t.weight * err
            self.site_error[p.k + i] = t.error_norms(err)
            if jacobian:
                self.jac[r:r + t.rows] = t.weight * t.compute_jacobian(frames)
            r += t.rows
        return self

    def converged(self, tol_position: float, tol_rotation: float) -> bool:
        """All targeted sites within tolerance (m / rad)."""
        se = self.site_error
        return bool(np.all(se[:, 0] <= tol_position) and np.all(se[:, 1] <= tol_rotation))


def _parse_target(name: str, tgt: Any) -> tuple[np.ndarray, np.ndarray | None]:
    rot = None
    if isinstance(tgt, (tuple, list)) and len(tgt) == 2 and np.ndim(tgt[0]) == 1:
        pos, rot = tgt
    else:
        pos = tgt
    try:
        p = np.asarray(pos, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"target {name!r}: position must be 3 numbers, got {pos!r}") from None
    if p.shape != (3,):
        raise ShapeError(f"target {name!r}: position must have shape (3,), got {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueRangeError(f"target {name!r}: position contains NaN or infinite values: {p}")
    if rot is not None:
        try:
            r = np.asarray(rot, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"target {name!r}: rotation must be a 3x3 matrix") from None
        if r.shape == (4,):  # quaternion wxyz
            from ..rotations import quat_to_matrix

            if not np.all(np.isfinite(r)) or np.linalg.norm(r) < 1e-9:
                raise ValueRangeError(f"target {name!r}: quaternion must be finite and non-zero")
            r = quat_to_matrix(r)
        if r.shape != (3, 3):
            raise ShapeError(
                f"target {name!r}: rotation must have shape (3, 3) or a wxyz quaternion (4,), "
                f"got {r.shape}")
        if not np.all(np.isfinite(r)) or np.max(np.abs(r @ r.T - np.eye(3))) > 1e-6 \
                or np.linalg.det(r) < 0:
            raise ValueRangeError(f"target {name!r}: rotation is not a rotation matrix")
        rot = r
    return p, rot


def build_problem(
    skel: Skeleton,
    q0: np.ndarray,
    targets: Mapping[str, Any],
    weights: Mapping[str, float] | None = None,
    pinned: Iterable[str] = (),
    pin_rotation: bool = False,
    tasks: Iterable[Task] = (),
    **task_args: Any,
) -> IKProblem:
    """Validate targets and build an :class:`IKProblem`.

    Args:
        skel: the skeleton.
        q0: start pose ``(n_dof,)`` (pinned sites hold their pose at ``q0``).
        targets: ``{site: position (3,)}`` or ``{site: (position (3,), rotation (3, 3) or wxyz)}``.
        weights: optional ``{site: weight}`` (must be > 0; default 1 for targets and
            :data:`PIN_WEIGHT` = 10 for pinned sites, so pins hold when a target is out of reach).
        pinned: site names held where they are at ``q0``.
        pin_rotation: pinned sites also hold their orientation (6 rows instead of 3).
        tasks: further :class:`~animik.ik.tasks.base.Task` objects (rows after the sites').
        **task_args: keyword tasks of :mod:`animik.ik.tasks` — ``com=(x, y)`` or
            ``com=(x, y, z)``: the whole-body centre of mass to that point (xy: its ground
            projection); its weight is ``weights["com"]``.

    Raises:
        UnknownNameError: a site name that the skeleton does not have (valid names listed).
        ShapeError: wrong shapes of ``q0`` or the targets. ValueRangeError: non-finite values,
            a rotation that is not one. OptionError: bad weights, a site pinned and targeted.
    """
    q0 = skel.check_q(q0, "q0")
    if q0.ndim != 1:
        raise ShapeError(f"q0 must have shape ({skel.n_dof},), got {q0.shape}")
    if not isinstance(targets, Mapping):
        raise OptionError(f"targets must be a mapping of site name to target, got {type(targets).__name__}")
    pinned = [p for p in pinned]
    names: list[str] = []
    pos, rot, rows, pins = [], [], [], []
    for name, tgt in targets.items():
        skel.site_index(name)  # raises UnknownNameError with the valid names
        p, r = _parse_target(name, tgt)
        names.append(name)
        pos.append(p)
        rot.append(np.eye(3) if r is None else r)
        rows.append(3 if r is None else 6)
        pins.append(False)
    if pinned:
        from ..kinematics import site_poses

        sp, sr = site_poses(skel, q0)
        for name in pinned:
            i = skel.site_index(name)
            if name in targets:
                raise OptionError(f"site {name!r} is both pinned and given a target")
            if name in names:
                continue
            names.append(name)
            pos.append(sp[i])
            rot.append(sr[i])
            rows.append(6 if pin_rotation else 3)
            pins.append(True)
    extra = _extra_tasks(skel, q0, tasks, task_args, names)
    # Pins outrank targets: when a target is out of reach the best-effort pose should give up
    # the reach, not the pins (equal weights let a pulled hand drag pinned feet along).
    w = np.where(pins, PIN_WEIGHT, 1.0)
    for name, val in (weights or {}).items():
        t = next((j for j, tk in enumerate(extra) if tk.name == name), None)
        if name not in names and t is None:
            skel.site_index(name)
            raise UnknownNameError(f"weight given for site {name!r}, which has no target or pin")
        try:
            v = float(val)
        except (TypeError, ValueError):
            v = float("nan")
        if not np.isfinite(v) or v <= 0:
            raise OptionError(f"weight of {name!r} must be a positive number, got {val!r}")
        if t is not None:
            import dataclasses

            extra[t] = dataclasses.replace(extra[t], weight=v)
        else:
            w[names.index(name)] = v
    rows_arr = np.array(rows, dtype=np.int64)
    sel, rw = [], []
    for i, r in enumerate(rows):
        sel.extend(6 * i + np.arange(r))
        rw.extend([w[i]] * r)
    return IKProblem(
        skeleton=skel,
        site_names=tuple(names),
        sites=np.array([skel.site_index(n) for n in names], dtype=np.int64),
        rows=rows_arr,
        positions=np.array(pos, dtype=float).reshape(-1, 3),
        rotations=np.array(rot, dtype=float).reshape(-1, 3, 3),
        weights=w,
        pinned=np.array(pins, dtype=bool),
        _row_select=np.array(sel, dtype=np.int64),
        _row_weights=np.array(rw, dtype=float),
        tasks=tuple(extra),
    )


def _extra_tasks(skel: Skeleton, q0: np.ndarray, tasks: Iterable[Task],
                 task_args: Mapping[str, Any], site_names: list[str]) -> list[Task]:
    """Validated further tasks: Task objects and keyword tasks (``com=...``)."""
    if not tasks and not task_args:
        return []
    from .tasks import keyword_modules

    out: list[Task] = []
    for t in tasks:
        if not isinstance(t, Task):
            raise OptionError(f"tasks must be animik.ik.tasks Task objects, got {type(t).__name__}")
        out.append(t)
    if task_args:
        mods = keyword_modules()
        for key, value in task_args.items():
            mod = mods.get(key)
            if mod is None:
                raise UnknownNameError(f"unknown task keyword {key!r}; task keywords are "
                                       f"{names_hint(sorted(mods))}")
            if value is not None:
                out.append(mod.from_argument(skel, q0, value))
    seen = set(site_names)
    for t in out:
        if t.name in seen:
            raise OptionError(f"task name {t.name!r} is used twice (a site or another task)")
        seen.add(t.name)
    return out
