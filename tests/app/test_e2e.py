"""End to end: the real program in a real window on a virtual X screen (Xvfb), driven by xdotool.

Starts ``Xvfb`` itself (skips only when Xvfb / xdotool / ImageMagick are not installed:
scripts/setup.sh installs them), runs ``python -m animik.app --save-path ...`` on the default
scene, drags the left hand with the mouse, presses Ctrl+S, and checks the saved scene: the
hand's target is where the mouse dropped it and the hand reached it (within 1 mm). A second
test animates: K at frame 0, a click on the timeline at frame 30, a hand drag, K, frame 60,
another drag, K, Space to play and stop, Ctrl+S, and checks the saved scene's clip. The app is
then stopped with SIGTERM, as a test runner or a desktop session would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from app_helpers import SIZE

from animik.kinematics import site_positions
from animik.scene import load_scene

pytestmark = pytest.mark.gl

TOOLS = ("Xvfb", "xdotool", "import")


def _need_tools():
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (scripts/setup.sh installs xvfb, "
                    "xdotool and imagemagick)")


@pytest.fixture
def xdisplay():
    """A private Xvfb screen; yields the DISPLAY string."""
    _need_tools()
    r, w = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0",
                             f"{SIZE[0]}x{SIZE[1]}x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    num = b""
    deadline = time.monotonic() + 20
    with os.fdopen(r, "rb") as f:
        while not num.endswith(b"\n") and time.monotonic() < deadline:
            c = f.read(1)
            if not c:
                break
            num += c
    if not num.strip():
        proc.kill()
        pytest.fail("Xvfb did not report its display number")
    try:
        yield f":{int(num)}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _x(env, *args, check=True, timeout=20) -> str:
    out = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"{args} failed: {out.stderr}")
    return out.stdout.strip()


def _pixel(env, x: int, y: int) -> tuple[int, ...]:
    txt = _x(env, "import", "-window", "root", "-crop", f"1x1+{x}+{y}", "txt:-", check=False)
    line = txt.splitlines()[-1] if txt else ""
    if "(" not in line:
        return (0, 0, 0)
    vals = line.split("(", 1)[1].split(")", 1)[0].split(",")
    return tuple(int(float(v)) for v in vals[:3])


def _hand_pixel() -> tuple[float, float, object]:
    """Where the default scene's left hand is in the window: the same layout code offscreen
    (the state keeps ``timeline_view``, where the timeline is drawn)."""
    from animik.app import actions
    from animik.app.gui import Offscreen

    st = actions.make_state(None, size=SIZE)
    off = Offscreen(st, SIZE)
    for _ in range(3):
        off.frame()
    cam = st.camera
    vx, vy, _, _ = st.view_rect
    i = st.skeleton.site_index("l_hand")
    p = cam.project(st.fk.site_positions[i])
    off.release()
    return p[0] + vx, p[1] + vy, st  # window pixels, origin top-left


class _App:
    """The app running in the window, with the xdotool helpers the tests need."""

    def __init__(self, env, tmp_path, save):
        self.env = env
        self.path = tmp_path / "app.log"
        self.log = open(self.path, "w")  # a file, not a pipe: a full pipe would block the app
        self.proc = subprocess.Popen([sys.executable, "-m", "animik.app", "--save-path", str(save),
                                      "--size", f"{SIZE[0]}x{SIZE[1]}"], env=env, cwd=tmp_path,
                                     stdout=self.log, stderr=subprocess.STDOUT, text=True)
        self.wid = ""

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return self.path.read_text()

    def wait_drawn(self) -> None:
        env = self.env
        self.wid = _x(env, "xdotool", "search", "--sync", "--onlyvisible", "--name", "^animik - ",
                      timeout=60).split()[0]
        deadline = time.monotonic() + 60
        while sum(_pixel(env, 20, 40)) == 0:  # wait for the first frames (panels drawn)
            assert self.proc.poll() is None, self.output()
            assert time.monotonic() < deadline, "the app never drew its window"
            time.sleep(0.3)
        time.sleep(1.0)

    def move(self, x, y) -> None:
        _x(self.env, "xdotool", "mousemove", "--window", self.wid, str(int(round(x))),
           str(int(round(y))))

    def drag(self, x0, y0, x1, y1, steps: int = 15) -> None:
        self.move(x0, y0)
        time.sleep(0.5)
        _x(self.env, "xdotool", "mousedown", "1")
        time.sleep(0.3)
        for k in range(1, steps + 1):
            self.move(x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps)
            time.sleep(0.05)
        time.sleep(0.5)
        _x(self.env, "xdotool", "mouseup", "1")
        time.sleep(1.0)  # let the IK settle

    def click(self, x, y) -> None:
        self.move(x, y)
        time.sleep(0.3)
        _x(self.env, "xdotool", "click", "1")
        time.sleep(0.5)

    def key(self, keys: str) -> None:
        _x(self.env, "xdotool", "key", "--window", self.wid, keys)
        time.sleep(0.5)

    def stop(self):
        """SIGTERM, as a session or a CI runner would; returns the exit status."""
        self.proc.terminate()
        try:
            rc = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            rc = "hung"
        self.log.close()
        return rc


def test_animate_three_keys_play_and_save_in_a_real_window(xdisplay, tmp_path):
    from animik import anim
    from animik.app.ui.timeline_panel import RULER_H

    env = dict(os.environ, DISPLAY=xdisplay)
    env.pop("PYOPENGL_PLATFORM", None)
    save = tmp_path / "animated.toml"
    hx, hy, st = _hand_pixel()
    view = st.timeline_view
    ruler_y = view.top + RULER_H / 2
    app = _App(env, tmp_path, save)
    try:
        app.wait_drawn()
        app.key("k")  # key the pose at frame 0 (makes the clip)
        app.click(view.x_of(1.0), ruler_y)  # the playhead to frame 30
        p1 = (hx - 60, hy - 90)
        app.drag(hx, hy, *p1)
        app.key("k")
        app.click(view.x_of(2.0), ruler_y)  # frame 60: the pose of the last key, hand on p1
        p2 = (p1[0] + 110, p1[1] + 20)
        app.drag(*p1, *p2)
        app.key("k")
        app.key("space")  # play ...
        time.sleep(1.5)
        app.key("space")  # ... and stop
        assert app.proc.poll() is None, app.output()
        mtime = None
        app.key("ctrl+s")
        deadline = time.monotonic() + 30
        while not save.is_file() or save.stat().st_mtime_ns == mtime:
            assert app.proc.poll() is None, app.output()
            assert time.monotonic() < deadline, "Ctrl+S wrote nothing"
            time.sleep(0.1)
        time.sleep(0.2)
        scene = load_scene(save)
    finally:
        rc = app.stop()
    assert rc == 0, f"app exit status {rc}: {app.output()}"
    assert [c.name for c in scene.clips] == ["clip"], save.read_text()[:2000]
    clip = scene.clips[0]
    np.testing.assert_allclose(anim.key_times(clip), [0.0, 1.0, 2.0])
    skel = scene.skeleton
    keyable = [j for j in range(skel.n_joints) if len(skel.joint_dofs(j))]
    assert len(clip.tracks) == len(keyable)  # whole-pose keys
    q = clip.sample([0.0, 1.0, 2.0])
    i = skel.site_index("l_hand")
    hands = site_positions(skel, q)[:, i]
    assert np.linalg.norm(hands[1] - hands[0]) > 0.15 and np.linalg.norm(hands[2] - hands[1]) > 0.15
    # the keyed hands are where the mouse dropped them (the saved camera is the app's)
    cam = st.camera
    cam.apply_dict(dict(scene.camera))
    vx, vy, _, _ = st.view_rect
    for hand, (x, y) in zip(hands[1:], (p1, p2), strict=True):
        p = cam.project(hand)
        assert abs(p[0] + vx - x) < 3.0 and abs(p[1] + vy - y) < 3.0, (p, x, y)
    assert np.all(skel.within_limits(q))


def test_drag_hand_and_save_in_a_real_window(xdisplay, tmp_path):
    env = dict(os.environ, DISPLAY=xdisplay)
    env.pop("PYOPENGL_PLATFORM", None)
    save = tmp_path / "dragged.toml"
    hx, hy, st = _hand_pixel()
    log = open(tmp_path / "app.log", "w")  # a file, not a pipe: a full pipe would block the app
    app = subprocess.Popen([sys.executable, "-m", "animik.app", "--save-path", str(save),
                            "--size", f"{SIZE[0]}x{SIZE[1]}"], env=env, cwd=tmp_path,
                           stdout=log, stderr=subprocess.STDOUT, text=True)

    def output() -> str:
        if not log.closed:
            log.flush()
        return (tmp_path / "app.log").read_text()

    try:
        wid = _x(env, "xdotool", "search", "--sync", "--onlyvisible", "--name", "^animik - ",
                 timeout=60).split()[0]
        deadline = time.monotonic() + 60
        while sum(_pixel(env, 20, 40)) == 0:  # wait for the first frames (panels drawn)
            assert app.poll() is None, output()
            assert time.monotonic() < deadline, "the app never drew its window"
            time.sleep(0.3)
        time.sleep(1.0)
        x0, y0 = int(round(hx)), int(round(hy))
        x1, y1 = x0 - 60, y0 - 90  # up and to the side: reachable with the feet pinned
        _x(env, "xdotool", "mousemove", "--window", wid, str(x0), str(y0))
        time.sleep(0.5)
        _x(env, "xdotool", "mousedown", "1")
        time.sleep(0.3)
        for k in range(1, 16):
            _x(env, "xdotool", "mousemove", "--window", wid, str(x0 + (x1 - x0) * k // 15),
               str(y0 + (y1 - y0) * k // 15))
            time.sleep(0.05)
        time.sleep(0.5)
        _x(env, "xdotool", "mouseup", "1")
        time.sleep(1.0)  # let the IK settle
        # Ctrl+S; on a loaded machine the IK may still be settling: save again until it has
        scene, deadline = None, time.monotonic() + 30
        while True:
            mtime = save.stat().st_mtime_ns if save.is_file() else None
            _x(env, "xdotool", "key", "--window", wid, "ctrl+s")
            while not save.is_file() or save.stat().st_mtime_ns == mtime:
                assert app.poll() is None, output()
                assert time.monotonic() < deadline, "Ctrl+S wrote nothing"
                time.sleep(0.1)
            time.sleep(0.1)
            scene = load_scene(save)
            if "l_hand" in scene.targets:
                hand = site_positions(scene.skeleton, scene.q)[scene.skeleton.site_index("l_hand")]
                if np.linalg.norm(hand - np.asarray(scene.targets["l_hand"])) < 1e-3:
                    break
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert "l_hand" in scene.targets, f"no hand target saved: {save.read_text()}"
        target = np.asarray(scene.targets["l_hand"])
        # the target is where the mouse dropped it (same camera as the app's saved one)
        cam = st.camera
        cam.apply_dict(dict(scene.camera))
        p = cam.project(target)
        vx, vy, _, _ = st.view_rect
        assert abs(p[0] + vx - x1) < 2.0 and abs(p[1] + vy - y1) < 2.0, (p, x1, y1)
        hand = site_positions(scene.skeleton, scene.q)[scene.skeleton.site_index("l_hand")]
        start = st.fk.site_positions[st.skeleton.site_index("l_hand")]
        assert np.linalg.norm(target - start) > 0.15  # it really moved
        assert np.linalg.norm(hand - target) < 1e-3  # and the hand reached it
        assert scene.skeleton.within_limits(scene.q)
        assert set(scene.pinned) == {"l_foot", "r_foot"}
    finally:
        # stop it like a session or a CI runner would: SIGTERM, then it must exit cleanly
        app.terminate()
        try:
            rc = app.wait(20)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait(5)
            rc = "hung"
        log.close()
    assert rc == 0, f"app exit status {rc}: {output()}"
