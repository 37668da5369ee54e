#version 330 core
// The contact network: camera-facing ribbons, one per contact, built on the CPU
// (app/view/network.py), each vertex with its colour.

layout(location = 0) in vec3 a_pos;      // world, m
layout(location = 1) in vec3 a_colour;   // RGB 0..1 (display)
layout(location = 2) in float a_across;  // -1 on one edge of the ribbon, +1 on the other

uniform mat4 u_viewproj;    // world -> clip

out vec3 v_colour;
out float v_across;

void main()
{
    v_colour = a_colour;
    v_across = a_across;
    gl_Position = u_viewproj * vec4(a_pos, 1.0);
}
