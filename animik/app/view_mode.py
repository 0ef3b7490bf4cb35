"""The character's view mode: its skinned mesh, its bones, or the mesh with x-ray bones.

View state (not undone). Without a mesh on the document the bones are drawn in every mode.
"""

from __future__ import annotations

from .state import VIEW_MODE_LABELS, VIEW_MODES, AppState


def set_view_mode(state: AppState, mode: str) -> None:
    """Draw the character as ``mode`` (one of :data:`animik.app.state.VIEW_MODES`).

    Raises:
        ValueError: unknown mode.
    """
    if mode not in VIEW_MODES:
        raise ValueError(f"view mode must be one of {VIEW_MODES}, got {mode!r}")
    state.view_mode = mode


def cycle_view_mode(state: AppState) -> str:
    """The next view mode (mesh → bones → mesh + x-ray bones → mesh); a notice says which.
    Without a mesh nothing changes (bones are all there is)."""
    if state.doc.mesh is None:
        state.info("This character has no mesh: drawn as bones")
        return state.view_mode
    i = VIEW_MODES.index(state.view_mode) if state.view_mode in VIEW_MODES else -1
    set_view_mode(state, VIEW_MODES[(i + 1) % len(VIEW_MODES)])
    state.info(f"View: {VIEW_MODE_LABELS[state.view_mode]}")
    return state.view_mode
