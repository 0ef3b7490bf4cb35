"""Locate and compile the GLSL programs of ``shaders/`` (one file per stage).

Like :mod:`animik.rigs` finds ``assets/``: the repository's top-level ``shaders/`` folder in a
source checkout or editable install, else the packaged ``animik._shaders`` resources (a wheel
maps that package onto the same folder).
"""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path


def _source_shader_dir() -> Path | None:
    d = Path(__file__).resolve().parents[3] / "shaders"
    return d if d.is_dir() else None


@functools.cache
def shader_source(name: str) -> str:
    """Text of one shader stage file, e.g. ``"mesh.vert"``.

    Raises:
        FileNotFoundError: no such shader in the checkout or the installed package.
    """
    local = _source_shader_dir()
    if local is not None and (local / name).is_file():
        return (local / name).read_text(encoding="utf-8")
    try:
        return (importlib.resources.files("animik._shaders") / name).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        raise FileNotFoundError(f"shader {name!r} not found in shaders/ or animik._shaders") from None


def program(ctx, name: str):
    """A moderngl program from ``<name>.vert`` and ``<name>.frag``."""
    return ctx.program(vertex_shader=shader_source(f"{name}.vert"),
                       fragment_shader=shader_source(f"{name}.frag"))
