#version 330 core
// Full-screen triangle for the background gradient; no vertex buffer needed.
out vec2 v_uv;
void main()
{
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    v_uv = p;
    gl_Position = vec4(2.0 * p - 1.0, 1.0, 1.0);
}
