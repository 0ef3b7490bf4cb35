"""A rigged glTF character in the app (issue 12): File › Open gives a document with its skinned
mesh and clips, handles drag with live IK, export keeps the character, a broken file changes
nothing. No GL needed (picking is ray casting)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from app_helpers import app, make_state, site_xy  # noqa: F401 (fixture)

import animik
from animik.app import actions
from animik.app import keys as K
from animik.app.controller import ViewportController
from animik.app.documents import open_into
from animik.app.state import FREE
from animik.app.timeline.transfer import export_current

GLTF = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gltf"
CESIUM = GLTF / "CesiumMan" / "CesiumMan.glb"
needs_cesium = pytest.mark.skipif(not CESIUM.is_file(), reason=f"{CESIUM} not present")


def _drag(ctrl, start, end, steps=12):
    st = ctrl.state
    (x0, y0), (x1, y1) = start, end
    ctrl.on_mouse_motion(x0, y0, 0, 0)
    ctrl.on_mouse_press(x0, y0, K.LEFT, 0)
    px, py = x0, y0
    for i in range(1, steps + 1):
        x, y = x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps
        ctrl.on_mouse_drag(x, y, x - px, y - py, K.LEFT, 0)
        px, py = x, y
        actions.update(st, 1 / 60)
    ctrl.on_mouse_release(x1, y1, K.LEFT, 0)


@needs_cesium
def test_open_a_glb_character_sets_the_mesh_and_clips():
    st = make_state(CESIUM)
    doc = st.doc
    ch = animik.load_character(CESIUM)
    assert doc.mesh is not None and doc.mesh.n_vertices == ch.mesh.n_vertices
    assert doc.skeleton.joint_names == ch.skeleton.joint_names
    assert len(doc.clips) == 1 and doc.clip == 0
    assert {"l_hand", "r_hand", "head"} <= {e.site for e in doc.effectors}


@needs_cesium
def test_drag_a_hand_of_the_character_with_live_ik():
    st = make_state(CESIUM)
    st.doc = st.doc.replace(clips=(), clip=-1)  # pose mode on the bare character
    c = ViewportController(st)
    i = st.skeleton.site_index("l_hand")
    x, y = site_xy(st, "l_hand")
    _drag(c, (x, y), (x - 40, y + 40))
    e = st.doc.effector("l_hand")
    assert e.mode != FREE
    for _ in range(60):
        actions.update(st, 1 / 60)
    assert np.linalg.norm(st.fk.site_positions[i] - e.position) < 5e-3


@needs_cesium
def test_export_from_the_app_keeps_the_character(tmp_path):
    st = make_state(CESIUM)
    out = export_current(st, tmp_path / "walk.glb")
    assert out is not None and out.is_file()
    back = animik.load_character(out)
    np.testing.assert_array_equal(back.mesh.positions, st.doc.mesh.positions)
    assert back.mesh.materials[0].base_color_texture is not None
    assert len(back.clips) == 1


def test_a_broken_glb_leaves_the_document_as_it_was(tmp_path):
    st = make_state("fig2")
    before = st.doc
    bad = tmp_path / "broken.glb"
    bad.write_bytes(b"glTF" + b"\x02\x00\x00\x00" + b"\xff" * 40)
    assert not open_into(st, bad)
    assert st.doc is before


@needs_cesium
def test_add_a_site_at_a_joint_and_remove_one_undoably():
    from animik.app.sites import add_site, remove_site

    st = make_state(CESIUM)
    skel0, mesh = st.skeleton, st.doc.mesh
    j = skel0.joint_index("Skeleton_neck_joint_1")
    st.selected_joint = j
    name = add_site(st, j)
    assert name == "Skeleton_neck_joint_1_site" and st.selected_site == name
    assert st.skeleton.site_names == (*skel0.site_names, name)
    assert st.skeleton.dof_names == skel0.dof_names and st.doc.mesh is mesh
    assert st.doc.clips[0].skeleton is st.skeleton
    np.testing.assert_allclose(st.fk.site_positions[-1], st.fk.joint_positions[j])
    # the new site is an IK effector like the others
    c = ViewportController(st)
    x, y = site_xy(st, name)
    _drag(c, (x, y), (x + 30, y + 10))
    assert st.doc.effector(name).mode != FREE
    assert remove_site(st, "l_hand")
    assert "l_hand" not in st.skeleton.site_names
    actions.undo(st)
    assert "l_hand" in st.skeleton.site_names
    assert not remove_site(st, "no such site") and st.skeleton.n_sites == skel0.n_sites + 1


@needs_cesium
def test_panels_draw_for_a_character_and_the_browser_lists_glb(app):
    from animik.app.ui.files import list_dir

    st = app.state
    assert "CesiumMan.glb" in {f.name for f in list_dir(CESIUM.parent)[1]}
    assert actions.open_into(st, CESIUM)
    assert st.doc.mesh is not None
    st.selected_joint = 3
    st.selected_site = "head"
    for _ in range(3):
        app.frame()
    assert st.skeleton.n_sites == 5  # drawing the panel adds nothing by itself


@needs_cesium
def test_tools_retarget_a_bvh_onto_the_character_bake_and_export(tmp_path):
    from retarget_helpers import write_walker_bvh

    from animik.app.modes import retarget as rm

    bvh = write_walker_bvh(tmp_path / "walk.bvh", frames=30, fps=30.0)
    st = make_state(CESIUM)
    mesh = st.doc.mesh
    assert rm.enter(st, bvh, str(CESIUM), play=False), [m.text for m in st.messages]
    assert st.doc.mesh is mesh  # the open character's body comes along
    baked = rm.bake(st)
    assert baked is not None and baked.n_frames == 30
    assert rm.leave(st) and st.doc.mesh is mesh
    out = export_current(st, tmp_path / "walk_on_cesium.glb")
    back = animik.load_character(out)
    np.testing.assert_array_equal(back.mesh.positions, mesh.positions)
    assert back.clips[0].n_frames == 30


@needs_cesium
def test_a_saved_scene_on_a_character_reopens_and_exports_with_its_mesh(tmp_path):
    from animik.app.documents import save
    from animik.cli import main

    st = make_state(CESIUM)
    scene = save(st, tmp_path / "cesium.scene.toml")
    assert scene is not None
    again = make_state(scene)
    assert again.doc.mesh is not None and again.doc.mesh.n_vertices == st.doc.mesh.n_vertices
    assert len(again.doc.clips) == 1
    out = tmp_path / "out.glb"
    assert main(["export", str(scene), "-o", str(out)]) == 0
    back = animik.load_character(out)
    np.testing.assert_array_equal(back.mesh.positions, st.doc.mesh.positions)
