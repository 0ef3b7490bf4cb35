"""Recognise a BVH file that holds a known rig's motion, and map its channels onto the rig's DoFs.

``animik retarget --to body95``, ``animik filter`` and clip export write a rig's motion through
:func:`~animik.io.bvh_compat.write_bvh_compatible`: the rig's joints with their names, parents
and offsets, every rotating joint padded to 3 rotation channels (Blender's form), the joints BVH
cannot hold as they are (body95's thumbs: a 45° rest rotation) rewritten as ``Z X Y`` channels.
Read back, the file is a skeleton of its own (body95: 159 DoF, no limits, masses by role).

:func:`bvh_rig_map` asks the writer itself what a file of ``rig`` looks like: it writes two
probe frames of the rig (the rest pose, and the rest pose plus 0.1 rad / m on every DoF) and
reads them back. The skeleton read is what a file of this rig must have (joint names, parents,
offsets within :data:`OFFSET_TOL`, the channels of every joint), and the probe gives, for every
DoF of a joint the writer kept, the file channel that holds it with its sign and shift
(``q_file = shift + sign * q_rig``). For a rewritten joint the file's ``Z X Y`` angles are the
writer's ``M_left @ local @ M_right`` (:mod:`animik.io.bvh_compat`); :func:`rig_motion` undoes
it and splits the local rotation into the joint's own DoF axes. The writer's padding channels
must be zero: a file whose padded axes move (edited elsewhere) holds rotations the rig's joints
cannot make, and is not taken as the rig's motion.

Tested (``tests/io/test_bvh_rig.py``): every built-in rig's motion written and read back maps
onto the rig's ``q`` (forward kinematics equal to 1e-9 m); a raw mocap file and a hierarchy
with a moved offset or a missing channel are not recognised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..motion import Motion
from ..rotations import euler_from_matrix, matrix_from_euler
from ..skeleton import ROTATION, Skeleton
from .bvh import UNITS, loads_bvh
from .bvh_compat import _plan, dumps_bvh_compatible

#: Largest difference of a joint offset (m) between the file and the rig's written hierarchy.
OFFSET_TOL = 1e-4
#: Largest value (rad, or m for a root's padded position) of a channel the writer padded with 0.
PAD_TOL = 1e-4
_PROBE = 0.1
_UNIT = 0.01  # the probe file's unit (cm, as exports write): read back with the same unit


@dataclass(frozen=True)
class BvhRigMap:
    """How a file written from ``rig`` maps back onto it (see the module docstring).

    Attributes:
        rig: the rig.
        file: the skeleton such a file reads back as (metres).
        rig_dofs, file_dofs: ``(n,)`` the rig DoFs copied from a file DoF, and that DoF.
        sign, shift: ``(n,)``: ``q_rig = sign * (q_file - shift)``.
        euler: per rewritten joint ``(file_dofs (3,), M_left, M_right, rest, rig_dofs, order,
            signs)``: the rig joint's DoFs are the ``order`` angles (times ``signs``) of
            ``rest^T @ M_left^T @ Rzxy(file angles) @ M_right^T``.
        padded: file DoFs the writer filled with zeros (must stay ~0).
    """

    rig: Skeleton
    file: Skeleton
    rig_dofs: np.ndarray
    file_dofs: np.ndarray
    sign: np.ndarray
    shift: np.ndarray
    euler: tuple
    padded: np.ndarray


def bvh_rig_map(rig: Skeleton) -> BvhRigMap | None:
    """The map of a BVH file written from ``rig`` back onto ``rig``; None when the writer has to
    bake the rig (world-parallel frames: no per-DoF channels to map back)."""
    q0 = np.asarray(rig.rest_q, dtype=float)
    probe = np.stack([q0, q0 + _PROBE])
    text, layout = dumps_bvh_compatible(Motion(rig, probe, 30.0), unit_scale=_UNIT)
    if layout == "baked":
        return None
    back = loads_bvh(text, unit=_UNIT, source=f"<{rig.name} probe>", up="y")
    fs = back.skeleton
    plan = _plan(rig)
    steps = plan.steps if plan is not None else tuple(("keep", tuple(rig.joint_dofs(j)))
                                                      for j in range(rig.n_joints))
    rig_dofs, file_dofs, euler, used = [], [], [], []
    for j, step in enumerate(steps):
        fd = list(fs.joint_dofs(fs.joint_index(rig.joint_names[j])))
        if step[0] == "keep":
            own = list(step[1])
            if len(own) > len(fd):
                return None
            rig_dofs += own
            file_dofs += fd[:len(own)]
            used += fd[:len(own)]
            continue
        _, _, _, left, right, trans = step
        if trans:  # a rewritten joint that translates: none of the built-in rigs has one
            return None
        own = [k for k in rig.joint_dofs(j)]
        rot = fd[-3:]
        order, signs = _axis_order(rig, own)
        if order is None:
            return None
        euler.append((np.array(rot), left, right, rig.rest_rotations[j], np.array(own), order,
                      signs))
        used += rot
    rig_dofs_a, file_dofs_a = np.array(rig_dofs, dtype=np.int64), np.array(file_dofs, dtype=np.int64)
    d = back.q[1, file_dofs_a] - back.q[0, file_dofs_a]
    sign = np.round(d / _PROBE)
    if not np.allclose(np.abs(sign), 1.0) or not np.allclose(d, sign * _PROBE, atol=1e-9):
        return None  # the writer combined a joint's DoFs (repeated axes): not a copy
    shift = back.q[0, file_dofs_a] - sign * q0[rig_dofs_a]
    padded = np.setdiff1d(np.arange(fs.n_dof), np.array(used, dtype=np.int64))
    return BvhRigMap(rig, fs, rig_dofs_a, file_dofs_a, sign, shift, tuple(euler), padded)


def _axis_order(rig: Skeleton, dofs: list[int]) -> tuple[str | None, np.ndarray]:
    """The Euler order of a joint's rotation DoFs (their axes, padded with the missing ones)
    and the signs of their axes; None when the axes are not distinct principal axes."""
    letters, signs = "", []
    for k in dofs:
        if rig.dof_type[k] != ROTATION:
            return None, np.zeros(0)
        a = rig.dof_axis[k]
        ax = int(np.argmax(np.abs(a)))
        if abs(abs(a[ax]) - 1.0) > 1e-9 or "xyz"[ax] in letters:
            return None, np.zeros(0)
        letters += "xyz"[ax]
        signs.append(float(np.sign(a[ax])))
    return letters + "".join(c for c in "xyz" if c not in letters), np.array(signs)


def hierarchy_scale(file: Skeleton, m: BvhRigMap, tol: float = OFFSET_TOL) -> float | None:
    """Whether ``file`` (a skeleton read from BVH) has the hierarchy a file written from
    ``m.rig`` has: the same joint names in the same order, parents, channels (DoF kinds and
    axes per joint), root orientation, and offsets within ``tol`` metres.

    Returns:
        None when it has not; else the factor from the unit the file was read in to the one it
        was written in (1.0, or the ratio of two of :data:`~animik.io.bvh.UNITS` when the
        reader's unit detection guessed another unit for a figure far from 1.7 m tall: biped12
        is legs only). Translations of the file's motion are multiplied by it.
    """
    e = m.file
    if file.joint_names != e.joint_names or not np.array_equal(file.parents, e.parents):
        return None
    if file.n_dof != e.n_dof or not np.array_equal(file.dof_joint, e.dof_joint):
        return None
    if not np.array_equal(file.dof_type, e.dof_type) or not np.allclose(
            file.dof_axis, e.dof_axis, atol=1e-9):
        return None
    if not np.allclose(file.rest_rotations[0], e.rest_rotations[0], atol=1e-9):
        return None
    read = float(file.meta.get("bvh_unit_scale", 1.0))
    for k in (1.0, *(u / read for u in UNITS.values())):
        if np.abs(k * file.offsets - e.offsets).max(initial=0.0) <= tol:
            return k
    return None


def hierarchy_matches(file: Skeleton, m: BvhRigMap, tol: float = OFFSET_TOL) -> bool:
    """:func:`hierarchy_scale` is not None."""
    return hierarchy_scale(file, m, tol) is not None


def rig_q(file_q: np.ndarray, m: BvhRigMap, pad_tol: float = PAD_TOL) -> np.ndarray | None:
    """``(T, m.rig.n_dof)`` the rig's poses held by ``(T, m.file.n_dof)`` file poses, or None
    when a padded channel moves (more than ``pad_tol``): rotations the rig cannot make."""
    file_q = np.asarray(file_q, dtype=float)
    if m.padded.size and np.abs(file_q[:, m.padded]).max(initial=0.0) > pad_tol:
        return None
    q = np.broadcast_to(np.asarray(m.rig.rest_q, dtype=float), (len(file_q), m.rig.n_dof)).copy()
    q[:, m.rig_dofs] = m.sign * (file_q[:, m.file_dofs] - m.shift)
    for rot, left, right, rest, own, order, signs in m.euler:
        # the writer's angles are those of left @ local @ right (bvh_compat's rewrite)
        local = left.T @ matrix_from_euler(file_q[:, rot], "zxy") @ right.T
        ang = euler_from_matrix(rest.T @ local, order)
        n = len(own)
        if np.abs(ang[:, n:]).max(initial=0.0) > pad_tol:
            return None  # a rotation about an axis the joint does not have
        vals = np.unwrap(ang[:, :n], axis=0) * signs
        vals -= 2 * np.pi * np.round(vals[:1] / (2 * np.pi))  # the first frame in [-pi, pi]
        q[:, own] = vals
    return q


def rig_motion(motion: Motion, m: BvhRigMap) -> Motion | None:
    """``motion`` (read from BVH) as ``m.rig``'s motion, or None when it is not one: its
    hierarchy is not the rig's written one (:func:`hierarchy_matches`) or a padded channel
    moves. The motion's ``meta`` gains ``"bvh_rig": rig name``."""
    k = hierarchy_scale(motion.skeleton, m)
    if k is None:
        return None
    fq = motion.q
    if k != 1.0:  # read in another unit than it was written in
        fq = np.where(motion.skeleton.dof_type == ROTATION, fq, fq * k)
    q = rig_q(fq, m)
    if q is None:
        return None
    return Motion(m.rig, q, motion.fps, {**dict(motion.meta), "bvh_rig": m.rig.name})


__all__ = ["OFFSET_TOL", "PAD_TOL", "BvhRigMap", "bvh_rig_map", "hierarchy_matches", "hierarchy_scale",
           "rig_motion",
           "rig_q"]
