"""A small TOML emitter shared by the rig and scene writers (stdlib ``tomllib`` only reads).

Floats are written with ``repr`` (shortest string that reads back to the same float), so
files round-trip exactly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import FileFormatError

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def num(x: Any) -> str:
    """A number (bools as TOML booleans, ±inf and nan spelled as TOML does)."""
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0.0:
        return "0.0"  # also for -0.0: keeps files tidy
    r = repr(x)
    if "e" in r and "." not in r.split("e")[0]:
        mant, exp = r.split("e")  # 1.0e-05 reads better next to the other floats than 1e-05
        r = f"{mant}.0e{exp}"
    return r


def vec(v: Any) -> str:
    """A flat array of numbers."""
    return "[" + ", ".join(num(float(x)) for x in v) + "]"


def mat(m: Any) -> str:
    """An array of arrays of numbers (a matrix, row by row)."""
    return "[" + ", ".join(vec(row) for row in m) + "]"


def string(s: str) -> str:
    """A basic string with TOML escapes."""
    return '"' + "".join(
        _ESCAPES.get(ch, ch if ord(ch) >= 0x20 and ord(ch) != 0x7F else f"\\u{ord(ch):04X}")
        for ch in s) + '"'


def key(k: Any) -> str:
    """A key, quoted unless it is bare."""
    if not isinstance(k, str):
        raise FileFormatError(f"TOML keys must be strings, got {k!r}")
    return k if _BARE_KEY.match(k) else string(k)


def inline(v: Any, where: str) -> str:
    """Any TOML-able value on one line; ``where`` names it in the error for other types."""
    if isinstance(v, np.ndarray):
        v = v.tolist()
    elif isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (bool, int, float)):
        return num(v)
    if isinstance(v, Mapping):
        if not v:
            return "{}"
        return "{ " + ", ".join(f"{key(k)} = {inline(x, f'{where}.{k}')}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(inline(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    raise FileFormatError(
        f"{where}: cannot store {type(v).__name__} value {v!r} in TOML "
        "(use str, bool, int, float, lists and tables)")


def table(out: list[str], path: list[str], tbl: Mapping) -> None:
    """Append ``tbl`` under the header ``[a.b.c]`` to ``out``: values first, then sub-tables."""
    where = ".".join(path)
    out.append("[" + ".".join(key(p) for p in path) + "]")
    subs = []
    for k, v in tbl.items():
        if isinstance(v, Mapping) and v:
            subs.append((k, v))
        else:
            out.append(f"{key(k)} = {inline(v, f'{where}.{k}')}")
    out.append("")
    for k, v in subs:
        table(out, path + [k], v)
