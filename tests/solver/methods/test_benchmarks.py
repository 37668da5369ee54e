"""Speed of the solver laboratory, by benchmark only (no timed asserts). Skipped by default:

    python -m pytest -m slow --benchmark-enable tests/solver/methods/test_benchmarks.py

Each solve runs on the fast path (no per-iteration residual) for exactly the iterations that a
traced run needed to reach 1e-10 m/s on the settled bowl, so the residual measurement does not
favour the method with fewer, bigger iterations. The full tables come from
`python -m benchmarks.solvers` (docs/solver-lab.md).
"""
import numpy as np
import pytest

import scenes
from solver import metrics
from solver.methods import registry
from solver.step import Simulation

pytestmark = pytest.mark.slow

CANDIDATES = [("pgs", {}), ("psor", {}), ("pgs-sm", {}), ("pgs-sm", {"k_gs": 20}),
              ("pcg", {}), ("ppcg", {}), ("mprgp", {}), ("prox-gs", {"gamma": 1.5})]


@pytest.fixture(scope="module")
def bowl500():
    sim = Simulation(scenes.build("bowl"), registry.settings("pgs", 20))
    for _ in range(500):
        sim.step()
    return sim.problem.copy()


def iterations_to(problem, name, params, tol=1e-10):
    settings = registry.settings(name, 50000, True, {"abs_tol": tol, **params})
    result = registry.METHODS[name].solve(problem, np.zeros(problem.m), settings)
    assert result.status == metrics.ABSOLUTE
    return result.iterations


@pytest.mark.parametrize("name, params", CANDIDATES,
                         ids=[f"{n}{''.join(f'-{k}={v}' for k, v in p.items())}"
                              for n, p in CANDIDATES])
def test_time_to_1e_10_on_the_settled_bowl(benchmark, bowl500, name, params):
    k = iterations_to(bowl500, name, params)
    settings = registry.settings(name, k, False, {"abs_tol": 0.0, **params})
    method = registry.METHODS[name]
    result = benchmark.pedantic(lambda: method.solve(bowl500, np.zeros(bowl500.m), settings),
                                rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(iterations=k, contacts=bowl500.m)
    assert result.residual < 1e-10  # the fast path reproduces the traced iterate
