"""Menu bar, status bar, message banner, help window and the docking layout."""

from __future__ import annotations

import time

from imgui_bundle import imgui

from .. import actions, timeline
from ..state import VIEW_MODE_LABELS, VIEW_MODES, AppState
from ..timeline import background
from .files import open_browser
from .mode_panels import TOOLS_MENU

DIM = (0.65, 0.67, 0.70, 1.0)
STATUS_HEIGHT = 26.0
LEFT_PANELS = ("Skeleton", "Joint")
RIGHT_PANELS = ("Solver", "Effectors")
BOTTOM_RIGHT = ("Plot",)

HELP: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Mouse (in the 3-D view)", (
        ("left-drag a handle", "move its target in the view plane"),
        ("  + hold X / Y / Z", "along that world axis only"),
        ("  + hold Shift", "along the dominant axis of the motion"),
        ("left-drag a ring", "turn a 6-D target (select its handle first)"),
        ("left-click joint / bone", "select the joint: its DoFs go to the Joint panel"),
        ("left-drag empty space", "orbit (a click clears the selection)"),
        ("middle-drag", "orbit (Shift: pan)"),
        ("right-drag", "pan"),
        ("right-click a handle", "pin / target / free / 6-D menu"),
        ("wheel", "zoom"),
    )),
    ("Keys", (
        ("F", "frame the selection"),
        ("V", "view: mesh / bones / mesh + x-ray bones"),
        ("Home, R", "reset the view"),
        ("arrows, Shift+arrows", "orbit, pan"),
        ("+ / -, PgUp / PgDn", "zoom"),
        ("P", "pin / unpin the selected effector"),
        ("O", "6-D target (orientation) on / off"),
        ("Del, Backspace", "free the effector"),
        ("Esc", "cancel a drag / clear the selection"),
        ("Ctrl+Z", "undo"),
        ("Ctrl+Shift+Z, Ctrl+Y", "redo"),
        ("Ctrl+S, Ctrl+Shift+S", "save, save as"),
        ("Ctrl+O", "open"),
        ("I", "live IK on / off"),
    )),
    ("Animation (Timeline panel)", (
        ("K", "key the whole pose at the playhead"),
        ("Shift+K", "key the selected joint"),
        ("Alt+K", "key the effector targets (IK-driven clip)"),
        ("Space", "play / pause"),
        (", .  or  [ ]", "previous / next key"),
        ("Shift+,  Shift+.", "start / end"),
        ("N", "auto-key on / off"),
        ("click / drag the ruler", "move the playhead (the pose follows)"),
        ("click / drag a key mark", "go to it / move it"),
        ("right-click a key mark", "interpolation, delete"),
        ("Del (a key selected)", "delete the key"),
    )),
    ("Handles and colours", (
        ("green sphere", "free effector (follows the body)"),
        ("yellow sphere", "target: a goal the IK pulls the effector to"),
        ("magenta cube", "pin: held where it was pinned"),
        ("orange line", "from an effector to its target"),
        ("red joint", "a DoF at its limit"),
        ("drop a file", "open a scene / rig (.toml), a motion (.bvh) or a robot (.urdf / .xml)"),
    )),
)


def draw_menu_bar(state: AppState) -> None:
    if not imgui.begin_main_menu_bar():
        return
    if imgui.begin_menu("File"):
        if imgui.menu_item_simple("Open...", "Ctrl+O"):
            open_browser(state, "open")
        if imgui.begin_menu("Built-in rig"):
            from ...rigs import list_rigs

            for name in list_rigs():
                if imgui.menu_item_simple(name):
                    actions.open_into(state, name)
            imgui.end_menu()
        d = actions.scenes_dir()
        if d is not None and imgui.begin_menu("Built-in scene"):
            for p in sorted(d.glob("*.toml")):
                if imgui.menu_item_simple(p.stem):
                    actions.open_into(state, p)
            imgui.end_menu()
        imgui.separator()
        if imgui.menu_item_simple("Save", "Ctrl+S"):
            if actions.needs_save_as(state):  # a shipped scene, a rig, a BVH: ask where
                open_browser(state, "save")
            else:
                actions.save(state)
        if imgui.menu_item_simple("Save As...", "Ctrl+Shift+S"):
            open_browser(state, "save")
        imgui.separator()
        if imgui.menu_item_simple("Import BVH as clip..."):
            open_browser(state, "import")
        clip = state.doc.current_clip
        if imgui.menu_item_simple("Export clip...", "", False, clip is not None):
            open_browser(state, "export")
        imgui.separator()
        if imgui.menu_item_simple("Quit", "Ctrl+Q"):
            state.quit_requested = True
        imgui.end_menu()
    if imgui.begin_menu("Edit"):
        h = state.history
        if imgui.menu_item_simple("Undo " + (h.entries[h.index][0] if h.can_undo() else ""),
                                  "Ctrl+Z", False, h.can_undo()):
            actions.undo(state)
        nxt = h.entries[h.index + 1][0] if h.can_redo() else ""
        if imgui.menu_item_simple("Redo " + nxt, "Ctrl+Shift+Z", False, h.can_redo()):
            actions.redo(state)
        imgui.separator()
        if imgui.menu_item_simple("Free all effectors"):
            actions.free_all(state)
        if imgui.menu_item_simple("Reset pose"):
            actions.reset_pose(state)
        imgui.end_menu()
    if imgui.begin_menu("Animation"):
        if imgui.menu_item_simple("Key pose", "K"):
            timeline.key_pose(state)
        j = state.selected_joint
        if imgui.menu_item_simple("Key selected joint", "Shift+K", False, j is not None):
            timeline.key_joint(state)
        if imgui.menu_item_simple("Key effector targets", "Alt+K", False,
                                  any(e.active for e in state.doc.effectors)):
            timeline.key_targets(state)
        _, state.auto_key = imgui.menu_item("Auto-key", "N", state.auto_key)
        imgui.separator()
        if imgui.menu_item_simple("Pause" if state.playing else "Play", "Space"):
            timeline.toggle_play(state)
        _, state.loop = imgui.menu_item("Loop", "", state.loop)
        if imgui.menu_item_simple("Previous key", ","):
            timeline.jump(state, -1)
        if imgui.menu_item_simple("Next key", "."):
            timeline.jump(state, 1)
        imgui.separator()
        if imgui.menu_item_simple("New clip"):
            timeline.new_clip(state)
        clip = state.doc.current_clip
        busy = state.editing.tasks.busy
        if imgui.menu_item_simple("Reduce keys", "", False, clip is not None and not busy):
            background.reduce_keys_async(state, state.import_tolerance_deg,
                                         state.import_position_tolerance_mm)
        if imgui.menu_item_simple("Bake clip (a key per frame)", "", False,
                                  clip is not None and not busy):
            background.bake_async(state)
        if imgui.menu_item_simple("Import BVH as clip..."):
            open_browser(state, "import")
        if imgui.menu_item_simple("Export clip...", "", False, state.doc.current_clip is not None):
            open_browser(state, "export")
        imgui.end_menu()
    opened = imgui.begin_menu("Tools")  # the modes' entries (ui/mode_panels.py)
    a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    state.ui_rects["tools"] = (a.x, a.y, b.x, b.y)
    if opened:
        for draw_entries in TOOLS_MENU:
            draw_entries(state)
        imgui.end_menu()
    if imgui.begin_menu("View"):
        if imgui.menu_item_simple("Frame selection", "F"):
            actions.frame_selected(state)
        if imgui.menu_item_simple("Reset view", "Home"):
            state.camera.reset()
        _, state.follow_playback = imgui.menu_item("Follow during playback", "",
                                                   state.follow_playback)
        if imgui.is_item_hovered():
            imgui.set_tooltip("while the timeline plays, the camera moves with the body")
        imgui.separator()
        has_mesh = state.doc.mesh is not None
        for mode in VIEW_MODES:  # the character as its mesh, its bones, or both (x-ray)
            if imgui.menu_item_simple(VIEW_MODE_LABELS[mode], "V" if mode == VIEW_MODES[0] else "",
                                      has_mesh and state.view_mode == mode, has_mesh):
                actions.set_view_mode(state, mode)
        imgui.separator()
        _, state.show_shadow = imgui.menu_item("Ground shadow", "", state.show_shadow)
        imgui.set_next_item_width(120)
        _, state.handle_px = imgui.slider_float("handle size", state.handle_px, 4.0, 20.0, "%.0f px")
        imgui.end_menu()
    if imgui.begin_menu("Help"):
        if imgui.menu_item_simple("Controls", "F1", state.show_help):
            state.show_help = not state.show_help
        imgui.end_menu()
    imgui.end_main_menu_bar()


def draw_status_bar(state: AppState) -> None:
    """fps, IK time per frame, DoF count, error and iterations, and the scene file."""
    vp = imgui.get_main_viewport()
    flags = (imgui.WindowFlags_.no_scrollbar | imgui.WindowFlags_.no_saved_settings
             | imgui.WindowFlags_.menu_bar)
    if imgui.internal.begin_viewport_side_bar("##status", vp, imgui.Dir.down, STATUS_HEIGHT, flags):
        if imgui.begin_menu_bar():
            st = state.stats
            skel = state.skeleton
            n_act = sum(e.active for e in state.doc.effectors)
            imgui.text(f"{st.fps:5.1f} fps")
            imgui.separator()
            imgui.text(f"IK {st.ik_ms_recent():5.2f} ms/frame")
            imgui.separator()
            imgui.text(f"{skel.n_dof} DoF")
            imgui.separator()
            imgui.text(f"{n_act}/{skel.n_sites} effectors constrained")
            imgui.separator()
            imgui.text(f"error {st.last_error_mm:7.2f} mm, {st.last_iterations} it")
            imgui.separator()
            imgui.text(f"solver {state.doc.solver.name}{'' if state.live_ik else ' (paused)'}")
            imgui.separator()
            path = state.scene_path or state.doc.rig
            imgui.text_colored(DIM, f"{path}")
            imgui.end_menu_bar()
    imgui.end()


def draw_messages(state: AppState) -> None:
    """A banner at the top of the 3-D view: errors stay until dismissed, notices fade out."""
    now = time.monotonic()
    state.messages[:] = [m for m in state.messages if m.level == "error" or now - m.time < 4.0]
    if not state.messages:
        return
    x, y, w, _ = state.view_rect
    imgui.set_next_window_pos((x + w * 0.5, y + 8), imgui.Cond_.always, (0.5, 0.0))
    imgui.set_next_window_size_constraints((200, 0), (max(w - 40, 220), 400))
    imgui.set_next_window_bg_alpha(0.92)
    flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize
             | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_docking
             | imgui.WindowFlags_.no_focus_on_appearing | imgui.WindowFlags_.no_nav)
    has_error = any(m.level == "error" for m in state.messages)
    if has_error:
        imgui.push_style_color(imgui.Col_.window_bg, (0.45, 0.10, 0.10, 0.95))
    if imgui.begin("##messages", None, flags)[0]:
        for m in state.messages[-4:]:
            color = (1.0, 0.85, 0.85, 1.0) if m.level == "error" else (0.85, 0.95, 0.85, 1.0)
            imgui.push_text_wrap_pos(max(w - 80, 200))
            imgui.text_colored(color, ("Error: " if m.level == "error" else "") + m.text)
            imgui.pop_text_wrap_pos()
        if has_error and imgui.small_button("Dismiss"):
            state.messages.clear()
    imgui.end()
    if has_error:
        imgui.pop_style_color()


def draw_help_window(state: AppState) -> None:
    if not state.show_help:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_pos((vp.pos.x + vp.size.x * 0.5, vp.pos.y + vp.size.y * 0.5),
                              imgui.Cond_.appearing, (0.5, 0.5))
    imgui.set_next_window_size((560, 0), imgui.Cond_.appearing)
    visible, still = imgui.begin("Controls", True, imgui.WindowFlags_.no_docking)
    if visible:
        for title, rows in HELP:
            imgui.separator_text(title)
            if imgui.begin_table(f"##{title}", 2, imgui.TableFlags_.sizing_fixed_fit):
                for key, what in rows:
                    imgui.table_next_row()
                    imgui.table_next_column()
                    imgui.text_colored((0.95, 0.85, 0.5, 1.0), key)
                    imgui.table_next_column()
                    imgui.text(what)
                imgui.end_table()
    if not still:
        state.show_help = False
    imgui.end()


def draw_view_hint(state: AppState) -> None:
    """One line of help at the bottom of the 3-D view."""
    x, y, w, h = state.view_rect
    dl = imgui.get_background_draw_list()
    text = ("drag handle: move target (X/Y/Z: axis)   click joint: edit DoFs   "
            "drag empty: orbit   P pin   K key   Space play   F1 help")
    dl.add_text((x + 8, y + h - 22), imgui.get_color_u32((0.8, 0.82, 0.86, 0.75)), text)


TIMELINE_RATIO = 0.24  # of the height below the menu bar


def setup_layout(dockspace_id: int, size) -> None:
    """The default docking layout: the timeline along the bottom; above it skeleton + joint on
    the left, solver + effectors and the plot on the right, the 3-D view in the middle."""
    internal = imgui.internal
    internal.dock_builder_remove_node(dockspace_id)
    internal.dock_builder_add_node(dockspace_id, imgui.DockNodeFlags_.passthru_central_node
                                   | internal.DockNodeFlagsPrivate_.dock_space)
    internal.dock_builder_set_node_size(dockspace_id, size)
    def split(node, direction, ratio):
        r = internal.dock_builder_split_node(node, direction, ratio)
        return r.id_at_dir, r.id_at_opposite_dir

    bottom, top = split(dockspace_id, imgui.Dir.down, TIMELINE_RATIO)
    left, rest = split(top, imgui.Dir.left, 0.21)
    right, _centre = split(rest, imgui.Dir.right, 0.30)
    left_top, left_bottom = split(left, imgui.Dir.up, 0.58)
    right_top, right_bottom = split(right, imgui.Dir.up, 0.64)
    internal.dock_builder_dock_window("Skeleton", left_top)
    internal.dock_builder_dock_window("Joint", left_bottom)
    internal.dock_builder_dock_window("Dope Sheet", bottom)
    internal.dock_builder_dock_window("Graph Editor", bottom)
    internal.dock_builder_dock_window("Timeline", bottom)
    internal.dock_builder_dock_window("Solver", right_top)
    internal.dock_builder_dock_window("Effectors", right_top)
    internal.dock_builder_dock_window("Retarget", right_top)
    internal.dock_builder_dock_window("Plot", right_bottom)
    internal.dock_builder_dock_window("Physics", right_bottom)
    internal.dock_builder_finish(dockspace_id)
