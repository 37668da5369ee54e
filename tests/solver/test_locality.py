"""Solving in the grid's numbering changes where marbles sit in memory, never a bit of a run;
the problem a caller reads is in the world's numbering."""
from __future__ import annotations

import numpy as np
import pytest

import scenes
from solver import locality
from solver.locality import gathered, relabel, scatter_into, scattered, wanted
from solver.methods import registry
from solver.step import Simulation

N = 4500


def test_relabel_maps_marbles_through_the_order_and_keeps_walls():
    order = np.array([3, 0, 2, 1], dtype=np.int64)  # slot s holds marble order[s]
    a, b = relabel(order, np.array([-1, 3, 0]), np.array([2, 1, 3]))
    assert a.tolist() == [-1, 0, 1] and b.tolist() == [2, 3, 0]
    local = np.array([[0.0], [1.0], [2.0], [3.0]])
    assert scattered(local, order)[:, 0].tolist() == [1.0, 3.0, 2.0, 0.0]


def _run(mu: float, threads: int, renumber: bool, monkeypatch, steps: int = 30):
    with monkeypatch.context() as patch:
        if renumber:
            patch.setattr(locality, "MIN_MARBLES", 1000)  # the serial step renumbers too
        else:
            patch.setattr(locality, "wanted", lambda n, blocks=1: False)
        world = scenes.build("box", {"n": N, "mu": mu})
        sim = Simulation(world, registry.settings("pgs", 20), 1.0 if mu else 0.0,
                         threads=threads)
        for k in range(steps):
            sim.step(trace=k == steps - 1)
        assert (sim._order is not None) == renumber
    return world, sim


def test_large_steps_and_steps_in_blocks_renumber():
    assert not wanted(N) and wanted(N, 2) and wanted(locality.MIN_MARBLES)


@pytest.mark.parametrize("mu, threads", [(0.0, 1), (0.0, 2), (0.5, 1), (0.5, 2)])
def test_a_renumbered_run_is_bit_for_bit_the_plain_one(mu, threads, monkeypatch):
    (w1, s1), (w2, s2) = (_run(mu, threads, r, monkeypatch) for r in (False, True))
    assert s1.problem.m > N // 2
    for name in ("x", "v", "omega", "orientation"):
        assert np.array_equal(getattr(w1, name), getattr(w2, name)), name
    assert np.array_equal(s1.lam, s2.lam)
    # What a caller reads is in the world's numbering: the plain run's problem exactly.
    p1, p2 = s1.problem, s2.problem
    assert not np.array_equal(s2._problem.body_b, p2.body_b)  # it was renumbered
    fields = ["body_a", "body_b", "normal", "gap", "inv_mass", "diag", "rhs", "key"]
    fields += ["radius", "V_pred", "t1", "arm_a"] if mu else ["v_pred"]
    for name in fields:
        assert np.array_equal(getattr(p1, name), getattr(p2, name)), name
    assert s2.problem is p2  # made once per step
    if threads > 1:
        # Numbered block by block: block 0's interior contacts join only marbles numbered
        # before any of block 1's.
        ranges = s2._problem.partition[0]
        a, b = s2._problem.body_a, s2._problem.body_b
        first = np.concatenate([a[:ranges[1]], b[:ranges[1]]])
        second = np.concatenate([a[ranges[1]:ranges[2]], b[ranges[1]:ranges[2]]])
        assert first.max() < second[second >= 0].min()


@pytest.mark.parametrize("shape", [(1000,), (1000, 3), (1000, 6)])
def test_the_copies_into_and_out_of_the_grid_numbering_are_numpys(shape):
    rng = np.random.default_rng(len(shape))
    a = rng.normal(size=shape)
    order = rng.permutation(shape[0])
    assert np.array_equal(gathered(a, order), a[order])
    back = np.empty_like(a)
    back[order] = a
    assert np.array_equal(scattered(a, order), back)
    target = rng.normal(size=shape)
    want = target.copy()
    want[order] = a
    scatter_into(target, order, a)
    assert np.array_equal(target, want)
    strided = rng.normal(size=(shape[0], 8))[:, :3]  # not C-ordered: numpy's own assignment
    want = strided.copy()
    want[order] = a.reshape(shape[0], -1)[:, :1]
    scatter_into(strided, order, a.reshape(shape[0], -1)[:, :1])
    assert np.array_equal(strided, want)
