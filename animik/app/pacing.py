"""On-demand redraw: the app draws a frame only while something changes (issue 13 item 4.6).

A frame is wanted while input arrives and for :data:`LINGER_S` after it (imgui's hover states,
tooltips and popups settle over a few frames), while a frame changes what is shown (the IK
converging, playback, a retarget or a simulation step, the camera moving: the
:func:`frame_signature` differs from the previous frame's), until a timed banner expires, and
whenever something outside the frame loop asks (:meth:`FramePacer.request`); while only a
background task runs, :data:`TASK_FPS` frames a second (its progress bar). Otherwise the
window sleeps: an idle app uses no CPU (measured in
docs/app.md, "Redraw on demand").

No GL here: :class:`~animik.app.gui.GuiApp` owns a pacer, the pyglet loop in
:mod:`animik.app.window` asks it before drawing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .state import AppState

#: Seconds frames keep coming after the last input or change.
LINGER_S = 0.75
#: Seconds an info banner stays up (errors stay until dismissed), see ``ui/chrome.py``.
INFO_S = 4.0


def frame_signature(state: AppState) -> tuple:
    """What a frame shows, cheaply compared: the document (replaced on every change, the IK's
    and playback's included), the camera, the selection and hover, the messages, the panels
    that open and close."""
    cam = state.camera
    return (id(state.doc), state.version, cam.yaw, cam.pitch, cam.distance,
            tuple(float(v) for v in cam.target), state.selected_site, state.selected_joint,
            state.hover_site, state.hover_joint, state.hover_ring, state.hover_gizmo,
            state.selected_key,
            len(state.messages), state.window_size, state.view_rect, state.show_file_browser,
            state.show_help, state.context_site)


#: Frames per second while only a background task runs (no input, nothing else changing): its
#: bar and text move at the work's reports, and its result lands on the next frame. Drawing
#: every tick cost the main thread ~10 ms of CPU a frame (30 fps: a third of a core) that the
#: worker (Make feasible) wants on a 2-core machine (docs/dynamics.md section 8).
TASK_FPS = 8.0


def _busy(state: AppState) -> bool:
    """Playback, a handle or timeline drag: a frame every tick."""
    return state.playing or state.drag is not None or state.timeline is not None


class FramePacer:
    """Decides whether the next loop tick draws a frame.

    Args:
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.awake_until = clock() + LINGER_S  # the first frames lay the window out
        self.wake_at: float | None = None  # one frame then (a banner expiring)
        self.last_signature: tuple | None = None
        self.frames = 0  # frames drawn
        self.task_frame_at = -float("inf")  # the last frame drawn while a task ran

    def request(self, seconds: float = LINGER_S) -> None:
        """Draw from the next tick on, for ``seconds``."""
        self.awake_until = max(self.awake_until, self.clock() + seconds)

    def wants_frame(self, state: AppState) -> bool:
        """True when the next tick should draw."""
        now = self.clock()
        if state.redraw_requested:  # from outside the frame loop (another thread may set it)
            state.redraw_requested = False
            self.request()
        if self.wake_at is not None and now >= self.wake_at:
            self.wake_at = None
            return True
        if now < self.awake_until:
            return True
        # changed since the last frame without input (a script, a background task's result)
        if _busy(state) or frame_signature(state) != self.last_signature:
            return True
        # a background task's progress: TASK_FPS frames a second
        return state.editing.tasks.busy and now >= self.task_frame_at + 1.0 / TASK_FPS

    def after_frame(self, state: AppState) -> None:
        """Note what the frame showed: a change (or running playback, a drag) keeps frames
        coming; a timed banner wakes the app when it expires."""
        self.frames += 1
        if state.editing.tasks.busy:
            self.task_frame_at = self.clock()
        sig = frame_signature(state)
        if _busy(state) or sig != self.last_signature:
            self.request()
        self.last_signature = sig
        infos = [m.time for m in state.messages if m.level != "error"]
        if infos:  # one more frame when the oldest info banner is due to go (Message.time is
            # time.monotonic(), as is the default clock)
            due = min(infos) + INFO_S + 0.05
            if self.wake_at is None or due < self.wake_at:
                self.wake_at = due


__all__ = ["INFO_S", "LINGER_S", "TASK_FPS", "FramePacer", "frame_signature"]
