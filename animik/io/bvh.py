"""Read and write Biovision Hierarchy (BVH) motion files.

Conventions (the file side of the Y-up ↔ Z-up boundary, see the architecture guide):

* **Frames.** BVH is Y-up. The ROOT joint gets the rest rotation ``Rx(+90°)``
  (``world_from_bvh``: BVH ``+y`` → world ``+z``, BVH ``+z`` → world ``-y``) and the root
  offset ``Rx90 @ OFFSET * scale``. Every other joint keeps its OFFSET, its channel axes and
  its End Sites in the BVH frame with an identity rest rotation, so the world positions are
  the BVH positions rotated into Z-up and everything below the root is stored exactly as in
  the file.
* **Z-up files.** Blender's exporter writes Z-up BVH. ``read_bvh(up="z")`` takes the file
  frame as animik's world frame (identity root rest rotation); ``up="auto"`` (default) picks
  Y or Z by :func:`detect_up`; the choice is ``meta["bvh_up"]``. The figure height of the unit
  detection is then measured along that axis.
* **Channels → DoFs.** Each channel becomes one DoF of its joint, in file order:
  ``Xrotation`` → kind ``"rx"`` named ``f"{joint}_rx"``, ``Yposition`` → ``"ty"`` named
  ``f"{joint}_ty"``... (a repeated rotation channel gets a numeric suffix, ``_rx2``). Limits
  are ``±inf``; rotations rest at 0. ``CHANNELS 3 Zrotation Xrotation Yrotation`` composes
  ``Rz @ Rx @ Ry``, exactly the skeleton's DoF semantics.
* **Position channels replace the OFFSET** (the usual reading of the format, confirmed on
  the Bandai Namco and PyMO files): the replaced OFFSET component is set to 0 and becomes
  the translation DoF's ``rest`` value, so ``skeleton.rest_q`` reproduces the OFFSET. The
  format applies a joint's translation before its rotation whatever the channel order, so
  if a file lists a position channel after a rotation channel the translation DoFs are moved
  to the front of that joint (``motion.q`` columns then follow the DoFs, not the file).
  A position channel listed twice in one joint is an error (the value would be ambiguous).
* **End Sites** become sites named ``f"{parent_joint}_end"`` (``_end2``... if a joint has
  several); their names are listed in ``skeleton.meta["bvh_end_sites"]``.
* **Units.** ``q`` and offsets are metres and radians. The file unit is ``unit`` (a name of
  :data:`UNITS` or metres per file unit), or, by default, detected from the figure's height:
  the vertical (BVH ``y``, or ``z`` for a Z-up file) extent of all joints and End Sites, the
  larger of the rest pose
  and the first frame, is converted with each candidate unit and the one closest to 1.7 m
  in log ratio wins. The choice is stored as ``meta["bvh_unit"]`` and
  ``meta["bvh_unit_scale"]`` in both ``Motion.meta`` and ``Skeleton.meta``, with
  ``meta["source"]``.
* **Strictness.** A malformed file raises :class:`~animik.errors.BVHParseError` carrying the
  1-based line number and what was expected, never another exception type. Blank lines are
  ignored everywhere. The number of frame lines must equal ``Frames:`` exactly: fewer
  (truncated file) *and more* are errors, because a wrong count means the file is damaged
  or the exporter is buggy, and silently dropping or inventing frames would lose data.
  ``Frames: 0`` gives an empty motion. Only one ROOT hierarchy is supported. The file must
  be UTF-8 text; any mix of CRLF / LF / CR line endings, tabs and spaces is accepted;
  keywords and channel names are case-insensitive; ``OFFSET`` and ``CHANNELS`` take the rest
  of their line; a joint name is the rest of its ``ROOT``/``JOINT`` line up to ``{``. The
  MOTION block is converted with numpy in blocks of lines straight into one preallocated
  ``(T, n_channels)`` array (memory ~5x the file size); a bad value is then located by line.
* **Limits.** At most :data:`MAX_FRAMES` (10⁷) frames, :data:`MAX_JOINTS` (10⁴) joints and
  :data:`MAX_JOINT_CHANNELS` (64) channels per joint; a file with no channels needs a (blank)
  line per frame. Beyond them: :class:`~animik.errors.BVHParseError`. Parsing is linear in the
  file size.

Writing (:func:`write_bvh`) by default gives every joint that rotates exactly 3 rotation
channels and a moving root 6 (3 position + 3 rotation), the form Blender's importer requires
(it imports nothing from a joint with 1 or 2 rotation channels): a joint's missing axes are
appended, in the order Z X Y, with value 0 (an identity factor at the end of the product), a
moving root's missing position channels carry its OFFSET, and rotations that repeat an axis
are replaced by the Z X Y angles of their product. The world motion is exactly the same; the
DoFs read back are the padded ones. With ``channels="compact"`` (one channel per DoF) writing
is the inverse of reading and lossless for files read here: read → write → read gives the same
names, offsets, ``q`` and fps (values are written with 15
significant digits by default, or as ``repr``, the shortest exact decimal, with
``precision=None``). Skeletons that did not come from BVH are written by conjugating
every joint frame by ``G = bvh_from_world @
rest_rotation[root]`` (``bvh_from_world = Rx(-90°)``): root OFFSET ``Rx(-90°) @ offset``,
other OFFSETs, DoF axes and End Sites ``G @ v``. BVH can only hold what that leaves as
principal-axis channels: a DoF axis that is not ``±X/±Y/±Z`` after ``G``, a rest rotation on a
non-root joint, a translation DoF after a rotation DoF of the same joint or two translations
on one axis raise :class:`~animik.errors.FileFormatError`. A ``-X`` axis is written as the
``X`` channel with negated values. Each leaf joint gets an ``End Site`` at its site listed in
``meta["bvh_end_sites"]``, else its first site, else ``0 0 0`` (except a leaf of a skeleton
read from BVH that had no End Site: it stays without one, so files round-trip exactly). End
Sites read from a file are written back where they were, also on non-leaf joints; other sites
on non-leaf joints and all site rotations are dropped, BVH cannot hold them. Reading such a
file back gives the same joints and world positions, but DoF names ``f"{joint}_rx"``...,
End Sites named ``f"{joint}_end"`` and no masses (BVH stores none).
"""

from __future__ import annotations

import errno
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import BVHParseError, FileFormatError, OptionError, SkeletonError, UnknownNameError, names_hint
from ..motion import Motion
from ..rotations import euler_from_matrix, matrix_from_euler, matrix_from_principal_axis
from ..skeleton import REFERENCE_BMI, ROTATION, Dof, Joint, Site, Skeleton, mass_from_height, with_body_mass
from ._atomic import atomic_write

__all__ = ["BVH_FROM_WORLD", "CHANNEL_FORMS", "UNITS", "UP_AXES", "WORLD_FROM_BVH",
           "check_bvh_skeleton", "detect_unit", "detect_up", "dumps_bvh", "loads_bvh", "read_bvh",
           "resolve_unit", "write_bvh"]

#: Metres per file unit of the units :func:`read_bvh` knows (and detects).
UNITS: Mapping[str, float] = {
    "mm": 0.001,
    "cm": 0.01,
    "inch": 0.0254,
    "cmu": 0.0254 / 0.45,  # CMU ASF units: 1/0.45 inch
    "m": 1.0,
}
_UNIT_ALIASES = {
    "millimetre": "mm", "millimeter": "mm", "millimetres": "mm", "millimeters": "mm",
    "centimetre": "cm", "centimeter": "cm", "centimetres": "cm", "centimeters": "cm",
    "in": "inch", "inches": "inch",
    "asf": "cmu", "cmu_asf": "cmu",
    "metre": "m", "meter": "m", "metres": "m", "meters": "m",
}
_HUMAN_HEIGHT_M = 1.7

#: world_from_bvh: BVH +y -> world +z, BVH +z -> world -y (BVH is Y up, animik Z up).
WORLD_FROM_BVH = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
#: bvh_from_world, the inverse.
BVH_FROM_WORLD = WORLD_FROM_BVH.T.copy()

_CHANNELS = {
    f"{axis}{kind}": (("r" if kind == "rotation" else "t") + axis.lower())
    for axis in "XYZ" for kind in ("rotation", "position")
}
_CHANNELS_UPPER = {k.upper(): v for k, v in _CHANNELS.items()}
_CHANNEL_OF_KIND = {v: k for k, v in _CHANNELS.items()}
_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}

_TOKEN_RE = re.compile(r"[{}]|[^\s{}]+")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_COUNT_RE = re.compile(r"[0-9]{1,15}")
#: Reader limits (a file beyond them raises :class:`BVHParseError`): frames, joints, channels
#: of one joint (6 in any real file; repeated rotation channels are legal, so a few more).
MAX_FRAMES = 10_000_000
MAX_JOINTS = 10_000
MAX_JOINT_CHANNELS = 64
_BLOCK_LINES = 4096
_NOT_NUMBER_CHAR_RE = re.compile(r"[^0-9eE+\-.\s]")
_FRAMES_RE = re.compile(r"frames\s*:\s*(.*)", re.IGNORECASE)
_FRAME_TIME_RE = re.compile(r"frame\s+time\s*:\s*(.*)", re.IGNORECASE)


# ---------------------------------------------------------------------------- parsed file
@dataclass
class _BVHJoint:
    name: str
    parent: int
    line: int
    offset: np.ndarray | None = None  # file units, BVH frame
    channels: list[str] = field(default_factory=list)  # kinds "rx", "ty"... in file order
    channels_line: int | None = None
    end_sites: list[np.ndarray] = field(default_factory=list)


@dataclass
class _BVHFile:
    joints: list[_BVHJoint]
    frame_time: float
    data: np.ndarray  # (T, n_channels) raw file values, file column order


class _Tokens:
    """Hierarchy tokens with their 1-based line numbers, read lazily line by line."""

    def __init__(self, lines: list[str], path: str | None):
        self.lines = lines
        self.path = path
        self.next_line = 0  # index of the next line to tokenise
        self.buf: list[tuple[str, int]] = []
        self.pos = 0

    def error(self, message: str, line: int | None) -> BVHParseError:
        return BVHParseError(message, line=line, path=self.path)

    @property
    def eof_line(self) -> int:
        return max(len(self.lines), 1)

    def _fill(self) -> bool:
        while self.pos >= len(self.buf):
            if self.next_line >= len(self.lines):
                return False
            ln = self.next_line + 1
            self.buf = [(t, ln) for t in _TOKEN_RE.findall(self.lines[self.next_line])]
            self.pos = 0
            self.next_line += 1
        return True

    def peek(self) -> tuple[str | None, int]:
        if not self._fill():
            return None, self.eof_line
        return self.buf[self.pos]

    def take(self) -> tuple[str | None, int]:
        tok = self.peek()
        if tok[0] is not None:
            self.pos += 1
        return tok

    def rest_of_line(self, line: int) -> list[str]:
        """The remaining tokens of ``line`` (already buffered, as the current token was on it)."""
        out = []
        while self.pos < len(self.buf) and self.buf[self.pos][1] == line:
            out.append(self.buf[self.pos][0])
            self.pos += 1
        return out

    def expect(self, word: str, what: str) -> int:
        tok, line = self.take()
        if tok is None or tok.upper() != word.upper():
            got = "end of file" if tok is None else repr(tok)
            raise self.error(f"expected {word!r} {what}, got {got}", line)
        return line


def _number(tok: str, line: int, what: str, toks: _Tokens) -> float:
    if not _NUMBER_RE.fullmatch(tok):
        raise toks.error(f"expected a number for {what}, got {tok!r}", line)
    v = float(tok)
    if not math.isfinite(v):
        raise toks.error(f"{what} out of range: {tok!r}", line)
    return v


def _offset(toks: _Tokens, line: int, what: str) -> np.ndarray:
    vals = toks.rest_of_line(line)
    if len(vals) != 3:
        raise toks.error(f"expected 3 numbers after OFFSET of {what}, got {len(vals)}", line)
    return np.array([_number(v, line, f"OFFSET of {what}", toks) for v in vals])


def _joint_name(toks: _Tokens, line: int, keyword: str) -> str:
    parts = []
    while True:
        tok, ln = toks.peek()
        if tok is None or ln != line or tok in "{}":
            break
        parts.append(tok)
        toks.take()
    if not parts:
        raise toks.error(f"expected a joint name after {keyword}", line)
    return " ".join(parts)


def _parse_hierarchy(toks: _Tokens) -> tuple[list[_BVHJoint], int]:
    """Parse ``HIERARCHY ... MOTION``; returns the joints and the index of the MOTION line."""
    tok, line = toks.take()
    if tok is None:
        raise toks.error("empty file: expected 'HIERARCHY'", 1)
    if tok.upper() != "HIERARCHY":
        raise toks.error(f"expected 'HIERARCHY' at the start of the file, got {tok!r}", line)
    tok, line = toks.take()
    if tok is None or tok.upper() != "ROOT":
        got = "end of file" if tok is None else repr(tok)
        raise toks.error(f"expected 'ROOT' after HIERARCHY, got {got}", line)

    joints: list[_BVHJoint] = []
    names: dict[str, int] = {}

    def open_joint(keyword: str, line: int, parent: int) -> int:
        name = _joint_name(toks, line, keyword)
        if name in names:
            raise toks.error(
                f"duplicate joint name {name!r} (first defined at line {joints[names[name]].line})",
                line,
            )
        toks.expect("{", f"after {keyword} {name}")
        if len(joints) >= MAX_JOINTS:
            raise toks.error(f"more than {MAX_JOINTS} joints (the reader's limit)", line)
        names[name] = len(joints)
        joints.append(_BVHJoint(name, parent, line))
        return len(joints) - 1

    stack = [open_joint("ROOT", line, -1)]
    while stack:
        jt = joints[stack[-1]]
        tok, line = toks.take()
        up = None if tok is None else tok.upper()
        if up == "OFFSET":
            if jt.offset is not None:
                raise toks.error(f"joint {jt.name!r} has a second OFFSET", line)
            jt.offset = _offset(toks, line, f"joint {jt.name!r}")
        elif up == "CHANNELS":
            if jt.channels_line is not None:
                raise toks.error(f"joint {jt.name!r} has a second CHANNELS line", line)
            jt.channels_line = line
            jt.channels = _channels(toks, line, jt.name)
        elif up == "JOINT":
            stack.append(open_joint("JOINT", line, stack[-1]))
        elif up == "END":
            site_tok, site_line = toks.take()
            if site_tok is None or site_tok.upper() != "SITE" or site_line != line:
                raise toks.error(f"expected 'End Site' in joint {jt.name!r}", line)
            toks.expect("{", "after End Site")
            tok, off_line = toks.take()
            if tok is None or tok.upper() != "OFFSET":
                got = "end of file" if tok is None else repr(tok)
                raise toks.error(f"expected OFFSET in End Site of {jt.name!r}, got {got}",
                                 off_line)
            jt.end_sites.append(_offset(toks, off_line, f"End Site of {jt.name!r}"))
            toks.expect("}", f"to close End Site of {jt.name!r}")
        elif up == "}":
            if jt.offset is None:
                raise toks.error(f"expected OFFSET in joint {jt.name!r} before '}}'", line)
            stack.pop()
        elif up in (None, "MOTION", "ROOT", "HIERARCHY"):
            got = "end of file" if tok is None else repr(tok)
            raise toks.error(
                f"unbalanced braces: expected '}}' to close joint {jt.name!r} "
                f"(opened at line {jt.line}), got {got}",
                line,
            )
        else:
            raise toks.error(
                f"unexpected {tok!r} in joint {jt.name!r}: expected OFFSET, CHANNELS, JOINT, "
                "End Site or '}'",
                line,
            )

    tok, line = toks.take()
    if tok is None:
        raise toks.error("expected 'MOTION' after the hierarchy, got end of file", line)
    up = tok.upper()
    if up == "}":
        raise toks.error("unbalanced braces: unexpected '}' after the ROOT joint closed", line)
    if up == "ROOT":
        raise toks.error("expected 'MOTION': only one ROOT hierarchy is supported", line)
    if up != "MOTION":
        raise toks.error(f"expected 'MOTION' after the hierarchy, got {tok!r}", line)
    extra = toks.rest_of_line(line)
    if extra:
        raise toks.error(f"expected nothing after MOTION on its line, got {extra[0]!r}", line)
    return joints, line - 1


def _channels(toks: _Tokens, line: int, joint: str) -> list[str]:
    vals = toks.rest_of_line(line)
    if not vals or not _COUNT_RE.fullmatch(vals[0]):
        got = repr(vals[0]) if vals else "nothing"
        raise toks.error(f"expected a channel count after CHANNELS of {joint!r}, got {got}", line)
    n = int(vals[0])
    if n > MAX_JOINT_CHANNELS:
        raise toks.error(f"CHANNELS of {joint!r} declares {n} channels (at most "
                         f"{MAX_JOINT_CHANNELS} per joint are read)", line)
    names = vals[1:]
    if len(names) != n:
        raise toks.error(
            f"CHANNELS of {joint!r} declares {n} channels but lists {len(names)}", line
        )
    kinds = []
    for nm in names:
        kind = _CHANNELS_UPPER.get(nm.upper())
        if kind is None:
            raise toks.error(
                f"unknown channel {nm!r} in joint {joint!r}; expected one of "
                f"{', '.join(_CHANNELS)}",
                line,
            )
        if kind[0] == "t" and kind in kinds:
            raise toks.error(f"joint {joint!r} lists channel {nm!r} twice", line)
        kinds.append(kind)
    return kinds


def _parse_motion(
    lines: list[str], start: int, n_channels: int, toks: _Tokens
) -> tuple[float, np.ndarray]:
    """Parse the ``Frames:`` / ``Frame Time:`` lines and the frame lines after line ``start``."""
    i = start + 1

    def next_nonblank(i: int) -> int:
        while i < len(lines) and not lines[i].strip():
            i += 1
        return i

    i = next_nonblank(i)
    if i >= len(lines):
        raise toks.error("expected 'Frames: <count>' after MOTION, got end of file", toks.eof_line)
    m = _FRAMES_RE.fullmatch(lines[i].strip())
    if not m:
        raise toks.error(f"expected 'Frames: <count>' after MOTION, got {lines[i].strip()!r}",
                         i + 1)
    if not _COUNT_RE.fullmatch(m.group(1)):
        raise toks.error(f"expected a non-negative integer after 'Frames:', got {m.group(1)!r}",
                         i + 1)
    n_frames = int(m.group(1))
    frames_line = i + 1
    i = next_nonblank(i + 1)
    if i >= len(lines):
        raise toks.error("expected 'Frame Time: <seconds>' after Frames, got end of file",
                         toks.eof_line)
    m = _FRAME_TIME_RE.fullmatch(lines[i].strip())
    if not m:
        raise toks.error(
            f"expected 'Frame Time: <seconds>' after Frames, got {lines[i].strip()!r}", i + 1
        )
    ft_text = m.group(1)
    frame_time = float(ft_text) if _NUMBER_RE.fullmatch(ft_text) else math.nan
    if not (math.isfinite(frame_time) and frame_time > 0 and math.isfinite(1.0 / frame_time)):
        raise toks.error(f"expected a positive number after 'Frame Time:', got {ft_text!r}",
                         i + 1)
    first = i + 1
    n_lines = len(lines) - first
    if n_frames > MAX_FRAMES:
        raise toks.error(f"'Frames: {n_frames}' exceeds the reader's limit of {MAX_FRAMES} "
                         "frames", frames_line)
    if n_channels == 0:
        # No channels: every frame line is empty, and blank lines are indistinguishable; a
        # frame still needs its (empty) line, which bounds the count by the file's size.
        bad = next((k for k in range(first, len(lines)) if lines[k] and not lines[k].isspace()),
                   None)
        if bad is not None:
            raise toks.error(f"expected 0 values per frame line (no channels), got "
                             f"{len(lines[bad].split())}", bad + 1)
        if n_frames > max(n_lines, 1):
            raise toks.error(f"'Frames: {n_frames}' but the file has only {n_lines} (empty) "
                             "frame lines after 'Frame Time'", frames_line)
        return frame_time, np.zeros((n_frames, 0))
    # Frame lines are read in blocks straight into one preallocated array: memory is the
    # array plus one block, not tokens of the whole section (was ~25x the file size).
    idx = [k for k in range(first, len(lines)) if lines[k] and not lines[k].isspace()]
    n_rows = min(len(idx), n_frames)
    data = np.empty((n_rows, n_channels))
    for r0 in range(0, n_rows, _BLOCK_LINES):
        block = idx[r0:min(r0 + _BLOCK_LINES, n_rows)]
        tokens: list[str] = []
        for r, k in enumerate(block, start=r0):
            row = lines[k].split()
            if len(row) != n_channels:
                raise toks.error(
                    f"expected {n_channels} values on frame line {r + 1} (one per channel), "
                    f"got {len(row)}",
                    k + 1,
                )
            tokens += row
        values = None
        if _NOT_NUMBER_CHAR_RE.search(" ".join(tokens)) is None:
            try:
                values = np.array(tokens, dtype=np.float64)
            except ValueError:
                values = None
        if values is None or not np.all(np.isfinite(values)):
            # Slow path, only for a bad file: find the first offending token and its line.
            for r, k in enumerate(block, start=r0):
                for c, tok in enumerate(lines[k].split()):
                    if not _NUMBER_RE.fullmatch(tok) or not math.isfinite(float(tok)):
                        raise toks.error(
                            f"expected a number for channel {c + 1} of frame {r + 1}, got {tok!r}",
                            k + 1,
                        )
            raise toks.error("unreadable frame values", block[0] + 1)  # pragma: no cover
        data[r0:r0 + len(block)] = values.reshape(len(block), n_channels)
    if len(idx) < n_frames:
        last = idx[-1] + 1 if idx else first
        raise toks.error(
            f"truncated motion: 'Frames: {n_frames}' but only {len(idx)} frame lines; "
            f"expected frame {len(idx) + 1} here",
            last + 1,
        )
    if len(idx) > n_frames:
        raise toks.error(
            f"expected {n_frames} frame lines ('Frames: {n_frames}'), found more",
            idx[n_frames] + 1,
        )
    return frame_time, data


def _parse(text: str, path: str | None) -> _BVHFile:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    toks = _Tokens(lines, path)
    joints, motion_idx = _parse_hierarchy(toks)
    n_channels = sum(len(j.channels) for j in joints)
    frame_time, data = _parse_motion(lines, motion_idx, n_channels, toks)
    return _BVHFile(joints, frame_time, data)


# ---------------------------------------------------------------------------- units
def resolve_unit(unit: str | float) -> tuple[str, float]:
    """``(name, metres per file unit)`` of a unit name (or alias: ``"in"``, ``"centimetre"``...)
    or a positive number of metres per unit (named ``"custom"`` unless it equals a known unit).

    The one unit table of animik (:data:`UNITS`); the CLI's ``--unit`` and batch outputs use it.

    Raises:
        UnknownNameError: an unknown unit name (the message lists :data:`UNITS`).
        FileFormatError: not a positive finite number.
    """
    if isinstance(unit, str):
        key = unit.strip().lower()
        key = _UNIT_ALIASES.get(key, key)
        if key not in UNITS:
            raise UnknownNameError(f"unknown BVH unit {unit!r}; valid names: {names_hint(UNITS)}")
        return key, UNITS[key]
    try:
        scale = float(unit)
    except (TypeError, ValueError):
        raise FileFormatError(
            f"unit must be a unit name {names_hint(UNITS)} or metres per file unit, got {unit!r}"
        ) from None
    if not (math.isfinite(scale) and scale > 0):
        raise FileFormatError(f"unit scale must be a positive number of metres, got {unit!r}")
    for name, s in UNITS.items():
        if math.isclose(scale, s, rel_tol=1e-12):
            return name, scale
    return "custom", scale


def detect_unit(height: float) -> tuple[str, float]:
    """The unit of :data:`UNITS` that makes a figure ``height`` file units tall closest to 1.7 m.

    Closeness is measured in log ratio. A non-positive or non-finite height gives ``"cm"``.

    Returns:
        ``(name, metres_per_unit)``.
    """
    if not (math.isfinite(height) and height > 0):
        return "cm", UNITS["cm"]
    name = min(UNITS, key=lambda u: abs(math.log(height * UNITS[u] / _HUMAN_HEIGHT_M)))
    return name, UNITS[name]


def _figure_points(joints: list[_BVHJoint], data: np.ndarray) -> list[np.ndarray]:
    """Positions ``(n, 3)`` (file units, BVH frame) of joints and End Sites: rest, then frame 0."""
    rows = [None] if len(data) == 0 else [None, data[0]]
    out = []
    with np.errstate(all="ignore"):
        for row in rows:
            pos = np.zeros((len(joints), 3))
            rot = np.zeros((len(joints), 3, 3))
            pts = []
            col = 0
            for j, jt in enumerate(joints):
                t = jt.offset.copy()
                r = np.eye(3)
                for kind in jt.channels:
                    if row is not None:
                        v = row[col]
                        a = _AXIS_INDEX[kind[1]]
                        if kind[0] == "t":
                            t[a] = v
                        else:
                            r = r @ matrix_from_principal_axis(kind[1], math.radians(v))
                    col += 1
                if jt.parent < 0:
                    pos[j], rot[j] = t, r
                else:
                    pos[j] = pos[jt.parent] + rot[jt.parent] @ t
                    rot[j] = rot[jt.parent] @ r
                pts.append(pos[j])
                pts.extend(pos[j] + rot[j] @ e for e in jt.end_sites)
            out.append(np.array(pts))
    return out


def _figure_height(points: list[np.ndarray], up: str = "y") -> float:
    """Extent, file units, along the file's up axis: the larger of rest and frame 0."""
    best = 0.0
    with np.errstate(all="ignore"):
        for pts in points:
            v = pts[:, _AXIS_INDEX[up]]
            h = float(v.max() - v.min())
            if math.isfinite(h):
                best = max(best, h)
    return best


def detect_up(points: np.ndarray | list[np.ndarray]) -> str:
    """The up axis (``"y"`` or ``"z"``) of a BVH file from its figure.

    Rule: a standing figure is taller than it is deep. The figure is every joint and End Site
    but the ROOT joint itself (some files' ROOT is a ground node far from the body); its extent
    along the file's Y and Z axes is summed over the rest pose and frame 0, as either may
    mislead alone (the Bandai Namco files' rest pose lays the bones along X: Y:Z is 1.3 there).
    Z is up only when that extent is :data:`UP_MARGIN` (2) times the Y one, else Y, the
    format's convention: animik's own files of arbitrary skeletons read back as written, and
    the shared humans' summed Y:Z ratio is 3.2–8.8, so they and their Z-up copies are far from
    the threshold; the rest pose alone must also span more along Z than Y (a figure flat at rest
    stays Y whatever frame 0 does). X is left out: Y-up and Z-up (Blender) files share it as
    the side axis, and
    a T-pose's arm span is about its height. Meant for bipeds; pass ``up`` for a figure longer
    than tall (quadrupeds, snakes).

    Args:
        points: ``(n, 3)`` positions in the file frame (file units), or a sequence of such
            arrays (poses, the rest pose first) whose extents are summed.
    """
    poses = [points] if isinstance(points, np.ndarray) else list(points)
    exts = []
    with np.errstate(all="ignore"):
        for pts in poses:
            exts.append(pts.max(axis=0) - pts.min(axis=0) if len(pts) else np.zeros(3))
    ext = np.sum(exts, axis=0) if exts else np.zeros(3)
    if not np.all(np.isfinite(ext)):
        return "y"
    # The rest pose (first) must not contradict: a flat figure (all bones in one horizontal
    # plane at rest, any pose later) stays Y.
    return "z" if ext[2] > UP_MARGIN * ext[1] and exts[0][2] > exts[0][1] else "y"


# ---------------------------------------------------------------------------- reading
def read_bvh(path: str | os.PathLike, unit: str | float | None = None, up: str = "auto") -> Motion:
    """Read a BVH file as a :class:`~animik.motion.Motion` in metres, radians, Z up.

    Args:
        path: the ``.bvh`` file.
        unit: length unit of the file: a name of :data:`UNITS` (``"m" "cm" "mm" "inch"
            "cmu"``) or metres per file unit; ``None`` detects it from the figure's height
            (see the module docstring).
        up: the file's up axis: ``"y"`` (the BVH convention), ``"z"`` (Blender's exporter) or
            ``"auto"`` (:func:`detect_up`). A Z-up file's frame is animik's world frame.

    Returns:
        A motion whose skeleton has the file's joints (ROOT and JOINTs in file order, End
        Sites as sites) and ``q`` ``(T, n_channels)`` in metres and radians, ``fps =
        1 / Frame Time``.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        BVHParseError: the file is malformed (the error carries the line number).
        UnknownNameError: ``unit`` is not a known unit name.
        FileFormatError: ``unit`` is not a positive number.
        OptionError: ``up`` is not ``"y"``, ``"z"`` or ``"auto"``.
    """
    src = os.fspath(path)
    p = Path(src)
    if unit is not None:
        resolve_unit(unit)  # a bad unit is reported before the file is read
    _check_up(up)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "BVH file not found", src) from None
    return loads_bvh(raw, unit=unit, source=src, name=p.stem or "bvh", up=up)


#: :func:`detect_up` calls a file Z-up when its figure spans this many times more along Z than Y.
UP_MARGIN = 2.0
#: The up-axis choices of :func:`read_bvh`.
UP_AXES = ("auto", "y", "z")


def _check_up(up: object) -> None:
    if up not in UP_AXES:
        raise OptionError(f"up must be one of {UP_AXES}, got {up!r}")


def loads_bvh(data: bytes | str, unit: str | float | None = None, source: str = "<bytes>",
              name: str = "bvh", up: str = "auto") -> Motion:
    """Read BVH file content (bytes or text) as a :class:`~animik.motion.Motion`.

    The same as :func:`read_bvh` without a file: for content received over a network or held
    in memory (batch retargeting ships target files as bytes).

    Args:
        data: the file content (UTF-8, a BOM is skipped) or its decoded text.
        unit: as in :func:`read_bvh`.
        source: names the content in error messages and ``skeleton.meta["source"]``.
        name: the skeleton's name (:func:`read_bvh` uses the file stem).
        up: as in :func:`read_bvh`.

    Raises:
        BVHParseError: the content is malformed (the error carries the line number).
        UnknownNameError, FileFormatError: a bad ``unit``. OptionError: a bad ``up``.
    """
    _check_up(up)
    if unit is not None:
        unit_name, scale = resolve_unit(unit)
    if isinstance(data, str):
        text = data
    else:
        raw = bytes(data)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            raise BVHParseError(
                f"not a text BVH file: invalid UTF-8 byte 0x{raw[e.start]:02x} (expected UTF-8 text)",
                line=line, path=source,
            ) from None
    bvh = _parse(text, source)
    points = _figure_points(bvh.joints, bvh.data) if (unit is None or up == "auto") else []
    if up == "auto":
        up = detect_up([pts[1 + len(bvh.joints[0].end_sites):] for pts in points])
    if unit is None:
        unit_name, scale = detect_unit(_figure_height(points, up))
    return _build_motion(bvh, scale, unit_name, source, name, up)


def _build_motion(bvh: _BVHFile, scale: float, unit_name: str, src: str, name: str,
                  up: str = "y") -> Motion:
    world_from_file = WORLD_FROM_BVH if up == "y" else np.eye(3)
    joint_specs = []
    site_specs = []
    site_names: set[str] = set()
    end_names = []
    columns = []  # file column of each DoF, in DoF order
    col = 0
    for jt in bvh.joints:
        # Translation before rotation, whatever the channel order (module docstring).
        order = sorted(range(len(jt.channels)), key=lambda i: jt.channels[i][0] != "t")
        offset = jt.offset * scale
        dofs = []
        seen: dict[str, int] = {}
        for i in order:
            kind = jt.channels[i]
            a = _AXIS_INDEX[kind[1]]
            seen[kind] = seen.get(kind, 0) + 1
            dof_name = f"{jt.name}_{kind}" + (str(seen[kind]) if seen[kind] > 1 else "")
            if kind[0] == "t":
                dofs.append(Dof(dof_name, kind, rest=float(offset[a])))
                offset[a] = 0.0
            else:
                dofs.append(Dof(dof_name, kind))
            columns.append(col + i)
        col += len(jt.channels)
        root = jt.parent < 0
        joint_specs.append(Joint(
            jt.name,
            None if root else bvh.joints[jt.parent].name,
            offset=tuple(world_from_file @ offset) if root else tuple(offset),
            dofs=dofs,
            rotation=world_from_file if root else None,
        ))
        for e in jt.end_sites:
            base = f"{jt.name}_end"
            site_name, k = base, 1
            while site_name in site_names:
                k += 1
                site_name = f"{base}{k}"
            site_names.add(site_name)
            end_names.append(site_name)
            site_specs.append(Site(site_name, jt.name, tuple(e * scale)))
    meta = {"source": src, "bvh_unit": unit_name, "bvh_unit_scale": scale, "bvh_up": up}
    try:
        with np.errstate(all="ignore"):
            skel = Skeleton.from_joints(
                name, joint_specs, site_specs, meta={**meta, "bvh_end_sites": tuple(end_names)}
            )
    except SkeletonError as e:
        raise BVHParseError(f"invalid skeleton: {e}", path=src) from None
    cols = np.array(columns, dtype=np.int64)
    # In place on the parsed array (the reader's own): one (T, n) array in memory, not five.
    identity = np.array_equal(cols, np.arange(bvh.data.shape[1]))
    q = bvh.data if identity or not len(cols) else bvh.data[:, cols]
    factor = np.where(skel.dof_type == ROTATION, np.pi / 180.0, scale)  # np.radians: x * pi/180
    with np.errstate(all="ignore"):
        q *= factor
    if not np.all(np.isfinite(q)):
        raise BVHParseError("frame values out of range after unit conversion", path=src)
    if len(q):
        skel = _body_mass_from_height(skel, q)
    return Motion(skel, q, 1.0 / bvh.frame_time,
                  meta={**meta, "bvh_frame_time": bvh.frame_time})


def _body_mass_from_height(skel: Skeleton, q: np.ndarray) -> Skeleton:
    """BVH files carry no masses: a person of the motion's standing height
    (:func:`animik.kinematics.standing_height` over the frames) weighs
    :func:`animik.skeleton.mass_from_height` (BMI 22: two people of the same height get the same
    mass whatever their rest pose or bone layout, issue 13 item 4.10), shared over the body
    segments by de Leva's tables where the joints' roles are found
    (:func:`animik.semantics.segment_mass.role_mass_properties`: trunk, head and arms ~60 %),
    else over bone-length cylinders (the old estimate; ``meta["mass_source"]`` says which and
    why)."""
    from ..kinematics import standing_height
    from ..semantics.segment_mass import RolesNotFound, role_mass_properties

    h = standing_height(skel, q)
    if not 0.05 < h < 100.0:
        return skel
    total = mass_from_height(h)
    head = f"estimated: {REFERENCE_BMI:g} kg/m^2 x standing height^2 ({h:.3f} m over the frames)"
    try:
        seg = role_mass_properties(skel, total, h)
    except RolesNotFound as e:
        return with_body_mass(skel, total, (
            f"{head}, shared over the segments as cylinders along the bones (radius 12% of "
            f"length): no de Leva segments ({e})"))
    return skel.replace(masses=seg.masses, coms=seg.coms, inertias=seg.inertias,
                        meta={**dict(skel.meta), "mass_source": (
                            f"{head}, shared over the body segments by the joints' roles (de Leva "
                            "1996 mass fractions, centres of mass and radii of gyration)")})


# ---------------------------------------------------------------------------- writing
@dataclass
class _OutJoint:
    name: str
    depth: int
    offset: np.ndarray  # file units, BVH frame
    channels: list[str]
    end_sites: list[np.ndarray]


def write_bvh(
    motion: Motion,
    path: str | os.PathLike,
    unit_scale: float | str | None = None,
    precision: int | None = 15,
    channels: str = "full",
) -> Path:
    """Write a motion as a BVH file (atomically: a failed write leaves ``path`` untouched).

    Args:
        motion: the motion; its skeleton must be BVH-representable (module docstring).
        path: destination file.
        unit_scale: metres per file unit (or a name of :data:`UNITS`). Default:
            ``motion.meta["bvh_unit_scale"]``, else ``skeleton.meta["bvh_unit_scale"]``,
            else 0.01 (centimetres).
        precision: significant digits of every number; ``None`` writes ``repr`` (the exact
            file-unit value; converting radians to degrees and back may still cost 1 ulp).
        channels: ``"full"`` (default): every joint that rotates gets exactly 3 rotation
            channels and a moving root 3 position + 3 rotation channels, the form Blender's
            importer needs (it accepts only 0 or 3 rotation channels per joint); the added
            channels are written as 0 after the joint's own, so the motion is exactly the
            same. ``"compact"``: one channel per DoF (reads back with the same DoFs).

    Returns:
        The destination path.

    Raises:
        FileFormatError: empty motion, a skeleton BVH cannot represent (non-principal DoF
            axis, rest rotation below the root, translation after rotation in a joint,
            duplicate translation channel, joint name with braces or odd whitespace; with
            ``channels="full"``, a joint whose rotations repeat an axis or number more than 3).
        OptionError: ``channels`` is neither ``"full"`` nor ``"compact"``.
    """
    return atomic_write(path, dumps_bvh(motion, unit_scale, precision, channels))


#: The channel layouts :func:`write_bvh` writes.
CHANNEL_FORMS = ("full", "compact")


def dumps_bvh(motion: Motion, unit_scale: float | str | None = None, precision: int | None = 15,
              channels: str = "full") -> bytes:
    """The BVH file content :func:`write_bvh` writes, as UTF-8 bytes (same arguments, errors).

    Returns:
        The file content; :func:`loads_bvh` reads it back.
    """
    skel = motion.skeleton
    if channels not in CHANNEL_FORMS:
        raise OptionError(f"channels must be one of {CHANNEL_FORMS}, got {channels!r}")
    if motion.n_frames == 0:
        raise FileFormatError("cannot write an empty motion (0 frames) to BVH")
    if unit_scale is None:
        unit_scale = motion.meta.get("bvh_unit_scale", skel.meta.get("bvh_unit_scale", 0.01))
    _, scale = resolve_unit(unit_scale)
    if precision is None:
        fmt_one = repr
    else:
        if int(precision) < 1:
            raise FileFormatError(f"precision must be a positive integer, got {precision!r}")
        spec = f"%.{int(precision)}g"

        def fmt_one(x: float) -> str:
            return spec % x

    with np.errstate(all="ignore"):
        out_joints, columns = _bvh_layout(skel, motion.q, scale, full=channels == "full")
    finite = np.all(np.isfinite(columns)) and all(
        np.all(np.isfinite(oj.offset)) and all(np.all(np.isfinite(e)) for e in oj.end_sites)
        for oj in out_joints)
    if not finite:
        # A unit far too small for the figure (1e-320 m) overflows: never write an unreadable file.
        raise FileFormatError(f"unit {unit_scale!r} ({scale:g} m per file unit) makes the "
                              "offsets or positions of the file infinite; use a larger unit")
    lines = ["HIERARCHY"]
    for j, oj in enumerate(out_joints):
        ind = "\t" * oj.depth
        lines.append(f"{ind}{'ROOT' if j == 0 else 'JOINT'} {oj.name}")
        lines.append(f"{ind}{{")
        lines.append(f"{ind}\tOFFSET {' '.join(fmt_one(float(v)) for v in oj.offset)}")
        if oj.channels:
            lines.append(f"{ind}\tCHANNELS {len(oj.channels)} {' '.join(oj.channels)}")
        for e in oj.end_sites:
            lines += [f"{ind}\tEnd Site", f"{ind}\t{{",
                      f"{ind}\t\tOFFSET {' '.join(fmt_one(float(v)) for v in e)}", f"{ind}\t}}"]
        nxt = out_joints[j + 1].depth if j + 1 < len(out_joints) else 0
        for d in range(oj.depth, nxt - 1, -1):
            lines.append("\t" * d + "}")
    lines.append("MOTION")
    lines.append(f"Frames: {motion.n_frames}")
    lines.append(f"Frame Time: {fmt_one(1.0 / motion.fps)}")
    if columns.shape[1]:
        if precision is None:
            lines.extend(" ".join(map(repr, row)) for row in columns.tolist())
        else:
            row_fmt = " ".join([spec] * columns.shape[1])
            lines.extend(row_fmt % tuple(row) for row in columns.tolist())
    else:
        lines.extend("" for _ in range(motion.n_frames))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _pad_channels(name: str, root: bool, channels: list[str], cols: list[np.ndarray],
                  offset: np.ndarray, replaced: dict[int, float], scale: float, n: int) -> None:
    """Complete one joint's channels in place to Blender's form (0 or 3 rotations, root 6).

    Missing rotation axes go after the joint's own rotations with value 0 (an identity factor
    at the end of the product: the rotation is unchanged); a root's missing position axes go
    after its positions with the OFFSET component as value (position channels replace it).
    Rotations that repeat an axis (``rx ry rx``) or number more than 3 are replaced by the
    ``Zrotation Xrotation Yrotation`` angles of their product (same rotation to ~1e-15).
    """
    n_pos = sum(c.endswith("position") for c in channels)
    rot_axes = [c[0].lower() for c in channels if c.endswith("rotation")]
    if len(set(rot_axes)) != len(rot_axes) or len(rot_axes) > 3:
        angles = np.radians(np.stack(cols[n_pos:], axis=-1))
        r = matrix_from_euler(angles, "".join(rot_axes))
        zxy = np.degrees(euler_from_matrix(r, "zxy"))
        del channels[n_pos:], cols[n_pos:]
        channels.extend(_CHANNEL_OF_KIND["r" + a] for a in "zxy")
        cols.extend(zxy[:, i] for i in range(3))
        rot_axes = list("zxy")
    if root:
        for ax, letter in enumerate("xyz"):
            if ax not in replaced:
                replaced[ax] = offset[ax]
                channels.insert(n_pos, _CHANNEL_OF_KIND["t" + letter])
                cols.insert(n_pos, np.full(n, offset[ax] / scale))
                n_pos += 1
    if rot_axes or root:
        for letter in "zxy":
            if letter not in rot_axes:
                channels.append(_CHANNEL_OF_KIND["r" + letter])
                cols.append(np.zeros(n))


def check_bvh_skeleton(skel: Skeleton) -> None:
    """Raise :class:`FileFormatError` (saying why) if :func:`write_bvh` cannot hold ``skel``.

    :func:`animik.io.bvh_compat.bvh_compatible` turns any motion into one that passes.
    """
    _bvh_layout(skel, skel.rest_q[None], 0.01)


def _bvh_layout(skel: Skeleton, q: np.ndarray, scale: float, full: bool = False
                ) -> tuple[list[_OutJoint], np.ndarray]:
    """Joint records in file units and the ``(T, n_channels)`` channel values.

    ``full``: pad every rotating joint to 3 rotation channels and a moving root to 6 channels
    (see :func:`write_bvh`); the padding values are 0 (identity) or the OFFSET component.
    """
    g = BVH_FROM_WORLD @ skel.rest_rotations[0]
    from_bvh = "bvh_end_sites" in skel.meta
    end_listed = set(skel.meta.get("bvh_end_sites", ()))
    sites_of: list[list[int]] = [[] for _ in range(skel.n_joints)]
    for s, j in enumerate(skel.site_joint):
        sites_of[int(j)].append(s)
    depth = np.zeros(skel.n_joints, dtype=int)
    recs: list[_OutJoint] = []
    cols_of: list[list[np.ndarray]] = []
    for j, name in enumerate(skel.joint_names):
        cols: list[np.ndarray] = []
        cols_of.append(cols)
        if not name or name != " ".join(name.split()) or "{" in name or "}" in name:
            raise FileFormatError(
                f"joint name {name!r} cannot be written to BVH (empty, braces, or whitespace "
                "other than single inner spaces)"
            )
        p = int(skel.parents[j])
        if p >= 0:
            depth[j] = depth[p] + 1
            if np.max(np.abs(skel.rest_rotations[j] - np.eye(3))) > 1e-9:
                raise FileFormatError(
                    f"joint {name!r} has a non-identity rest rotation; BVH can only hold a rest "
                    "rotation on the root joint"
                )
        offset = (BVH_FROM_WORLD if p < 0 else g) @ skel.offsets[j]  # metres, BVH frame
        channels = []
        replaced: dict[int, float] = {}
        seen_rotation = False
        for k in skel.joint_dofs(j):
            a = g @ skel.dof_axis[k]
            ax = int(np.argmax(np.abs(a)))
            if abs(abs(a[ax]) - 1.0) > 1e-9:
                raise FileFormatError(
                    f"DoF {skel.dof_names[k]!r} of joint {name!r}: its axis "
                    f"{np.round(skel.dof_axis[k], 6).tolist()} is {np.round(a, 6).tolist()} in "
                    "the BVH frame; BVH channels need a principal axis (±X, ±Y or ±Z)"
                )
            sign = 1.0 if a[ax] > 0 else -1.0
            letter = "xyz"[ax]
            if skel.dof_type[k] == ROTATION:
                seen_rotation = True
                channels.append(_CHANNEL_OF_KIND["r" + letter])
                cols.append(np.degrees(sign * q[:, k]))
            else:
                if seen_rotation:
                    raise FileFormatError(
                        f"DoF {skel.dof_names[k]!r} of joint {name!r}: a translation after a "
                        "rotation of the same joint cannot be written to BVH (BVH translates "
                        "first)"
                    )
                if ax in replaced:
                    raise FileFormatError(
                        f"DoF {skel.dof_names[k]!r} of joint {name!r}: a second translation "
                        f"along BVH {letter.upper()} (one position channel per axis)"
                    )
                # Position channels replace the OFFSET component: fold it into the values.
                replaced[ax] = offset[ax] + sign * skel.rest_q[k]
                channels.append(_CHANNEL_OF_KIND["t" + letter])
                cols.append((offset[ax] + sign * q[:, k]) / scale)
        if full and channels:
            _pad_channels(name, p < 0, channels, cols, offset, replaced, scale, q.shape[0])
        file_offset = offset.copy()
        for ax, v in replaced.items():
            file_offset[ax] = v
        listed = [s for s in sites_of[j] if skel.site_names[s] in end_listed]
        if listed:
            ends = listed
        elif not skel.children[j]:
            # A leaf of a skeleton read from BVH that had no End Site keeps having none.
            ends = sites_of[j][:1] or ([] if from_bvh else [None])
        else:
            ends = []
        end_sites = [np.zeros(3) if s is None else g @ skel.site_offsets[s] / scale for s in ends]
        recs.append(_OutJoint(name, int(depth[j]), file_offset / scale, channels, end_sites))
    # Depth-first order (the nesting of the file); a Skeleton built by from_joints already is.
    order, stack = [], [0]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(skel.children[j]))
    cols = [c for j in order for c in cols_of[j]]
    data = np.stack(cols, axis=1) if cols else np.zeros((q.shape[0], 0))
    return [recs[j] for j in order], data
