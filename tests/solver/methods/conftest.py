"""Shared fixtures of the solver tests: settled piles whose last contact problem is frozen."""
import pytest

import scenes
from solver.methods import registry
from solver.step import Simulation


def settled(scene, steps, solver="pgs", iterations=20, trace=False, overrides=None, **params):
    """The contact problem of the last of `steps` steps of `scene`."""
    sim = Simulation(scenes.build(scene, overrides), registry.settings(solver, iterations,
                                                                       overrides=params))
    for _ in range(steps):
        sim.step(trace=trace)
    return sim.problem.copy()


@pytest.fixture(scope="module")
def settled_bowl_problem():
    """The bowl after 150 steps of 20 PGS iterations."""
    return settled("bowl", 150)


@pytest.fixture(scope="module")
def bowl500():
    """The settled bowl: 500 steps of 20 PGS iterations (as `marbles-bench run --scene bowl
    --solver pgs --iterations 20 --steps 500`)."""
    return settled("bowl", 500)


@pytest.fixture(scope="module")
def frictional_bowl():
    """A frozen frictional pile: 60 marbles in the bowl (μ = μ_wall = 0.5) after 300 steps of
    20 PGS sweeps with a full warm start; every Coulomb solver converges on it from zero."""
    sim = Simulation(scenes.build("bowl", {"n": 60, "mu": 0.5, "mu_wall": 0.5}),
                     registry.settings("pgs", 20), warm_start=1.0)
    for _ in range(300):
        sim.step()
    return sim.problem.copy()
