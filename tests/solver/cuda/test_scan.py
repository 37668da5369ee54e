"""The grid-wide prefix sum and the block extremes of the cooperative kernels
(solver/cuda/scan.py) against numpy."""
import numpy as np
import pytest

from solver.cuda.runtime import THREADS, cuda, simulated
from solver.cuda.scan import block_extreme, exclusive_scan


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


@cuda.jit
def _extremes(values, out):
    shared = cuda.shared.array(THREADS, np.float64)
    low = block_extreme(shared, values[cuda.threadIdx.x], True)
    high = block_extreme(shared, values[cuda.threadIdx.x], False)
    if cuda.threadIdx.x == 0:
        out[0] = low
        out[1] = high


@pytest.mark.parametrize("inf_at", [None, 0, 1, THREADS - 1])
def test_the_block_extremes_are_numpys(inf_at):
    values = np.random.default_rng(5).normal(size=THREADS)
    if inf_at is not None:
        values[inf_at] = np.inf
    out = cuda.to_device(np.zeros(2))
    _extremes[1, THREADS](cuda.to_device(values), out)
    assert tuple(out.copy_to_host()) == (values.min(), values.max())
