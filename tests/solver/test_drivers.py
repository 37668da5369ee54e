"""Drivers compiled twice from one source (solver/drivers.py): one block runs the serial twin,
whose calls reach other drivers' serial twins, so no parallel region is compiled for it; more
blocks run the parallel twin; both give the same values."""
import numpy as np
from numba import prange

from solver.drivers import Driver, driver
from solver.partition import one_block, share_of


@driver(parallel=True, cache=False, nogil=True)
def doubled(x, out, parts):
    n = x.shape[0]
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        for i in range(first, last):
            out[i] = 2.0 * x[i]


@driver(cache=False, nogil=True)
def doubled_twice(x, out, parts):
    doubled(x, out, parts)
    doubled(out, out, parts)


def test_one_block_compiles_and_runs_only_serial_twins():
    x = np.arange(10.0)
    out = np.empty(10)
    doubled_twice(x, out, 1)
    assert np.array_equal(out, 4.0 * x)
    assert set(doubled._twins) == {True} and set(doubled_twice._twins) == {True}
    assert doubled_twice.serial.py_func.__globals__["doubled"] is doubled.serial
    assert not doubled.serial.targetoptions.get("parallel")


def test_more_blocks_run_the_parallel_twin_with_the_same_values():
    x = np.random.default_rng(0).normal(size=1001)
    serial, parallel = np.empty_like(x), np.empty_like(x)
    doubled_twice(x, serial, 1)
    doubled_twice(x, parallel, 3)
    assert np.array_equal(serial, parallel)
    assert doubled.parallel.targetoptions.get("parallel")
    assert doubled_twice.parallel.py_func.__globals__["doubled"] is doubled.parallel


def test_the_block_count_is_read_from_a_partition_its_ranges_or_a_count():
    one = one_block(7)
    three = (np.array([0, 2, 2, 4, 4, 7, 7]), np.zeros(3, dtype=np.int64))

    def kernel(a, partition):
        pass

    def default(a, parts=1):
        pass
    by_partition, by_default = Driver(kernel, {}), Driver(default, {})
    assert by_partition.blocks((None, one)) == 1 and by_partition.blocks((None, three)) == 3
    assert by_partition.blocks((None, three[0])) == 3 and by_partition.blocks((None, 4)) == 4
    assert by_default.blocks((None,)) == 1 and by_default.blocks((None, 2)) == 2
