"""Export clips: sample the keys at the clip's frame rate, then write BVH or glTF binary.

``export_clip(clip, "walk.bvh")`` is ``write_bvh(bvh_compatible(clip.to_motion())[0], path)`` and
``export_clip(clip, "walk.glb")`` is ``write_glb(clip.to_motion(), path)``; both writes are
atomic (a failed export leaves an existing file untouched). An empty clip, or one whose
sampled poses hold NaN, raises :class:`~animik.anim.clip.ClipError` naming the clip.

BVH holds no rest rotation below the root and only principal-axis channels;
:func:`animik.io.bvh_compat.bvh_compatible` rewrites the joints that need more (body95's thumbs)
as three ``Z X Y`` rotation channels holding their whole local rotation, so every rig exports
with the same world motion.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import FileFormatError
from ..io.bvh import write_bvh
from ..io.bvh_compat import bvh_compatible
from ..io.gltf import write_glb
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
        **options: passed to :func:`animik.io.bvh.write_bvh` (``unit_scale``, ``precision``, ``channels``) or
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
        return write_bvh(bvh_compatible(motion)[0], path, **options)
    return write_glb(motion, path, name=clip.name, **options)


__all__ = ["EXPORT_FORMATS", "export_clip"]
