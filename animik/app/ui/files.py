"""File browser panel (imgui-drawn: works headless, unlike native dialogs): open a file, save the
scene, export the current clip (.glb / .bvh), import a BVH as a clip (keys per frame or reduced)."""

from __future__ import annotations

import os
from pathlib import Path

from imgui_bundle import imgui

from .. import actions, timeline
from ..state import AppState
from ..timeline import background

OPEN_SUFFIXES = (".toml", ".bvh", ".glb", ".gltf", ".urdf", ".xml", ".mjcf")  # rigs, motions,
# rigged characters (.glb / .gltf), robots
SUFFIXES = {"open": OPEN_SUFFIXES, "save": (".toml",), "export": (".glb", ".bvh"),
            "import": (".bvh",)}
TITLES = {"open": "Open file", "save": "Save scene as", "export": "Export clip",
          "import": "Import BVH as clip"}
BUTTONS = {"open": "Open", "save": "Save", "export": "Export", "import": "Import"}


def open_browser(state: AppState, mode: str) -> None:
    """Show the browser (``mode``: "open", "save", "export" the current clip, "import" a BVH)."""
    state.show_file_browser = True
    state.browser_mode = mode
    if mode == "save":
        p = actions.default_save_path(state)
        state.browser_dir = p.parent if p.parent.is_dir() else state.output_dir()
        state.browser_name = p.name
    elif mode == "export":
        state.browser_dir = state.output_dir()  # not the package's scenes/ nor a source's folder
        clip = state.doc.current_clip
        name = (clip.name if clip is not None else "clip").replace("/", "_").replace(" ", "_")
        state.browser_name = f"{name}.glb"
    else:
        state.browser_name = ""


def _export_format_buttons(state: AppState) -> None:
    """.glb / .bvh: switch the extension of the typed name."""
    name = state.browser_name
    stem = name[: -len(Path(name).suffix)] if Path(name).suffix else name
    for ext in (".glb", ".bvh"):
        imgui.same_line()
        if imgui.radio_button(ext, name.lower().endswith(ext)):
            state.browser_name = (stem or "clip") + ext


def _import_options(state: AppState) -> None:
    if imgui.radio_button("one key per frame", not state.browser_tolerance):
        state.browser_tolerance = False
    imgui.same_line()
    if imgui.radio_button("reduce keys within", state.browser_tolerance):
        state.browser_tolerance = True
    imgui.same_line()
    imgui.begin_disabled(not state.browser_tolerance)
    imgui.set_next_item_width(80)
    _, v = imgui.drag_float("##tol", state.import_tolerance_deg, 0.05, 0.01, 20.0, "%.2f deg",
                            imgui.SliderFlags_.always_clamp)
    state.import_tolerance_deg = float(v)
    imgui.same_line()
    imgui.set_next_item_width(80)
    _, v = imgui.drag_float("##ptol", state.import_position_tolerance_mm, 0.1, 0.01, 100.0,
                            "%.1f mm", imgui.SliderFlags_.always_clamp)
    state.import_position_tolerance_mm = float(v)
    imgui.end_disabled()
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("largest joint-angle and joint / site position error of the reduced "
                          "keys against the BVH frames")


def _open_options(state: AppState) -> None:
    """Open: how a .bvh whose hierarchy is a built-in rig's opens (as the rig by default)."""
    _, state.bvh_skeleton = imgui.checkbox("BVH as its own skeleton", state.bvh_skeleton)
    if imgui.is_item_hovered():
        imgui.set_tooltip("a .bvh that animik wrote for a built-in rig (animik retarget --to "
                          "body95, a filtered or exported clip) opens as that rig: its masses, "
                          "soles, limits and body.\nChecked: the file's own BVH skeleton (every "
                          "joint 3 rotation channels, masses estimated by segment role)")


def import_options(state: AppState) -> tuple[float | None, float | None]:
    """``(tolerance rad, position tolerance m)`` chosen in the import browser (None: every frame)."""
    if not state.browser_tolerance:
        return None, None
    import math

    return math.radians(state.import_tolerance_deg), state.import_position_tolerance_mm / 1000.0


def list_dir(folder: Path, suffixes=OPEN_SUFFIXES) -> tuple[list[Path], list[Path]]:
    """``(sub-folders, files with a wanted suffix)`` of ``folder``, sorted; hidden entries skipped."""
    dirs, files = [], []
    try:
        with os.scandir(folder) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                try:
                    if e.is_dir():
                        dirs.append(Path(e.path))
                    elif e.name.lower().endswith(suffixes):
                        files.append(Path(e.path))
                except OSError:
                    continue
    except OSError:
        pass
    return sorted(dirs, key=lambda p: p.name.lower()), sorted(files, key=lambda p: p.name.lower())


def draw_file_browser_panel(state: AppState) -> None:
    """A floating window listing folders and the files of the mode (Open: .toml / .bvh / .glb /
    .gltf); double-click or Open/Save."""
    if not state.show_file_browser:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_size((560, 440), imgui.Cond_.appearing)
    imgui.set_next_window_pos((vp.pos.x + vp.size.x * 0.5, vp.pos.y + vp.size.y * 0.5),
                              imgui.Cond_.appearing, (0.5, 0.5))
    mode = state.browser_mode
    title = f"{TITLES.get(mode, 'File')}###browser"
    visible, still_open = imgui.begin(title, True, imgui.WindowFlags_.no_docking)
    if not still_open:
        state.show_file_browser = False
    if visible:
        folder = state.browser_dir
        if imgui.button("Up") and folder.parent != folder:
            state.browser_dir = folder.parent
        imgui.same_line()
        scenes = actions.scenes_dir()
        if scenes is not None and imgui.button("Scenes"):
            state.browser_dir = scenes
        imgui.same_line()
        if imgui.button("Home"):
            state.browser_dir = Path.home()
        imgui.same_line()
        imgui.set_next_item_width(-1)
        changed, text = imgui.input_text("##dir", str(folder),
                                         imgui.InputTextFlags_.enter_returns_true)
        if changed and Path(text).expanduser().is_dir():
            state.browser_dir = Path(text).expanduser()
        footer = imgui.get_frame_height_with_spacing() * (3 if mode in ("export", "import", "open")
                                                          else 2)
        imgui.begin_child("##files", (0, -footer), imgui.ChildFlags_.borders)
        dirs, files = list_dir(state.browser_dir, SUFFIXES.get(mode, OPEN_SUFFIXES))
        chosen = None
        for d in dirs:
            if imgui.selectable(f"[dir] {d.name}", False,
                                imgui.SelectableFlags_.allow_double_click)[0]:
                state.browser_dir = d
        for f in files:
            clicked, _ = imgui.selectable(f.name, f.name == state.browser_name,
                                          imgui.SelectableFlags_.allow_double_click)
            if clicked:
                state.browser_name = f.name
                if imgui.is_mouse_double_clicked(0):
                    chosen = f
        imgui.end_child()
        if mode == "export":
            clip = state.doc.current_clip
            imgui.text_colored((0.65, 0.67, 0.70, 1.0),
                               f"clip {clip.name!r}" if clip is not None else "no clip")
            _export_format_buttons(state)
        elif mode == "import":
            _import_options(state)
        elif mode == "open":
            _open_options(state)
        imgui.set_next_item_width(-170)
        enter, state.browser_name = imgui.input_text(
            "##name", state.browser_name, imgui.InputTextFlags_.enter_returns_true)
        imgui.same_line()
        label = BUTTONS.get(mode, "Open")
        pressed = imgui.button(label, (75, 0))
        mn, mx = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        state.ui_rects["browser_ok"] = (mn.x, mn.y, mx.x, mx.y)
        if (pressed or enter) and state.browser_name:
            chosen = state.browser_dir / state.browser_name
        imgui.same_line()
        if imgui.button("Cancel", (75, 0)):
            state.show_file_browser = False
        if chosen is not None:
            if mode == "open":
                if actions.open_into(state, chosen):
                    state.show_file_browser = False
            elif mode == "export":
                if timeline.export_current(state, chosen) is not None:
                    state.show_file_browser = False
            elif mode == "import":
                # read and reduce in the background (a progress bar; the window keeps drawing)
                if background.import_bvh_async(state, chosen, *import_options(state)) is not None:
                    state.show_file_browser = False
            else:
                if chosen.suffix.lower() != ".toml":
                    chosen = chosen.with_name(chosen.name + ".toml")
                if actions.save(state, chosen) is not None:  # now the document's file
                    state.show_file_browser = False
    imgui.end()
