"""Make any motion BVH-writable with the same world motion: the one BVH-compatibility function.

BVH holds joint frames with no rest rotation below the root, principal-axis rotation channels
and translations before rotations (:mod:`animik.io.bvh`). :func:`bvh_compatible` returns a
motion :func:`~animik.io.bvh.write_bvh` can write, choosing the smallest change:

1. ``"dofs"`` — the skeleton is writable as it is: the motion is returned unchanged.
2. ``"rewritten"`` — only the joints BVH cannot hold (body95's thumbs: a 45° rest rotation;
   general DoF axes) become three ``Zrotation Xrotation Yrotation`` channels holding their whole
   local rotation, made continuous frame to frame; every other joint keeps its DoFs.
3. ``"baked"`` — when that is not enough (a translation DoF after a rotation in one joint):
   every joint frame is made parallel to the world at rest, with ``Z X Y`` rotation channels on
   every joint that moves and position channels on the root and on joints that translate.

In every case each joint and site has the same world transform in every frame (tested against
forward kinematics). Clip export (:func:`animik.anim.export_clip`), batch retargeting and the
app's retarget output all write BVH through here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..cache import cached
from ..errors import FileFormatError
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..rotations import matrix_to_euler
from ..skeleton import ROTATION, TRANSLATION, Dof, Joint, Site, Skeleton
from ._atomic import atomic_write
from .bvh import BVH_FROM_WORLD, check_bvh_skeleton, dumps_bvh

#: Layouts :func:`bvh_compatible` reports, smallest change first.
LAYOUTS = ("dofs", "rewritten", "baked")

_ORDER = "zxy"


def bvh_compatible(motion: Motion) -> tuple[Motion, str]:
    """A motion BVH can hold with the same world motion, and how it was made (module docstring).

    Args:
        motion: the motion (any skeleton).

    Returns:
        ``(motion, layout)``: ``layout`` is one of :data:`LAYOUTS`; for ``"dofs"`` the motion is
        the argument itself.

    Raises:
        FileFormatError: an empty motion.
    """
    if motion.n_frames == 0:
        raise FileFormatError("cannot write an empty motion (0 frames) to BVH")
    skel = motion.skeleton
    # the layout and the rewritten skeleton depend only on the skeleton: a batch writes many
    # clips on one target, so they are worked out once per skeleton (animik.cache)
    plan = cached(skel, "bvh_compat.plan", lambda: _plan(skel))
    if plan is None:
        return motion, "dofs"
    if plan.skeleton is not None:
        return _apply_rewrite(motion, plan), "rewritten"
    return _bake_world_parallel(motion), "baked"


def dumps_bvh_compatible(motion: Motion, unit_scale: float | str | None = None,
                         channels: str = "full") -> tuple[bytes, str]:
    """BVH file content of :func:`bvh_compatible`'s motion, and the layout.

    Args:
        motion: the motion.
        unit_scale: as in :func:`~animik.io.bvh.write_bvh`.
        channels: as in :func:`~animik.io.bvh.write_bvh` (``"full"``: Blender's 0 or 3
            rotation channels per joint; ``"compact"``: one channel per DoF).
    """
    out, layout = bvh_compatible(motion)
    return dumps_bvh(out, unit_scale=unit_scale, channels=channels), layout


def write_bvh_compatible(motion: Motion, path: str | os.PathLike, unit_scale: float | str | None = None,
                         channels: str = "full") -> tuple[Path, str]:
    """Write :func:`bvh_compatible`'s motion as a BVH file (atomically).

    Returns:
        ``(path written, layout)``.
    """
    data, layout = dumps_bvh_compatible(motion, unit_scale, channels)
    return atomic_write(path, data), layout


def _writable(skel: Skeleton) -> bool:
    try:
        check_bvh_skeleton(skel)
    except FileFormatError:
        return False
    return True


@dataclass(frozen=True)
class _RewritePlan:
    """How :func:`_rewrite_joints` rewrites one skeleton (independent of the motion).

    Attributes:
        skeleton: the rewritten skeleton, or None when it is still not BVH-writable (bake).
        steps: per joint of the new skeleton, either ``("keep", dofs)`` (its DoF columns are
            copied) or ``("euler", j, parent, M_left, M_right, trans_dofs)``: the translation
            DoF columns, then the ``Z X Y`` angles of ``M_left @ local @ M_right`` (``local``
            the joint's rotation relative to its parent, from forward kinematics).
    """

    skeleton: Skeleton | None
    steps: tuple


def _plan(skel: Skeleton) -> _RewritePlan | None:
    """None if ``skel`` is BVH-writable as it is, else its :class:`_RewritePlan`."""
    if _writable(skel):
        return None
    plan = _rewrite_plan(skel)
    if plan is None or not _writable(plan.skeleton):
        return _RewritePlan(None, ())
    return plan


def _apply_rewrite(motion: Motion, plan: _RewritePlan) -> Motion:
    """The motion on ``plan.skeleton`` with the same world motion (see :func:`_rewrite_joints`)."""
    Rw = forward_kinematics(motion.skeleton, motion.q).joint_rotations  # (T, J, 3, 3)
    cols: list[np.ndarray] = []
    for step in plan.steps:
        if step[0] == "keep":
            cols += [motion.q[:, k] for k in step[1]]
            continue
        _, j, p, left, right, trans = step
        local = Rw[:, j] if p < 0 else np.swapaxes(Rw[:, p], -1, -2) @ Rw[:, j]
        angles = np.unwrap(matrix_to_euler(left @ local @ right, "zxy"), axis=0)
        cols += [motion.q[:, k] for k in trans]
        cols += [angles[:, i] for i in range(3)]
    q = np.stack(cols, axis=1) if cols else np.zeros((motion.n_frames, 0))
    return Motion(plan.skeleton, q, motion.fps, meta=dict(motion.meta))


def _rewrite_joints(motion: Motion) -> Motion:
    """The motion on a skeleton that BVH can hold, with the same world motion.

    A joint below the root with a rest rotation, or with a rotation DoF whose axis is not a
    principal axis in the BVH frame (see :mod:`animik.io.bvh`), is rewritten with three
    rotation DoFs ``{joint}_rz``, ``{joint}_rx``, ``{joint}_ry`` on the BVH ``Z X Y`` axes
    (``CHANNELS ... Zrotation Xrotation Yrotation``) that hold its whole local rotation (rest
    rotation included), made continuous frame to frame; its translation DoFs (which must come
    first) keep their values with axes re-expressed without the rest rotation. Other joints,
    the sites and the frame rate are unchanged, so every joint and site has the same world
    transform in every frame. A motion that needs no change is returned as is.

    Args:
        motion: the motion.

    Returns:
        The motion, or an equivalent one on the rewritten skeleton.
    """
    plan = _rewrite_plan(motion.skeleton)
    return motion if plan is None else _apply_rewrite(motion, plan)


def _rewrite_plan(skel: Skeleton) -> _RewritePlan | None:
    """The :class:`_RewritePlan` of :func:`_rewrite_joints` (None: no joint needs a change)."""
    G = BVH_FROM_WORLD @ skel.rest_rotations[0]  # bvh_from_joint frame of every joint
    eye = np.eye(3)

    def needs(j: int) -> bool:
        dofs = list(skel.joint_dofs(j))
        rot = [k for k in dofs if skel.dof_type[k] == ROTATION]
        trans = [k for k in dofs if skel.dof_type[k] != ROTATION]
        if trans and rot and max(dofs.index(k) for k in trans) > min(dofs.index(k) for k in rot):
            return False  # translation after rotation: cannot be fixed here (write_bvh says so)
        bad_axis = any(abs(np.abs(G @ skel.dof_axis[k]).max() - 1.0) > 1e-9 for k in rot)
        bad_rest = j > 0 and np.abs(skel.rest_rotations[j] - eye).max() > 1e-9
        return bad_axis or bad_rest

    bake = [j for j in range(skel.n_joints) if needs(j)]
    if not bake:
        return None
    joints, sites = skel.to_joints()
    steps: list[tuple] = []
    used = set(skel.dof_names)
    new_joints = []
    for j, jt in enumerate(joints):
        dofs = list(skel.joint_dofs(j))
        if j not in bake:
            new_joints.append(jt)
            steps.append(("keep", tuple(dofs)))
            continue
        rest = skel.rest_rotations[j]
        new_rest = rest if j == 0 else eye
        p = int(skel.parents[j])
        # joint frame: T(offset) @ new_rest @ T(translations) @ G^T Rz Rx Ry G, so the angles
        # are those of G @ new_rest^T @ local @ G^T
        trans = []
        new_dofs = []
        for k in dofs:
            if skel.dof_type[k] != ROTATION:
                d = jt.dofs[dofs.index(k)]
                ax = (new_rest.T @ rest @ skel.dof_axis[k]) if j > 0 else skel.dof_axis[k]
                new_dofs.append(Dof(d.name, "t", d.lower, d.upper, d.rest, tuple(float(a) for a in ax)))
                trans.append(k)
        for letter in "zxy":
            name = f"{jt.name}_r{letter}"
            while name in used:
                name += "_"
            used.add(name)
            axis = G.T @ eye["xyz".index(letter)]
            new_dofs.append(Dof(name, "r", axis=tuple(float(a) for a in axis)))
        steps.append(("euler", j, p, G @ new_rest.T, G.T, tuple(trans)))
        new_joints.append(Joint(jt.name, jt.parent, jt.offset, new_dofs, new_rest, jt.mass, jt.com,
                                jt.inertia))
    new = Skeleton.from_joints(skel.name, new_joints, sites, meta=dict(skel.meta))
    return _RewritePlan(new, tuple(steps))



def _bake_world_parallel(motion: Motion) -> Motion:
    """The motion on a BVH-friendly copy of its skeleton (same joints, world poses).

    Every joint frame is parallel to the world in the rest pose; a joint gets position channels
    if it is the root or has translation DoFs, and ``rz, rx, ry`` if any of its DoFs (or an
    ancestor's translation) can change its rotation relative to its parent.

    Raises:
        ShapeError: an empty motion.
    """
    skel = motion.skeleton
    q = motion.q
    fk = forward_kinematics(skel, q)
    rest = forward_kinematics(skel, skel.rest_q)
    R, P = np.asarray(fk.joint_rotations), np.asarray(fk.joint_positions)
    R0, P0, S0 = np.asarray(rest.joint_rotations), np.asarray(rest.joint_positions), \
        np.asarray(rest.site_positions)
    W = R @ np.swapaxes(R0, -1, -2)[None]  # world rotation relative to rest, (T, J, 3, 3)
    par = skel.parents
    has_rot = np.zeros(skel.n_joints, dtype=bool)
    has_trans = np.zeros(skel.n_joints, dtype=bool)
    for k in range(skel.n_dof):
        (has_trans if skel.dof_type[k] == TRANSLATION else has_rot)[skel.dof_joint[k]] = True
    joints, cols = [], []
    for j, name in enumerate(skel.joint_names):
        root = par[j] < 0
        dofs = []
        if root or has_trans[j]:
            for a in "xyz":
                dofs.append(Dof(f"{name}_t{a}", f"t{a}", rest=float(P0[j]["xyz".index(a)]) if root else 0.0))
        if has_rot[j] or root:
            dofs += [Dof(f"{name}_r{a}", f"r{a}") for a in _ORDER]
        offset = (0.0, 0.0, 0.0) if root else tuple(P0[j] - P0[par[j]])
        joints.append(Joint(name, None if root else skel.joint_names[par[j]], offset, dofs,
                            mass=float(skel.masses[j]), com=tuple(R0[j] @ skel.coms[j]),
                            inertia=R0[j] @ skel.inertias[j] @ R0[j].T))
        T = q.shape[0]
        if root or has_trans[j]:
            if root:
                cols.append(P[:, j])
            else:
                # position of j relative to its parent, in the (rest-parallel) parent frame
                rel = np.einsum("tba,tb->ta", W[:, par[j]], P[:, j] - P[:, par[j]])
                cols.append(rel - (P0[j] - P0[par[j]]))
        if has_rot[j] or root:
            local = W[:, j] if root else np.swapaxes(W[:, par[j]], -1, -2) @ W[:, j]
            ang = matrix_to_euler(local, _ORDER).reshape(T, 3)
            cols.append(np.unwrap(ang, axis=0) if T > 1 else ang)
    sites = [Site(nm, skel.joint_names[skel.site_joint[i]],
                  tuple(S0[i] - P0[skel.site_joint[i]])) for i, nm in enumerate(skel.site_names)]
    meta = {k: v for k, v in skel.meta.items() if k not in ("bvh_end_sites",)}
    meta["baked_from"] = skel.name
    baked = Skeleton.from_joints(skel.name, joints, sites, meta=meta)
    qb = np.concatenate(cols, axis=1) if cols else np.zeros((q.shape[0], 0))
    return Motion(baked, qb, motion.fps, meta=dict(motion.meta))


__all__ = ["LAYOUTS", "bvh_compatible", "dumps_bvh_compatible", "write_bvh_compatible"]
