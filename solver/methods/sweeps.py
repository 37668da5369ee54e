"""The frictional Gauss-Seidel contact update that naive, pgs and psor share (Box2D and Bullet
style, or Anitescu's cone complementarity), over contacts packed one row of floats each.

A contact's packed row (PACKED floats, columns named below): normal, t1, t2 (3 each), the
lever arms r_a, r_b, μ, the normal bias gap/h, the row steps ω/A_nn, ω/A_tt, ω/A_rr (0 for an
inert contact), μ_roll, μ_spin, and both marbles' inverse masses and inertias (0 for a wall),
so that the update reads nothing by marble but the velocities. One contact's update reads its
row and the two marbles' (n, 6) velocities once: a normal impulse moves both marbles along n
only, which leaves the tangent velocities as they were, so the tangents can be stepped from the
same load as the normal.

The update's rule is the tuple (law, naive, rows): the local law (laws.py), whether normals
only add impulse (naive), and the rows per contact (3, or 6 with rolling rows).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..drivers import driver
from ..coulomb import project_disk
from ..friction import ROWS_ROLLING, ROWS_SLIDING, FrictionalProblem
from ..partition import share, shares
from ..problem import ROW_KERNEL, row_step
from .laws import BOX, CCP, CONE, FRICTION_LAWS, contact_step  # noqa: F401 (pgs's laws)

# The packed row's columns.
NORMAL, T1, T2 = 0, 3, 6  # three each
ARM_A, ARM_B, MU, BIAS = 9, 10, 11, 12
STEP_N, STEP_T, STEP_R = 13, 14, 15  # ω / A_nn, ω / A_tt, ω / A_rr
MU_ROLL, MU_SPIN = 16, 17
W_A, W_B, I_A, I_B = 18, 19, 20, 21  # inverse masses and inertias of a and b
PACKED = 22


@driver(parallel=True, cache=True, nogil=True)
def _pack(A, laws, rows_in, scale, out, ranges):
    """_pack_range over a partition's contacts in equal shares at once (the same rows);
    inline for one block."""
    parts = shares(ranges)
    if parts == 1:
        _pack_range(A, laws, rows_in, scale, out, np.int64(0), out.shape[0])
        return
    for t in prange(parts):
        first, last = share(ranges, t)
        _pack_range(A, laws, rows_in, scale, out, first, last)


@njit(cache=True, nogil=True)
def _pack_range(A, laws, rows_in, scale, out, first, last):
    """Packed rows of contacts [first, last): A the frictional operator's factors
    (solver/products.py), laws = (mu, mu_roll, mu_spin), rows_in = (gap (m,) m, diag
    (m * rows,) 1/kg), scale = (h s, ω)."""
    body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass, inv_inertia, rows = A
    mu, mu_roll, mu_spin = laws
    gap, diag = rows_in
    dt, omega = scale
    for c in range(first, last):
        for j in range(3):
            out[c, NORMAL + j] = normal[c, j]
            out[c, T1 + j] = t1[c, j]
            out[c, T2 + j] = t2[c, j]
        out[c, ARM_A] = arm_a[c]
        out[c, ARM_B] = arm_b[c]
        out[c, MU] = mu[c]
        out[c, BIAS] = gap[c] / dt
        for j, row in enumerate((0, 1, 3)):
            out[c, STEP_N + j] = row_step(omega, diag[c * rows + row] if row < rows else 0.0)
        out[c, MU_ROLL] = mu_roll[c]
        out[c, MU_SPIN] = mu_spin[c]
        a = body_a[c]
        out[c, W_A] = inv_mass[a] if a >= 0 else 0.0
        out[c, W_B] = inv_mass[body_b[c]]
        out[c, I_A] = inv_inertia[a] if a >= 0 else 0.0
        out[c, I_B] = inv_inertia[body_b[c]]


def pack(problem: FrictionalProblem, omega: float) -> np.ndarray:
    """(m, PACKED) float64: each contact's frame, levers, coefficients, bias and the row steps
    ω / A_jj (0 where A_jj = 0: both ends fixed)."""
    p = problem
    out = np.empty((p.m, PACKED))
    _pack(p.A, p.laws, (p.gap, p.diag), (float(p.dt), float(omega)), out, p.partition[0])
    return out


@njit(inline="always", cache=True, nogil=True)
def _push(V, i, w, s, p, q):
    """Marble i: v += w p, ω += s q (w, s: its inverse mass and inertia, signs included;
    p, q: 3-tuples)."""
    V[i, 0] += w * p[0]
    V[i, 1] += w * p[1]
    V[i, 2] += w * p[2]
    V[i, 3] += s * q[0]
    V[i, 4] += s * q[1]
    V[i, 5] += s * q[2]


# long: one contact's rows written out with the marbles' velocities loaded once and the
# impulse applied once; as helpers that pass the arrays around it was 3x slower.
@njit(inline="always", cache=True, nogil=True)
def sweep_contact(c, ends, P, rule, V, lam):
    """Update contact c in place by the rule (law, naive, rows) (laws.contact_step): cone and
    box (Coulomb) the normal as PGS, then the tangents onto the disk μ λ_n (or the box); ccp
    the three rows at once, the exact minimiser of the contact's diagonal block over the cone
    (the block is D = diag(A_nn, A_tt, A_tt) for spheres, docs/friction.md). Rolling rows, if
    any, after them, from the updated velocities. ends = (body_a, body_b)."""
    body_a, body_b = ends
    law, naive, rows = rule
    a = body_a[c]
    b = body_b[c]
    s_n = P[c, STEP_N]
    if s_n == 0.0:
        return
    n0, n1, n2 = P[c, NORMAL], P[c, NORMAL + 1], P[c, NORMAL + 2]
    a0, a1, a2 = P[c, T1], P[c, T1 + 1], P[c, T1 + 2]
    b0, b1, b2 = P[c, T2], P[c, T2 + 1], P[c, T2 + 2]
    ra, rb = P[c, ARM_A], P[c, ARM_B]
    dv0, dv1, dv2 = V[b, 0], V[b, 1], V[b, 2]
    s0, s1, s2 = rb * V[b, 3], rb * V[b, 4], rb * V[b, 5]
    if a >= 0:
        dv0 -= V[a, 0]
        dv1 -= V[a, 1]
        dv2 -= V[a, 2]
        s0 += ra * V[a, 3]
        s1 += ra * V[a, 4]
        s2 += ra * V[a, 5]
    e = n0 * dv0 + n1 * dv1 + n2 * dv2 + P[c, BIAS]
    u1 = a0 * dv0 + a1 * dv1 + a2 * dv2 - (b0 * s0 + b1 * s1 + b2 * s2)
    u2 = b0 * dv0 + b1 * dv1 + b2 * dv2 + (a0 * s0 + a1 * s1 + a2 * s2)
    k = c * rows
    old, o1, o2 = lam[k], lam[k + 1], lam[k + 2]
    # Spheres: the contact's block is diagonal, so no normal-tangent coupling (False).
    new, l1, l2 = contact_step((law, naive, False), (old, o1, o2), (e, u1, u2),
                               (s_n, P[c, STEP_T]), (0.0, 0.0), P[c, MU])
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
    kb = -rb * P[c, I_B]
    _push(V, b, P[c, W_B], 1.0, (p0, p1, p2), (kb * g0, kb * g1, kb * g2))
    if a >= 0:
        ka = -ra * P[c, I_A]
        _push(V, a, -P[c, W_A], 1.0, (p0, p1, p2), (ka * g0, ka * g1, ka * g2))
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
    s_r = P[c, STEP_R]
    ln = lam[k]
    o1, o2, os = lam[k + 3], lam[k + 4], lam[k + 5]
    r1, r2 = project_disk(o1 - s_r * (P[c, T1] * w0 + P[c, T1 + 1] * w1 + P[c, T1 + 2] * w2),
                          o2 - s_r * (P[c, T2] * w0 + P[c, T2 + 1] * w1 + P[c, T2 + 2] * w2),
                          P[c, MU_ROLL] * ln)
    bound = P[c, MU_SPIN] * ln
    rs = min(max(os - s_r * (P[c, NORMAL] * w0 + P[c, NORMAL + 1] * w1
                             + P[c, NORMAL + 2] * w2), -bound), bound)
    lam[k + 3] = r1
    lam[k + 4] = r2
    lam[k + 5] = rs
    d1, d2, ds = r1 - o1, r2 - o2, rs - os
    q0 = d1 * P[c, T1] + d2 * P[c, T2] + ds * P[c, NORMAL]
    q1 = d1 * P[c, T1 + 1] + d2 * P[c, T2 + 1] + ds * P[c, NORMAL + 1]
    q2 = d1 * P[c, T1 + 2] + d2 * P[c, T2 + 2] + ds * P[c, NORMAL + 2]
    _push(V, b, 0.0, P[c, I_B], (0.0, 0.0, 0.0), (q0, q1, q2))
    if a >= 0:
        _push(V, a, 0.0, P[c, I_A], (0.0, 0.0, 0.0), (-q0, -q1, -q2))


@njit(inline="always", cache=True, nogil=True)
def _stays_open(c, ends, P, V, lam):
    """Whether contact c has no impulse and separates (e_n > 0, computed as sweep_contact does):
    its update under the cone or box law would keep λ = 0 (the normal stays 0, so the disk or
    box of radius μ λ_n = 0 takes the tangents to 0 too) and add only zeros to the velocities."""
    k = 3 * c
    if lam[k] != 0.0 or lam[k + 1] != 0.0 or lam[k + 2] != 0.0 or P[c, STEP_N] == 0.0:
        return False
    a = ends[0][c]
    b = ends[1][c]
    dv0, dv1, dv2 = V[b, 0], V[b, 1], V[b, 2]
    if a >= 0:
        dv0 -= V[a, 0]
        dv1 -= V[a, 1]
        dv2 -= V[a, 2]
    return (P[c, NORMAL] * dv0 + P[c, NORMAL + 1] * dv1 + P[c, NORMAL + 2] * dv2
            + P[c, BIAS] > 0.0)


@njit(**ROW_KERNEL)
def frictional_range(ends, P, rule, V, lam, first, last):
    """One pass of `sweep_contact` over contacts [first, last) (a block's share of a sweep).
    With the cone or box law and three rows, a contact that has no impulse and separates is
    passed over (_stays_open): a fifth of a pile's contacts, whose update would change no value
    (only, at most, a zero's sign). Not with ccp, whose cone can give a separating contact a
    tangent impulse, nor with rolling rows."""
    law, _, rows = rule
    skip = law != CCP and rows == ROWS_SLIDING
    for c in range(np.uint64(first), np.uint64(last)):
        if skip and _stays_open(c, ends, P, V, lam):
            continue
        sweep_contact(c, ends, P, rule, V, lam)
