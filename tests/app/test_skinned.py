"""Skinned meshes in the app on headless EGL: GPU skinning (read back with transform feedback)
against an independent numpy LBS, the mesh's pixels where the bones are, view modes, textures
and parts, and handles visible and pickable through the mesh."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import app, gui_key, make_state  # noqa: F401 (app: a fixture)
from render_helpers import H, W, gl, px, render_view  # noqa: F401 (gl: a fixture)

from animik.app import actions
from animik.app import keys as K
from animik.app.geometry import ViewGeometry, build_view
from animik.app.picking import pick_handle
from animik.app.render.shaders import shader_source
from animik.app.render.skinned import VERTEX_ATTRIBUTES, VERTEX_FORMAT, SkinnedMeshGPU
from animik.app.state import VIEW_BONES, VIEW_MESH, VIEW_XRAY
from animik.character import Material, MeshPart, SkinnedMesh, homogeneous
from animik.kinematics import forward_kinematics

pytestmark = pytest.mark.gl



def render(gl, state, geom: ViewGeometry | None = None) -> np.ndarray:
    """``(H, W, 3)`` int, first row at the top (viewport pixel convention)."""
    return render_view(gl, state, geom).astype(int)


def no_handles(state) -> ViewGeometry:
    """The view geometry with the character's joints and bones but no handles or overlay."""
    g = build_view(state)
    z = np.zeros((0, 16), np.float32)
    return ViewGeometry(g.spheres, g.cylinders, z, z, z, z, z, g.joint_radius, g.bone_radius,
                        g.handle_sites[:0], g.handle_pos[:0], g.handle_radius[:0])


def nothing(state) -> ViewGeometry:
    g = no_handles(state)
    z = np.zeros((0, 16), np.float32)
    return ViewGeometry(z, z, z, z, z, z, z, g.joint_radius, g.bone_radius, g.handle_sites,
                        g.handle_pos, g.handle_radius)


def lbs(positions, joints, weights, inverse_bind, world_from_joint):
    """Independent linear blend skinning, one vertex at a time (glTF 2.0 3.7.3)."""
    out = np.zeros((len(positions), 3))
    for v in range(len(positions)):
        m = np.zeros((4, 4))
        for k in range(4):
            m += weights[v, k] * (world_from_joint[joints[v, k]] @ inverse_bind[joints[v, k]])
        out[v] = (m @ np.append(positions[v], 1.0))[:3]
    return out


def gpu_skinned(gl, mesh: SkinnedMesh, wfj: np.ndarray) -> np.ndarray:
    """``(V, 3)`` vertex positions computed by shaders/skinned.vert (transform feedback)."""
    ctx, fbo, _ = gl
    fbo.use()  # a standalone context has no default framebuffer: draws need one bound
    # every output captured (interleaved), so no vertex attribute is optimised away
    prog = ctx.program(vertex_shader=shader_source("skinned.vert"),
                       varyings=["v_world", "v_normal", "v_uv"])
    gpu = SkinnedMeshGPU(ctx, prog, mesh)
    gpu.set_pose(wfj)
    gpu.joint_tex.use(0)
    prog["u_joints"].value = 0
    out = ctx.buffer(reserve=mesh.n_vertices * 32)
    vao = ctx.vertex_array(prog, [(gpu.vbo, VERTEX_FORMAT, *VERTEX_ATTRIBUTES)])
    vao.transform(out, mode=ctx.POINTS, vertices=mesh.n_vertices)
    got = np.frombuffer(out.read(), np.float32).reshape(-1, 8)[:, :3].astype(float)
    for o in (vao, out):
        o.release()
    gpu.release()
    prog.release()
    return got


def random_mesh(rng, n_joints: int, n_vertices: int = 300) -> SkinnedMesh:
    """Random vertices with 4 random influences each and random invertible inverse binds."""
    pos = rng.normal(0.0, 0.5, (n_vertices, 3))
    nrm = rng.normal(size=(n_vertices, 3))
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    joints = np.stack([rng.choice(n_joints, 4, replace=False) for _ in range(n_vertices)])
    w = rng.random((n_vertices, 4)) ** 2
    w[:, 3] *= rng.random(n_vertices) < 0.5  # some vertices with 3 influences
    w /= w.sum(axis=1, keepdims=True)
    ib = np.tile(np.eye(4), (n_joints, 1, 1))
    ib[:, :3, :3] += rng.normal(0.0, 0.2, (n_joints, 3, 3))
    ib[:, :3, 3] = rng.normal(0.0, 0.5, (n_joints, 3))
    faces = np.arange(3 * (n_vertices // 3)).reshape(-1, 3)
    return SkinnedMesh(pos, nrm, faces, joints, w, ib)


def test_gpu_skinning_matches_numpy_lbs_on_random_poses(gl):
    """body95's generated body (52 joints) on random poses, read back from the vertex shader."""
    st = make_state("body95")
    skel, mesh = st.skeleton, st.doc.mesh
    rng = np.random.default_rng(11)
    sample = rng.choice(mesh.n_vertices, 500, replace=False)
    for _ in range(3):
        q = skel.clip_to_limits(skel.rest_q + rng.normal(0.0, 0.6, skel.n_dof) * (skel.dof_type == 0))
        q[:3] += rng.normal(0.0, 0.3, 3) * (skel.dof_type[:3] == 1)
        fk = forward_kinematics(skel, q)
        wfj = homogeneous(fk.joint_rotations, fk.joint_positions)
        got = gpu_skinned(gl, mesh, wfj)[sample]
        want = lbs(mesh.positions[sample].astype(float), mesh.joints[sample],
                   mesh.weights[sample].astype(float), mesh.inverse_bind, wfj)
        np.testing.assert_allclose(got, want, atol=2e-5)


def test_gpu_skinning_four_influences_and_many_joints(gl):
    """Random 4-influence weights, arbitrary inverse binds, 300 joints (more than a uniform
    array of mat4 would hold at the GL minimum)."""
    rng = np.random.default_rng(5)
    J = 300
    mesh = random_mesh(rng, J)
    wfj = np.tile(np.eye(4), (J, 1, 1))
    for j in range(J):
        a = rng.normal(size=3)
        ang = np.linalg.norm(a)
        k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]) / ang
        wfj[j, :3, :3] = np.eye(3) + np.sin(ang) * k + (1 - np.cos(ang)) * k @ k
        wfj[j, :3, 3] = rng.normal(0.0, 1.0, 3)
    got = gpu_skinned(gl, mesh, wfj)
    want = lbs(mesh.positions.astype(float), mesh.joints, mesh.weights.astype(float),
               mesh.inverse_bind, wfj)
    np.testing.assert_allclose(got, want, atol=5e-5)


@pytest.mark.parametrize("rig", ["body95", "fig2", "biped12", "wheeled20"])
def test_mesh_renders_where_the_bones_are(gl, rig):
    st = make_state(rig)
    assert st.doc.mesh is not None and st.view_mode == VIEW_MESH
    rng = np.random.default_rng(2)
    skel = st.skeleton
    q = skel.clip_to_limits(skel.rest_q + rng.normal(0.0, 0.4, skel.n_dof) * (skel.dof_type == 0))
    st.doc = st.doc.with_pose(q)
    img = render(gl, st, nothing(st))
    st.view_mode = VIEW_BONES
    bg = render(gl, st, nothing(st))  # bones mode without bones: the background alone
    st.view_mode = VIEW_MESH
    fk = st.fk
    inside = 0
    for j in range(skel.n_joints):
        x, y = px(st, fk.joint_positions[j])
        if 0 <= x < W and 0 <= y < H:
            inside += 1
            assert np.abs(img[y, x] - bg[y, x]).sum() > 40, f"{rig}: no mesh at joint {skel.joint_names[j]}"
    assert inside >= 0.9 * skel.n_joints
    # far from the character the image is the background
    assert np.array_equal(img[5, 5], bg[5, 5])
    assert np.array_equal(img[5, W - 6], bg[5, W - 6])
    # the mesh covers more than the bones do: a point on the thigh's surface, beside the bone
    if rig == "body95":
        a, b = fk.joint_positions[skel.joint_index("l_hip")], fk.joint_positions[skel.joint_index("l_knee")]
        mid = 0.5 * (a + b)
        side = np.cross(b - a, st.camera.eye - mid)
        side *= 0.055 / np.linalg.norm(side)
        x, y = px(st, mid + side)
        st.view_mode = VIEW_BONES
        bones = render(gl, st, no_handles(st))
        assert np.abs(img[y, x] - bg[y, x]).sum() > 40
        assert np.abs(bones[y, x] - bg[y, x]).sum() < 10


def test_view_modes_mesh_bones_xray(gl):
    st = make_state("body95")
    skel = st.skeleton
    j = skel.joint_index("upper_thorax")
    x, y = px(st, st.fk.joint_positions[j])
    g = no_handles(st)
    shots = {}
    for mode in (VIEW_MESH, VIEW_BONES, VIEW_XRAY):
        actions.set_view_mode(st, mode)
        shots[mode] = render(gl, st, g)
    st.view_mode = VIEW_BONES
    bg = render(gl, st, nothing(st))
    # the chest joint is inside the mesh: hidden in mesh mode, drawn in bones and x-ray modes
    joint_px = shots[VIEW_BONES][y, x]
    assert np.abs(joint_px - bg[y, x]).sum() > 40
    assert np.abs(shots[VIEW_XRAY][y, x] - joint_px).sum() < np.abs(shots[VIEW_MESH][y, x] - joint_px).sum()
    assert np.abs(shots[VIEW_XRAY][y, x] - shots[VIEW_MESH][y, x]).sum() > 30
    # x-ray: the mesh is still drawn around the bones
    yy, xx = np.nonzero(np.abs(shots[VIEW_MESH] - bg).sum(axis=2) > 40)
    mesh_area = len(xx)
    xray_area = int((np.abs(shots[VIEW_XRAY] - bg).sum(axis=2) > 40).sum())
    bone_area = int((np.abs(shots[VIEW_BONES] - bg).sum(axis=2) > 40).sum())
    assert xray_area >= mesh_area > 2 * bone_area
    with pytest.raises(ValueError):
        actions.set_view_mode(st, "wireframe")


def test_view_mode_key_and_menu_cycle(app):
    st = app.state
    assert st.doc.mesh is not None and st.view_mode == VIEW_MESH
    seen = []
    for _ in range(3):
        gui_key(app, K.V)
        seen.append(st.view_mode)
    assert seen == [VIEW_BONES, VIEW_XRAY, VIEW_MESH]
    # without a mesh, V says so and changes nothing
    st.doc = st.doc.replace(mesh=None)
    gui_key(app, K.V)
    assert st.view_mode == VIEW_MESH
    assert "no mesh" in st.messages[-1].text


def test_mesh_uploaded_once_while_posing(app):
    """Only the joint matrices change per frame: the vertex buffer is uploaded once."""
    st = app.state
    renderer = app.gui.scene_renderer
    app.frame()
    n = renderer.skinned.uploads
    skel = st.skeleton
    rng = np.random.default_rng(0)
    for _ in range(5):
        st.doc = st.doc.with_pose(skel.clip_to_limits(skel.rest_q + rng.normal(0, 0.3, skel.n_dof)
                                                      * (skel.dof_type == 0)))
        app.frame()
    assert renderer.skinned.uploads == n


def test_handle_behind_the_mesh_is_visible_and_picked(gl):
    """The head site lies inside the head's mesh: its handle is drawn over the mesh, and
    picking finds it (from the front and from the side)."""
    for yaw in (0.0, np.pi / 2):
        st = make_state("body95")
        st.camera.yaw = yaw
        site = st.skeleton.site_index("head")
        p = st.fk.site_positions[site]
        x, y = px(st, p)
        img = render(gl, st)
        mesh_only = render(gl, st, no_handles(st))
        st.view_mode = VIEW_BONES
        bg = render(gl, st, nothing(st))
        st.view_mode = VIEW_MESH
        assert np.abs(mesh_only[y, x] - bg[y, x]).sum() > 40  # the mesh covers the site
        assert np.abs(img[y, x] - mesh_only[y, x]).sum() > 60  # and the handle shows through
        sx, sy = st.camera.project(p)[:2]
        assert pick_handle(st, build_view(st), sx, sy) == "head"


def test_material_parts_and_base_colour_texture(gl):
    """Two parts, one with a texture: each part draws with its own material."""
    ctx, fbo, renderer = gl
    st = make_state("body95")
    body = st.doc.mesh
    n = body.n_faces
    tex = np.zeros((8, 8, 4), np.uint8)
    tex[..., 1] = 255  # pure green
    tex[..., 3] = 255
    uvs = np.full((body.n_vertices, 2), 0.5, np.float32)
    # faces of the upper body (above the hips) first, then the rest
    upper = body.positions[body.faces].mean(axis=1)[:, 2] > 1.0
    faces = np.concatenate([body.faces[upper], body.faces[~upper]])
    k = int(upper.sum())
    mesh = body.replace(faces=faces, uvs=uvs, parts=(MeshPart(0, k, 0), MeshPart(k, n - k, 1)),
                        materials=(Material("red", (1.0, 0.0, 0.0, 1.0)),
                                   Material("tex", (1.0, 1.0, 1.0, 1.0), base_color_texture=tex)))
    st.doc = st.doc.replace(mesh=mesh)
    img = render(gl, st, nothing(st))
    fk = st.fk
    chest = px(st, fk.joint_positions[st.skeleton.joint_index("upper_thorax")])
    shin = px(st, 0.5 * (fk.joint_positions[st.skeleton.joint_index("l_knee")]
                         + fk.joint_positions[st.skeleton.joint_index("l_ankle")]))
    r, g, b = img[chest[1], chest[0]]
    assert r > g + 60 and r > b + 60
    r, g, b = img[shin[1], shin[0]]
    assert g > r + 60 and g > b + 60


def test_clicking_the_mesh_picks_the_joint_under_it(gl):
    """In the mesh view a click on the thigh's surface (away from the bone, where bone picking
    misses) selects the hip joint; the selected joint's region is tinted on the mesh."""
    from animik.app.picking import _pick_bone, pick_joint, pick_mesh

    st = make_state("body95")
    skel = st.skeleton
    fk = st.fk
    hip, knee = skel.joint_index("l_hip"), skel.joint_index("l_knee")
    a, b = fk.joint_positions[hip], fk.joint_positions[knee]
    mid = 0.6 * a + 0.4 * b
    side = np.cross(b - a, st.camera.eye - mid)
    side *= 0.05 / np.linalg.norm(side)
    sx, sy = st.camera.project(mid + side)[:2]
    g = build_view(st)
    assert _pick_bone(st, g, sx, sy) is None  # the bones alone: background there
    # over a joint, the joint (a bone inside the body at the hit), as in the bones view
    kx, ky = st.camera.project(b)[:2]
    assert pick_joint(st, g, kx, ky) == knee
    hit = pick_mesh(st, sx, sy)
    assert hit is not None and hit[1] == hip
    assert pick_joint(st, g, sx, sy) == hip
    # the hit lies on the skinned surface, nearer than the bone
    o, d = st.camera.ray(sx, sy)
    assert np.linalg.norm(o + hit[0] * d - mid) < 0.12
    st.view_mode = VIEW_BONES
    assert pick_joint(st, g, sx, sy) is None
    st.view_mode = VIEW_MESH
    # the selected joint's region (the left forearm for the elbow) is tinted on the mesh
    elbow, wrist = skel.joint_index("l_elbow"), skel.joint_index("l_wrist")
    x, y = px(st, 0.5 * (fk.joint_positions[elbow] + fk.joint_positions[wrist]))
    before = render(gl, st, nothing(st))
    st.selected_joint = elbow
    after = render(gl, st, nothing(st))
    assert np.abs(after[y, x] - before[y, x]).sum() > 40
    assert after[y, x][2] > before[y, x][2] + 20  # towards the selection's cyan
    st.selected_joint = None
    # posed: the picking follows the skinned (not the bind-pose) surface
    st.view_mode = VIEW_MESH
    rx, ry = st.camera.project(0.5 * (fk.joint_positions[elbow] + fk.joint_positions[wrist]))[:2]
    assert pick_joint(st, g, rx, ry) == elbow
    q = st.doc.q.copy()
    tz = [k for k in skel.joint_dofs(0) if skel.dof_type[k] == 1 and abs(skel.dof_axis[k][2]) > 0.9]
    q[tz[0]] += 0.25  # the whole character 25 cm up
    st.doc = st.doc.with_pose(q)
    p_wrist = st.fk.joint_positions[wrist]
    p_elbow = st.fk.joint_positions[elbow]
    fx, fy = st.camera.project(0.5 * (p_wrist + p_elbow))[:2]
    g = build_view(st)
    assert pick_joint(st, g, fx, fy) in (elbow, wrist)
    assert pick_joint(st, g, rx, ry) not in (elbow, wrist)  # the arm has left that spot


def test_documents_keep_or_get_a_body():
    """Opening a BVH (also as an import onto another skeleton), resetting the pose and entering
    retarget mode give documents with a body bound to their skeleton; a given mesh is kept."""
    from pathlib import Path

    from animik.app import timeline
    from animik.app.documents import with_body
    from animik.app.modes import retarget as rm
    from animik.bodies import generated_body

    data = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    bvh = data / "bvh" / "sfu" / "0005_Walking001.bvh"
    if not bvh.is_file():
        pytest.skip("shared BVH data not present")
    st = make_state("body95")
    mesh = st.doc.mesh
    assert mesh is generated_body(st.skeleton)
    actions.reset_pose(st)
    assert st.doc.mesh is mesh
    assert with_body(st.doc) is st.doc  # a document with a mesh keeps it
    assert timeline.import_bvh(st, bvh)  # another skeleton: a new document with its own body
    assert st.doc.mesh is not None and len(st.doc.mesh.inverse_bind) == st.skeleton.n_joints
    assert rm.enter(st, str(bvh), "fig2"), [m.text for m in st.messages]
    assert st.doc.mesh is not None and len(st.doc.mesh.inverse_bind) == st.skeleton.n_joints


def test_texture_images_of_any_channel_count_become_rgba():
    from animik.app.render.skinned import rgba8

    grey = np.full((2, 3), 7, np.uint8)
    assert rgba8(grey).shape == (2, 3, 4) and np.all(rgba8(grey)[..., :3] == 7)
    assert np.all(rgba8(grey)[..., 3] == 255)
    rgb = np.zeros((2, 3, 3))
    rgb[..., 1] = 1.0  # floats in [0, 1]
    out = rgba8(rgb)
    assert out.dtype == np.uint8 and np.all(out[..., 1] == 255) and np.all(out[..., 3] == 255)
    ga = np.stack([grey, np.full_like(grey, 9)], axis=2)
    assert np.all(rgba8(ga)[..., 3] == 9) and np.all(rgba8(ga)[..., 0] == 7)
