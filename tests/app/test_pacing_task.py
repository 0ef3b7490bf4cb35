"""While only a background task runs (no input, nothing else changing) the window draws its
progress bar at pacing.TASK_FPS, not every tick: the main thread's frames (~10 ms of CPU each)
were a third of a core taken from Make feasible's worker. Input still draws every tick, and the
task's result lands on the next frame. (Main drew every tick while a task ran.)"""

from __future__ import annotations

import threading

from app_helpers import FakeClock, app, settle  # noqa: F401 (app: a fixture)

from animik.app.pacing import LINGER_S, TASK_FPS, FramePacer


def test_a_running_task_draws_at_the_task_rate(app):  # noqa: F811
    st = app.state
    clock = FakeClock()
    app.gui.pacer = FramePacer(clock)
    st.messages.clear()
    settle(app, clock, 400)
    assert settle(app, clock, 300) == 0  # idle
    go = threading.Event()
    got = []
    task = st.editing.tasks.start("wait", lambda progress: go.wait(30) and 7, got.append)
    assert task is not None
    settle(app, clock, int(LINGER_S * 60) + 2)  # the start's own frames
    n = settle(app, clock, 600)  # 10 s of ticks at 60 Hz
    # every tick that is 1/TASK_FPS after the last frame (60 Hz ticks: every 8th), not 600
    assert 0.9 * 10 * TASK_FPS <= n <= 10 * TASK_FPS + 2, n
    app.gui.on_mouse_motion(600, 400, 1, 1)  # input: every tick again
    assert settle(app, clock, 20) == 20
    go.set()
    task.wait(10)
    settle(app, clock, 60)
    assert got == [7] and not st.editing.tasks.busy
