#version 330 core
// Ray-cast sphere impostor: intersects the view ray through this fragment with the marble,
// discards misses, writes the true depth of the hit (so marbles intersect each other and the
// container exactly) and outputs what the shading needs.
// Variants (#define, see lighting.glsl for why not uniforms):
//   DEPTH_ONLY  the shadow pass
//   FLAT        unshaded (debug; the pixel test): the marble colour where the view ray meets
//               the swirl, half of it on the clear glass
//   neither     G-buffer: unit normal n/2 + 1/2 (location 0) and colour (location 1; alpha 1
//               on the swirl, 0 on the glass), shaded afterwards once per visible pixel by
//               marble_shade.frag
//
// The swirl is a cat's eye: VANES flat vanes through the marble's centre, each an ellipse of
// half-axes VANE_LENGTH along the body z axis and VANE_WIDTH across it (in marble radii), the
// vanes VANE_ANGLE apart about body z. The view ray, taken into the body frame by the
// marble's orientation, goes on through the (unrefracting) glass; where it meets a vane the
// pixel shows the marble colour. So rolling and spinning turn the vanes with the marble.
// tests/app/view/test_widget.py evaluates the same function in numpy, reading these constants.

in vec3 v_pos;              // point on the impostor polygon, world m
flat in vec3 v_centre;
flat in float v_radius;
flat in vec3 v_colour;
flat in vec4 v_orientation; // unit quaternion body -> world, (x, y, z, w)

uniform mat4 u_viewproj;
uniform vec3 u_eye;         // perspective eye, m
uniform bool u_ortho;
uniform vec3 u_ray_dir;
layout(location = 0) out vec4 frag_colour;
layout(location = 1) out vec4 frag_albedo;

const int VANES = 3;
const float VANE_ANGLE = 1.0471975511965976;  // pi / VANES
const float VANE_LENGTH = 0.82;
const float VANE_WIDTH = 0.45;
const float NO_VANE = 1e9;

// v rotated by the inverse of unit quaternion q (world -> body): v + w t + u x t with
// u = -q.xyz and t = 2 u x v.
vec3 to_body(vec4 q, vec3 v)
{
    vec3 u = -q.xyz;
    vec3 t = 2.0 * cross(u, v);
    return v + q.w * t + cross(u, t);
}

// Distance (marble radii) along the body-frame ray o + s d (o on the unit sphere, d unit, into
// the marble) to the nearest vane it meets, or NO_VANE. A ray parallel to a vane divides by
// zero: the infinite (or NaN) point fails the ellipse test, as it should.
float vane_distance(vec3 o, vec3 d)
{
    float nearest = NO_VANE;
    for (int k = 0; k < VANES; ++k) {
        float phi = float(k) * VANE_ANGLE;
        vec2 across = vec2(cos(phi), sin(phi));   // in the vane, perpendicular to body z
        vec2 normal = vec2(-across.y, across.x);  // the vane's normal (no z component)
        float s = -dot(o.xy, normal) / dot(d.xy, normal);
        vec3 q = o + s * d;
        float a = dot(q.xy, across) / VANE_WIDTH;
        float b = q.z / VANE_LENGTH;
        if (s > 0.0 && a * a + b * b < 1.0)
            nearest = min(nearest, s);
    }
    return nearest;
}

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
#if defined(DEPTH_ONLY)
    frag_colour = vec4(0.0);
#else
    vec3 n = (p - v_centre) / v_radius;
    float vane = vane_distance(to_body(v_orientation, n), to_body(v_orientation, rd));
#if defined(FLAT)
    frag_colour = vec4(vane < NO_VANE ? v_colour : 0.5 * v_colour, 1.0);
#else
    // G-buffer for the deferred shading pass (marble_shade.frag): shading every fragment
    // here would pay for all the hidden ones too, since writing gl_FragDepth rules out early
    // depth rejection. The vanes darken with depth inside the marble (a cue to which is in
    // front); the glass is the marble colour, dim and paled.
    frag_colour = vec4(0.5 + 0.5 * n, 1.0);
    frag_albedo = vane < NO_VANE ? vec4(v_colour * (1.0 - 0.3 * vane), 1.0)
                                 : vec4(mix(v_colour, vec3(0.75, 0.82, 0.88), 0.35) * 0.6, 0.0);
#endif
#endif
}
