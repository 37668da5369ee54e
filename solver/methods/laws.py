"""One contact's frictional update with the others fixed: the local laws that both Gauss-Seidel
drivers (sweeps.py over geometry, matrix_sweeps.py over an explicit W) share, and the exact
local solvers of `nsgs` (docs/friction-lab.md derives them).

A contact's local problem: u = W_kk λ + q̂ (three rows: normal, t1, t2), where q̂ = u - W_kk λ_old
holds the other contacts' impulses, and Coulomb's law

    separate: λ = 0, u_n >= 0
    stick:    u = 0, ‖λ_t‖ <= μ λ_n
    slide:    u_n = 0, λ_t = -μ λ_n u_t/‖u_t‖ (u_t != 0)

For spheres W_kk is diagonal, diag(a, b, b) (docs/friction.md), and the solution is closed-form
(`coulomb_diagonal`): λ_n = max(0, -q̂_n/a) whatever the tangents do (the normal row does not
see them), then λ_t = -q̂_t/b if that is inside the disk of radius μ λ_n, else μ λ_n against
q̂_t. That is exactly one step of the `cone` law with ω = 1, so on the program's own problems
`nsgs` and `pgs` are the same iteration. A general block couples the rows: `coulomb_block`
enumerates the three cases, the slide one by a search over the slip direction.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..coulomb import project_cone, project_disk

# Friction laws of the Gauss-Seidel drivers (pgs's `friction` parameter picks the first three;
# nsgs and prox-gs the others). PROX is Erleben's map, every row from the velocities before the
# contact's update; it is CONE wherever the block has no normal-tangent coupling (spheres).
CONE, BOX, CCP, NSGS, PROX = 0, 1, 2, 3, 4
FRICTION_LAWS = {"cone": CONE, "box": BOX, "ccp": CCP}
SLIP_SCAN = 96  # slip directions scanned for a sign change before bisecting (coulomb_block)
BISECTIONS = 80


# long: the three laws side by side, every variable a scalar (an array argument to an inline
# helper costs reference counting in the sweep kernels).
@njit(inline="always", cache=True, nogil=True)
def contact_step(rule, old, u, steps, coupling, mu):
    """One contact's new (λ_n, λ_1, λ_2) from its current impulses old = (λ_n, λ_1, λ_2) and
    velocities u = (u_n, u_1, u_2) (m/s); rule = (law, naive, coupled); steps = (s_n, s_t).
    cone/box (Box2D, Bullet): the normal by a projected step s_n (naive: only adds impulse),
    then the tangents by one step s_t (the same for both, so that a slide opposes u_t) from the
    velocities after the normal's change, onto the disk μ λ_n (box: each into ±μ λ_n).
    `coupled`: the block has normal-tangent terms coupling = (W_1n, W_2n) (an explicit W;
    spheres have none, and a constant False removes the terms from the geometry sweep). ccp:
    the three rows at once onto the cone in the metric of D = diag(1/s_n, 1/s_t, 1/s_t), the
    block's exact minimiser when the block is D."""
    law, naive, coupled = rule
    ln, l1, l2 = old
    un, u1, u2 = u
    s_n, s_t = steps
    if law == CCP:
        q = np.sqrt(s_t / s_n)
        new, n1, n2 = project_cone((ln - s_n * un) * q, l1 - s_t * u1, l2 - s_t * u2, mu / q)
        return new / q, n1, n2
    if naive:
        new = ln - s_n * un if un < 0.0 else ln
    else:
        new = max(ln - s_n * un, 0.0)
    if coupled:
        u1 += coupling[0] * (new - ln)
        u2 += coupling[1] * (new - ln)
    n1 = l1 - s_t * u1
    n2 = l2 - s_t * u2
    bound = mu * new
    if law == BOX:
        n1 = min(max(n1, -bound), bound)
        n2 = min(max(n2, -bound), bound)
    else:
        n1, n2 = project_disk(n1, n2, bound)
    return new, n1, n2


@njit(inline="always", cache=True, nogil=True)
def coulomb_diagonal(qn, q1, q2, a, b, mu):
    """The exact solution of one contact's Coulomb problem u = diag(a, b, b) λ + q (a, b > 0).
    Separate when q_n >= 0; otherwise λ_n = -q_n/a (the normal row does not see the tangents),
    stick with λ_t = -q_t/b when that is in the disk μ λ_n, else slide: λ_t = -μ λ_n q_t/‖q_t‖,
    which leaves u_t = (1 - μ λ_n b/‖q_t‖) q_t, along q_t and opposed to λ_t."""
    if qn >= 0.0:
        return 0.0, 0.0, 0.0
    ln = -qn / a
    l1, l2 = project_disk(-q1 / b, -q2 / b, mu * ln)
    return ln, l1, l2


@njit(cache=True, nogil=True)
def _slide_at(theta, W, c, qn, q1, q2, mu):
    """For the slip direction s = (cos θ, sin θ): (g, h, λ_n, valid) where λ = λ_n (1, -μ s) is
    fixed by u_n = 0, g = s x u_t (0 when u_t is along s) and h = s·u_t (>= 0 for a slide
    opposed by λ_t). valid: λ_n > 0 exists (the normal row of W d is positive)."""
    cs = math.cos(theta)
    sn = math.sin(theta)
    d1 = -mu * cs
    d2 = -mu * sn
    wn = W[c, 0, 0] + W[c, 0, 1] * d1 + W[c, 0, 2] * d2
    if not wn > 0.0:
        return 0.0, 0.0, 0.0, False
    ln = -qn / wn
    ut1 = ln * (W[c, 1, 0] + W[c, 1, 1] * d1 + W[c, 1, 2] * d2) + q1
    ut2 = ln * (W[c, 2, 0] + W[c, 2, 1] * d1 + W[c, 2, 2] * d2) + q2
    return cs * ut2 - sn * ut1, cs * ut1 + sn * ut2, ln, True


@njit(cache=True, nogil=True)
def _stick(W, c, qn, q1, q2):
    """λ with W_c λ = -q (Cramer's rule), and whether W_c is invertible enough to say."""
    w00, w01, w02 = W[c, 0, 0], W[c, 0, 1], W[c, 0, 2]
    w10, w11, w12 = W[c, 1, 0], W[c, 1, 1], W[c, 1, 2]
    w20, w21, w22 = W[c, 2, 0], W[c, 2, 1], W[c, 2, 2]
    m0 = w11 * w22 - w12 * w21  # cofactors of the first row
    m1 = w10 * w22 - w12 * w20
    m2 = w10 * w21 - w11 * w20
    det = w00 * m0 - w01 * m1 + w02 * m2
    if not abs(det) > 1e-12 * abs(w00 * w11 * w22):
        return 0.0, 0.0, 0.0, False
    r0, r1, r2 = -qn, -q1, -q2
    x0 = (r0 * m0 - w01 * (r1 * w22 - w12 * r2) + w02 * (r1 * w21 - w11 * r2)) / det
    x1 = (w00 * (r1 * w22 - w12 * r2) - r0 * m1 + w02 * (w10 * r2 - r1 * w20)) / det
    x2 = (w00 * (w11 * r2 - r1 * w21) - w01 * (w10 * r2 - r1 * w20) + r0 * m2) / det
    return x0, x1, x2, True


@njit(cache=True, nogil=True)
def _bisect(bracket, W, c, q, mu):
    """θ in [lo, hi] where g changes sign, bracket = (lo, hi, g at lo), by bisection to
    rounding; q = (q_n, q_1, q_2)."""
    lo, hi, g_lo = bracket
    qn, q1, q2 = q
    for _ in range(BISECTIONS):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        g, _h, _ln, ok = _slide_at(mid, W, c, qn, q1, q2, mu)
        if not ok:
            break
        if (g < 0.0) == (g_lo < 0.0):
            lo, g_lo = mid, g
        else:
            hi = mid
    return 0.5 * (lo + hi)


# long: the three cases of the local problem in order, each with its acceptance test.
@njit(cache=True, nogil=True)
def coulomb_block(W, c, qn, q1, q2, mu):
    """The local Coulomb problem u = W_c λ + q for a general 3x3 block W_c = W[c] (positive
    definite):
    (λ_n, λ_1, λ_2, solved). Cases in order: separate (q_n >= 0: λ = 0); μ = 0 (λ_n =
    -q_n/W_nn); stick (W λ = -q inside the cone); slide: the slip direction θ is searched over the
    circle, from about q_t's direction (the answer for a diagonal block), for a sign change of
    g(θ) = s x u_t with h = s·u_t >= 0, then bisected. solved is False when no case applies (a
    block far from definite); λ is then the stick solution projected onto the cone."""
    if qn >= 0.0:
        return 0.0, 0.0, 0.0, True
    if mu == 0.0:
        return -qn / W[c, 0, 0], 0.0, 0.0, True
    x0, x1, x2, ok = _stick(W, c, qn, q1, q2)
    if ok and x0 > 0.0 and x1 * x1 + x2 * x2 <= (mu * x0) ** 2:
        return x0, x1, x2, True
    scale = abs(qn) + abs(q1) + abs(q2)
    step = 2.0 * math.pi / SLIP_SCAN
    # Half a step before q_t's direction, so that a diagonal block's root lies inside the first
    # interval, not on an end where rounding could hide its sign change.
    start = math.atan2(q2, q1) - 0.5 * step
    g_a, h_a, ln_a, ok_a = _slide_at(start, W, c, qn, q1, q2, mu)
    for j in range(1, SLIP_SCAN + 1):
        b = start + j * step
        g_b, h_b, ln_b, ok_b = _slide_at(b, W, c, qn, q1, q2, mu)
        if ok_a and ok_b and (g_a < 0.0) != (g_b < 0.0):
            theta = _bisect((b - step, b, g_a), W, c, (qn, q1, q2), mu)
            g, h, ln, ok = _slide_at(theta, W, c, qn, q1, q2, mu)
            if ok and h >= -1e-12 * scale:
                return ln, -mu * ln * math.cos(theta), -mu * ln * math.sin(theta), True
        g_a, h_a, ln_a, ok_a = g_b, h_b, ln_b, ok_b
    if ok:
        n0, n1, n2 = project_cone(x0, x1, x2, mu)
        return n0, n1, n2, False
    return max(-qn / W[c, 0, 0], 0.0), 0.0, 0.0, False


@njit(inline="always", cache=True, nogil=True)
def _breakpoint(norm, coef):
    """‖z_i‖/μ_i, where a part's ball stops binding; -inf for μ_i = 0 (never binds)."""
    return norm / coef if coef > 0.0 else -np.inf


@njit(cache=True, nogil=True)
def composite_normal(zn, n_t, n_r, n_s, mu, mu_roll, mu_spin):
    """λ_n of the projection onto {‖λ_t‖ <= μ λ_n, ‖λ_r‖ <= μ_r λ_n, |λ_s| <= μ_s λ_n} of a point
    with normal part z_n and parts of norms n_t, n_r, n_s: for λ_n = a each part is projected
    onto its ball of radius μ_i a, and a minimises (a - z_n)^2 + Σ_i max(0, n_i - μ_i a)^2 over
    a >= 0. The derivative is increasing and linear between the breakpoints n_i/μ_i, so a is
    exact: the active sets are tried from the largest breakpoint down."""
    b0 = _breakpoint(n_t, mu)
    b1 = _breakpoint(n_r, mu_roll)
    b2 = _breakpoint(n_s, mu_spin)
    # The parts in descending order of breakpoint (three values sorted by hand).
    i0, i1, i2 = 0, 1, 2
    bs = (b0, b1, b2)
    if bs[i1] > bs[i0]:
        i0, i1 = i1, i0
    if bs[i2] > bs[i1]:
        i1, i2 = i2, i1
    if bs[i1] > bs[i0]:
        i0, i1 = i1, i0
    order = (i0, i1, i2)
    norms = (float(n_t), float(n_r), float(n_s))
    coefs = (float(mu), float(mu_roll), float(mu_spin))
    num = zn
    den = 1.0
    a = zn
    for j in range(4):
        if j > 0:
            i = order[j - 1]
            num += coefs[i] * norms[i]
            den += coefs[i] * coefs[i]
        lower = bs[order[j]] if j < 3 else -np.inf
        a = num / den
        if a >= lower:
            break
    return max(a, 0.0)


@njit(inline="always", cache=True, nogil=True)
def project_composite(z, coefficients):
    """The Euclidean projection of one contact's six rows z = (z_n, z_1, z_2, r_1, r_2, s)
    (normal, tangents, rolling pair, spin) onto its admissible set (`composite_normal`) with
    coefficients = (μ, μ_roll, μ_spin); with μ_r = μ_s = 0 and no rolling parts it is
    `project_cone`."""
    zn, z1, z2, r1, r2, s = z
    mu, mu_roll, mu_spin = coefficients
    a = composite_normal(zn, math.sqrt(z1 * z1 + z2 * z2), math.sqrt(r1 * r1 + r2 * r2),
                         abs(s), mu, mu_roll, mu_spin)
    t1, t2 = project_disk(z1, z2, mu * a)
    q1, q2 = project_disk(r1, r2, mu_roll * a)
    bound = mu_spin * a
    return a, t1, t2, q1, q2, min(max(s, -bound), bound)
