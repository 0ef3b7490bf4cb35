"""Fuzzing the BVH reader: every mutation of a small valid file either reads as a Motion (which
then round-trips through the writer) or raises BVHParseError, never anything else or a hang."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from animik.errors import BVHParseError
from animik.io.bvh import read_bvh, write_bvh
from animik.motion import Motion

SMALL = b"""HIERARCHY
ROOT Hips
{
\tOFFSET 0.0 0.0 0.0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10.5 -1e-1
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
\tJOINT mixamorig:Leg
\t{
\t\tOFFSET 5 -2 0
\t\tCHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation
\t\tJOINT Foot
\t\t{
\t\t\tOFFSET 0 -40 0
\t\t\tCHANNELS 1 Xrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 0 0 0
\t\t\t}
\t\t}
\t}
}
MOTION
Frames:\t3
Frame Time: .0333333
1 90 2 10 20 30 5 6 7 5 -2 0 -8 9 10 1.87007e-05\r
1.5 91 2.5 11 21 31 6 7 8 5 -2 0 -9 10 11 -0.0 \r
2 92 3 12 22 32 7 8 9 5 -2.5 0 -10 11 12 4
"""

JUNK = [b"abc", b"1e", b"--1", b"nan", b"inf", b"1e999", b"", b"{", b"}", b"0x10", b"1,5",
        b"\xc2\xbd", b"NaN", b"1e-999", b"-", b".", b"9" * 400, b"1.2.3", b"\x00", b"MOTION",
        b"JOINT", b"End", b"Site", b"ROOT", b"CHANNELS", b"OFFSET", b"Frames:", b"99999999999"]


def _tokens(data: bytes) -> list[bytes]:
    return data.replace(b"\t", b" ").replace(b"\n", b" \n ").split(b" ")


def _mutate(rng: np.random.Generator, data: bytes) -> bytes:
    op = int(rng.integers(9))
    if not data:
        return JUNK[int(rng.integers(len(JUNK)))]
    if op == 0:  # truncation
        return data[: int(rng.integers(0, len(data)))]
    if op in (1, 2, 3):  # token deletion / duplication / replacement by junk
        toks = _tokens(data)
        i = int(rng.integers(len(toks)))
        if op == 1:
            del toks[i]
        elif op == 2:
            toks.insert(i, toks[i])
        else:
            toks[i] = JUNK[int(rng.integers(len(JUNK)))]
        return b" ".join(toks)
    if op == 4:  # a number replaced by junk
        toks = _tokens(data)
        nums = [i for i, t in enumerate(toks) if t[:1].isdigit() or t[:1] in (b"-", b".")]
        if not nums:
            return data
        toks[nums[int(rng.integers(len(nums)))]] = JUNK[int(rng.integers(len(JUNK)))]
        return b" ".join(toks)
    if op == 5:  # brace removed or added
        if rng.random() < 0.5:
            where = [i for i, c in enumerate(data) if c in b"{}"]
            if not where:
                return data
            i = where[int(rng.integers(len(where)))]
            return data[:i] + data[i + 1:]
        i = int(rng.integers(len(data) + 1))
        return data[:i] + (b"{" if rng.random() < 0.5 else b"}") + data[i:]
    if op == 6:  # random bytes inserted or overwritten
        i = int(rng.integers(len(data) + 1))
        junk = rng.integers(0, 256, size=int(rng.integers(1, 8)), dtype=np.uint8).tobytes()
        return data[:i] + junk + data[i + len(junk) * int(rng.integers(2)):]
    if op == 7:  # whole line deleted or duplicated
        lines = data.split(b"\n")
        i = int(rng.integers(len(lines)))
        if rng.random() < 0.5:
            del lines[i]
        else:
            lines.insert(i, lines[i])
        return b"\n".join(lines)
    # several mutations at once
    for _ in range(int(rng.integers(2, 5))):
        data = _mutate(rng, data)
    return data


def test_fuzz_small_file(tmp_path: Path):
    rng = np.random.default_rng(20240611)
    path = tmp_path / "fuzz.bvh"
    base = read_bvh(_write(path, SMALL), unit="cm")
    assert base.q.shape == (3, 16)
    n_ok = n_err = 0
    for it in range(400):
        data = _mutate(rng, SMALL)
        _write(path, data)
        try:
            m = read_bvh(path)
        except BVHParseError as e:
            assert e.line is None or e.line >= 1, (it, data)
            n_err += 1
            continue
        except Exception as e:  # pragma: no cover - the failure we are looking for
            pytest.fail(f"mutation {it} raised {type(e).__name__}: {e}\n{data!r}")
        assert isinstance(m, Motion)
        n_ok += 1
        # Whatever was accepted can be written and read back to the same values.
        back = read_bvh(write_bvh(m, tmp_path / "back.bvh", channels="compact"),
                        unit=m.meta["bvh_unit_scale"])
        assert back.skeleton.joint_names == m.skeleton.joint_names
        np.testing.assert_allclose(back.q, m.q, rtol=1e-9, atol=1e-12)
    assert n_err > 100 and n_ok > 10  # both outcomes are exercised


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
