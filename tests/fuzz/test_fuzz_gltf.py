"""Fuzzing the glb reader (issue 15): mutations of real files (the small Khronos samples in
../shared/data/gltf and a file animik writes) — a JSON value anywhere replaced by an odd one,
a key deleted, a child link that closes a cycle, float32 data overwritten with inf / NaN / huge
times, bytes flipped — read as a valid Motion or raise an AnimikError, within the bound of
tests/fuzz/_fuzz.py. Also the same file as ``.gltf`` with an external buffer ``uri``."""

from __future__ import annotations

import json
import struct

import numpy as np
from _fuzz import FUZZ, SHARED, TALLY, report, run_case
from hypothesis import given
from hypothesis import strategies as st

from animik.io.gltf import dumps_glb, loads_glb, read_glb
from animik.motion import Motion
from animik.rigs import load_rig


def _split(data: bytes) -> tuple[dict, bytes]:
    jl = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20:20 + jl]), data[20 + jl + 8:]


def _glb_bytes(js: dict, blob: bytes) -> bytes:
    """A glb container around any JSON (NaN and Infinity literals included: Python's json
    reads them, so the reader must cope)."""
    text = json.dumps(js).encode()
    text += b" " * (-len(text) % 4)
    blob = blob + b"\0" * (-len(blob) % 4)
    out = struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + 8 + len(blob))
    return out + struct.pack("<II", len(text), 0x4E4F534A) + text + \
        struct.pack("<II", len(blob), 0x004E4942) + blob


def _shared_glbs() -> list[tuple[str, bytes]]:
    """``(name, content)`` of the shared rigged characters the fuzzers start from."""
    paths = [SHARED / "gltf" / n / f"{n}.glb" for n in ("RiggedSimple", "RiggedFigure")]
    return [(p.stem, p.read_bytes()) for p in paths if p.is_file()]


def _seeds() -> list[tuple[dict, bytes]]:
    out = [_split(data) for _, data in _shared_glbs()]
    skel = load_rig("fig2")
    q = skel.rest_q + 0.1 * np.sin(np.arange(4)[:, None] + np.arange(skel.n_dof))
    out.append(_split(dumps_glb(Motion(skel, skel.clip_to_limits(q), 30.0), mesh=False)))
    js, blob = out[-1]
    del js["extras"]  # the path without animik's extras (skeleton from the nodes)
    out.append((js, blob))
    return out


SEEDS = _seeds()

odd = st.one_of(
    st.sampled_from([None, True, -1, 0, 1, 3, 2**31, 10**12, -10**12, 1e9, 1e308, float("inf"),
                     float("nan"), "", "x", "../outside.bin", "/dev/zero", "a\x00b", [], {},
                     [0], [0, 0, 0, 1], [1e308] * 16, "CUBICSPLINE", "STEP", "rotation",
                     "translation", "scale", "VEC4", "MAT4", 5126, 5121]),
    st.integers(-5, 50), st.floats(width=32), st.text(max_size=4))


def _slots(node, path=()):
    """Every (container, key) in the JSON tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield node, k
            yield from _slots(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield node, i
            yield from _slots(v, path + (i,))


mutation = st.tuples(st.sampled_from(["set", "delete", "cycle", "float", "byte"]),
                     st.integers(0, 2**31), odd)


def _mutate(js: dict, blob: bytes, muts) -> tuple[dict, bytes]:
    js = json.loads(json.dumps(js))
    b = bytearray(blob)
    for op, pos, value in muts:
        slots = list(_slots(js))
        if op in ("set", "delete") and slots:
            container, key = slots[pos % len(slots)]
            if op == "set":
                container[key] = value
            elif isinstance(container, dict):
                del container[key]
            else:
                container.pop(key)
        elif op == "cycle" and isinstance(js.get("nodes"), list) and js["nodes"]:
            nodes = js["nodes"]
            i = pos % len(nodes)
            if isinstance(nodes[i], dict):
                nodes[i].setdefault("children", [])
                if isinstance(nodes[i]["children"], list):
                    nodes[i]["children"].append((pos // 7) % len(nodes))
        elif op == "float" and len(b) >= 4:
            f = value if isinstance(value, float) else float(pos % 1000) * 1e3
            struct.pack_into("<f", b, 4 * (pos % (len(b) // 4)), np.float32(f))
        elif op == "byte" and b:
            b[pos % len(b)] ^= 1 << (pos % 8)
    return js, bytes(b)


def _valid(m: Motion) -> None:
    assert np.all(np.isfinite(m.q)) and m.fps > 0
    assert m.q.shape == (m.n_frames, m.skeleton.n_dof) and m.n_frames >= 1


@FUZZ
@given(seed=st.sampled_from(range(len(SEEDS))), muts=st.lists(mutation, min_size=1, max_size=3))
def _mutated_glb(seed, muts):
    js, blob = _mutate(*SEEDS[seed], muts)
    data = _glb_bytes(js, blob) if "buffers" in js or blob else json.dumps(js).encode()
    run_case("glb", lambda: loads_glb(data), _valid)


def test_mutated_glb_reads_or_fails_cleanly():
    _mutated_glb()
    print(report("glb"))


@FUZZ
@given(uri=st.one_of(st.sampled_from(["data.bin", "./data.bin", "../data.bin", "/dev/zero",
                                      "/etc/hostname", "data.bin\x00", "%2e%2e/data.bin",
                                      "sub/../data.bin", "data%2ebin", "", ".", "/", "zero"]),
                     st.text(max_size=12)))
def _external_uri(tmp_path_factory, uri):
    folder = tmp_path_factory.mktemp("g")
    js, blob = SEEDS[-1]
    js = json.loads(json.dumps(js))
    (folder / "data.bin").write_bytes(blob)
    (folder / "zero").symlink_to("/dev/zero")
    js["buffers"][0]["uri"] = uri
    (folder / "a.gltf").write_text(json.dumps(js))

    def read():
        try:
            return read_glb(folder / "a.gltf")
        except FileNotFoundError:  # a buffer file that does not exist: an OS error (exit 4)
            TALLY["gltf external uri"]["missing buffer file (OS error)"] += 1
            return None

    run_case("gltf external uri", read, lambda m: m is None or _valid(m))


def test_external_buffer_uri_never_reads_outside(tmp_path_factory):
    _external_uri(tmp_path_factory)
    print(report("gltf external uri"),
          TALLY["gltf external uri"]["missing buffer file (OS error)"], "of them missing files")
