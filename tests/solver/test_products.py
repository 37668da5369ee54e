"""The products with A over a partition, in parallel, are bit for bit the serial products over
the same contacts in the same order: the scatter sums a marble's terms in the serial order."""
from __future__ import annotations

import numpy as np
import pytest

from solver.coulomb import frictional_contact_velocity, frictional_impulse_velocity
from solver.partition import one_block
from solver.products import (all_finite, contact_velocity, frictional_contact_velocities,
                             frictional_velocity_change, impulse_velocity, natural_residual,
                             scan, velocity_change)
from tests.solver.blocks import packed_box, problem_of


@pytest.fixture(scope="module", params=[2, 3])
def problem(request):
    return problem_of(packed_box(5000), request.param)


@pytest.fixture(scope="module")
def frictional():
    return problem_of(packed_box(5000, mu=0.5), 2, rows=6)


def test_scatter_and_gather_are_the_serial_ones(problem):
    p = problem
    serial = one_block(p.m)
    lam = np.random.default_rng(0).uniform(0.0, 1e-3, p.m)
    plain, inline, blocked = (np.full_like(p.v_pred, np.nan) for _ in range(3))
    impulse_velocity(p.A, lam, plain)
    velocity_change(p.A, lam, inline, serial)
    velocity_change(p.A, lam, blocked, p.partition)
    assert np.any(plain != 0.0)
    assert np.array_equal(plain, inline) and np.array_equal(plain, blocked)
    one, two = np.empty(p.m), np.full(p.m, np.nan)
    contact_velocity(p.A, plain, one, serial[0])
    contact_velocity(p.A, plain, two, p.partition[0])
    assert np.array_equal(one, two)
    np.testing.assert_allclose(one, p.jacobian() @ plain.ravel(), rtol=1e-12, atol=1e-18)


@pytest.mark.parametrize("start", ["cold", "warm"])
def test_natural_residual_is_the_serial_one(problem, start):
    p = problem
    lam = np.zeros(p.m) if start == "cold" else np.random.default_rng(1).uniform(0, 1e-3, p.m)
    dv = np.empty_like(p.v_pred)
    want = natural_residual(p.A, p.rhs, lam, dv, one_block(p.m))
    got = natural_residual(p.A, p.rhs, lam, dv, p.partition)
    assert want > 0.0 and got == want
    assert want == np.abs(np.minimum(lam, p.error(lam))).max()
    lam[p.m // 2] = np.nan
    for partition in (p.partition, one_block(p.m)):
        assert natural_residual(p.A, p.rhs, lam, dv, partition) == np.inf


@pytest.mark.parametrize("blocks", ["one", "partition"])
def test_scans_see_every_group(problem, blocks):
    p = problem
    ranges = one_block(p.m)[0] if blocks == "one" else p.partition[0]
    finite, scale = scan(p.rhs, p.diag, 1, ranges)
    assert finite and scale == np.abs(p.rhs).max()
    lam = np.zeros(p.m)
    assert all_finite(lam, 1, ranges)
    for c in (0, p.m - 1):  # the first group's first contact, the last group's last one
        bad = lam.copy()
        bad[c] = np.inf
        assert not all_finite(bad, 1, ranges)
        rhs = p.rhs.copy()
        rhs[c] = np.nan
        assert scan(rhs, p.diag, 1, ranges) == (False, np.inf)


def test_frictional_products_are_the_serial_ones(frictional):
    p = frictional
    lam = np.random.default_rng(2).uniform(-1e-4, 1e-3, p.size)
    plain, inline, blocked = (np.full_like(p.V_pred, np.nan) for _ in range(3))
    frictional_impulse_velocity(p.A, lam, plain)
    frictional_velocity_change(p.A, lam, inline, one_block(p.m))
    frictional_velocity_change(p.A, lam, blocked, p.partition)
    assert np.array_equal(plain, inline) and np.array_equal(plain, blocked)
    one, two, three = np.empty(p.size), np.full(p.size, np.nan), np.full(p.size, np.nan)
    frictional_contact_velocity(p.A, plain, one)
    frictional_contact_velocities(p.A, plain, two, one_block(p.m)[0])
    frictional_contact_velocities(p.A, plain, three, p.partition[0])
    assert np.array_equal(one, two) and np.array_equal(one, three)


def test_same_bits_tells_every_difference_of_bits():
    from solver.products import same_bits

    x = np.array([1.5, 0.0, -2.0, 1e-300])
    assert same_bits(x, x.copy())
    for j, other in ((1, -0.0), (0, np.nextafter(1.5, 2.0)), (3, np.nan)):
        y = x.copy()
        y[j] = other
        assert not same_bits(x, y) and not same_bits(y, x)
    assert not same_bits(x, x[:3])
