#version 330 core
// One instanced polygon per marble, sized so that it covers the sphere's exact perspective
// silhouette; marble.frag then ray casts the sphere inside it.
//
// The silhouette seen from the eye is the cone tangent to the sphere, with half-angle a,
// sin a = r / d (d = eye-to-centre distance). Cut by the plane through the centre perpendicular
// to the eye-to-centre axis, that cone is a circle of radius d tan a = r d / sqrt(d^2 - r^2) >= r.
// A polygon circumscribing that circle, in that plane, therefore covers the whole silhouette
// however oblique the view (a quad of half-size r parallel to the image does not: it clips
// spheres off the view axis and near the screen edge). The polygon is an octagon: less wasted
// area than a square.

layout(location = 0) in vec2 a_corner;   // octagon corner around the unit circle
layout(location = 1) in vec3 i_centre;   // m
layout(location = 2) in float i_radius;  // m
layout(location = 3) in vec3 i_colour;   // RGB 0..1
layout(location = 4) in vec4 i_orientation;  // unit quaternion body -> world, (x, y, z, w)

uniform mat4 u_viewproj;    // world -> clip
uniform vec3 u_eye;         // perspective eye, m
uniform vec3 u_quad_up;     // any unit vector not along a view ray: orients the polygons
uniform bool u_ortho;       // orthographic pass (the shadow map): rays all along u_ray_dir
uniform vec3 u_ray_dir;
uniform bool u_exact;       // false: the naive impostor, kept only to show the pixel test fails:
uniform vec3 u_view_axis;   //   parallel to the image (normal u_view_axis), around radius r

out vec3 v_pos;             // point on the polygon, world m
flat out vec3 v_centre;
flat out float v_radius;
flat out vec3 v_colour;
flat out vec4 v_orientation;

void main()
{
    v_centre = i_centre;
    v_radius = i_radius;
    v_colour = i_colour;
    v_orientation = i_orientation;
    vec3 axis;
    float h;
    if (u_ortho) {
        axis = u_ray_dir;
        h = i_radius;
    } else {
        vec3 to_c = i_centre - u_eye;
        float d2 = dot(to_c, to_c);
        float r2 = i_radius * i_radius;
        if (d2 <= r2 * 1.0001) {
            // The eye is inside this marble: no silhouette. Emit the polygon outside the clip
            // volume so it is culled.
            v_pos = i_centre;
            gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
            return;
        }
        if (u_exact) {
            axis = to_c * inversesqrt(d2);
            h = i_radius * sqrt(d2 / (d2 - r2));
        } else {
            axis = u_view_axis;
            h = i_radius;
        }
    }
    vec3 u = normalize(cross(axis, u_quad_up));
    vec3 v = cross(u, axis);
    v_pos = i_centre + h * (a_corner.x * u + a_corner.y * v);
    gl_Position = u_viewproj * vec4(v_pos, 1.0);
}
