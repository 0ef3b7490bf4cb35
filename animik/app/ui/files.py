"""File browser panel (imgui-drawn: works headless, unlike native dialogs) and open/save helpers."""

from __future__ import annotations

import os
from pathlib import Path

from imgui_bundle import imgui

from .. import actions
from ..state import AppState

OPEN_SUFFIXES = (".toml", ".bvh")


def open_browser(state: AppState, mode: str) -> None:
    """Show the browser to open a file or save the scene (``mode`` "open" or "save")."""
    state.show_file_browser = True
    state.browser_mode = mode
    if mode == "save":
        p = state.default_save_path()
        state.browser_dir = p.parent if p.parent.is_dir() else Path.cwd()
        state.browser_name = p.name
    else:
        state.browser_name = ""


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
    """A floating window listing folders and .toml / .bvh files; double-click or Open/Save."""
    if not state.show_file_browser:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_size((560, 440), imgui.Cond_.appearing)
    imgui.set_next_window_pos((vp.pos.x + vp.size.x * 0.5, vp.pos.y + vp.size.y * 0.5),
                              imgui.Cond_.appearing, (0.5, 0.5))
    title = "Open file###browser" if state.browser_mode == "open" else "Save scene as###browser"
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
        footer = imgui.get_frame_height_with_spacing() * 2
        imgui.begin_child("##files", (0, -footer), imgui.ChildFlags_.borders)
        dirs, files = list_dir(state.browser_dir)
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
        imgui.set_next_item_width(-170)
        enter, state.browser_name = imgui.input_text(
            "##name", state.browser_name, imgui.InputTextFlags_.enter_returns_true)
        imgui.same_line()
        label = "Open" if state.browser_mode == "open" else "Save"
        if (imgui.button(label, (75, 0)) or enter) and state.browser_name:
            chosen = state.browser_dir / state.browser_name
        imgui.same_line()
        if imgui.button("Cancel", (75, 0)):
            state.show_file_browser = False
        if chosen is not None:
            if state.browser_mode == "open":
                if actions.open_into(state, chosen):
                    state.show_file_browser = False
            else:
                if chosen.suffix.lower() != ".toml":
                    chosen = chosen.with_name(chosen.name + ".toml")
                if actions.save(state, chosen) is not None:
                    state.save_path = None
                    state.scene_path = chosen
                    state.show_file_browser = False
    imgui.end()
