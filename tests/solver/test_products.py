"""The products with A over a partition, in parallel, are bit for bit the serial products over
the same contacts in the same order: the scatter sums a marble's terms in the serial order."""
from __future__ import annotations

import numpy as np
import pytest

from solver.coulomb import frictional_contact_velocity, frictional_impulse_velocity
from solver.problem import contact_velocity, impulse_velocity, natural_residual
from solver.products import (blocked_contact_velocity, blocked_finite,
                             blocked_frictional_contact_velocity,
                             blocked_frictional_impulse_velocity, blocked_impulse_velocity,
                             blocked_natural_residual, blocked_scan, serial_partition)
from tests.solver.blocks import packed_box, problem_of


@pytest.fixture(scope="module", params=[2, 3])
def problem(request):
    return problem_of(packed_box(5000), request.param)


@pytest.fixture(scope="module")
def frictional():
    return problem_of(packed_box(5000, mu=0.5), 2, rows=6)


def test_scatter_and_gather_are_the_serial_ones(problem):
    p = problem
    lam = np.random.default_rng(0).uniform(0.0, 1e-3, p.m)
    serial, blocked = np.empty_like(p.v_pred), np.full_like(p.v_pred, np.nan)
    impulse_velocity(p.body_a, p.body_b, p.normal, p.inv_mass, lam, serial)
    blocked_impulse_velocity(p.body_a, p.body_b, p.normal, p.inv_mass, lam, blocked,
                             *p.partition)
    assert np.any(serial != 0.0) and np.array_equal(serial, blocked)
    one, two = np.empty(p.m), np.full(p.m, np.nan)
    contact_velocity(p.body_a, p.body_b, p.normal, serial, one)
    blocked_contact_velocity(p.body_a, p.body_b, p.normal, serial, two, p.partition[0])
    assert np.array_equal(one, two)


@pytest.mark.parametrize("start", ["cold", "warm"])
def test_natural_residual_is_the_serial_one(problem, start):
    p = problem
    lam = np.zeros(p.m) if start == "cold" else np.random.default_rng(1).uniform(0, 1e-3, p.m)
    dv = np.empty_like(p.v_pred)
    want = natural_residual(p.body_a, p.body_b, p.normal, p.inv_mass, p.rhs, lam, dv)
    got = blocked_natural_residual(p.body_a, p.body_b, p.normal, p.inv_mass, p.rhs, lam, dv,
                                   *p.partition)
    assert want > 0.0 and got == want
    lam[p.m // 2] = np.nan
    assert blocked_natural_residual(p.body_a, p.body_b, p.normal, p.inv_mass, p.rhs, lam, dv,
                                    *p.partition) == np.inf


def test_scans_see_every_group(problem):
    p = problem
    ranges = p.partition[0]
    finite, scale = blocked_scan(p.rhs, p.diag, 1, ranges)
    assert finite and scale == np.abs(p.rhs).max()
    lam = np.zeros(p.m)
    assert blocked_finite(lam, 1, ranges)
    for c in (0, p.m - 1):  # the first group's first contact, the last group's last one
        bad = lam.copy()
        bad[c] = np.inf
        assert not blocked_finite(bad, 1, ranges)
        rhs = p.rhs.copy()
        rhs[c] = np.nan
        assert blocked_scan(rhs, p.diag, 1, ranges) == (False, np.inf)


def test_frictional_products_are_the_serial_ones(frictional):
    p = frictional
    lam = np.random.default_rng(2).uniform(-1e-4, 1e-3, p.size)
    serial, blocked = np.empty_like(p.V_pred), np.full_like(p.V_pred, np.nan)
    args = (p.body_a, p.body_b, p.normal, p.t1, p.t2, p.arm_a, p.arm_b)
    frictional_impulse_velocity(*args, p.inv_mass, p.inv_inertia, lam, p.rows, serial)
    blocked_frictional_impulse_velocity(*args, p.inv_mass, p.inv_inertia, lam, p.rows, blocked,
                                        *p.partition)
    assert np.array_equal(serial, blocked)
    one, two = np.empty(p.size), np.full(p.size, np.nan)
    frictional_contact_velocity(*args, serial, p.rows, one)
    blocked_frictional_contact_velocity(*args, serial, p.rows, two, p.partition[0])
    assert np.array_equal(one, two)


def test_a_serial_partition_is_one_group_of_every_contact():
    ranges, phases = serial_partition(7)
    assert ranges.tolist() == [0, 7] and phases.tolist() == [0, 1]


def test_same_bits_tells_every_difference_of_bits():
    from solver.products import same_bits

    x = np.array([1.5, 0.0, -2.0, 1e-300])
    assert same_bits(x, x.copy())
    for j, other in ((1, -0.0), (0, np.nextafter(1.5, 2.0)), (3, np.nan)):
        y = x.copy()
        y[j] = other
        assert not same_bits(x, y) and not same_bits(y, x)
    assert not same_bits(x, x[:3])
