#version 330 core
// Shading of the container and the floor. Variants (#define, see lighting.glsl for why not a
// uniform):
//   (none)  opaque lit surface, optionally a checker floor fading out at its edge; receives
//           marble shadows when SHADOWS is defined too.
//   GLASS   mostly transparent, more opaque at grazing angles (Fresnel), with a specular
//           highlight, so marbles inside stay visible while the shape still reads.
//   LINE    flat colour (rims, edges, the drag spring).

#include "lighting.glsl"

in vec3 v_world;
in vec3 v_normal;

uniform vec4 u_colour;          // RGB 0..1 (display), alpha
uniform float u_checker;        // m, checker period; 0 = plain
uniform vec3 u_checker_u;       // unit vectors along the floor's plane: the checker's axes
uniform vec3 u_checker_v;       //   (world x and y for a level floor)
uniform vec3 u_fade_centre;     // m; the floor fades to the background around this point
uniform float u_fade_radius;    // m; 0 = no fade

out vec4 frag_colour;

void main()
{
#if defined(LINE)
    frag_colour = u_colour;
#else
    vec3 n = normalize(v_normal);
    vec3 view = normalize(u_eye - v_world);
    if (dot(n, view) < 0.0)
        n = -n;  // two-sided: walls are seen from inside and outside
    float ndl = max(dot(n, u_light_dir), 0.0);
    vec3 half_vec = normalize(u_light_dir + view);

#if defined(GLASS)
    float fresnel = 0.04 + 0.96 * pow(1.0 - max(dot(n, view), 0.0), 5.0);
    float spec = 0.7 * pow(max(dot(n, half_vec), 0.0), 250.0) * step(0.0, ndl);
    vec3 tint = to_linear(u_colour.rgb);
    vec3 colour = tint * (hemisphere_ambient(n) + 0.35 * KEY_COLOUR * ndl)
                + KEY_COLOUR * spec;
    float alpha = clamp(u_colour.a + 0.6 * fresnel + spec, 0.0, 0.9);
    frag_colour = vec4(to_display(colour), alpha);
#else
    vec3 albedo = to_linear(u_colour.rgb);
    if (u_checker > 0.0) {
        vec2 cell = floor(vec2(dot(v_world, u_checker_u), dot(v_world, u_checker_v))
                          / u_checker);
        float odd = mod(cell.x + cell.y, 2.0);
        albedo *= mix(1.0, 0.82, odd);
    }
    float lit = key_visibility(v_world, n);
    vec3 colour = albedo * (hemisphere_ambient(n) + KEY_COLOUR * ndl * lit)
                + 0.08 * KEY_COLOUR * pow(max(dot(n, half_vec), 0.0), 30.0) * lit;
    float alpha = u_colour.a;
    if (u_fade_radius > 0.0) {
        vec3 off = v_world - u_fade_centre;
        float r = length(vec2(dot(off, u_checker_u), dot(off, u_checker_v)));
        alpha *= 1.0 - smoothstep(0.55 * u_fade_radius, u_fade_radius, r);
    }
    frag_colour = vec4(to_display(colour), alpha);
#endif  // GLASS
#endif  // LINE
}
