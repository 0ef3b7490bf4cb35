"""The immutable articulated skeleton.

A skeleton is a tree of joints stored as arrays (structure of arrays, as MuJoCo's ``mjModel``).
Each joint has a parent (index smaller than its own), a rest transform relative to its parent
(translation ``offsets[j]`` then rotation ``rest_rotations[j]``) and an ordered list of degrees
of freedom (DoFs) applied one after the other, like BVH channels: a rotation about, or a
translation along, a unit axis of the joint's current local frame::

    parent_from_joint(q) = T(offsets[j]) @ R(rest_rotations[j]) @ D_0(q_0) @ D_1(q_1) @ ...

The generalised coordinates ``q`` are all DoF values in one flat vector, grouped by joint in
joint order. Effector *sites* are frames fixed to a joint (name, joint, local offset, local
rotation): hands, feet, fingertips.

World convention (see README): right-handed, **Z up**, gravity ``(0, 0, -9.81)`` m/s², metres,
radians, kilograms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from .errors import ShapeError, SkeletonError, UnknownNameError, ValueRangeError, names_hint

ROTATION = 0
TRANSLATION = 1

_KIND_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


@dataclass(frozen=True)
class Dof:
    """One degree of freedom, as given to :meth:`Skeleton.from_joints`.

    Args:
        name: unique DoF name (also the URDF/MJCF joint name on export).
        kind: ``"rx" "ry" "rz"`` (rotation about a local principal axis), ``"tx" "ty" "tz"``
            (translation), or ``"r"`` / ``"t"`` with an explicit ``axis``.
        lower, upper: limits in radians (rotations) or metres (translations); ``±inf`` = free.
        rest: value in the rest pose (defaults to 0 clipped into the limits).
        axis: unit axis ``(3,)`` in the joint frame when ``kind`` is ``"r"`` or ``"t"``.
    """

    name: str
    kind: str
    lower: float = -np.inf
    upper: float = np.inf
    rest: float | None = None
    axis: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Joint:
    """One joint (and the rigid segment that moves with it), for :meth:`Skeleton.from_joints`.

    Args:
        name: unique joint name.
        parent: parent joint name, or ``None`` for the root (exactly one root).
        offset: translation from the parent joint frame at rest, metres, ``(3,)``.
        dofs: DoFs applied in order after the rest transform.
        rotation: fixed rest rotation ``parent_from_joint`` ``(3, 3)`` (identity if ``None``).
        mass: segment mass in kg (``None`` = estimate from the bones, see ``default_mass``).
        com: segment centre of mass in the joint frame, metres ``(3,)``.
        inertia: rotational inertia about the COM in the joint frame, kg·m² ``(3, 3)``.
    """

    name: str
    parent: str | None
    offset: Sequence[float] = (0.0, 0.0, 0.0)
    dofs: Sequence[Dof] = ()
    rotation: Any = None
    mass: float | None = None
    com: Sequence[float] | None = None
    inertia: Any = None


@dataclass(frozen=True)
class Site:
    """An effector site fixed to a joint: ``offset`` ``(3,)`` m and ``rotation`` ``(3, 3)``."""

    name: str
    joint: str
    offset: Sequence[float] = (0.0, 0.0, 0.0)
    rotation: Any = None


def _ro(a: Any, dtype=float) -> np.ndarray:
    out = np.array(a, dtype=dtype)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Skeleton:
    """Immutable articulated skeleton. Build one with :meth:`from_joints`.

    Attributes (all arrays read-only):
        name: skeleton name.
        joint_names: ``J`` joint names.
        parents: ``(J,)`` int, parent joint index, ``-1`` for the root; ``parents[j] < j``.
        offsets: ``(J, 3)`` m, rest translation from the parent frame.
        rest_rotations: ``(J, 3, 3)``, rest rotation parent_from_joint.
        dof_names: ``n`` DoF names.
        dof_joint: ``(n,)`` int, joint that owns each DoF (non-decreasing).
        dof_type: ``(n,)`` int8, ``0`` rotation, ``1`` translation.
        dof_axis: ``(n, 3)`` unit axes in the joint frame.
        lower, upper: ``(n,)`` limits (rad or m, ``±inf`` when free).
        rest_q: ``(n,)`` rest pose.
        site_names: ``S`` site names.
        site_joint: ``(S,)`` int.
        site_offsets: ``(S, 3)`` m.
        site_rotations: ``(S, 3, 3)``.
        masses: ``(J,)`` kg; ``coms``: ``(J, 3)`` m; ``inertias``: ``(J, 3, 3)`` kg·m² about the COM.
        meta: read-only mapping of free-form metadata (source file, units, mass source...).
    """

    name: str
    joint_names: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    rest_rotations: np.ndarray
    dof_names: tuple[str, ...]
    dof_joint: np.ndarray
    dof_type: np.ndarray
    dof_axis: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rest_q: np.ndarray
    site_names: tuple[str, ...]
    site_joint: np.ndarray
    site_offsets: np.ndarray
    site_rotations: np.ndarray
    masses: np.ndarray
    coms: np.ndarray
    inertias: np.ndarray
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        conv = {
            "parents": np.int64, "dof_joint": np.int64, "dof_type": np.int8, "site_joint": np.int64,
        }
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name in ("joint_names", "dof_names", "site_names"):
                object.__setattr__(self, f.name, tuple(str(x) for x in v))
            elif f.name == "meta":
                object.__setattr__(self, f.name, freeze(v))
            elif f.name != "name":
                object.__setattr__(self, f.name, _ro(v, conv.get(f.name, float)))
        self._validate()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_joints(
        cls,
        name: str,
        joints: Iterable[Joint],
        sites: Iterable[Site] = (),
        meta: Mapping[str, Any] | None = None,
        default_mass: str = "bones",
    ) -> Skeleton:
        """Build a skeleton from joint and site specs (joints may come in any order).

        Joints are reordered depth-first so that every parent precedes its children, keeping
        the given order among siblings. Masses left ``None`` are estimated from the bones
        (``default_mass="bones"``: a solid cylinder of water density along each bone, radius
        10 % of its length, at least 0.1 kg) and the fact is recorded in ``meta["mass_source"]``.

        Raises:
            SkeletonError: duplicate names, unknown parents, not exactly one root, cycles,
                bad DoF kinds/axes/limits.
        """
        joints = list(joints)
        sites = list(sites)
        by_name: dict[str, Joint] = {}
        for jt in joints:
            if jt.name in by_name:
                raise SkeletonError(f"duplicate joint name {jt.name!r}")
            by_name[jt.name] = jt
        roots = [jt.name for jt in joints if jt.parent is None]
        if len(roots) != 1:
            raise SkeletonError(f"a skeleton needs exactly one root joint, got {roots}")
        children: dict[str, list[str]] = {jt.name: [] for jt in joints}
        for jt in joints:
            if jt.parent is not None:
                if jt.parent not in by_name:
                    raise SkeletonError(
                        f"joint {jt.name!r}: unknown parent {jt.parent!r}; joints are "
                        f"{names_hint(by_name)}"
                    )
                children[jt.parent].append(jt.name)
        order: list[str] = []
        stack = [roots[0]]
        while stack:
            nm = stack.pop()
            order.append(nm)
            stack.extend(reversed(children[nm]))
        if len(order) != len(joints):
            missing = sorted(set(by_name) - set(order))
            raise SkeletonError(f"joints not connected to the root (cycle?): {missing}")
        index = {nm: i for i, nm in enumerate(order)}

        J = len(order)
        parents = np.full(J, -1, dtype=np.int64)
        offsets = np.zeros((J, 3))
        rots = np.tile(np.eye(3), (J, 1, 1))
        dof_names, dof_joint, dof_type, dof_axis, lo, hi, rest = [], [], [], [], [], [], []
        masses = np.full(J, np.nan)
        coms = np.zeros((J, 3))
        inertias = np.zeros((J, 3, 3))
        have_inertia = np.zeros(J, dtype=bool)
        for j, nm in enumerate(order):
            jt = by_name[nm]
            parents[j] = -1 if jt.parent is None else index[jt.parent]
            offsets[j] = _vec3(jt.offset, f"joint {nm!r} offset")
            if jt.rotation is not None:
                rots[j] = _rot3(jt.rotation, f"joint {nm!r} rotation")
            if jt.mass is not None:
                masses[j] = float(jt.mass)
            if jt.com is not None:
                coms[j] = _vec3(jt.com, f"joint {nm!r} com")
            if jt.inertia is not None:
                inertias[j] = np.asarray(jt.inertia, dtype=float).reshape(3, 3)
                have_inertia[j] = True
            for d in jt.dofs:
                typ, axis = _parse_kind(d, nm)
                dof_names.append(d.name)
                dof_joint.append(j)
                dof_type.append(typ)
                dof_axis.append(axis)
                lo.append(float(d.lower))
                hi.append(float(d.upper))
                r = 0.0 if d.rest is None else float(d.rest)
                if d.rest is None:
                    r = min(max(r, float(d.lower)), float(d.upper))
                rest.append(r)

        meta = dict(meta or {})
        if np.isnan(masses).any():
            if default_mass != "bones":
                missing = [order[i] for i in np.flatnonzero(np.isnan(masses))]
                raise SkeletonError(f"joints without mass: {missing}")
            # Bones at rest include translation DoFs (BVH position channels replace OFFSETs).
            trans_rest = np.zeros((J, 3))
            for k, (typ, j) in enumerate(zip(dof_type, dof_joint, strict=True)):
                if typ == TRANSLATION:
                    trans_rest[j] += np.asarray(dof_axis[k]) * rest[k]
            bones = offsets + np.einsum("jab,jb->ja", rots, trans_rest)
            est_m, est_c, est_i = bone_mass_properties(parents, bones, rots, sites_for=[
                (index[s.joint], _vec3(s.offset, "site")) for s in sites if s.joint in index
            ])
            missing = np.isnan(masses)
            masses[missing] = est_m[missing]
            coms[missing] = est_c[missing]
            inertias[missing & ~have_inertia] = est_i[missing & ~have_inertia]
            meta.setdefault(
                "mass_source",
                "estimated: cylinders along the bones (radius 12% of length), scaled to a body mass"
                " of 22 kg/m^2 x height^2 (BMI 22)",
            )
        site_joint, site_off, site_rot, site_names = [], [], [], []
        for s in sites:
            if s.joint not in index:
                raise SkeletonError(
                    f"site {s.name!r}: unknown joint {s.joint!r}; joints are {names_hint(order)}"
                )
            site_names.append(s.name)
            site_joint.append(index[s.joint])
            site_off.append(_vec3(s.offset, f"site {s.name!r} offset"))
            site_rot.append(np.eye(3) if s.rotation is None else _rot3(s.rotation, f"site {s.name!r}"))
        return cls(
            name=name,
            joint_names=tuple(order),
            parents=parents,
            offsets=offsets,
            rest_rotations=rots,
            dof_names=tuple(dof_names),
            dof_joint=np.array(dof_joint, dtype=np.int64),
            dof_type=np.array(dof_type, dtype=np.int8),
            dof_axis=np.array(dof_axis, dtype=float).reshape(-1, 3),
            lower=np.array(lo),
            upper=np.array(hi),
            rest_q=np.array(rest),
            site_names=tuple(site_names),
            site_joint=np.array(site_joint, dtype=np.int64),
            site_offsets=np.array(site_off, dtype=float).reshape(-1, 3),
            site_rotations=np.array(site_rot, dtype=float).reshape(-1, 3, 3),
            masses=masses,
            coms=coms,
            inertias=inertias,
            meta=meta,
        )

    def replace(self, **changes: Any) -> Skeleton:
        """A copy with some fields replaced (validated again)."""
        return dataclasses.replace(self, **changes)

    def with_sites(self, sites: Iterable[Site]) -> Skeleton:
        """A copy with ``sites`` added after the existing ones (joints and DoFs unchanged).

        Raises:
            SkeletonError: a site name already used, or an unknown joint.
        """
        names, joints = list(self.site_names), list(self.site_joint)
        offs, rots = list(self.site_offsets), list(self.site_rotations)
        for s in sites:
            if s.name in names:
                raise SkeletonError(f"site {s.name!r} already exists; sites are {names_hint(names)}")
            if s.joint not in self._joint_index:
                raise SkeletonError(f"site {s.name!r}: unknown joint {s.joint!r}; joints are "
                                    f"{names_hint(self.joint_names)}")
            names.append(s.name)
            joints.append(self._joint_index[s.joint])
            offs.append(_vec3(s.offset, f"site {s.name!r} offset"))
            rots.append(np.eye(3) if s.rotation is None else _rot3(s.rotation, f"site {s.name!r}"))
        return self.replace(site_names=tuple(names), site_joint=np.array(joints, dtype=np.int64),
                            site_offsets=np.array(offs, dtype=float).reshape(-1, 3),
                            site_rotations=np.array(rots, dtype=float).reshape(-1, 3, 3))

    def without_sites(self, names: Iterable[str]) -> Skeleton:
        """A copy without the named sites (the others keep their order).

        Raises:
            UnknownNameError: a name that is not a site.
        """
        drop = {self.site_index(n) for n in names}
        keep = [i for i in range(self.n_sites) if i not in drop]
        return self.replace(site_names=tuple(self.site_names[i] for i in keep),
                            site_joint=self.site_joint[keep].copy(),
                            site_offsets=self.site_offsets[keep].reshape(-1, 3).copy(),
                            site_rotations=self.site_rotations[keep].reshape(-1, 3, 3).copy())

    def to_joints(self) -> tuple[list[Joint], list[Site]]:
        """The inverse of :meth:`from_joints` (for editing a skeleton)."""
        joints = []
        for j, nm in enumerate(self.joint_names):
            dofs = [
                Dof(
                    self.dof_names[k],
                    "r" if self.dof_type[k] == ROTATION else "t",
                    float(self.lower[k]), float(self.upper[k]), float(self.rest_q[k]),
                    tuple(float(a) for a in self.dof_axis[k]),
                )
                for k in self.joint_dofs(j)
            ]
            p = self.parents[j]
            joints.append(Joint(
                nm, None if p < 0 else self.joint_names[p], tuple(self.offsets[j]), dofs,
                np.array(self.rest_rotations[j]), float(self.masses[j]), tuple(self.coms[j]),
                np.array(self.inertias[j]),
            ))
        sites = [
            Site(nm, self.joint_names[self.site_joint[i]], tuple(self.site_offsets[i]),
                 np.array(self.site_rotations[i]))
            for i, nm in enumerate(self.site_names)
        ]
        return joints, sites

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        J, n, S = len(self.joint_names), len(self.dof_names), len(self.site_names)
        shapes = {
            "parents": (J,), "offsets": (J, 3), "rest_rotations": (J, 3, 3), "dof_joint": (n,),
            "dof_type": (n,), "dof_axis": (n, 3), "lower": (n,), "upper": (n,), "rest_q": (n,),
            "site_joint": (S,), "site_offsets": (S, 3), "site_rotations": (S, 3, 3),
            "masses": (J,), "coms": (J, 3), "inertias": (J, 3, 3),
        }
        for nm, shp in shapes.items():
            got = getattr(self, nm).shape
            if got != shp:
                raise SkeletonError(f"Skeleton.{nm} must have shape {shp}, got {got}")
        if J == 0:
            raise SkeletonError("a skeleton needs at least one joint")
        for kind, names in (("joint", self.joint_names), ("DoF", self.dof_names),
                            ("site", self.site_names)):
            if len(set(names)) != len(names):
                dup = sorted({x for x in names if names.count(x) > 1})
                raise SkeletonError(f"duplicate {kind} names: {dup}")
        if self.parents[0] != -1 or np.any(self.parents[1:] < 0):
            raise SkeletonError("joint 0 must be the only root (parent -1)")
        if np.any(self.parents[1:] >= np.arange(1, J)):
            bad = int(np.flatnonzero(self.parents[1:] >= np.arange(1, J))[0]) + 1
            raise SkeletonError(
                f"parent index must be smaller than child index: joint {self.joint_names[bad]!r}"
                f" ({bad}) has parent {self.parents[bad]}"
            )
        if n and (np.any(np.diff(self.dof_joint) < 0) or self.dof_joint.min() < 0
                  or self.dof_joint.max() >= J):
            raise SkeletonError("dof_joint must be non-decreasing joint indices")
        if not np.all(np.isin(self.dof_type, (ROTATION, TRANSLATION))):
            raise SkeletonError("dof_type must be 0 (rotation) or 1 (translation)")
        for nm in ("offsets", "rest_rotations", "dof_axis", "rest_q", "site_offsets",
                   "site_rotations", "masses", "coms", "inertias"):
            if not np.all(np.isfinite(getattr(self, nm))):
                raise SkeletonError(f"Skeleton.{nm} has non-finite values")
        if n:
            norms = np.linalg.norm(self.dof_axis, axis=1)
            if np.any(np.abs(norms - 1.0) > 1e-9):
                bad = self.dof_names[int(np.argmax(np.abs(norms - 1.0)))]
                raise SkeletonError(f"DoF {bad!r}: axis must be a unit vector")
        if np.any(np.isnan(self.lower)) or np.any(np.isnan(self.upper)):
            raise SkeletonError("limits must not be NaN (use ±inf for free DoFs)")
        if np.any(self.lower > self.upper):
            bad = self.dof_names[int(np.flatnonzero(self.lower > self.upper)[0])]
            raise SkeletonError(f"DoF {bad!r}: lower limit above upper limit")
        out = (self.rest_q < self.lower - 1e-12) | (self.rest_q > self.upper + 1e-12)
        if np.any(out):
            k = int(np.flatnonzero(out)[0])
            raise SkeletonError(
                f"DoF {self.dof_names[k]!r}: rest value {self.rest_q[k]} outside limits "
                f"[{self.lower[k]}, {self.upper[k]}]"
            )
        for nm in ("rest_rotations", "site_rotations"):
            r = getattr(self, nm)
            if len(r) and np.max(np.abs(r @ np.swapaxes(r, -1, -2) - np.eye(3))) > 1e-6:
                raise SkeletonError(f"Skeleton.{nm} must hold rotation matrices")
        if S and (self.site_joint.min() < 0 or self.site_joint.max() >= J):
            raise SkeletonError("site_joint out of range")
        if np.any(self.masses < 0):
            raise SkeletonError("masses must be non-negative")

    # ------------------------------------------------------------------ sizes and lookups
    @property
    def n_dof(self) -> int:
        return len(self.dof_names)

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def n_sites(self) -> int:
        return len(self.site_names)

    @property
    def total_mass(self) -> float:
        return float(self.masses.sum())

    @cached_property
    def _joint_index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.joint_names)}

    @cached_property
    def _dof_index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.dof_names)}

    @cached_property
    def _site_index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.site_names)}

    def joint_index(self, name: str | int) -> int:
        """Index of a joint by name (ints pass through). Raises :class:`UnknownNameError`."""
        return _lookup(self._joint_index, name, "joint", self.name)

    def dof_index(self, name: str | int) -> int:
        """Index of a DoF by name (ints pass through). Raises :class:`UnknownNameError`."""
        return _lookup(self._dof_index, name, "DoF", self.name)

    def site_index(self, name: str | int) -> int:
        """Index of a site by name (ints pass through). Raises :class:`UnknownNameError`."""
        return _lookup(self._site_index, name, "site", self.name)

    @cached_property
    def joint_dof_start(self) -> np.ndarray:
        """``(J + 1,)`` int: DoFs of joint j are ``range(start[j], start[j + 1])``."""
        start = np.searchsorted(self.dof_joint, np.arange(self.n_joints + 1), side="left")
        start.setflags(write=False)
        return start

    def joint_dofs(self, joint: str | int) -> range:
        """DoF indices of one joint."""
        j = self.joint_index(joint)
        return range(int(self.joint_dof_start[j]), int(self.joint_dof_start[j + 1]))

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """Children joint indices of every joint."""
        ch: list[list[int]] = [[] for _ in range(self.n_joints)]
        for j in range(1, self.n_joints):
            ch[self.parents[j]].append(j)
        return tuple(tuple(c) for c in ch)

    @cached_property
    def joint_ancestor_mask(self) -> np.ndarray:
        """``(J, J)`` bool: ``mask[j, a]`` is True when joint a is j or one of its ancestors."""
        m = np.zeros((self.n_joints, self.n_joints), dtype=bool)
        for j in range(self.n_joints):
            p = self.parents[j]
            if p >= 0:
                m[j] = m[p]
            m[j, j] = True
        m.setflags(write=False)
        return m

    @cached_property
    def site_dof_mask(self) -> np.ndarray:
        """``(S, n)`` bool: DoFs that move each site (the non-zero Jacobian columns)."""
        m = self.joint_ancestor_mask[self.site_joint][:, self.dof_joint]
        m = np.ascontiguousarray(m)
        m.setflags(write=False)
        return m

    # ------------------------------------------------------------------ checks on poses
    def check_q(self, q: Any, name: str = "q") -> np.ndarray:
        """Validate a pose array ``(..., n_dof)``: float64, finite. Returns it as an array.

        Raises:
            ShapeError: wrong trailing dimension. ValueRangeError: non-finite values.
        """
        try:
            arr = np.asarray(q, dtype=float)
        except (TypeError, ValueError) as e:
            raise ShapeError(f"{name} must be a numeric array of shape (..., {self.n_dof}): {e}") from None
        if arr.ndim == 0 or arr.shape[-1] != self.n_dof:
            raise ShapeError(
                f"trailing dimension of {name} must be {self.n_dof} (DoFs of {self.name!r}), "
                f"got shape {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueRangeError(f"{name} contains NaN or infinite values")
        return arr

    def clip_to_limits(self, q: np.ndarray) -> np.ndarray:
        """``q`` clipped into ``[lower, upper]``."""
        return np.clip(q, self.lower, self.upper)

    def within_limits(self, q: np.ndarray, tol: float = 0.0) -> np.ndarray:
        """Bool ``(...)``: every DoF of ``q`` within its limits (+ ``tol``)."""
        q = np.asarray(q, dtype=float)
        return np.all((q >= self.lower - tol) & (q <= self.upper + tol), axis=-1)

    def q_dict(self, q: np.ndarray) -> dict[str, float]:
        """A single pose as ``{dof_name: value}``."""
        q = self.check_q(q)
        if q.ndim != 1:
            raise ShapeError(f"q must have shape ({self.n_dof},), got {q.shape}")
        return dict(zip(self.dof_names, map(float, q), strict=True))

    def __repr__(self) -> str:
        return (f"Skeleton({self.name!r}: {self.n_joints} joints, {self.n_dof} DoF, "
                f"{self.n_sites} sites, {self.total_mass:.1f} kg)")


# ---------------------------------------------------------------------- helpers
#: Values :func:`freeze` returns as they are, tested by exact type first: the ABC check
#: ``isinstance(v, Mapping)`` costs ~1 µs per value, and a retarget report in a motion's meta
#: holds thousands of them.
_ATOMS = frozenset({str, int, float, bool, type(None), bytes})


def freeze(value: Any) -> Any:
    """Deep read-only copy: mappings become MappingProxyType, lists tuples, arrays read-only."""
    if type(value) in _ATOMS:
        return value
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return _ro(value, value.dtype)
    return value


def _lookup(table: dict[str, int], name: str | int, kind: str, skel: str) -> int:
    if isinstance(name, (int, np.integer)):
        if not 0 <= int(name) < len(table):
            raise UnknownNameError(f"{kind} index {name} out of range 0..{len(table) - 1} in {skel!r}")
        return int(name)
    try:
        return table[name]
    except KeyError:
        raise UnknownNameError(
            f"unknown {kind} {name!r} in skeleton {skel!r}; valid names: {names_hint(table)}"
        ) from None


def _vec3(v: Any, what: str) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise SkeletonError(f"{what} must be 3 finite numbers, got {v!r}")
    return a


def _rot3(r: Any, what: str) -> np.ndarray:
    a = np.asarray(r, dtype=float)
    if a.shape != (3, 3) or np.max(np.abs(a @ a.T - np.eye(3))) > 1e-6 or np.linalg.det(a) < 0:
        raise SkeletonError(f"{what} must be a 3x3 rotation matrix")
    return a


def _parse_kind(d: Dof, joint: str) -> tuple[int, np.ndarray]:
    k = d.kind.lower()
    if len(k) == 2 and k[0] in "rt" and k[1] in _KIND_AXES:
        axis = np.array(_KIND_AXES[k[1]])
    elif k in ("r", "t"):
        if d.axis is None:
            raise SkeletonError(f"DoF {d.name!r} of joint {joint!r}: kind {d.kind!r} needs an axis")
        axis = np.asarray(d.axis, dtype=float)
        nrm = np.linalg.norm(axis)
        if axis.shape != (3,) or not np.isfinite(nrm) or nrm < 1e-12:
            raise SkeletonError(f"DoF {d.name!r}: axis must be a non-zero 3-vector, got {d.axis!r}")
        axis = axis / nrm
    else:
        raise SkeletonError(
            f"DoF {d.name!r} of joint {joint!r}: unknown kind {d.kind!r} "
            "(expected rx, ry, rz, tx, ty, tz, r or t)"
        )
    if np.isnan(d.lower) or np.isnan(d.upper) or d.lower > d.upper:
        raise SkeletonError(f"DoF {d.name!r}: bad limits [{d.lower}, {d.upper}]")
    return (ROTATION if k[0] == "r" else TRANSLATION), axis


#: Body-mass index of the estimated masses, kg/m^2 (mid WHO "normal" range 18.5-25).
REFERENCE_BMI = 22.0


def mass_from_height(height: float) -> float:
    """Body mass of a person of ``height`` m with the body-mass index :data:`REFERENCE_BMI`,
    kg (``BMI x height^2``: same height, same mass; 1.75 m -> 67.4 kg)."""
    return REFERENCE_BMI * float(height) ** 2


def with_body_mass(skel: Skeleton, mass: float, source: str) -> Skeleton:
    """``skel`` with its segment masses (and inertias) scaled to total ``mass`` kg, the mass
    distribution kept; every segment at least 0.1 kg (the total stays ``mass``). ``source`` goes to
    ``meta["mass_source"]``."""
    scale = float(mass) / float(skel.masses.sum())
    masses = skel.masses * scale
    inertias = skel.inertias * scale
    light = masses < 0.1
    inertias[light] *= (0.1 / masses[light])[:, None, None]
    masses[light] = 0.1
    heavy = ~light
    if heavy.any():  # the 0.1 kg floor added mass: take it from the other segments
        k = (float(mass) - 0.1 * light.sum()) / masses[heavy].sum()
        if k > 0:
            masses[heavy] *= k
            inertias[heavy] *= k
    return skel.replace(masses=masses, inertias=inertias,
                        meta={**dict(skel.meta), "mass_source": source})


def bone_mass_properties(
    parents: np.ndarray, bones: np.ndarray, rest_rotations: np.ndarray | None = None,
    sites_for: Sequence[tuple[int, np.ndarray]] = (),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimate segment mass, COM and inertia from bone geometry.

    Each joint's segment is a set of solid cylinders from the joint to each child joint (or to
    its site, on a leaf), radius 12 % of the bone length. Masses are then scaled so the whole
    body weighs ``22 kg/m² × height²`` (a human of body-mass index 22; height = the largest
    extent of the rest pose below the root joint), every segment at least 0.1 kg. Used for skeletons that come
    without mass data (e.g. from BVH): a plausible model, not a measurement.

    Args:
        parents: ``(J,)`` parent indices.
        bones: ``(J, 3)`` rest translation of each joint in its parent's frame, m.
        rest_rotations: ``(J, 3, 3)`` rest rotations (identity if ``None``).
        sites_for: ``(joint, offset)`` pairs giving a bone end for leaf joints.

    Returns:
        masses ``(J,)`` kg, coms ``(J, 3)`` m, inertias ``(J, 3, 3)`` kg·m² about the COM.
    """
    J = len(parents)
    bones = np.asarray(bones, dtype=float)
    rots = np.tile(np.eye(3), (J, 1, 1)) if rest_rotations is None else np.asarray(rest_rotations)
    ends: list[list[np.ndarray]] = [[] for _ in range(J)]
    for j in range(1, J):
        ends[parents[j]].append(bones[j])
    for j, off in sites_for:
        if not ends[j]:
            ends[j].append(np.asarray(off, float))
    # A root whose one bone leads to the branching joint of the figure (Bandai's joint_Root at
    # the capture volume's origin, 4.5 m from the Hips) only places the figure: it is not a
    # body part, so it gets no cylinder (it would weigh most of the body and put the COM metres
    # off the feet). A root of a plain chain (its child has one child) keeps its bone.
    kids = np.bincount(np.asarray(parents)[1:], minlength=J) if J > 1 else np.zeros(J, int)
    placement = [j for j in range(J) if parents[j] < 0 and kids[j] == 1
                 and kids[int(np.flatnonzero(np.asarray(parents) == j)[0])] >= 2]
    for j in placement:
        ends[j] = []
    # Rest-pose extent for the total mass.
    world_r = np.empty((J, 3, 3))
    world_p = np.empty((J, 3))
    for j in range(J):
        p = parents[j]
        if p < 0:
            world_r[j], world_p[j] = rots[j], bones[j]
        else:
            world_r[j] = world_r[p] @ rots[j]
            world_p[j] = world_p[p] + world_r[p] @ bones[j]
    # The root's own placement is often a capture-volume position (Bandai's Hips OFFSET has
    # -452 cm), not part of the figure: measure the extent of the joints below the root.
    pts = [world_p[1:] if J > 1 else world_p]
    pts += [(world_p[j] + world_r[j] @ off)[None] for j, off in sites_for if j > 0 or J == 1]
    extent = np.ptp(np.concatenate(pts), axis=0).max() if J else 0.0
    masses = np.zeros(J)
    coms = np.zeros((J, 3))
    inertias = np.zeros((J, 3, 3))
    for j in range(J):
        parts = []
        for e in ends[j]:
            length = float(np.linalg.norm(e))
            if not 1e-6 < length < 1e6:
                continue
            r = 0.12 * length
            m = 1000.0 * np.pi * r * r * length
            u = e / length
            # Solid cylinder about its centre: axial m r²/2, transverse m (3r² + L²)/12.
            i_ax, i_tr = 0.5 * m * r * r, m * (3 * r * r + length * length) / 12.0
            inertia = i_tr * np.eye(3) + (i_ax - i_tr) * np.outer(u, u)
            parts.append((m, 0.5 * e, inertia))
        if not parts:
            parts = [(1e-3, np.zeros(3), np.eye(3) * 1e-3 * 0.02**2 * 0.4)]
        m_tot = sum(p[0] for p in parts)
        com = sum(p[0] * p[1] for p in parts) / m_tot
        inertia = np.zeros((3, 3))
        for m, c, i_c in parts:
            d = c - com
            inertia += i_c + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
        masses[j], coms[j], inertias[j] = m_tot, com, inertia
    if np.isfinite(extent) and 1e-3 < extent < 1e3:
        scale = 22.0 * extent**2 / masses.sum()
        masses *= scale
        inertias *= scale
    light = masses < 0.1  # keep every body physically meaningful for simulators
    inertias[light] *= (0.1 / masses[light])[:, None, None]
    masses[light] = 0.1
    return masses, coms, inertias
