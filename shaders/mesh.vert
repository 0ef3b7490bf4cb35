#version 330 core
// Instanced shaded solids (joint spheres, bone cylinders, handles, gizmo rings).
// Per instance: the three columns of the linear part (rotation x per-axis scale), a translation
// and an RGBA colour. The columns are orthogonal, so the normal matrix is M * diag(1 / |c_i|^2).

uniform mat4 u_view_proj;
// NDC depth range of this pass: the character uses (-0.8, 1), free handles (-0.9, -0.8), the
// overlay (constrained handles, gizmo) (-1, -0.9): overlays are always in front, and no depth
// clear is needed between the passes.
uniform vec2 u_depth_range;

in vec3 in_position;
in vec3 in_normal;

in vec3 i_c0;
in vec3 i_c1;
in vec3 i_c2;
in vec3 i_t;
in vec4 i_color;

out vec3 v_world;
out vec3 v_normal;
out vec4 v_color;

void main() {
    vec3 p = i_c0 * in_position.x + i_c1 * in_position.y + i_c2 * in_position.z + i_t;
    vec3 n = i_c0 * (in_normal.x / max(dot(i_c0, i_c0), 1e-12))
           + i_c1 * (in_normal.y / max(dot(i_c1, i_c1), 1e-12))
           + i_c2 * (in_normal.z / max(dot(i_c2, i_c2), 1e-12));
    v_world = p;
    v_normal = n;
    v_color = i_color;
    vec4 c = u_view_proj * vec4(p, 1.0);
    c.z = u_depth_range.x * c.w + 0.5 * (c.z + c.w) * (u_depth_range.y - u_depth_range.x);
    gl_Position = c;
}
