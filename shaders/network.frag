#version 330 core
// The contact network's ribbons, shaded as if round: brightest along the middle, darker to the
// edges, so that crossing chains stay apart.

in vec3 v_colour;
in float v_across;

out vec4 frag_colour;

void main()
{
    float round_ = sqrt(max(1.0 - v_across * v_across, 0.0));
    frag_colour = vec4(v_colour * (0.35 + 0.65 * round_), 1.0);
}
