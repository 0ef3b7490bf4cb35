"""Scene files: a rig, a pose, effector targets and pins, and IK solver settings, in TOML.

A scene is what the app saves with Ctrl+S and opens from ``scenes/``. It holds no GL state and
can drive the library directly::

    scene = animik.load_scene("scenes/body95.toml")
    result = animik.ik.solve_ik(scene.skeleton, scene.q, scene.all_targets,
                                solver=scene.solver, **scene.solver_options)
    # scene.targets: the goals; scene.pinned / scene.pin_targets: the pins and where they hold

Format (every section but ``[scene]`` is optional)::

    format = "animik-scene"
    format_version = 1

    [scene]
    name = "body95"
    rig = "body95"              # built-in rig, or a .toml rig / .bvh file (relative to this file)
    frame = 0                   # with a .bvh rig: the clip frame the pose starts from

    [pose]                      # joint coordinates by DoF name, rad / m (missing: the rest
    l_shoulder_flex = 0.3       # value, or the BVH frame's value)

    [[targets]]                 # one per constrained effector site
    site = "l_hand"
    position = [0.3, 0.25, 1.1] # m, world (Z up)
    rotation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]  # optional: a 6-D target
                                # (world_from_site rows; or orientation = [w, x, y, z])
    pinned = false              # true: a pin, the effector is held where it is
    weight = 1.0                # optional, > 0

    [solver]
    name = "fik"                # any of animik.ik.SOLVERS
    iterations_per_frame = 20   # the app's per-frame iteration budget
    [solver.options]            # keyword options of that solver, passed through unchanged
    h = 0.02

    [camera]                    # the app's view (optional)
    target = [0.0, 0.0, 1.0]
    distance = 3.5
    yaw_deg = 35.0
    pitch_deg = 12.0

Angles of the camera are stored in degrees (``*_deg``, the only conversion); everything else is
SI. Writing then reading a scene gives an equal one (floats are written with ``repr``; 6-D
targets as rotation matrices; hand-written files may give a wxyz ``orientation`` quaternion).
"""

from __future__ import annotations

import importlib
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from .anim.serialize import clip_from_dict, clips_to_toml
from .errors import AnimikError, FileFormatError, names_hint
from .ik import SOLVERS
from .io._atomic import atomic_write
from .io.toml_fields import FieldReader
from .io.toml_writer import inline as _inline
from .io.toml_writer import key as _key
from .io.toml_writer import num as _num
from .io.toml_writer import string as _str
from .io.toml_writer import vec as _vec
from .motion import Motion
from .rigs import is_builtin, resolve_rig
from .rotations import quat_to_matrix
from .skeleton import Skeleton
from .skeleton import freeze as _freeze

FORMAT = "animik-scene"
FORMAT_VERSION = 1

_TOP_KEYS = {"format", "format_version", "scene", "pose", "targets", "solver", "camera", "clips"}
_SCENE_KEYS = {"name", "rig", "frame", "description"}
_TARGET_KEYS = {"site", "position", "rotation", "orientation", "pinned", "weight"}
_SOLVER_KEYS = {"name", "iterations_per_frame", "options"}
_CAMERA_KEYS = {"target", "distance", "yaw_deg", "pitch_deg"}


@dataclass(frozen=True, eq=False)
class SceneTarget:
    """One constrained effector.

    Attributes:
        site: site name.
        position: ``(3,)`` target position, m, world frame.
        rotation: ``(3, 3)`` target rotation (world_from_site) for a 6-D target, else ``None``.
        pinned: a pin (the effector is held where it is) rather than a goal to reach.
        weight: task weight (> 0).
    """

    site: str
    position: np.ndarray
    rotation: np.ndarray | None = None
    pinned: bool = False
    weight: float = 1.0

    def __post_init__(self) -> None:
        p = np.array(self.position, dtype=float)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise FileFormatError(f"target {self.site!r}: position must be 3 finite numbers, "
                                  f"got {self.position!r}")
        p.setflags(write=False)
        object.__setattr__(self, "position", p)
        if self.rotation is not None:
            r = np.array(self.rotation, dtype=float)
            if r.shape != (3, 3) or not np.all(np.isfinite(r)) \
                    or np.max(np.abs(r @ r.T - np.eye(3))) > 1e-6 or np.linalg.det(r) < 0:
                raise FileFormatError(f"target {self.site!r}: rotation must be a 3x3 rotation "
                                      "matrix")
            r.setflags(write=False)
            object.__setattr__(self, "rotation", r)
        w = float(self.weight)
        if not (math.isfinite(w) and w > 0):
            raise FileFormatError(f"target {self.site!r}: weight must be a positive number, "
                                  f"got {self.weight!r}")
        object.__setattr__(self, "weight", w)
        object.__setattr__(self, "pinned", bool(self.pinned))

    @property
    def ik_target(self) -> Any:
        """The target in :func:`animik.ik.solve_ik`'s form: position or (position, rotation)."""
        return self.position if self.rotation is None else (self.position, self.rotation)


@dataclass(frozen=True, eq=False)
class Scene:
    """A posed character with its IK set-up. Build with :meth:`from_skeleton` or :func:`load_scene`.

    Attributes:
        rig: how the rig is named in the file: a built-in rig name or a file path.
        skeleton: the loaded skeleton.
        q: ``(n_dof,)`` pose, rad / m (read-only).
        targets_list: the constrained effectors, in order.
        solver: IK solver name.
        iterations_per_frame: the app's per-frame iteration budget.
        solver_options: keyword options of the solver (read-only mapping).
        camera: the app's view, ``{"target": (3,), "distance", "yaw", "pitch"}`` (rad), or ``None``.
        name: scene name.
        frame: with a BVH rig, the clip frame the pose came from.
        path: the file the scene was read from (``None`` if built in memory).
        motion: with a BVH rig, the clip read from it (not written: it is the rig file's).
        clips: keyframe animation clips (:class:`animik.anim.Clip`), names unique.
    """

    rig: str
    skeleton: Skeleton
    q: np.ndarray
    targets_list: tuple[SceneTarget, ...] = ()
    solver: str = "fik"
    iterations_per_frame: int = 20
    solver_options: Mapping[str, Any] = field(default_factory=dict)
    camera: Mapping[str, Any] | None = None
    name: str = ""
    frame: int = 0
    path: Path | None = None
    motion: Motion | None = None
    clips: tuple = ()

    def __post_init__(self) -> None:
        clips = tuple(self.clips)
        names = [c.name for c in clips]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise FileFormatError(f"scene clips must have unique names; duplicated: {dup}")
        for c in clips:
            if c.skeleton is not self.skeleton and c.skeleton.dof_names != self.skeleton.dof_names:
                raise FileFormatError(f"clip {c.name!r} belongs to another skeleton")
        object.__setattr__(self, "clips", clips)
        q = self.skeleton.check_q(self.q, "scene pose")
        if q.ndim != 1:
            raise FileFormatError(f"scene pose must have shape ({self.skeleton.n_dof},), got {q.shape}")
        q = np.array(q, dtype=float)
        q.setflags(write=False)
        object.__setattr__(self, "q", q)
        tl = tuple(self.targets_list)
        seen = set()
        for t in tl:
            if not isinstance(t, SceneTarget):
                raise FileFormatError(f"targets_list must hold SceneTarget objects, got {t!r}")
            self.skeleton.site_index(t.site)
            if t.site in seen:
                raise FileFormatError(f"site {t.site!r} has more than one target")
            seen.add(t.site)
        object.__setattr__(self, "targets_list", tl)
        object.__setattr__(self, "solver_options", MappingProxyType(dict(self.solver_options)))
        if self.camera is not None:
            object.__setattr__(self, "camera", MappingProxyType(dict(self.camera)))
        it = self.iterations_per_frame
        if isinstance(it, bool) or not isinstance(it, (int, np.integer)) or it < 1:
            raise FileFormatError(f"iterations_per_frame must be an integer >= 1, got {it!r}")

    @classmethod
    def from_skeleton(cls, skeleton: Skeleton, rig: str | None = None, q: Any = None,
                      **kw: Any) -> Scene:
        """A scene on ``skeleton`` at ``q`` (default: the rest pose) with no targets."""
        return cls(rig=rig if rig is not None else skeleton.name, skeleton=skeleton,
                   q=skeleton.rest_q if q is None else q, **kw)

    @property
    def targets(self) -> dict[str, Any]:
        """``{site: target}`` of the goals that are not pins (for :func:`animik.ik.solve_ik`)."""
        return {t.site: t.ik_target for t in self.targets_list if not t.pinned}

    @property
    def pinned(self) -> tuple[str, ...]:
        """Names of the pinned sites."""
        return tuple(t.site for t in self.targets_list if t.pinned)

    @property
    def pin_targets(self) -> dict[str, Any]:
        """``{site: target}`` of the pins: where each pinned effector is held."""
        return {t.site: t.ik_target for t in self.targets_list if t.pinned}

    @property
    def all_targets(self) -> dict[str, Any]:
        """Goals and pins together: every constrained site with its target."""
        return {t.site: t.ik_target for t in self.targets_list}

    @property
    def weights(self) -> dict[str, float]:
        return {t.site: t.weight for t in self.targets_list}

    def replace(self, **changes: Any) -> Scene:
        return replace(self, **changes)


# ====================================================================== reading
def load_scene(path: str | os.PathLike) -> Scene:
    """Read a scene file.

    Args:
        path: a ``.toml`` scene file. A relative rig path inside it is resolved against the
            scene file's folder.

    Returns:
        The :class:`Scene`, with its rig loaded.

    Raises:
        FileFormatError: not TOML, not a scene, or a bad value (the message names the key).
        RigNotFoundError: the scene's rig is neither built in nor an existing file.
        OSError: the file cannot be read.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise FileFormatError(f"{path}: not a text file ({e.reason})") from None
    return loads_scene(text, base_dir=path.parent, source=str(path), path=path)


def loads_scene(text: str, base_dir: str | os.PathLike | None = None, source: str = "<string>",
                path: Path | None = None) -> Scene:
    """Parse a scene from TOML text (see :func:`load_scene`)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FileFormatError(f"{source}: not a valid TOML scene file: {e}") from None
    return _Reader(source, base_dir).scene(doc, path)


class _Reader(FieldReader):
    def __init__(self, source: str, base_dir: str | os.PathLike | None):
        self.source = source
        self.base_dir = Path(base_dir) if base_dir is not None else None

    def fail(self, where: str, problem: str) -> FileFormatError:
        return FileFormatError(f"{self.source}: {where}: {problem}")

    def vector(self, v: Any, where: str, n: int) -> np.ndarray:
        if not isinstance(v, list) or len(v) != n:
            raise self.fail(where, f"must be a list of {n} numbers, got {v!r}")
        return np.array([self.number(x, where) for x in v])

    def scene(self, doc: dict, path: Path | None) -> Scene:
        self.table(doc, "top level", _TOP_KEYS)
        fmt = doc.get("format", FORMAT)
        if fmt != FORMAT:
            raise self.fail("format", f"expected {FORMAT!r}, got {fmt!r}")
        ver = doc.get("format_version", FORMAT_VERSION)
        if ver != FORMAT_VERSION:
            raise self.fail("format_version", f"this animik reads version {FORMAT_VERSION}, "
                                              f"got {ver!r}")
        if "scene" not in doc:
            raise self.fail("top level", "missing the [scene] table (with rig = ...)")
        sc = self.table(doc["scene"], "[scene]", _SCENE_KEYS)
        rig = sc.get("rig")
        if not isinstance(rig, str) or not rig:
            raise self.fail("[scene] rig", f"must be a rig name or file path, got {rig!r}")
        skel, motion = self.load_rig(rig)
        frame = sc.get("frame", 0)
        if isinstance(frame, bool) or not isinstance(frame, int) or frame < 0:
            raise self.fail("[scene] frame", f"must be an integer >= 0, got {frame!r}")
        if motion is not None:
            if frame >= motion.n_frames:
                raise self.fail("[scene] frame", f"the clip has {motion.n_frames} frames, got {frame}")
            q = np.array(motion.q[frame], dtype=float)
        else:
            q = np.array(skel.rest_q, dtype=float)
        pose = doc.get("pose", {})
        if not isinstance(pose, dict):
            raise self.fail("[pose]", "must be a table of DoF name = value")
        for name, v in pose.items():
            if name not in skel.dof_names:
                raise self.fail(f"[pose] {name}", f"unknown DoF of rig {skel.name!r}; DoFs are "
                                                  f"{names_hint(skel.dof_names)}")
            q[skel.dof_index(name)] = self.number(v, f"[pose] {name}")
        targets = doc.get("targets", [])
        if not isinstance(targets, list):
            raise self.fail("[[targets]]", "must be an array of tables")
        tl = []
        for i, td in enumerate(targets):
            where = f"targets[{i}]"
            td = self.table(td, where, _TARGET_KEYS)
            site = td.get("site")
            if not isinstance(site, str) or site not in skel.site_names:
                raise self.fail(f"{where}.site", f"unknown site {site!r} of rig {skel.name!r}; "
                                                 f"sites are {names_hint(skel.site_names)}")
            if "position" not in td:
                raise self.fail(where, "missing position")
            pos = self.vector(td["position"], f"{where}.position", 3)
            rot = None
            if "rotation" in td and "orientation" in td:
                raise self.fail(where, "give rotation or orientation, not both")
            if "rotation" in td:
                m = td["rotation"]
                if not isinstance(m, list) or len(m) != 3:
                    raise self.fail(f"{where}.rotation", "must be 3 rows of 3 numbers")
                rot = np.array([self.vector(r, f"{where}.rotation", 3) for r in m])
                if np.max(np.abs(rot @ rot.T - np.eye(3))) > 1e-6 or np.linalg.det(rot) < 0:
                    raise self.fail(f"{where}.rotation", "is not a rotation matrix")
            if "orientation" in td:
                quat = self.vector(td["orientation"], f"{where}.orientation", 4)
                if np.linalg.norm(quat) < 1e-9:
                    raise self.fail(f"{where}.orientation", "quaternion must be non-zero")
                rot = quat_to_matrix(quat / np.linalg.norm(quat))
            pinned = td.get("pinned", False)
            if not isinstance(pinned, bool):
                raise self.fail(f"{where}.pinned", f"must be true or false, got {pinned!r}")
            weight = self.number(td.get("weight", 1.0), f"{where}.weight")
            if weight <= 0:
                raise self.fail(f"{where}.weight", f"must be positive, got {weight}")
            tl.append(SceneTarget(site, pos, rot, pinned, weight))
        solver, iters, opts = "fik", 20, {}
        if "solver" in doc:
            sd = self.table(doc["solver"], "[solver]", _SOLVER_KEYS)
            solver = sd.get("name", solver)
            if not isinstance(solver, str) or solver not in SOLVERS:
                raise self.fail("[solver] name", f"unknown solver {solver!r}; solvers are "
                                                 f"{sorted(SOLVERS)}")
            iters = sd.get("iterations_per_frame", iters)
            if isinstance(iters, bool) or not isinstance(iters, int) or iters < 1:
                raise self.fail("[solver] iterations_per_frame",
                                f"must be an integer >= 1, got {iters!r}")
            opts = sd.get("options", {})
            if not isinstance(opts, dict):
                raise self.fail("[solver.options]", "must be a table")
            opts = {k: _freeze(v) for k, v in opts.items()}
            _check_solver_options(solver, opts, skel, self)
        camera = None
        if "camera" in doc:
            cd = self.table(doc["camera"], "[camera]", _CAMERA_KEYS)
            camera = {}
            if "target" in cd:
                camera["target"] = tuple(self.vector(cd["target"], "[camera] target", 3))
            if "distance" in cd:
                d = self.number(cd["distance"], "[camera] distance")
                if d <= 0:
                    raise self.fail("[camera] distance", f"must be positive, got {d}")
                camera["distance"] = d
            for k in ("yaw", "pitch"):
                if f"{k}_deg" in cd:
                    camera[k] = math.radians(self.number(cd[f"{k}_deg"], f"[camera] {k}_deg"))
        name = sc.get("name", skel.name)
        if not isinstance(name, str):
            raise self.fail("[scene] name", f"must be a string, got {name!r}")
        clips = []
        raw_clips = doc.get("clips", [])
        if not isinstance(raw_clips, list):
            raise self.fail("clips", "must be an array of tables ([[clips]])")
        if raw_clips:
            for i, cd in enumerate(raw_clips):
                if not isinstance(cd, dict):
                    raise self.fail(f"clips[{i}]", "must be a table")
                try:
                    clips.append(clip_from_dict(cd, skel, where=f"{self.source}: clips[{i}]"))
                except AnimikError as e:
                    raise self.fail(f"clips[{i}]", str(e)) from None
        try:
            return Scene(rig=rig, skeleton=skel, q=skel.clip_to_limits(q), targets_list=tuple(tl),
                         solver=solver, iterations_per_frame=iters, solver_options=opts,
                         camera=camera, name=name, frame=frame, path=path, motion=motion,
                         clips=tuple(clips))
        except AnimikError as e:
            raise self.fail("scene", str(e)) from None

    def load_rig(self, rig: str) -> tuple[Skeleton, Motion | None]:
        src = resolve_rig(rig, base_dir=self.base_dir)
        return src.skeleton, src.motion


def _check_solver_options(solver: str, opts: dict[str, Any], skel: Skeleton, reader) -> None:
    """Check ``[solver.options]`` when the scene loads (names and values, as the solver's
    per-frame set-up does), not at the first solve: a bad scene fails to open, with the option
    named."""
    from .ik import prepare_ik
    from .ik.fik import resolve_options
    from .kinematics import site_positions

    try:
        if solver in ("fik", "fik_fixed"):
            resolve_options(skel, opts, fixed=solver == "fik_fixed")  # names, tuning
            if skel.n_sites:  # values: the per-frame set-up checks them all
                site = skel.site_names[0]
                prepare_ik(skel, skel.rest_q, {site: site_positions(skel, skel.rest_q)[0]},
                           solver, **opts)
        else:
            from .ik._baseline import parse_options

            parse_options(solver, opts, importlib.import_module(SOLVERS[solver]).DEFAULTS)
    except AnimikError as e:
        raise reader.fail("[solver.options]", str(e)) from None


# ====================================================================== writing
def save_scene(scene: Scene, path: str | os.PathLike) -> Path:
    """Write ``scene`` to ``path`` atomically (a failed write leaves any old file intact).

    A rig given by file path is written relative to the scene's folder when it lies below it.

    Returns:
        The path written.
    """
    path = Path(path)
    return atomic_write(path, dumps_scene(scene, base_dir=path.resolve().parent))


def dumps_scene(scene: Scene, base_dir: str | os.PathLike | None = None) -> str:
    """The TOML text of a scene (see :func:`save_scene`)."""
    rig = scene.rig
    if not is_builtin(rig):
        rp = Path(rig)
        if not rp.is_absolute() and scene.path is not None:
            rp = scene.path.resolve().parent / rp
        rp = rp.resolve() if rp.exists() else rp
        if base_dir is not None and rp.is_absolute():
            try:
                rp = rp.relative_to(Path(base_dir).resolve())
            except ValueError:
                pass
        rig = rp.as_posix()
    skel = scene.skeleton
    out = [
        "# animik scene: rig, pose (rad / m by DoF name), effector targets and pins, solver.",
        f'format = "{FORMAT}"',
        f"format_version = {FORMAT_VERSION}",
        "",
        "[scene]",
        f"name = {_str(scene.name or skel.name)}",
        f"rig = {_str(rig)}",
    ]
    if scene.frame:
        out.append(f"frame = {int(scene.frame)}")
    out += ["", "[solver]", f"name = {_str(scene.solver)}",
            f"iterations_per_frame = {int(scene.iterations_per_frame)}"]
    if scene.solver_options:
        out += ["", "[solver.options]"]
        for k, v in scene.solver_options.items():
            out.append(f"{_key(k)} = {_inline(v, f'solver.options.{k}')}")
    if scene.camera:
        c = scene.camera
        out += ["", "[camera]"]
        if "target" in c:
            out.append(f"target = {_vec(c['target'])}")
        if "distance" in c:
            out.append(f"distance = {_num(c['distance'])}")
        for k in ("yaw", "pitch"):
            if k in c:
                # 12 significant digits: 30.0 rather than 29.999999999999996 (1e-10 rad)
                out.append(f"{k}_deg = {_num(float(f'{math.degrees(float(c[k])):.12g}'))}")
    for t in scene.targets_list:
        out += ["", "[[targets]]", f"site = {_str(t.site)}", f"position = {_vec(t.position)}"]
        if t.rotation is not None:  # the matrix, not a quaternion: round trips are exact
            out.append("rotation = [" + ", ".join(_vec(r) for r in t.rotation) + "]")
        out.append(f"pinned = {'true' if t.pinned else 'false'}")
        if t.weight != 1.0:
            out.append(f"weight = {_num(t.weight)}")
    out += ["", "[pose]"]
    for name, v in zip(skel.dof_names, scene.q, strict=True):
        out.append(f"{_key(name)} = {_num(v)}")
    if scene.clips:
        out.append(clips_to_toml(scene.clips).rstrip("\n"))
    return "\n".join(out) + "\n"








__all__ = ["Scene", "SceneTarget", "dumps_scene", "load_scene", "loads_scene", "save_scene"]
