"""Helpers shared by the URDF and MJCF exporters (private).

Both formats share animik's world convention (right-handed, Z up, SI units), so nothing here
converts axes or units; what is shared is number formatting, name checks, precise
matrix -> rpy conversion and the stand-in for infinite limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from ..errors import FileFormatError
from ..skeleton import Skeleton

#: Stand-in for an infinite limit where a format needs a finite number (URDF ``revolute`` /
#: ``prismatic`` limits, one-sided MJCF ranges): ±1e4 rad, or ±1e4 m (10 km), far beyond any pose.
UNLIMITED = 1.0e4

# Characters allowed in an XML 1.0 document (names are written as attribute values).
_XML_INVALID = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def fmt(x: float) -> str:
    """Shortest text that reads back as exactly the same float64 (``repr``)."""
    v = float(x)
    if not np.isfinite(v):
        raise FileFormatError(f"cannot write non-finite number {v!r}")
    return repr(v + 0.0)  # + 0.0 turns -0.0 into 0.0


def fmt_vec(v: Iterable[float]) -> str:
    """Space-separated :func:`fmt` of every element."""
    return " ".join(fmt(x) for x in v)


def check_names(skel: Skeleton, fmt_name: str) -> None:
    """Raise :class:`FileFormatError` unless every name can be written as an XML attribute.

    ``<``, ``&``, quotes and ``:`` are fine (escaped on output); empty names and characters that
    XML 1.0 forbids (control characters other than tab / newline / carriage return) are not.
    """
    groups = (("skeleton", (skel.name,)), ("joint", skel.joint_names),
              ("DoF", skel.dof_names), ("site", skel.site_names))
    for kind, names in groups:
        for nm in names:
            if not nm:
                raise FileFormatError(f"cannot write {fmt_name}: empty {kind} name")
            bad = _XML_INVALID.search(nm)
            if bad:
                raise FileFormatError(
                    f"cannot write {fmt_name}: {kind} name {nm!r} contains the character "
                    f"{bad.group()!r}, which XML 1.0 does not allow"
                )


def unique_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... if taken; the result is added to ``taken``."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def finite_limits(lower: float, upper: float) -> tuple[float, float]:
    """Limits with ``±inf`` replaced by ``∓/±`` :data:`UNLIMITED` (finite ones kept)."""
    lo = float(lower) if np.isfinite(lower) else -UNLIMITED
    hi = float(upper) if np.isfinite(upper) else UNLIMITED
    return min(lo, hi), max(lo, hi)


def nearest_rotation(r: np.ndarray) -> np.ndarray:
    """The rotation matrix nearest to ``r`` ``(3, 3)`` (polar decomposition by SVD).

    Skeleton rotations are validated only to 1e-6; the formats store proper rotations.
    """
    r = np.asarray(r, dtype=float)
    if np.max(np.abs(r @ r.T - np.eye(3))) < 1e-14:
        return r
    u, _, vt = np.linalg.svd(r)
    out = u @ vt
    if np.linalg.det(out) < 0:
        u[:, -1] = -u[:, -1]
        out = u @ vt
    return out


def matrix_to_rpy(r: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw ``(3,)`` of a rotation ``(3, 3)``: ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    Reproduces ``R`` to machine precision everywhere, gimbal lock included: pitch comes from
    ``atan2`` (not ``arcsin``, which loses half the digits near ±pi/2), and roll is read from
    the residual ``Ry(pitch)^T Rz(yaw)^T R``, so it absorbs the error of a yaw computed from
    tiny matrix entries near the lock.
    """
    r = nearest_rotation(r)
    pitch = np.arctan2(-r[2, 0], np.hypot(r[0, 0], r[1, 0]))
    yaw = np.arctan2(r[1, 0], r[0, 0])
    cy, sy, cp, sp = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    m = ry.T @ rz.T @ r
    roll = np.arctan2(m[2, 1] - m[1, 2], m[1, 1] + m[2, 2])
    return np.array([roll, pitch, yaw])


def symmetric(inertia: np.ndarray) -> np.ndarray:
    """``(I + I^T) / 2`` of a ``(3, 3)`` inertia."""
    inertia = np.asarray(inertia, dtype=float)
    return 0.5 * (inertia + inertia.T)


def bone_ends(skel: Skeleton, j: int) -> list[np.ndarray]:
    """End points ``(3,)`` of the bones drawn from joint ``j``: its children's offsets, or its
    sites' offsets on a leaf; zero-length bones left out."""
    ends = [skel.offsets[c] for c in skel.children[j]]
    if not ends:
        ends = [skel.site_offsets[s] for s in np.flatnonzero(skel.site_joint == j)]
    return [np.asarray(e, dtype=float) for e in ends if np.linalg.norm(e) > 1e-9]
