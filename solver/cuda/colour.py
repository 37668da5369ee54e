"""The contact colouring on the GPU (solver/colouring.py's rule, its `choose` compiled for the
device), and the contacts sorted by colour, in one cooperative launch.

A round is two passes of the grid: every uncoloured contact decides from the colours before the
round (into `fresh`), then the decisions are written; so the colours are the CPU's whatever the
grid. The count of contacts still uncoloured goes to one of three integer slots in turn (integer
atomics: the same total every run), so a slot is zeroed two rounds after it was last read.
Within a colour the contacts land in any order (integer atomics again); a colour's updates touch
disjoint marbles, so the order changes no result.
"""
from __future__ import annotations

from ..colouring import choose
from .launch import kernel
from .runtime import cuda

# tally's slots: three round counters, the number of colours
COLOURS = 3
TALLY = 4

_choose = cuda.jit(device=True)(choose)


@kernel
def colour_contacts(ends, graph, colour, fresh, sorted_out, tally):
    """colour (m,) int64 <- each contact's colour; sorted_out = (order (m,) the contacts by
    colour, bins (m + 1,) where colour k's contacts start in order (bins[K] = m), fill (m,)
    scratch); tally (TALLY,) int64, tally[COLOURS] <- K. ends = (body_a, body_b) in slots;
    graph = (start, items): the CSR of contacts by marble; fresh (m,) int64 scratch."""
    grid = cuda.cg.this_grid()
    order, bins, fill = sorted_out
    m = colour.shape[0]
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for c in range(first, m, stride):
        colour[c] = -1
    if first == 0:
        for k in range(TALLY):
            tally[k] = 0
    grid.sync()
    r = 0
    while True:
        slot = r % 3
        if first == 0:
            tally[(r + 1) % 3] = 0
        for c in range(first, m, stride):
            if colour[c] < 0:
                k = _choose(c, ends, graph, colour)
                fresh[c] = k
                if k < 0:
                    cuda.atomic.add(tally, slot, 1)
                else:
                    cuda.atomic.max(tally, COLOURS, k + 1)
        grid.sync()
        for c in range(first, m, stride):
            if colour[c] < 0:
                colour[c] = fresh[c]
        grid.sync()
        if tally[slot] == 0:
            break
        r += 1
    colours = tally[COLOURS]
    for k in range(first, colours + 1, stride):
        bins[k] = 0
    grid.sync()
    for c in range(first, m, stride):
        cuda.atomic.add(bins, colour[c] + 1, 1)
    grid.sync()
    if first == 0:
        for k in range(colours):
            bins[k + 1] += bins[k]
    grid.sync()
    for k in range(first, colours, stride):
        fill[k] = bins[k]
    grid.sync()
    for c in range(first, m, stride):
        order[cuda.atomic.add(fill, colour[c], 1)] = c
