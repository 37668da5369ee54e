"""The CPU backend's phases: the rows a world's problem has, and a step run phase by phase
through the backend is Simulation.step bit for bit (the seam a second backend joins)."""
import numpy as np
import pytest

import scenes
from solver.backend import CpuBackend, Impulses, rows_of
from solver.friction import ROWS_FRICTIONLESS
from solver.friction import ROWS_ROLLING, ROWS_SLIDING
from solver.methods import registry
from solver.parallel import blocks_for
from solver.step import Simulation


@pytest.mark.parametrize("friction, rows", [
    ({}, ROWS_FRICTIONLESS), ({"mu": 0.5}, ROWS_SLIDING), ({"mu_wall": 0.2}, ROWS_SLIDING),
    ({"mu": 0.5, "mu_roll": 0.01}, ROWS_ROLLING), ({"mu_spin": 0.01}, ROWS_ROLLING)])
def test_rows_per_contact_follow_the_friction(friction, rows):
    assert rows_of(scenes.build("bowl", {"n": 10, **friction})) == rows


def by_phases(world, settings, steps, threads=1):
    """Steps written out phase by phase, as the backend's contract says."""
    backend, last = CpuBackend(world), Impulses.none()
    for _ in range(steps):
        rows, blocks = rows_of(world), blocks_for(world.n, threads)
        backend.begin(world, blocks)
        prediction = backend.predict(world, rows, blocks)
        contacts = backend.collide(world, prediction, blocks, 1.0)
        order = backend.solve_order(world, blocks)
        problem, lam0 = backend.problem(world, contacts, prediction, rows, order, (last, 1.0))
        result = backend.solve(registry.get(settings.method), problem, lam0, settings)
        backend.integrate(world, problem, prediction, result.lam, order, blocks)
        last = Impulses(contacts.key, result.lam, rows)
    return backend.sync_world(world)


@pytest.mark.parametrize("scene, params, threads", [
    ("bowl", {"n": 80}, 1), ("bowl", {"n": 80, "mu": 0.5, "mu_roll": 0.01}, 1),
    ("box", {"n": 2500, "mu": 0.5}, 2)])
def test_a_step_by_phases_is_the_simulations_step(scene, params, threads):
    settings = registry.settings("pgs", 10, False)
    sim = Simulation(scenes.build(scene, params), settings, 1.0, threads=threads)
    for _ in range(6):
        sim.step()
    world = by_phases(scenes.build(scene, params), settings, 6, threads)
    assert not np.array_equal(world.x, scenes.build(scene, params).x)
    for name in ("x", "v", "omega", "orientation"):
        assert np.array_equal(getattr(world, name), getattr(sim.world, name)), name


def test_a_solver_without_friction_is_refused_before_the_step_moves_anything():
    world = scenes.build("bowl", {"n": 20, "mu": 0.5})
    before = world.x.copy()
    sim = Simulation(world, registry.settings("pcg"))
    with pytest.raises(ValueError, match="pcg solves frictionless contacts only"):
        sim.step()
    assert np.array_equal(world.x, before) and sim.steps == 0
