"""Projected Jacobi and mass-splitting Jacobi on the GPU: every iteration of a solve in one
cooperative launch, each iteration two grid-wide passes, marble by marble (v = M^-1 J^T λ
summed over the marble's contacts in contact order, the CSR of solver/cuda/assemble.py) and
contact by contact (e = J v + b, then the projected step). No floating-point atomics: each
marble's sum has one order, the CPU's serial scatter's, so a run repeats bit for bit.

The two methods differ only in their step: β / A_jj for Jacobi, 1 / A_jj over the marbles'
split masses (Tonge, Benevolenski and Voroshilov 2012: each marble's inverse mass times its
contact count) for mass splitting (solver/methods/mass_split.py, whose split diagonal this
module's `split_diagonal` computes with its functions), so both run the same kernels with diag and β.
The residuals the driver reads (`measure`) are the CPU's: the natural map without friction,
FCLIB's contact error with it.
"""
from __future__ import annotations

import math

import numpy as np

from .. import products
from ..methods import jacobi as cpu_jacobi
from ..methods import mass_split
from .coulomb import contact_error
from .launch import kernel
from .runtime import THREADS, cuda, shared
from .scan import block_extreme

# The CPU's range functions, called for one contact: the same source on this device
# (runtime.shared).
frictional_gather = shared(products.frictional_gather)
frictional_jacobi_range = shared(cpu_jacobi.frictional_jacobi_range)
split_rows = shared(mass_split.split_rows)
frictional_split_rows = shared(mass_split.frictional_split_rows)

# measure's results, (MEASURES,) float64
RESIDUAL, FINITE, SCALE, LAM_FINITE = 0, 1, 2, 3
MEASURES = 4


@cuda.jit(device=True)
def _velocity_change(s, A, lam, csr, dv):
    """dv[s] <- M^-1 J^T λ at marble s: its contacts' impulses in contact order, as the CPU's
    serial scatter adds them (products.scatter)."""
    body_a, body_b, normal, inv_mass = A
    start, items, sides = csr[0], csr[1], csr[2]
    d0 = 0.0
    d1 = 0.0
    d2 = 0.0
    w = inv_mass[s]
    for p in range(start[s], start[s + 1]):
        c = items[p]
        t = w * lam[c]
        if sides[p] < 0:
            d0 -= t * normal[c, 0]
            d1 -= t * normal[c, 1]
            d2 -= t * normal[c, 2]
        else:
            d0 += t * normal[c, 0]
            d1 += t * normal[c, 1]
            d2 += t * normal[c, 2]
    dv[s, 0] = d0
    dv[s, 1] = d1
    dv[s, 2] = d2


# long: products.frictional_scatter's two ends, for one marble, written out.
@cuda.jit(device=True)
def _frictional_velocity_change(s, A, lam, csr, dV):
    """dV[s] <- M^-1 J^T λ at marble s (linear m/s, angular rad/s) in contact order."""
    body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass, inv_inertia, rows = A
    start, items, sides = csr[0], csr[1], csr[2]
    w = inv_mass[s]
    iw = inv_inertia[s]
    d0 = 0.0
    d1 = 0.0
    d2 = 0.0
    d3 = 0.0
    d4 = 0.0
    d5 = 0.0
    for p in range(start[s], start[s + 1]):
        c = items[p]
        k = c * rows
        ln = lam[k]
        l1 = lam[k + 1]
        l2 = lam[k + 2]
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
        if sides[p] > 0:
            rb = arm_b[c]
            d0 += w * p0
            d1 += w * p1
            d2 += w * p2
            d3 += iw * (r0 - rb * g0)
            d4 += iw * (r1 - rb * g1)
            d5 += iw * (r2 - rb * g2)
        else:
            ra = arm_a[c]
            d0 -= w * p0
            d1 -= w * p1
            d2 -= w * p2
            d3 -= iw * (r0 + ra * g0)
            d4 -= iw * (r1 + ra * g1)
            d5 -= iw * (r2 + ra * g2)
    dV[s, 0] = d0
    dV[s, 1] = d1
    dV[s, 2] = d2
    dV[s, 3] = d3
    dV[s, 4] = d4
    dV[s, 5] = d5


@cuda.jit(device=True, inline=True)
def _normal_velocity(A, dv, c):
    """(J dv)_c, products.gather's sum."""
    body_a, body_b, normal = A[0], A[1], A[2]
    a = body_a[c]
    b = body_b[c]
    u = normal[c, 0] * dv[b, 0] + normal[c, 1] * dv[b, 1] + normal[c, 2] * dv[b, 2]
    if a >= 0:
        u -= normal[c, 0] * dv[a, 0] + normal[c, 1] * dv[a, 1] + normal[c, 2] * dv[a, 2]
    return u


@cuda.jit(device=True, inline=True)
def _contact_step(A, system, beta, lam, dv, c):
    """Contact c's projected step from the marbles' dv (an inert row, A_cc = 0, keeps λ_c)."""
    rhs, diag = system
    if diag[c] != 0.0:
        e = _normal_velocity(A, dv, c)
        new = lam[c] - beta * (e + rhs[c]) / diag[c]
        lam[c] = new if new > 0.0 else 0.0


@cuda.jit(device=True)
def _sweeps(A, system, beta, lam, csr, dv, count, grid):
    """`count` projected Jacobi iterations without friction, in place (the `jacobi` kernel)."""
    n = dv.shape[0]
    m = lam.shape[0]
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for _ in range(count):
        for s in range(first, n, stride):
            _velocity_change(s, A, lam, csr, dv)
        grid.sync()
        for c in range(first, m, stride):
            _contact_step(A, system, beta, lam, dv, c)
        grid.sync()


@cuda.jit(device=True)
def _frictional_sweeps(A, system, laws, lam, csr, scratch, count, grid):
    """`count` frictional Jacobi iterations in place (the `frictional_jacobi` kernel)."""
    dV, e = scratch
    rows = A[9]
    n = dV.shape[0]
    m = A[0].shape[0]
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for _ in range(count):
        for s in range(first, n, stride):
            _frictional_velocity_change(s, A, lam, csr, dV)
        grid.sync()
        for c in range(first, m, stride):
            frictional_gather(A, dV, e, c, c + 1)
            frictional_jacobi_range(system[0], system[1], laws, rows, lam, e, c, c + 1)
        grid.sync()


@kernel
def jacobi(A, system, beta, lam, csr, dv, count):
    """`count` projected Jacobi iterations without friction, in place: λ_c <- max(0, λ_c -
    β (e_c + b_c) / A_cc) from one iterate (jacobi.jacobi_range's arithmetic); system =
    (rhs, diag) (m,) each (mass splitting: the split diagonal, β = 1); csr the contacts by
    marble; dv (n, 3) scratch."""
    _sweeps(A, system, beta, lam, csr, dv, count, cuda.cg.this_grid())


@kernel
def frictional_jacobi(A, system, laws, lam, csr, scratch, count):
    """`count` frictional Jacobi iterations in place (jacobi.frictional_jacobi_sweeps): the
    normal projected onto λ_n >= 0, the tangents onto the disk of the new μ λ_n, rolling rows
    alike; system = (rhs, step) (m * rows,) each, step β / A_jj (mass splitting: 1 / the
    split A_jj); laws = (mu, mu_roll, mu_spin); scratch = (dV (n, 6), e (m * rows))."""
    _frictional_sweeps(A, system, laws, lam, csr, scratch, count, cuda.cg.this_grid())


# One launch per phase: an iteration of `jacobi` / `frictional_jacobi` as two ordinary launches,
# the same arithmetic, so a benchmark can weigh the fused launch against them
# (DeviceSolve.phased, benchmarks/gpu.py's launch modes).
@kernel
def marble_pass(A, lam, csr, dv):
    """dv (n, 3) <- M^-1 J^T λ, marble by marble, without friction."""
    for s in range(cuda.grid(1), dv.shape[0], cuda.gridsize(1)):
        _velocity_change(s, A, lam, csr, dv)


@kernel
def contact_pass(A, system, beta, lam, dv):
    """Every contact's projected step from dv, without friction; system = (rhs, diag)."""
    for c in range(cuda.grid(1), lam.shape[0], cuda.gridsize(1)):
        _contact_step(A, system, beta, lam, dv, c)


@kernel
def frictional_marble_pass(A, lam, csr, dV):
    """dV (n, 6) <- M^-1 J^T λ, marble by marble, with friction."""
    for s in range(cuda.grid(1), dV.shape[0], cuda.gridsize(1)):
        _frictional_velocity_change(s, A, lam, csr, dV)


@kernel
def frictional_contact_pass(A, system, laws, lam, scratch):
    """Every contact's rows projected from dV, with friction; scratch = (dV, e)."""
    dV, e = scratch
    rows = A[9]
    for c in range(cuda.grid(1), A[0].shape[0], cuda.gridsize(1)):
        frictional_gather(A, dV, e, c, c + 1)
        frictional_jacobi_range(system[0], system[1], laws, rows, lam, e, c, c + 1)


@cuda.jit(device=True)
def _keep(lam, start):
    """start <- λ (the driver's fall-back)."""
    for j in range(cuda.grid(1), lam.shape[0], cuda.gridsize(1)):
        start[j] = lam[j]


@cuda.jit(device=True)
def _finish(local, partial, out, grid):
    """out[k] <- the largest of every thread's local[k] (local: MEASURES maxima)."""
    shared = cuda.shared.array(THREADS, np.float64)
    for k in range(MEASURES):
        value = block_extreme(shared, local[k], False)
        if cuda.threadIdx.x == 0:
            partial[cuda.blockIdx.x * MEASURES + k] = value
    grid.sync()
    if cuda.grid(1) == 0:
        for k in range(MEASURES):
            top = -np.inf
            for b in range(cuda.gridDim.x):
                v = partial[b * MEASURES + k]
                if not v <= top:
                    top = v
            out[k] = top
    grid.sync()


@cuda.jit(device=True)
def _measure(A, system, lam, csr, dv, partial, out, grid):
    """The driver's readings of a frictionless λ in one launch, out (MEASURES,), each the
    largest over the contacts (-inf for none): RESIDUAL ‖min(λ, A λ + b)‖∞ (m/s, inf when not
    finite, products.natural_range's arithmetic); FINITE 0 when a value of b or A's diagonal
    is not finite; SCALE max |b|; LAM_FINITE 0 when a value of λ is not finite. system =
    (rhs, diag); partial (blocks * MEASURES,) scratch."""
    rhs, diag = system
    body_a, body_b, normal = A[0], A[1], A[2]
    local = cuda.local.array(MEASURES, np.float64)
    for k in range(MEASURES):
        local[k] = -np.inf
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(first, dv.shape[0], stride):
        _velocity_change(s, A, lam, csr, dv)
    grid.sync()
    for c in range(first, lam.shape[0], stride):
        a = body_a[c]
        b = body_b[c]
        e = rhs[c] + normal[c, 0] * dv[b, 0] + normal[c, 1] * dv[b, 1] + normal[c, 2] * dv[b, 2]
        if a >= 0:
            e -= normal[c, 0] * dv[a, 0] + normal[c, 1] * dv[a, 1] + normal[c, 2] * dv[a, 2]
        r = abs(min(lam[c], e))
        if not math.isfinite(r):
            r = np.inf
        local[RESIDUAL] = max(local[RESIDUAL], r)
        if not (math.isfinite(rhs[c]) and math.isfinite(diag[c])):
            local[FINITE] = 0.0
        local[SCALE] = max(local[SCALE], abs(rhs[c]))
        if not math.isfinite(lam[c]):
            local[LAM_FINITE] = 0.0
    _finish(local, partial, out, grid)


@cuda.jit(device=True)
def _frictional_measure(A, system, laws, lam, csr, scratch, work, grid):
    """_measure with friction: RESIDUAL the square of the largest FCLIB contact error
    (coulomb.contact_error, m/s); system = (rhs, diag) (m * rows,) each; scratch = (dV, e);
    work = (partial, out)."""
    partial, out = work
    rhs, diag = system
    mu, mu_roll, mu_spin = laws
    dV, e = scratch
    rows = A[9]
    local = cuda.local.array(MEASURES, np.float64)
    for k in range(MEASURES):
        local[k] = -np.inf
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(first, dV.shape[0], stride):
        _frictional_velocity_change(s, A, lam, csr, dV)
    grid.sync()
    for c in range(first, A[0].shape[0], stride):
        frictional_gather(A, dV, e, c, c + 1)
        k = c * rows
        for j in range(rows):
            e[k + j] += rhs[k + j]
            if not (math.isfinite(rhs[k + j]) and math.isfinite(diag[k + j])):
                local[FINITE] = 0.0
            local[SCALE] = max(local[SCALE], abs(rhs[k + j]))
            if not math.isfinite(lam[k + j]):
                local[LAM_FINITE] = 0.0
        r = contact_error(lam, e, k, mu[c], mu_roll[c], mu_spin[c], rows, True)
        if not math.isfinite(r):
            r = np.inf
        local[RESIDUAL] = max(local[RESIDUAL], r)
    _finish(local, partial, out, grid)


@kernel
def measure(A, system, lam, csr, dv, partial, out):
    """_measure in one launch (the driver's readings between traced iterations)."""
    _measure(A, system, lam, csr, dv, partial, out, cuda.cg.this_grid())


@kernel
def frictional_measure(A, system, laws, lam, csr, scratch, work):
    """_frictional_measure in one launch."""
    _frictional_measure(A, system, laws, lam, csr, scratch, work, cuda.cg.this_grid())


@kernel
def solve(A, system, beta, lam, csr, work, count, readings):
    """A whole solve without friction in one launch: λ kept in start, its readings in
    readings[:MEASURES], `count` iterations, the readings of the result in
    readings[MEASURES:]. work = (dv, start, partial); system's diag: the step's (β = 1 and
    the split diagonal for mass splitting)."""
    grid = cuda.cg.this_grid()
    dv, start, partial = work
    measured = (system[0], system[2])
    _keep(lam, start)
    _measure(A, measured, lam, csr, dv, partial, readings[:MEASURES], grid)
    _sweeps(A, (system[0], system[1]), beta, lam, csr, dv, count, grid)
    _measure(A, measured, lam, csr, dv, partial, readings[MEASURES:], grid)


@kernel
def frictional_solve(A, system, laws, lam, csr, scratch, work, count):
    """A whole frictional solve in one launch, as `solve`: system = (rhs, step, diag), work =
    (start, partial, readings)."""
    grid = cuda.cg.this_grid()
    start, partial, readings = work
    measured = (system[0], system[2])
    _keep(lam, start)
    _frictional_measure(A, measured, laws, lam, csr, scratch, (partial, readings[:MEASURES]),
                        grid)
    _frictional_sweeps(A, (system[0], system[1]), laws, lam, csr, scratch, count, grid)
    _frictional_measure(A, measured, laws, lam, csr, scratch, (partial, readings[MEASURES:]),
                        grid)


@kernel
def split_diagonal(A, start, out):
    """out (m,) <- A's diagonal over the split masses (mass_split.split_rows); start: the CSR's
    row starts."""
    for c in range(cuda.grid(1), A[0].shape[0], cuda.gridsize(1)):
        split_rows(A, start, out, c, c + 1)


@kernel
def frictional_split_diagonal(A, start, out):
    """split_diagonal with friction, out (m * rows) (mass_split.frictional_split_rows)."""
    for c in range(cuda.grid(1), A[0].shape[0], cuda.gridsize(1)):
        frictional_split_rows(A, start, out, c, c + 1)


@kernel
def row_steps(factor, diag, out):
    """out <- factor / A_jj per row, 0 for an inert row (problem.row_step's rule)."""
    for j in range(cuda.grid(1), diag.shape[0], cuda.gridsize(1)):
        d = diag[j]
        out[j] = factor / d if d > 0.0 else 0.0
