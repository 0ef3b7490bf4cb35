"""Everything that changes the app state: open, save, edit, undo/redo, and the per-frame IK.

No GL and no GUI here, so the interaction tests drive the same functions as the window. Every
user edit goes through :func:`set_doc` (which bumps ``state.version``) and ends with
:func:`commit` (one undo step); the per-frame IK replaces ``doc.q`` without either.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AnimikError
from ..io.scene import Scene, SceneTarget, load_scene, save_scene
from ..motion import Motion
from ..rotations import axis_angle_to_matrix
from ..skeleton import Skeleton
from .camera import OrbitCamera
from .state import FREE, PINNED, TARGET, AppState, Document, Effector, History, SolverSettings

DEFAULT_SCENE_NAME = "default.toml"

# The app solves tighter than the library default (1 mm): a dragged hand sits on its handle.
APP_TOLERANCES = {"tol_position": 1e-4, "tol_rotation": 1e-3}  # m, rad

# Errors a bad file or a bad setting can raise; anything else is a bug and propagates.
USER_ERRORS = (AnimikError, OSError, ValueError, KeyError, UnicodeDecodeError)


# ====================================================================== solvers
def available_solvers() -> list[str]:
    """Solver names whose module imports (FIK first)."""
    from ..ik import SOLVERS

    out = []
    for name, mod in SOLVERS.items():
        try:
            importlib.import_module(mod)
        except Exception:  # a solver module that does not import is left out, not fatal
            continue
        out.append(name)
    return out


def default_solver() -> str:
    names = available_solvers()
    return "fik" if "fik" in names else ("dls" if "dls" in names else names[0])


def solver_defaults(name: str) -> dict[str, Any]:
    """The solver module's documented option defaults (``DEFAULTS``), without ``state``/``callback``."""
    from ..ik import SOLVERS

    try:
        mod = importlib.import_module(SOLVERS[name])
    except Exception:  # unknown or broken solver module: no options to show
        return {}
    d = dict(getattr(mod, "DEFAULTS", {}))
    for k in ("state", "callback", "max_iterations"):
        d.pop(k, None)
    d.update({k: v for k, v in APP_TOLERANCES.items() if k in d})
    return d


# ====================================================================== documents and scenes
def bvh_document(path: str | Path, motion: Motion, tolerance: float | None = None,
                 position_tolerance: float | None = None) -> Document:
    """A document on a BVH file's skeleton with its motion as the clip (named after the file;
    every frame a key, or keys reduced within the tolerances, rad / m), at frame 0."""
    from ..anim import clip_from_motion

    path = Path(path)
    clip = clip_from_motion(motion, tolerance, position_tolerance, name=path.stem)
    q = clip.sample([0.0], ik=False)[0]
    return Document.new(motion.skeleton, str(path), q, motion=motion, frame=0, name=path.stem,
                        solver=SolverSettings(default_solver(), 20, {}), clips=(clip,), clip=0)


def document_from_scene(scene: Scene, motion=None) -> Document:
    skel = scene.skeleton
    clips = tuple(scene.clips)
    time = 0.0
    if motion is not None and not clips:
        # a scene on a BVH rig without clips (saved before clips existed): the BVH's motion
        from ..anim import clip_from_motion

        clips = (clip_from_motion(motion, name=Path(scene.rig).stem),)
        time = scene.frame / motion.fps
    doc = Document.new(skel, scene.rig, scene.q, name=scene.name, frame=scene.frame, motion=motion,
                       clips=clips, clip=0 if clips else -1, time=time)
    effs = list(doc.effectors)
    for t in scene.targets_list:
        i = skel.site_index(t.site)
        effs[i] = Effector(t.site, PINNED if t.pinned else TARGET, t.position, t.rotation, t.weight)
    solver = scene.solver
    if solver not in available_solvers():
        solver = default_solver()
    opts = {solver: dict(scene.solver_options)} if solver == scene.solver else {}
    return doc.replace(effectors=tuple(effs),
                       solver=SolverSettings(solver, scene.iterations_per_frame, opts))


def scene_from_state(state: AppState) -> Scene:
    """The current document (and camera) as a :class:`~animik.io.scene.Scene`."""
    doc = state.doc
    targets = tuple(
        SceneTarget(e.site, e.position, e.rotation, e.mode == PINNED, e.weight)
        for e in doc.effectors if e.active)
    return Scene(rig=doc.rig, skeleton=doc.skeleton, q=doc.q, targets_list=targets,
                 solver=doc.solver.name, iterations_per_frame=doc.solver.iterations,
                 solver_options=dict(doc.solver.current), camera=state.camera.to_dict(),
                 name=doc.name, frame=doc.frame, path=state.scene_path, clips=doc.clips)


def scenes_dir() -> Path | None:
    """The built-in scenes folder: ``scenes/`` of a checkout or editable install, else the
    packaged ``animik._scenes`` (a wheel maps it onto the same folder); None when neither."""
    d = Path(__file__).resolve().parents[2] / "scenes"
    if d.is_dir():
        return d
    import importlib.util

    # animik._scenes is a namespace package (the scenes/ folder has no __init__.py), for which
    # importlib.resources.files() gives a MultiplexedPath rather than a folder: ask the spec.
    try:
        spec = importlib.util.find_spec("animik._scenes")
    except (ModuleNotFoundError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    p = Path(locations[0]) if locations else None
    return p if p is not None and p.is_dir() else None


def default_scene_path() -> Path | None:
    d = scenes_dir()
    if d is not None and (d / DEFAULT_SCENE_NAME).is_file():
        return d / DEFAULT_SCENE_NAME
    return None


def open_document(target: str | Path | None) -> tuple[Document, Path | None, Mapping | None]:
    """Open a scene file, a built-in rig, a rig file or a BVH file.

    Args:
        target: path or built-in rig name; ``None`` opens ``scenes/default.toml`` (or body95).

    Returns:
        ``(document, scene path or None, camera dict or None)``.

    Raises:
        AnimikError, OSError: the target cannot be opened (the message says why).
    """
    from ..rigs import BUILTIN_RIGS, load_rig

    if target is None:
        p = default_scene_path()
        if p is None:
            target = "body95"
        else:
            target = p
    spec = str(target)
    if spec in BUILTIN_RIGS:
        skel = load_rig(spec)
        doc = Document.new(skel, spec, name=spec,
                           solver=SolverSettings(default_solver(), 20, {}))
        return doc, None, None
    path = Path(spec).expanduser()
    suffix = path.suffix.lower()
    if suffix == ".bvh":
        from ..io.bvh import read_bvh

        return bvh_document(path, read_bvh(path)), None, None
    if suffix == ".toml":
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {str(path)!r}")
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
        if "animik-rig" in head and "animik-scene" not in head:
            skel = load_rig(path)
            return Document.new(skel, str(path), name=skel.name,
                                solver=SolverSettings(default_solver(), 20, {})), None, None
        scene = load_scene(path)
        return document_from_scene(scene, scene.motion), path, scene.camera
    skel: Skeleton = load_rig(spec)  # raises RigNotFoundError listing the built-in rigs
    return Document.new(skel, spec, name=skel.name,
                        solver=SolverSettings(default_solver(), 20, {})), None, None


def make_state(target: str | Path | None = None, save_path: str | Path | None = None,
               size: tuple[int, int] = (1280, 800)) -> AppState:
    """A fresh :class:`AppState` on ``target`` (see :func:`open_document`)."""
    doc, scene_path, camera = open_document(target)
    cam = OrbitCamera(target=np.zeros(3), width=size[0], height=size[1])
    state = AppState(doc=doc, history=History(doc), camera=cam, window_size=size,
                     view_rect=(0, 0, size[0], size[1]))
    state.scene_path = scene_path
    state.save_path = Path(save_path) if save_path is not None else None
    if scene_path is not None:
        state.browser_dir = scene_path.parent
    _setup_camera(state, camera)
    from .drive_mode import enter, wants_drive

    if wants_drive(state):  # a "... drive ..." scene on a rig with balance data
        enter(state)
    return state


def _setup_camera(state: AppState, camera: Mapping | None) -> None:
    cam = state.camera
    fk = state.fk
    cam.yaw, cam.pitch = OrbitCamera(np.zeros(3)).yaw, OrbitCamera(np.zeros(3)).pitch
    cam.frame(np.concatenate([fk.joint_positions, fk.site_positions]), margin=1.15)
    if camera:
        cam.apply_dict(dict(camera))
    cam.set_home()


def open_into(state: AppState, target: str | Path) -> bool:
    """Replace the document by ``target`` (undoable). On error: a message, nothing lost.

    Returns:
        True when opened.
    """
    try:
        doc, scene_path, camera = open_document(target)
    except USER_ERRORS as e:
        state.error(f"Cannot open {target}: {_describe(e)}")
        return False
    replace_document(state, doc, scene_path, camera, f"open {Path(str(target)).name}")
    state.info(f"Opened {target}")
    return True


def replace_document(state: AppState, doc: Document, scene_path: Path | None,
                     camera: Mapping | None, label: str) -> None:
    """Make ``doc`` the document (one undo step), resetting selection, playback and the view."""
    cancel_drag(state)
    state.playing = False
    state.selected_key = None
    state.drive = None  # drive mode belongs to the old rig
    set_doc(state, doc)
    commit(state, label)
    state.scene_path = scene_path
    state.selected_site = state.hover_site = None
    state.selected_joint = state.hover_joint = None
    if scene_path is not None:
        state.browser_dir = scene_path.parent
    _setup_camera(state, camera)


def save(state: AppState, path: str | Path | None = None) -> Path | None:
    """Save the scene (Ctrl+S). Returns the path, or None after reporting an error."""
    path = Path(path) if path is not None else state.default_save_path()
    try:
        out = save_scene(scene_from_state(state), path)
    except USER_ERRORS as e:
        state.error(f"Cannot save {path}: {_describe(e)}")
        return None
    if state.save_path is None:
        state.scene_path = out
    state.info(f"Saved {out}")
    return out


def _describe(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return f"{e.strerror}" + (f": {e.filename}" if e.filename else "")
    return str(e) or type(e).__name__


# ====================================================================== edits and history
def set_doc(state: AppState, doc: Document) -> None:
    """Replace the document after a user edit (not yet an undo step: see :func:`commit`)."""
    state.doc = doc
    state.version += 1


def commit(state: AppState, label: str) -> bool:
    """Make the current document one undo step (no-op when nothing changed)."""
    return state.history.push(label, state.doc)


def undo(state: AppState) -> bool:
    if state.drag is not None:
        cancel_drag(state)
        return True
    r = state.history.undo()
    if r is None:
        return False
    _restore(state, r[1])
    state.info(f"Undo {r[0]}")
    return True


def redo(state: AppState) -> bool:
    if state.drag is not None:
        return False
    r = state.history.redo()
    if r is None:
        return False
    _restore(state, r[1])
    state.info(f"Redo {r[0]}")
    return True


def _restore(state: AppState, doc: Document) -> None:
    skel_changed = doc.skeleton is not state.doc.skeleton
    state.playing = False
    state.doc = doc
    state.version += 1
    state.ik.solver_state = None  # the filter states belong to the pose we left
    if skel_changed:
        state.selected_site = state.hover_site = None
        state.selected_joint = state.hover_joint = None
        _setup_camera(state, None)


def cancel_drag(state: AppState) -> None:
    """Abort a drag in progress, restoring the document from before it (Esc)."""
    if state.drag is not None:
        set_doc(state, state.drag.start_doc)
        state.drag = None
        state.ik.solver_state = None


def set_dof(state: AppState, k: int, value: float) -> None:
    """Forward-kinematics edit of DoF ``k`` (clipped into its limits).

    Constrained effectors that this DoF moves are carried along (their targets follow the FK
    edit), so the IK does not pull the joint back; the others keep their targets.
    """
    skel = state.skeleton
    state.playing = False  # an edit stops playback at the playhead
    value = float(np.clip(value, skel.lower[k], skel.upper[k]))
    q = state.doc.q.copy()
    q[k] = value
    doc = state.doc.replace(q=q)
    moved = skel.site_dof_mask[:, k]
    if moved.any():
        from ..kinematics import forward_kinematics

        fk = forward_kinematics(skel, q)
        effs = list(doc.effectors)
        for i, e in enumerate(effs):
            if moved[i] and e.active:
                rot = fk.site_rotations[i] if e.oriented else None
                effs[i] = e.replace(position=fk.site_positions[i], rotation=rot)
        doc = doc.replace(effectors=tuple(effs))
    set_doc(state, doc)


def set_effector(state: AppState, eff: Effector) -> None:
    set_doc(state, state.doc.with_effector(eff))


def set_mode(state: AppState, site: str, mode: str, label: str | None = None) -> None:
    """Free / target / pin an effector (one undo step). A newly constrained effector's target is
    where its site is now."""
    e = state.doc.effector(site)
    if e.mode == mode:
        return
    if not e.active:
        i = state.skeleton.site_index(site)
        fk = state.fk
        e = e.replace(position=fk.site_positions[i],
                      rotation=fk.site_rotations[i] if e.oriented else None)
    set_effector(state, e.replace(mode=mode))
    commit(state, label or f"{mode} {site}")


def toggle_pin(state: AppState, site: str) -> None:
    """P: pin an effector where it is, or turn a pin back into a target."""
    e = state.doc.effector(site)
    set_mode(state, site, TARGET if e.mode == PINNED else PINNED,
             f"{'unpin' if e.mode == PINNED else 'pin'} {site}")


def free(state: AppState, site: str) -> None:
    set_mode(state, site, FREE, f"free {site}")


def set_oriented(state: AppState, site: str, on: bool) -> None:
    """Turn an effector's target into a 6-D target (position + orientation) or back (undoable)."""
    e = state.doc.effector(site)
    if e.oriented == on:
        return
    i = state.skeleton.site_index(site)
    rot = np.array(state.fk.site_rotations[i]) if on else None
    if not e.active and on:
        e = e.replace(mode=TARGET, position=state.fk.site_positions[i])
    set_effector(state, e.replace(rotation=rot))
    commit(state, f"{'orient' if on else 'unorient'} {site}")


def free_all(state: AppState) -> None:
    effs = tuple(e.replace(mode=FREE) for e in state.doc.effectors)
    set_doc(state, state.doc.replace(effectors=effs))
    commit(state, "free all")


def reset_pose(state: AppState) -> None:
    """Rest pose, every effector free (undoable)."""
    d = state.doc
    doc = Document.new(state.skeleton, d.rig, name=d.name, solver=d.solver, motion=d.motion,
                       clips=d.clips, clip=d.clip, time=d.time)
    set_doc(state, doc)
    commit(state, "reset pose")


def set_frame(state: AppState, frame: int) -> None:
    """Take the pose from frame ``frame`` of the BVH clip (targets are carried along)."""
    m = state.doc.motion
    if m is None:
        return
    frame = int(np.clip(frame, 0, m.n_frames - 1))
    from ..kinematics import forward_kinematics

    q = np.array(m.q[frame])
    fk = forward_kinematics(state.skeleton, q)
    effs = tuple(e.replace(position=fk.site_positions[i],
                           rotation=fk.site_rotations[i] if e.oriented else None)
                 for i, e in enumerate(state.doc.effectors))
    set_doc(state, state.doc.replace(q=q, frame=frame, effectors=effs))


def set_solver(state: AppState, settings: SolverSettings) -> None:
    """Apply new solver settings live (commit separately, when the widget edit ends)."""
    set_doc(state, state.doc.replace(solver=settings))
    state.ik.failed = ""
    state.ik.solver_state = None


def rotate_target(rot: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    return axis_angle_to_matrix(np.asarray(axis, float), np.asarray(angle, float)) @ rot


# ====================================================================== the per-frame IK
def active_targets(state: AppState) -> dict[str, Any]:
    return {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
            for e in state.doc.effectors if e.active}


def step_ik(state: AppState) -> None:
    """Run the solver once for this frame (warm-started), if anything is constrained.

    The problem is rebuilt only when the set of constrained sites, their kind (3 or 6 rows) or
    weights change; otherwise only the target poses are updated (``IKProblem.with_targets``).
    The FIK filter states come back in ``result.state`` and go into the next frame's call.
    """
    from ..ik import build_problem, solve_problem

    doc = state.doc
    cache = state.ik
    effs = [e for e in doc.effectors if e.active]
    if not effs or not state.live_ik:
        cache.converged = True
        state.stats.record(0.0, 0, 0.0)
        return
    if cache.failed:
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    if cache.converged and cache.solved_version == state.version:
        # nothing moved since the last converged solve: no work, flat plot
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    if constraints_met(state, effs):
        # Nothing to do: solving anyway would let the null-space terms (limit avoidance,
        # reference pull) drift a pose the user just set, undid or opened.
        cache.converged = True
        cache.solved_version = state.version
        state.stats.record(_max_error_mm(state, effs), 0, 0.0)
        return
    t0 = time.perf_counter()
    targets = {e.site: (e.position if e.rotation is None else (e.position, e.rotation))
               for e in effs}
    key = (id(doc.skeleton), tuple((e.site, e.oriented, e.weight) for e in effs))
    try:
        if cache.key != key or cache.problem is None:
            cache.problem = build_problem(doc.skeleton, doc.q, targets,
                                          weights={e.site: e.weight for e in effs})
            cache.key = key
            cache.solver_state = None
        else:
            cache.problem = cache.problem.with_targets(targets)
        opts = solver_options(doc.solver)
        result = solve_problem(cache.problem, doc.q, doc.solver.name,
                               max_iterations=int(doc.solver.iterations),
                               state=cache.solver_state, **opts)
    except Exception as e:  # a solver bug must not take the user's scene down with it
        if not isinstance(e, USER_ERRORS):
            import traceback

            traceback.print_exc()
        cache.failed = f"IK solver {doc.solver.name!r} failed: {_describe(e)}"
        state.error(cache.failed + " (change the solver settings to retry)")
        state.stats.record(state.stats.last_error_mm, 0, 0.0)
        return
    ik_ms = 1e3 * (time.perf_counter() - t0)
    cache.solver_state = result.state
    cache.last_result = result
    cache.converged = bool(result.converged) or result.iterations == 0
    cache.solved_version = state.version
    if not np.array_equal(result.q, doc.q):
        state.doc = doc.replace(q=result.q)
    if state.drag is None:
        state.history.amend(state.doc)
    state.stats.record(1e3 * result.max_error, result.iterations, ik_ms)


def solver_options(settings: SolverSettings) -> dict[str, Any]:
    """The keyword options the app passes to the solver: the user's, over the app defaults."""
    opts = dict(APP_TOLERANCES)
    opts.update(settings.current)
    return opts


def constraints_met(state: AppState, effs) -> bool:
    """Every constrained effector within the solver's tolerance of its target."""
    opts = solver_options(state.doc.solver)
    tol_p = float(opts["tol_position"])
    tol_r = float(opts["tol_rotation"])
    fk = state.fk
    skel = state.skeleton
    for e in effs:
        i = skel.site_index(e.site)
        if np.linalg.norm(fk.site_positions[i] - e.position) > tol_p:
            return False
        if e.rotation is not None:
            r = fk.site_rotations[i].T @ e.rotation
            if np.arccos(np.clip(0.5 * (np.trace(r) - 1.0), -1.0, 1.0)) > tol_r:
                return False
    return True


def _max_error_mm(state: AppState, effs) -> float:
    fk = state.fk
    skel = state.skeleton
    return 1e3 * max((float(np.linalg.norm(fk.site_positions[skel.site_index(e.site)] - e.position))
                      for e in effs), default=0.0)


def update(state: AppState, dt: float) -> None:
    """Advance the app by one frame: playback (the pose from the clip), then the IK step
    (renderers then draw ``state``)."""
    if state.doc.retarget is not None:  # retarget mode: the retargeter poses the character
        from .retarget_mode import update as retarget_update

        retarget_update(state, dt)
        return
    if state.drive is not None:  # drive mode: the balance MPC moves the base (drive_mode.py)
        from .drive_mode import update as drive_update

        drive_update(state, dt)
        return
    if state.playing:
        from .timeline import advance

        advance(state, dt)
    step_ik(state)


# ====================================================================== selection helpers
def selection_points(state: AppState) -> np.ndarray:
    """Points to frame with F: the selected handle or joint (with its subtree), else everything."""
    fk = state.fk
    skel = state.skeleton
    if state.selected_site is not None:
        i = skel.site_index(state.selected_site)
        e = state.doc.effectors[i]
        pts = [fk.site_positions[i]] + ([e.position] if e.active else [])
        j = skel.site_joint[i]
        pts.append(fk.joint_positions[j])
        return np.array(pts)
    if state.selected_joint is not None:
        j = state.selected_joint
        sub = skel.joint_ancestor_mask[:, j]
        pts = fk.joint_positions[sub]
        p = skel.parents[j]
        if p >= 0:
            pts = np.concatenate([pts, fk.joint_positions[p][None]])
        return pts
    return np.concatenate([fk.joint_positions, fk.site_positions])


def frame_selected(state: AppState) -> None:
    pts = selection_points(state)
    cam = state.camera
    d = cam.distance
    cam.frame(pts, margin=1.6)
    if state.selected_site is None and state.selected_joint is None:
        return
    cam.distance = min(max(cam.distance, 0.4), max(d, 0.4))
