#version 330 core
// Linear blend skinning (glTF 2.0 3.7.3): p = sum_k w_k * skin_from_bind[j_k] * p_bind.
// The joint matrices live in a float texture, one joint per row, three texels per joint (the
// first three rows of its affine 4x4 skin_from_bind), so any number of joints fits; only this
// texture changes per frame, the vertex buffer is uploaded once per mesh.

uniform mat4 u_view_proj;
uniform vec2 u_depth_range;  // see mesh.vert
uniform sampler2D u_joints;  // (3, n_joints) RGBA32F
uniform vec2 u_marked;       // selected and hovered joint indices (-1: none)

in vec3 in_position;
in vec3 in_normal;
in vec2 in_uv;
in vec4 in_joints;   // joint indices (exact in float32 below 2^24)
in vec4 in_weights;  // sum to 1

out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv;
out vec2 v_marked;  // how much the selected / hovered joint moves this vertex

mat4 joint_matrix(float j) {
    int row = int(j + 0.5);
    vec4 r0 = texelFetch(u_joints, ivec2(0, row), 0);
    vec4 r1 = texelFetch(u_joints, ivec2(1, row), 0);
    vec4 r2 = texelFetch(u_joints, ivec2(2, row), 0);
    return transpose(mat4(r0, r1, r2, vec4(0.0, 0.0, 0.0, 1.0)));
}

void main() {
    // most vertices have one or two influences: skip the fetches of the zero weights
    mat4 m = in_weights.x * joint_matrix(in_joints.x);
    if (in_weights.y > 0.0) m += in_weights.y * joint_matrix(in_joints.y);
    if (in_weights.z > 0.0) m += in_weights.z * joint_matrix(in_joints.z);
    if (in_weights.w > 0.0) m += in_weights.w * joint_matrix(in_joints.w);
    vec4 p = m * vec4(in_position, 1.0);
    v_world = p.xyz;
    // blended rigid motions: the linear part is close to a rotation, fine for shading normals
    v_normal = mat3(m) * in_normal;
    v_uv = in_uv;
    vec4 sel = vec4(lessThan(abs(in_joints - u_marked.x), vec4(0.5)));
    vec4 hov = vec4(lessThan(abs(in_joints - u_marked.y), vec4(0.5)));
    v_marked = vec2(dot(sel, in_weights), dot(hov, in_weights));
    vec4 c = u_view_proj * vec4(p.xyz, 1.0);
    c.z = u_depth_range.x * c.w + 0.5 * (c.z + c.w) * (u_depth_range.y - u_depth_range.x);
    gl_Position = c;
}
