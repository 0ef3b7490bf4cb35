"""The 3-D viewport renderer: instanced primitives, ground grid and overlays, with moderngl.

Reads the state (through :func:`animik.app.geometry.build_view`) and never writes it. The
primitive meshes are built once with trimesh; per frame only the instance buffers are written
and each primitive type is drawn with one instanced call (character, ground shadow, overlay).
"""

from __future__ import annotations

import numpy as np

from ..geometry import ViewGeometry, grid_lines
from ..state import VIEW_BONES, VIEW_XRAY, AppState
from .shaders import program
from .skinned import SkinnedRenderer

LIGHT_DIR = np.array([0.45, 0.35, 0.82]) / np.linalg.norm([0.45, 0.35, 0.82])
BG_TOP = (0.23, 0.25, 0.29)
BG_BOTTOM = (0.12, 0.13, 0.15)
CHARACTER_DEPTH = (-0.8, 1.0)  # NDC depth ranges of the passes (see shaders/mesh.vert)
XRAY_DEPTH = (-0.85, -0.8)  # bones drawn through the mesh (view mode "mesh + x-ray bones")
FREE_HANDLE_DEPTH = (-0.9, -0.85)
XRAY_ALPHA = 0.8
OVERLAY_DEPTH = (-1.0, -0.9)


def _unit_meshes() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Unit primitives ``{name: (interleaved position+normal (V, 6) f4, faces (F, 3) u4)}``."""
    import trimesh

    def pack(mesh):
        m = mesh.smooth_shaded if hasattr(mesh, "smooth_shaded") else mesh
        v = np.asarray(m.vertices, np.float32)
        n = np.asarray(m.vertex_normals, np.float32)
        return np.ascontiguousarray(np.hstack([v, n])), np.ascontiguousarray(m.faces, np.uint32)

    cyl = trimesh.creation.cylinder(radius=1.0, height=1.0, sections=14)
    cyl.apply_translation((0.0, 0.0, 0.5))
    return {
        "sphere": pack(trimesh.creation.icosphere(subdivisions=2, radius=1.0)),
        "cylinder": pack(cyl),
        "cube": pack(trimesh.creation.box(extents=(2.0, 2.0, 2.0))),
        "torus": pack(trimesh.creation.torus(major_radius=1.0, minor_radius=0.035,
                                             major_sections=64, minor_sections=8)),
    }


class InstancedMesh:
    """One primitive mesh drawn with a growing per-instance buffer (16 float32 per instance)."""

    def __init__(self, ctx, prog, vertices: np.ndarray, faces: np.ndarray, capacity: int = 256):
        self.ctx = ctx
        self.prog = prog
        self.vbo = ctx.buffer(vertices.tobytes())
        self.ibo = ctx.buffer(faces.tobytes())
        self.capacity = capacity
        self.inst = ctx.buffer(reserve=capacity * 64, dynamic=True)
        self.vao = self._vao()

    def _vao(self):
        return self.ctx.vertex_array(self.prog, [
            (self.vbo, "3f 3f", "in_position", "in_normal"),
            (self.inst, "3f 3f 3f 3f 4f/i", "i_c0", "i_c1", "i_c2", "i_t", "i_color"),
        ], index_buffer=self.ibo, index_element_size=4)

    def draw(self, instances: np.ndarray) -> None:
        n = len(instances)
        if n == 0:
            return
        if n > self.capacity:  # grow geometrically: no per-frame reallocation while posing
            while self.capacity < n:
                self.capacity *= 2
            self.inst.orphan(self.capacity * 64)
            self.vao.release()
            self.vao = self._vao()
        self.inst.write(np.ascontiguousarray(instances, np.float32).tobytes())
        self.vao.render(instances=n)

    def release(self) -> None:
        for o in (self.vao, self.vbo, self.ibo, self.inst):
            o.release()


class SceneRenderer:
    """Draws the character, the ground and the handles of an :class:`AppState`."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.mesh_prog = program(ctx, "mesh")
        self.line_prog = program(ctx, "line")
        self.bg_prog = program(ctx, "background")
        self.meshes = {k: InstancedMesh(ctx, self.mesh_prog, v, f)
                       for k, (v, f) in _unit_meshes().items()}
        gp, gc = grid_lines()
        self.grid_vbo = ctx.buffer(np.hstack([gp, gc]).astype("f4").tobytes())
        self.grid_vao = ctx.vertex_array(self.line_prog,
                                         [(self.grid_vbo, "3f 4f", "in_position", "in_color")])
        self.grid_count = len(gp)
        self.bg_vao = ctx.vertex_array(self.bg_prog, [])
        self.bg_prog["u_top"].value = BG_TOP
        self.bg_prog["u_bottom"].value = BG_BOTTOM
        self.skinned = SkinnedRenderer(ctx)

    def render(self, state: AppState, geom: ViewGeometry, rect: tuple[int, int, int, int]) -> None:
        """Draw into the bound framebuffer's ``rect = (x, y, w, h)`` (GL pixels, bottom-left).

        Passes: background (fills colour and depth), character, ground grid (and, if enabled,
        a contact shadow), then the overlay (handles, error lines, gizmo) in a nearer depth
        range so it is always visible. Each primitive is one instanced draw call per pass.
        """
        ctx = self.ctx
        x, y, w, h = rect
        if w <= 0 or h <= 0:
            return
        ctx.viewport = rect
        ctx.scissor = rect
        ctx.disable(ctx.CULL_FACE | ctx.BLEND)
        ctx.enable(ctx.DEPTH_TEST)
        ctx.depth_func = "1"  # always: the background writes colour and far depth everywhere
        self.bg_vao.render(vertices=3)
        ctx.depth_func = "<"

        cam = state.camera
        vp = cam.view_proj()
        vp_bytes = vp.T.astype("f4").tobytes()
        mp = self.mesh_prog
        mp["u_view_proj"].write(vp_bytes)
        mp["u_eye"].value = tuple(cam.eye.astype(float))
        mp["u_light_dir"].value = tuple(LIGHT_DIR)
        mp["u_flat"].value = 0.0
        mp["u_depth_range"].value = CHARACTER_DEPTH

        # the character, depth-tested, back faces culled: its skinned mesh or its bones
        ctx.enable(ctx.CULL_FACE)
        mesh = state.doc.mesh
        show_mesh = mesh is not None and state.view_mode != VIEW_BONES
        if show_mesh:
            fk = state.fk
            self.skinned.draw(mesh, fk.joint_rotations, fk.joint_positions, vp, cam.eye,
                              LIGHT_DIR, CHARACTER_DEPTH, selected=state.selected_joint,
                              hovered=state.hover_joint)
            ctx.enable(ctx.CULL_FACE)
            own_spheres, own_cylinders, more_spheres, more_cylinders = geom.character_split()
            self.meshes["sphere"].draw(more_spheres)  # what the mode adds (retarget's source)
            self.meshes["cylinder"].draw(more_cylinders)
        else:
            self.meshes["sphere"].draw(geom.spheres)
            self.meshes["cylinder"].draw(geom.cylinders)

        # ground: the grid (and a soft contact shadow: the character squashed onto z = 0)
        ctx.enable(ctx.BLEND)
        ctx.blend_func = ctx.SRC_ALPHA, ctx.ONE_MINUS_SRC_ALPHA
        if state.show_shadow:
            mp["u_flat"].value = 1.0
            self.meshes["sphere"].draw(_shadow(geom.spheres))
            self.meshes["cylinder"].draw(_shadow(geom.cylinders))
        lp = self.line_prog
        lp["u_view_proj"].write(vp_bytes)
        lp["u_depth_range"].value = CHARACTER_DEPTH
        lp["u_fade_center"].value = tuple(np.array([cam.target[0], cam.target[1], 0.0]))
        lp["u_fade_radius"].value = 5.0
        self.grid_vao.render(ctx.LINES, vertices=self.grid_count)

        # x-ray bones: over the mesh (their own depth range), under the handles
        if show_mesh and state.view_mode == VIEW_XRAY:
            mp["u_flat"].value = 0.35
            mp["u_depth_range"].value = XRAY_DEPTH
            self.meshes["sphere"].draw(_translucent(own_spheres, XRAY_ALPHA))
            self.meshes["cylinder"].draw(_translucent(own_cylinders, XRAY_ALPHA))

        # overlay: free handles over the character, then constrained and selected handles,
        # error lines and the gizmo over everything
        mp["u_flat"].value = 0.15
        mp["u_depth_range"].value = FREE_HANDLE_DEPTH
        self.meshes["sphere"].draw(geom.free_spheres)
        mp["u_depth_range"].value = OVERLAY_DEPTH
        self.meshes["cylinder"].draw(geom.overlay_cylinders)
        self.meshes["sphere"].draw(geom.overlay_spheres)
        self.meshes["cube"].draw(geom.overlay_cubes)
        self.meshes["torus"].draw(geom.overlay_tori)
        ctx.disable(ctx.BLEND | ctx.DEPTH_TEST | ctx.CULL_FACE)
        ctx.scissor = None

    def release(self) -> None:
        self.skinned.release()
        for m in self.meshes.values():
            m.release()
        for o in (self.grid_vao, self.grid_vbo, self.bg_vao):
            o.release()


def _translucent(inst: np.ndarray, alpha: float) -> np.ndarray:
    """Instances with their opacity scaled by ``alpha``."""
    if not len(inst):
        return inst
    s = inst.copy()
    s[:, 15] *= alpha
    return s


def _shadow(inst: np.ndarray) -> np.ndarray:
    """Instances squashed onto the ground plane as translucent dark blobs."""
    if not len(inst):
        return inst
    s = inst.copy()
    s[:, [2, 5, 8]] = 0.0  # z of each column: flat
    height = np.maximum(inst[:, 11], 0.0)
    s[:, 11] = 0.002
    s[:, 12:15] = 0.02
    s[:, 15] = np.clip(0.35 - 0.12 * height, 0.06, 0.35)
    return s
