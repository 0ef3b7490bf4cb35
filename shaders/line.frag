#version 330 core
// Lines fade out with horizontal distance from u_fade_center (the grid's far edge vanishes
// smoothly instead of ending in a hard square). u_fade_radius <= 0 disables the fade.

uniform vec3 u_fade_center;
uniform float u_fade_radius;

in vec4 v_color;
in vec3 v_world;

out vec4 f_color;

void main() {
    float a = v_color.a;
    if (u_fade_radius > 0.0) {
        float d = length(v_world.xy - u_fade_center.xy) / u_fade_radius;
        a *= clamp(1.0 - d * d, 0.0, 1.0);
    }
    f_color = vec4(v_color.rgb, a);
}
