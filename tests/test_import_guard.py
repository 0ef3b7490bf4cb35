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
