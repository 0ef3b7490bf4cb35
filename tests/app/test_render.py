"""Rendering on a headless EGL context: pixels show what the camera says, and picking agrees."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import make_state
from render_helpers import H, W, gl, px, render_view  # noqa: F401 (gl: a fixture)

from animik.app import actions
from animik.app.geometry import ViewGeometry, build_view, sphere_instances
from animik.app.picking import pick_handle, pick_joint
from animik.app.state import TARGET, VIEW_BONES

pytestmark = pytest.mark.gl



def render(gl, state, geom: ViewGeometry | None = None) -> np.ndarray:
    """``(H, W, 3)`` uint8, first row at the top (viewport pixel convention)."""
    return render_view(gl, state, geom)


def empty(state) -> ViewGeometry:
    g = build_view(state)
    z = np.zeros((0, 16), np.float32)
    return ViewGeometry(z, z, z, z, z, z, z, g.joint_radius, g.bone_radius, g.handle_sites[:0],
                        g.handle_pos[:0], g.handle_radius[:0])


def test_character_pixels_where_the_camera_projects_joints(gl):
    st = make_state(None)
    st.view_mode = VIEW_BONES  # the skinned mesh: tests/app/test_skinned.py
    img = render(gl, st)
    bg = render(gl, st, empty(st))
    skel = st.skeleton
    for name in ("pelvis", "upper_thorax", "skull", "l_knee", "r_elbow", "l_wrist"):
        x, y = px(st, st.fk.joint_positions[skel.joint_index(name)])
        assert 0 <= x < W and 0 <= y < H
        diff = np.abs(img[y, x].astype(int) - bg[y, x].astype(int)).sum()
        assert diff > 60, f"joint {name} at pixel {(x, y)} not drawn: {img[y, x]} vs {bg[y, x]}"
    # and far from the character the image is the background
    assert np.array_equal(img[5, 5], bg[5, 5])


def test_rendered_sphere_centroid_matches_projection(gl):
    """The renderer's matrices and OrbitCamera.project agree to a pixel."""
    st = make_state(None)
    st.view_mode = VIEW_BONES
    g = empty(st)
    for point in ([0.3, -0.2, 1.4], [-0.4, 0.5, 0.2], [0.0, 0.0, 0.95]):
        g.spheres = sphere_instances(np.array([point]), 0.03, (1.0, 0.0, 1.0))
        img = render(gl, st, g).astype(int)
        bg = render(gl, st, empty(st)).astype(int)
        p = st.camera.project(np.array(point))
        mask = np.abs(img - bg).sum(axis=2) > 40
        # only around the projection: the sphere's contact shadow lies on the ground below it
        yy, xx = np.mgrid[:H, :W]
        mask &= (np.abs(xx - p[0]) < 30) & (np.abs(yy - p[1]) < 30)
        ys, xs = np.nonzero(mask)
        assert len(xs) > 20
        assert abs(xs.mean() + 0.5 - p[0]) < 1.0 and abs(ys.mean() + 0.5 - p[1]) < 1.0


def test_joint_at_limit_is_red(gl):
    st = make_state(None)
    st.view_mode = VIEW_BONES
    skel = st.skeleton
    j = skel.joint_index("l_elbow")
    k = skel.joint_dofs(j)[0]
    actions.set_dof(st, k, skel.upper[k])
    assert st.at_limit()[j]
    img = render(gl, st).astype(int)
    x, y = px(st, st.fk.joint_positions[j])
    r, g, b = img[y, x]
    assert r > g + 60 and r > b + 60, f"joint at limit not red: {img[y, x]}"
    j2 = skel.joint_index("upper_thorax")
    assert not st.at_limit()[j2]
    r, g, b = img[px(st, st.fk.joint_positions[j2])[::-1]]
    assert abs(r - g) < 40  # a joint within limits is grey


def test_handles_drawn_on_top_and_error_line(gl):
    st = make_state(None)
    i = st.skeleton.site_index("r_hand")
    e = st.doc.effector("r_hand")
    target = st.fk.site_positions[i] + [0.0, -0.25, 0.2]
    actions.set_effector(st, e.replace(mode=TARGET, position=target))
    img = render(gl, st).astype(int)
    x, y = px(st, target)
    r, g, b = img[y, x]
    assert r > 180 and g > 140 and b < 120, f"target handle not yellow: {img[y, x]}"
    # a point on the error line (site -> target), away from both ends
    mid = st.fk.site_positions[i] + 0.5 * (target - st.fk.site_positions[i])
    xm, ym = px(st, mid)
    patch = img[ym - 1:ym + 2, xm - 1:xm + 2].reshape(-1, 3)
    assert np.any((patch[:, 0] > 180) & (patch[:, 2] < 120)), "error line missing"


def test_pick_handle_at_its_pixel(gl):
    st = make_state(None)
    img = render(gl, st)
    g = build_view(st)
    for site in ("head", "l_hand", "r_foot"):
        x, y = px(st, g.handle_pos[st.skeleton.site_index(site)])
        assert pick_handle(st, g, x + 0.5, y + 0.5) == site
        assert np.abs(img[y, x].astype(int) - img[2, 2].astype(int)).sum() > 60
    assert pick_handle(st, g, 5, 5) is None
    j = st.skeleton.joint_index("upper_thorax")
    x, y = px(st, st.fk.joint_positions[j])
    assert pick_joint(st, g, x + 0.5, y + 0.5) == j
    assert pick_joint(st, g, 5, 5) is None


def test_every_builtin_scene_renders(gl):
    for name in ("fig2", "wheeled20", "biped12", "body95", "default"):
        st = make_state(actions.scenes_dir() / f"{name}.toml")
        img = render(gl, st)
        bg = render(gl, st, empty(st))
        assert (np.abs(img.astype(int) - bg.astype(int)).sum(axis=2) > 40).sum() > 500, name
