"""Skeleton tree, joint (DoF sliders) and effectors panels (the timeline: timeline_panel.py).

Each ``draw_<name>_panel(state)`` draws one dockable window and changes the state only when an
imgui widget reports a change; continuous edits (sliders) become one undo step when the widget
is released (``is_item_deactivated_after_edit``).
"""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from .. import actions, sites, timeline
from ..state import FREE, MODES, PINNED, TARGET, AppState

RED = (0.95, 0.35, 0.32, 1.0)
DIM = (0.65, 0.67, 0.70, 1.0)
MODE_COLORS = {FREE: (0.45, 0.85, 0.50, 1.0), TARGET: (1.0, 0.80, 0.20, 1.0),
               PINNED: (0.90, 0.40, 0.85, 1.0)}


# ---------------------------------------------------------------------- skeleton tree
def draw_skeleton_panel(state: AppState) -> None:
    """The joint hierarchy; click a joint to select it (its DoFs go to the Joint panel), click
    a site to select its handle. Joints at a limit are red."""
    if imgui.begin("Skeleton")[0]:
        skel = state.skeleton
        imgui.text_colored(DIM, f"{skel.name}: {skel.n_joints} joints, {skel.n_dof} DoF, "
                                f"{skel.n_sites} sites")
        imgui.separator()
        imgui.begin_child("##tree")
        at_limit = state.at_limit()
        sites_of = [[] for _ in range(skel.n_joints)]
        for i, j in enumerate(skel.site_joint):
            sites_of[j].append(i)
        # a joint clicked in the view: open its ancestors and scroll to it (once)
        target = state.scroll_tree_to
        opened: set[int] = set()
        if target is not None and 0 <= target < skel.n_joints:
            a = int(skel.parents[target])
            while a >= 0:
                opened.add(a)
                a = int(skel.parents[a])
        _tree(state, 0, at_limit, sites_of, opened)
        state.scroll_tree_to = None
        imgui.end_child()
    imgui.end()


def _tree(state: AppState, j: int, at_limit: np.ndarray, sites_of: list,
          opened: frozenset[int] | set[int] = frozenset()) -> None:
    skel = state.skeleton
    children = skel.children[j]
    leaf = not children and not sites_of[j]
    flags = (imgui.TreeNodeFlags_.open_on_arrow | imgui.TreeNodeFlags_.open_on_double_click
             | imgui.TreeNodeFlags_.span_avail_width | imgui.TreeNodeFlags_.default_open)
    if leaf:
        flags |= imgui.TreeNodeFlags_.leaf | imgui.TreeNodeFlags_.no_tree_push_on_open
    if state.selected_joint == j:
        flags |= imgui.TreeNodeFlags_.selected
    ndof = len(skel.joint_dofs(j))
    label = f"{skel.joint_names[j]}" + (f"  ({ndof})" if ndof else "")
    if at_limit[j]:
        imgui.push_style_color(imgui.Col_.text, RED)
    if state.selected_joint == j and imgui.is_window_appearing():
        imgui.set_scroll_here_y()
    if j in opened:
        imgui.set_next_item_open(True)
    is_open = imgui.tree_node_ex(f"{label}##j{j}", flags)
    if state.scroll_tree_to == j:
        imgui.set_scroll_here_y(0.5)
    if at_limit[j]:
        imgui.pop_style_color()
    if imgui.is_item_clicked() and not imgui.is_item_toggled_open():
        state.selected_joint = j
        state.selected_site = None
    if is_open and not leaf:
        for i in sites_of[j]:
            e = state.doc.effectors[i]
            imgui.push_style_color(imgui.Col_.text, MODE_COLORS[e.mode])
            f = (imgui.TreeNodeFlags_.leaf | imgui.TreeNodeFlags_.no_tree_push_on_open
                 | imgui.TreeNodeFlags_.span_avail_width | imgui.TreeNodeFlags_.bullet)
            if state.selected_site == e.site:
                f |= imgui.TreeNodeFlags_.selected
            imgui.tree_node_ex(f"{e.site} [{e.mode}]##s{i}", f)
            imgui.pop_style_color()
            if imgui.is_item_clicked():
                state.selected_site = e.site
        for c in children:
            _tree(state, c, at_limit, sites_of, opened)
        imgui.tree_pop()


# ---------------------------------------------------------------------- joint sliders
def draw_joint_panel(state: AppState) -> None:
    """The selected joint's DoFs as sliders within their limits (forward kinematics editing)."""
    if imgui.begin("Joint")[0]:
        skel = state.skeleton
        j = state.selected_joint
        if j is None or not 0 <= j < skel.n_joints:
            imgui.text_colored(DIM, "Click a joint or bone in the view\n(or in the Skeleton tree)\n"
                                    "to edit its degrees of freedom.")
        else:
            imgui.text(skel.joint_names[j])
            p = skel.parents[j]
            imgui.same_line()
            imgui.text_colored(DIM, f"(parent: {skel.joint_names[p] if p >= 0 else '-'})")
            dofs = skel.joint_dofs(j)
            if not len(dofs):
                imgui.text_colored(DIM, "no degrees of freedom (fixed joint)")
            q = state.doc.q
            for k in dofs:
                _dof_slider(state, k, float(q[k]))
            if len(dofs) and imgui.button("Rest values"):
                for k in dofs:
                    actions.set_dof(state, k, float(skel.rest_q[k]))
                keyed = timeline.auto_key(state, joints=[skel.joint_names[j]])
                actions.commit(state, f"rest {skel.joint_names[j]}" + (" + key" if keyed else ""))
            if len(dofs):
                imgui.same_line()
                if imgui.button("Key joint"):
                    timeline.key_joint(state)
                if imgui.is_item_hovered():
                    imgui.set_tooltip("key this joint at the playhead (Shift+K)")
    imgui.end()


def _dof_slider(state: AppState, k: int, v: float) -> None:
    skel = state.skeleton
    lo, hi = float(skel.lower[k]), float(skel.upper[k])
    name = skel.dof_names[k]
    at = (np.isfinite(lo) and v <= lo + 1e-4) or (np.isfinite(hi) and v >= hi - 1e-4)
    imgui.text_colored(RED if at else DIM, name)
    if at:
        imgui.push_style_color(imgui.Col_.frame_bg, (0.55, 0.16, 0.15, 1.0))
    imgui.set_next_item_width(-1)
    if skel.dof_type[k] == 0:  # rotation: the slider shows degrees, holds radians
        lo_d = float(np.degrees(lo)) if np.isfinite(lo) else -180.0
        hi_d = float(np.degrees(hi)) if np.isfinite(hi) else 180.0
        changed, nv = imgui.slider_angle(f"##dof{k}", v, lo_d, hi_d, "%.1f deg",
                                         imgui.SliderFlags_.always_clamp)
    else:
        lo_m = lo if np.isfinite(lo) else v - 1.0
        hi_m = hi if np.isfinite(hi) else v + 1.0
        changed, nv = imgui.slider_float(f"##dof{k}", v, lo_m, hi_m, "%.3f m",
                                         imgui.SliderFlags_.always_clamp)
    if at:
        imgui.pop_style_color()
    if changed:
        actions.set_dof(state, k, nv)
    if imgui.is_item_deactivated_after_edit():
        keyed = timeline.auto_key(state, joints=[skel.joint_names[skel.dof_joint[k]]])
        actions.commit(state, f"edit {name}" + (" + key" if keyed else ""))
    if imgui.is_item_hovered():
        lim = (f"[{np.degrees(lo):.1f}, {np.degrees(hi):.1f}] deg" if skel.dof_type[k] == 0
               else f"[{lo:.3f}, {hi:.3f}] m")
        imgui.set_tooltip(f"{name}: limits {lim}; Ctrl+click to type a value")


# ---------------------------------------------------------------------- effectors
def draw_effectors_panel(state: AppState) -> None:
    """Every effector: mode (free / target / pinned), 6-D target, weight, current error."""
    if imgui.begin("Effectors")[0]:
        skel = state.skeleton
        fk = state.fk
        if imgui.button("Free all"):
            actions.free_all(state)
        imgui.same_line()
        if imgui.button("Reset pose"):
            actions.reset_pose(state)
        imgui.same_line()
        _, state.pin_on_release = imgui.checkbox("Pin on release", state.pin_on_release)
        if state.selected_joint is not None and state.selected_joint < skel.n_joints:
            if imgui.button(f"Add site at {skel.joint_names[state.selected_joint]}"):
                sites.add_site(state, state.selected_joint)
            if state.selected_site is not None:
                imgui.same_line()
        if state.selected_site is not None and state.selected_site in skel.site_names:
            if imgui.button(f"Remove site {state.selected_site}"):
                sites.remove_site(state, state.selected_site)
        flags = (imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_h
                 | imgui.TableFlags_.scroll_y | imgui.TableFlags_.sizing_stretch_prop)
        # The fixed columns are as wide as their longest content (the mode combo shows
        # "target" and its arrow; a stretched share of a 300 px panel read "fre▼"); the site
        # names take what is left.
        st = imgui.get_style()
        pad = 2 * st.frame_padding.x
        fixed = imgui.TableColumnFlags_.width_fixed
        # no arrow on the mode combo (it opens on a click like any combo) and the pin is the
        # mode's "pinned" (the P key): the site names keep room to be read
        mode_w = max(imgui.calc_text_size(m).x for m in MODES) + pad + 2  # (-1 width: 1 px less)
        num_w = imgui.calc_text_size("10.00").x + pad
        box_w = imgui.get_frame_height() + 4
        right = imgui.get_cursor_screen_pos().x + imgui.get_content_region_avail().x
        state.ui_rects["effectors_content"] = (0.0, 0.0, right, 0.0)
        if imgui.begin_table("##eff", 5, flags):
            imgui.table_setup_column("site", imgui.TableColumnFlags_.width_stretch, 1.0)
            imgui.table_setup_column("mode", fixed, mode_w)
            imgui.table_setup_column("6-D", fixed, max(box_w, imgui.calc_text_size("6-D").x))
            imgui.table_setup_column("weight", fixed, num_w)
            imgui.table_setup_column("err mm", fixed, imgui.calc_text_size("err mm").x)
            imgui.table_setup_scroll_freeze(0, 1)
            imgui.table_headers_row()
            for i, e in enumerate(state.doc.effectors):
                imgui.table_next_row()
                imgui.push_id(i)
                imgui.table_next_column()
                imgui.push_style_color(imgui.Col_.text, MODE_COLORS[e.mode])
                if imgui.selectable(e.site, state.selected_site == e.site,
                                    imgui.SelectableFlags_.span_all_columns
                                    | imgui.SelectableFlags_.allow_overlap)[0]:
                    state.selected_site = e.site
                imgui.pop_style_color()
                imgui.table_next_column()
                imgui.set_next_item_width(-1)
                ch, m = False, MODES.index(e.mode)
                if imgui.begin_combo("##mode", e.mode, imgui.ComboFlags_.no_arrow_button):
                    for k, name in enumerate(MODES):
                        if imgui.selectable(name, k == m)[0]:
                            ch, m = True, k
                    imgui.end_combo()
                if i == 0:
                    a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
                    state.ui_rects["effectors_mode"] = (a.x, a.y, b.x, b.y)
                if imgui.is_item_hovered():
                    imgui.set_tooltip("free: follows the body; target: pulled to its goal; "
                                      "pinned: held where it is (key P)")
                if ch and MODES[m] != e.mode:
                    actions.set_mode(state, e.site, MODES[m])
                imgui.table_next_column()
                ch, on = imgui.checkbox("##6d", e.oriented)
                if ch:
                    actions.set_oriented(state, e.site, on)
                if imgui.is_item_hovered():
                    imgui.set_tooltip("6-D target: position and orientation (key O)")
                imgui.table_next_column()
                imgui.set_next_item_width(-1)
                ch, w = imgui.drag_float("##w", e.weight, 0.01, 0.01, 100.0, "%.2f",
                                         imgui.SliderFlags_.always_clamp)
                if ch and w > 0:
                    actions.set_effector(state, e.replace(weight=float(w)))
                if imgui.is_item_deactivated_after_edit():
                    actions.commit(state, f"weight {e.site}")
                imgui.table_next_column()
                if e.active:
                    err = 1e3 * float(np.linalg.norm(fk.site_positions[i] - e.position))
                    imgui.text(f"{err:.1f}" if err < 999.5 else f"{err / 1e3:.1f}m")
                else:
                    imgui.text_colored(DIM, "-")
                imgui.pop_id()
            imgui.end_table()
        _ = skel
    imgui.end()


def draw_context_menu(state: AppState) -> None:
    """Right-click menu of a handle: free / target / pin, 6-D, frame."""
    if state.context_site is not None:
        imgui.open_popup("##handle_menu")
        state.selected_site = state.context_site
        state.context_site = None
    if imgui.begin_popup("##handle_menu"):
        site = state.selected_site
        if site is None or site not in state.skeleton.site_names:
            imgui.close_current_popup()
        else:
            e = state.doc.effector(site)
            imgui.text_colored(DIM, site)
            imgui.separator()
            if imgui.menu_item_simple("Pin", "P", e.mode == PINNED):
                actions.toggle_pin(state, site)
            if imgui.menu_item_simple("Target (goal)", None, e.mode == TARGET):
                actions.set_mode(state, site, TARGET)
            if imgui.menu_item_simple("Free", "Del", e.mode == FREE):
                actions.free(state, site)
            imgui.separator()
            if imgui.menu_item_simple("6-D target (orientation)", "O", e.oriented):
                actions.set_oriented(state, site, not e.oriented)
            if imgui.menu_item_simple("Frame", "F"):
                actions.frame_selected(state)
        imgui.end_popup()
