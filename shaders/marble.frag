#version 330 core
// Ray-cast sphere impostor: intersects the view ray through this fragment with the marble,
// discards misses, writes the true depth of the hit (so marbles intersect each other and the
// container exactly) and shades it with Blinn-Phong, the shadow map and a cheap occlusion term.

#include "lighting.glsl"

in vec3 v_pos;
flat in vec3 v_centre;
flat in float v_radius;
flat in vec3 v_colour;

uniform mat4 u_viewproj;
uniform bool u_ortho;
uniform vec3 u_ray_dir;
uniform bool u_depth_only;  // shadow pass: depth is all that is needed
uniform bool u_flat;        // debug: unshaded marble colour (pixel test)
uniform float u_floor_z;    // m, lowest point of the container: the occlusion term's reference
uniform float u_ao_height;  // m over which the occlusion term fades out

out vec4 frag_colour;

void main()
{
    vec3 ro = u_ortho ? v_pos : u_eye;
    vec3 rd = u_ortho ? u_ray_dir : normalize(v_pos - u_eye);
    // Closest approach of the ray to the centre. The squared miss distance is taken from the
    // perpendicular vector rather than |oc|^2 - b^2, which cancels badly in float32 when the
    // eye is far from the marble.
    vec3 oc = v_centre - ro;
    float b = dot(oc, rd);
    vec3 perp = oc - b * rd;
    float disc = v_radius * v_radius - dot(perp, perp);
    if (disc < 0.0)
        discard;
    float t = b - sqrt(disc);
    vec3 p = ro + t * rd;

    vec4 clip = u_viewproj * vec4(p, 1.0);
    float z = clip.z / clip.w;
    if (z < -1.0)
        discard;  // in front of the near plane
    gl_FragDepth = 0.5 * (gl_DepthRange.diff * z + gl_DepthRange.near + gl_DepthRange.far);
    if (u_depth_only) {
        frag_colour = vec4(0.0);
        return;
    }
    if (u_flat) {
        frag_colour = vec4(v_colour, 1.0);
        return;
    }

    vec3 n = (p - v_centre) / v_radius;
    vec3 view = -rd;
    vec3 albedo = to_linear(v_colour);
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
    // A faint rim of sky light makes dark marbles separate from the background.
    float rim = pow(1.0 - max(dot(n, view), 0.0), 3.0);
    colour += 0.12 * rim * SKY_COLOUR * ao;
    frag_colour = vec4(to_display(colour), 1.0);
}
