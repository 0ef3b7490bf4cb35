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
    # data folders under assets/ are (namespace) packages too, or setuptools warns and drops them
    data = {"animik._assets." + ".".join(p.relative_to(ROOT / "assets").parts)
            for p in (ROOT / "assets").rglob("*") if p.is_dir()}
    assert data <= listed, f"add to [tool.setuptools] packages: {sorted(data - listed)}"


def test_wheel_builds_without_setuptools_warnings(tmp_path):
    """Packaging warnings on every install (deprecated license table, data folders that are not
    packages) were what a new user saw first."""
    pytest.importorskip("setuptools")
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
         "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    for warning in ("BuildBackendWarning", "SetuptoolsDeprecationWarning", "would be ignored"):
        assert warning not in text, f"{warning} while building the wheel"


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
