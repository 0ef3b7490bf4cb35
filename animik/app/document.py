"""The undoable part of the app: :class:`Document` (immutable) and its :class:`History`.

The *document* is everything a user edits and an undo step restores: the skeleton and where it
came from, the pose ``q``, every effector's mode and target, the solver settings, the keyframe
clips with the current clip and the playhead time, and the current app mode's own data
(:class:`ModeData`, e.g. retarget mode's edits; None in the pose mode). Edits replace the
document with a new one (cheap: arrays are shared) and :func:`animik.app.edits.commit` records
it in the :class:`History`.

Arrays are validated and made read-only once, when they enter a document; a read-only array
that owns its data (one a document or effector already holds) is kept as it is, so replacing
other fields copies nothing. No GL and no other app module here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from ..anim import Clip
from ..character import SkinnedMesh
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..skeleton import Skeleton


def frozen_array(a: Any, shape: tuple[int, ...] | None = None, what: str = "array") -> np.ndarray:
    """``a`` as a read-only float64 array (no copy when it already is one that owns its data).

    Raises:
        ValueError: ``shape`` given and ``a`` does not have it.
    """
    if (isinstance(a, np.ndarray) and a.dtype == np.float64 and not a.flags.writeable
            and a.flags.owndata):
        out = a  # trusted: read-only and owning its memory, nobody can change it
    else:
        out = np.array(a, dtype=float)
        out.setflags(write=False)
    if shape is not None and out.shape != shape:
        raise ValueError(f"{what} must have shape {shape}, got {out.shape}")
    return out


@dataclass(frozen=True, eq=False)
class ModeData:
    """Base of an app mode's undoable data (``Document.mode``; None: the pose mode).

    A mode (see :mod:`animik.app.modes`) subclasses this with its own immutable fields; the
    mode registry maps the subclass to the :class:`~animik.app.modes.base.Mode` that runs it.

    Attributes:
        name: the mode's registry name (a class constant).
    """

    name: ClassVar[str] = ""


FREE, TARGET, PINNED = "free", "target", "pinned"
MODES = (FREE, TARGET, PINNED)

LIMIT_EPS = 1e-4  # rad / m: a DoF this close to a finite limit counts as "at the limit"


@dataclass(frozen=True, eq=False)
class Effector:
    """One effector site and its IK constraint.

    Attributes:
        site: site name.
        mode: ``"free"`` (no constraint; the handle sits on the site), ``"target"`` (a goal the
            IK pulls the site to) or ``"pinned"`` (held where it was pinned).
        position: ``(3,)`` target position, m (meaningful when not free).
        rotation: ``(3, 3)`` target rotation for a 6-D target (position + orientation), else None.
        weight: task weight (> 0).
    """

    site: str
    mode: str = FREE
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"effector mode must be one of {MODES}, got {self.mode!r}")
        object.__setattr__(self, "position", frozen_array(self.position))
        if self.rotation is not None:
            object.__setattr__(self, "rotation", frozen_array(self.rotation))

    @property
    def active(self) -> bool:
        return self.mode != FREE

    @property
    def oriented(self) -> bool:
        return self.rotation is not None

    def replace(self, **kw: Any) -> Effector:
        return dataclasses.replace(self, **kw)

    def same_as(self, other: Effector) -> bool:
        return (self.site == other.site and self.mode == other.mode
                and np.array_equal(self.position, other.position)
                and (self.rotation is None) == (other.rotation is None)
                and (self.rotation is None or np.array_equal(self.rotation, other.rotation))
                and self.weight == other.weight)


@dataclass(frozen=True, eq=False)
class SolverSettings:
    """IK settings applied live.

    Attributes:
        name: solver name (a key of :data:`animik.ik.SOLVERS`).
        iterations: iteration budget per frame (the solver's ``max_iterations``).
        options: ``{solver name: {option: value}}``: each solver keeps its own settings, so
            switching back and forth loses nothing; only the current solver's are used and saved.
    """

    name: str = "fik"
    iterations: int = 20
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(
            {k: MappingProxyType(dict(v)) for k, v in self.options.items()}))

    @property
    def current(self) -> Mapping[str, Any]:
        """Options of the current solver."""
        return self.options.get(self.name, MappingProxyType({}))

    def with_option(self, key: str, value: Any) -> SolverSettings:
        opts = {k: dict(v) for k, v in self.options.items()}
        opts.setdefault(self.name, {})[key] = value
        return dataclasses.replace(self, options=opts)

    def without_option(self, key: str) -> SolverSettings:
        opts = {k: dict(v) for k, v in self.options.items()}
        opts.get(self.name, {}).pop(key, None)
        return dataclasses.replace(self, options=opts)

    def replace(self, **kw: Any) -> SolverSettings:
        return dataclasses.replace(self, **kw)

    def same_as(self, other: SolverSettings) -> bool:
        return (self.name == other.name and self.iterations == other.iterations
                and {k: dict(v) for k, v in self.options.items()}
                == {k: dict(v) for k, v in other.options.items()})


@dataclass(frozen=True, eq=False)
class Document:
    """The undoable part of the app state.

    Attributes:
        skeleton: the character.
        rig: where it came from: a built-in rig name or a file path (``.toml`` rig or ``.bvh``).
        q: ``(n_dof,)`` pose, rad / m (read-only).
        effectors: one :class:`Effector` per site, in site order.
        solver: the IK settings.
        motion: the BVH motion when the rig came from a BVH file, else None.
        frame: the BVH frame the pose was last taken from.
        name: scene name (window title, default file name).
        clips: keyframe clips (:class:`animik.anim.Clip` on ``skeleton``), names unique.
        clip: index of the current clip in ``clips`` (-1: none).
        time: the playhead, s (a frame time ``i / fps`` of the current clip).
        mode: the data of the app mode the document is in (a :class:`ModeData` subclass, e.g.
            :class:`animik.app.modes.retarget.RetargetLink`), or None: the pose mode.
        mesh: the character's skinned body (:class:`animik.character.SkinnedMesh` bound to
            ``skeleton``), or None: drawn as bones.
    """

    skeleton: Skeleton
    rig: str
    q: np.ndarray
    effectors: tuple[Effector, ...]
    solver: SolverSettings = field(default_factory=SolverSettings)
    motion: Motion | None = None
    frame: int = 0
    name: str = ""
    clips: tuple[Clip, ...] = ()
    clip: int = -1
    time: float = 0.0
    mode: ModeData | None = None
    mesh: SkinnedMesh | None = None

    def __post_init__(self) -> None:
        if self.mesh is not None and len(self.mesh.inverse_bind) != self.skeleton.n_joints:
            raise ValueError(f"mesh binds {len(self.mesh.inverse_bind)} joints, the skeleton has "
                             f"{self.skeleton.n_joints}")
        clips = tuple(self.clips)
        object.__setattr__(self, "clips", clips)
        if not clips:
            object.__setattr__(self, "clip", -1)
        elif not 0 <= self.clip < len(clips):
            raise ValueError(f"clip must be an index into the {len(clips)} clips, got {self.clip}")
        object.__setattr__(self, "time", float(self.time))
        object.__setattr__(self, "q", frozen_array(self.q, (self.skeleton.n_dof,), "q"))
        eff = tuple(self.effectors)
        if tuple(e.site for e in eff) != self.skeleton.site_names:
            raise ValueError("effectors must list every site of the skeleton, in site order")
        object.__setattr__(self, "effectors", eff)

    @classmethod
    def new(cls, skeleton: Skeleton, rig: str, q: np.ndarray | None = None, **kw: Any) -> Document:
        """A document with every effector free, at ``q`` (default: the rest pose)."""
        q = skeleton.rest_q if q is None else q
        fk = forward_kinematics(skeleton, q)
        eff = tuple(Effector(s, FREE, fk.site_positions[i]) for i, s in enumerate(skeleton.site_names))
        return cls(skeleton, rig, q, eff, **kw)

    def replace(self, **kw: Any) -> Document:
        return dataclasses.replace(self, **kw)

    def with_pose(self, q: np.ndarray) -> Document:
        """The document with pose ``q`` and nothing else changed, without re-validating the
        rest (the per-frame path: a solver's or a clip's ``(n_dof,)`` pose).

        Raises:
            ValueError: ``q`` is not ``(n_dof,)``.
        """
        new = object.__new__(Document)
        new.__dict__.update(self.__dict__)
        object.__setattr__(new, "q", frozen_array(q, (self.skeleton.n_dof,), "q"))
        return new

    def effector(self, site: str) -> Effector:
        return self.effectors[self.skeleton.site_index(site)]

    def with_effector(self, eff: Effector) -> Document:
        i = self.skeleton.site_index(eff.site)
        effs = list(self.effectors)
        effs[i] = eff
        return self.replace(effectors=tuple(effs))

    def same_as(self, other: Document) -> bool:
        """Equal content (used to skip no-op history entries)."""
        return np.array_equal(self.q, other.q) and self.same_but_q(other)

    @property
    def current_clip(self) -> Clip | None:
        return self.clips[self.clip] if self.clips else None

    def with_clip(self, clip: Clip) -> Document:
        """The document with the current clip replaced by ``clip``."""
        clips = list(self.clips)
        clips[self.clip] = clip
        return self.replace(clips=tuple(clips))

    def same_but_q(self, other: Document) -> bool:
        """Equal in everything but the pose."""
        return (self.skeleton is other.skeleton and self.rig == other.rig
                and self.frame == other.frame
                and self.motion is other.motion and self.name == other.name
                and self.clip == other.clip and self.time == other.time
                and len(self.clips) == len(other.clips)
                and all(a is b for a, b in zip(self.clips, other.clips, strict=True))
                and all(a.same_as(b) for a, b in zip(self.effectors, other.effectors, strict=True))
                and self.solver.same_as(other.solver)
                and self.mode is other.mode and self.mesh is other.mesh)


class History:
    """Linear undo/redo of :class:`Document` snapshots (each entry is the state after an edit)."""

    def __init__(self, doc: Document, limit: int = 500):
        self.entries: list[tuple[str, Document]] = [("open", doc)]
        # per entry, what the app notes about it besides the document (its scene file):
        # kept in step with ``entries`` (an amend keeps the entry's notes)
        self.notes: list[dict[str, Any]] = [{}]
        self.index = 0
        self.limit = limit

    @property
    def current(self) -> Document:
        return self.entries[self.index][1]

    def push(self, label: str, doc: Document) -> bool:
        """Record ``doc`` after an edit; returns False (nothing recorded) if nothing changed."""
        if doc.same_as(self.current):
            return False
        del self.entries[self.index + 1:]
        del self.notes[self.index + 1:]
        self.entries.append((label, doc))
        self.notes.append({})
        if len(self.entries) > self.limit:
            del self.entries[0]
            del self.notes[0]
        self.index = len(self.entries) - 1
        return True

    def amend(self, doc: Document) -> bool:
        """Replace the current entry by ``doc`` if only the pose differs (the IK settling after
        an edit belongs to that edit: undo/redo then restore the settled pose)."""
        cur = self.current
        if doc is cur or not doc.same_but_q(cur):
            return False
        self.entries[self.index] = (self.entries[self.index][0], doc)
        return True

    def can_undo(self) -> bool:
        return self.index > 0

    def can_redo(self) -> bool:
        return self.index < len(self.entries) - 1

    def undo(self) -> tuple[str, Document] | None:
        if not self.can_undo():
            return None
        label = self.entries[self.index][0]
        self.index -= 1
        return label, self.current

    def redo(self) -> tuple[str, Document] | None:
        if not self.can_redo():
            return None
        self.index += 1
        return self.entries[self.index]

    def reset(self, doc: Document, label: str = "open") -> None:
        self.entries = [(label, doc)]
        self.notes = [{}]
        self.index = 0
