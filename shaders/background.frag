#version 330 core

uniform vec3 u_bottom;
uniform vec3 u_top;

in float v_t;

out vec4 f_color;

void main() {
    f_color = vec4(mix(u_bottom, u_top, clamp(v_t, 0.0, 1.0)), 1.0);
}
