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

from ..friction import ROWS_ROLLING, ROWS_SLIDING, FrictionalProblem, project_disk
from ..partition import share, shares
from ..problem import ROW_KERNEL
from .laws import BOX, CCP, CONE, FRICTION_LAWS, contact_step  # noqa: F401 (pgs's laws)

PACKED = 22


@njit(cache=True, nogil=True)
def _pack(body_a, body_b, normal, t1, t2, arm_a, arm_b, mu, gap, dt, diag, rows, mu_roll,
          mu_spin, inv_mass, inv_inertia, omega, out):
    _pack_range(body_a, body_b, normal, t1, t2, arm_a, arm_b, mu, gap, dt, diag, rows, mu_roll,
                mu_spin, inv_mass, inv_inertia, omega, out, 0, normal.shape[0])


@njit(parallel=True, cache=True, nogil=True)
def _blocked_pack(body_a, body_b, normal, t1, t2, arm_a, arm_b, mu, gap, dt, diag, rows,
                  mu_roll, mu_spin, inv_mass, inv_inertia, omega, out, ranges):
    for t in prange(shares(ranges)):
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
    if getattr(p, "partition", None) is None:
        _pack(*args)
    else:
        _blocked_pack(*args, p.partition[0])  # equal shares at once: the same rows
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


@njit(inline="always", cache=True, nogil=True)
def _load(V, i):
    """Marble i's velocities (v, ω), 6 scalars; zeros for a wall (i = -1)."""
    if i < 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    return V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5]


@njit(inline="always", cache=True, nogil=True)
def _store(V, i, w, k, vel, p0, p1, p2, g0, g1, g2):
    """Marble i's velocities <- the loaded `vel` + (w p, k g): what _push adds to the same
    values, written without reading V again."""
    V[i, 0] = vel[0] + w * p0
    V[i, 1] = vel[1] + w * p1
    V[i, 2] = vel[2] + w * p2
    V[i, 3] = vel[3] + k * g0
    V[i, 4] = vel[4] + k * g1
    V[i, 5] = vel[5] + k * g2


# long: one contact's rows written out with the marbles' velocities loaded once and the
# impulse applied once; as helpers that pass the arrays around it was 3x slower.
@njit(inline="always", cache=True, nogil=True)
def _contact_impulse(c, a, P, rows, law, naive, lam, vb, va):
    """Contact c's new impulses by the local law `law` (laws.contact_step), from its marbles'
    loaded velocities vb, va (va zeros for a wall, a = -1), written to λ; returns the impulse's
    change as the linear part p (N s) and the lever part g that both spins take. cone and box
    (Coulomb) step the normal as PGS, then the tangents onto the disk μ λ_n (or the box); ccp
    the three rows at once, the exact minimiser of the contact's diagonal block over the cone
    (the block is D = diag(A_nn, A_tt, A_tt) for spheres, docs/friction.md)."""
    n0, n1, n2 = P[c, 0], P[c, 1], P[c, 2]
    a0, a1, a2 = P[c, 3], P[c, 4], P[c, 5]
    b0, b1, b2 = P[c, 6], P[c, 7], P[c, 8]
    ra, rb = P[c, 9], P[c, 10]
    dv0, dv1, dv2 = vb[0], vb[1], vb[2]
    s0, s1, s2 = rb * vb[3], rb * vb[4], rb * vb[5]
    if a >= 0:
        dv0 -= va[0]
        dv1 -= va[1]
        dv2 -= va[2]
        s0 += ra * va[3]
        s1 += ra * va[4]
        s2 += ra * va[5]
    e = n0 * dv0 + n1 * dv1 + n2 * dv2 + P[c, 12]
    u1 = a0 * dv0 + a1 * dv1 + a2 * dv2 - (b0 * s0 + b1 * s1 + b2 * s2)
    u2 = b0 * dv0 + b1 * dv1 + b2 * dv2 + (a0 * s0 + a1 * s1 + a2 * s2)
    k = c * rows
    old, o1, o2 = lam[k], lam[k + 1], lam[k + 2]
    # Spheres: the contact's block is diagonal, so no normal-tangent coupling (False).
    new, l1, l2 = contact_step(law, naive, False, old, o1, o2, e, u1, u2, P[c, 13], P[c, 14],
                               0.0, 0.0, P[c, 11])
    lam[k] = new
    lam[k + 1] = l1
    lam[k + 2] = l2
    dn, d1, d2 = new - old, l1 - o1, l2 - o2
    return (dn * n0 + d1 * a0 + d2 * b0, dn * n1 + d1 * a1 + d2 * b1,
            dn * n2 + d1 * a2 + d2 * b2,
            d1 * b0 - d2 * a0, d1 * b1 - d2 * a1, d1 * b2 - d2 * a2)  # d1 g1 + d2 g2, g1 = t2, g2 = -t1


@njit(inline="always", cache=True, nogil=True)
def _apply_impulse(c, a, b, P, V, vb, va, d):
    """Contact c's impulse change d (_contact_impulse) added to its marbles' loaded velocities
    and stored."""
    p0, p1, p2, g0, g1, g2 = d
    _store(V, b, P[c, 19], -P[c, 10] * P[c, 21], vb, p0, p1, p2, g0, g1, g2)
    if a >= 0:
        _store(V, a, -P[c, 18], -P[c, 9] * P[c, 20], va, p0, p1, p2, g0, g1, g2)


@njit(inline="always", cache=True, nogil=True)
def sweep_contact(c, body_a, body_b, P, rows, law, naive, V, lam):
    """Update contact c in place (_contact_impulse); rolling rows, if any, after it, from the
    updated velocities."""
    if P[c, 13] == 0.0:  # inert: both ends fixed
        return
    a = body_a[c]
    b = body_b[c]
    vb = _load(V, b)
    va = _load(V, a)
    _apply_impulse(c, a, b, P, V, vb, va, _contact_impulse(c, a, P, rows, law, naive, lam, vb,
                                                            va))
    if rows == ROWS_ROLLING:
        _rolling_rows(c, rows * c, a, b, P, V, lam)


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


@njit(**ROW_KERNEL)
def frictional_range(body_a, body_b, P, rows, law, naive, V, lam, first, last):
    """One pass of `sweep_contact` over contacts [first, last) (a block's share of a sweep).
    Two neighbouring contacts that share no marble are updated as a pair: both loads first,
    then both updates, then both stores. The second sees the same velocities as after the
    first's stores (the first changes only its own marbles), so the numbers are those of one
    contact at a time, but the two chains of dependent arithmetic overlap (about 8 % faster on
    a box of 10 000)."""
    c = first
    while c < last:
        if rows == ROWS_SLIDING and c + 1 < last and P[c, 13] != 0.0 and P[c + 1, 13] != 0.0:
            a, b = body_a[c], body_b[c]
            a2, b2 = body_a[c + 1], body_b[c + 1]
            if b2 != b and b2 != a and (a2 < 0 or (a2 != a and a2 != b)):
                vb, va = _load(V, b), _load(V, a)
                vb2, va2 = _load(V, b2), _load(V, a2)
                d = _contact_impulse(c, a, P, rows, law, naive, lam, vb, va)
                d2 = _contact_impulse(c + 1, a2, P, rows, law, naive, lam, vb2, va2)
                _apply_impulse(c, a, b, P, V, vb, va, d)
                _apply_impulse(c + 1, a2, b2, P, V, vb2, va2, d2)
                c += 2
                continue
        sweep_contact(c, body_a, body_b, P, rows, law, naive, V, lam)
        c += 1


@njit(**ROW_KERNEL)
def frictional_sweeps(body_a, body_b, P, rows, law, naive, V, lam, count):
    """`count` Gauss-Seidel sweeps of `sweep_contact` over every contact, in place; V (n, 6) is
    kept equal to V* + M^-1 J^T λ; P: the packed contacts (`pack`)."""
    for _ in range(count):
        frictional_range(body_a, body_b, P, rows, law, naive, V, lam, 0, body_a.shape[0])
