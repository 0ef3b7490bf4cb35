"""Skinned meshes on the GPU: linear blend skinning in the vertex shader (``shaders/skinned.*``).

A :class:`SkinnedMeshGPU` uploads one :class:`~animik.character.SkinnedMesh` once (positions,
normals, UVs, joint indices and weights in one interleaved vertex buffer, the faces, one
texture per material that has a base-colour image); per frame only the joint matrices
(``skin_from_bind``, :func:`animik.character.skin_matrices`) are written, into a ``(3, J)``
RGBA32F texture (three rows of each affine matrix), so skeletons with any number of joints fit.
:class:`SkinnedRenderer` keeps the GPU copy of the document's current mesh and draws it.
"""

from __future__ import annotations

import numpy as np

from ...character import SkinnedMesh, homogeneous, skin_matrices
from ..geometry import HOVER_JOINT, SELECTED_JOINT
from .shaders import program

VERTEX_FORMAT = "3f 3f 2f 4f 4f"
SELECTED_COLOR = SELECTED_JOINT  # the selected / hovered joint's sphere colours
HOVER_COLOR = HOVER_JOINT
VERTEX_ATTRIBUTES = ("in_position", "in_normal", "in_uv", "in_joints", "in_weights")


def interleaved_vertices(mesh: SkinnedMesh) -> np.ndarray:
    """``(V, 16)`` float32: position, normal, uv (zeros without UVs), joints, weights."""
    n = mesh.n_vertices
    uv = mesh.uvs if mesh.uvs is not None else np.zeros((n, 2), np.float32)
    return np.ascontiguousarray(np.hstack([
        mesh.positions, mesh.normals, uv, mesh.joints.astype(np.float32), mesh.weights,
    ]).astype(np.float32))


def joint_rows(skin: np.ndarray) -> np.ndarray:
    """``(J, 3, 4)`` float32: the first three rows of each ``(J, 4, 4)`` skin matrix (the
    layout of the joint texture: texel ``(i, j)`` is row ``i`` of joint ``j``)."""
    return np.ascontiguousarray(np.asarray(skin)[:, :3, :], dtype=np.float32)


def rgba8(image) -> np.ndarray:
    """``(H, W, 4)`` uint8 from an ``(H, W)`` grey, ``(H, W, 2)`` grey + alpha, ``(H, W, 3)``
    RGB or ``(H, W, 4)`` RGBA image (uint8, or floats in [0, 1])."""
    a = np.asarray(image)
    if a.dtype != np.uint8:
        a = np.clip(np.round(np.asarray(a, float) * 255.0), 0, 255).astype(np.uint8)
    if a.ndim == 2:
        a = a[..., None]
    c = a.shape[2]
    if c == 1:
        a = np.concatenate([a, a, a, np.full_like(a, 255)], axis=2)
    elif c == 2:
        a = np.concatenate([a[..., :1]] * 3 + [a[..., 1:]], axis=2)
    elif c == 3:
        a = np.concatenate([a, np.full_like(a[..., :1], 255)], axis=2)
    return np.ascontiguousarray(a[..., :4])


def display_color(linear_rgba) -> tuple[float, float, float, float]:
    """A material's linear base-colour factor in the viewport's (display, gamma 2.2) space:
    the viewport lights and blends display colours, like the rest of the app's palette."""
    c = np.clip(np.asarray(linear_rgba, float), 0.0, 1.0)
    return (*[float(x) for x in c[:3] ** (1 / 2.2)], float(c[3]))


class SkinnedMeshGPU:
    """One skinned mesh's buffers, textures and vertex array on a moderngl context."""

    def __init__(self, ctx, prog, mesh: SkinnedMesh):
        self.ctx = ctx
        self.mesh = mesh
        self.vbo = ctx.buffer(interleaved_vertices(mesh).tobytes())
        self.ibo = ctx.buffer(np.ascontiguousarray(mesh.faces, np.uint32).tobytes())
        self.vao = ctx.vertex_array(prog, [(self.vbo, VERTEX_FORMAT, *VERTEX_ATTRIBUTES)],
                                    index_buffer=self.ibo, index_element_size=4)
        J = len(mesh.inverse_bind)
        self.joint_tex = ctx.texture((3, J), 4, dtype="f4")
        self.joint_tex.filter = ctx.NEAREST, ctx.NEAREST
        self.textures: list = []
        for m in mesh.materials:
            img = m.base_color_texture
            if img is None:
                self.textures.append(None)
                continue
            a = np.ascontiguousarray(rgba8(img)[::-1])  # GL rows bottom-up
            tex = ctx.texture((a.shape[1], a.shape[0]), 4, a.tobytes())
            tex.build_mipmaps()
            tex.filter = ctx.LINEAR_MIPMAP_LINEAR, ctx.LINEAR
            tex.repeat_x = tex.repeat_y = True
            self.textures.append(tex)
        self.white = ctx.texture((1, 1), 4, bytes([255, 255, 255, 255]))

    def set_pose(self, world_from_joint: np.ndarray) -> None:
        """Upload the joint matrices for ``world_from_joint (J, 4, 4)`` (the per-frame write)."""
        self.joint_tex.write(joint_rows(skin_matrices(self.mesh, world_from_joint)).tobytes())

    def draw(self, prog, alpha: float = 1.0) -> None:
        """Draw every part with its material (the pose set by :meth:`set_pose`)."""
        ctx = self.ctx
        self.joint_tex.use(0)
        prog["u_joints"].value = 0
        prog["u_texture"].value = 1
        prog["u_alpha"].value = float(alpha)
        for part in self.mesh.parts:
            if part.count <= 0:
                continue
            mat = self.mesh.materials[part.material]
            tex = self.textures[part.material]
            prog["u_base_color"].value = display_color(mat.base_color)
            prog["u_has_texture"].value = tex is not None
            (tex or self.white).use(1)
            if mat.double_sided:
                ctx.disable(ctx.CULL_FACE)
            else:
                ctx.enable(ctx.CULL_FACE)
            self.vao.render(vertices=3 * part.count, first=3 * part.start)

    def release(self) -> None:
        for o in (self.vao, self.vbo, self.ibo, self.joint_tex, self.white,
                  *[t for t in self.textures if t is not None]):
            o.release()


class SkinnedRenderer:
    """Draws the document's skinned mesh; keeps its GPU copy while the mesh object is the same."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.prog = program(ctx, "skinned")
        self.gpu: SkinnedMeshGPU | None = None
        self.uploads = 0  # meshes uploaded (a test checks it stays 1 while posing)

    def prepare(self, mesh: SkinnedMesh | None) -> SkinnedMeshGPU | None:
        """The GPU copy of ``mesh`` (uploaded when ``mesh`` is not the one held)."""
        if mesh is None:
            return None
        if self.gpu is None or self.gpu.mesh is not mesh:
            if self.gpu is not None:
                self.gpu.release()
            self.gpu = SkinnedMeshGPU(self.ctx, self.prog, mesh)
            self.uploads += 1
        return self.gpu

    def draw(self, mesh: SkinnedMesh, joint_rotations: np.ndarray, joint_positions: np.ndarray,
             view_proj: np.ndarray, eye, light_dir, depth_range, alpha: float = 1.0,
             selected: int | None = None, hovered: int | None = None) -> None:
        """Skin ``mesh`` to the joint frames ``(J, 3, 3)``, ``(J, 3)`` and draw it, tinting
        the regions the ``selected`` and ``hovered`` joints move."""
        gpu = self.prepare(mesh)
        gpu.set_pose(homogeneous(joint_rotations, joint_positions))
        p = self.prog
        p["u_view_proj"].write(np.asarray(view_proj).T.astype("f4").tobytes())
        p["u_eye"].value = tuple(float(x) for x in eye)
        p["u_light_dir"].value = tuple(float(x) for x in light_dir)
        p["u_depth_range"].value = tuple(depth_range)
        p["u_marked"].value = (-1.0 if selected is None else float(selected),
                               -1.0 if hovered is None else float(hovered))
        p["u_selected_color"].value = SELECTED_COLOR
        p["u_hover_color"].value = HOVER_COLOR
        gpu.draw(p, alpha)

    def release(self) -> None:
        if self.gpu is not None:
            self.gpu.release()
            self.gpu = None
        self.prog.release()
