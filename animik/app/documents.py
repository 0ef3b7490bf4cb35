"""Documents: open a scene, a rig or a BVH file as a :class:`Document`, save a scene, make a
fresh :class:`AppState`.

No GL. Errors a user can cause (an unreadable file, an unknown rig) are reported in the banner
by :func:`open_into` and :func:`save`; :func:`open_document` raises them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..anim import clip_from_motion
from ..bodies import generated_body
from ..character import Character, SkinnedMesh
from ..io.robot_mesh import DISPLAY_TRIANGLES, robot_mesh
from ..motion import Motion
from ..rigs import is_builtin, load_character, recognise_hierarchy, recognise_rig, resolve_rig
from ..scene import Scene, SceneTarget, load_scene, save_scene
from ..skeleton import Skeleton
from .camera import OrbitCamera
from .edits import USER_ERRORS, cancel_drag, commit, describe, set_doc
from .framing import setup_camera
from .solve import available_solvers, default_solver
from .state import PINNED, TARGET, AppState, Document, Effector, History, SolverSettings

DEFAULT_SCENE_NAME = "default.toml"
ROBOT_KINDS = ("urdf", "xml", "mjcf")  # robot files: their link meshes are the body


def bvh_document(path: str | Path, motion: Motion, tolerance: float | None = None,
                 position_tolerance: float | None = None, progress=None) -> Document:
    """A document on a BVH file's skeleton with its motion as the clip (named after the file;
    every frame a key, or keys reduced within the tolerances, rad / m), at frame 0, with a
    generated body. ``progress(fraction)``: the key reduction's progress (a background task)."""
    path = Path(path)
    clip = clip_from_motion(motion, tolerance, position_tolerance, name=path.stem,
                            progress=progress)
    q = clip.sample([0.0], ik=False)[0]
    return with_body(Document.new(motion.skeleton, str(path), q, motion=motion, frame=0,
                                  name=path.stem, solver=SolverSettings(default_solver(), 20, {}),
                                  clips=(clip,), clip=0))


def rig_bvh_document(path: str | Path, motion: Motion) -> Document:
    """A document on a built-in rig whose motion a BVH file holds (``motion`` from
    :func:`animik.rigs.recognise_rig`: a clip ``animik retarget --to body95``, ``animik filter``
    or an export wrote): the rig itself (its masses, soles, limits, generated body) with the
    motion as the clip, every frame a key, at frame 0. Saved, it is a scene on the built-in rig."""
    path = Path(path)
    rig = str(motion.meta.get("bvh_rig", motion.skeleton.name))
    clip = clip_from_motion(motion, name=path.stem)
    q = clip.sample([0.0], ik=False)[0]
    return with_body(Document.new(motion.skeleton, rig, q, motion=motion, frame=0,
                                  name=path.stem, solver=SolverSettings(default_solver(), 20, {}),
                                  clips=(clip,), clip=0))


def character_document(path: str | Path, character: Character) -> Document:
    """A document on a character (a rigged glTF file): its skeleton and skinned mesh, its
    clips (every frame a key) with the first current, at its first frame (rest pose without
    clips)."""
    path = Path(path)
    names: list[str] = []
    clips = []
    for i, motion in enumerate(character.clips):
        base = str(motion.meta.get("clip") or f"{path.stem} {i + 1}")
        name, k = base, 1
        while name in names:
            k += 1
            name = f"{base} {k}"
        names.append(name)
        clips.append(clip_from_motion(motion, name=name))
    q = clips[0].sample([0.0], ik=False)[0] if clips else character.skeleton.rest_q
    return Document.new(character.skeleton, str(path), q,
                        motion=character.clips[0] if character.clips else None, frame=0,
                        name=character.name or path.stem,
                        solver=SolverSettings(default_solver(), 20, {}), clips=tuple(clips),
                        clip=0 if clips else -1, mesh=character.mesh)


def _character_mesh(rig: str, skel: Skeleton) -> SkinnedMesh | None:
    """The skinned mesh of a scene's ``.glb`` / ``.gltf`` rig (None: none, or it no longer
    fits the scene's skeleton)."""
    suffix = Path(rig).suffix.lower()
    if suffix[1:] in ROBOT_KINDS:
        try:
            # the scene's skeleton is the robot file's
            mesh = robot_mesh(skel, max_triangles=DISPLAY_TRIANGLES)[0]
        except (*USER_ERRORS, KeyError):
            return None
        return mesh
    if suffix not in (".glb", ".gltf"):
        return None
    try:
        ch = load_character(rig)
    except USER_ERRORS:
        return None
    if ch.mesh is None or ch.skeleton.joint_names != skel.joint_names:
        return None
    return ch.mesh


def document_from_scene(scene: Scene, motion: Motion | None = None) -> Document:
    skel = scene.skeleton
    clips = tuple(scene.clips)
    time = 0.0
    if motion is not None and not clips:
        # a scene on a BVH rig without clips (saved before clips existed): the BVH's motion
        clips = (clip_from_motion(motion, name=Path(scene.rig).stem),)
        time = scene.frame / motion.fps
    doc = Document.new(skel, scene.rig, scene.q, name=scene.name, frame=scene.frame, motion=motion,
                       clips=clips, clip=0 if clips else -1, time=time,
                       mesh=_character_mesh(scene.rig, skel))
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
    """The current document (and camera) as a :class:`~animik.scene.Scene`."""
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


def open_document(target: str | Path | None, bvh_skeleton: bool = False
                  ) -> tuple[Document, Path | None, Mapping | None]:
    """Open a scene file, a built-in rig, a rig file, a BVH file or a glTF character.

    A BVH file whose hierarchy is a built-in rig's (:func:`animik.rigs.recognise_rig`: one that
    ``animik retarget --to body95`` wrote) opens as that rig with its motion mapped onto the
    rig's DoFs, as ``animik feasibility`` checks it; ``bvh_skeleton`` opens it as the file's
    own skeleton instead.

    Args:
        target: path or built-in rig name; ``None`` opens ``scenes/default.toml`` (or body95).
        bvh_skeleton: a ``.bvh`` opens as its own skeleton even when a rig's is recognised.

    Returns:
        ``(document, scene path or None, camera dict or None)``.

    Raises:
        AnimikError, OSError: the target cannot be opened (the message says why).
    """
    if target is None:
        p = default_scene_path()
        if p is None:
            target = "body95"
        else:
            target = p
    spec = str(target)
    path = Path(spec).expanduser()
    if not is_builtin(spec) and path.suffix.lower() == ".toml":
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {str(path)!r}")
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
        if "animik-rig" not in head or "animik-scene" in head:
            scene = load_scene(path)
            return with_body(document_from_scene(scene, scene.motion)), path, scene.camera
    if not is_builtin(spec) and path.suffix.lower() in (".glb", ".gltf"):
        # a rigged glTF character (or a static prop): skeleton, skinned mesh and its clips
        ch = load_character(path)
        if ch.mesh is not None:
            return character_document(path, ch), None, None
    src = resolve_rig(spec)  # one resolver (animik.rigs); RigNotFoundError lists the rigs
    if src.motion is not None:
        motion = src.motion
        if not bvh_skeleton and src.kind == "bvh":
            rig_motion = recognise_rig(motion)
            if rig_motion is not None:
                return rig_bvh_document(src.path, rig_motion), None, None
            rig = recognise_hierarchy(motion.skeleton)
            if rig is not None:
                # the rig's hierarchy with rotations its joints cannot make (animik filter
                # --model's output twists knees): its own skeleton, said in the banner. (Not
                # with_model_of's rig masses: its contact model lives in the skeleton's cache,
                # which does not travel to Make feasible's worker process.)
                motion = Motion(motion.skeleton, motion.q, motion.fps,
                                {**dict(motion.meta), "bvh_model": rig})
        return bvh_document(src.path, motion), None, None
    mesh = (robot_mesh(src.skeleton, max_triangles=DISPLAY_TRIANGLES)[0]  # its link meshes
            if src.kind in ROBOT_KINDS else None)
    return with_body(Document.new(src.skeleton, str(src.path) if src.path else spec,
                                  name=src.skeleton.name,
                                  solver=SolverSettings(default_solver(), 20, {}),
                                  mesh=mesh)), None, None


def with_body(doc: Document) -> Document:
    """``doc`` with a generated body (:func:`animik.bodies.generated_body`, cached per skeleton)
    when it has no mesh of its own; a document with a mesh (e.g. a glTF character's) is kept."""
    if doc.mesh is not None:
        return doc
    return doc.replace(mesh=generated_body(doc.skeleton))


def make_state(target: str | Path | None = None, save_path: str | Path | None = None,
               size: tuple[int, int] = (1280, 800), bvh_skeleton: bool = False) -> AppState:
    """A fresh :class:`AppState` on ``target`` (see :func:`open_document`; ``bvh_skeleton``
    is kept as the Open browser's choice for later files too)."""
    doc, scene_path, camera = open_document(target, bvh_skeleton)
    cam = OrbitCamera(target=np.zeros(3), width=size[0], height=size[1])
    state = AppState(doc=doc, history=History(doc), camera=cam, window_size=size,
                     view_rect=(0, 0, size[0], size[1]))
    state.scene_path = scene_path
    state.bvh_skeleton = bool(bvh_skeleton)
    state.save_path = Path(save_path) if save_path is not None else None
    if scene_path is not None:
        state.browser_dir = scene_path.parent
    setup_camera(state, camera)
    note = recognised_note(doc, target)
    if note:
        state.info(f"Opened {target}{note}")
    return state


def open_into(state: AppState, target: str | Path) -> bool:
    """Replace the document by ``target`` (undoable). On error: a message, nothing lost.

    Returns:
        True when opened.
    """
    try:
        doc, scene_path, camera = open_document(target, state.bvh_skeleton)
    except USER_ERRORS as e:
        state.error(f"Cannot open {target}: {describe(e)}")
        return False
    replace_document(state, doc, scene_path, camera, f"open {Path(str(target)).name}")
    state.info(f"Opened {target}" + recognised_note(doc, target))
    return True


def recognised_note(doc: Document, target: str | Path | None) -> str:
    """What the banner adds when a BVH file opened as the built-in rig it holds (or with its
    masses and soles)."""
    if target is None or Path(str(target)).suffix.lower() != ".bvh":
        return ""
    model = doc.motion.meta.get("bvh_model") if doc.motion is not None else None
    if model:
        return (f" as its own skeleton: it has {model}'s hierarchy, but its padded channels move "
                f"(rotations {model}'s joints cannot make, e.g. animik filter's knee twist); "
                f"animik feasibility checks it with {model}'s masses")
    if not is_builtin(doc.rig):
        return ""
    return (f" as {doc.rig} (the file has {doc.rig}'s hierarchy; File › Open with \"BVH as its "
            "own skeleton\" opens the file's skeleton)")


def replace_document(state: AppState, doc: Document, scene_path: Path | None,
                     camera: Mapping | None, label: str) -> None:
    """Make ``doc`` the document (one undo step), resetting selection, playback and the view."""
    cancel_drag(state)
    state.playing = False
    state.selected_key = None
    set_doc(state, doc)
    commit(state, label)
    state.mark_scene_path(scene_path)
    state.selected_site = state.hover_site = None
    state.selected_joint = state.hover_joint = None
    if scene_path is not None:
        state.browser_dir = scene_path.parent
    setup_camera(state, camera)


def is_shipped(path: Path | None) -> bool:
    """``path`` is one of the package's own scenes (read-only for the user: a save there would
    overwrite what every new session opens)."""
    d = scenes_dir()
    if path is None or d is None:
        return False
    try:
        return Path(path).resolve().is_relative_to(d.resolve())
    except OSError:
        return False


def needs_save_as(state: AppState) -> bool:
    """Ctrl+S must ask for a path: no ``--save-path`` and the document has no scene file of
    its own (a built-in rig, a BVH, a shipped scene)."""
    return state.save_path is None and (state.scene_path is None or is_shipped(state.scene_path))


def default_save_path(state: AppState) -> Path:
    """The path the Save As browser proposes: the scene file when it is the user's, else
    ``<slug>.scene.toml`` in the current folder."""
    return state.default_save_path(writable_scene=not is_shipped(state.scene_path))


def save(state: AppState, path: str | Path | None = None) -> Path | None:
    """Save the scene: to ``path`` (Save As: it becomes the document's scene file), else
    where Ctrl+S writes (:meth:`AppState.default_save_path`; never a shipped scene). Returns
    the path, or None after reporting an error."""
    explicit = path is not None
    path = Path(path).expanduser() if explicit else default_save_path(state)
    try:
        out = save_scene(scene_from_state(state), path)
    except USER_ERRORS as e:
        state.error(f"Cannot save {path}: {describe(e)}")
        return None
    state.write_dir = Path(out).parent
    if explicit:
        state.save_path = None
    if state.save_path is None:
        state.mark_scene_path(Path(out), saved=True)
    state.info(f"Saved {out}")
    return out

