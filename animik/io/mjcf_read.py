"""MJCF (MuJoCo XML) reader: a robot's kinematic tree, limits, masses and meshes.

Reads what MuJoCo's compiler reads for kinematics and dynamics: ``<include>`` files (relative to
the including file), ``<default>`` classes (nested, ``class`` / ``childclass``), ``<compiler
angle eulerseq meshdir assetdir autolimits>``, ``<frame>``, body orientation as ``quat``,
``axisangle``, ``euler``, ``xyaxes`` or ``zaxis``, ``<joint>`` (hinge, slide, ball, free) and
``<freejoint>`` with ``range`` / ``limited`` / ``ref``, ``<inertial>`` (``diaginertia`` or
``fullinertia``), ``<site>`` and mesh ``<geom>`` of groups 0-2 (those MuJoCo's viewer shows by
default; Menagerie's collision meshes are group 3) with their ``<mesh file scale>`` assets. The
skeleton mapping is :mod:`animik.io.robot_model`'s.

Handling of what animik does not model:

* ``<equality>`` constraints (closed loops, coupled joints) raise :class:`RobotFileError`: the
  kinematics would silently differ from MuJoCo's; so do ``<replicate>``, ``<attach>``,
  ``<composite>`` and flex / skin elements (bodies generated at compile time).
* ``<tendon>`` elements, a ball joint's cone ``range``, actuators and contacts are ignored; the
  first two are listed in ``skeleton.meta["warnings"]``.
* A body without ``<inertial>`` gets the mass and inertia of its geoms, as MuJoCo's
  ``<compiler inertiafromgeom="auto">`` (``"true"``: always, ``"false"``: never; see
  :mod:`animik.io.geom_inertia`); one without any geom volume is massless (warned).
* Mesh files that do not exist are dropped from the drawing and warned about.
* Several bodies directly under ``<worldbody>`` raise :class:`RobotFileError` (animik needs one
  root).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..rotations import matrix_from_axis_angle, matrix_from_quat
from ..skeleton import Skeleton
from .geom_inertia import combine, geom_mass_properties
from .robot_model import (
    RobotBody,
    RobotDescription,
    RobotFileError,
    RobotGeom,
    RobotJoint,
    resolve_mesh_path,
    robot_skeleton,
)

__all__ = ["loads_mjcf_robot", "read_mjcf_robot", "parse_mjcf", "RobotFileError"]

_KINDS = ("joint", "site", "geom", "mesh", "inertial")
_MAX_INCLUDE_DEPTH = 20


def _floats(text: str | None, n: int | None, what: str, source: str) -> np.ndarray | None:
    if text is None:
        return None
    try:
        v = np.array([float(x) for x in text.split()], dtype=float)
    except ValueError:
        raise RobotFileError(f"{source}: {what} must be numbers, got {text!r}") from None
    if n is not None and v.size != n:
        raise RobotFileError(f"{source}: {what} must have {n} numbers, got {text!r}")
    if not np.all(np.isfinite(v)):
        raise RobotFileError(f"{source}: {what} must be finite, got {text!r}")
    return v


def _parse_xml(data: bytes, source: str) -> ET.Element:
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        raise RobotFileError(f"{source}: malformed XML: {e}") from None


def _expand_includes(root: ET.Element, folder: Path | None, source: str, depth: int = 0) -> None:
    """Replace every ``<include file=...>`` by the children of the included ``<mujoco>``."""
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag != "include":
                continue
            name = child.get("file")
            if not name:
                raise RobotFileError(f"{source}: <include> without a file attribute")
            if folder is None:
                raise RobotFileError(f"{source}: <include file={name!r}> needs the file's folder "
                                     "(read the file from disk, not from bytes)")
            path = folder / name
            if depth >= _MAX_INCLUDE_DEPTH:
                raise RobotFileError(f"{source}: includes nested deeper than "
                                     f"{_MAX_INCLUDE_DEPTH} (a cycle?) at {name!r}")
            if not path.is_file():
                raise RobotFileError(f"{source}: included file {str(path)!r} does not exist")
            sub = _parse_xml(path.read_bytes(), str(path))
            _expand_includes(sub, path.parent, str(path), depth + 1)
            idx = list(parent).index(child)
            parent.remove(child)
            for i, c in enumerate(list(sub) if sub.tag == "mujoco" else [sub]):
                parent.insert(idx + i, c)


class _Ctx:
    def __init__(self, root: ET.Element, source: str, folder: Path | None) -> None:
        self.source = source
        self.folder = folder
        self.degree = True
        self.eulerseq = "xyz"
        self.meshdir = ""
        self.autolimits = True
        self.inertiafromgeom = "auto"
        for c in root.iter("compiler"):
            if c.get("inertiafromgeom") is not None:
                v = c.get("inertiafromgeom", "auto")
                if v not in ("auto", "true", "false"):
                    raise RobotFileError(f"{source}: <compiler inertiafromgeom> must be auto, "
                                         f"true or false, got {v!r}")
                self.inertiafromgeom = v
            if c.get("angle") is not None:
                if c.get("angle") not in ("degree", "radian"):
                    raise RobotFileError(f"{source}: <compiler angle> must be 'degree' or "
                                         f"'radian', got {c.get('angle')!r}")
                self.degree = c.get("angle") == "degree"
            if c.get("eulerseq") is not None:
                seq = c.get("eulerseq", "")
                if len(seq) != 3 or set(seq.lower()) - set("xyz"):
                    raise RobotFileError(f"{source}: bad <compiler eulerseq={seq!r}>")
                self.eulerseq = seq
            if c.get("assetdir") is not None:
                self.meshdir = c.get("assetdir", "")
            if c.get("meshdir") is not None:
                self.meshdir = c.get("meshdir", "")
            if c.get("autolimits") is not None:
                self.autolimits = c.get("autolimits") == "true"
        # default classes: class -> kind -> attributes (inheritance resolved)
        self.defaults: dict[str, dict[str, dict[str, str]]] = {}
        for d in root.findall("default"):
            self._read_default(d, {k: {} for k in _KINDS}, top=True)
        self.defaults.setdefault("main", {k: {} for k in _KINDS})
        self.meshes: dict[str, tuple[str, np.ndarray]] = {}
        self.mesh_inertia: dict[str, str] = {}
        for asset in root.iter("asset"):
            for m in asset.findall("mesh"):
                self._mesh_asset(m)

    def _read_default(self, d: ET.Element, inherited: dict[str, dict[str, str]], top: bool) -> None:
        name = d.get("class") or ("main" if top else None)
        if name is None:
            raise RobotFileError(f"{self.source}: a nested <default> needs a class attribute")
        mine = {k: dict(v) for k, v in inherited.items()}
        for child in d:
            if child.tag in _KINDS:
                mine[child.tag].update(child.attrib)
            elif child.tag == "freejoint":
                pass
        self.defaults[name] = mine
        for child in d.findall("default"):
            self._read_default(child, mine, top=False)

    def _mesh_asset(self, m: ET.Element) -> None:
        attrs = dict(self.defaults.get(m.get("class", "main"), {}).get("mesh", {}))
        attrs.update(m.attrib)
        file = attrs.get("file")
        if file is None:
            return  # a mesh from vertex data or a builtin: not drawn
        name = attrs.get("name") or Path(file).stem
        scale = _floats(attrs.get("scale"), 3, f"mesh {name!r} scale", self.source)
        self.meshes[name] = (file, np.ones(3) if scale is None else scale)
        self.mesh_inertia[name] = attrs.get("inertia", "legacy")

    def geom_frame(self, a: dict[str, str], rot: np.ndarray, pos: np.ndarray, what: str
                   ) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
        """``(type, half sizes (3,), pos, rot)`` of a geom in its body's frame (``fromto``
        resolved as MuJoCo does: the segment's midpoint, z along it, half its length)."""
        mesh = a.get("mesh")
        kind = a.get("type", "sphere" if mesh is None else "mesh")
        size = _floats(a.get("size"), None, f"{what} size", self.source)
        size = np.zeros(3) if size is None else np.pad(size, (0, max(0, 3 - len(size))))[:3]
        gpos, grot = pos + rot @ self.pos(a, what), rot @ self.orientation(a, what)
        fromto = _floats(a.get("fromto"), 6, f"{what} fromto", self.source)
        if fromto is not None and kind in ("capsule", "cylinder", "box", "ellipsoid"):
            p0, p1 = rot @ fromto[:3] + pos, rot @ fromto[3:] + pos
            axis = p1 - p0
            half = float(np.linalg.norm(axis)) / 2
            gpos = 0.5 * (p0 + p1)
            z = axis / max(2 * half, 1e-300)
            x = np.cross([0.0, 0.0, 1.0], z) if abs(z[2]) < 0.9 else np.cross([1.0, 0.0, 0.0], z)
            x /= np.linalg.norm(x)
            grot = np.stack([x, np.cross(z, x), z], axis=1)
            size = size.copy()
            size[2 if kind in ("box", "ellipsoid") else 1] = half
        return kind, size, gpos, grot

    def geom_mass(self, a: dict[str, str], rot: np.ndarray, pos: np.ndarray, what: str):
        """Mass properties of a geom in its body's frame (MuJoCo's inferred inertia)."""
        mesh = a.get("mesh")
        kind, size, gpos, grot = self.geom_frame(a, rot, pos, what)
        mesh_file = None
        if kind == "mesh" and mesh in self.meshes:
            file, scale = self.meshes[mesh]
            path = resolve_mesh_path(file, self.folder, self.meshdir)
            mode = self.mesh_inertia.get(mesh, "legacy")
            mesh_file = (path, scale, mode) if path is not None else None
        dens = _floats(a.get("density"), 1, f"{what} density", self.source)
        m = _floats(a.get("mass"), 1, f"{what} mass", self.source)
        return geom_mass_properties(kind, size, gpos, grot,
                                    float(dens[0]) if dens is not None else 1000.0,
                                    float(m[0]) if m is not None else None, mesh_file)

    def attrs(self, el: ET.Element, kind: str, cls: str) -> dict[str, str]:
        use = el.get("class", cls)
        if use not in self.defaults:
            raise RobotFileError(f"{self.source}: <{el.tag}> uses unknown default class {use!r}; "
                                 f"classes: {sorted(self.defaults)}")
        out = dict(self.defaults[use][kind])
        out.update(el.attrib)
        return out

    def angle(self, v: float) -> float:
        return float(np.deg2rad(v)) if self.degree else float(v)

    def orientation(self, a: dict[str, str], what: str) -> np.ndarray:
        """Rotation (3, 3) of an element's quat / axisangle / euler / xyaxes / zaxis."""
        src = self.source
        given = [k for k in ("quat", "axisangle", "euler", "xyaxes", "zaxis") if k in a]
        if len(given) > 1:
            raise RobotFileError(f"{src}: {what} has several orientations {given}")
        if "quat" in a:
            q = _floats(a["quat"], 4, f"{what} quat", src)
            if np.linalg.norm(q) < 1e-12:
                raise RobotFileError(f"{src}: {what} quat is zero")
            return matrix_from_quat(q / np.linalg.norm(q))
        if "axisangle" in a:
            v = _floats(a["axisangle"], 4, f"{what} axisangle", src)
            if np.linalg.norm(v[:3]) < 1e-12:
                raise RobotFileError(f"{src}: {what} axisangle has a zero axis")
            return matrix_from_axis_angle(v[:3] / np.linalg.norm(v[:3]), np.array(self.angle(v[3])))
        if "euler" in a:
            e = _floats(a["euler"], 3, f"{what} euler", src)
            r = np.eye(3)
            for ch, ang in zip(self.eulerseq, e, strict=True):
                axis = np.eye(3)["xyz".index(ch.lower())]
                m = matrix_from_axis_angle(axis, np.array(self.angle(ang)))
                r = r @ m if ch.islower() else m @ r  # lower case: moving axes (MuJoCo)
            return r
        if "xyaxes" in a:
            v = _floats(a["xyaxes"], 6, f"{what} xyaxes", src)
            x = v[:3] / np.linalg.norm(v[:3])
            y = v[3:] - x * float(x @ v[3:])
            y = y / np.linalg.norm(y)
            return np.stack([x, y, np.cross(x, y)], axis=1)
        if "zaxis" in a:
            z = _floats(a["zaxis"], 3, f"{what} zaxis", src)
            z = z / np.linalg.norm(z)
            axis = np.cross([0.0, 0.0, 1.0], z)
            s, c = np.linalg.norm(axis), float(z[2])
            if s < 1e-14:
                return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
            return matrix_from_axis_angle(axis / s, np.array(np.arctan2(s, c)))
        return np.eye(3)

    def pos(self, a: dict[str, str], what: str) -> np.ndarray:
        p = _floats(a.get("pos"), 3, f"{what} pos", self.source)
        return np.zeros(3) if p is None else p


def parse_mjcf(data: bytes, source: str = "<mjcf>", folder: Path | None = None) -> RobotDescription:
    """Parse MJCF bytes into a :class:`~animik.io.robot_model.RobotDescription`.

    Args:
        data: the file's bytes.
        source: file name for messages.
        folder: the file's folder (for ``<include>`` and mesh files), or None.

    Raises:
        RobotFileError: malformed XML, equality constraints, several root bodies, bad numbers.
    """
    root = _parse_xml(data, source)
    if root.tag != "mujoco":
        raise RobotFileError(f"{source}: not an MJCF file (root element <{root.tag}>, expected "
                             "<mujoco>)")
    _expand_includes(root, folder, source)
    ctx = _Ctx(root, source, folder)
    warnings: list[str] = []
    for eq in root.iter("equality"):
        kinds = sorted({c.tag for c in eq})
        if kinds:
            raise RobotFileError(
                f"{source}: <equality> constraints ({', '.join(kinds)}) are not supported: they "
                "close kinematic loops or couple joints, which animik's tree skeleton cannot "
                "hold; remove them (or load a variant of the model without them)")
    for tag in ("replicate", "attach", "composite", "flexcomp", "flex", "skin"):
        if root.find(f".//{tag}") is not None:
            raise RobotFileError(
                f"{source}: <{tag}> is not supported (it generates bodies or deformable parts "
                "at compile time); compile the model with MuJoCo and save it with mj_saveLastXML "
                "first")
    for tendon in root.iter("tendon"):
        if len(tendon):
            warnings.append(f"{len(tendon)} <tendon> element(s) ignored (no effect on the "
                            "kinematic tree)")
    worlds = root.findall("worldbody")
    tops: list[tuple[ET.Element, np.ndarray, np.ndarray, str]] = []
    for w in worlds:
        _collect_bodies(w, np.eye(3), np.zeros(3), "main", tops, ctx)
    if not tops:
        raise RobotFileError(f"{source}: no <body> under <worldbody>")
    if len(tops) > 1:
        raise RobotFileError(
            f"{source}: {len(tops)} bodies directly under <worldbody> "
            f"({', '.join(repr(t[0].get('name', '?')) for t in tops[:6])}); animik reads one "
            "robot: one top-level body")
    bodies: list[RobotBody] = []
    el, rot, pos, cls = tops[0]
    _read_body(el, None, rot, pos, cls, bodies, ctx, warnings)
    name = root.get("model") or (Path(source).stem if source else "robot")
    return RobotDescription(name, "mjcf", source, folder, bodies, warnings)


def _collect_bodies(el: ET.Element, rot: np.ndarray, pos: np.ndarray, cls: str,
                    out: list, ctx: _Ctx) -> None:
    """Top-level bodies below ``el``, with the transform of enclosing ``<frame>`` elements."""
    for c in el:
        if c.tag == "body":
            out.append((c, rot, pos, cls))
        elif c.tag == "frame":
            a = dict(c.attrib)
            fr = ctx.orientation(a, "<frame>")
            fp = ctx.pos(a, "<frame>")
            _collect_bodies(c, rot @ fr, pos + rot @ fp, c.get("childclass", cls), out, ctx)


def _read_body(el: ET.Element, parent: str | None, frame_rot: np.ndarray, frame_pos: np.ndarray,
               cls: str, out: list[RobotBody], ctx: _Ctx, warnings: list[str]) -> None:
    src = ctx.source
    name = el.get("name") or f"body{len(out)}"
    cls = el.get("childclass", cls)
    if cls not in ctx.defaults:
        raise RobotFileError(f"{src}: body {name!r} uses unknown childclass {cls!r}")
    what = f"body {name!r}"
    a = dict(el.attrib)
    body = RobotBody(name, parent, frame_pos + frame_rot @ ctx.pos(a, what),
                     frame_rot @ ctx.orientation(a, what))
    if el.get("mocap") == "true":
        raise RobotFileError(f"{src}: mocap body {name!r} is not supported")
    has_inertial = False
    geoms_seen: list[tuple[dict[str, str], np.ndarray, np.ndarray]] = []
    children: list[tuple[ET.Element, np.ndarray, np.ndarray, str]] = []

    def visit(container: ET.Element, rot: np.ndarray, pos: np.ndarray, ccls: str) -> None:
        nonlocal has_inertial
        for c in container:
            tag = c.tag
            if tag == "inertial":
                has_inertial = True
                ia = dict(c.attrib)
                ir = rot @ ctx.orientation(ia, f"{what} inertial")
                ip = pos + rot @ ctx.pos(ia, f"{what} inertial")
                mass = _floats(ia.get("mass"), 1, f"{what} inertial mass", src)
                if mass is None:
                    raise RobotFileError(f"{src}: {what} <inertial> needs a mass")
                if "fullinertia" in ia:
                    f = _floats(ia["fullinertia"], 6, f"{what} fullinertia", src)
                    inertia = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]],
                                        [f[4], f[5], f[2]]])
                else:
                    dg = _floats(ia.get("diaginertia"), 3, f"{what} diaginertia", src)
                    inertia = np.diag(dg) if dg is not None else np.zeros((3, 3))
                body.mass, body.com, body.inertia = float(mass[0]), ip, ir @ inertia @ ir.T
            elif tag in ("joint", "freejoint"):
                ja = {"type": "free"} if tag == "freejoint" else ctx.attrs(c, "joint", ccls)
                if tag == "freejoint":
                    ja.update(c.attrib)
                body.joints.append(_joint(ja, name, len(body.joints), ctx, warnings, rot, pos))
            elif tag == "site":
                sa = ctx.attrs(c, "site", ccls)
                sname = sa.get("name") or f"{name}_site{len(body.sites)}"
                body.sites.append((sname, pos + rot @ ctx.pos(sa, f"site {sname!r}"),
                                   rot @ ctx.orientation(sa, f"site {sname!r}")))
            elif tag == "geom":
                ga = ctx.attrs(c, "geom", ccls)
                _geom(ga, body, ctx, warnings, rot, pos)
                geoms_seen.append((ga, rot, pos))
            elif tag == "body":
                children.append((c, rot, pos, ccls))
            elif tag == "frame":
                fa = dict(c.attrib)
                visit(c, rot @ ctx.orientation(fa, f"{what} frame"),
                      pos + rot @ ctx.pos(fa, f"{what} frame"), c.get("childclass", ccls))

    visit(el, np.eye(3), np.zeros(3), cls)
    infer = ctx.inertiafromgeom == "true" or (ctx.inertiafromgeom == "auto" and not has_inertial)
    geom_parts, legacy_meshes = [], []
    for ga, rot, pos in geoms_seen if infer else ():
        got = ctx.geom_mass(ga, rot, pos, f"geom of {what}")
        if got is not None:
            geom_parts.append(got)
            m = ga.get("mesh")
            if m is not None and ctx.mesh_inertia.get(m, "legacy") not in ("exact", "convex"):
                legacy_meshes.append(m)
    if geom_parts:
        # MuJoCo's compiler: the body's inertia is the sum of its geoms' (geom_inertia)
        body.mass, body.com, body.inertia = combine(geom_parts)
        if legacy_meshes:
            warnings.append(f"body {name!r}: mass inferred from mesh(es) {legacy_meshes} with "
                            "the exact volume integrals; MuJoCo's default legacy mesh inertia "
                            "differs on open meshes (set <mesh inertia=\"exact\">)")
    elif not has_inertial:
        warnings.append(f"body {name!r} has no <inertial> and no geom with volume: massless")
    out.append(body)
    for c, rot, pos, ccls in children:
        _read_body(c, name, rot, pos, ccls, out, ctx, warnings)


def _joint(a: dict[str, str], body: str, k: int, ctx: _Ctx, warnings: list[str],
           rot: np.ndarray, pos: np.ndarray) -> RobotJoint:
    src = ctx.source
    kind = a.get("type", "hinge")
    name = a.get("name") or (f"{body}_free" if kind == "free" else f"{body}_joint{k}")
    what = f"joint {name!r}"
    if kind not in ("hinge", "slide", "ball", "free"):
        raise RobotFileError(f"{src}: {what} has type {kind!r}; MJCF joint types are hinge, "
                             "slide, ball and free")
    axis = _floats(a.get("axis"), 3, f"{what} axis", src)
    axis = rot @ (np.array([0.0, 0.0, 1.0]) if axis is None else axis)
    anchor = pos + rot @ ctx.pos(a, what)
    jt = RobotJoint(name, kind, axis=axis, anchor=anchor)
    if kind == "free":
        return jt
    rng = _floats(a.get("range"), 2, f"{what} range", src)
    limited = a.get("limited", "auto")
    if limited not in ("true", "false", "auto"):
        raise RobotFileError(f"{src}: {what} limited must be true, false or auto, got {limited!r}")
    is_limited = limited == "true" or (limited == "auto" and ctx.autolimits and rng is not None)
    scale = (np.pi / 180.0) if (ctx.degree and kind in ("hinge", "ball")) else 1.0
    if kind == "ball":
        if is_limited:
            warnings.append(f"ball joint {name!r}: its cone range is not modelled (unlimited)")
        return jt
    if is_limited:
        if rng is None:
            raise RobotFileError(f"{src}: {what} is limited but has no range")
        if rng[0] > rng[1]:
            raise RobotFileError(f"{src}: {what} range {rng[0]} > {rng[1]}")
        jt.lower, jt.upper = float(rng[0] * scale), float(rng[1] * scale)
    ref = _floats(a.get("ref"), 1, f"{what} ref", src)
    if ref is not None:
        jt.ref = float(ref[0] * scale)
    return jt


def _geom(a: dict[str, str], body: RobotBody, ctx: _Ctx, warnings: list[str],
          rot: np.ndarray, pos: np.ndarray) -> None:
    mesh = a.get("mesh")
    kind = a.get("type", "sphere" if mesh is None else "mesh")
    if int(float(a.get("group", "0"))) >= 3:
        return  # collision / helper geoms: MuJoCo's viewer hides groups 3-5 by default
    if kind in ("sphere", "capsule", "cylinder", "box", "ellipsoid"):
        what = f"geom of body {body.name!r}"
        kind, size, gpos, grot = ctx.geom_frame(a, rot, pos, what)
        rgba = _floats(a.get("rgba"), 4, "geom rgba", ctx.source)
        body.geoms.append(RobotGeom(
            a.get("name") or kind, None, gpos, grot,
            rgba=tuple(float(x) for x in rgba) if rgba is not None else (0.5, 0.5, 0.5, 1.0),
            kind=kind, size=size))
        return
    if kind != "mesh" or mesh is None:
        return
    if mesh not in ctx.meshes:
        warnings.append(f"geom of body {body.name!r}: mesh {mesh!r} has no <mesh file> asset")
        return
    file, scale = ctx.meshes[mesh]
    path = resolve_mesh_path(file, ctx.folder, ctx.meshdir)
    if path is None:
        warnings.append(f"mesh file {file!r} (body {body.name!r}) not found in "
                        f"{str((ctx.folder or Path('.')) / ctx.meshdir)!r}: drawn without it")
    rgba = _floats(a.get("rgba"), 4, "geom rgba", ctx.source)
    what = f"geom of body {body.name!r}"
    body.geoms.append(RobotGeom(
        a.get("name") or mesh, path, pos + rot @ ctx.pos(a, what),
        rot @ ctx.orientation(a, what), scale,
        tuple(float(x) for x in rgba) if rgba is not None else (0.7, 0.7, 0.72, 1.0)))


def loads_mjcf_robot(data: bytes, source: str = "<mjcf>", folder: Path | None = None) -> Skeleton:
    """A skeleton from MJCF bytes (see :mod:`animik.io.robot_model` for the mapping).

    Raises:
        RobotFileError: see :func:`parse_mjcf`.
    """
    return robot_skeleton(parse_mjcf(data, source, folder))


def read_mjcf_robot(path: str | Path) -> Skeleton:
    """A skeleton from an MJCF file (includes and meshes relative to its folder)."""
    p = Path(path)
    return loads_mjcf_robot(p.read_bytes(), str(p), p.parent)
