"""Coulomb's law in numbers: the projections onto the friction disk and cone, FCLIB's contact
error (De Saxcé's change of variable), and the kernels that measure a frictional problem's
residual from λ, serially and over a partition (solver/friction.py builds the problem; rows
and frames are described there). With μ = 0 and λ_t = 0 the error is the frictionless natural
map |min(λ_n, e_n)|.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .drivers import driver
from .partition import share, shares
from .products import (ROW_KERNEL, all_finite, frictional_contact_velocities,
                       frictional_gather, frictional_scatter, frictional_velocity_change,
                       is_zero, largest, scan)


@njit(inline="always", cache=True, nogil=True)
def project_disk(l1, l2, radius):
    """(l1, l2) scaled back onto the disk of the given radius (>= 0) when outside it."""
    norm2 = l1 * l1 + l2 * l2
    if norm2 > radius * radius:
        s = radius / math.sqrt(norm2) if norm2 > 0.0 else 0.0
        return l1 * s, l2 * s
    return l1, l2


@njit(inline="always", cache=True, nogil=True)
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


@njit(**ROW_KERNEL)
def frictional_impulse_velocity(A, lam, dV):
    """dV (n, 6) <- M^-1 J^T λ: the linear (m/s) and angular (rad/s) velocity changes that
    impulses λ (m * rows, N s and N m s) cause; A the frictional operator's factors
    (solver/products.py)."""
    dV[:] = 0.0
    frictional_scatter(A, lam, dV, np.int64(0), A[0].shape[0])


@njit(**ROW_KERNEL)
def frictional_contact_velocity(A, V, out):
    """out (m * rows) <- J V: each row's relative velocity (m/s; rad/s for rolling rows)."""
    frictional_gather(A, V, out, np.int64(0), A[0].shape[0])


@njit(inline="always", cache=True, nogil=True)
def contact_error(lam, e, k, mu, mu_roll, mu_spin, rows, squared=False):
    """Contact error of one contact, FCLIB's natural map with De Saxcé's change of variable:
    ‖λ - P_K(λ - ũ)‖₂ with ũ = (e_n + μ ‖u_t‖, u_t), over the normal and tangent rows, and
    the natural map of the rolling disk and the spinning interval for λ_n fixed (its square
    when `squared`). With μ = 0, λ_t = 0 it is |min(λ_n, e_n)|, the frictionless natural map."""
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
    return total if squared else math.sqrt(total)


@njit(**ROW_KERNEL)
def _errors_range(lam, e, rhs, laws, rows, add_rhs, first, last):
    """max of `contact_error` over contacts [first, last) (inf at the first not finite), after
    e += rhs on their rows when `add_rhs` (e = A λ + b from e = A λ); laws = (mu, mu_roll,
    mu_spin), (m,) each."""
    mu, mu_roll, mu_spin = laws
    worst = 0.0
    for c in range(first, last):
        k = c * rows
        if add_rhs:
            for j in range(rows):
                e[k + j] += rhs[k + j]
        r = contact_error(lam, e, k, mu[c], mu_roll[c], mu_spin[c], rows, True)
        if not np.isfinite(r):
            return np.inf
        if r > worst:
            worst = r
    return np.sqrt(worst)  # the max of the square roots: the root is monotonic


@driver(parallel=True, cache=True, nogil=True)
def frictional_residual(A, rhs, laws, lam, scratch, partition, held):
    """(r, product): the max over contacts of `contact_error` (m/s) of λ, exactly (one product
    with A), over a partition (ranges, phases), inline for one block: the same r for any number
    of blocks. laws = (mu, mu_roll, mu_spin) (m,) each; scratch = (dV (n, 6), e (m * rows));
    no product for λ = 0 (e = b) or when `held` (dV holds M^-1 J^T λ already); product: whether
    dV holds it now. inf when any value is not finite, so callers see divergence."""
    dV, e = scratch
    ranges = partition[0]
    rows = A[9]
    m = A[0].shape[0]
    parts = shares(ranges)
    # np.bool_ flags: a literal True or False would compile _errors_range once for each.
    if is_zero(lam):
        if parts == 1:
            return _errors_range(lam, rhs, rhs, laws, rows, np.bool_(False), np.int64(0), m), held
        partial = np.zeros(parts)
        for t in prange(parts):
            first, last = share(ranges, t)
            partial[t] = _errors_range(lam, rhs, rhs, laws, rows, np.bool_(False), first, last)
        return largest(partial), held
    if not held:
        frictional_velocity_change(A, lam, dV, partition)
    frictional_contact_velocities(A, dV, e, ranges)
    if parts == 1:
        return _errors_range(lam, e, rhs, laws, rows, np.bool_(True), np.int64(0), m), True
    partial = np.zeros(parts)
    for t in prange(parts):
        first, last = share(ranges, t)
        partial[t] = _errors_range(lam, e, rhs, laws, rows, np.bool_(True), first, last)
    return largest(partial), True


@driver(cache=True, nogil=True)
def scanned_frictional_residual(A, rhs, diag, laws, lam, scratch, partition, held):
    """(r, finite, scale, product) at a solve's start: whether rhs and diag are finite, max
    |rhs| (m/s), and frictional_residual's (r, product); r = inf, not computed, when they are
    not finite."""
    finite, scale = scan(rhs, diag, A[9], partition[0])
    if not finite:
        return np.inf, False, np.inf, held
    r, product = frictional_residual(A, rhs, laws, lam, scratch, partition, held)
    return r, True, scale, product


@driver(cache=True, nogil=True)
def checked_frictional_residual(A, rhs, laws, lam, scratch, partition, held):
    """(r, finite, product) at a solve's end: whether λ is finite, and frictional_residual's
    (r, product); r = inf, not computed, when λ is not finite."""
    if not all_finite(lam, A[9], partition[0]):
        return np.inf, False, held
    r, product = frictional_residual(A, rhs, laws, lam, scratch, partition, held)
    return r, True, product


@njit(cache=True, nogil=True)
def _contact_errors_squared(lam, e, laws, rows):
    mu, mu_roll, mu_spin = laws
    total = 0.0
    for c in range(mu.shape[0]):
        total += contact_error(lam, e, c * rows, mu[c], mu_roll[c], mu_spin[c], rows, True)
    return total


def contact_errors_norm(lam: np.ndarray, e: np.ndarray, laws: tuple, rows: int) -> float:
    """‖λ - P_K(λ - ũ)‖₂ over contacts, `contact_error` summed in squares: lam, e (m * rows,)
    in each contact's row order; laws = (mu, mu_roll, mu_spin), (m,) each."""
    # One kernel: the same formula in numpy masks cost ~300 µs on 450 contacts, twenty sweeps'
    # worth, and a performance profile evaluates it after every iteration.
    flat = [np.ascontiguousarray(a, dtype=np.float64).ravel() for a in (lam, e)]
    laws = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in laws)
    return float(np.sqrt(_contact_errors_squared(flat[0], flat[1], laws, np.int64(rows))))
