"""The numeric core must import without GL / GUI packages."""

import subprocess
import sys


def test_import_animik_loads_no_gl_or_gui():
    code = (
        "import sys, animik, animik.kinematics, animik.io.bvh, animik.io.urdf, animik.io.mjcf, "
        "animik.rigs, animik.cli\n"
        "bad = [m for m in ('pyglet', 'moderngl', 'imgui_bundle') if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import animik loaded {out.stdout.strip()}"


def _top_level_modules() -> set[str]:
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[1] / "animik"
    mods = {p.stem for p in pkg.glob("*.py") if p.stem != "__init__"}
    mods |= {p.parent.name for p in pkg.glob("*/__init__.py")}
    return mods


def test_import_contracts_cover_every_module_without_ignores():
    """A module left out of the layers or of the GUI-free list would escape the contract; an
    ignored import would hide a real path from the core to GL."""
    import tomllib
    from pathlib import Path

    cfg = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    contracts = {c["id"]: c for c in cfg["tool"]["importlinter"]["contracts"]}
    mods = _top_level_modules()
    layered = {name.strip("() ") for layer in contracts["layers"]["layers"]
               for name in layer.split("|")}
    assert mods <= layered, f"add to the layers contract: {sorted(mods - layered)}"
    sources = {m.removeprefix("animik.") for m in contracts["gui-only-in-app"]["source_modules"]}
    assert sources == mods - {"app", "cli"}, sorted(sources ^ (mods - {"app", "cli"}))
    assert all(not c.get("ignore_imports") for c in contracts.values())


def test_help_loads_no_gl_or_gui():
    """`animik --help` builds every command's parser (the app's bench included) without GL."""
    code = (
        "import sys\n"
        "from animik.cli import build_parser\n"
        "build_parser()\n"
        "print(','.join(m for m in ('pyglet', 'moderngl', 'imgui_bundle') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"animik --help loaded {out.stdout.strip()}"
