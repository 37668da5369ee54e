// Shared lighting: one directional key light with a shadow map, and a sky/ground hemisphere
// ambient. Included (by the Python loader) into marble.frag and surface.frag so both kinds of
// surface are lit identically. All vectors are in world space (metres, z up).
//
// Variants are chosen with #define (inserted by the loader), not with uniform booleans: the
// software rasteriser (llvmpipe) runs both sides of a branch under a mask, so code behind a
// false uniform condition would still cost its full price per fragment.
//   SHADOWS       sample the shadow map
//   SOFT_SHADOWS  (with SHADOWS) four filtered lookups on a rotated grid instead of one: the
//                 marbles' shadow edges blend over about three texels instead of one, so they
//                 are smooth instead of stair-stepped (used by the marbles only: the floor's
//                 many pixels would pay three more lookups each for little to see)

uniform vec3 u_light_dir;            // unit vector from the scene towards the key light
uniform vec3 u_eye;                  // camera position
uniform sampler2DShadow u_shadow_map;
uniform mat4 u_light_viewproj;       // world -> light clip space (orthographic)
uniform float u_shadow_offset;       // m; push the lookup point along the normal (acne)
uniform float u_shadow_bias;         // depth bias in [0, 1] depth units

const vec3 KEY_COLOUR = vec3(1.00, 0.96, 0.90);
const vec3 SKY_COLOUR = vec3(0.34, 0.38, 0.46);
const vec3 GROUND_COLOUR = vec3(0.14, 0.12, 0.11);

vec3 hemisphere_ambient(vec3 n)
{
    return mix(GROUND_COLOUR, SKY_COLOUR, 0.5 + 0.5 * n.z);
}

// Fraction of the key light reaching point p with normal n: 1 lit, 0 in shadow. One lookup:
// the hardware 2x2 comparison filter (LINEAR on a depth texture) already softens the edge, and
// every extra tap is a noticeable cost in software rendering.
float key_visibility(vec3 p, vec3 n)
{
#ifndef SHADOWS
    return 1.0;
#else
    vec4 l = u_light_viewproj * vec4(p + u_shadow_offset * n, 1.0);
    vec3 s = l.xyz / l.w * 0.5 + 0.5;
    if (s.x <= 0.0 || s.x >= 1.0 || s.y <= 0.0 || s.y >= 1.0 || s.z >= 1.0)
        return 1.0;
    float z = s.z - u_shadow_bias;
#ifdef SOFT_SHADOWS
    // Each lookup already averages 2x2 texels (LINEAR comparison); four of them, offset on a
    // grid turned by about 27 degrees, cover 4x4 texels without a regular pattern showing.
    vec2 texel = 1.0 / vec2(textureSize(u_shadow_map, 0));
    return 0.25 * (texture(u_shadow_map, vec3(s.xy + vec2(-1.5, -0.5) * texel, z))
                 + texture(u_shadow_map, vec3(s.xy + vec2(0.5, -1.5) * texel, z))
                 + texture(u_shadow_map, vec3(s.xy + vec2(1.5, 0.5) * texel, z))
                 + texture(u_shadow_map, vec3(s.xy + vec2(-0.5, 1.5) * texel, z)));
#else
    return texture(u_shadow_map, vec3(s.xy, z));
#endif
#endif
}

// Display gamma approximated as 2 (square / square root): indistinguishable here from 2.2 and
// much cheaper per pixel in software than pow().
vec3 to_linear(vec3 c) { return c * c; }
vec3 to_display(vec3 c) { return sqrt(max(c, vec3(0.0))); }
