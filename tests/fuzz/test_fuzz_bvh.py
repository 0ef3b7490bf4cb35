"""Fuzzing the BVH reader (issue 15): byte-level mutations of real files (the first frames of
each motion-capture set, and a file animik writes) read as a valid Motion or raise an
AnimikError, within the time and memory bound of tests/fuzz/_fuzz.py."""

from __future__ import annotations

import re

import numpy as np
from _fuzz import FUZZ, INTERESTING_NUMBERS, INTERESTING_TOKENS, SHARED, report, run_case
from hypothesis import given
from hypothesis import strategies as st

from animik.io.bvh import dumps_bvh, loads_bvh
from animik.io.bvh_compat import dumps_bvh_compatible
from animik.motion import Motion
from animik.rigs import load_rig


def _head(data: bytes, frames: int = 4) -> bytes:
    """A real file cut to its first frames (the hierarchy is whole): small, still real."""
    text = data.decode("utf-8-sig")
    head, _, motion = text.partition("MOTION")
    lines = [ln for ln in motion.splitlines() if ln.strip()]
    body = [re.sub(r"\d+", str(frames), lines[0], count=1), lines[1], *lines[2:2 + frames]]
    return (head + "MOTION\n" + "\n".join(body) + "\n").encode()


def _seeds() -> list[bytes]:
    out = []
    for d in sorted((SHARED / "bvh").glob("*/")) if (SHARED / "bvh").is_dir() else []:
        files = sorted(d.glob("*.bvh"))
        if files:
            out.append(_head(files[0].read_bytes()))
    skel = load_rig("fig2")
    q = skel.rest_q + 0.1 * np.sin(np.arange(3)[:, None] + np.arange(skel.n_dof))
    out.append(dumps_bvh_compatible(Motion(skel, skel.clip_to_limits(q), 30.0))[0])
    return out


SEEDS = _seeds()

edit = st.tuples(
    st.sampled_from(["replace", "delete", "insert", "duplicate_line", "number"]),
    st.integers(0, 2**31), st.integers(1, 64),
    st.one_of(st.sampled_from(INTERESTING_TOKENS), st.binary(min_size=1, max_size=6)))


def _apply(data: bytes, edits) -> bytes:
    b = bytearray(data)
    for op, pos, length, token in edits:
        i = pos % (len(b) + 1)
        if op == "replace":
            b[i:i + len(token)] = token
        elif op == "delete":
            del b[i:i + length]
        elif op == "insert":
            b[i:i] = token
        elif op == "duplicate_line":
            lines = bytes(b).split(b"\n")
            k = pos % len(lines)
            lines.insert(k, lines[k])
            b = bytearray(b"\n".join(lines))
        else:  # a number token -> an interesting number, or an ordinary one (still valid)
            nums = list(re.finditer(rb"-?\d+(\.\d+)?(e-?\d+)?", bytes(b)))
            if nums:
                m = nums[pos % len(nums)]
                new = INTERESTING_NUMBERS[length % len(INTERESTING_NUMBERS)] if length % 2 else \
                    repr(round((pos % 20001) / 100.0 - 100.0, 2)).encode()
                b[m.start():m.end()] = new
    return bytes(b)


def _valid(m: Motion) -> None:
    assert np.all(np.isfinite(m.q)) and m.fps > 0
    assert m.q.shape == (m.n_frames, m.skeleton.n_dof)
    # A motion read is a motion animik can write again (or refuses with an AnimikError).
    run_case("bvh (write back)", lambda: loads_bvh(dumps_bvh(m)))


@FUZZ
@given(seed=st.sampled_from(range(len(SEEDS))), edits=st.lists(edit, min_size=1, max_size=4))
def _mutated_bvh(seed, edits):
    data = _apply(SEEDS[seed], edits)
    run_case("bvh", lambda: loads_bvh(data), _valid)


def test_mutated_bvh_reads_or_fails_cleanly():
    _mutated_bvh()
    print(report("bvh"), "|", report("bvh (write back)"))
