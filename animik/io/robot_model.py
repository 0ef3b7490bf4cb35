"""A robot description read from URDF or MJCF, and the skeleton built from it.

:mod:`animik.io.urdf_read` and :mod:`animik.io.mjcf_read` parse their formats into the same
:class:`RobotDescription` (bodies with joints, inertials, sites and mesh geoms, in the file's
depth-first order); :func:`robot_skeleton` turns it into an immutable
:class:`~animik.skeleton.Skeleton`:

* **One skeleton joint per moving body** (URDF link, MJCF body), named by the body. URDF links
  attached by a ``fixed`` joint are *folded* into their parent as MuJoCo (``fusestatic``) and
  pinocchio (frames) do: their inertia is added to the parent's (parallel-axis theorem), their
  sites and meshes move to the parent, and a site named by the folded link marks its frame.
  MJCF bodies without joints are kept (MuJoCo keeps them) as joints with no DoF.
* **DoFs are the file's joints**: a hinge / revolute / continuous joint is one rotation DoF, a
  slide / prismatic joint one translation DoF, both named by the joint. A ``ball`` joint is three
  rotation DoFs ``<name>_rz, _ry, _rx`` (intrinsic Z-Y-X), a ``free`` / ``floating`` joint six DoFs
  ``<name>_tx, _ty, _tz, _rz, _ry, _rx`` (world translation, then intrinsic Z-Y-X); the model's
  own ``qpos`` (a quaternion ``wxyz`` for these) is recovered by
  :func:`animik.io.robot_qpos.qpos_from_q`.
* **Reference positions**: MuJoCo rotates a hinge by ``qpos - ref`` (``ref`` = qpos0). A
  reference on the first joint of a body is folded into the body's rest transform so that DoF
  values equal ``qpos`` exactly; the rest pose is ``qpos0``.

``skeleton.meta`` records ``format``, ``source``, ``folder``, ``qpos_layout`` (``(joint name,
kind, first DoF)`` per file joint, in qpos order), ``nq`` and ``warnings`` (what was ignored:
missing meshes, tendons, mimic joints...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FileFormatError
from ..rotations import euler_from_matrix, matrix_from_axis_angle
from ..skeleton import Dof, Joint, Site, Skeleton


class RobotFileError(FileFormatError):
    """A URDF / MJCF file animik cannot read: malformed XML, a closed loop, an unsupported
    element; the message names the file, the element and what is supported."""


#: Suffixes of the DoFs of a ball and a free joint (see the module docstring).
BALL_DOFS = ("rz", "ry", "rx")
FREE_DOFS = ("tx", "ty", "tz", "rz", "ry", "rx")


@dataclass
class RobotJoint:
    """One joint of a body: ``kind`` is ``"hinge"``, ``"slide"``, ``"ball"`` or ``"free"``."""

    name: str
    kind: str
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    lower: float = -np.inf
    upper: float = np.inf
    ref: float = 0.0
    anchor: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass
class RobotGeom:
    """A mesh drawn with a body: ``file`` (None when it could not be found), pose in the body
    frame, per-axis ``scale``, colour ``rgba``; or a primitive (``kind`` sphere, box, capsule,
    cylinder, ellipsoid with MJCF half-``size`` (3,), ``file`` None), listed apart in
    ``meta["robot_primitives"]``."""

    name: str
    file: Path | None
    pos: np.ndarray
    rot: np.ndarray
    scale: np.ndarray = field(default_factory=lambda: np.ones(3))
    rgba: tuple[float, float, float, float] = (0.7, 0.7, 0.72, 1.0)
    kind: str = "mesh"
    size: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass
class RobotBody:
    """A body (URDF link) with its pose in the parent body's frame at ``qpos0``."""

    name: str
    parent: str | None
    pos: np.ndarray
    rot: np.ndarray
    joints: list[RobotJoint] = field(default_factory=list)
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    sites: list[tuple[str, np.ndarray, np.ndarray]] = field(default_factory=list)
    geoms: list[RobotGeom] = field(default_factory=list)
    fold: bool = False


@dataclass
class RobotDescription:
    """What a URDF / MJCF file holds that animik uses (bodies parent-first, file order)."""

    name: str
    format: str
    source: str
    folder: Path | None
    bodies: list[RobotBody]
    warnings: list[str] = field(default_factory=list)


def _merge_inertia(m1: float, c1: np.ndarray, i1: np.ndarray, m2: float, c2: np.ndarray,
                   i2: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, COM and inertia about the COM of two rigid bodies in one frame (parallel axes)."""
    m = m1 + m2
    if m <= 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    c = (m1 * c1 + m2 * c2) / m
    out = np.zeros((3, 3))
    for mk, ck, ik in ((m1, c1, i1), (m2, c2, i2)):
        d = ck - c
        out += ik + mk * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return m, c, out


def robot_skeleton(desc: RobotDescription) -> Skeleton:
    """The skeleton of a robot description (see the module docstring).

    Raises:
        RobotFileError: a joint animik cannot represent exactly (a hinge or ball whose anchor is
            off the body origin, a reference position on a body's second joint).
    """
    # body name -> (kept ancestor, rotation, position) of a folded body in that ancestor's frame
    folded: dict[str, tuple[str, np.ndarray, np.ndarray]] = {}
    kept: list[RobotBody] = []
    extra_sites: dict[str, list[tuple[str, np.ndarray, np.ndarray]]] = {}
    parent_of: dict[str, str | None] = {}
    pose_of: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    inertial: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}
    geoms: dict[str, list[RobotGeom]] = {}
    for b in desc.bodies:
        parent, rot, pos = b.parent, np.asarray(b.rot, float), np.asarray(b.pos, float)
        if parent is not None and parent in folded:
            anc, ra, pa = folded[parent]
            parent, rot, pos = anc, ra @ rot, pa + ra @ pos
        if b.fold:
            if parent is None:
                raise RobotFileError(f"{desc.source}: the root body {b.name!r} cannot be fixed")
            folded[b.name] = (parent, rot, pos)
            extra_sites.setdefault(parent, []).append((b.name, pos, rot))
            for nm, sp, sr in b.sites:
                extra_sites[parent].append((nm, pos + rot @ sp, rot @ sr))
            m, c, i = inertial[parent]
            inertial[parent] = _merge_inertia(m, c, i, b.mass, pos + rot @ b.com,
                                              rot @ b.inertia @ rot.T)
            for g in b.geoms:
                geoms[parent].append(RobotGeom(g.name, g.file, pos + rot @ g.pos, rot @ g.rot,
                                               g.scale, g.rgba, g.kind, g.size))
            continue
        kept.append(b)
        parent_of[b.name] = parent
        pose_of[b.name] = (rot, pos)
        inertial[b.name] = (float(b.mass), np.asarray(b.com, float), np.asarray(b.inertia, float))
        geoms[b.name] = list(b.geoms)
        extra_sites.setdefault(b.name, [])
        extra_sites[b.name][:0] = [(nm, np.asarray(sp, float), np.asarray(sr, float))
                                   for nm, sp, sr in b.sites]

    joints: list[Joint] = []
    sites: list[Site] = []
    layout: list[tuple[str, str, int]] = []
    n_dof = 0
    taken_sites: set[str] = set()
    for b in kept:
        rot, pos = pose_of[b.name]
        dofs: list[Dof] = []
        for k, jt in enumerate(b.joints):
            if jt.kind in ("hinge", "ball") and np.linalg.norm(jt.anchor) > 1e-12:
                raise RobotFileError(
                    f"{desc.source}: joint {jt.name!r} of body {b.name!r} rotates about the point "
                    f"{tuple(float(x) for x in jt.anchor)} off the body origin; animik supports "
                    "rotation joints anchored at their body's origin (pos=\"0 0 0\")")
            if jt.ref != 0.0 and k > 0:
                raise RobotFileError(
                    f"{desc.source}: joint {jt.name!r} of body {b.name!r} has ref={jt.ref} and is "
                    "not the body's first joint; animik supports a reference position only on a "
                    "body's first joint")
            layout.append((jt.name, jt.kind, n_dof))
            if jt.kind == "free":
                if parent_of[b.name] is not None:
                    raise RobotFileError(f"{desc.source}: free joint {jt.name!r} on body "
                                         f"{b.name!r}, which is not attached to the world")
                t0, r0 = pos, rot
                pos, rot = np.zeros(3), np.eye(3)
                e0 = euler_from_matrix(r0, "zyx")
                rest = [*t0, *e0]
                for s, v in zip(FREE_DOFS, rest, strict=True):
                    dofs.append(Dof(f"{jt.name}_{s}", s, rest=float(v)))
                n_dof += 6
            elif jt.kind == "ball":
                for s in BALL_DOFS:
                    dofs.append(Dof(f"{jt.name}_{s}", s, rest=0.0))
                n_dof += 3
            else:
                axis = np.asarray(jt.axis, float)
                norm = np.linalg.norm(axis)
                if norm < 1e-12:
                    raise RobotFileError(f"{desc.source}: joint {jt.name!r} has a zero axis")
                axis = axis / norm
                if jt.ref != 0.0:
                    # MuJoCo moves the joint by (qpos - ref): fold -ref into the rest transform.
                    if jt.kind == "hinge":
                        rot = rot @ matrix_from_axis_angle(axis, np.array(-jt.ref))
                    else:
                        pos = pos - rot @ axis * jt.ref
                rest = min(max(jt.ref, jt.lower), jt.upper)
                dofs.append(Dof(jt.name, "r" if jt.kind == "hinge" else "t", float(jt.lower),
                                float(jt.upper), rest=rest, axis=tuple(float(a) for a in axis)))
                n_dof += 1
        m, c, i = inertial[b.name]
        joints.append(Joint(b.name, parent_of[b.name], offset=pos, dofs=dofs, rotation=rot,
                            mass=m, com=c, inertia=0.5 * (i + i.T)))
        for nm, sp, sr in extra_sites[b.name]:
            base, k = nm, 1
            while nm in taken_sites:
                k += 1
                nm = f"{base}_{k}"
            taken_sites.add(nm)
            sites.append(Site(nm, b.name, offset=sp, rotation=sr))
    nq = sum(7 if kind == "free" else 4 if kind == "ball" else 1 for _, kind, _ in layout)
    meta = {
        "format": desc.format, "source": desc.source,
        "folder": str(desc.folder) if desc.folder is not None else "",
        "qpos_layout": tuple(layout), "nq": nq, "warnings": tuple(desc.warnings),
        "mass_source": desc.format,
        "robot_geoms": tuple(
            (b.name, g.name, str(g.file) if g.file is not None else "", tuple(g.pos.tolist()),
             tuple(np.asarray(g.rot).ravel().tolist()), tuple(np.asarray(g.scale).tolist()),
             tuple(g.rgba))
            for b in kept for g in geoms[b.name] if g.kind == "mesh"),
        # (body, name, kind, half sizes, pos, rot (9,), rgba) in the body frame
        "robot_primitives": tuple(
            (b.name, g.name, g.kind, tuple(np.asarray(g.size, float).tolist()),
             tuple(g.pos.tolist()), tuple(np.asarray(g.rot).ravel().tolist()), tuple(g.rgba))
            for b in kept for g in geoms[b.name] if g.kind != "mesh"),
    }
    try:
        return Skeleton.from_joints(desc.name, joints, sites, meta=meta)
    except FileFormatError:
        raise
    except Exception as e:  # SkeletonError: duplicate names, bad limits...
        raise RobotFileError(f"{desc.source}: {e}") from e


def resolve_mesh_path(filename: str, folder: Path | None, meshdir: str = "") -> Path | None:
    """The file a URDF / MJCF mesh reference points to, or None when it does not exist.

    ``package://pkg/rest`` is looked up as ``<dir>/pkg/rest`` and ``<dir>/rest`` for the file's
    folder and each folder above it, then in every folder of ``ROS_PACKAGE_PATH``;
    ``file://`` paths are absolute; anything else is relative to ``folder / meshdir``.
    """
    import os

    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        pkg, _, sub = rest.partition("/")
        roots: list[Path] = []
        if folder is not None:
            roots += [folder, *folder.parents]
        roots += [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        for r in roots:
            for cand in (r / pkg / sub, r / sub):
                if cand.is_file():
                    return cand
        return None
    if filename.startswith("file://"):
        p = Path(filename[len("file://"):])
    else:
        p = Path(filename)
        if not p.is_absolute() and folder is not None:
            p = folder / meshdir / p
    return p if p.is_file() else None
