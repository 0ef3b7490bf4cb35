"""The seam every app mode plugs into: :class:`Mode`.

A *mode* decides what the app does each frame and how the view and the keys behave: the pose
mode (:class:`~animik.app.modes.pose.PoseMode`: the timeline's playback and the live IK) and
retarget mode (:class:`~animik.app.modes.retarget.RetargetMode`: a BVH retargeted onto the rig
every frame). The document says which mode the app is in: ``Document.mode`` holds the mode's
undoable data (a :class:`~animik.app.document.ModeData` subclass) or None for the pose mode, so
entering and leaving a mode are undo steps like any edit; :func:`animik.app.modes.current`
finds the :class:`Mode` that runs it. No GL here: a mode's panel lives in ``animik/app/ui/``
and is listed in :mod:`animik.app.ui.mode_panels`.
"""

from __future__ import annotations

from typing import ClassVar

from ..instances import ViewGeometry
from ..state import AppState, Drag


class Mode:
    """What an app mode does. Subclasses override the hooks they need; the defaults are the
    pose mode's behaviour (draw the character and every handle, no extra keys, the controller's
    own end of a drag).

    Attributes:
        name: registry name (the :class:`~animik.app.document.ModeData` subclass's ``name``).
        title: shown in menus and the status bar.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""

    def update(self, state: AppState, dt: float) -> None:
        """One app frame, before the UI and the view are drawn: move the pose (write
        ``state.doc`` with :meth:`~animik.app.document.Document.with_pose`) and record the
        frame's numbers (``state.stats.record``).

        Args:
            state: the app state.
            dt: seconds since the last frame.
        """
        raise NotImplementedError

    def decorate_view(self, state: AppState, geom: ViewGeometry) -> ViewGeometry:
        """The view geometry of this mode: ``geom`` (the character, its handles, error lines,
        the gizmo) with instances added, or handles taken away. Picking uses what this
        returns, so what can be picked is what is drawn."""
        return geom

    def view_key(self, state: AppState) -> tuple:
        """What :meth:`decorate_view` depends on besides the document, the camera and the
        selection (the view geometry is rebuilt for picking when it changes)."""
        return ()

    def on_key_press(self, state: AppState, symbol: int, modifiers: int) -> bool:
        """A key pressed in the viewport (after Ctrl shortcuts and Esc, before the view and
        effector keys). Returns True when the mode used it."""
        return False

    def on_mouse_press(self, state: AppState, px: float, py: float, button: int,
                       modifiers: int) -> bool:
        """A mouse button pressed in the view at view pixel ``(px, py)``, before handle
        picking. Returns True when the mode takes the press: the drag that follows goes to
        :meth:`on_mouse_drag` (not to handles or the camera)."""
        return False

    def on_mouse_drag(self, state: AppState, px: float, py: float, modifiers: int) -> None:
        """The mouse moved with the button of a press the mode took (:meth:`on_mouse_press`)."""

    def open_with(self, state: AppState) -> bool:
        """A document just opened (:func:`animik.app.modes.open_scene`) may ask for this mode:
        enter it and return True if so (drive mode: a "... drive ..." scene)."""
        return False

    def end_drag(self, state: AppState, drag: Drag) -> bool:
        """A handle drag that moved was released (``state.drag`` is already None; the edit is
        committed after this). Returns True when the mode turned it into its own edit, False
        for the default (pin on release)."""
        return False


__all__ = ["Mode"]
