"""APGD on the GPU (solver/cuda/apgd.py) against the CPU's apgd on the same contact problems:
the same λ, iterations, products and counts, the traced path equal to the fast one, its own
stopping test, and a run that repeats bit for bit."""
import numpy as np
import pytest

from solver import metrics
from solver.methods import registry
from solver.options import StepOptions
from solver.step import Simulation
from tests.solver.cuda.conftest import PILES, copy_of, cpu_settled, gpu_options, one_gpu_step


@pytest.mark.parametrize("precondition", [True, False])
@pytest.mark.parametrize("scene, params", PILES)
def test_gpu_apgd_is_the_cpus_on_the_same_problem(scene, params, precondition):
    """From λ = 0, 20 iterations, with and without the preconditioner: λ to 1e-12 relative (its
    sums run in another order), and the same decisions: iterations, products, backtracks and
    restarts."""
    overrides = {"precondition": precondition}
    sim, report = one_gpu_step(scene, params, "apgd", overrides=overrides)
    problem = sim.problem
    want = registry.METHODS["apgd"].solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("apgd", 20, False, overrides))
    assert problem.m > 0 and np.any(want.lam > 0.0)
    np.testing.assert_allclose(sim.lam, want.lam, rtol=0.0,
                               atol=1e-12 * np.abs(want.lam).max())
    got = report.result
    assert (got.status, got.iterations, got.products) == (want.status, want.iterations,
                                                          want.products)
    for key in ("backtracks", "restarts"):
        assert got.info[key] == want.info[key]
    assert got.info["relaxation_residual"] == pytest.approx(want.info["relaxation_residual"],
                                                            rel=1e-9, abs=1e-15)


def test_a_gpu_apgd_run_repeats_bit_for_bit():
    scene, params = PILES[1]
    runs = [one_gpu_step(scene, params, "apgd", warm_start=1.0, steps=2)[0] for _ in range(2)]
    for name in ("x", "v", "omega", "orientation"):
        assert np.array_equal(getattr(runs[0].world, name), getattr(runs[1].world, name))
    assert np.array_equal(runs[0].lam, runs[1].lam)


@pytest.mark.parametrize("precondition", [False, True])
def test_gpu_apgd_traced_is_its_fast_path_and_stops_on_its_own_test(precondition):
    """The traced path (one launch an iteration) ends on the same λ as the fast path, after
    the same iterations (all 30 without the preconditioner; with it this pile converges
    sooner); with a loose tolerance APGD stops on its relaxation's residual, as on the CPU."""
    scene, params = PILES[1]
    overrides = {"precondition": precondition}
    world = copy_of(cpu_settled(scene, params, 12), scene, params)
    fast = Simulation(world, gpu_options("apgd", 0.0, 30, overrides))
    done = fast.step().result.iterations
    problem = fast.problem
    world = copy_of(cpu_settled(scene, params, 12), scene, params)
    traced = Simulation(world, gpu_options("apgd", 0.0, 30, overrides))
    report = traced.step(trace=True)
    assert report.result.iterations == done and (done == 30) != precondition
    assert report.result.trace is not None and len(report.result.trace) == done + 1
    assert np.array_equal(fast.lam, traced.lam)
    loose = registry.settings("apgd", 500, False, {"abs_tol": 1e-3, **overrides})
    want = registry.METHODS["apgd"].solve(problem.copy(), np.zeros(problem.size), loose)
    world = copy_of(cpu_settled(scene, params, 12), scene, params)
    sim = Simulation(world, StepOptions(loose, 0.0, 1.0, 1, "cuda"))
    report = sim.step()
    assert want.status == metrics.ABSOLUTE and want.iterations < 500
    assert (report.result.status, report.result.iterations) == (want.status, want.iterations)
