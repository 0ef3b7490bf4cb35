"""The binary STL reader of robot site placement (issue 14, throughput: no trimesh import for a
retarget onto a robot) gives exactly trimesh's vertices (``process=False``), and leaves every
other file to trimesh."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from animik.semantics.robot_sites import _binary_stl_vertices

trimesh = pytest.importorskip("trimesh")
ROBOTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robots"


def _trimesh_vertices(path: Path) -> np.ndarray:
    return np.asarray(trimesh.load(str(path), force="mesh", process=False).vertices, float)


def test_binary_stl_vertices_equal_trimesh(tmp_path, rng):
    tri = rng.normal(size=(7, 3, 3)).astype(np.float32)
    mesh = trimesh.Trimesh(tri.reshape(-1, 3), np.arange(21).reshape(7, 3), process=False)
    path = tmp_path / "part.STL"
    path.write_bytes(trimesh.exchange.stl.export_stl(mesh))
    got = _binary_stl_vertices(str(path))
    assert got is not None and got.dtype == np.float64
    np.testing.assert_array_equal(got, _trimesh_vertices(path))
    np.testing.assert_array_equal(got, tri.reshape(-1, 3).astype(np.float64))


def test_other_files_are_left_to_trimesh(tmp_path):
    ascii_stl = tmp_path / "a.stl"
    ascii_stl.write_text("solid a\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                         "vertex 0 1 0\nendloop\nendfacet\nendsolid a\n")
    assert _binary_stl_vertices(str(ascii_stl)) is None
    short = tmp_path / "b.stl"
    short.write_bytes(b"\0" * 80 + np.uint32(3).tobytes() + b"\0" * 50)  # count says 3, has 1
    assert _binary_stl_vertices(str(short)) is None
    assert _binary_stl_vertices(str(tmp_path / "missing.stl")) is None
    obj = tmp_path / "c.obj"
    obj.write_text("v 0 0 0\n")
    assert _binary_stl_vertices(str(obj)) is None


@pytest.mark.skipif(not ROBOTS.is_dir(), reason="../shared/data/robots not present")
def test_shared_robot_meshes_read_as_trimesh_reads_them():
    files = sorted(p for p in ROBOTS.rglob("*") if p.suffix.lower() == ".stl")
    assert files
    for path in files:
        got = _binary_stl_vertices(str(path))
        assert got is not None, path
        np.testing.assert_array_equal(got, _trimesh_vertices(path), err_msg=str(path))
