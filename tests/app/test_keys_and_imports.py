"""The app's pyglet constants match pyglet's; GL/GUI packages load only where they must."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_key_constants_equal_pyglets():
    code = (
        "import pyglet\n"
        "pyglet.options['headless'] = True\n"
        "from pyglet.window import key, mouse\n"
        "from animik.app import keys as K\n"
        "pairs = [(K.LEFT, mouse.LEFT), (K.MIDDLE, mouse.MIDDLE), (K.RIGHT, mouse.RIGHT),\n"
        "         (K.MOD_SHIFT, key.MOD_SHIFT), (K.MOD_CTRL, key.MOD_CTRL),\n"
        "         (K.MOD_ALT, key.MOD_ALT), (K.MOD_COMMAND, key.MOD_COMMAND)]\n"
        "for name in ('A','F','O','P','R','S','X','Y','Z','Q','SPACE','HOME','END','DELETE',\n"
        "             'BACKSPACE','ESCAPE','TAB','RETURN','LSHIFT','RSHIFT','LCTRL','RCTRL',\n"
        "             'LALT','RALT','PAGEUP','PAGEDOWN','INSERT','F1','NUM_0','NUM_ENTER',\n"
        "             'MINUS','EQUAL','SLASH','GRAVE','LCOMMAND','RCOMMAND'):\n"
        "    pairs.append((getattr(K, name), getattr(key, name)))\n"
        "for a, b in [('LEFT_ARROW','LEFT'),('RIGHT_ARROW','RIGHT'),('UP_ARROW','UP'),\n"
        "             ('DOWN_ARROW','DOWN')]:\n"
        "    pairs.append((getattr(K, a), getattr(key, b)))\n"
        "pairs.append((K.F1 + 11, key.F12))\n"
        "print(sum(a != b for a, b in pairs))\n"
    )
    assert _run(code) == "0"


def test_app_state_modules_load_no_gl():
    """The app's state, actions, picking and controller are GL-free (testable anywhere)."""
    code = (
        "import sys, animik, animik.app, animik.app.state, animik.app.actions, animik.app.modes,\\\n"
        "    animik.app.controller, animik.app.picking, animik.app.geometry, animik.scene\n"
        "print(','.join(m for m in ('pyglet', 'moderngl', 'imgui_bundle') if m in sys.modules))\n"
    )
    assert _run(code) == ""


def test_import_animik_loads_no_gl_with_the_bench_module():
    code = (
        "import sys, animik, animik.app.bench, animik.scene\n"
        "print(','.join(m for m in ('pyglet', 'moderngl', 'imgui_bundle') if m in sys.modules))\n"
    )
    assert _run(code) == ""


def test_render_modules_do_not_import_pyglet():
    """What the EGL tests import must work without a display: no pyglet."""
    code = (
        "import sys, animik.app.gui, animik.app.render.scene_renderer\n"
        "print('pyglet' in sys.modules)\n"
    )
    assert _run(code) == "False"
