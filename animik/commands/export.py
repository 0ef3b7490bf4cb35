"""``animik export``: write a clip of a scene file as BVH or glTF binary.

The scene's ``[[clips]]`` tables (:func:`animik.anim.clip_from_dict` layout, see
docs/animation.md) are read against the scene's rig; the chosen clip is sampled at its frame
rate (or ``--fps``) and written atomically by extension: ``.bvh`` (:func:`animik.io.bvh.write_bvh`)
or ``.glb`` (:func:`animik.io.gltf.write_glb`).

Exit codes: 0 written; 2 bad usage (missing ``--clip`` when the scene has several clips,
unknown output extension); 3 bad input (malformed scene, unknown clip name, empty clip, NaN);
4 file-system error.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from .. import _cli_args as _args
from ..anim import clip_from_dict, export_clip
from ..errors import FileFormatError, UnknownNameError, names_hint
from ..rigs import load_character, resolve_rig
from ..scene import loads_scene

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_OS = 0, 2, 3, 4

_EPILOG = """\
exit codes:
  0  written
  2  bad usage (missing option, --clip needed, unknown output extension)
  3  bad input (malformed scene, unknown clip, empty clip or NaN in the clip)
  4  operating-system error (file not found, permission denied, disk full)

examples:
  animik export scenes/wave.toml --clip wave -o wave.glb
  animik export scenes/wave.toml --clip wave -o wave.bvh --fps 60 --unit cm
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``animik export``."""
    p = subparsers.add_parser(
        "export", help="write a clip of a scene file as BVH or glTF binary (.glb)",
        description="Sample a keyframe clip of a scene file at its frame rate and write it as "
                    "BVH or glTF 2.0 binary, chosen by the output extension. Files are written "
                    "atomically.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene", help="scene .toml file with [[clips]]")
    p.add_argument("--clip", default=None, metavar="NAME",
                   help="clip name (optional when the scene has exactly one clip)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="output .bvh or .glb")
    p.add_argument("--fps", type=_args.fps, default=None, help="sampling rate (default: the clip's)")
    p.add_argument("--unit", type=_args.bvh_unit, default=None,
                   help="BVH length unit: m, cm, mm, inch, cmu or metres per unit (default: the "
                        "rig's BVH unit, else cm)")
    p.add_argument("--compact", action="store_true",
                   help="bvh: one channel per DoF instead of the default 3 rotation channels per "
                        "rotating joint (root 6) that Blender's importer needs")
    p.add_argument("--no-mesh", action="store_true", help="glb: skeleton and animation only")
    p.set_defaults(func=run)
    return p


def load_clips(path: str | Path):
    """``(skeleton, clips)`` of a scene file.

    Uses :func:`animik.scene.load_scene` when its scene object carries ``clips``; otherwise
    reads the ``[[clips]]`` array of the TOML itself (resolving the rig as the scene module
    does: a built-in name, or a rig / BVH file relative to the scene file).

    Raises:
        FileFormatError: malformed scene or clip tables. OSError: unreadable file.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise FileFormatError(f"{path}: not a text file ({e.reason})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FileFormatError(f"{path}: not a valid TOML scene file: {e}") from None
    raw = doc.get("clips", [])

    skel = None
    try:
        scene = loads_scene(text, base_dir=path.parent, source=str(path), path=path)
    except FileFormatError as e:
        # A scene module that does not know [[clips]] yet rejects the key: read them here.
        if "clips" not in str(e):
            raise
        scene = None
    if scene is not None:
        clips = getattr(scene, "clips", None)
        if clips is not None:
            return scene.skeleton, list(clips)
        skel = scene.skeleton
    if skel is None:
        skel = _scene_rig(doc, path)
    if not isinstance(raw, list):
        raise FileFormatError(f"{path}: [[clips]] must be an array of tables")
    clips = [clip_from_dict(d, skel, where=f"{path}: clips[{i}]") for i, d in enumerate(raw)]
    return skel, clips


def _scene_rig(doc: dict, path: Path):
    sc = doc.get("scene")
    rig = sc.get("rig") if isinstance(sc, dict) else None
    if not isinstance(rig, str) or not rig:
        raise FileFormatError(f"{path}: [scene] rig must be a rig name or file path")
    return resolve_rig(rig, base_dir=path.parent).skeleton


def _character_mesh(path: Path, skel):
    """The skinned mesh of a scene whose rig is a rigged ``.glb`` / ``.gltf`` character (None
    for other rigs, or a character whose joints are no longer the scene's)."""
    try:
        sc = tomllib.loads(path.read_text(encoding="utf-8")).get("scene")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    rig = sc.get("rig") if isinstance(sc, dict) else None
    if not isinstance(rig, str) or Path(rig).suffix.lower() not in (".glb", ".gltf"):
        return None
    ch = load_character(rig, base_dir=path.parent)
    if ch.mesh is None or ch.skeleton.joint_names != skel.joint_names:
        return None
    return ch.mesh


def run(args: argparse.Namespace) -> int:
    """Run ``animik export``; returns the exit code (AnimikError → 3 and OSError → 4 in cli)."""
    out = Path(args.output)
    ext = out.suffix.lower()
    if ext not in (".bvh", ".glb"):
        print(f"animik export: error: unknown output extension {ext!r} (expected .bvh or .glb)",
              file=sys.stderr)
        return EXIT_USAGE
    skel, clips = load_clips(args.scene)
    names = [c.name for c in clips]
    if not clips:
        raise FileFormatError(f"{args.scene}: the scene has no clips ([[clips]] tables)")
    if args.clip is None:
        if len(clips) != 1:
            print(f"animik export: error: the scene has {len(clips)} clips, choose one with --clip "
                  f"NAME: {names_hint(names)}", file=sys.stderr)
            return EXIT_USAGE
        clip = clips[0]
    else:
        if args.clip not in names:
            raise UnknownNameError(f"{args.scene}: no clip named {args.clip!r}; clips are "
                                   f"{names_hint(names)}")
        clip = clips[names.index(args.clip)]
    options = {}
    if ext == ".bvh" and args.unit is not None:
        options["unit_scale"] = args.unit
    if ext == ".bvh" and args.compact:
        options["channels"] = "compact"
    if ext == ".glb":
        options["mesh"] = not args.no_mesh
        body = None if args.no_mesh else _character_mesh(Path(args.scene), skel)
        if body is not None:
            options["mesh"] = body  # a scene on a glTF character: its mesh, skin, materials
    export_clip(clip, out, fps=args.fps, **options)
    fps = clip.fps if args.fps is None else args.fps
    n = len(clip.frame_times(fps))
    print(f"wrote {out} (clip {clip.name!r}: {n} frames at {fps:g} fps, {clip.length:g} s)")
    return EXIT_OK

