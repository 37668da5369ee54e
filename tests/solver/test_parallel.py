"""The thread count: a fixed count repeats a run bit for bit, one thread (and any count on a
small pile) is the serial core, and a step in blocks moves the world as the serial one does."""
from __future__ import annotations

import os
from dataclasses import replace

import numba
import numpy as np
import pytest

import scenes
from solver.methods import registry
import solver.parallel as parallel
from solver.parallel import MIN_MARBLES, THREADS, CoreShare, activate, blocks_for
from solver.step import Simulation, max_penetration
from tests.solver.blocks import packed_box, problem_of

STEPS = 40


def _run(scene: str, overrides: dict, threads: int, steps: int = STEPS):
    world = scenes.build(scene, overrides)
    frictional = world.frictional
    sim = Simulation(world, registry.settings("pgs", 20), 1.0 if frictional else 0.0,
                     threads=threads)
    for _ in range(steps):
        sim.step()
    return world, sim


def test_blocks_only_with_threads_and_a_large_enough_pile():
    assert blocks_for(10 ** 6, 1) == 1
    assert blocks_for(MIN_MARBLES - 1, 4) == 1
    assert blocks_for(MIN_MARBLES, 4) == 4
    # Every core by default; more blocks than cores are accepted (the results depend on the
    # count, not on the machine), so a large machine's run repeats on a small one.
    assert THREADS.lo == 1 and THREADS.default == (os.cpu_count() or 1) < THREADS.hi
    assert THREADS.parse("64") == 64 and THREADS.default_text() == "every core"


def test_activate_sets_the_calling_threads_count(monkeypatch):
    monkeypatch.setattr(parallel, "SHARE", None)  # the machine's load is not this test's
    before = numba.get_num_threads()
    try:
        activate(1)
        assert numba.get_num_threads() == 1
        activate(10 ** 6)  # more than the pool: the whole pool
        assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_two_threads_repeat_bit_for_bit(mu):
    runs = [_run("box", {"n": MIN_MARBLES + 500, "mu": mu}, 2) for _ in range(2)]
    (w1, s1), (w2, s2) = runs
    assert s1.problem.block_count == 2 and s1.problem.m > w1.n  # the blocked core ran
    for name in ("x", "v", "omega", "orientation"):
        assert np.array_equal(getattr(w1, name), getattr(w2, name)), name
    assert np.array_equal(s1.impulses()[1], s2.impulses()[1])


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_blocks_move_the_pile_as_the_serial_core(mu):
    """The sweep order differs, so the bits do, and a falling pile is chaotic marble by
    marble: the pile as a whole falls as far, and no contact is lost (no deep overlap)."""
    start = scenes.build("box", {"n": MIN_MARBLES + 500}).x[:, 2].mean()
    (w1, s1), (w2, s2) = (_run("box", {"n": MIN_MARBLES + 500, "mu": mu}, t) for t in (1, 2))
    assert s1.problem.block_count == 1 and s2.problem.block_count == 2
    assert not np.array_equal(w1.x, w2.x)
    drop = start - w1.x[:, 2].mean()
    assert drop > 0.5 and abs(w2.x[:, 2].mean() - w1.x[:, 2].mean()) < 0.01 * drop
    assert max_penetration(w2) < 2.5 * max_penetration(w1)
    assert max_penetration(w2) < 0.1 * w1.radius.min()


def test_a_small_pile_is_serial_whatever_the_thread_count():
    (w1, s1), (w2, s2) = (_run("bowl", {}, t, 100) for t in (1, 2))
    assert s2.problem.block_count == 1
    assert np.array_equal(w1.x, w2.x) and np.array_equal(w1.v, w2.v)


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_every_solver_solves_a_problem_in_blocks_as_serially_on_its_order(mu):
    """The parallel kernels (sweeps, products, residuals) change who computes, never what:
    every registered solver, fast and traced, gives the serial kernels' impulses bit for bit
    on the same contacts in the same order."""
    blocked = problem_of(packed_box(5000, mu=mu), 2)
    serial = replace(blocked, partition=None)
    size = blocked.size if mu else blocked.m
    for name, method in registry.METHODS.items():
        if mu and not method.friction:
            continue
        if name == "portfolio":  # members that share a wall-clock budget: how far each gets
            continue             # depends on the machine's speed; each is tested here alone
        # newton, ipm and socp run no block kernels in their iterations (sparse LU of W, an
        # interior point on it, Clarabel's): one or two iterations show they solve the same W
        # either way, where fifteen cost minutes (a socp iteration on this box: 6 s).
        iterations = {"newton": 2, "ipm": 2, "socp": 1}.get(name, 15)
        for trace in (False, True):
            settings = registry.settings(name, iterations, trace)
            one = method.solve(serial, np.zeros(size), settings)
            two = method.solve(blocked, np.zeros(size), settings)
            assert np.array_equal(one.lam, two.lam), name
            assert one.residual == two.residual and one.status == two.status, name


class _Counters:
    """A machine whose cores and this process are busy as the test says (seconds of CPU)."""

    def __init__(self):
        self.now = 0.0
        self.busy = 0.0
        self.own = 0.0

    def run(self, seconds: float, others: float, own: float) -> None:
        self.now += seconds
        self.busy += (others + own) * seconds
        self.own += own * seconds


def test_core_share_leaves_a_core_to_a_busy_process():
    m = _Counters()
    share = CoreShare(cores=2, period=0.25, sample=lambda: (m.busy, m.own), clock=lambda: m.now)
    assert share.threads(2) == 2  # nothing read yet: every core
    m.run(0.5, others=0.0, own=2.0)
    assert share.threads(2) == 2 and share.threads(8) == 2  # never more than the cores
    m.run(0.5, others=1.0, own=1.0)  # one busy process beside us
    assert share.threads(2) == 1
    m.run(0.1, others=0.0, own=1.0)
    assert share.threads(2) == 1  # within the period: the last reading holds
    m.run(0.5, others=0.3, own=1.0)  # a light load: both cores still worth using
    assert share.threads(2) == 2
    m.run(0.5, others=2.0, own=0.0)  # both taken: still one thread, never none
    assert share.threads(2) == 1
    assert share.threads(1) == 1


def test_core_share_reads_the_load_from_its_making_to_the_first_step():
    """A busy neighbour is seen at the first step after a short warm-up, not a period later."""
    m = _Counters()
    share = CoreShare(cores=2, period=0.25, first_period=0.04, sample=lambda: (m.busy, m.own),
                      clock=lambda: m.now)
    assert share.threads(2) == 2  # no time since the first reading
    m.run(0.05, others=1.0, own=1.0)  # the warm-up, a busy process beside it
    assert share.threads(2) == 1
    m.run(0.05, others=0.0, own=2.0)  # from the second reading on, a reading holds a period
    assert share.threads(2) == 1
    m.run(0.25, others=0.0, own=2.0)
    assert share.threads(2) == 2


def test_cores_reserved_for_a_window_are_left_to_it_and_a_niced_run_counts_niced_load(
        monkeypatch):
    share = CoreShare(cores=4, sample=lambda: None, clock=lambda: 10.0)
    share.reserved = 1
    assert share.threads(4) == 3 and share.threads(2) == 2
    share.cores = share.free = 2
    assert share.threads(2) == 1 and share.threads(1) == 1  # never fewer than one
    stat = "cpu  100 50 20 900 0 0 0 0 0 0\n"
    monkeypatch.setattr("builtins.open", lambda *a, **k: __import__("io").BytesIO(stat.encode()))
    monkeypatch.setattr(parallel, "_NICED", False)
    busy_plain = parallel._cpu_seconds()[0]
    monkeypatch.setattr(parallel, "_NICED", True)  # niced ourselves: niced neighbours count
    assert parallel._cpu_seconds()[0] == pytest.approx(busy_plain + 50 / parallel._TICK)


def test_core_share_without_counters_keeps_every_core():
    share = CoreShare(cores=4, sample=lambda: None, clock=lambda: 10.0)
    assert share.threads(3) == 3 and share.threads(9) == 4


def test_a_busy_machine_changes_the_threads_not_the_numbers(monkeypatch):
    """Two blocks run by one thread (the share a busy machine leaves) step as two threads do."""
    monkeypatch.setattr(parallel, "SHARE", None)
    w_free, s_free = _run("box", {"n": MIN_MARBLES + 500, "mu": 0.5}, 2, steps=10)
    busy = CoreShare(cores=2, sample=lambda: None)
    busy.free = 1
    monkeypatch.setattr(parallel, "SHARE", busy)
    w_busy, s_busy = _run("box", {"n": MIN_MARBLES + 500, "mu": 0.5}, 2, steps=10)
    assert s_busy.problem.block_count == 2 and numba.get_num_threads() == 1
    for name in ("x", "v", "omega"):
        assert np.array_equal(getattr(w_free, name), getattr(w_busy, name)), name
