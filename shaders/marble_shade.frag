#version 330 core
// Deferred shading of the marbles, one full-screen triangle (background.vert): each pixel that
// marble.frag found covered is lit once, with Blinn-Phong, the shadow map and a cheap occlusion
// term, and gets the marble's depth so the container and floor still occlude correctly.

#include "lighting.glsl"

uniform sampler2D u_normal;     // unit normal n/2 + 1/2, world
uniform sampler2D u_albedo;     // colour RGB 0..1; alpha 1 on the swirl, 0 on clear glass
uniform sampler2D u_depth;      // window depth of the front marble; 1 = no marble
uniform mat4 u_inv_viewproj;    // clip -> world
uniform vec2 u_viewport;        // pixels
uniform float u_floor_z;        // m, lowest point of the container: the occlusion reference
uniform float u_ao_height;      // m over which the occlusion term fades out

out vec4 frag_colour;

void main()
{
    ivec2 pixel = ivec2(gl_FragCoord.xy);
    float depth = texelFetch(u_depth, pixel, 0).r;
    if (depth >= 1.0)
        discard;
    gl_FragDepth = depth;
    vec3 ndc = vec3(2.0 * gl_FragCoord.xy / u_viewport - 1.0,
                    (2.0 * depth - gl_DepthRange.near - gl_DepthRange.far) / gl_DepthRange.diff);
    vec4 w = u_inv_viewproj * vec4(ndc, 1.0);
    vec3 p = w.xyz / w.w;
    vec3 n = normalize(2.0 * texelFetch(u_normal, pixel, 0).xyz - 1.0);
    vec3 view = normalize(u_eye - p);
    vec4 surface = texelFetch(u_albedo, pixel, 0);
    vec3 albedo = to_linear(surface.rgb);
    float glass = 1.0 - surface.a;
    float lit = key_visibility(p, n);
    float ndl = max(dot(n, u_light_dir), 0.0);
    vec3 half_vec = normalize(u_light_dir + view);
    float spec = pow(max(dot(n, half_vec), 0.0), 80.0) * step(0.0, ndl);
    // Fake ambient occlusion: in a pile, low marbles and the undersides of marbles see little
    // sky. Darken with height above the container floor and with a downward-facing normal.
    float height = clamp((p.z - u_floor_z) / max(u_ao_height, 1e-6), 0.0, 1.0);
    float ao = mix(0.45, 1.0, height) * (0.6 + 0.4 * (0.5 + 0.5 * n.z));
    vec3 colour = albedo * (hemisphere_ambient(n) * ao + KEY_COLOUR * ndl * lit)
                + vec3(0.55) * spec * lit;
    // A rim of sky light makes dark marbles separate from the background; clear glass
    // reflects more of the sky at grazing angles (Fresnel).
    float rim = 1.0 - max(dot(n, view), 0.0);
    rim = rim * rim * rim;
    colour += (0.12 + 0.3 * glass) * rim * SKY_COLOUR * ao;
    frag_colour = vec4(to_display(colour), 1.0);
}
