#version 330 core
// A full-viewport triangle for the vertical background gradient. It sits exactly at the far
// plane and is drawn with the depth test set to "always": one pass fills colour and depth
// (cheaper than a scissored clear on software GL).

out float v_t;

void main() {
    vec2 p = vec2((gl_VertexID == 1) ? 3.0 : -1.0, (gl_VertexID == 2) ? 3.0 : -1.0);
    v_t = 0.5 * (p.y + 1.0);
    gl_Position = vec4(p, 1.0, 1.0);
}
