"""The app's actions in one namespace: every function that changes the app state.

A facade over the modules that hold them, for panels, scripts and tests
(``from animik.app import actions; actions.make_state("walk.bvh")``):

* :mod:`animik.app.documents`: open / save documents, :func:`make_state`;
* :mod:`animik.app.edits`: the edit / commit protocol, undo / redo, effector and DoF edits;
* :mod:`animik.app.solve`: the pose mode's per-frame IK, the solvers and their options;
* :mod:`animik.app.framing`: framing the camera;
* :mod:`animik.app.modes`: :func:`update`, one app frame of the current mode.

The timeline's actions are :mod:`animik.app.timeline`, retarget mode's
:mod:`animik.app.modes.retarget`. Modules inside ``animik.app`` import the module that holds a
function rather than this facade (only the panels in ``animik.app.ui`` and the GUI use it).
"""

from __future__ import annotations

from pathlib import Path

from . import documents, modes
from .documents import (
    DEFAULT_SCENE_NAME,
    bvh_document,
    default_save_path,
    default_scene_path,
    document_from_scene,
    is_shipped,
    needs_save_as,
    open_document,
    open_into,
    replace_document,
    save,
    scene_from_state,
    scenes_dir,
)
from .edits import (
    USER_ERRORS,
    cancel_drag,
    commit,
    describe,
    free,
    free_all,
    redo,
    reset_pose,
    rotate_target,
    set_doc,
    set_dof,
    set_effector,
    set_frame,
    set_mode,
    set_oriented,
    set_solver,
    toggle_pin,
    undo,
)
from .framing import frame_selected, selection_points, setup_camera
from .modes import update
from .solve import (
    APP_TOLERANCES,
    active_targets,
    available_solvers,
    constraints_met,
    default_solver,
    solver_defaults,
    solver_options,
    step_ik,
)
from .state import AppState, History
from .view_mode import cycle_view_mode, set_view_mode


def make_state(target: str | Path | None = None, save_path: str | Path | None = None,
               size: tuple[int, int] = (1280, 800), bvh_skeleton: bool = False) -> AppState:
    """A fresh app state on ``target`` (:func:`animik.app.documents.make_state`), in the mode
    its document asks for (:func:`animik.app.modes.open_scene`: a "... drive ..." scene opens
    in drive mode)."""
    state = documents.make_state(target, save_path=save_path, size=size,
                                 bvh_skeleton=bvh_skeleton)
    modes.open_scene(state)
    state.history = History(state.doc)  # opened in its mode: not an undo step
    state.mark_scene_path(state.scene_path)
    return state


__all__ = [
    "APP_TOLERANCES", "DEFAULT_SCENE_NAME", "USER_ERRORS", "active_targets", "available_solvers",
    "bvh_document", "cancel_drag", "commit", "constraints_met", "cycle_view_mode",
    "default_scene_path", "default_save_path", "default_solver", "describe", "is_shipped",
    "needs_save_as", "document_from_scene", "frame_selected", "free", "free_all",
    "make_state", "open_document", "open_into", "redo", "replace_document", "reset_pose",
    "rotate_target", "save", "scene_from_state", "scenes_dir", "selection_points",
    "set_doc", "set_dof", "set_effector", "set_frame", "set_mode", "set_oriented", "set_solver",
    "set_view_mode", "setup_camera", "solver_defaults", "solver_options", "step_ik", "toggle_pin", "undo",
    "update",
]
