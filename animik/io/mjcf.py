"""MJCF (MuJoCo) export of a :class:`~animik.skeleton.Skeleton`.

MuJoCo and animik share the world convention (right-handed, Z up, metres, radians, kg, gravity
``(0, 0, -9.81)``), so the export converts no axes or units. The mapping:

* **One ``<body>`` per skeleton joint**, named by the joint name and nested as the tree; its
  ``pos`` / ``quat`` (``wxyz``) are the rest offset and rest rotation relative to the parent
  body. The root body hangs from ``<worldbody>``; a root without DoFs is welded to the world.
* **One ``<joint>`` per DoF**, named by the DoF name, inside its joint's body and in DoF order:
  ``type="hinge"`` (rotation) or ``"slide"`` (translation), ``axis`` = ``dof_axis``, anchor at
  the body origin, ``ref = 0``. MuJoCo applies the joints of a body one after the other, each
  about / along its axis rotated by the joints before it (``mj_kinematics``: the axis of joint
  ``i`` is ``jnt_axis`` rotated by the body orientation *after* joints ``0..i-1``, and a hinge
  right-multiplies the orientation), i.e. ``T(pos) R(quat) D_0(q_0) D_1(q_1) ...`` — exactly
  :mod:`animik.skeleton`'s ``parent_from_joint``. So ``qpos[model.joint(dof).qposadr] = q[dof]``
  with no conversion, and a floating root ``tx ty tz rz ry rx`` is six plain joints (no
  ``freejoint``). No intermediate bodies are needed.
* **Sites** are ``<site>`` elements named by the site name, with their offset and rotation.
* **Limits**: ``limited="true"`` with ``range`` for a DoF limited on at least one side (an
  infinite side is written as ``±UNLIMITED`` = 1e4 rad or m); ``limited="false"`` when free.
* **Mass**: ``<inertial pos=COM mass fullinertia>`` (tensor about the COM, joint-frame axes;
  ``<compiler inertiafromgeom="false">`` so geoms never add mass). MuJoCo rejects a body with
  joints whose mass or principal inertia is (near) zero, a ``fullinertia`` without positive
  eigenvalues (on any body), and any inertia that breaks the triangle inequality ``A + B >= C``
  of the principal moments. The exporter therefore, and only where needed: raises the mass of
  a body with joints to ``min_mass`` (1e-6 kg); raises the principal moments of every body
  with mass to ``min_inertia`` (1e-10 kg·m²; negative ones included);
  and where ``A + B < C (1 + 1e-10)``, raises the two smaller moments by half the shortfall
  each (the smallest change that restores the inequality, with a relative margin for MuJoCo's
  own eigen-decomposition; principal axes kept). This is instead of MuJoCo's
  ``balanceinertia``, which would replace all three moments by their mean. Valid inertias and
  masses above the floors are written unchanged; a body without joints and without mass gets
  no ``<inertial>``.
* Optional capsule geoms along the bones (``contype=conaffinity=0``: visual only, no mass) so
  the model shows in MuJoCo's viewer, and a keyframe ``rest`` holding ``rest_q``.
* Numbers are written with full float64 precision (quaternions ``wxyz`` to machine
  precision). Names are XML-escaped (``<``, ``&``, quotes; ``:``
  kept); MuJoCo gives bodies, joints and sites separate name spaces, so no renaming is needed,
  but it reserves the body name ``world``: a skeleton joint named so raises
  :class:`~animik.errors.FileFormatError`.

Example::

    import mujoco
    from animik.io.mjcf import write_mjcf
    write_mjcf(skel, "skel.xml")
    model = mujoco.MjModel.from_xml_path("skel.xml")
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import FileFormatError
from ..rotations import matrix_to_quat
from ..skeleton import TRANSLATION, Skeleton
from ._atomic import atomic_write
from ._robot import (
    UNLIMITED,
    bone_ends,
    check_names,
    finite_limits,
    fmt,
    fmt_vec,
    nearest_rotation,
    symmetric,
)

__all__ = ["mjcf_string", "write_mjcf", "mjcf_mass_properties", "UNLIMITED"]

#: Relative margin kept in the triangle inequality of the principal moments of inertia.
TRIANGLE_MARGIN = 1e-10


def mjcf_mass_properties(
    skel: Skeleton, min_mass: float = 1e-6, min_inertia: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """Masses ``(J,)`` kg and inertias about the COM ``(J, 3, 3)`` kg·m² as written to MJCF.

    Equal to ``skel.masses`` / ``skel.inertias`` except where MuJoCo's requirements force a
    change (see the module docstring): mass floor on bodies with DoFs, principal moments
    floored, triangle inequality restored.
    """
    n_dofs = np.diff(skel.joint_dof_start)
    masses = np.array(skel.masses, dtype=float)
    inertias = np.array(skel.inertias, dtype=float)
    for j in range(skel.n_joints):
        masses[j], inertias[j] = _regularize(masses[j], inertias[j], n_dofs[j] > 0,
                                             min_mass, min_inertia)
    return masses, inertias


def mjcf_string(
    skel: Skeleton,
    *,
    min_mass: float = 1e-6,
    min_inertia: float = 1e-10,
    visuals: bool = True,
    gravity: float = 9.81,
) -> str:
    """The MJCF document of a skeleton (see the module docstring for the mapping).

    Args:
        skel: the skeleton.
        min_mass: smallest mass (kg) given to a body with joints (MuJoCo needs it positive).
        min_inertia: smallest principal moment (kg·m²) of a body with mass.
        visuals: add visual-only capsules along the bones.
        gravity: magnitude (m/s²) of the gravity along -Z.

    Returns:
        The MJCF text (UTF-8 XML).

    Raises:
        FileFormatError: a name XML cannot hold, or a skeleton joint named ``world``.
    """
    check_names(skel, "MJCF")
    if "world" in skel.joint_names:
        raise FileFormatError(
            "cannot write MJCF: MuJoCo reserves the body name 'world' for its world body; "
            "rename the skeleton joint 'world'"
        )
    masses, inertias = mjcf_mass_properties(skel, min_mass, min_inertia)
    root = ET.Element("mujoco", model=skel.name)
    root.append(ET.Comment(
        " generated by animik: bodies = skeleton joints, joints = DoFs (applied in order in "
        "the moving frame), sites = sites; Z up, SI units "
    ))
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false")
    ET.SubElement(root, "option", gravity=fmt_vec((0.0, 0.0, -gravity)))
    default = ET.SubElement(root, "default")
    ET.SubElement(default, "geom", contype="0", conaffinity="0", rgba="0.7 0.7 0.75 1")
    ET.SubElement(default, "site", size="0.01", rgba="0.9 0.2 0.2 1")
    world = ET.SubElement(root, "worldbody")

    qpos_order: list[int] = []
    sites_of: list[list[int]] = [[] for _ in range(skel.n_joints)]
    for s, j in enumerate(skel.site_joint):
        sites_of[int(j)].append(s)

    def add_body(parent: ET.Element, j: int) -> None:
        body = ET.SubElement(parent, "body", name=skel.joint_names[j],
                             pos=fmt_vec(skel.offsets[j]),
                             quat=_quat(skel.rest_rotations[j]))
        for k in skel.joint_dofs(j):
            qpos_order.append(k)
            attrs = {
                "name": skel.dof_names[k],
                "type": "slide" if skel.dof_type[k] == TRANSLATION else "hinge",
                "axis": fmt_vec(skel.dof_axis[k]),
            }
            if np.isfinite(skel.lower[k]) or np.isfinite(skel.upper[k]):
                lo, hi = finite_limits(skel.lower[k], skel.upper[k])
                attrs.update(limited="true", range=f"{fmt(lo)} {fmt(hi)}")
            else:
                attrs["limited"] = "false"
            ET.SubElement(body, "joint", attrs)
        if masses[j] > 0.0:
            i = inertias[j]
            ET.SubElement(body, "inertial", pos=fmt_vec(skel.coms[j]), mass=fmt(masses[j]),
                          fullinertia=fmt_vec((i[0, 0], i[1, 1], i[2, 2],
                                               i[0, 1], i[0, 2], i[1, 2])))
        if visuals:
            _visuals(body, skel, j)
        for s in sites_of[j]:
            ET.SubElement(body, "site", name=skel.site_names[s], pos=fmt_vec(skel.site_offsets[s]),
                          quat=_quat(skel.site_rotations[s]))
        for c in skel.children[j]:
            add_body(body, c)

    add_body(world, 0)
    if skel.n_dof:
        keyframe = ET.SubElement(root, "keyframe")
        ET.SubElement(keyframe, "key", name="rest", qpos=fmt_vec(skel.rest_q[qpos_order]))
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def write_mjcf(skel: Skeleton, path: str | os.PathLike, **options) -> Path:
    """Write a skeleton as MJCF, atomically (a failure leaves an existing file untouched).

    Args:
        skel: the skeleton.
        path: destination file (``.xml``).
        **options: keyword options of :func:`mjcf_string`.

    Returns:
        The destination path.

    Raises:
        FileFormatError: see :func:`mjcf_string`.
    """
    return atomic_write(path, mjcf_string(skel, **options))


# ---------------------------------------------------------------------- helpers
def _quat(rotation: np.ndarray) -> str:
    return fmt_vec(matrix_to_quat(nearest_rotation(rotation)))  # wxyz, as MuJoCo


def _regularize(
    mass: float, inertia: np.ndarray, moving: bool, min_mass: float, min_inertia: float
) -> tuple[float, np.ndarray]:
    inertia = symmetric(inertia)
    if moving:
        mass = max(mass, min_mass)
    if mass <= 0.0:
        return 0.0, np.zeros((3, 3))
    lam, axes = np.linalg.eigh(inertia)  # ascending
    new = np.maximum(lam, min_inertia)
    shortfall = new[2] * (1.0 + TRIANGLE_MARGIN) - new[0] - new[1]
    if shortfall > 0.0:
        new[:2] += 0.5 * shortfall
    if np.array_equal(new, lam):
        return mass, inertia  # unchanged, bit for bit
    return mass, symmetric((axes * new) @ axes.T)


def _visuals(body: ET.Element, skel: Skeleton, j: int) -> None:
    ends = bone_ends(skel, j)
    for end in ends:
        length = float(np.linalg.norm(end))
        ET.SubElement(body, "geom", type="capsule", fromto=fmt_vec(np.concatenate([[0, 0, 0], end])),
                      size=fmt(np.clip(0.08 * length, 0.004, 0.03)))
    if not ends:
        ET.SubElement(body, "geom", type="sphere", size="0.02")
