"""Clips as plain TOML-able dictionaries (for the ``[[clips]]`` array of scene files).

:func:`clip_to_dict` gives only ``str``, ``float``, ``int``, ``bool``, lists and dicts; every
number is SI (rad, m, s). Layout::

    name = "wave"
    fps = 30.0
    length = 2.0                      # optional: fixed clip length, s
    interpolation = "smooth"          # mode of new keys
    base = { l_elbow_flexion = 0.3 }  # optional: DoFs without a track, where not the rest value

    [[clips.tracks]]                  # one per keyed joint
    joint = "l_shoulder"
    dofs = ["l_shoulder_horizontal_flexion", "l_shoulder_abduction", "l_shoulder_rotation"]
    times = [0.0, 1.0, 2.0]
    values = [[0.0, 0.0, 0.0], [0.5, 1.2, 0.0], [0.0, 0.0, 0.0]]
    interpolation = "smooth"          # one mode, or a list with one mode per key
    tangents = [[1, 0, 0.8]]          # optional: edited slopes [key index, DoF column, slope/s]

    [[clips.effectors]]               # one per keyed effector site
    site = "l_hand"
    times = [0.0, 1.0]
    positions = [[0.3, 0.2, 1.1], [0.4, 0.2, 1.3]]
    rotations = [[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], ...]  # optional
    interpolation = "linear"
    pinned = false
    weight = 1.0

    [clips.ik]                        # optional
    solver = "fik"
    dofs = ["l_shoulder", "l_elbow"]  # optional: joints / DoFs IK may move
    options = { tol_position = 0.0005 }

A clip's ``meta`` is free-form and mostly not saved; the entries in :data:`SAVED_META` are
(text the app records with a clip: ``supports``, the supports Make feasible corrected the clip
with, as JSON or ``"floor"``), each as a string key of the clip's table.

``dofs`` of a track names the joint's DoFs in order; reading checks it against the skeleton so a
clip never silently lands on the wrong columns. Writing then reading gives an equal clip (floats
as Python floats: exact).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import UnknownNameError, names_hint
from ..io.toml_fields import FieldReader
from ..io.toml_writer import inline, key
from ..skeleton import Skeleton
from .clip import Clip
from .tracks import ClipError, EffectorTrack, IKSettings, JointTrack

#: The ``Clip.meta`` entries a scene file keeps (string values): the supports Make feasible
#: corrected a clip with, so that a saved and reopened clip is checked with them again instead of
#: supports inferred anew from its corrected poses.
SUPPORTS_META = "supports"
SAVED_META = (SUPPORTS_META,)
_CLIP_KEYS = {"name", "fps", "length", "interpolation", "base", "tracks", "effectors", "ik",
              *SAVED_META}
_TRACK_KEYS = {"joint", "dofs", "times", "values", "interpolation", "tangents"}
_EFFECTOR_KEYS = {"site", "times", "positions", "rotations", "interpolation", "pinned", "weight"}
_IK_KEYS = {"solver", "options", "dofs"}


def _modes(modes: tuple[str, ...]) -> str | list[str]:
    return modes[0] if len(set(modes)) == 1 else list(modes)


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return _plain(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def clip_to_dict(clip: Clip) -> dict[str, Any]:
    """A clip as a dict of plain TOML-able values (see the module docstring)."""
    skel = clip.skeleton
    d: dict[str, Any] = {"name": clip.name, "fps": float(clip.fps)}
    if clip.fixed_length is not None:
        d["length"] = float(clip.fixed_length)
    d["interpolation"] = clip.interpolation
    for k in SAVED_META:
        if isinstance(clip.meta.get(k), str):
            d[k] = clip.meta[k]
    diff = np.flatnonzero(clip.base != skel.rest_q)
    if len(diff):
        d["base"] = {skel.dof_names[k]: float(clip.base[k]) for k in diff}
    d["tracks"] = []
    for tr in clip.tracks:
        td: dict[str, Any] = {
            "joint": tr.joint,
            "dofs": [skel.dof_names[k] for k in skel.joint_dofs(tr.joint)],
            "times": [float(x) for x in tr.times],
            "values": tr.values.tolist(),
            "interpolation": _modes(tr.interpolation),
        }
        if tr.tangents is not None:
            td["tangents"] = [[int(k), int(c), float(tr.tangents[k, c])]
                              for k, c in np.argwhere(~np.isnan(tr.tangents))]
        d["tracks"].append(td)
    effs = []
    for ef in clip.effectors:
        e: dict[str, Any] = {"site": ef.site, "times": [float(x) for x in ef.times],
                             "positions": ef.positions.tolist()}
        if ef.rotations is not None:
            e["rotations"] = ef.rotations.tolist()
        e.update(interpolation=_modes(ef.interpolation), pinned=ef.pinned, weight=ef.weight)
        effs.append(e)
    d["effectors"] = effs
    if clip.ik.solver != "fik" or clip.ik.options or clip.ik.dofs is not None:
        ik: dict[str, Any] = {"solver": clip.ik.solver}
        if clip.ik.dofs is not None:
            ik["dofs"] = list(clip.ik.dofs)
        if clip.ik.options:
            ik["options"] = _plain(clip.ik.options)
        d["ik"] = ik
    return d


class _Reader(FieldReader):
    def __init__(self, where: str):
        self.where = where

    def fail(self, key: str, problem: str) -> ClipError:
        return ClipError(f"{self.where}.{key}: {problem}" if key else f"{self.where}: {problem}")

    def numbers(self, v: Any, key: str, ndim: int) -> np.ndarray:
        def ok(x, depth):
            if depth == 0:
                return not isinstance(x, bool) and isinstance(x, (int, float))
            return isinstance(x, list) and all(ok(y, depth - 1) for y in x)

        if not ok(v, ndim):
            raise self.fail(key, f"must be {'a list' if ndim == 1 else 'nested lists'} of numbers")
        try:
            a = np.array(v, dtype=float)
        except ValueError:
            raise self.fail(key, "rows must all have the same length") from None
        if a.ndim != ndim and not (a.size == 0 and ndim > 1):
            raise self.fail(key, f"must be {ndim}-dimensional, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise self.fail(key, "contains NaN or infinite values")
        return a

    def string(self, v: Any, key: str) -> str:
        if not isinstance(v, str) or not v:
            raise self.fail(key, f"must be a non-empty string, got {v!r}")
        return v

    def modes(self, v: Any, key: str) -> str | tuple[str, ...]:
        if isinstance(v, str):
            return v
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return tuple(v)
        raise self.fail(key, f"must be a mode string or a list of them, got {v!r}")


def clip_from_dict(d: Mapping[str, Any], skeleton: Skeleton, where: str = "clip") -> Clip:
    """The inverse of :func:`clip_to_dict`, validated against ``skeleton``.

    Args:
        d: the dict (e.g. one table of a scene's ``[[clips]]``).
        skeleton: the skeleton the clip animates.
        where: prefix of error messages (e.g. ``"scene.toml: clips[0]"``).

    Raises:
        ClipError: a missing, unknown or bad key (the message says which).
        UnknownNameError: a joint, DoF or site the skeleton does not have.
    """
    r = _Reader(where)
    d = r.table(d, "", _CLIP_KEYS)
    name = r.string(d.get("name", "clip"), "name")
    r.where = f"{where} {name!r}"
    fps = r.number(d.get("fps", 30.0), "fps")
    length = None if "length" not in d else r.number(d["length"], "length")
    interp = d.get("interpolation", "linear")
    if not isinstance(interp, str):
        raise r.fail("interpolation", f"must be a mode string, got {interp!r}")
    base = np.array(skeleton.rest_q, dtype=float)
    bd = d.get("base", {})
    if not isinstance(bd, Mapping):
        raise r.fail("base", "must be a table of DoF name = value")
    for k, v in bd.items():
        try:
            base[skeleton.dof_index(k)] = r.number(v, f"base.{k}")
        except UnknownNameError as e:
            raise UnknownNameError(f"{r.where}.base: {e}") from None
    tracks = []
    tl = d.get("tracks", [])
    if not isinstance(tl, list):
        raise r.fail("tracks", "must be an array of tables")
    for i, td in enumerate(tl):
        key = f"tracks[{i}]"
        td = r.table(td, key, _TRACK_KEYS)
        for need in ("joint", "times", "values"):
            if need not in td:
                raise r.fail(key, f"missing {need!r}")
        joint = r.string(td["joint"], f"{key}.joint")
        if joint not in skeleton.joint_names:
            raise UnknownNameError(f"{r.where}.{key}.joint: unknown joint {joint!r} in skeleton "
                                   f"{skeleton.name!r}; joints are {names_hint(skeleton.joint_names)}")
        want = [skeleton.dof_names[k] for k in skeleton.joint_dofs(joint)]
        if "dofs" in td and list(td["dofs"]) != want:
            raise r.fail(f"{key}.dofs", f"joint {joint!r} has DoFs {want}, the clip was keyed for "
                                        f"{td['dofs']!r}")
        times = r.numbers(td["times"], f"{key}.times", 1)
        values = r.numbers(td["values"], f"{key}.values", 2)
        modes = r.modes(td.get("interpolation", interp), f"{key}.interpolation")
        tangents = None
        if "tangents" in td:
            tl3 = r.numbers(td["tangents"], f"{key}.tangents", 2)
            if tl3.size and tl3.shape[1] != 3:
                raise r.fail(f"{key}.tangents", "must be [key index, DoF column, slope] triples")
            tangents = np.full(values.shape, np.nan)
            for k, c, slope in tl3.reshape(-1, 3):
                if not (k == int(k) and c == int(c) and 0 <= k < values.shape[0]
                        and 0 <= c < values.shape[1]):
                    raise r.fail(f"{key}.tangents", f"no key {k:g} / DoF column {c:g} in a track "
                                                    f"of shape {values.shape}")
                tangents[int(k), int(c)] = slope
        try:
            tracks.append(JointTrack(joint, times, values, modes, tangents))
        except ClipError as e:
            raise r.fail(key, str(e)) from None
    effs = []
    el = d.get("effectors", [])
    if not isinstance(el, list):
        raise r.fail("effectors", "must be an array of tables")
    for i, ed in enumerate(el):
        key = f"effectors[{i}]"
        ed = r.table(ed, key, _EFFECTOR_KEYS)
        for need in ("site", "times", "positions"):
            if need not in ed:
                raise r.fail(key, f"missing {need!r}")
        site = r.string(ed["site"], f"{key}.site")
        rots = None if "rotations" not in ed else r.numbers(ed["rotations"], f"{key}.rotations", 3)
        pinned = ed.get("pinned", False)
        if not isinstance(pinned, bool):
            raise r.fail(f"{key}.pinned", f"must be true or false, got {pinned!r}")
        try:
            effs.append(EffectorTrack(
                site, r.numbers(ed["times"], f"{key}.times", 1),
                r.numbers(ed["positions"], f"{key}.positions", 2), rots,
                r.modes(ed.get("interpolation", interp), f"{key}.interpolation"), pinned,
                r.number(ed.get("weight", 1.0), f"{key}.weight")))
        except ClipError as e:
            raise r.fail(key, str(e)) from None
    ik = IKSettings()
    if "ik" in d:
        ikd = r.table(d["ik"], "ik", _IK_KEYS)
        solver = r.string(ikd.get("solver", "fik"), "ik.solver")
        opts = ikd.get("options", {})
        if not isinstance(opts, Mapping):
            raise r.fail("ik.options", "must be a table")
        dofs = ikd.get("dofs")
        if dofs is not None and (not isinstance(dofs, list) or not all(isinstance(x, str) for x in dofs)):
            raise r.fail("ik.dofs", f"must be a list of joint or DoF names, got {dofs!r}")
        ik = IKSettings(solver, dict(opts), None if dofs is None else tuple(dofs))
    meta = {k: r.string(d[k], k) for k in SAVED_META if k in d}
    return Clip(skeleton, tuple(tracks), tuple(effs), fps=fps, name=name, fixed_length=length,
                base=base, ik=ik, interpolation=interp, meta=meta)


def clips_to_toml(clips, table: str = "clips") -> str:
    """TOML text of clips as an array of tables ``[[clips]]`` (append it to a scene file).

    Written with animik's TOML emitter (:mod:`animik.io.toml_writer`: floats as ``repr``, exact);
    reading the text with :mod:`tomllib` and each table with :func:`clip_from_dict` gives equal
    clips.
    """
    out: list[str] = []
    for clip in clips:
        d = clip_to_dict(clip)
        where = f"clip {clip.name!r}"
        out += ["", f"[[{key(table)}]]"]
        for k in ("name", "fps", "length", "interpolation", "base", *SAVED_META):
            if k in d:
                out.append(f"{key(k)} = {inline(d[k], f'{where}.{k}')}")
        if "ik" in d:
            out += ["", f"[{key(table)}.ik]"]
            out += [f"{key(k)} = {inline(v, f'{where}.ik.{k}')}" for k, v in d["ik"].items()]
        for sub in ("tracks", "effectors"):
            for i, item in enumerate(d[sub]):
                out += ["", f"[[{key(table)}.{sub}]]"]
                out += [f"{key(k)} = {inline(v, f'{where}.{sub}[{i}].{k}')}" for k, v in item.items()]
    return "\n".join(out).lstrip("\n") + "\n"


__all__ = ["SAVED_META", "SUPPORTS_META", "clip_from_dict", "clip_to_dict", "clips_to_toml"]
