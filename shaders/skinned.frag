#version 330 core
// The skinned body: the viewport's lighting (hemisphere ambient, key light, camera fill, soft
// specular; see mesh.frag) on the material's base colour times its base-colour texture, plus a
// faint rim so the silhouette reads against the background.

uniform vec3 u_eye;
uniform vec3 u_light_dir;
uniform vec4 u_base_color;
uniform bool u_has_texture;
uniform sampler2D u_texture;
uniform float u_alpha;
uniform vec3 u_selected_color;
uniform vec3 u_hover_color;

in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv;
in vec2 v_marked;

out vec4 f_color;

void main() {
    vec3 n = normalize(v_normal);
    vec3 v = normalize(u_eye - v_world);
    if (dot(n, v) < 0.0) n = -n;  // double-sided materials and open meshes
    vec4 base = u_base_color;
    if (u_has_texture) base *= texture(u_texture, v_uv);
    // the selected (hovered) joint's region, tinted by how much that joint moves it
    base.rgb = mix(base.rgb, u_hover_color, 0.35 * v_marked.y);
    base.rgb = mix(base.rgb, u_selected_color, 0.6 * v_marked.x);
    float hemi = 0.5 + 0.5 * n.z;
    vec3 ambient = mix(vec3(0.20, 0.19, 0.18), vec3(0.42, 0.45, 0.52), hemi);
    float key = max(dot(n, u_light_dir), 0.0);
    float fill = max(dot(n, v), 0.0);
    vec3 h = normalize(u_light_dir + v);
    float spec = pow(max(dot(n, h), 0.0), 24.0) * 0.12;
    float rim = pow(1.0 - fill, 3.0) * 0.18;
    vec3 lit = base.rgb * (ambient + 0.55 * key + 0.30 * fill) + vec3(spec + rim);
    f_color = vec4(lit, base.a * u_alpha);
}
