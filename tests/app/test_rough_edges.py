"""Rough edges a new user hit (issue 13 section 4): saving, importing a BVH onto the
character, retarget mode keeping the document's clips and pins, idle redraws, panel widths."""

from __future__ import annotations

from app_helpers import SIZE, app, gui_key, make_state  # noqa: F401

from animik.app import actions
from animik.app import keys as K
from animik.app.state import safe_slug
from animik.scene import load_scene


def test_safe_slug():
    assert safe_slug("default: body95 standing") == "default_body95_standing"
    assert safe_slug("a/b\\\\c") == "a_b_c"
    assert safe_slug(" :: ") == "scene"


def test_ctrl_s_never_overwrites_a_shipped_scene_and_follows_undo(app, tmp_path, monkeypatch):
    """The default scene is the package's: Ctrl+S asks (Save As, a slug in the cwd); after
    a Save As, Ctrl+S writes there; undoing an Open brings back that file, not a display name."""
    monkeypatch.chdir(tmp_path)
    st = app.state
    shipped = st.scene_path
    assert shipped is not None and actions.is_shipped(shipped)
    before = shipped.read_bytes()
    gui_key(app, K.S, K.MOD_CTRL)
    assert st.show_file_browser and st.browser_mode == "save"
    assert st.browser_dir == tmp_path and ":" not in st.browser_name
    assert st.browser_name == "default_body95_standing.scene.toml"
    assert shipped.read_bytes() == before and not list(tmp_path.iterdir())
    # the browser's Save button writes the proposed file; it becomes the document's
    x0, y0, x1, y1 = st.ui_rects["browser_ok"]
    from app_helpers import gui_click

    gui_click(app, (x0 + x1) / 2, (y0 + y1) / 2)
    mine = tmp_path / "default_body95_standing.scene.toml"
    assert mine.is_file() and st.scene_path == mine and not st.show_file_browser
    # open a built-in rig, then undo: the default scene comes back with *its* file (mine)
    assert actions.open_into(st, "fig2")
    assert st.scene_path is None
    gui_key(app, K.S, K.MOD_CTRL)  # a built-in rig: asks too
    assert st.show_file_browser and st.browser_name == "fig2.scene.toml"
    st.show_file_browser = False
    actions.undo(st)
    app.frame()
    assert st.skeleton.name == "body95" and st.scene_path == mine
    mine.unlink()
    gui_key(app, K.S, K.MOD_CTRL)
    assert mine.is_file() and not st.show_file_browser
    assert load_scene(mine).skeleton.name == "body95"
    assert [p.name for p in tmp_path.iterdir()] == [mine.name]
    assert shipped.read_bytes() == before
    # redo the open: fig2 has no file again
    actions.redo(st)
    assert st.scene_path is None
