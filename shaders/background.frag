#version 330 core
// Vertical gradient behind the scene: lighter at the horizon than at the top.
in vec2 v_uv;
uniform vec3 u_top;
uniform vec3 u_bottom;
out vec4 frag_colour;
void main()
{
    frag_colour = vec4(mix(u_bottom, u_top, clamp(v_uv.y, 0.0, 1.0)), 1.0);
}
