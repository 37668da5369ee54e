#version 330 core
// Ray-cast sphere impostor: intersects the view ray through this fragment with the marble,
// discards misses, writes the true depth of the hit (so marbles intersect each other and the
// container exactly) and outputs what the shading needs.
// Variants (#define, see lighting.glsl for why not uniforms):
//   DEPTH_ONLY  the shadow pass
//   FLAT        the unshaded marble colour (debug; the pixel test)
//   neither     G-buffer: unit normal n/2 + 1/2 (location 0) and colour (location 1), shaded
//               afterwards once per visible pixel by marble_shade.frag

in vec3 v_pos;              // point on the impostor polygon, world m
flat in vec3 v_centre;
flat in float v_radius;
flat in vec3 v_colour;

uniform mat4 u_viewproj;
uniform vec3 u_eye;         // perspective eye, m
uniform bool u_ortho;
uniform vec3 u_ray_dir;
layout(location = 0) out vec4 frag_colour;
layout(location = 1) out vec4 frag_albedo;

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
#elif defined(FLAT)
    frag_colour = vec4(v_colour, 1.0);
#else
    // G-buffer for the deferred shading pass (marble_shade.frag): shading every fragment
    // here would pay for all the hidden ones too, since writing gl_FragDepth rules out early
    // depth rejection.
    frag_colour = vec4(0.5 + 0.5 * (p - v_centre) / v_radius, 1.0);
    frag_albedo = vec4(v_colour, 1.0);
#endif
}
