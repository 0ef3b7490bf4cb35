"""Issue 15, glb import: every malformed file of the issue gives a FileFormatError (never a
hang, traceback or unbounded read); sampling is linear in the frame count; no frame is lost and
the frame rate of a file without animik's extras is inferred from its keys."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from animik.errors import FileFormatError
from animik.io import gltf as gltf_io
from animik.io.gltf import dumps_glb, loads_glb, read_glb
from animik.motion import Motion
from animik.rigs import load_rig


def _motion(T: int = 8, fps: float = 30.0) -> Motion:
    skel = load_rig("fig2")
    k = np.arange(T)[:, None]
    q = skel.rest_q + 0.2 * np.sin(0.05 * k + np.arange(skel.n_dof))
    # Inside the limits: a single-DoF joint reads back on its limited branch.
    return Motion(skel, np.clip(q, skel.lower + 1e-3, skel.upper - 1e-3), fps)


def split(data: bytes) -> tuple[dict, bytes]:
    """(JSON, BIN chunk) of a glb."""
    jl = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20:20 + jl]), data[20 + jl + 8:]


def join(js: dict, blob: bytes) -> bytes:
    return gltf_io._glb_bytes(js, bytes(blob))


def _glb(T: int = 8, fps: float = 30.0, extras: bool = True) -> tuple[dict, bytes]:
    js, blob = split(dumps_glb(_motion(T, fps), mesh=False))
    if not extras:
        del js["extras"]
    return js, blob


def _time_accessor(js: dict) -> int:
    return js["animations"][0]["samplers"][0]["input"]


def _set_last_time(js: dict, blob: bytes, value: float) -> bytes:
    acc = js["accessors"][_time_accessor(js)]
    view = js["bufferViews"][acc["bufferView"]]
    b = bytearray(blob)
    struct.pack_into("<f", b, view["byteOffset"] + 4 * (acc["count"] - 1), value)
    acc.pop("max", None)
    return bytes(b)


# ------------------------------------------------------------------ item 1: no hang
@pytest.mark.parametrize("child_of", ["self", "ancestor"])
def test_node_cycle_is_an_error(child_of):
    js, blob = _glb()
    leaf = next(i for i, n in enumerate(js["nodes"]) if not n.get("children") and i > 0)
    js["nodes"][leaf]["children"] = [leaf if child_of == "self" else 0]
    with pytest.raises(FileFormatError, match="cycle|child of both"):
        loads_glb(join(js, blob))


def test_node_cycle_without_a_root_is_an_error():
    js, blob = _glb(extras=False)
    js["nodes"][1]["children"] = js["nodes"][1].get("children", []) + [0]
    with pytest.raises(FileFormatError, match="cycle|child of both"):
        loads_glb(join(js, blob))


@pytest.mark.parametrize("uri", ["/dev/zero", "../outside.bin", "%2E%2E/outside.bin",
                                 "/etc/passwd"])
def test_buffer_uri_outside_the_folder_is_refused(tmp_path, uri):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 64)
    js, blob = _glb()
    js["buffers"][0]["uri"] = uri
    inner = tmp_path / "in"
    inner.mkdir()
    (inner / "a.gltf").write_text(json.dumps(js))
    with pytest.raises(FileFormatError, match="outside|regular file"):
        read_glb(inner / "a.gltf")


def test_buffer_uri_inside_the_folder_still_reads(tmp_path):
    js, blob = _glb()
    (tmp_path / "data.bin").write_bytes(blob)
    js["buffers"][0]["uri"] = "data.bin"
    (tmp_path / "a.gltf").write_text(json.dumps(js))
    assert read_glb(tmp_path / "a.gltf").n_frames == 8


def test_buffer_uri_that_is_a_device_inside_the_folder_is_refused(tmp_path):
    js, blob = _glb()
    (tmp_path / "zero").symlink_to("/dev/zero")
    js["buffers"][0]["uri"] = "zero"
    (tmp_path / "a.gltf").write_text(json.dumps(js))
    with pytest.raises(FileFormatError, match="outside|regular file"):
        read_glb(tmp_path / "a.gltf")


# ------------------------------------------------------------------ item 2: no traceback
def _mutations():
    def node_not_object(js, blob):
        js["nodes"][1] = 5
        return join(js, blob)

    def asset_not_object(js, blob):
        js["asset"] = "2.0"
        return join(js, blob)

    def key_time_inf(js, blob):
        return join(js, _set_last_time(js, blob, float("inf")))

    def key_time_huge(js, blob):
        return join(js, _set_last_time(js, blob, 5e5))

    def nul_in_uri(js, blob):
        js["buffers"][0]["uri"] = "a\0b.bin"
        return json.dumps(js).encode()

    def count_without_view(js, blob):
        acc = js["accessors"][_time_accessor(js)]
        del acc["bufferView"]
        acc["count"] = 10 ** 12
        return join(js, blob)

    def fps_huge(js, blob):
        js["extras"]["animik"]["fps"] = 1e9
        return join(js, blob)

    def fps_string(js, blob):
        js["extras"]["animik"]["fps"] = "fast"
        return join(js, blob)

    def children_not_list(js, blob):
        js["nodes"][0]["children"] = 3
        return join(js, blob)

    def child_out_of_range(js, blob):
        js["nodes"][0]["children"] = [10 ** 9]
        return join(js, blob)

    def rotation_nan(js, blob):
        js["nodes"][0]["rotation"] = [0, 0, 0, None]
        return join(js, blob)

    def times_decrease(js, blob):
        return join(js, _set_last_time(js, blob, -1.0))

    return [node_not_object, asset_not_object, key_time_inf, key_time_huge, nul_in_uri,
            count_without_view, fps_huge, fps_string, children_not_list, child_out_of_range,
            rotation_nan, times_decrease]


@pytest.mark.parametrize("mutate", _mutations(), ids=lambda f: f.__name__)
def test_malformed_glb_gives_a_file_format_error(mutate, tmp_path):
    js, blob = _glb()
    data = mutate(js, blob)
    with pytest.raises(FileFormatError):
        loads_glb(data)
    path = tmp_path / "x.glb"
    path.write_bytes(data)
    with pytest.raises(FileFormatError):
        read_glb(path)


@pytest.mark.parametrize("fps", [1e9, 0.0, -1.0, float("nan"), float("inf")])
def test_fps_argument_is_checked(fps):
    js, blob = _glb()
    with pytest.raises(FileFormatError, match="fps"):
        loads_glb(join(js, blob), fps=fps)


def test_frame_limit_is_stated_and_enforced():
    js, blob = _glb()
    data = join(js, _set_last_time(js, blob, (gltf_io.MAX_FRAMES + 10) / 30.0))
    with pytest.raises(FileFormatError, match=f"at most {gltf_io.MAX_FRAMES} frames"):
        loads_glb(data)
    assert str(gltf_io.MAX_FRAMES) in (read_glb.__doc__ or "").replace("10⁶", str(10 ** 6))


# ------------------------------------------------------------------ item 3: linear sampling
def test_sample_never_builds_a_frames_by_keys_array(monkeypatch):
    """The nearest-key search uses searchsorted: no (T, K) intermediate (was 6.7 GiB at 30,000
    frames). Every array _sample makes stays O(T + K)."""
    times = np.arange(30_000, dtype=np.float32).astype(float) / 30.0
    vals = np.stack([np.sin(times), np.cos(times), times], axis=1)
    t = np.arange(30_000) / 30.0
    made = []
    real_abs = np.abs

    def spy_abs(x, *a, **k):
        made.append(np.size(x))
        return real_abs(x, *a, **k)

    monkeypatch.setattr(gltf_io.np, "abs", spy_abs)
    out = gltf_io._sample(times, vals, "LINEAR", t, False, "x")
    assert max(made) <= 30_000
    np.testing.assert_allclose(out, vals, atol=1e-12)


def test_30000_frame_glb_reads_every_frame():
    m = _motion(30_000)
    back = loads_glb(dumps_glb(m, mesh=False))
    assert back.n_frames == 30_000
    np.testing.assert_allclose(back.q[-1], m.q[-1], atol=1e-5)


# ------------------------------------------------------------------ item 4: no frame loss
@pytest.mark.parametrize("T,fps", [(128, 30.0), (12_000, 30.0), (344, 120.0), (61, 24.0),
                                   (50, 29.97)])
@pytest.mark.parametrize("extras", [True, False])
def test_no_frame_is_lost(T, fps, extras):
    js, blob = _glb(T, fps, extras)
    back = loads_glb(join(js, blob))
    assert back.n_frames == T
    assert back.fps == pytest.approx(fps, rel=1e-6)


def test_rate_of_sparse_keys_on_a_frame_grid():
    """Keys on a 60 fps grid with gaps (a reduced clip): the grid's rate, not 30."""
    assert gltf_io._infer_fps([np.array([0, 2, 3, 7, 8, 9], np.float32) / np.float32(60)]) == 60.0


def test_keys_on_no_grid_fall_back_to_30():
    assert gltf_io._infer_fps([np.array([0.0, 0.013, 0.5, 1.7])]) == 30.0
