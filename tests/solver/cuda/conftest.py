"""The cuda backend's tests: on numba-cuda's simulator where there is no GPU (tests/conftest.py),
on the GPU where there is one; skipped only without numba-cuda."""
import numpy as np
import pytest

import scenes
from solver.methods import registry
from solver.options import StepOptions
from solver.step import Simulation

pytest.importorskip("numba.cuda", reason="the cuda extra (numba-cuda) is not installed")


def gpu_options(solver: str, warm_start: float = 0.0, iterations: int = 20,
                overrides: dict | None = None) -> StepOptions:
    return StepOptions(registry.settings(solver, iterations, False, overrides), warm_start, 1.0,
                       1, "cuda")


def cpu_settled(scene: str, params: dict, steps: int):
    """A world of `scene` after `steps` steps of the CPU's pgs (marbles in contact, moving)."""
    sim = Simulation(scenes.build(scene, dict(params)), registry.settings("pgs", 20, False),
                     1.0 if scenes.has_friction(params) else 0.0)
    for _ in range(steps):
        sim.step()
    return sim.world


def copy_of(world, scene: str, params: dict):
    """A fresh world of the scene holding `world`'s state."""
    out = scenes.build(scene, dict(params))
    for name in ("x", "v", "omega", "orientation"):
        getattr(out, name)[:] = getattr(world, name)
    out.time = world.time
    return out


PILES = [("box", {"n": 30}), ("bowl", {"n": 24, "mu": 0.5, "mu_wall": 0.5}),
         ("bowl", {"n": 20, "mu": 0.5, "mu_roll": 0.01, "mu_spin": 0.01}),
         ("disk", {"n": 16, "mu": 0.3})]


def one_gpu_step(scene, params, solver, warm_start=0.0, iterations=20, steps=1, overrides=None):
    world = copy_of(cpu_settled(scene, params, 12), scene, params)
    sim = Simulation(world, gpu_options(solver, warm_start, iterations, overrides))
    reports = [sim.step() for _ in range(steps)]
    return sim, reports[-1]
