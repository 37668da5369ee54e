"""APGD on the GPU (solver/methods/apgd.py's algorithm, Chrono's GPU method): every iteration of
a solve in one cooperative launch, the backtracking, the momentum, the restart and the best
iterate decided from grid-wide sums that every thread reads alike.

Each thread owns whole contacts (the grid's stride over contacts), so the projection, the
updates of γ, y and their products, the relaxation residual and the best iterate touch only
the owner's rows; the products with A are the Jacobi kernels' two passes (marble by marble in
contact order, then contact by contact), so A x is the CPU's product bit for bit. The dot
products (the step's curvature and length, the restart's test, the first Lipschitz estimate)
are sums in a fixed tree, block by block, the same every run: a run repeats bit for bit, and
differs from the CPU's sequential sums by rounding only. No floating-point atomics.
"""
from __future__ import annotations

import math

import numpy as np

from ..methods.apgd import (BACKTRACKS, L, MAX_BACKTRACKS, PRODUCTS, RESTARTS, RMIN, STOP,
                            THETA)
from .. import products
from ..methods import laws
from .coulomb import project_cone
from .jacobi import _frictional_velocity_change, _normal_velocity, _velocity_change
from .launch import kernel
from .runtime import THREADS, cuda, shared
from .scan import block_extreme, block_sum

# The CPU's range functions, called for one contact: the same source on this device
# (runtime.shared).
frictional_gather = shared(products.frictional_gather)
project_composite = shared(laws.project_composite)

SUMS = 2  # values reduced at once
DONE = 3  # the counts' slot of the iterations the last launch performed (after apgd's three)
COUNTS = 4


@cuda.jit(device=True)
def _frictionless_product(P, x, out, grid):
    """out <- A x without friction: P = (A, csr, dv (n, 3) scratch)."""
    A, csr, dv = P
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(first, dv.shape[0], stride):
        _velocity_change(s, A, x, csr, dv)
    grid.sync()
    for c in range(first, A[0].shape[0], stride):
        out[c] = _normal_velocity(A, dv, c)
    grid.sync()


@cuda.jit(device=True)
def _frictional_product(P, x, out, grid):
    """out <- A x with friction: P = (A, csr, dV (n, 6) scratch)."""
    A, csr, dV = P
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(first, dV.shape[0], stride):
        _frictional_velocity_change(s, A, x, csr, dV)
    grid.sync()
    for c in range(first, A[0].shape[0], stride):
        frictional_gather(A, dV, out, c, c + 1)
    grid.sync()


@cuda.jit(device=True)
def _project(z, out, k, rows, coefficients):
    """out[k:k+rows] <- z[k:k+rows] projected onto the contact's admissible set
    (apgd.project_contact); coefficients = (μ, μ_roll, μ_spin)."""
    mu, mu_roll, mu_spin = coefficients
    if rows == 1:
        out[k] = max(z[k], 0.0)
    elif rows == 3:
        out[k], out[k + 1], out[k + 2] = project_cone(z[k], z[k + 1], z[k + 2], mu)
    else:
        out[k], out[k + 1], out[k + 2], out[k + 3], out[k + 4], out[k + 5] = project_composite(
            (z[k], z[k + 1], z[k + 2], z[k + 3], z[k + 4], z[k + 5]), coefficients)


@cuda.jit(device=True)
def _grid_sums(first, second, reduce, grid):
    """(Σ first, Σ second) over every thread of the grid, the same for every thread and every
    run: each block's tree, then the blocks' sums in block order. reduce = (partial (blocks *
    SUMS,), totals (SUMS,))."""
    partial, totals = reduce
    shared = cuda.shared.array(THREADS, np.float64)
    a = block_sum(shared, first)  # a fixed tree: the same float sum every run
    b = block_sum(shared, second)
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x * SUMS] = a
        partial[cuda.blockIdx.x * SUMS + 1] = b
    grid.sync()
    if cuda.grid(1) == 0:
        a = 0.0
        b = 0.0
        for blk in range(cuda.gridDim.x):
            a += partial[blk * SUMS]
            b += partial[blk * SUMS + 1]
        totals[0] = a
        totals[1] = b
    grid.sync()
    return totals[0], totals[1]


@cuda.jit(device=True)
def _grid_max(value, reduce, grid):
    """The largest `value` over the grid (a NaN: scan.block_extreme), alike for every thread."""
    partial, totals = reduce
    shared = cuda.shared.array(THREADS, np.float64)
    top = block_extreme(shared, value, False)
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x * SUMS] = top
    grid.sync()
    if cuda.grid(1) == 0:
        top = -math.inf
        for blk in range(cuda.gridDim.x):
            v = partial[blk * SUMS]
            if not v <= top:
                top = v
        totals[0] = top
    grid.sync()
    return totals[0]


@cuda.jit(device=True)
def _residual_squared(lam, Alam, rhs, cone, k, c):
    """‖λ_c - P_K(λ_c - u_c)‖² of contact c (apgd.relaxation_residual's term), u = A λ + b,
    without scratch: the projection is written out per row count."""
    rows, mu, mu_roll, mu_spin, live = cone
    total = 0.0
    if rows == 1:
        p = max(lam[k] - (Alam[k] + rhs[k]), 0.0)
        total = (lam[k] - p) ** 2
    elif rows == 3:
        pn, p1, p2 = project_cone(lam[k] - (Alam[k] + rhs[k]),
                                  lam[k + 1] - (Alam[k + 1] + rhs[k + 1]),
                                  lam[k + 2] - (Alam[k + 2] + rhs[k + 2]), mu[c])
        total = (lam[k] - pn) ** 2
        total += (lam[k + 1] - p1) ** 2
        total += (lam[k + 2] - p2) ** 2
    else:
        zn = lam[k] - (Alam[k] + rhs[k])
        z1 = lam[k + 1] - (Alam[k + 1] + rhs[k + 1])
        z2 = lam[k + 2] - (Alam[k + 2] + rhs[k + 2])
        r1 = lam[k + 3] - (Alam[k + 3] + rhs[k + 3])
        r2 = lam[k + 4] - (Alam[k + 4] + rhs[k + 4])
        s = lam[k + 5] - (Alam[k + 5] + rhs[k + 5])
        a, q1, q2, w1, w2, ws = project_composite((zn, z1, z2, r1, r2, s),
                                                  (mu[c], mu_roll[c], mu_spin[c]))
        total = (lam[k] - a) ** 2
        total += (lam[k + 1] - q1) ** 2
        total += (lam[k + 2] - q2) ** 2
        total += (lam[k + 3] - w1) ** 2
        total += (lam[k + 4] - w2) ** 2
        total += (lam[k + 5] - ws) ** 2
    return total


@cuda.jit(device=True)
def _relaxation_residual(lam, Alam, rhs, cone, reduce, grid):
    """max over live contacts of ‖λ_c - P_K(λ_c - u_c)‖ (m/s), 0 for none."""
    live = cone[4]
    rows = cone[0]
    worst = 0.0
    for c in range(cuda.grid(1), live.shape[0], cuda.gridsize(1)):
        if live[c]:
            t = _residual_squared(lam, Alam, rhs, cone, c * rows, c)
            if not t <= worst:
                worst = t
    return math.sqrt(_grid_max(worst, reduce, grid))


# long: the paper's algorithm as one launch (start, then the iterations with backtracking,
# momentum, restart and best), closing over the product of its problem kind.
def _kernels(product):
    """The start and iteration kernels of APGD over `product` (with or without friction)."""

    @kernel
    def start(P, lam, rhs, cone, scale, iterates, reduce, state):
        """From λ: γ = y = λ, A γ, the Lipschitz estimate ‖A'(ν - 1)‖ / ‖ν - 1‖ in the scaled
        variables ν = λ / scale, the best = λ and its relaxation residual (the CPU's `start`);
        state (4,) by apgd's slots."""
        grid = cuda.cg.this_grid()
        rows, mu, mu_roll, mu_spin, live = cone
        gamma, y, Ag, Ay, cand, Acand, best, z = iterates
        first = cuda.grid(1)
        stride = cuda.gridsize(1)
        for c in range(first, live.shape[0], stride):
            for j in range(c * rows, (c + 1) * rows):
                gamma[j] = lam[j]
                y[j] = lam[j]
                best[j] = lam[j]
                z[j] = lam[j] - scale[j]
        grid.sync()
        product(P, gamma, Ag, grid)
        product(P, z, Acand, grid)
        ones = 0.0
        image = 0.0
        for c in range(first, live.shape[0], stride):
            for j in range(c * rows, (c + 1) * rows):
                Ay[j] = Ag[j]
                e = z[j] / scale[j]
                ones += e * e
                f = Acand[j] * scale[j]
                image += f * f
        ones, image = _grid_sums(ones, image, reduce, grid)
        norm = math.sqrt(ones)
        estimate = math.sqrt(image) / norm if norm > 0.0 else 0.0
        r = _relaxation_residual(gamma, Ag, rhs, cone, reduce, grid)
        if first == 0:
            state[L] = estimate if estimate > 0.0 else 1.0
            state[THETA] = 1.0
            state[RMIN] = r
            state[STOP] = 0.0

    # long: apgd.apgd_iterations's loop, each grid-wide decision between two syncs.
    @kernel
    def iterations(P, rhs, cone, metric, iterates, reduce, state, counts, options):
        """`count` APGD iterations (apgd.apgd_iterations, its metric = (scale, μ', μ_roll',
        μ_spin')): options = (count, restart, tol); state (4,) and counts (COUNTS,) by apgd's
        slots and DONE, read at the start and written at the end."""
        grid = cuda.cg.this_grid()
        rows = cone[0]
        live = cone[4]
        scale, mu, mu_roll, mu_spin = metric
        gamma, y, Ag, Ay, cand, Acand, best, z = iterates
        count, restart, tol = options
        m = live.shape[0]
        first = cuda.grid(1)
        stride = cuda.gridsize(1)
        lip = state[L]
        theta = state[THETA]
        rmin = state[RMIN]
        stop = state[STOP]
        products = 0
        backtracks = 0
        restarts = 0
        done = 0
        grid.sync()  # every thread has read the state before thread 0 may write it
        for _ in range(count):
            if stop != 0.0:
                break
            done += 1
            for _bt in range(MAX_BACKTRACKS):
                t = 1.0 / lip
                for c in range(first, m, stride):
                    k = c * rows
                    for j in range(k, k + rows):
                        z[j] = y[j] / scale[j] - (t * scale[j]) * (Ay[j] + rhs[j])
                    if live[c]:
                        _project(z, cand, k, rows, (mu[c], mu_roll[c], mu_spin[c]))
                        for j in range(k, k + rows):
                            cand[j] *= scale[j]
                    else:  # an inert contact keeps its impulses
                        for j in range(k, k + rows):
                            cand[j] = gamma[j]
                grid.sync()
                product(P, cand, Acand, grid)
                products += 1
                curvature = 0.0
                length = 0.0
                for c in range(first, m, stride):
                    for j in range(c * rows, (c + 1) * rows):
                        d = cand[j] - y[j]
                        curvature += d * (Acand[j] - Ay[j])
                        e = d / scale[j]
                        length += e * e
                curvature, length = _grid_sums(curvature, length, reduce, grid)
                if curvature <= lip * length or not math.isfinite(curvature):
                    break
                lip *= 2.0
                backtracks += 1
            theta_next = 0.5 * (-theta * theta + theta * math.sqrt(theta * theta + 4.0))
            beta = theta * (1.0 - theta) / (theta * theta + theta_next)
            ascent = 0.0
            for c in range(first, m, stride):
                for j in range(c * rows, (c + 1) * rows):
                    ascent += (Ay[j] + rhs[j]) * (cand[j] - gamma[j])
            ascent, _ = _grid_sums(ascent, 0.0, reduce, grid)
            if restart and ascent > 0.0:
                beta = 0.0
                theta_next = 1.0
                restarts += 1
            for c in range(first, m, stride):
                for j in range(c * rows, (c + 1) * rows):
                    y[j] = cand[j] + beta * (cand[j] - gamma[j])
                    Ay[j] = Acand[j] + beta * (Acand[j] - Ag[j])
                    gamma[j] = cand[j]
                    Ag[j] = Acand[j]
            r = _relaxation_residual(gamma, Ag, rhs, cone, reduce, grid)
            if r < rmin:
                rmin = r
                for c in range(first, m, stride):
                    for j in range(c * rows, (c + 1) * rows):
                        best[j] = gamma[j]
            if rmin < tol:
                stop = 1.0
            theta = theta_next
            lip = 0.9 * lip
        if first == 0:
            state[L] = lip
            state[THETA] = theta
            state[RMIN] = rmin
            state[STOP] = stop
            counts[PRODUCTS] += products
            counts[BACKTRACKS] += backtracks
            counts[RESTARTS] += restarts
            counts[DONE] = done

    return start, iterations


FRICTIONLESS_KERNELS = _kernels(_frictionless_product)
FRICTIONAL_KERNELS = _kernels(_frictional_product)


@kernel
def live_contacts(diag, rows, live):
    """live (m,) <- whether a contact is not inert: A_cc != 0 without friction, the normal
    row's A_nn > 0 with it (apgd's coefficients)."""
    for c in range(cuda.grid(1), live.shape[0], cuda.gridsize(1)):
        d = diag[c * rows]
        live[c] = d != 0.0 if rows == 1 else d > 0.0


@cuda.jit(device=True, inline=True)
def _inverse_root(a, b):
    """apgd.inverse_root."""
    d = max(a, b)
    return 1.0 / math.sqrt(d) if 0.0 < d < math.inf else 1.0


@kernel
def block_scales(diag, cone, scale, scaled):
    """apgd.block_scales, contact by contact: scale (size,) and scaled = (μ', μ_roll', μ_spin')
    (m,) each, the diagonal preconditioner and the cone's coefficients in its variables. The
    coefficients are made from the scales as stored, so that with float32 storage they agree
    with the scales the iterations use (to the coefficients' own rounding)."""
    rows, mu, mu_roll, mu_spin, live = cone
    mu_s, roll_s, spin_s = scaled
    for c in range(cuda.grid(1), live.shape[0], cuda.gridsize(1)):
        k = c * rows
        mu_s[c] = mu[c]
        roll_s[c] = mu_roll[c]
        spin_s[c] = mu_spin[c]
        for j in range(k, k + rows):
            scale[j] = 1.0
        if live[c]:
            scale[k] = _inverse_root(diag[k], diag[k])
            n = scale[k]
            if rows >= 3:
                scale[k + 1] = _inverse_root(diag[k + 1], diag[k + 2])
                scale[k + 2] = scale[k + 1]
                mu_s[c] = mu[c] * n / scale[k + 1]
            if rows == 6:
                scale[k + 3] = _inverse_root(diag[k + 3], diag[k + 4])
                scale[k + 4] = scale[k + 3]
                scale[k + 5] = _inverse_root(diag[k + 5], diag[k + 5])
                roll_s[c] = mu_roll[c] * n / scale[k + 3]
                spin_s[c] = mu_spin[c] * n / scale[k + 5]
