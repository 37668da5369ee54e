"""Coulomb's law on the GPU: the projections onto the friction disk and cone and FCLIB's
contact error, the device-side twins of solver/coulomb.py's, operation for operation (a CUDA
kernel cannot call a CPU kernel; tests/solver/cuda holds the two equal)."""
from __future__ import annotations

import math

from .runtime import cuda


@cuda.jit(device=True, inline=True)
def project_disk(l1, l2, radius):
    """(l1, l2) scaled back onto the disk of the given radius (>= 0) when outside it."""
    norm2 = l1 * l1 + l2 * l2
    if norm2 > radius * radius:
        s = radius / math.sqrt(norm2) if norm2 > 0.0 else 0.0
        return l1 * s, l2 * s
    return l1, l2


@cuda.jit(device=True, inline=True)
def project_cone(zn, z1, z2, mu):
    """The projection of z = (z_n, z_t) onto the cone ‖z_t‖ <= μ z_n (Euclidean)."""
    zt = math.sqrt(z1 * z1 + z2 * z2)
    if zt <= mu * zn:
        return zn, z1, z2
    if mu * zt <= -zn:
        return 0.0, 0.0, 0.0
    a = (zn + mu * zt) / (1.0 + mu * mu)
    s = mu * a / zt
    return a, z1 * s, z2 * s


@cuda.jit(device=True)
def contact_error_squared(lam, e, k, coefficients, rows):
    """The square of one contact's FCLIB error (solver/coulomb.contact_error) with
    coefficients = (μ, μ_roll, μ_spin)."""
    mu, mu_roll, mu_spin = coefficients
    ln = lam[k]
    l1 = lam[k + 1]
    l2 = lam[k + 2]
    u1 = e[k + 1]
    u2 = e[k + 2]
    un = e[k] + mu * math.sqrt(u1 * u1 + u2 * u2)
    pn, p1, p2 = project_cone(ln - un, l1 - u1, l2 - u2, mu)
    d0 = ln - pn
    d1 = l1 - p1
    d2 = l2 - p2
    total = d0 * d0 + d1 * d1 + d2 * d2
    if rows == 6:
        lr1 = lam[k + 3]
        lr2 = lam[k + 4]
        ls = lam[k + 5]
        q1, q2 = project_disk(lr1 - e[k + 3], lr2 - e[k + 4], mu_roll * max(ln, 0.0))
        bound = mu_spin * max(ln, 0.0)
        qs = min(max(ls - e[k + 5], -bound), bound)
        total += (lr1 - q1) ** 2 + (lr2 - q2) ** 2 + (ls - qs) ** 2
    return total
