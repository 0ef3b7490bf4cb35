"""Encodings of a retargeted clip for ``animik retarget --format bvh|glb|npz|csv``.

* ``bvh`` — the target skeleton's BVH (0 or 3 rotation channels per joint, see
  :func:`animik.io.bvh_compat.dumps_bvh_compatible`).
* ``glb`` — binary glTF with the skeleton, a bone mesh and the animation
  (:func:`animik.io.gltf.dumps_glb`).
* ``npz`` — what robot-learning pipelines load: ``qpos`` ``(T, nq)`` in the model's own joint
  order (a free base as position + quaternion ``wxyz``, :func:`animik.io.robot_qpos.qpos_from_q`),
  ``fps``, ``qpos_names`` ``(nq,)``, ``joint_names`` (the model's joints in qpos order),
  ``body_names``, plus animik's own ``q`` ``(T, n_dof)`` and ``dof_names``.
* ``csv`` — one row per frame: ``time`` then the ``qpos`` columns, under a header of
  ``qpos_names``; a first comment line ``# fps=<fps> nq=<nq> model=<name>``.
"""

from __future__ import annotations

import io

import numpy as np

from ..character import SkinnedMesh
from ..errors import OptionError
from ..io.bvh_compat import dumps_bvh_compatible
from ..io.gltf import dumps_glb
from ..io.robot_qpos import qpos_from_q, qpos_layout, qpos_names
from ..motion import Motion

FORMATS = ("bvh", "glb", "npz", "csv")


def check_format(fmt: str) -> str:
    """``fmt`` lower-cased if it is one of :data:`FORMATS`.

    Raises:
        OptionError: anything else.
    """
    if not isinstance(fmt, str) or fmt.lower() not in FORMATS:
        raise OptionError(f"output format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt.lower()


def qpos_arrays(motion: Motion) -> dict[str, np.ndarray]:
    """The npz content of a clip (see the module docstring)."""
    skel = motion.skeleton
    q = np.asarray(motion.q, dtype=float)
    return {
        "qpos": qpos_from_q(skel, q),
        "fps": np.array(float(motion.fps)),
        "qpos_names": np.array(qpos_names(skel)),
        "joint_names": np.array([name for name, _, _ in qpos_layout(skel)]),
        "body_names": np.array(skel.joint_names),
        "q": q,
        "dof_names": np.array(skel.dof_names),
    }


def encode_clip(motion: Motion, fmt: str, unit: float | str = "cm",
                mesh: bool | SkinnedMesh = True) -> tuple[bytes, dict]:
    """The bytes of ``motion`` in format ``fmt`` and extra report fields.

    Args:
        motion: the retargeted clip.
        fmt: one of :data:`FORMATS`.
        unit: BVH length unit (``"cm"``, ``"m"`` or metres per unit).
        mesh: what a ``glb`` carries: a character's :class:`~animik.character.SkinnedMesh` (an
            imported file's mesh, skin and materials are kept) or True (animik's bone mesh).

    Raises:
        OptionError: an unknown format.
    """
    fmt = check_format(fmt)
    if fmt == "bvh":
        out, layout = dumps_bvh_compatible(motion, unit)
        return out, {"bvh_layout": layout}
    if fmt == "glb":
        return dumps_glb(motion, mesh=mesh), {}
    arrays = qpos_arrays(motion)
    if fmt == "npz":
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue(), {"nq": int(arrays["qpos"].shape[1])}
    qpos = arrays["qpos"]
    t = np.arange(len(qpos)) / float(motion.fps)
    lines = [f"# fps={float(motion.fps)!r} nq={qpos.shape[1]} model={motion.skeleton.name}",
             ",".join(["time", *arrays["qpos_names"].tolist()])]
    lines += [",".join(repr(float(x)) for x in (ti, *row)) for ti, row in zip(t, qpos, strict=True)]
    return ("\n".join(lines) + "\n").encode(), {"nq": int(qpos.shape[1])}
