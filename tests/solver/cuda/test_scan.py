"""The grid-wide prefix sum of the cooperative kernels (solver/cuda/scan.py) against numpy."""
import numpy as np
import pytest

from solver.cuda.runtime import THREADS, cuda, simulated
from solver.cuda.scan import exclusive_scan


@cuda.jit
def _scan(values, count, out, partial, total):
    shared = cuda.shared.array(THREADS, np.int64)
    result = exclusive_scan(values, count, out, partial, shared, cuda.cg.this_grid())
    if cuda.grid(1) == 0:
        total[0] = result


@pytest.mark.parametrize("count", [0, 1, THREADS - 1, THREADS + 3, 5 * THREADS + 2])
def test_the_exclusive_scan_is_numpys_cumulative_sum(count):
    """In place over the first `count` items (the rest untouched), and the total returned."""
    values = np.random.default_rng(count).integers(0, 9, size=count + 4).astype(np.int64)
    blocks = 1 if simulated() else 3
    d = cuda.to_device(values)
    partial = cuda.to_device(np.zeros(blocks + 1, dtype=np.int64))
    total = cuda.to_device(np.zeros(1, dtype=np.int64))
    _scan[blocks, THREADS](d, count, d, partial, total)
    got = d.copy_to_host()
    want = np.concatenate(([0], np.cumsum(values[:count])[:-1])) if count else values[:0]
    np.testing.assert_array_equal(got[:count], want)
    np.testing.assert_array_equal(got[count:], values[count:])
    assert total.copy_to_host()[0] == values[:count].sum()
