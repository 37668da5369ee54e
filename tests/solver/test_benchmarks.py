"""Speed benchmarks of the simulation core (pytest-benchmark). Skipped by the default run
(`--benchmark-skip`); run them with

    python -m pytest tests/solver/test_benchmarks.py --benchmark-only -m 'slow or not slow'

Each also checks what it timed, so a fast wrong answer fails."""
import numpy as np
import pytest

import scenes
from solver.methods import registry
from solver.collide import Collider
from solver.step import Simulation
from solver.world import container_geometry
from tests.solver.test_collide import brute_force_pairs, brute_force_walls, contact_sets


def settled(scene, steps, **params):
    sim = Simulation(scenes.build(scene, params), registry.settings("pgs", 20))
    for _ in range(steps):
        sim.step()
    return sim


@pytest.fixture(scope="module")
def bowl():
    return settled("bowl", 300)


def test_bowl_step(benchmark, bowl):
    """The issue's target: bowl, pgs, 20 iterations, fast path (≤ 0.3 ms on the 2-core box)."""
    report = benchmark(bowl.step, False)
    assert report.contacts > 1000 and report.result.iterations == 20
    assert np.all(np.isfinite(bowl.world.x))


def test_bowl_collide(benchmark, bowl):
    w = bowl.world
    collider = Collider(container_geometry(w.container))
    v = w.v + w.dt * w.gravity
    contacts = benchmark(collider.collide, w.x, v, w.radius, w.dt)
    pairs, walls = contact_sets(contacts, w.n)
    assert pairs == brute_force_pairs(w.x, v, w.radius, w.dt)
    assert walls == brute_force_walls(w.x, v, w.radius, w.dt, collider.geometry)


def test_bowl_pgs_solve(benchmark, bowl):
    problem = bowl.problem
    settings = registry.settings("pgs", 20, False)
    solve = registry.METHODS["pgs"].solve
    result = benchmark(lambda: solve(problem, np.zeros(problem.m), settings))
    assert result.residual < result.residual_initial


@pytest.mark.slow
def test_box_10000_step(benchmark):
    """box with n=10000 (target ≤ 12 ms per step), after 200 steps of falling and piling."""
    sim = settled("box", 200, n=10000)
    report = benchmark.pedantic(sim.step, args=(False,), rounds=30, iterations=1,
                                warmup_rounds=2)
    assert report.contacts > 20000 and np.all(np.isfinite(sim.world.v))
