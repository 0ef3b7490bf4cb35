"""The pose mode (the app's default): the timeline plays the current clip, the live IK pulls
the constrained effectors to their targets, the keys key and play.

Keys (no Ctrl): K key the pose · Shift+K key the selected joint · Alt+K key the effector
targets · Space play / pause · , . (or [ ]) previous / next key (Shift: start / end) · N
auto-key on / off.
"""

from __future__ import annotations

from typing import ClassVar

from .. import keys as K
from .. import timeline
from ..solve import step_ik
from ..state import AppState
from .base import Mode


class PoseMode(Mode):
    """Posing and keyframe animation (``Document.mode`` is None)."""

    name: ClassVar[str] = "pose"
    title: ClassVar[str] = "Pose"

    def update(self, state: AppState, dt: float) -> None:
        """Playback (the pose from the clip), then the IK step."""
        if state.playing:
            timeline.advance(state, dt)
        step_ik(state)

    def on_key_press(self, state: AppState, symbol: int, modifiers: int) -> bool:
        return timeline_keys(state, symbol, modifiers)


def timeline_keys(state: AppState, symbol: int, modifiers: int) -> bool:
    """The timeline's keys: K, Shift+K, Alt+K, Space, , . [ ], N. Returns True when used."""
    shift = bool(modifiers & K.MOD_SHIFT)
    alt = bool(modifiers & K.MOD_ALT)
    if symbol == K.K:
        if state.drag is not None:
            return False
        if alt:
            timeline.key_targets(state)
        elif shift:
            timeline.key_joint(state)
        else:
            timeline.key_pose(state)
        return True
    if symbol == K.SPACE:
        timeline.toggle_play(state)
        return True
    if symbol == K.N:
        state.auto_key = not state.auto_key
        state.info(f"Auto-key {'on' if state.auto_key else 'off'}")
        return True
    step = {K.COMMA: -1, K.BRACKETLEFT: -1, K.PERIOD: 1, K.BRACKETRIGHT: 1}.get(symbol)
    if step is not None and state.drag is None:
        timeline.pause(state)
        timeline.jump(state, 2 * step if shift else step)
        return True
    return False




__all__ = ["PoseMode", "timeline_keys"]
