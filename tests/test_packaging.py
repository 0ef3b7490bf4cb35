"""A wheel of animik carries everything a user needs: every subpackage, rigs, scenes, shaders."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_explicit_package_list_is_complete():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "animik").rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_wheel_contains_data_packages(tmp_path):
    pytest.importorskip("setuptools")
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".venv", "node_modules", ".git", "__pycache__", "*.egg-info", "build", ".pytest_cache"))
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("animik-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("animik/_assets/rigs/body95.toml", "animik/_assets/rigs/fig2.tuning.toml",
                   "animik/_scenes/default.toml", "animik/_shaders/mesh.vert",
                   "animik/app/gui.py", "animik/retarget/batch.py"):
        assert needed in names, f"{needed} missing from the wheel"
