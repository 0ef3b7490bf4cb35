"""The Retarget panel (Tools › Retarget…): source and target, transport, edits, bake / export,
live quality numbers and the joint mapping. State changes go through
:mod:`animik.app.modes.retarget`. Listed in :mod:`animik.app.ui.mode_panels`."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from ...rigs import list_rigs
from ..edits import commit
from ..modes import retarget as rm
from ..state import AppState
from .files import open_browser

DIM = (0.65, 0.67, 0.70, 1.0)
GOOD = (0.45, 0.85, 0.50, 1.0)
BAD = (0.95, 0.40, 0.35, 1.0)
SOURCE_TEXT = (0.60, 0.80, 1.00, 1.0)
FILE_CHOICE = "rig file..."


def _rect(ui: rm.RetargetUI, name: str) -> None:
    """Remember where the last item was drawn (window pixels)."""
    a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    ui.rects[name] = (a.x, a.y, b.x, b.y)


def draw_retarget_tools(state: AppState) -> None:
    """Retarget's entries of the Tools menu (drawn inside the open menu)."""
    ui = rm.ui_of(state)
    clicked = imgui.menu_item_simple("Retarget...", "", ui.show)
    _rect(ui, "menu_retarget")
    if clicked:
        if ui.show:
            ui.show = False
        else:
            rm.open_panel(state)
            rig = str(state.doc.rig)
            if state.doc.mesh is not None and rig.lower().endswith((".glb", ".gltf")):
                ui.target, ui.target_file = FILE_CHOICE, rig  # onto the open character
    link = rm.current(state)
    _leave_entries(state, link, imgui.menu_item_simple)


def _leave_entries(state: AppState, link: rm.RetargetLink | None, item) -> None:
    """"Leave" (back to the document retarget mode was entered from when it is on the same
    skeleton, its clips and pins with it) and, for another skeleton, "Back to ..." as well."""
    prev = link.previous if link is not None else None
    name = (prev.name or prev.skeleton.name) if prev is not None else ""
    if link is None or prev is None:
        if item("Leave retarget mode", "", False, link is not None):
            rm.leave(state)
        return
    if rm.comes_back(state):
        if item(f"Leave: back to {name}", "", False, True):
            rm.leave(state)
        if imgui.is_item_hovered():
            imgui.set_tooltip("its pose, pins, targets and clips come back; the clips baked\n"
                              "here are added to them")
        return
    if item(f"Leave: keep {link.session.rt.target.name}", "", False, True):
        rm.leave(state, back=False)
    if imgui.is_item_hovered():
        imgui.set_tooltip("stay on the target rig with its pose, pins and baked clips")
    if item(f"Back to {name}", "", False, True):
        rm.leave(state, back=True)
    if imgui.is_item_hovered():
        imgui.set_tooltip("the document before retargeting, with its clips and pins")


def draw_retarget_panel(state: AppState) -> None:
    """The panel (when open) and, in retarget mode, the names over the two skeletons."""
    ui = rm.ui_of(state)
    link = rm.current(state)
    if link is not None:
        _labels(state)
    if not ui.show:
        return
    if ui.focus:
        imgui.set_next_window_focus()
        ui.focus = False
    visible, still = imgui.begin("Retarget", True)
    if not still:
        ui.show = False
    if visible:
        if link is None:
            _setup(state, ui)
        else:
            _session(state, ui, link)
    imgui.end()


# ---------------------------------------------------------------------- choosing
def _setup(state: AppState, ui: rm.RetargetUI, title: str = "Retarget a BVH onto a rig") -> None:
    imgui.text_colored(DIM, title)
    doc_bvh = rm.default_source_path(state)
    imgui.text("Source (BVH)")
    imgui.set_next_item_width(-70)
    _, ui.source_path = imgui.input_text("##src", ui.source_path)
    imgui.same_line()
    if imgui.button("Browse"):
        open_browser(state, "open")  # opens the BVH as the document: it becomes the source
        ui.source_path = ""
    if doc_bvh and ui.source_path != doc_bvh:
        if imgui.small_button("use the open BVH"):
            ui.source_path = doc_bvh
    if not ui.source_path and doc_bvh:
        ui.source_path = doc_bvh
    imgui.text("Target rig")
    rigs = [*list_rigs(), FILE_CHOICE]
    cur = rigs.index(ui.target) if ui.target in rigs else len(rigs) - 1
    imgui.set_next_item_width(-1)
    ch, i = imgui.combo("##target", cur, rigs)
    if ch:
        ui.target = rigs[i]
    if ui.target == FILE_CHOICE:
        imgui.set_next_item_width(-1)
        _, ui.target_file = imgui.input_text("##tfile", ui.target_file)
        if imgui.is_item_hovered():
            imgui.set_tooltip("a rig .toml, a .bvh or a rigged .glb character whose skeleton "
                              "is the target")
    imgui.text("Mapping file (optional)")
    imgui.set_next_item_width(-1)
    _, ui.mapping_path = imgui.input_text("##map", ui.mapping_path)
    target = ui.target_file if ui.target == FILE_CHOICE else ui.target
    clicked = imgui.button("Retarget", (-1, 0))
    _rect(ui, "retarget")
    if clicked:
        rm.enter(state, ui.source_path or None, target, ui.mapping_path or None)


# ---------------------------------------------------------------------- in retarget mode
def _session(state: AppState, ui: rm.RetargetUI, link: rm.RetargetLink) -> None:
    sess = link.session
    rt = sess.rt
    imgui.text_colored(SOURCE_TEXT, sess.source_name)
    imgui.same_line()
    imgui.text(f"-> {rt.target.name}")
    imgui.text_colored(DIM, f"{sess.n_frames} frames at {sess.fps:g} fps, scale "
                            f"{sess.scale:.3f}, rest: {rt.alignment.source_rest_kind}")
    _transport(state, sess)
    imgui.separator_text("Edits")
    ch, ui.keep_edits = imgui.checkbox("Keep drag edits", ui.keep_edits)
    if imgui.is_item_hovered():
        imgui.set_tooltip("on release, a dragged hand / foot / head keeps its offset from the\n"
                          "retargeted motion in every frame (else it follows the motion again)")
    imgui.same_line()
    _, state.pin_on_release = imgui.checkbox("Pin on release", state.pin_on_release)
    rows = rm.edit_rows(state)
    if not rows:
        imgui.text_colored(DIM, "drag or pin (P) a hand, foot or head handle")
    last = sess.n_frames - 1
    for site, kind, off in rows:
        imgui.push_id(site)
        if imgui.small_button("x"):
            rm.clear_edit(state, site)
        if imgui.is_item_hovered():
            imgui.set_tooltip("remove this edit")
        imgui.same_line()
        if off is not None:
            o = 100.0 * off
            imgui.text(f"{site}: {kind} ({o[0]:+.1f}, {o[1]:+.1f}, {o[2]:+.1f}) cm")
        else:
            imgui.text(f"{site}: {kind}")
        if kind != "dragging":
            first, end = link.range_of(site)
            imgui.set_next_item_width(-110)
            ch, a, b = imgui.drag_int_range2("##range", first, end, 0.5, 0, last,
                                            "from %d", "to %d")
            if ch:
                rm.set_range(state, site, a, b, commit=False)
            if imgui.is_item_deactivated_after_edit():
                commit(state, f"range {site}")
            if imgui.is_item_hovered():
                imgui.set_tooltip("frames where the edit holds; it blends in before and out "
                                  f"after over {rm.BLEND_S:g} s")
            imgui.same_line()
            if imgui.small_button("from here"):
                rm.set_range(state, site, sess.frame, max(end, sess.frame))
            imgui.same_line()
            if imgui.small_button("all"):
                rm.set_range(state, site, 0, last)
        imgui.pop_id()
    if rows and imgui.button("Clear all edits"):
        rm.clear_edits(state)
    imgui.separator_text("Bake")
    clicked = imgui.button("Bake to clip")
    _rect(ui, "bake")
    if clicked:
        rm.bake(state)
    if imgui.is_item_hovered():
        imgui.set_tooltip("retarget every frame with the edits and add the result as a clip")
    if link.baked is not None:
        imgui.same_line()
        imgui.text_colored(DIM, f"baked: {link.baked.n_frames} frames")
    if not ui.export_path:
        ui.export_path = str(rm.default_export_path(state))
    imgui.set_next_item_width(-1)
    _, ui.export_path = imgui.input_text("##export", ui.export_path)
    if imgui.button("Export retargeted BVH"):
        rm.export_bvh(state, ui.export_path)
    # full-width buttons: a long document name is clipped inside, not past the panel
    _leave_entries(state, link, lambda label, *_: imgui.button(label, (-1, 0)))
    _quality(state, sess, link)
    _mapping(sess)
    if imgui.collapsing_header("Retarget onto another rig"):
        _setup(state, ui, "the same source onto another target")


def _transport(state: AppState, sess: rm.RetargetSession) -> None:
    if imgui.button("|<"):
        rm.seek(state, 0)
    imgui.same_line()
    if imgui.button("<"):
        rm.step_frames(state, -1)
    imgui.same_line()
    clicked = imgui.button("Pause" if sess.playing else "Play", (60, 0))
    _rect(rm.ui_of(state), "play")
    if clicked:
        rm.set_playing(state, not sess.playing)
    imgui.same_line()
    if imgui.button(">"):
        rm.step_frames(state, 1)
    imgui.same_line()
    if imgui.button(">|"):
        rm.seek(state, sess.n_frames - 1)
    imgui.same_line()
    _, sess.loop = imgui.checkbox("loop", sess.loop)
    imgui.set_next_item_width(-1)
    shown = sess.seek_to if sess.seek_to is not None else sess.frame
    ch, f = imgui.slider_int("##frame", int(shown), 0, max(sess.n_frames - 1, 0),
                             f"frame %d / {sess.n_frames - 1}  ({shown / sess.fps:.2f} s)")
    if ch:
        rm.seek(state, f)
    labels = [f"{s:g}x" for s in rm.SPEEDS]
    cur = int(np.argmin([abs(s - sess.speed) for s in rm.SPEEDS]))
    imgui.set_next_item_width(64)  # the row fits the ~290 px panel at 1280x800
    ch, i = imgui.combo("speed", cur, labels)
    if ch:
        sess.speed = rm.SPEEDS[i]
    imgui.same_line()
    _, sess.follow = imgui.checkbox("follow", sess.follow)
    if imgui.is_item_hovered():
        imgui.set_tooltip("the camera follows the characters while the clip plays")
    imgui.same_line()
    if imgui.small_button("frame both"):
        rm.frame_both(state)


def _quality(state: AppState, sess: rm.RetargetSession, link: rm.RetargetLink) -> None:
    st = sess.stats
    if not imgui.collapsing_header("Quality (live)", imgui.TreeNodeFlags_.default_open):
        return
    flags = imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_h
    if imgui.begin_table("##q", 4, flags):
        for h in ("effector", "now mm", "mean mm", "max mm"):
            imgui.table_setup_column(h)
        imgui.table_headers_row()
        mean = st.mean_mm
        for k, site in enumerate(st.sites):
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(site.removeprefix("retarget:"))
            for v in (st.now_mm[k], mean[k], st.max_mm[k]):
                imgui.table_next_column()
                imgui.text_colored(GOOD if v < 10.0 else BAD, f"{v:.2f}")
        imgui.end_table()
    contact = "".join("on " if c else "off " for c in st.contact) or "-"
    imgui.text(f"iterations {st.last_iterations}  (mean {st.iterations / max(st.frames, 1):.1f}),"
               f"  {st.step_ms:.2f} ms/frame")
    imgui.text(f"feet contact: {contact}  crouch {100 * st.crouch:.1f} cm")
    imgui.text_colored(GOOD if st.limit_violations == 0 else BAD,
                       f"limit violations: {st.limit_violations}")
    imgui.same_line()
    imgui.text_colored(DIM, f"over {st.frames} frames")
    imgui.text_colored(DIM, f"{st.not_converged} frames not within 1 mm")
    if imgui.small_button("reset numbers"):
        st.reset()
    rep = link.report
    if rep is not None:
        imgui.text("bake report:")
        for name, ok in rep.goals.items():
            imgui.text_colored(GOOD if ok else BAD, f"  {'ok ' if ok else 'NO '} {name}")
        imgui.push_text_wrap_pos(0.0)  # the panel is narrow at 1280x800: wrap, do not clip
        imgui.text_colored(DIM, f"  hand/foot mean {rep.hand_foot_mean_error_cm:.3f} cm, skate "
                                f"{rep.max_skate_cm:.2f} cm, penetration "
                                f"{rep.max_penetration_cm:.2f} cm")
        imgui.pop_text_wrap_pos()


def _mapping(sess: rm.RetargetSession) -> None:
    m = sess.rt.mapping
    if not imgui.collapsing_header(f"Mapping ({len(m.pairs)} pairs)###mapping"):
        return
    imgui.text_colored(DIM, f"unmapped: {len(m.unmapped_source)} source, "
                            f"{len(m.unmapped_target)} target joints")
    flags = imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_h
    if imgui.begin_table("##pairs", 3, flags):
        for h in ("target", "source", "role"):
            imgui.table_setup_column(h)
        imgui.table_headers_row()
        for t, s in m.pairs:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(t)
            imgui.table_next_column()
            imgui.text_colored(SOURCE_TEXT, s)
            imgui.table_next_column()
            imgui.text_colored(DIM, m.roles.get(t, ""))
        imgui.end_table()
    imgui.push_text_wrap_pos(0.0)
    imgui.text("effectors: " + ", ".join(f"{s} ({r})" for s, r in m.effectors.items()))
    if m.unmapped_source:
        imgui.text("unmapped source joints:")
        for j in m.unmapped_source:
            imgui.bullet_text(f"{j}: {m.unmapped_reason.get(j, '')}")
    if m.unmapped_target:
        imgui.text("unmapped target joints (interpolated or at rest):")
        imgui.text_colored(DIM, ", ".join(m.unmapped_target))
    imgui.pop_text_wrap_pos()


def _labels(state: AppState) -> None:
    """Names over the target and the source in the 3-D view."""
    x, y, w, h = state.view_rect
    dl = imgui.get_background_draw_list()
    for i, (text, p) in enumerate(rm.label_points(state)):
        s = state.camera.project(p)
        if not np.isfinite(s[2]) or not (0 <= s[0] < w and 0 <= s[1] < h):
            continue
        tw = imgui.calc_text_size(text).x
        col = (0.9, 0.9, 0.92, 0.9) if i == 0 else SOURCE_TEXT
        dl.add_text((x + s[0] - 0.5 * tw, y + s[1] - 8), imgui.get_color_u32(col), text)
