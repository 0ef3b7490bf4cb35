"""URDF reader: a robot's kinematic tree, limits, masses and meshes.

Reads ``<link>`` (``<inertial>`` with ``origin``, ``mass``, ``inertia``; ``<visual>`` meshes with
``scale``) and ``<joint>`` (``revolute``, ``continuous``, ``prismatic``, ``fixed``, ``floating``;
``origin xyz rpy``, ``axis``, ``limit lower upper``) into :mod:`animik.io.robot_model`'s
description, built the way pinocchio's ``buildModelFromUrdf`` and MuJoCo's URDF compiler build it:

* The root is the one link that is no joint's child. With ``floating=True`` (the default for
  :func:`animik.load_rig`: a humanoid needs to move) the root gets a free joint named
  ``floating_base_joint`` — pinocchio's ``JointModelFreeFlyer`` root — unless the file has a
  ``floating`` joint of its own; with ``floating=False`` it is welded to the world, as MuJoCo
  loads a URDF.
* ``fixed`` joints are folded into the parent link (see :mod:`animik.io.robot_model`); the
  folded link's frame becomes a site named by the link.
* Children of a link are visited in the order of their joints' names (urdfdom keeps joints in a
  sorted map, and pinocchio builds the tree depth-first from it), so the DoF order is
  pinocchio's.
* ``continuous`` joints are unlimited hinges (pinocchio stores them as ``cos, sin``; animik's
  qpos holds the angle, as MuJoCo's).

Bad input: malformed XML, a link that is the child of two joints (a closed loop), several
roots, unknown links, ``planar`` joints raise :class:`RobotFileError`. ``<mimic>`` is ignored
(the mimicking joint moves freely) and warned about; mesh files that cannot be found (including
``package://`` paths no folder resolves) are dropped from the drawing and warned about in
``skeleton.meta["warnings"]``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..rotations import matrix_from_euler
from ..skeleton import Skeleton
from .robot_model import (
    RobotBody,
    RobotDescription,
    RobotFileError,
    RobotGeom,
    RobotJoint,
    resolve_mesh_path,
    robot_skeleton,
)

__all__ = ["loads_urdf_robot", "read_urdf_robot", "parse_urdf", "RobotFileError"]

FREE_JOINT_NAME = "floating_base_joint"


def _floats(text: str | None, n: int, what: str, source: str, default: float = 0.0) -> np.ndarray:
    if text is None:
        return np.full(n, default)
    try:
        v = np.array([float(x) for x in text.split()], dtype=float)
    except ValueError:
        raise RobotFileError(f"{source}: {what} must be numbers, got {text!r}") from None
    if v.size != n or not np.all(np.isfinite(v)):
        raise RobotFileError(f"{source}: {what} must be {n} finite numbers, got {text!r}")
    return v


def _origin(el: ET.Element | None, what: str, source: str) -> tuple[np.ndarray, np.ndarray]:
    """``(rotation (3, 3), position (3,))`` of an ``<origin xyz rpy>`` child (identity if none)."""
    o = el.find("origin") if el is not None else None
    if o is None:
        return np.eye(3), np.zeros(3)
    xyz = _floats(o.get("xyz"), 3, f"{what} origin xyz", source)
    rpy = _floats(o.get("rpy"), 3, f"{what} origin rpy", source)
    # URDF: R = Rz(yaw) Ry(pitch) Rx(roll)
    return matrix_from_euler(rpy[::-1], "zyx"), xyz


def parse_urdf(data: bytes, source: str = "<urdf>", folder: Path | None = None,
               floating: bool = True) -> RobotDescription:
    """Parse URDF bytes into a :class:`~animik.io.robot_model.RobotDescription`.

    Args:
        data: the file's bytes.
        source: file name for messages.
        folder: the file's folder (mesh paths), or None.
        floating: give the root link a free joint (see the module docstring).

    Raises:
        RobotFileError: see the module docstring.
    """
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise RobotFileError(f"{source}: malformed XML: {e}") from None
    if root.tag != "robot":
        raise RobotFileError(f"{source}: not a URDF file (root element <{root.tag}>, expected "
                             "<robot>)")
    warnings: list[str] = []
    links: dict[str, ET.Element] = {}
    for ln in root.findall("link"):
        name = ln.get("name")
        if not name:
            raise RobotFileError(f"{source}: a <link> without a name")
        if name in links:
            raise RobotFileError(f"{source}: duplicate link {name!r}")
        links[name] = ln
    if not links:
        raise RobotFileError(f"{source}: no <link>")
    joints: dict[str, ET.Element] = {}
    child_of: dict[str, str] = {}
    kids: dict[str, list[str]] = {n: [] for n in links}
    for jt in root.findall("joint"):
        name = jt.get("name")
        if not name:
            raise RobotFileError(f"{source}: a <joint> without a name")
        if name in joints:
            raise RobotFileError(f"{source}: duplicate joint {name!r}")
        p, c = jt.find("parent"), jt.find("child")
        pl, cl = (p.get("link") if p is not None else None), (c.get("link") if c is not None else None)
        for role, ln in (("parent", pl), ("child", cl)):
            if ln not in links:
                raise RobotFileError(f"{source}: joint {name!r} names unknown {role} link {ln!r}")
        if cl in child_of:
            raise RobotFileError(
                f"{source}: link {cl!r} is the child of joints {child_of[cl]!r} and {name!r}: a "
                "closed kinematic loop, which a URDF tree (and animik's skeleton) cannot hold")
        joints[name] = jt
        child_of[cl] = name
        kids[pl].append(name)
    roots = [n for n in links if n not in child_of]
    if len(roots) != 1:
        raise RobotFileError(f"{source}: a URDF tree needs exactly one root link (no joint's "
                             f"child), got {roots if roots else 'none (a closed loop)'}")
    bodies: list[RobotBody] = []
    # a file with its own floating joint (world link -> base) needs no free joint added
    floating = floating and not any(j.get("type") == "floating" for j in joints.values())

    def add(link: str, parent: str | None, joint: ET.Element | None) -> None:
        if len(bodies) > len(links):
            raise RobotFileError(f"{source}: the joints form a cycle")
        ln = links[link]
        if joint is not None and parent is None:  # the child of a "world" link: the root
            rot, pos = _origin(joint, f"joint {joint.get('name', '')!r}", source)
            body = RobotBody(link, None, pos, rot)
            if joint.get("type") == "fixed":
                if floating:
                    body.joints.append(RobotJoint(FREE_JOINT_NAME, "free"))
            else:
                _joint(joint, body, source, warnings)
        elif joint is None:
            rot, pos = np.eye(3), np.zeros(3)
            body = RobotBody(link, None, pos, rot)
            if floating:
                body.joints.append(RobotJoint(FREE_JOINT_NAME, "free"))
        else:
            jname = joint.get("name", "")
            rot, pos = _origin(joint, f"joint {jname!r}", source)
            body = RobotBody(link, parent, pos, rot)
            _joint(joint, body, source, warnings)
        _inertial(ln, body, source)
        _visuals(ln, body, source, folder, warnings)
        bodies.append(body)
        for jn in sorted(kids[link]):
            add(joints[jn].find("child").get("link"), link, joints[jn])

    root_link = roots[0]
    if root_link == "world" and len(kids["world"]) == 1 and links["world"].find("inertial") is None:
        # ROS convention: a massless "world" link is the world itself (MuJoCo, pinocchio)
        jt = joints[kids["world"][0]]
        add(jt.find("child").get("link"), None, jt)
    else:
        add(root_link, None, None)
    return RobotDescription(root.get("name") or "robot", "urdf", source, folder, bodies, warnings)


def _joint(el: ET.Element, body: RobotBody, source: str, warnings: list[str]) -> None:
    name = el.get("name", "")
    kind = el.get("type")
    what = f"joint {name!r}"
    if kind == "fixed":
        body.fold = True
        return
    if kind == "floating":
        body.joints.append(RobotJoint(name, "free"))
        return
    if kind not in ("revolute", "continuous", "prismatic"):
        raise RobotFileError(f"{source}: {what} has type {kind!r}; animik reads revolute, "
                             "continuous, prismatic, fixed and floating joints")
    ax = el.find("axis")
    axis = _floats(ax.get("xyz") if ax is not None else None, 3, f"{what} axis", source)
    if ax is None:
        axis = np.array([1.0, 0.0, 0.0])
    if np.linalg.norm(axis) < 1e-12:
        raise RobotFileError(f"{source}: {what} has a zero axis")
    jt = RobotJoint(name, "slide" if kind == "prismatic" else "hinge", axis=axis)
    lim = el.find("limit")
    if kind != "continuous":
        if lim is None:
            raise RobotFileError(f"{source}: {kind} {what} needs a <limit>")
        lo = _floats(lim.get("lower"), 1, f"{what} limit lower", source)[0]
        hi = _floats(lim.get("upper"), 1, f"{what} limit upper", source)[0]
        if lo > hi:
            raise RobotFileError(f"{source}: {what} limit lower {lo} > upper {hi}")
        if not (lo == 0.0 and hi == 0.0):  # urdfdom: both 0 = no limits given
            jt.lower, jt.upper = float(lo), float(hi)
    if el.find("mimic") is not None:
        warnings.append(f"{what}: <mimic> ignored (the joint moves on its own)")
    body.joints.append(jt)


def _inertial(ln: ET.Element, body: RobotBody, source: str) -> None:
    el = ln.find("inertial")
    if el is None:
        return
    what = f"link {body.name!r} inertial"
    rot, pos = _origin(el, what, source)
    m = el.find("mass")
    mass = _floats(m.get("value") if m is not None else None, 1, f"{what} mass", source)[0]
    i = el.find("inertia")
    if i is None:
        inertia = np.zeros((3, 3))
    else:
        g = {k: _floats(i.get(k), 1, f"{what} {k}", source)[0]
             for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        inertia = np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]],
                            [g["ixz"], g["iyz"], g["izz"]]])
    body.mass, body.com, body.inertia = float(mass), pos, rot @ inertia @ rot.T


def _visuals(ln: ET.Element, body: RobotBody, source: str, folder: Path | None,
             warnings: list[str]) -> None:
    for k, vis in enumerate(ln.findall("visual")):
        g = vis.find("geometry")
        mesh = g.find("mesh") if g is not None else None
        prim = _primitive(g, body.name, source) if g is not None and mesh is None else None
        if prim is not None:
            rot, pos = _origin(vis, f"link {body.name!r} visual", source)
            body.geoms.append(RobotGeom(vis.get("name") or f"{body.name}_visual{k}", None, pos,
                                        rot, rgba=_rgba(vis, source), kind=prim[0],
                                        size=prim[1]))
            continue
        if mesh is None or not mesh.get("filename"):
            continue
        fname = mesh.get("filename", "")
        path = resolve_mesh_path(fname, folder)
        if path is None:
            hint = (" (no folder above the file holds the package; set ROS_PACKAGE_PATH)"
                    if fname.startswith("package://") else "")
            warnings.append(f"mesh {fname!r} of link {body.name!r} not found{hint}: drawn "
                            "without it")
        rot, pos = _origin(vis, f"link {body.name!r} visual", source)
        scale = _floats(mesh.get("scale"), 3, f"link {body.name!r} mesh scale", source, 1.0)
        body.geoms.append(RobotGeom(vis.get("name") or f"{body.name}_visual{k}", path, pos, rot,
                                    scale, _rgba(vis, source)))


def _rgba(vis: ET.Element, source: str) -> tuple[float, float, float, float]:
    mat = vis.find("material")
    col = mat.find("color") if mat is not None else None
    if col is not None and col.get("rgba"):
        c = _floats(col.get("rgba"), 4, "material color", source)
        return tuple(float(x) for x in c)
    return (0.7, 0.7, 0.72, 1.0)


def _primitive(g: ET.Element, link: str, source: str) -> tuple[str, np.ndarray] | None:
    """``(kind, MJCF half sizes)`` of a URDF ``<box size>``, ``<sphere radius>``,
    ``<cylinder radius length>`` or ``<capsule radius length>`` (the length along z)."""
    what = f"link {link!r} visual"
    for kind in ("box", "sphere", "cylinder", "capsule"):
        e = g.find(kind)
        if e is None:
            continue
        if kind == "box":
            return kind, 0.5 * _floats(e.get("size"), 3, f"{what} box size", source)
        r = float(_floats(e.get("radius"), 1, f"{what} {kind} radius", source)[0])
        if kind == "sphere":
            return kind, np.array([r, 0.0, 0.0])
        length = float(_floats(e.get("length"), 1, f"{what} {kind} length", source)[0])
        return kind, np.array([r, 0.5 * length, 0.0])
    return None


def loads_urdf_robot(data: bytes, source: str = "<urdf>", folder: Path | None = None,
                     floating: bool = True) -> Skeleton:
    """A skeleton from URDF bytes (see the module docstring).

    Raises:
        RobotFileError: see :func:`parse_urdf`.
    """
    return robot_skeleton(parse_urdf(data, source, folder, floating))


def read_urdf_robot(path: str | Path, floating: bool = True) -> Skeleton:
    """A skeleton from a URDF file (mesh paths relative to its folder)."""
    p = Path(path)
    return loads_urdf_robot(p.read_bytes(), str(p), p.parent, floating)
