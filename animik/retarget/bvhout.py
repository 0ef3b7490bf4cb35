"""Retargeted motions as BVH: the rig's own DoFs when BVH can hold them, else baked Euler.

:func:`animik.io.bvh.write_bvh` writes a skeleton's DoFs as channels when every joint frame
can be expressed with principal-axis channels (``fig2``, ``biped12``, skeletons read from BVH).
``body95`` cannot (its thumbs have a 45° rest rotation), so :func:`bake_euler` re-expresses a
motion on a skeleton whose joint frames are parallel to the world at rest, with three rotation
channels (``Zrotation Xrotation Yrotation``, as most BVH files) on every joint that moves and
position channels on the root: the same world pose of every joint and site in every frame.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import FileFormatError
from ..io._atomic import atomic_write
from ..io.bvh import dumps_bvh
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..rotations import matrix_to_euler
from ..skeleton import TRANSLATION, Dof, Joint, Site, Skeleton

_ORDER = "zxy"


def bake_euler(motion: Motion) -> Motion:
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


def write_motion_bvh(motion: Motion, path: str | os.PathLike, unit_scale: float | str | None = None
                     ) -> str:
    """Write a motion as BVH (atomically): its own DoFs if possible, else :func:`bake_euler`.

    Returns:
        ``"dofs"`` or ``"baked"``: the channel layout written.
    """
    data, layout = motion_bvh_bytes(motion, unit_scale)
    atomic_write(path, data)
    return layout


def motion_bvh_bytes(motion: Motion, unit_scale: float | str | None = None) -> tuple[bytes, str]:
    """The BVH file content of :func:`write_motion_bvh` as bytes, and the layout."""
    try:
        return dumps_bvh(motion, unit_scale=unit_scale), "dofs"
    except FileFormatError:
        return dumps_bvh(bake_euler(motion), unit_scale=unit_scale), "baked"
