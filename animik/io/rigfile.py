"""The animik rig file: a human-readable TOML description of a :class:`~animik.skeleton.Skeleton`.

A rig file holds the same data as a skeleton, with rotation DoF limits in **degrees** (the only
unit conversion; everything else is SI: metres, kilograms, kg·m²). Example::

    format = "animik-rig"
    format_version = 1
    name = "example"
    description = "two links"
    mass_source = "uniform rods"

    [[joints]]
    name = "base"
    offset = [0.0, 0.0, 0.5]            # m, from the parent joint frame (root: from the world)
    mass = 2.0                          # kg
    com = [0.0, 0.0, 0.1]               # m, joint frame
    inertia_diag = [0.01, 0.01, 0.005]  # kg m^2 about the COM (or inertia = [[..], [..], [..]])
    dofs = [
      { name = "base_tz", kind = "tz", lower = -1.0, upper = 1.0 },       # metres
      { name = "base_yaw", kind = "rz" },                                 # no limits: free
    ]

    [[joints]]
    name = "arm"
    parent = "base"                     # omitted only for the root
    offset = [0.0, 0.0, 0.2]
    rotation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]  # optional rest rotation
    dofs = [
      { name = "arm_flexion", kind = "-ry", lower_deg = 0.0, upper_deg = 150.0, rest_deg = 10.0 },
    ]

    [[sites]]
    name = "tip"
    joint = "arm"
    offset = [0.0, 0.0, 0.3]
    # rotation = [[...]]  optional

    [meta]                              # free-form: any TOML values and tables
    height = 0.8

DoF ``kind``: ``rx ry rz tx ty tz`` (about / along a principal axis of the joint frame),
the same with a leading minus (``"-ry"``: the negative axis, e.g. so that a positive value is
anatomical flexion on both sides of a body), or ``r`` / ``t`` with an explicit unit ``axis``.
Rotation DoFs take ``lower_deg`` / ``upper_deg`` / ``rest_deg``; translation DoFs take ``lower``
/ ``upper`` / ``rest`` in metres. A missing limit is unlimited; a missing rest value is 0
(clipped into the limits). A joint without ``mass`` gets the bone-cylinder estimate of
:meth:`Skeleton.from_joints`.

The top-level ``description`` and ``mass_source`` become ``skeleton.meta["description"]`` and
``skeleton.meta["mass_source"]``; the ``[meta]`` table supplies the rest of ``skeleton.meta``
(nested tables are read as read-only mappings, arrays as tuples). Writing then reading a
skeleton gives an equal one (arrays equal to ~1e-15, names and meta equal).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FileFormatError, SkeletonError
from ..skeleton import ROTATION, Dof, Joint, Site, Skeleton
from ..skeleton import freeze as _freeze
from ._atomic import atomic_write
from .toml_writer import mat as _mat
from .toml_writer import num as _num
from .toml_writer import string as _str
from .toml_writer import table as _table
from .toml_writer import vec as _vec

FORMAT = "animik-rig"
FORMAT_VERSION = 1

_TOP_KEYS = {"format", "format_version", "name", "description", "mass_source", "joints",
             "sites", "meta"}
_JOINT_KEYS = {"name", "parent", "offset", "rotation", "mass", "com", "inertia", "inertia_diag",
               "dofs"}
_DOF_KEYS = {"name", "kind", "axis", "lower", "upper", "rest", "lower_deg", "upper_deg",
             "rest_deg"}
_SITE_KEYS = {"name", "joint", "offset", "rotation"}
_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
_KIND_RE = re.compile(r"^(-?)([rt])([xyz])$")


# ====================================================================== reading
def read_rig(path: str | os.PathLike) -> Skeleton:
    """Read a rig file.

    Args:
        path: a ``.toml`` rig file.

    Returns:
        The skeleton (``meta`` holds ``description``, ``mass_source`` and the ``[meta]`` table).

    Raises:
        FileNotFoundError: the file does not exist.
        FileFormatError: malformed TOML, unknown keys, missing fields, bad values or an
            inconsistent skeleton; the message names the file, the joint/DoF/site and the problem.
    """
    path = Path(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileFormatError(f"{path}: not UTF-8 text ({e})") from None
    return loads_rig(text, source=str(path))


def loads_rig(text: str, source: str = "<string>") -> Skeleton:
    """Parse rig-file text (see :func:`read_rig`); ``source`` names it in error messages."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FileFormatError(f"{source}: malformed TOML: {e}") from None
    return _RigReader(source).skeleton(doc)


class _RigReader:
    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, problem: str) -> FileFormatError:
        return FileFormatError(f"{self.source}: {where}{': ' if where else ''}{problem}")

    # -------------------------------------------------------------- value checks
    def check_keys(self, table: Any, allowed: set[str], where: str,
                   required: tuple[str, ...] = ()) -> dict:
        if not isinstance(table, dict):
            raise self.fail(where, f"expected a table, got {type(table).__name__}")
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(where, f"unknown key(s) {unknown}; allowed keys are {sorted(allowed)}")
        for k in required:
            if k not in table:
                raise self.fail(where, f"missing required field {k!r}")
        return table

    def string(self, v: Any, where: str, key: str) -> str:
        if not isinstance(v, str) or not v:
            raise self.fail(where, f"{key!r} must be a non-empty string, got {v!r}")
        return v

    def number(self, v: Any, where: str, key: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(where, f"{key!r} must be a number, got {v!r}")
        v = float(v)
        if math.isnan(v):
            raise self.fail(where, f"{key!r} must not be nan")
        return v

    def vector(self, v: Any, where: str, key: str, n: int = 3) -> tuple[float, ...]:
        if not isinstance(v, list) or len(v) != n:
            raise self.fail(where, f"{key!r} must be an array of {n} numbers, got {v!r}")
        out = tuple(self.number(x, where, key) for x in v)
        if not all(math.isfinite(x) for x in out):
            raise self.fail(where, f"{key!r} must hold finite numbers, got {v!r}")
        return out

    def matrix(self, v: Any, where: str, key: str) -> np.ndarray:
        if not isinstance(v, list) or len(v) != 3:
            raise self.fail(where, f"{key!r} must be a 3x3 array (3 rows of 3 numbers), got {v!r}")
        return np.array([self.vector(row, where, key) for row in v])

    def rotation(self, v: Any, where: str) -> np.ndarray:
        r = self.matrix(v, where, "rotation")
        if np.max(np.abs(r @ r.T - np.eye(3))) > 1e-6 or np.linalg.det(r) < 0:
            raise self.fail(where, "'rotation' must be a proper rotation matrix "
                                   "(orthonormal rows, determinant +1)")
        return r

    # -------------------------------------------------------------- structure
    def skeleton(self, doc: dict) -> Skeleton:
        self.check_keys(doc, _TOP_KEYS, "", required=("name", "joints"))
        fmt = doc.get("format", FORMAT)
        if fmt != FORMAT:
            raise self.fail("", f"'format' must be {FORMAT!r}, got {fmt!r}")
        ver = doc.get("format_version", FORMAT_VERSION)
        if isinstance(ver, bool) or not isinstance(ver, int) or not 1 <= ver <= FORMAT_VERSION:
            raise self.fail("", f"unsupported format_version {ver!r} (this reader knows "
                                f"1..{FORMAT_VERSION})")
        name = self.string(doc["name"], "", "name")
        joints_doc = doc["joints"]
        if not isinstance(joints_doc, list) or not joints_doc:
            raise self.fail("", "'joints' must be a non-empty array of tables ([[joints]])")
        joints = [self.joint(jd, i) for i, jd in enumerate(joints_doc)]
        sites_doc = doc.get("sites", [])
        if not isinstance(sites_doc, list):
            raise self.fail("", "'sites' must be an array of tables ([[sites]])")
        sites = [self.site(sd, i) for i, sd in enumerate(sites_doc)]

        meta_doc = doc.get("meta", {})
        if not isinstance(meta_doc, dict):
            raise self.fail("", "'meta' must be a table")
        meta: dict[str, Any] = {}
        for key in ("description", "mass_source"):
            if key in doc:
                if not isinstance(doc[key], str):
                    raise self.fail("", f"{key!r} must be a string, got {doc[key]!r}")
                if key in meta_doc:
                    raise self.fail("[meta]", f"{key!r} is given both at the top level and in "
                                              "[meta]; keep only the top-level one")
                meta[key] = doc[key]
        for k, v in meta_doc.items():
            meta[k] = _freeze(v)
        try:
            return Skeleton.from_joints(name, joints, sites, meta=meta)
        except SkeletonError as e:
            raise self.fail(f"rig {name!r}", str(e)) from None

    def joint(self, jd: Any, index: int) -> Joint:
        where = f"joint #{index}"
        if isinstance(jd, dict) and isinstance(jd.get("name"), str):
            where = f"joint {jd['name']!r}"
        self.check_keys(jd, _JOINT_KEYS, where, required=("name", "offset"))
        name = self.string(jd["name"], where, "name")
        parent = None
        if "parent" in jd:
            parent = self.string(jd["parent"], where, "parent")
        offset = self.vector(jd["offset"], where, "offset")
        rotation = self.rotation(jd["rotation"], where) if "rotation" in jd else None
        mass = com = inertia = None
        if "mass" in jd:
            mass = self.number(jd["mass"], where, "mass")
            if not math.isfinite(mass) or mass < 0:
                raise self.fail(where, f"'mass' must be finite and >= 0, got {mass!r}")
        elif any(k in jd for k in ("com", "inertia", "inertia_diag")):
            raise self.fail(where, "'com'/'inertia' given without 'mass'")
        if "com" in jd:
            com = self.vector(jd["com"], where, "com")
        if "inertia" in jd and "inertia_diag" in jd:
            raise self.fail(where, "give either 'inertia' or 'inertia_diag', not both")
        if "inertia" in jd:
            inertia = self.matrix(jd["inertia"], where, "inertia")
            if np.max(np.abs(inertia - inertia.T)) > 1e-12 * max(1.0, np.max(np.abs(inertia))):
                raise self.fail(where, "'inertia' must be symmetric")
        elif "inertia_diag" in jd:
            inertia = np.diag(self.vector(jd["inertia_diag"], where, "inertia_diag"))
        if inertia is not None and np.min(np.linalg.eigvalsh(inertia)) < -1e-12:
            raise self.fail(where, "inertia must be positive semi-definite")
        dofs_doc = jd.get("dofs", [])
        if not isinstance(dofs_doc, list):
            raise self.fail(where, "'dofs' must be an array of inline tables")
        dofs = [self.dof(dd, where, k) for k, dd in enumerate(dofs_doc)]
        return Joint(name, parent, offset, dofs, rotation, mass, com, inertia)

    def dof(self, dd: Any, jwhere: str, index: int) -> Dof:
        where = f"{jwhere}, DoF #{index}"
        if isinstance(dd, dict) and isinstance(dd.get("name"), str):
            where = f"{jwhere}, DoF {dd['name']!r}"
        self.check_keys(dd, _DOF_KEYS, where, required=("name", "kind"))
        name = self.string(dd["name"], where, "name")
        kind = dd["kind"]
        if not isinstance(kind, str):
            raise self.fail(where, f"'kind' must be a string, got {kind!r}")
        m = _KIND_RE.match(kind)
        axis: tuple[float, ...] | None
        if m:
            sign = -1.0 if m.group(1) else 1.0
            typ = m.group(2)
            axis = tuple(sign * a for a in _AXES[m.group(3)])
            if "axis" in dd:
                raise self.fail(where, f"kind {kind!r} fixes the axis; give 'axis' only with "
                                       "kind 'r' or 't'")
        elif kind in ("r", "t"):
            typ = kind
            if "axis" not in dd:
                raise self.fail(where, f"kind {kind!r} needs an 'axis' (3 numbers)")
            axis = self.vector(dd["axis"], where, "axis")
            if np.linalg.norm(axis) < 1e-12:
                raise self.fail(where, "'axis' must be non-zero")
        else:
            raise self.fail(where, f"unknown kind {kind!r} (expected rx, ry, rz, tx, ty, tz, "
                                   "optionally with a leading '-', or r / t with an axis)")
        if typ == "r":
            bad = [k for k in ("lower", "upper", "rest") if k in dd]
            if bad:
                raise self.fail(where, f"rotation DoF limits are in degrees: use "
                                       f"{[b + '_deg' for b in bad]} instead of {bad}")
            lower = np.radians(self.number(dd.get("lower_deg", -math.inf), where, "lower_deg"))
            upper = np.radians(self.number(dd.get("upper_deg", math.inf), where, "upper_deg"))
            rest = (np.radians(self.number(dd["rest_deg"], where, "rest_deg"))
                    if "rest_deg" in dd else None)
        else:
            bad = [k for k in ("lower_deg", "upper_deg", "rest_deg") if k in dd]
            if bad:
                raise self.fail(where, f"translation DoF values are in metres: use "
                                       f"{[b[:-4] for b in bad]} instead of {bad}")
            lower = self.number(dd.get("lower", -math.inf), where, "lower")
            upper = self.number(dd.get("upper", math.inf), where, "upper")
            rest = self.number(dd["rest"], where, "rest") if "rest" in dd else None
        if lower > upper:
            raise self.fail(where, f"lower limit above upper limit ({_lim(dd, 'lower', typ)} > "
                                   f"{_lim(dd, 'upper', typ)})")
        if rest is not None and not (lower <= rest <= upper):
            raise self.fail(where, f"rest value {_lim(dd, 'rest', typ)} outside the limits")
        return Dof(name, typ, float(lower), float(upper), None if rest is None else float(rest),
                   tuple(float(a) for a in axis))

    def site(self, sd: Any, index: int) -> Site:
        where = f"site #{index}"
        if isinstance(sd, dict) and isinstance(sd.get("name"), str):
            where = f"site {sd['name']!r}"
        self.check_keys(sd, _SITE_KEYS, where, required=("name", "joint", "offset"))
        name = self.string(sd["name"], where, "name")
        joint = self.string(sd["joint"], where, "joint")
        offset = self.vector(sd["offset"], where, "offset")
        rotation = self.rotation(sd["rotation"], where) if "rotation" in sd else None
        return Site(name, joint, offset, rotation)


def _lim(dd: dict, key: str, typ: str) -> str:
    return f"{dd[key + '_deg']} deg" if typ == "r" else f"{dd[key]} m"


# ====================================================================== writing
def write_rig(skel: Skeleton, path: str | os.PathLike, header: str | None = None) -> Path:
    """Write a skeleton as a rig file, atomically.

    Args:
        skel: the skeleton.
        path: destination ``.toml`` file.
        header: optional text written as ``#`` comment lines at the top (provenance, sources).

    Returns:
        The destination path.

    Raises:
        FileFormatError: ``skel.meta`` holds a value TOML cannot store (``None``, objects...).
    """
    path = Path(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    out = atomic_write(path, dumps_rig(skel, header=header))
    # atomic_write's temporary file is private (0600); give the rig file ordinary permissions
    # (or keep those of the file it replaced).
    os.chmod(out, mode)
    return out


def dumps_rig(skel: Skeleton, header: str | None = None) -> str:
    """The rig-file text of a skeleton (see :func:`write_rig`)."""
    out: list[str] = []
    if header:
        for line in header.strip("\n").splitlines():
            out.append(f"# {line}".rstrip())
        out.append("")
    out.append(f"format = {_str(FORMAT)}")
    out.append(f"format_version = {FORMAT_VERSION}")
    out.append(f"name = {_str(skel.name)}")
    meta = dict(skel.meta)
    for key in ("description", "mass_source"):
        if isinstance(meta.get(key), str):
            out.append(f"{key} = {_str(meta.pop(key))}")
    out.append("")

    for j, jname in enumerate(skel.joint_names):
        out.append("[[joints]]")
        out.append(f"name = {_str(jname)}")
        if skel.parents[j] >= 0:
            out.append(f"parent = {_str(skel.joint_names[skel.parents[j]])}")
        out.append(f"offset = {_vec(skel.offsets[j])}")
        if not np.array_equal(skel.rest_rotations[j], np.eye(3)):
            out.append(f"rotation = {_mat(skel.rest_rotations[j])}")
        out.append(f"mass = {_num(skel.masses[j])}")
        out.append(f"com = {_vec(skel.coms[j])}")
        inertia = skel.inertias[j]
        if np.array_equal(inertia, np.diag(np.diag(inertia))):
            out.append(f"inertia_diag = {_vec(np.diag(inertia))}")
        else:
            out.append(f"inertia = {_mat(inertia)}")
        dofs = list(skel.joint_dofs(j))
        if dofs:
            out.append("dofs = [")
            out.extend(f"  {_dof(skel, k)}," for k in dofs)
            out.append("]")
        out.append("")

    for s, sname in enumerate(skel.site_names):
        out.append("[[sites]]")
        out.append(f"name = {_str(sname)}")
        out.append(f"joint = {_str(skel.joint_names[skel.site_joint[s]])}")
        out.append(f"offset = {_vec(skel.site_offsets[s])}")
        if not np.array_equal(skel.site_rotations[s], np.eye(3)):
            out.append(f"rotation = {_mat(skel.site_rotations[s])}")
        out.append("")

    if meta:
        _table(out, ["meta"], meta)
    return "\n".join(out).rstrip("\n") + "\n"


def _dof(skel: Skeleton, k: int) -> str:
    is_rot = skel.dof_type[k] == ROTATION
    axis = skel.dof_axis[k]
    items = [f"name = {_str(skel.dof_names[k])}"]
    kind = None
    for i, a in enumerate("xyz"):
        if axis[i] in (1.0, -1.0) and np.count_nonzero(axis) == 1:
            kind = ("-" if axis[i] < 0 else "") + ("r" if is_rot else "t") + a
    if kind is None:
        items.append(f"kind = {_str('r' if is_rot else 't')}")
        items.append(f"axis = {_vec(axis)}")
    else:
        items.append(f"kind = {_str(kind)}")
    lo, hi, rest = skel.lower[k], skel.upper[k], skel.rest_q[k]
    if is_rot:
        if np.isfinite(lo):
            items.append(f"lower_deg = {_deg(lo)}")
        if np.isfinite(hi):
            items.append(f"upper_deg = {_deg(hi)}")
        if rest != 0.0:
            items.append(f"rest_deg = {_deg(rest)}")
    else:
        if np.isfinite(lo):
            items.append(f"lower = {_num(lo)}")
        if np.isfinite(hi):
            items.append(f"upper = {_num(hi)}")
        if rest != 0.0:
            items.append(f"rest = {_num(rest)}")
    return "{ " + ", ".join(items) + " }"


def _deg(rad: float) -> str:
    """Degrees for the file: the shortest decimal whose conversion back gives ``rad`` exactly
    when one with at most 9 decimals exists (45.0 rather than 45.00000000000001)."""
    deg = float(np.degrees(rad))
    for nd in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9):
        cand = round(deg, nd)
        if float(np.radians(cand)) == float(rad):
            return _num(cand)
    return _num(deg)








