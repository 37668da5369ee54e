"""The kernel count behind the compile progress: every kernel Numba compiles is counted, the time
left is estimated from the rate so far, and the expected counts come from the measured table."""
from __future__ import annotations

import numpy as np
from numba import njit

from solver import compile_count
from solver.compile_count import KernelCount, expected, plan_key
from solver.methods import registry


def test_each_kernel_compiled_is_counted_with_an_estimate_of_the_time_left():
    @njit  # a new function: compiled here, never from the cache
    def twice(x):
        return 2 * x

    told = []
    with KernelCount(4, lambda done, total, left: told.append((done, total, left))):
        twice(1)
        twice(1.0)
        twice(np.int8(1))
        twice(1)  # compiled already: not counted
    assert [t[:2] for t in told] == [(1, 4), (2, 4), (3, 4)]
    assert all(left is not None and left >= 0 for _, _, left in told)
    twice(np.float32(2.0))  # after the block: no longer counted
    assert len(told) == 3


def test_without_an_expected_count_no_time_left():
    @njit
    def plus(x):
        return x + 1

    told = []
    with KernelCount(None, lambda *a: told.append(a)):
        plus(1)
    assert told == [(1, None, None)]


def test_expected_counts_come_from_the_measured_table(monkeypatch):
    monkeypatch.setattr(compile_count, "measured", lambda: {"pgs 3 serial": 70,
                                                            "jacobi 3 serial": 60})
    assert plan_key("pgs", 3, 1) == "pgs 3 serial" and plan_key("pgs", 1, 4) == "pgs 1 blocks"
    assert expected(["pgs"], (3,), 1) == 70
    assert expected(["pgs", "jacobi"], (3,), 1) == 70  # shared kernels: the largest plan
    assert expected(["pgs"], (6,), 1) is None and expected(["pgs"], (3,), 2) is None


def test_the_table_covers_every_solver_serially():
    """The window's first compile of any solver on any of its problems shows a count."""
    table = compile_count.measured()
    for name in registry.METHODS:
        for rows in ((1, 3, 6) if registry.get(name).friction else (1,)):
            assert table.get(plan_key(name, rows, 1), 0) > 0, plan_key(name, rows, 1)


def test_the_process_tally_counts_every_compilation_and_no_cached_call():
    @njit
    def thrice(x):
        return 3 * x

    before = compile_count.compiled()
    thrice(1)
    thrice(1)  # compiled already
    assert compile_count.compiled() == before + 1
    thrice(1.0)
    assert compile_count.compiled() == before + 2
