#version 330 core
// Hemisphere ambient (sky above, ground below: world Z up) + a key light + a camera headlight,
// with a soft specular term. u_flat mixes towards the unlit colour (used by overlay handles).

uniform vec3 u_eye;
uniform vec3 u_light_dir;   // direction the key light travels FROM (unit, world)
uniform float u_flat;

in vec3 v_world;
in vec3 v_normal;
in vec4 v_color;

out vec4 f_color;

void main() {
    vec3 n = normalize(v_normal);
    vec3 v = normalize(u_eye - v_world);
    if (dot(n, v) < 0.0) n = -n;
    vec3 base = v_color.rgb;
    float hemi = 0.5 + 0.5 * n.z;
    vec3 ambient = mix(vec3(0.20, 0.19, 0.18), vec3(0.42, 0.45, 0.52), hemi);
    float key = max(dot(n, u_light_dir), 0.0);
    float head = max(dot(n, v), 0.0);
    vec3 h = normalize(u_light_dir + v);
    float spec = pow(max(dot(n, h), 0.0), 32.0) * 0.25;
    vec3 lit = base * (ambient + 0.55 * key + 0.30 * head) + vec3(spec);
    f_color = vec4(mix(lit, base, u_flat), v_color.a);
}
