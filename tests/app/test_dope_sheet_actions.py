"""The dope sheet's and graph editor's actions without GL: selection, move / scale / delete,
copy / paste at the playhead, tangents, the time window; each edit one undo step."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import make_state

from animik import anim
from animik.anim.selection import KeyRef
from animik.app import actions
from animik.app import timeline as tl
from animik.app.editing_ui import SUMMARY
from animik.app.timeline import dope_sheet as ds


@pytest.fixture
def st():
    st = make_state(None)
    for t, v in ((0.0, 0.2), (0.5, 1.2), (1.0, 0.4)):
        tl.set_time(st, t)
        actions.set_dof(st, st.skeleton.dof_index("l_elbow_flexion"), v)
        actions.commit(st, "bend")
        tl.key_pose(st)
    return st


def test_rows_and_summary_selection(st):
    rows = ds.rows(st)
    assert rows[0] == SUMMARY and ("joint", "l_elbow") in rows
    keys = ds.keys_at(st, SUMMARY, 0.5)
    assert len(keys) == len(st.doc.current_clip.tracks)
    ds.select(st, keys)
    assert len(ds.selection(st)) == len(keys)
    one = KeyRef("joint", "l_elbow", 1.0)
    ds.select(st, [one], toggle=True)
    assert one in ds.selection(st)
    ds.select(st, [one], toggle=True)
    assert one not in ds.selection(st)


def test_move_scale_delete_are_undoable(st):
    clip0 = st.doc.current_clip
    ds.box_select(st, [("joint", "l_elbow")], 0.4, 1.1)
    assert {k.time for k in ds.selection(st)} == {0.5, 1.0}
    assert ds.move_selected(st, 0.21)  # 6.3 frames -> 6
    tr = st.doc.current_clip.track("l_elbow")
    np.testing.assert_allclose(tr.times, [0.0, 0.7, 1.2])
    assert sorted(k.time for k in ds.selection(st)) == pytest.approx([0.7, 1.2])
    n = len(st.history.entries)
    assert ds.scale_selected(st, 2.0, pivot=0.7)
    np.testing.assert_allclose(st.doc.current_clip.track("l_elbow").times, [0.0, 0.7, 1.7])
    assert ds.delete_selected(st)
    np.testing.assert_allclose(st.doc.current_clip.track("l_elbow").times, [0.0])
    assert len(st.history.entries) == n + 2
    for _ in range(3):
        actions.undo(st)
    assert st.doc.current_clip.track("l_elbow").times.tolist() == clip0.track("l_elbow").times.tolist()
    # moving before 0 stops at 0 (the earliest selected key)
    ds.select(st, ds.keys_at(st, ("joint", "l_elbow"), 0.5))
    assert ds.move_selected(st, -3.0)
    assert st.doc.current_clip.track("l_elbow").times.tolist() == [0.0, 1.0]


def test_copy_paste_pose_at_the_playhead(st):
    tl.set_time(st, 0.5)
    ds.select(st, ds.keys_at(st, SUMMARY, 0.5))
    assert ds.copy(st)
    tl.set_time(st, 1.5)
    assert ds.paste(st)
    clip = st.doc.current_clip
    np.testing.assert_allclose(clip.sample([1.5])[0], clip.sample([0.5])[0], atol=1e-12)
    k = st.skeleton.dof_index("l_elbow_flexion")
    assert st.doc.q[k] == pytest.approx(1.2)  # the pose shown is the pasted one
    actions.undo(st)
    assert 1.5 not in anim.key_times(st.doc.current_clip).tolist()
    # nothing selected: Ctrl+C copies the (interpolated) pose at the playhead
    ds.select(st, [])
    tl.set_time(st, 0.25)
    q = st.doc.q.copy()
    assert ds.copy(st)
    tl.set_time(st, 1.5)
    assert ds.paste(st)
    np.testing.assert_allclose(st.doc.q, q, atol=1e-9)


def test_time_window_zoom_and_pan(st):
    assert ds.span(st) == (0.0, pytest.approx(2.0))
    ds.zoom(st, 2.0, about=1.0)
    assert ds.span(st) == (pytest.approx(0.5), pytest.approx(1.5))
    ds.pan(st, 0.25)
    assert ds.span(st) == (pytest.approx(0.75), pytest.approx(1.75))
    ds.frame_all(st)
    assert ds.span(st) == (0.0, pytest.approx(2.0))
