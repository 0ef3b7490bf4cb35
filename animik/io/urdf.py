"""URDF export of a :class:`~animik.skeleton.Skeleton`.

URDF and animik share the world convention (right-handed, Z up, metres, radians, kg), so the
export converts no axes or units. The mapping:

* **Links are skeleton joints.** The link named after skeleton joint ``J`` is the rigid segment
  that moves with ``J``; it carries the segment's ``<inertial>`` (origin at the COM, axes of the
  joint frame, full inertia tensor about the COM) and, optionally, cylinder visuals along its
  bones.
* **URDF joints are DoFs.** Each DoF becomes one ``revolute`` / ``prismatic`` URDF joint named
  by the DoF name, with ``<axis>`` = ``dof_axis``. A skeleton joint with ``k`` DoFs is a chain
  of ``k`` URDF joints through ``k - 1`` massless intermediate links named
  ``f"{joint}__{dof}"`` (the link after that DoF; ``_2``, ``_3``... appended in the unlikely
  case of a name clash). The first URDF joint of the chain carries the rest transform
  ``origin = (offsets[J], rpy(rest_rotations[J]))``; the others have an identity origin, so the
  chain composes ``T(offset) R(rest) D_0(q_0) D_1(q_1) ...`` exactly as
  :mod:`animik.skeleton` defines it (a URDF joint moves its child frame about / along its axis
  expressed in the joint frame, which is the frame left by the previous DoF). The last link of
  the chain is the one named after the skeleton joint. A skeleton joint without DoFs hangs from
  its parent by a ``fixed`` URDF joint named ``f"{joint}__fixed"``.
* **Base.** The tree hangs from a massless link ``world`` (``world_2``... if a skeleton name
  takes it) through the root's DoFs, so a floating root (``tx ty tz rz ry rx``) becomes six
  plain prismatic/revolute joints and the URDF is a *fixed-base* robot: pinocchio's
  ``buildModelFromUrdf(path)`` (no root joint) and MuJoCo then have one scalar coordinate per
  DoF, in the same units as ``q`` (no ``JointModelFreeFlyer`` / ``freejoint``). The ``world``
  link is the parent the root's first DoF needs, and it holds the root's rest offset and
  rotation (a URDF root link has no origin), so it is written for a root without DoFs too; such
  a root hangs from it by a fixed joint, and pinocchio then puts the root segment's (immobile)
  inertia on its universe body, which ``computeTotalMass`` / ``centerOfMass`` leave out.
* **MuJoCo.** MuJoCo reads URDF but rejects a moving body whose mass or inertia is below
  ``mjMINVAL`` — the massless intermediate links between the DoFs of one skeleton joint, and
  every segment of a skeleton without masses (BVH). The document therefore carries MuJoCo's own
  URDF extension ``<mujoco><compiler boundmass="1e-6" boundinertia="1e-10"
  balanceinertia="true" fusestatic="false" inertiafromgeom="false"/></mujoco>`` (with
  ``mujoco=True``, the default): MuJoCo raises every body's mass to at least
  :data:`MUJOCO_MIN_MASS` (1e-6 kg) and its principal moments to :data:`MUJOCO_MIN_INERTIA`
  (1e-10 kg·m²), the floors the MJCF export uses, and keeps one body per link. Other URDF
  readers (pinocchio, urdfdom) ignore the element, so they see the segments' exact inertials and
  massless intermediate links; no number in the file is changed. The MuJoCo model's mass
  matrix then differs from the MJCF export's only by those floors on the extra links (tested:
  ``|M_urdf - M_mjcf| <= 1e-4``, 5.8e-5 measured, and gravity torques by <= 1e-3 N·m, 5.5e-4
  measured, on the built-in rigs).
* **Sites** are massless links named by the site name, attached to their joint's link by a
  ``fixed`` joint named ``f"{site}__fixed"`` with origin (site offset, rpy of site rotation).
* **Limits.** Finite limits are written as they are. A rotation free on both sides becomes a
  ``revolute`` joint with limits ``±UNLIMITED`` (1e4 rad) by default — one coordinate per DoF
  everywhere, no surprises for code that maps ``q`` by index — or, with
  ``unlimited_rotation="continuous"``, a ``continuous`` joint (the URDF way of saying
  "unlimited"; pinocchio then represents it by ``(cos q, sin q)``, ``nq = 2``). URDF requires
  finite limits on prismatic joints and on revolute ones: an infinite side is written as
  ``±UNLIMITED`` (1e4 m / 1e4 rad). ``effort`` and ``velocity`` are mandatory in ``<limit>``
  and animik has no actuator model: they are written as the placeholders ``effort`` (1e4) and
  ``velocity`` (1e3) arguments.
* **Rotations** are written as roll-pitch-yaw (``R = Rz(yaw) Ry(pitch) Rx(roll)``), computed so
  that they reproduce the matrix to machine precision even at gimbal lock. Numbers are written
  with full float64 precision (``repr``).
* Names are XML-escaped (``<``, ``&``, quotes; ``:`` from BVH namespaces is kept). A skeleton
  joint and a site with the same name cannot both be links: that raises
  :class:`~animik.errors.FileFormatError`.

Example::

    from animik import load_rig
    from animik.io.urdf import write_urdf
    write_urdf(load_rig("fig2"), "fig2.urdf")
    # pinocchio: model = pinocchio.buildModelFromUrdf("fig2.urdf")
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import FileFormatError
from ..skeleton import TRANSLATION, Skeleton
from ._atomic import atomic_write
from ._robot import (
    UNLIMITED,
    bone_ends,
    check_names,
    finite_limits,
    fmt,
    fmt_vec,
    matrix_to_rpy,
    symmetric,
    unique_name,
)

__all__ = ["urdf_string", "write_urdf", "UNLIMITED", "MUJOCO_MIN_MASS", "MUJOCO_MIN_INERTIA"]

#: Lower bound on every body's mass (kg) MuJoCo applies when it loads the URDF (``boundmass``).
MUJOCO_MIN_MASS = 1.0e-6
#: Lower bound on every principal moment (kg·m²) MuJoCo applies (``boundinertia``).
MUJOCO_MIN_INERTIA = 1.0e-10


def urdf_string(
    skel: Skeleton,
    *,
    unlimited_rotation: str = "revolute",
    effort: float = 1.0e4,
    velocity: float = 1.0e3,
    visuals: bool = True,
    mujoco: bool = True,
) -> str:
    """The URDF document of a skeleton (see the module docstring for the mapping).

    Args:
        skel: the skeleton.
        unlimited_rotation: how to write a rotation DoF with no limits: ``"revolute"`` (limits
            ``±UNLIMITED`` rad) or ``"continuous"``.
        effort: placeholder ``<limit effort>`` (N·m or N), required by URDF.
        velocity: placeholder ``<limit velocity>`` (rad/s or m/s), required by URDF.
        visuals: add cylinder ``<visual>`` elements along the bones (no effect on kinematics).
        mujoco: add MuJoCo's ``<mujoco><compiler .../></mujoco>`` extension so that MuJoCo
            loads the file (mass floors on massless moving links; see the module docstring).

    Returns:
        The URDF text (UTF-8 XML).

    Raises:
        FileFormatError: a name XML cannot hold, or a site named like a skeleton joint.
        ValueError: ``unlimited_rotation`` is neither ``"revolute"`` nor ``"continuous"``.
    """
    if unlimited_rotation not in ("revolute", "continuous"):
        raise ValueError(
            f"unlimited_rotation must be 'revolute' or 'continuous', got {unlimited_rotation!r}"
        )
    check_names(skel, "URDF")
    clash = sorted(set(skel.joint_names) & set(skel.site_names))
    if clash:
        raise FileFormatError(
            f"cannot write URDF: names used by both a joint and a site would be two links "
            f"with the same name: {clash}"
        )

    links_taken = set(skel.joint_names) | set(skel.site_names)
    joints_taken = set(skel.dof_names)
    base = unique_name("world", links_taken)

    robot = ET.Element("robot", name=skel.name)
    robot.append(ET.Comment(
        f" generated by animik from skeleton {_comment_safe(skel.name)}: links = skeleton "
        "joints, URDF joints = DoFs, sites = fixed links; Z up, SI units "
    ))
    if mujoco:
        ext = ET.SubElement(robot, "mujoco")
        ET.SubElement(ext, "compiler", boundmass=fmt(MUJOCO_MIN_MASS),
                      boundinertia=fmt(MUJOCO_MIN_INERTIA), balanceinertia="true",
                      fusestatic="false", inertiafromgeom="false", discardvisual="true")
    ET.SubElement(robot, "link", name=base)

    for j, jname in enumerate(skel.joint_names):
        p = int(skel.parents[j])
        parent_link = base if p < 0 else skel.joint_names[p]
        xyz, rpy = skel.offsets[j], matrix_to_rpy(skel.rest_rotations[j])
        dofs = list(skel.joint_dofs(j))
        if not dofs:
            jt = ET.SubElement(robot, "joint", name=unique_name(f"{jname}__fixed", joints_taken),
                               type="fixed")
            _origin(jt, xyz, rpy)
            ET.SubElement(jt, "parent", link=parent_link)
            ET.SubElement(jt, "child", link=jname)
        for i, k in enumerate(dofs):
            last = i == len(dofs) - 1
            child = jname if last else unique_name(f"{jname}__{skel.dof_names[k]}", links_taken)
            if not last:
                ET.SubElement(robot, "link", name=child)
            jt = ET.SubElement(robot, "joint", name=skel.dof_names[k],
                               type=_joint_type(skel, k, unlimited_rotation))
            if i == 0:
                _origin(jt, xyz, rpy)
            ET.SubElement(jt, "parent", link=parent_link)
            ET.SubElement(jt, "child", link=child)
            ET.SubElement(jt, "axis", xyz=fmt_vec(skel.dof_axis[k]))
            if jt.get("type") != "continuous":
                lo, hi = finite_limits(skel.lower[k], skel.upper[k])
                ET.SubElement(jt, "limit", lower=fmt(lo), upper=fmt(hi), effort=fmt(effort),
                              velocity=fmt(velocity))
            parent_link = child
        link = ET.SubElement(robot, "link", name=jname)
        _inertial(link, skel, j)
        if visuals:
            _visuals(link, skel, j)

    for s, sname in enumerate(skel.site_names):
        ET.SubElement(robot, "link", name=sname)
        jt = ET.SubElement(robot, "joint", name=unique_name(f"{sname}__fixed", joints_taken),
                           type="fixed")
        _origin(jt, skel.site_offsets[s], matrix_to_rpy(skel.site_rotations[s]))
        ET.SubElement(jt, "parent", link=skel.joint_names[int(skel.site_joint[s])])
        ET.SubElement(jt, "child", link=sname)

    ET.indent(robot, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def write_urdf(skel: Skeleton, path: str | os.PathLike, **options) -> Path:
    """Write a skeleton as URDF, atomically (a failure leaves an existing file untouched).

    Args:
        skel: the skeleton.
        path: destination file (``.urdf``).
        **options: keyword options of :func:`urdf_string`.

    Returns:
        The destination path.

    Raises:
        FileFormatError: see :func:`urdf_string`.
    """
    return atomic_write(path, urdf_string(skel, **options))


# ---------------------------------------------------------------------- helpers
def _joint_type(skel: Skeleton, k: int, unlimited_rotation: str) -> str:
    if skel.dof_type[k] == TRANSLATION:
        return "prismatic"
    free = not np.isfinite(skel.lower[k]) and not np.isfinite(skel.upper[k])
    return "continuous" if (free and unlimited_rotation == "continuous") else "revolute"


def _origin(parent: ET.Element, xyz: np.ndarray, rpy: np.ndarray) -> None:
    ET.SubElement(parent, "origin", xyz=fmt_vec(xyz), rpy=fmt_vec(rpy))


def _inertial(link: ET.Element, skel: Skeleton, j: int) -> None:
    mass = float(skel.masses[j])
    inertia = symmetric(skel.inertias[j])
    if mass == 0.0 and not np.any(inertia):
        return
    el = ET.SubElement(link, "inertial")
    ET.SubElement(el, "origin", xyz=fmt_vec(skel.coms[j]), rpy="0 0 0")
    ET.SubElement(el, "mass", value=fmt(mass))
    ET.SubElement(el, "inertia", ixx=fmt(inertia[0, 0]), ixy=fmt(inertia[0, 1]),
                  ixz=fmt(inertia[0, 2]), iyy=fmt(inertia[1, 1]), iyz=fmt(inertia[1, 2]),
                  izz=fmt(inertia[2, 2]))


def _visuals(link: ET.Element, skel: Skeleton, j: int) -> None:
    for end in bone_ends(skel, j):
        length = float(np.linalg.norm(end))
        vis = ET.SubElement(link, "visual")
        _origin(vis, 0.5 * end, matrix_to_rpy(_z_to(end / length)))
        geo = ET.SubElement(vis, "geometry")
        ET.SubElement(geo, "cylinder", radius=fmt(np.clip(0.08 * length, 0.004, 0.03)),
                      length=fmt(length))


def _z_to(u: np.ndarray) -> np.ndarray:
    """A rotation whose z axis is the unit vector ``u`` (cylinders are along z in URDF)."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, u)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(u, x), u])


def _comment_safe(text: str) -> str:
    # "--" may not appear inside an XML comment.
    return repr(text).replace("--", "-\u2010")
