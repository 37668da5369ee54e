"""The contact colouring: proper (no two contacts of a colour share a marble), Jones and
Plassmann's rule as a plain reference computes it, and few colours on a pile."""
import numpy as np
import pytest

import scenes
from solver.colouring import colour_contacts, colour_order
from solver.methods import registry
from solver.step import Simulation


def reference_colouring(body_a, body_b):
    """The rule of solver/colouring.py written plainly with sets: each round, every uncoloured
    contact that outranks its uncoloured neighbours takes the smallest colour its neighbours
    lack; the round's choices are written together."""
    m = len(body_a)

    def priority(c):
        h = (c * 1103515245 + 12345) & 0x7FFFFFFF
        h ^= h >> 13
        return ((h * 1664525 + 1013904223) & 0x7FFFFFFF, c)

    def marbles(c):
        return {int(body_b[c])} | ({int(body_a[c])} if body_a[c] >= 0 else set())

    neighbours = [{d for d in range(m) if d != c and marbles(c) & marbles(d)} for c in range(m)]
    colour = [-1] * m
    while -1 in colour:
        chosen = {}
        for c in range(m):
            if colour[c] < 0 and all(colour[d] >= 0 or priority(d) < priority(c)
                                     for d in neighbours[c]):
                used = {colour[d] for d in neighbours[c]}
                chosen[c] = min(k for k in range(m + 1) if k not in used)
        for c, k in chosen.items():
            colour[c] = k
    return np.array(colour)


def proper(colour, body_a, body_b) -> bool:
    for k in range(colour.max() + 1):
        these = np.flatnonzero(colour == k)
        ends = np.concatenate([body_a[these][body_a[these] >= 0], body_b[these]])
        if len(ends) != len(np.unique(ends)):
            return False
    return True


@pytest.mark.parametrize("seed", range(8))
def test_the_colouring_is_the_reference_rule(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    m = int(rng.integers(1, 40))
    body_b = rng.integers(0, n, m)
    body_a = rng.integers(-1, n, m)
    body_a = np.where(body_a == body_b, -1, body_a)
    colour, rounds = colour_contacts(body_a, body_b, n)
    assert np.array_equal(colour, reference_colouring(body_a, body_b))
    assert proper(colour, body_a, body_b) and 1 <= rounds <= m


def test_a_pile_needs_few_colours_and_sorts_by_colour():
    """The settled box: a proper colouring with no more colours than a contact's neighbours
    plus one (first fit), and the sorted order lists each colour's contacts in index order."""
    sim = Simulation(scenes.build("box", {"n": 200}), registry.settings("pgs", 20, False))
    for _ in range(40):
        sim.step()
    p = sim.problem
    colour, _ = colour_contacts(p.body_a, p.body_b, p.n)
    assert proper(colour, p.body_a, p.body_b)
    per_marble = np.bincount(np.concatenate([p.body_a[p.body_a >= 0], p.body_b]))
    assert colour.max() + 1 <= 2 * (per_marble.max() - 1) + 1
    order, bins = colour_order(colour)
    assert bins[-1] == p.m and np.array_equal(np.sort(order), np.arange(p.m))
    for k in range(len(bins) - 1):
        these = order[bins[k]:bins[k + 1]]
        assert np.all(colour[these] == k) and np.all(np.diff(these) > 0)


def test_no_contacts_no_colours():
    colour, rounds = colour_contacts(np.zeros(0, np.int64), np.zeros(0, np.int64), 3)
    assert colour.shape == (0,) and rounds == 0
    order, bins = colour_order(colour)
    assert order.shape == (0,) and np.array_equal(bins, [0])


def test_an_explicit_w_is_coloured_by_its_coupling_as_the_marbles_colour_it():
    """W = J M^-1 Jᵀ couples exactly the contacts that share a (free) marble, so the colouring
    of the file's W is the colouring of the marbles' contacts."""
    from solver.explicit import MatrixProblem
    from solver.colouring import colour_coupled
    sim = Simulation(scenes.build("bowl", {"n": 40, "mu": 0.5}), registry.settings("pgs", 20,
                                                                                   False))
    for _ in range(30):
        sim.step()
    p = sim.problem
    W = MatrixProblem.from_problem(p)
    got, _ = colour_coupled(W.indptr, W.indices, W.m)
    want, _ = colour_contacts(p.body_a, p.body_b, p.n)
    assert p.m > 20 and np.array_equal(got, want)
