#version 330 core
// Container walls, floor and line overlays: ordinary triangle meshes in world space.

layout(location = 0) in vec3 a_pos;      // model units
layout(location = 1) in vec3 a_normal;

uniform mat4 u_model;       // model -> world; any scaling must be uniform across curved faces
                            // (true for every mesh here), so mat3(u_model) maps normals
uniform mat4 u_viewproj;    // world -> clip

out vec3 v_world;
out vec3 v_normal;

void main()
{
    vec4 w = u_model * vec4(a_pos, 1.0);
    v_world = w.xyz;
    v_normal = normalize(mat3(u_model) * a_normal);
    gl_Position = u_viewproj * w;
}
