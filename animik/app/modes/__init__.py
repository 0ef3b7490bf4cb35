"""App modes: what the app does each frame, what the view shows, what the keys do.

The document says which mode the app is in (``Document.mode``: the mode's undoable
:class:`~animik.app.document.ModeData`, None for the pose mode), so undo and redo switch modes
with the document. :func:`current` is the app's one switch: the per-frame update
(:func:`update`), the view geometry (:func:`animik.app.geometry.build_view`), the viewport's
keys and the end of a handle drag (:class:`animik.app.controller.ViewportController`) all ask
it instead of testing for a particular mode.

Adding a mode (see docs/app.md, "Adding a mode"): a module (or package) under
``animik/app/modes/`` with a :class:`~animik.app.document.ModeData` subclass (its undoable
data, ``name`` set) and a :class:`~animik.app.modes.base.Mode` subclass (its hooks), plus one
line in :data:`REGISTRY` below; its panel, if any, is one line in
:mod:`animik.app.ui.mode_panels`.
"""

from __future__ import annotations

from ..physics import update_physics
from ..state import AppState
from .base import Mode
from .drive import DriveMode
from .physics import PhysicsMode
from .pose import PoseMode
from .retarget import RetargetMode

#: The pose mode: ``Document.mode`` is None.
POSE = PoseMode()
#: Every other mode by its name (``ModeData.name`` of the data it runs on).
REGISTRY: dict[str, Mode] = {m.name: m for m in (RetargetMode(), DriveMode(), PhysicsMode())}


def current(state: AppState) -> Mode:
    """The mode the document is in.

    Raises:
        KeyError: ``Document.mode`` holds data of a mode that is not registered (a bug).
    """
    data = state.doc.mode
    return POSE if data is None else REGISTRY[data.name]


def open_scene(state: AppState) -> None:
    """Enter the mode a freshly opened document asks for, if any (:meth:`Mode.open_with`)."""
    for mode in REGISTRY.values():
        if mode.open_with(state):
            return


def update(state: AppState, dt: float) -> None:
    """Advance the app by one frame: the current mode's update (renderers then draw ``state``)."""
    current(state).update(state, dt)
    if state.physics is not None and state.physics.show:
        update_physics(state, dt)  # the overlay evaluates whatever pose the mode made


__all__ = ["POSE", "REGISTRY", "Mode", "current", "open_scene", "update"]
