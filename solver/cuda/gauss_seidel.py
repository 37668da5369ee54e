"""Projected Gauss-Seidel by colours on the GPU (solver/methods/coloured_gs.py): the contacts
sorted by colour (solver/cuda/colour.py), a sweep one pass of the grid per colour. A colour's
contacts share no marble, so each update reads and writes its own two marbles' velocity changes
only: no atomics, and every contact sees the velocities the serial sweep in colour order
would, so the iterates are the CPU's.

The velocities are kept as dv = M^-1 J^T λ (the predicted velocities are in b = J v* + gap/h),
as the Jacobi kernels keep them (solver/cuda/jacobi.py); a launch computes dv from λ first,
then sweeps. With friction each contact's update is pgs's cone law (solver/methods/sweeps.py's
sweep_contact): the normal by its projected step, the tangents by one step from the velocities
before it (a normal impulse does not change them) onto the disk μ λ_n, then the rolling rows
from the velocities after it.
"""
from __future__ import annotations

from .colour import COLOURS
from .coulomb import project_disk
from .jacobi import (MEASURES, _frictional_measure, _frictional_velocity_change, _keep, _measure,
                     _normal_velocity, _velocity_change)
from .launch import kernel
from .runtime import cuda


@cuda.jit(device=True)
def _contact(c, A, system, lam, dv):
    """Contact c's projected step without friction: λ_c <- max(0, λ_c - s_c e_c), e_c = (J dv)_c
    + b_c, the change applied to both marbles' dv; system = (rhs, step) (m,) each."""
    body_a, body_b, normal, inv_mass = A
    rhs, step = system
    s = step[c]
    if s == 0.0:  # an inert row (both ends fixed): it keeps its start impulse
        return
    e = _normal_velocity(A, dv, c) + rhs[c]
    old = lam[c]
    new = old - s * e
    if new < 0.0:
        new = 0.0
    lam[c] = new
    delta = new - old
    b = body_b[c]
    t = inv_mass[b] * delta
    dv[b, 0] += t * normal[c, 0]
    dv[b, 1] += t * normal[c, 1]
    dv[b, 2] += t * normal[c, 2]
    a = body_a[c]
    if a >= 0:
        t = inv_mass[a] * delta
        dv[a, 0] -= t * normal[c, 0]
        dv[a, 1] -= t * normal[c, 1]
        dv[a, 2] -= t * normal[c, 2]


@cuda.jit(device=True)
def _push(dV, i, w, lin, s, ang):
    """Marble i: dv += w lin, dω += s ang (3-tuples; w, s its inverse mass and inertia with
    their signs)."""
    dV[i, 0] += w * lin[0]
    dV[i, 1] += w * lin[1]
    dV[i, 2] += w * lin[2]
    dV[i, 3] += s * ang[0]
    dV[i, 4] += s * ang[1]
    dV[i, 5] += s * ang[2]


@cuda.jit(device=True)
def _rolling(c, k, A, system, laws, lam, dV):
    """Contact c's rolling pair onto the disk μ_roll λ_n and its spin row into ±μ_spin λ_n,
    one step each (the step of row k + 3) from the relative angular velocity."""
    body_a, body_b, normal, t1, t2 = A[0], A[1], A[2], A[3], A[4]
    inv_inertia = A[8]
    rhs, step = system
    a = body_a[c]
    b = body_b[c]
    w0 = dV[b, 3]
    w1 = dV[b, 4]
    w2 = dV[b, 5]
    if a >= 0:
        w0 -= dV[a, 3]
        w1 -= dV[a, 4]
        w2 -= dV[a, 5]
    s_r = step[k + 3]
    ln = lam[k]
    o1 = lam[k + 3]
    o2 = lam[k + 4]
    os = lam[k + 5]
    r1, r2 = project_disk(
        o1 - s_r * (t1[c, 0] * w0 + t1[c, 1] * w1 + t1[c, 2] * w2 + rhs[k + 3]),
        o2 - s_r * (t2[c, 0] * w0 + t2[c, 1] * w1 + t2[c, 2] * w2 + rhs[k + 4]),
        laws[1][c] * ln)
    bound = laws[2][c] * ln
    rs = os - s_r * (normal[c, 0] * w0 + normal[c, 1] * w1 + normal[c, 2] * w2 + rhs[k + 5])
    rs = min(max(rs, -bound), bound)
    lam[k + 3] = r1
    lam[k + 4] = r2
    lam[k + 5] = rs
    d1 = r1 - o1
    d2 = r2 - o2
    ds = rs - os
    q = (d1 * t1[c, 0] + d2 * t2[c, 0] + ds * normal[c, 0],
         d1 * t1[c, 1] + d2 * t2[c, 1] + ds * normal[c, 1],
         d1 * t1[c, 2] + d2 * t2[c, 2] + ds * normal[c, 2])
    none = (0.0, 0.0, 0.0)
    _push(dV, b, 0.0, none, inv_inertia[b], q)
    if a >= 0:
        _push(dV, a, 0.0, none, -inv_inertia[a], q)


# long: one contact's three sliding rows with the marbles' velocities loaded once and the
# impulse applied once, as the CPU's sweep_contact.
@cuda.jit(device=True)
def _frictional_contact(c, A, system, laws, lam, dV):
    """Contact c's cone-law update (module docstring); system = (rhs, step) (m * rows,)."""
    body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass, inv_inertia, rows = A
    rhs, step = system
    k = c * rows
    s_n = step[k]
    if s_n == 0.0:
        return
    a = body_a[c]
    b = body_b[c]
    rb = arm_b[c]
    dv0 = dV[b, 0]
    dv1 = dV[b, 1]
    dv2 = dV[b, 2]
    s0 = rb * dV[b, 3]
    s1 = rb * dV[b, 4]
    s2 = rb * dV[b, 5]
    ra = 0.0
    if a >= 0:
        ra = arm_a[c]
        dv0 -= dV[a, 0]
        dv1 -= dV[a, 1]
        dv2 -= dV[a, 2]
        s0 += ra * dV[a, 3]
        s1 += ra * dV[a, 4]
        s2 += ra * dV[a, 5]
    e = normal[c, 0] * dv0 + normal[c, 1] * dv1 + normal[c, 2] * dv2 + rhs[k]
    u1 = (t1[c, 0] * dv0 + t1[c, 1] * dv1 + t1[c, 2] * dv2
          - (t2[c, 0] * s0 + t2[c, 1] * s1 + t2[c, 2] * s2)) + rhs[k + 1]
    u2 = (t2[c, 0] * dv0 + t2[c, 1] * dv1 + t2[c, 2] * dv2
          + (t1[c, 0] * s0 + t1[c, 1] * s1 + t1[c, 2] * s2)) + rhs[k + 2]
    old = lam[k]
    o1 = lam[k + 1]
    o2 = lam[k + 2]
    new = old - s_n * e
    new = new if new > 0.0 else 0.0
    l1, l2 = project_disk(o1 - step[k + 1] * u1, o2 - step[k + 1] * u2, laws[0][c] * new)
    lam[k] = new
    lam[k + 1] = l1
    lam[k + 2] = l2
    dn = new - old
    d1 = l1 - o1
    d2 = l2 - o2
    p = (dn * normal[c, 0] + d1 * t1[c, 0] + d2 * t2[c, 0],
         dn * normal[c, 1] + d1 * t1[c, 1] + d2 * t2[c, 1],
         dn * normal[c, 2] + d1 * t1[c, 2] + d2 * t2[c, 2])
    g = (d1 * t2[c, 0] - d2 * t1[c, 0], d1 * t2[c, 1] - d2 * t1[c, 1],
         d1 * t2[c, 2] - d2 * t1[c, 2])
    _push(dV, b, inv_mass[b], p, -rb * inv_inertia[b], g)
    if a >= 0:
        _push(dV, a, -inv_mass[a], p, -ra * inv_inertia[a], g)
    if rows == 6:
        _rolling(c, k, A, system, laws, lam, dV)


@cuda.jit(device=True)
def _sweeps(A, system, lam, colours, dv, count, grid):
    """`count` sweeps colour by colour without friction, in place; colours = (order, bins,
    tally) (solver/cuda/colour.py's)."""
    order, bins, tally = colours
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for _ in range(count):
        for k in range(tally[COLOURS]):
            for i in range(bins[k] + first, bins[k + 1], stride):
                _contact(order[i], A, system, lam, dv)
            grid.sync()


@cuda.jit(device=True)
def _frictional_sweeps(A, system, laws, lam, colours, dV, count, grid):
    """_sweeps with friction."""
    order, bins, tally = colours
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for _ in range(count):
        for k in range(tally[COLOURS]):
            for i in range(bins[k] + first, bins[k + 1], stride):
                _frictional_contact(order[i], A, system, laws, lam, dV)
            grid.sync()


@kernel
def sweeps(A, system, lam, csr, colours, dv, count):
    """`count` Gauss-Seidel sweeps by colour without friction, in place, after dv (n, 3) <-
    M^-1 J^T λ; system = (rhs, step) (m,) each, step 1 / A_cc (0 for an inert row)."""
    grid = cuda.cg.this_grid()
    for s in range(cuda.grid(1), dv.shape[0], cuda.gridsize(1)):
        _velocity_change(s, A, lam, csr, dv)
    grid.sync()
    _sweeps(A, system, lam, colours, dv, count, grid)


@kernel
def frictional_sweeps(A, system, laws, lam, csr, colours, dV, count):
    """`count` frictional sweeps by colour in place, after dV (n, 6) <- M^-1 J^T λ; system =
    (rhs, step) (m * rows,) each; laws = (mu, mu_roll, mu_spin)."""
    grid = cuda.cg.this_grid()
    for s in range(cuda.grid(1), dV.shape[0], cuda.gridsize(1)):
        _frictional_velocity_change(s, A, lam, csr, dV)
    grid.sync()
    _frictional_sweeps(A, system, laws, lam, colours, dV, count, grid)


@kernel
def solve(A, system, lam, csr, colours, work, count, readings):
    """A whole solve without friction in one launch, as jacobi.solve: λ kept in start, its
    readings, `count` sweeps (from the dv the first reading leaves), the readings of the
    result. system = (rhs, step, diag); work = (dv, start, partial)."""
    grid = cuda.cg.this_grid()
    dv, start, partial = work
    measured = (system[0], system[2])
    _keep(lam, start)
    _measure(A, measured, lam, csr, dv, partial, readings[:MEASURES], grid)
    _sweeps(A, (system[0], system[1]), lam, colours, dv, count, grid)
    _measure(A, measured, lam, csr, dv, partial, readings[MEASURES:], grid)


@kernel
def frictional_solve(A, system, laws, lam, csr, colours, scratch, work, count):
    """A whole frictional solve in one launch, as `solve`: scratch = (dV, e), work = (start,
    partial, readings)."""
    grid = cuda.cg.this_grid()
    start, partial, readings = work
    measured = (system[0], system[2])
    _keep(lam, start)
    _frictional_measure(A, measured, laws, lam, csr, scratch, (partial, readings[:MEASURES]), grid)
    _frictional_sweeps(A, (system[0], system[1]), laws, lam, colours, scratch[0], count, grid)
    _frictional_measure(A, measured, laws, lam, csr, scratch, (partial, readings[MEASURES:]), grid)
