"""Contacts in blocks: the same contacts as the serial collide, laid out in groups of which no
two of a phase share a marble, in an order fixed by the number of blocks."""
from __future__ import annotations

import numpy as np
import pytest

from solver.collide import INTERLEAVE, Collider, _deal
from solver.partition import (PHASES, assign_blocks, check, dealt_position, kept, one_block,
                              phase_offsets, share, shares)
from solver.world import container_geometry
from tests.solver.blocks import contacts_of, packed_box


@pytest.fixture(scope="module")
def box():
    return packed_box(5000)


@pytest.fixture(scope="module")
def serial(box):
    return contacts_of(box, 1)


@pytest.mark.parametrize("blocks", [2, 3, 4, 7])
def test_blocks_hold_the_serial_contacts_in_groups_that_share_no_marble(box, serial, blocks):
    c = contacts_of(box, blocks)
    assert serial.partition is None and serial.m > 1.5 * box.n  # a packed box: a real test
    assert check(c.partition, c.body_a, c.body_b) is None
    ranges, phases = c.partition
    assert ranges.shape == (2 * blocks + 1,) and phases.shape == (PHASES + 1,)
    # Every block has interior contacts, and the interfaces are few.
    assert np.all(np.diff(ranges[:blocks + 1]) > 0)
    assert ranges[-1] - ranges[blocks] < 0.2 * c.m
    s, b = np.argsort(serial.key), np.argsort(c.key)
    assert np.array_equal(serial.key[s], c.key[b])
    for name in ("body_a", "body_b", "normal", "gap"):
        assert np.array_equal(getattr(serial, name)[s], getattr(c, name)[b]), name


def test_the_layout_is_the_same_every_time(box):
    one, two = contacts_of(box, 3), contacts_of(box, 3)
    assert np.array_equal(one.key, two.key) and np.array_equal(one.partition[0],
                                                                two.partition[0])


def test_check_names_a_marble_in_two_groups_of_a_phase():
    body_a = np.array([-1, 0, 5])
    body_b = np.array([0, 1, 6])
    ranges = np.array([0, 1, 2, 3, 3], dtype=np.int64)
    phases = np.array([0, 2, 3, 3, 4], dtype=np.int64)
    assert check((ranges, phases), body_a, body_b) == "marble 0 is in groups 0 and 1 of phase 0"
    ok = (np.array([0, 2, 3, 3, 3]), phases)
    assert check(ok, body_a, body_b) is None
    assert "do not cover" in check((np.array([0, 1, 2, 2, 2]), phases), body_a, body_b)


def test_kept_contacts_keep_their_groups(box):
    c = contacts_of(box, 2)
    keep = np.arange(c.m) % 3 != 0
    ranges, phases = kept(c.partition, keep)
    assert ranges[-1] == keep.sum() and np.array_equal(phases, c.partition[1])
    assert check((ranges, phases), c.body_a[keep], c.body_b[keep]) is None
    for g in range(ranges.shape[0] - 1):  # group g keeps exactly its own kept contacts
        own = np.arange(c.partition[0][g], c.partition[0][g + 1])
        assert ranges[g + 1] - ranges[g] == keep[own].sum()
    assert kept(None, keep) is None


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 17, 100])
def test_dealt_position_is_where_the_serial_deal_puts_a_contact(size):
    ids = np.arange(size, dtype=np.int64)
    dealt = _deal((ids, ids, np.zeros((size, 3)), np.zeros(size), ids, ids), size,
                  INTERLEAVE)[0]
    where = np.array([dealt_position(u, size, INTERLEAVE) for u in range(size)], dtype=np.int64)
    assert np.array_equal(dealt[where], ids)


def test_buffers_too_small_for_a_block_grow_and_the_contacts_are_the_same(box):
    roomy = contacts_of(box, 3)
    v_pred = box.v + box.dt * box.gravity
    tight = Collider(container_geometry(box.container), capacity=8).collide(
        box.x, v_pred, box.radius, box.dt, 3)
    assert np.array_equal(tight.key, roomy.key) and np.array_equal(tight.gap, roomy.gap)
    assert np.array_equal(tight.partition[0], roomy.partition[0])


@pytest.mark.parametrize("blocks", [1, 2, 3, 5])
@pytest.mark.parametrize("sizes", [(7, 5, 1, 0), (0, 0, 0, 0), (100, 90, 3, 2)])
def test_equal_shares_cover_the_contacts_once(blocks, sizes):
    """share(ranges, t) for t < shares(ranges) = T cuts [0, m) into T consecutive pieces whose
    sizes differ by at most one, whatever the groups' sizes (the element-wise passes' split)."""
    rng = np.random.default_rng(blocks)
    groups = 2 * blocks
    counts = rng.integers(0, 1 + max(sizes), size=groups) if blocks > 1 else np.array(sizes[:2])
    ranges = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    assert shares(ranges) == blocks
    pieces = [share(ranges, t) for t in range(blocks)]
    assert pieces[0][0] == 0 and pieces[-1][1] == ranges[-1]
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    lengths = [last - first for first, last in pieces]
    assert max(lengths) - min(lengths) <= 1


@pytest.mark.parametrize("blocks", [2, 3, 5])
def test_slabs_hold_equal_marbles_in_order_along_the_axis(blocks):
    """Marbles on a 9 x 4 x 3 grid, unevenly spread over the x layers: each block holds
    n / blocks of them to one marble, and no marble of a block lies beyond (in x) one of the
    next block; a layer's marbles are split in slot order."""
    rng = np.random.default_rng(blocks)
    dims = np.array([9, 4, 3, 0], dtype=np.int64)
    weight = np.arange(9 * 4 * 3) % 9 + 1.0  # layer x holds about x + 1 shares
    cells = rng.choice(weight.size, size=500, p=weight / weight.sum())
    x_of = lambda lin: lin % 9  # noqa: E731 (the axis coordinate of a cell number)
    sorted_lin = np.sort(cells).astype(np.int64)
    n = sorted_lin.size
    block_of = np.empty(n, np.int64)
    visit = np.empty(n, np.int64)
    start = np.empty(blocks + 1, np.int64)
    assign_blocks(sorted_lin, dims, blocks, block_of, visit, start)
    sizes = np.bincount(block_of, minlength=blocks)
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == n
    assert np.array_equal(start, np.concatenate([[0], np.cumsum(sizes)]))
    for k in range(blocks):
        mine = np.flatnonzero(block_of == k)
        assert np.array_equal(visit[start[k]:start[k + 1]], mine)  # in slot order
        if k + 1 < blocks:
            assert x_of(sorted_lin[mine]).max() <= x_of(sorted_lin[block_of == k + 1]).min()
    # Ranks: along x, then slot order within a layer.
    rank = np.lexsort((np.arange(n), x_of(sorted_lin)))
    assert np.array_equal(block_of[rank], np.arange(n) * blocks // n)


@pytest.mark.parametrize("m", [0, 1, 7])
def test_one_block_is_every_contact_in_block_zeros_interior(m):
    """A serial problem's partition: block 0's interior holds every contact in order, every
    other group is empty, and an element-wise pass splits it into one share."""
    ranges, phases = one_block(m)
    assert np.array_equal(phases, phase_offsets(1)) and phases.dtype == phase_offsets(1).dtype
    assert shares(ranges) == 1 and share(ranges, 0) == (0, m)
    assert ranges[phases[1]] == m and ranges.tolist()[-1] == m
    body = np.arange(m, dtype=np.int64)
    assert check((ranges, phases), body - 1, body) is None
