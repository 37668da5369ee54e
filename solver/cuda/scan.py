"""Grid-wide building blocks of the cooperative kernels: sums and maxima over every thread's
items, and an exclusive prefix sum, each ending with the whole grid synchronised.

Every kernel of the cuda backend loops over its items with the grid's stride, so it computes
the same for any grid. A block reduces its threads' values in shared memory in a fixed tree,
block 0 reduces the blocks' values in block order: the same sum for the same grid, every run
(no floating-point atomics anywhere).
"""
from __future__ import annotations

from .runtime import THREADS, cuda


@cuda.jit(device=True, inline=True)
def block_sum(shared, value):
    """The sum of `value` over the block's threads (shared: THREADS scratch), read by every
    thread after the call: exact for integers, and for floats the same fixed tree every run."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            shared[tid] += shared[tid + step]
        cuda.syncthreads()
        step //= 2
    total = shared[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def block_extreme(shared, value, lowest):
    """The smallest (`lowest`) or the largest `value` over the block's threads (float64 or
    int64, as `shared`), read by every thread after the call. A NaN is not ordered: the
    largest keeps one only where the tree meets it as the other value, so a caller that must
    see it maps it to inf first (as the Jacobi measure does)."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            other = shared[tid + step]
            if other < shared[tid] if lowest else not other <= shared[tid]:
                shared[tid] = other
        cuda.syncthreads()
        step //= 2
    out = shared[0]
    cuda.syncthreads()
    return out


@cuda.jit(device=True, inline=True)
def block_inclusive(shared, value):
    """The inclusive prefix sum of `value` over the block's threads in thread order
    (Hillis-Steele in shared memory); integer values."""
    tid = cuda.threadIdx.x
    shared[tid] = value
    cuda.syncthreads()
    step = 1
    while step < THREADS:
        add = shared[tid - step] if tid >= step else 0
        cuda.syncthreads()
        shared[tid] += add
        cuda.syncthreads()
        step *= 2
    total = shared[tid]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def exclusive_scan(values, count, out, partial, shared, grid):
    """out[:count] <- the exclusive prefix sums of values[:count] (int64) and returns the total;
    values and out may be the same array. partial (blocks + 1,) int64 scratch. Each block
    takes one contiguous share of the items in tiles of THREADS, so reads are coalesced."""
    blocks = cuda.gridDim.x
    block = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    share = (count + blocks - 1) // blocks
    first = min(block * share, count)
    last = min(first + share, count)
    mine = 0
    for start in range(first, last, THREADS):
        i = start + tid
        mine += values[i] if i < last else 0
    total = block_sum(shared, mine)
    if tid == 0:
        partial[block] = total
    grid.sync()
    if block == 0:
        # The blocks' totals, scanned by block 0 in tiles of THREADS.
        carry = 0
        for start in range(0, blocks, THREADS):
            i = start + tid
            v = partial[i] if i < blocks else 0
            inclusive = block_inclusive(shared, v)
            if i < blocks:
                partial[i] = carry + inclusive - v
            carry += block_sum(shared, v)
        if tid == 0:
            partial[blocks] = carry
    grid.sync()
    offset = partial[block]
    for start in range(first, last, THREADS):
        i = start + tid
        v = values[i] if i < last else 0
        inclusive = block_inclusive(shared, v)
        if i < last:
            out[i] = offset + inclusive - v
        offset += block_sum(shared, v)
    result = partial[blocks]
    grid.sync()
    return result

