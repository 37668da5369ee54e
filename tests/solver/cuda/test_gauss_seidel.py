"""The GPU's Gauss-Seidel by colours against the CPU's: the same colouring (computed on the
GPU), the same iterates on the same problem (fast and traced paths), and a run that repeats
bit for bit."""
import numpy as np
import pytest

from solver.colouring import colour_contacts
from solver.methods import registry
from solver.step import Simulation
from tests.solver.cuda.conftest import PILES, copy_of, cpu_settled, gpu_options, one_gpu_step


@pytest.mark.parametrize("scene, params", PILES)
def test_the_gpu_solve_is_the_cpu_solve_of_the_same_problem(scene, params):
    """From λ = 0, 20 sweeps: the CPU's coloured-gs on the GPU step's own problem (its contacts
    in the GPU's order) gives λ equal to 1e-12 relative, with the same colour count."""
    sim, report = one_gpu_step(scene, params, "coloured-gs")
    problem = sim.problem
    want = registry.METHODS["coloured-gs"].solve(problem.copy(), np.zeros(problem.size),
                                                 registry.settings("coloured-gs", 20, False))
    assert problem.m > 0 and np.any(want.lam > 0.0)
    np.testing.assert_allclose(sim.lam, want.lam, rtol=0.0,
                               atol=1e-12 * np.abs(want.lam).max())
    assert report.result.status == want.status
    assert report.result.residual == pytest.approx(want.residual, rel=1e-9, abs=1e-13)
    assert report.result.info == want.info and want.info["colours"] >= 2


def test_the_gpu_colours_the_contacts_as_the_cpu_does():
    """The colours of the GPU's launch, read back, are the CPU's rule on the same contacts, and
    the GPU's order lists every contact once, by colour."""
    from solver.cuda import colour as gc
    scene, params = PILES[0]
    sim, _ = one_gpu_step(scene, params, "coloured-gs")
    from solver.cuda.driver import DeviceColouredGs
    solve = DeviceColouredGs(sim._problem, registry.settings("coloured-gs", 20, False))
    buffers = sim._problem.backend.buffers
    problem = sim.problem
    got = buffers.get("colour", (problem.m,), np.int64).copy_to_host()
    want, _ = colour_contacts(problem.body_a, problem.body_b, problem.n)
    assert np.array_equal(got, want)
    order, bins, tally = (a.copy_to_host() for a in solve.colours)
    colours = int(tally[gc.COLOURS])
    assert colours == want.max() + 1 == solve.count
    assert np.array_equal(np.sort(order[:problem.m]), np.arange(problem.m))
    for k in range(colours):
        assert np.all(want[order[bins[k]:bins[k + 1]]] == k)


@pytest.mark.parametrize("scene, params", [PILES[0], PILES[2]])
def test_a_traced_gpu_step_records_the_cpus_trace(scene, params):
    world = copy_of(cpu_settled(scene, params, 12), scene, params)
    sim = Simulation(world, gpu_options("coloured-gs", iterations=6))
    report = sim.step(trace=True)
    problem = sim.problem
    want = registry.METHODS["coloured-gs"].solve(problem.copy(), np.zeros(problem.size),
                                                 registry.settings("coloured-gs", 6, True))
    np.testing.assert_allclose(report.result.trace, want.trace, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(sim.lam, want.lam, rtol=0.0, atol=1e-12 * np.abs(want.lam).max())
    assert report.result.iterations == want.iterations


def test_a_gpu_run_repeats_bit_for_bit():
    scene, params = PILES[1]
    runs = [one_gpu_step(scene, params, "coloured-gs", warm_start=1.0, steps=3)[0]
            for _ in range(2)]
    for name in ("x", "v", "omega", "orientation"):
        assert np.array_equal(getattr(runs[0].world, name), getattr(runs[1].world, name))
    assert np.array_equal(runs[0].lam, runs[1].lam)
