"""Exception hierarchy of animik.

Every error raised on bad user input derives from :class:`AnimikError`, so callers can catch one
type. Messages name the argument, what was expected and what was received.
"""

from __future__ import annotations


class AnimikError(Exception):
    """Base class of every animik error."""


class SkeletonError(AnimikError, ValueError):
    """An inconsistent skeleton definition (bad parent order, duplicate names, bad limits...)."""


class ShapeError(AnimikError, ValueError):
    """An array argument has the wrong shape (or cannot be read as an array of numbers)."""


class OptionError(AnimikError, ValueError):
    """A non-array argument or option has a bad value or type: an unknown mode or Euler order,
    a count that is not a positive integer, an object of the wrong kind. The message names the
    argument, what was expected and what was received."""


class ValueRangeError(AnimikError, ValueError):
    """Array values outside their domain: NaN / infinite entries, a zero quaternion, a matrix
    that is not a rotation. (The shape is right; the numbers are not.)"""


class UnknownNameError(AnimikError, KeyError):
    """A joint, DoF, site or rig name that does not exist. The message lists valid names."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain.
        return str(self.args[0]) if self.args else ""


class RigNotFoundError(UnknownNameError):
    """``load_rig`` got a name that is neither a built-in rig nor an existing file."""


class RigFileNotFoundError(RigNotFoundError, FileNotFoundError):
    """A rig given by a file path (with a readable suffix) whose file does not exist: both a
    rig not found and an operating-system error (the CLI exits with 4, as for any missing file)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class FileFormatError(AnimikError, ValueError):
    """A file could not be read or written in the requested format."""


class BVHParseError(FileFormatError):
    """A malformed BVH file.

    Attributes:
        line: 1-based line number where the problem was found (``None`` if not applicable).
        path: the file, when known.
    """

    def __init__(self, message: str, line: int | None = None, path: str | None = None):
        self.line = line
        self.path = path
        where = ""
        if path is not None:
            where += f"{path}"
        if line is not None:
            where += f"{':' if where else 'line '}{line}"
        super().__init__(f"{where}: {message}" if where else message)


def names_hint(names, limit: int = 12) -> str:
    """Format a list of valid names for an error message."""
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"[{shown}{more}]"
