#version 330 core
// Coloured lines (ground grid, axes, effector-to-target error lines).

uniform mat4 u_view_proj;
uniform vec2 u_depth_range;  // see mesh.vert

in vec3 in_position;
in vec4 in_color;

out vec4 v_color;
out vec3 v_world;

void main() {
    v_color = in_color;
    v_world = in_position;
    vec4 c = u_view_proj * vec4(in_position, 1.0);
    c.z = u_depth_range.x * c.w + 0.5 * (c.z + c.w) * (u_depth_range.y - u_depth_range.x);
    gl_Position = c;
}
