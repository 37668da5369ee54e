"""The two halves of a product with A = J M^-1 J^T over a range of contacts: the scatter
M^-1 J^T λ (impulses to velocity changes) and the gather J V (velocities to contact velocities),
without and with friction, and the kernels that run them over a step's partition
(solver/partition.py): the gathers over equal shares of the contacts at once, the scatter
phase by phase, the groups of a phase at once; inline, on the calling thread, for one block.
A marble's velocity change then sums the same terms in the same order as the serial scatter
over the same contacts, so the results are identical for any number of threads.

Every kernel takes A as one tuple of its factors, J's rows and M^-1 (`problem.A`):

    frictionless  (body_a, body_b, normal, inv_mass)
    frictional    (body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass, inv_inertia, rows)

body_a, body_b (m,) int64 (-1: a wall), normal, t1, t2 (m, 3), arm_a, arm_b (m,) m,
inv_mass (n,) 1/kg, inv_inertia (n,) 1/(kg m^2), rows per contact 3 or 6. Frictionless rows:
-n at marble a, +n at b; frictional rows: solver/friction.py. A partition is the tuple
(ranges, phases). Kernels unpack the tuples by name on their first line; plain tuples, not
NamedTuples, because Numba types a plain tuple of arrays at the call as fast as the arrays
alone, and a NamedTuple in Python, about a microsecond more per call (docs/architecture.md).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .drivers import driver
from .partition import share, shares

# The options of a kernel that calls row helpers or takes arrays through calls in its loop:
# compiled without Numba's reference counting, because handing an array to a helper otherwise
# costs an atomic incref/decref pair per contact (it made a PGS sweep five times slower). Such
# kernels allocate nothing.
ROW_KERNEL = dict(cache=True, nogil=True, _nrt=False)
# A hot range kernel counts over range(np.uint64(first), np.uint64(last)): Numba cannot know that
# bounds read from a partition are not negative, and with a signed index it checks every load
# and store for Python's negative wraparound (25 % of a pgs sweep). Only where the index is used
# as an index alone: uint64 mixed with int64 arithmetic becomes float64. A range from the start
# is passed np.int64(0), not 0: Numba compiles a kernel apart for a literal int argument, and
# every kernel would be compiled twice (the one-block call and the blocks' calls).


@njit(**ROW_KERNEL)
def scatter(A, lam, dv, first, last):
    """dv (n, 3) += M^-1 J^T λ over contacts [first, last): m/s for λ in N s. A: the
    frictionless operator's factors (body_a, body_b, normal, inv_mass), module docstring."""
    body_a, body_b, normal, inv_mass = A
    for c in range(np.uint64(first), np.uint64(last)):
        a = body_a[c]
        b = body_b[c]
        lc = lam[c]
        if a >= 0:
            s = inv_mass[a] * lc
            dv[a, 0] -= s * normal[c, 0]
            dv[a, 1] -= s * normal[c, 1]
            dv[a, 2] -= s * normal[c, 2]
        s = inv_mass[b] * lc
        dv[b, 0] += s * normal[c, 0]
        dv[b, 1] += s * normal[c, 1]
        dv[b, 2] += s * normal[c, 2]


@njit(**ROW_KERNEL)
def gather(A, v, out, first, last):
    """out[c] <- (J v)_c, the relative normal velocity (m/s), for contacts [first, last)."""
    body_a, body_b, normal, _ = A
    for c in range(np.uint64(first), np.uint64(last)):
        a = body_a[c]
        b = body_b[c]
        u = normal[c, 0] * v[b, 0] + normal[c, 1] * v[b, 1] + normal[c, 2] * v[b, 2]
        if a >= 0:
            u -= normal[c, 0] * v[a, 0] + normal[c, 1] * v[a, 1] + normal[c, 2] * v[a, 2]
        out[c] = u


# long: the linear and angular impulse of every row written out (helpers taking the arrays
# would cost reference counting per contact).
@njit(**ROW_KERNEL)
def frictional_scatter(A, lam, dV, first, last):
    """dV (n, 6) += M^-1 J^T λ over contacts [first, last): the linear (m/s) and angular
    (rad/s) velocity changes of impulses λ (m * rows, N s and N m s). A: the frictional
    operator's factors, module docstring."""
    body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass, inv_inertia, rows = A
    for c in range(first, last):
        a = body_a[c]
        b = body_b[c]
        k = c * rows
        ln = lam[k]
        l1 = lam[k + 1]
        l2 = lam[k + 2]
        # Linear impulse P = ln n + l1 t1 + l2 t2; angular (about b's centre) -r_b (l1 t2 - l2 t1).
        p0 = ln * normal[c, 0] + l1 * t1[c, 0] + l2 * t2[c, 0]
        p1 = ln * normal[c, 1] + l1 * t1[c, 1] + l2 * t2[c, 1]
        p2 = ln * normal[c, 2] + l1 * t1[c, 2] + l2 * t2[c, 2]
        g0 = l1 * t2[c, 0] - l2 * t1[c, 0]
        g1 = l1 * t2[c, 1] - l2 * t1[c, 1]
        g2 = l1 * t2[c, 2] - l2 * t1[c, 2]
        r0 = 0.0
        r1 = 0.0
        r2 = 0.0
        if rows == 6:
            lr1 = lam[k + 3]
            lr2 = lam[k + 4]
            ls = lam[k + 5]
            r0 = lr1 * t1[c, 0] + lr2 * t2[c, 0] + ls * normal[c, 0]
            r1 = lr1 * t1[c, 1] + lr2 * t2[c, 1] + ls * normal[c, 1]
            r2 = lr1 * t1[c, 2] + lr2 * t2[c, 2] + ls * normal[c, 2]
        wb = inv_mass[b]
        ib = inv_inertia[b]
        rb = arm_b[c]
        dV[b, 0] += wb * p0
        dV[b, 1] += wb * p1
        dV[b, 2] += wb * p2
        dV[b, 3] += ib * (r0 - rb * g0)
        dV[b, 4] += ib * (r1 - rb * g1)
        dV[b, 5] += ib * (r2 - rb * g2)
        if a >= 0:
            wa = inv_mass[a]
            ia = inv_inertia[a]
            ra = arm_a[c]
            dV[a, 0] -= wa * p0
            dV[a, 1] -= wa * p1
            dV[a, 2] -= wa * p2
            dV[a, 3] -= ia * (r0 + ra * g0)
            dV[a, 4] -= ia * (r1 + ra * g1)
            dV[a, 5] -= ia * (r2 + ra * g2)


@njit(**ROW_KERNEL)
def frictional_gather(A, V, out, first, last):
    """out[c * rows + j] <- (J V) of every row j of contacts [first, last): m/s (rad/s for the
    rolling rows). The GPU's kernels call it for one contact (friction.contact_rows says why)."""
    body_a, body_b, normal, t1, t2, arm_a, arm_b, _, _, rows = A
    for c in range(first, last):
        a = body_a[c]
        b = body_b[c]
        k = c * rows
        dv0 = V[b, 0]
        dv1 = V[b, 1]
        dv2 = V[b, 2]
        rb = arm_b[c]
        s0 = rb * V[b, 3]  # r_b ω_b + r_a ω_a, the lever terms of the tangent rows
        s1 = rb * V[b, 4]
        s2 = rb * V[b, 5]
        dw0 = V[b, 3]
        dw1 = V[b, 4]
        dw2 = V[b, 5]
        if a >= 0:
            ra = arm_a[c]
            dv0 -= V[a, 0]
            dv1 -= V[a, 1]
            dv2 -= V[a, 2]
            s0 += ra * V[a, 3]
            s1 += ra * V[a, 4]
            s2 += ra * V[a, 5]
            dw0 -= V[a, 3]
            dw1 -= V[a, 4]
            dw2 -= V[a, 5]
        out[k] = normal[c, 0] * dv0 + normal[c, 1] * dv1 + normal[c, 2] * dv2
        # u_t1 = t1·Δv - t2·s, u_t2 = t2·Δv + t1·s (g1 = t2, g2 = -t1)
        out[k + 1] = (t1[c, 0] * dv0 + t1[c, 1] * dv1 + t1[c, 2] * dv2
                      - (t2[c, 0] * s0 + t2[c, 1] * s1 + t2[c, 2] * s2))
        out[k + 2] = (t2[c, 0] * dv0 + t2[c, 1] * dv1 + t2[c, 2] * dv2
                      + (t1[c, 0] * s0 + t1[c, 1] * s1 + t1[c, 2] * s2))
        if rows == 6:
            out[k + 3] = t1[c, 0] * dw0 + t1[c, 1] * dw1 + t1[c, 2] * dw2
            out[k + 4] = t2[c, 0] * dw0 + t2[c, 1] * dw1 + t2[c, 2] * dw2
            out[k + 5] = normal[c, 0] * dw0 + normal[c, 1] * dw1 + normal[c, 2] * dw2


@njit(cache=True, nogil=True)
def impulse_velocity(A, lam, dv):
    """dv (n, 3) <- M^-1 J^T λ over every contact in order: the velocity change, m/s, that
    impulses λ (N s) cause."""
    for i in range(dv.shape[0]):
        dv[i, 0] = 0.0
        dv[i, 1] = 0.0
        dv[i, 2] = 0.0
    scatter(A, lam, dv, np.int64(0), lam.shape[0])


@driver(parallel=True, cache=True, nogil=True)
def velocity_change(A, lam, dv, partition):
    """dv (n, 3) <- M^-1 J^T λ over a partition (ranges, phases): the groups of a phase at
    once, the phases in order, so every marble sums the same terms in the same order for any
    number of threads; inline for one block."""
    ranges, phases = partition
    if shares(ranges) == 1:
        impulse_velocity(A, lam, dv)
        return
    for i in prange(dv.shape[0]):
        dv[i, 0] = 0.0
        dv[i, 1] = 0.0
        dv[i, 2] = 0.0
    for p in range(phases.shape[0] - 1):
        for g in prange(phases[p], phases[p + 1]):
            scatter(A, lam, dv, ranges[g], ranges[g + 1])


@driver(parallel=True, cache=True, nogil=True)
def contact_velocity(A, v, out, ranges):
    """out (m,) <- J v, the relative normal velocity of every contact (m/s), over a
    partition's contacts in equal shares at once; inline for one block."""
    parts = shares(ranges)
    if parts == 1:
        gather(A, v, out, np.int64(0), out.shape[0])
        return
    for t in prange(parts):
        first, last = share(ranges, t)
        gather(A, v, out, first, last)


@driver(parallel=True, cache=True, nogil=True)
def frictional_velocity_change(A, lam, dV, partition):
    """dV (n, 6) <- M^-1 J^T λ over a partition: the groups of a phase at once, the phases in
    order (every marble sums its terms in the serial order); inline for one block."""
    ranges, phases = partition
    if shares(ranges) == 1:
        _zero_rows(dV)
        frictional_scatter(A, lam, dV, np.int64(0), A[0].shape[0])
        return
    for i in prange(dV.shape[0]):
        for j in range(6):
            dV[i, j] = 0.0
    for p in range(phases.shape[0] - 1):
        for g in prange(phases[p], phases[p + 1]):
            frictional_scatter(A, lam, dV, ranges[g], ranges[g + 1])


@driver(parallel=True, cache=True, nogil=True)
def frictional_contact_velocities(A, V, out, ranges):
    """out (m * rows) <- J V over a partition's contacts in equal shares at once; inline for
    one block."""
    parts = shares(ranges)
    if parts == 1:
        frictional_gather(A, V, out, np.int64(0), A[0].shape[0])
        return
    for t in prange(parts):
        first, last = share(ranges, t)
        frictional_gather(A, V, out, first, last)


@njit(cache=True, nogil=True)
def _zero_rows(a):
    """a (n, k) <- 0, serially (an array expression in a parallel kernel would start threads)."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = 0.0


@njit(cache=True, nogil=True)
def largest(partial):
    """max of per-group maxima (inf when any is inf): the same value as one serial pass."""
    worst = 0.0
    for g in range(partial.shape[0]):
        if partial[g] > worst:
            worst = partial[g]
    return worst


@njit(cache=True, nogil=True)
def natural_range(A, rhs, lam, dv, first, last):
    """max over contacts [first, last) of |min(λ_c, e_c)| with e = J dv + b (dv = M^-1 J^T λ,
    (n, 3)), m/s; inf as soon as one is not finite."""
    body_a, body_b, normal, _ = A
    worst = 0.0
    for c in range(np.uint64(first), np.uint64(last)):
        a = body_a[c]
        b = body_b[c]
        e = rhs[c] + normal[c, 0] * dv[b, 0] + normal[c, 1] * dv[b, 1] + normal[c, 2] * dv[b, 2]
        if a >= 0:
            e -= normal[c, 0] * dv[a, 0] + normal[c, 1] * dv[a, 1] + normal[c, 2] * dv[a, 2]
        r = abs(min(lam[c], e))
        if not np.isfinite(r):
            return np.inf
        if r > worst:
            worst = r
    return worst


@njit(cache=True, nogil=True)
def cold_range(rhs, first, last):
    """The natural map's max over [first, last) at λ = 0, where e = b: max(-b_c, 0); inf when
    not finite."""
    worst = 0.0
    for c in range(np.uint64(first), np.uint64(last)):
        r = max(-rhs[c], 0.0)
        if not np.isfinite(r):
            return np.inf
        if r > worst:
            worst = r
    return worst


@njit(cache=True, nogil=True)
def is_zero(lam):
    """Whether every entry of λ is 0 (a cold start: A λ = 0 needs no product)."""
    for c in range(lam.shape[0]):
        if lam[c] != 0.0:
            return False
    return True


@njit(cache=True, nogil=True)
def same_bits(x, y):
    """Whether x and y (1-d float64, contiguous) hold the same bits: -0.0 differs from 0.0. A
    kernel's results on x are then its results on y. One pass without exits (vectorised)."""
    if x.shape[0] != y.shape[0]:
        return False
    a = x.view(np.int64)
    b = y.view(np.int64)
    diff = 0
    for j in range(a.shape[0]):
        diff |= a[j] ^ b[j]
    return diff == 0


@driver(parallel=True, cache=True, nogil=True)
def natural_residual(A, rhs, lam, dv, partition):
    """‖min(λ, A λ + b)‖∞ (m/s), computed exactly from λ (one product with A) over a
    partition; dv (n, 3) is scratch. inf if any entry is not finite, so callers see divergence.
    The maximum of per-share maxima is the maximum of one pass: the same value for any number
    of threads."""
    ranges = partition[0]
    parts = shares(ranges)
    m = lam.shape[0]
    if parts == 1:
        if is_zero(lam):
            # λ = 0 (every cold start): A λ = 0 exactly, so e = b and the product is skipped.
            return cold_range(rhs, np.int64(0), m)
        impulse_velocity(A, lam, dv)
        return natural_range(A, rhs, lam, dv, np.int64(0), m)
    partial = np.zeros(parts)
    if is_zero(lam):
        for t in prange(parts):
            first, last = share(ranges, t)
            partial[t] = cold_range(rhs, first, last)
        return largest(partial)
    velocity_change(A, lam, dv, partition)
    for t in prange(parts):
        first, last = share(ranges, t)
        partial[t] = natural_range(A, rhs, lam, dv, first, last)
    return largest(partial)


@njit(cache=True, nogil=True)
def scan_range(rhs, diag, first, last):
    """(finite, scale) of entries [first, last) of b and A's diagonal: whether all are finite,
    and max |b| (m/s; inf when not finite)."""
    scale = 0.0
    for j in range(np.uint64(first), np.uint64(last)):
        if not (np.isfinite(rhs[j]) and np.isfinite(diag[j])):
            return False, np.inf
        scale = max(scale, abs(rhs[j]))
    return True, scale


@driver(parallel=True, cache=True, nogil=True)
def scan(rhs, diag, rows, ranges):
    """(finite, scale) of a problem's b and A's diagonal (rows entries per contact) over a
    partition's contacts in equal shares: whether all are finite, and max |b| (m/s)."""
    parts = shares(ranges)
    if parts == 1:
        return scan_range(rhs, diag, np.int64(0), rhs.shape[0])
    scale = np.zeros(parts)
    bad = np.zeros(parts, dtype=np.int64)
    for t in prange(parts):
        first, last = share(ranges, t)
        ok, top = scan_range(rhs, diag, first * rows, last * rows)
        bad[t] = 0 if ok else 1
        scale[t] = top
    if bad.sum() > 0:
        return False, np.inf
    return True, largest(scale)


@njit(cache=True, nogil=True)
def finite_range(lam, first, last):
    """Whether entries [first, last) of λ are all finite."""
    for j in range(np.uint64(first), np.uint64(last)):
        if not np.isfinite(lam[j]):
            return False
    return True


@driver(parallel=True, cache=True, nogil=True)
def all_finite(lam, rows, ranges):
    """Whether every entry of λ (rows per contact) is finite, over a partition's contacts in
    equal shares."""
    parts = shares(ranges)
    if parts == 1:
        return finite_range(lam, np.int64(0), lam.shape[0])
    bad = np.zeros(parts, dtype=np.int64)
    for t in prange(parts):
        first, last = share(ranges, t)
        bad[t] = 0 if finite_range(lam, first * rows, last * rows) else 1
    return bad.sum() == 0


@driver(cache=True, nogil=True)
def scanned_residual(A, rhs, diag, lam, dv, partition):
    """(r, finite, scale) in one call, for the start of a solve: finite says whether every entry
    of rhs and diag is finite; scale = max |rhs| (m/s, 0 when m = 0); r = natural_residual(λ)
    (m/s), or inf when not finite (then it is not computed)."""
    ok, scale = scan(rhs, diag, 1, partition[0])
    if not ok:
        return np.inf, False, np.inf
    return natural_residual(A, rhs, lam, dv, partition), True, scale


@driver(cache=True, nogil=True)
def checked_residual(A, rhs, lam, dv, partition):
    """(r, finite) in one call, for the end of a solve: finite says whether every λ is finite;
    r = natural_residual(λ) (m/s) if so, else inf (not computed: λ is not usable anyway)."""
    if not all_finite(lam, 1, partition[0]):
        return np.inf, False
    return natural_residual(A, rhs, lam, dv, partition), True
