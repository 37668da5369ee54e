"""The frictional Gauss-Seidel contact update that naive, pgs and psor share (Box2D and Bullet
style, or Anitescu's cone complementarity), over contacts packed one row of floats each.

A contact's packed row (PACKED floats): normal, t1, t2 (9), the lever arms r_a, r_b, μ, the
normal bias gap/h, the row steps ω/A_nn, ω/A_tt, ω/A_rr (0 for an inert contact), μ_roll,
μ_spin, and both marbles' inverse masses and inertias (0 for a wall), so that the update reads
nothing by marble but the velocities. One contact's update reads its row and the two marbles' (n, 6) velocities once: a
normal impulse moves both marbles along n only, which leaves the tangent velocities as they
were, so the tangents can be stepped from the same load as the normal.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..coulomb import project_disk
from ..friction import ROWS_ROLLING, ROWS_SLIDING, FrictionalProblem
from ..partition import share, shares
from ..problem import ROW_KERNEL
from .laws import BOX, CCP, CONE, FRICTION_LAWS, contact_step  # noqa: F401 (pgs's laws)

PACKED = 22


@njit(parallel=True, cache=True, nogil=True)
def _pack(body_a, body_b, normal, t1, t2, arm_a, arm_b, mu, gap, dt, diag, rows, mu_roll,
          mu_spin, inv_mass, inv_inertia, omega, out, ranges):
    """_pack_range over a partition's contacts in equal shares at once (the same rows);
    inline for one block."""
    parts = shares(ranges)
    if parts == 1:
        _pack_range(body_a, body_b, normal, t1, t2, arm_a, arm_b, mu, gap, dt, diag, rows,
                    mu_roll, mu_spin, inv_mass, inv_inertia, omega, out, 0, normal.shape[0])
        return
    for t in prange(parts):
        first, last = share(ranges, t)
        _pack_range(body_a, body_b, normal, t1, t2, arm_a, arm_b, mu, gap, dt, diag, rows,
                    mu_roll, mu_spin, inv_mass, inv_inertia, omega, out, first, last)


@njit(cache=True, nogil=True)
def _pack_range(body_a, body_b, normal, t1, t2, arm_a, arm_b, mu, gap, dt, diag, rows, mu_roll,
                mu_spin, inv_mass, inv_inertia, omega, out, first, last):
    for c in range(first, last):
        for j in range(3):
            out[c, j] = normal[c, j]
            out[c, 3 + j] = t1[c, j]
            out[c, 6 + j] = t2[c, j]
        out[c, 9] = arm_a[c]
        out[c, 10] = arm_b[c]
        out[c, 11] = mu[c]
        out[c, 12] = gap[c] / dt
        for j, row in enumerate((0, 1, 3)):
            d = diag[c * rows + row] if row < rows else 0.0
            out[c, 13 + j] = omega / d if d != 0.0 else 0.0
        out[c, 16] = mu_roll[c]
        out[c, 17] = mu_spin[c]
        a = body_a[c]
        out[c, 18] = inv_mass[a] if a >= 0 else 0.0
        out[c, 19] = inv_mass[body_b[c]]
        out[c, 20] = inv_inertia[a] if a >= 0 else 0.0
        out[c, 21] = inv_inertia[body_b[c]]


def pack(problem: FrictionalProblem, omega: float) -> np.ndarray:
    """(m, PACKED) float64: each contact's frame, levers, coefficients, bias and the row steps
    ω / A_jj (0 where A_jj = 0: both ends fixed)."""
    p = problem
    out = np.empty((p.m, PACKED))
    args = (p.body_a, p.body_b, p.normal, p.t1, p.t2, p.arm_a, p.arm_b, p.mu, p.gap, float(p.dt),
            p.diag, p.rows, p.mu_roll, p.mu_spin, p.inv_mass, p.inv_inertia, float(omega), out)
    _pack(*args, p.partition[0])
    return out


@njit(inline="always", cache=True, nogil=True)
def _push(V, w, s, i, p0, p1, p2, q0, q1, q2):
    """Marble i: v += w p, ω += s q (w, s: its inverse mass and inertia, signs included)."""
    V[i, 0] += w * p0
    V[i, 1] += w * p1
    V[i, 2] += w * p2
    V[i, 3] += s * q0
    V[i, 4] += s * q1
    V[i, 5] += s * q2


# long: one contact's rows written out with the marbles' velocities loaded once and the
# impulse applied once; as helpers that pass the arrays around it was 3x slower.
@njit(inline="always", cache=True, nogil=True)
def sweep_contact(c, body_a, body_b, P, rows, law, naive, V, lam):
    """Update contact c in place by the local law `law` (laws.contact_step): cone and box
    (Coulomb) the normal as PGS, then the tangents onto the disk μ λ_n (or the box); ccp the
    three rows at once, the exact minimiser of the contact's diagonal block over the cone (the
    block is D = diag(A_nn, A_tt, A_tt) for spheres, docs/friction.md). Rolling rows, if any,
    after them, from the updated velocities."""
    a = body_a[c]
    b = body_b[c]
    s_n = P[c, 13]
    if s_n == 0.0:
        return
    n0, n1, n2 = P[c, 0], P[c, 1], P[c, 2]
    a0, a1, a2 = P[c, 3], P[c, 4], P[c, 5]
    b0, b1, b2 = P[c, 6], P[c, 7], P[c, 8]
    ra, rb = P[c, 9], P[c, 10]
    dv0, dv1, dv2 = V[b, 0], V[b, 1], V[b, 2]
    s0, s1, s2 = rb * V[b, 3], rb * V[b, 4], rb * V[b, 5]
    if a >= 0:
        dv0 -= V[a, 0]
        dv1 -= V[a, 1]
        dv2 -= V[a, 2]
        s0 += ra * V[a, 3]
        s1 += ra * V[a, 4]
        s2 += ra * V[a, 5]
    e = n0 * dv0 + n1 * dv1 + n2 * dv2 + P[c, 12]
    u1 = a0 * dv0 + a1 * dv1 + a2 * dv2 - (b0 * s0 + b1 * s1 + b2 * s2)
    u2 = b0 * dv0 + b1 * dv1 + b2 * dv2 + (a0 * s0 + a1 * s1 + a2 * s2)
    k = c * rows
    old, o1, o2 = lam[k], lam[k + 1], lam[k + 2]
    # Spheres: the contact's block is diagonal, so no normal-tangent coupling (False).
    new, l1, l2 = contact_step(law, naive, False, old, o1, o2, e, u1, u2, s_n, P[c, 14], 0.0,
                               0.0, P[c, 11])
    lam[k] = new
    lam[k + 1] = l1
    lam[k + 2] = l2
    dn, d1, d2 = new - old, l1 - o1, l2 - o2
    p0 = dn * n0 + d1 * a0 + d2 * b0
    p1 = dn * n1 + d1 * a1 + d2 * b1
    p2 = dn * n2 + d1 * a2 + d2 * b2
    g0 = d1 * b0 - d2 * a0  # d1 g1 + d2 g2 with g1 = t2, g2 = -t1
    g1 = d1 * b1 - d2 * a1
    g2 = d1 * b2 - d2 * a2
    kb = -rb * P[c, 21]
    _push(V, P[c, 19], 1.0, b, p0, p1, p2, kb * g0, kb * g1, kb * g2)
    if a >= 0:
        ka = -ra * P[c, 20]
        _push(V, -P[c, 18], 1.0, a, p0, p1, p2, ka * g0, ka * g1, ka * g2)
    if rows == ROWS_ROLLING:
        _rolling_rows(c, k, a, b, P, V, lam)


@njit(inline="always", cache=True, nogil=True)
def _rolling_rows(c, k, a, b, P, V, lam):
    """Contact c's rolling pair (onto the disk μ_roll λ_n) and spinning row (into ±μ_spin λ_n),
    one step each from the relative angular velocity."""
    w0, w1, w2 = V[b, 3], V[b, 4], V[b, 5]
    if a >= 0:
        w0 -= V[a, 3]
        w1 -= V[a, 4]
        w2 -= V[a, 5]
    s_r = P[c, 15]
    ln = lam[k]
    o1, o2, os = lam[k + 3], lam[k + 4], lam[k + 5]
    r1, r2 = project_disk(o1 - s_r * (P[c, 3] * w0 + P[c, 4] * w1 + P[c, 5] * w2),
                          o2 - s_r * (P[c, 6] * w0 + P[c, 7] * w1 + P[c, 8] * w2),
                          P[c, 16] * ln)
    bound = P[c, 17] * ln
    rs = min(max(os - s_r * (P[c, 0] * w0 + P[c, 1] * w1 + P[c, 2] * w2), -bound), bound)
    lam[k + 3] = r1
    lam[k + 4] = r2
    lam[k + 5] = rs
    d1, d2, ds = r1 - o1, r2 - o2, rs - os
    q0 = d1 * P[c, 3] + d2 * P[c, 6] + ds * P[c, 0]
    q1 = d1 * P[c, 4] + d2 * P[c, 7] + ds * P[c, 1]
    q2 = d1 * P[c, 5] + d2 * P[c, 8] + ds * P[c, 2]
    _push(V, 0.0, P[c, 21], b, 0.0, 0.0, 0.0, q0, q1, q2)
    if a >= 0:
        _push(V, 0.0, P[c, 20], a, 0.0, 0.0, 0.0, -q0, -q1, -q2)


@njit(inline="always", cache=True, nogil=True)
def _stays_open(c, body_a, body_b, P, V, lam):
    """Whether contact c has no impulse and separates (e_n > 0, computed as sweep_contact does):
    its update under the cone or box law would keep λ = 0 (the normal stays 0, so the disk or
    box of radius μ λ_n = 0 takes the tangents to 0 too) and add only zeros to the velocities."""
    k = 3 * c
    if lam[k] != 0.0 or lam[k + 1] != 0.0 or lam[k + 2] != 0.0 or P[c, 13] == 0.0:
        return False
    a = body_a[c]
    b = body_b[c]
    dv0, dv1, dv2 = V[b, 0], V[b, 1], V[b, 2]
    if a >= 0:
        dv0 -= V[a, 0]
        dv1 -= V[a, 1]
        dv2 -= V[a, 2]
    return P[c, 0] * dv0 + P[c, 1] * dv1 + P[c, 2] * dv2 + P[c, 12] > 0.0


@njit(**ROW_KERNEL)
def frictional_range(body_a, body_b, P, rows, law, naive, V, lam, first, last):
    """One pass of `sweep_contact` over contacts [first, last) (a block's share of a sweep).
    With the cone or box law and three rows, a contact that has no impulse and separates is
    passed over (_stays_open): a fifth of a pile's contacts, whose update would change no value
    (only, at most, a zero's sign). Not with ccp, whose cone can give a separating contact a
    tangent impulse, nor with rolling rows."""
    skip = law != CCP and rows == ROWS_SLIDING
    for c in range(first, last):
        if skip and _stays_open(c, body_a, body_b, P, V, lam):
            continue
        sweep_contact(c, body_a, body_b, P, rows, law, naive, V, lam)
