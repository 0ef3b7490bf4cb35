"""Export clips: sample the keys at the clip's frame rate, then write BVH or glTF binary.

``export_clip(clip, "walk.bvh")`` is ``write_bvh(bvh_ready(clip.to_motion()), path)`` and
``export_clip(clip, "walk.glb")`` is ``write_glb(clip.to_motion(), path)``; both writes are
atomic (a failed export leaves an existing file untouched). An empty clip, or one whose
sampled poses hold NaN, raises :class:`~animik.anim.clip.ClipError` naming the clip.

BVH holds no rest rotation below the root and only principal-axis channels; :func:`bvh_ready`
rewrites the joints that need more (body95's thumbs) as three ``Z X Y`` rotation channels
holding their whole local rotation, so every rig exports with the same world motion.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FileFormatError
from ..motion import Motion
from .clip import Clip
from .tracks import ClipError

#: Extensions :func:`export_clip` writes.
EXPORT_FORMATS = (".bvh", ".glb")


def export_clip(clip: Clip, path: str | os.PathLike, fps: float | None = None, **options: Any) -> Path:
    """Write a clip as BVH (``.bvh``) or glTF 2.0 binary (``.glb``), chosen by extension.

    Args:
        clip: the clip.
        path: destination file.
        fps: sampling rate (default ``clip.fps``).
        **options: passed to :func:`animik.io.bvh.write_bvh` (``unit_scale``, ``precision``) or
            :func:`animik.io.gltf.write_glb` (``mesh``).

    Returns:
        The path written.

    Raises:
        ClipError: empty clip, NaN in the sampled poses.
        FileFormatError: unknown extension; a skeleton the format cannot hold.
        OSError: the file cannot be written.
    """
    if not isinstance(clip, Clip):
        raise ClipError(f"export_clip needs a Clip, got {type(clip).__name__}")
    ext = Path(path).suffix.lower()
    if ext not in EXPORT_FORMATS:
        raise FileFormatError(f"cannot export clip {clip.name!r} to {str(path)!r}: unknown "
                              f"extension {ext!r} (expected one of {list(EXPORT_FORMATS)})")
    motion = clip.to_motion(fps)  # ClipError for empty / NaN
    if ext == ".bvh":
        from ..io.bvh import write_bvh

        return write_bvh(bvh_ready(motion), path, **options)
    from ..io.gltf import write_glb

    return write_glb(motion, path, name=clip.name, **options)


def bvh_ready(motion: Motion) -> Motion:
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
    from ..io.bvh import _BVH_FROM_WORLD
    from ..kinematics import forward_kinematics
    from ..rotations import matrix_to_euler
    from ..skeleton import ROTATION, Dof, Joint, Skeleton

    skel = motion.skeleton
    G = _BVH_FROM_WORLD @ skel.rest_rotations[0]  # bvh_from_joint frame of every joint
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
        return motion
    joints, sites = skel.to_joints()
    fk = forward_kinematics(skel, motion.q)
    Rw = fk.joint_rotations  # (T, J, 3, 3)
    cols: list[np.ndarray] = []
    used = set(skel.dof_names)
    new_joints = []
    for j, jt in enumerate(joints):
        dofs = list(skel.joint_dofs(j))
        if j not in bake:
            new_joints.append(jt)
            cols += [motion.q[:, k] for k in dofs]
            continue
        rest = skel.rest_rotations[j]
        new_rest = rest if j == 0 else eye
        p = int(skel.parents[j])
        local = Rw[:, j] if p < 0 else np.swapaxes(Rw[:, p], -1, -2) @ Rw[:, j]
        # joint frame: T(offset) @ new_rest @ T(translations) @ G^T Rz Rx Ry G
        e = G @ new_rest.T @ local @ G.T
        angles = np.unwrap(matrix_to_euler(e, "zxy"), axis=0)
        new_dofs = []
        for k in dofs:
            if skel.dof_type[k] != ROTATION:
                d = jt.dofs[dofs.index(k)]
                ax = (new_rest.T @ rest @ skel.dof_axis[k]) if j > 0 else skel.dof_axis[k]
                new_dofs.append(Dof(d.name, "t", d.lower, d.upper, d.rest, tuple(float(a) for a in ax)))
                cols.append(motion.q[:, k])
        for i, letter in enumerate("zxy"):
            name = f"{jt.name}_r{letter}"
            while name in used:
                name += "_"
            used.add(name)
            axis = G.T @ eye["xyz".index(letter)]
            new_dofs.append(Dof(name, "r", axis=tuple(float(a) for a in axis)))
            cols.append(angles[:, i])
        new_joints.append(Joint(jt.name, jt.parent, jt.offset, new_dofs, new_rest, jt.mass, jt.com,
                                jt.inertia))
    new = Skeleton.from_joints(skel.name, new_joints, sites, meta=dict(skel.meta))
    q = np.stack(cols, axis=1) if cols else np.zeros((motion.n_frames, 0))
    return Motion(new, q, motion.fps, meta=dict(motion.meta))


__all__ = ["EXPORT_FORMATS", "bvh_ready", "export_clip"]
