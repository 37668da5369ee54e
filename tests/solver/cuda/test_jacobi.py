"""The GPU's Jacobi and mass splitting against the CPU's on the same contact problem, and the
GPU's step against itself: determinism, the warm start by key (the backend's assembly), the
driver's statuses on the fast and traced paths."""
import numpy as np
import pytest

from solver import metrics
from solver.methods import registry
from solver.methods.mass_split import split_diagonal
from solver.options import StepOptions
from solver.step import Simulation
from tests.solver.cuda.conftest import PILES, copy_of, cpu_settled, gpu_options, one_gpu_step


@pytest.mark.parametrize("solver", ["jacobi", "mass-split"])
@pytest.mark.parametrize("scene, params", PILES)
def test_the_gpu_solve_is_the_cpu_solve_of_the_same_problem(scene, params, solver):
    """From λ = 0, 20 iterations: the CPU method on the GPU step's own problem (its contacts in
    the GPU's order) gives λ equal to 1e-12 relative (the same bits on the simulator; a GPU
    fuses multiply-adds)."""
    sim, report = one_gpu_step(scene, params, solver)
    problem = sim.problem
    want = registry.METHODS[solver].solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings(solver, 20, False))
    assert problem.m > 0 and np.any(want.lam > 0.0)
    np.testing.assert_allclose(sim.lam, want.lam, rtol=0.0,
                               atol=1e-12 * np.abs(want.lam).max())
    assert report.result.status == want.status
    assert report.result.residual == pytest.approx(want.residual, rel=1e-9, abs=1e-15)
    assert (report.result.iterations, report.result.products) == (want.iterations, want.products)
    assert report.result.info.keys() == want.info.keys()


def test_a_gpu_run_repeats_bit_for_bit():
    scene, params = PILES[1]
    runs = [one_gpu_step(scene, params, "mass-split", warm_start=1.0, steps=3)[0]
            for _ in range(2)]
    for name in ("x", "v", "omega", "orientation"):
        assert np.array_equal(getattr(runs[0].world, name), getattr(runs[1].world, name))
    assert np.array_equal(runs[0].lam, runs[1].lam)


def test_the_warm_start_carries_last_steps_impulses_by_key():
    """After a step, the next problem starts from last step's impulses of the same pairs:
    one GPU step from λ0 = the warm start equals the CPU solve of its problem from the CPU's
    warm start (carried over by key from the same impulses)."""
    from solver.warm_start import carry_over_rows
    scene, params = PILES[1]
    sim, _ = one_gpu_step(scene, params, "jacobi", warm_start=1.0)
    keys, lam = sim.impulses()
    sim.step()
    problem = sim.problem
    lam0 = np.zeros(problem.size)
    carry_over_rows(keys, lam.ravel(), problem.rows, problem.key, lam0, problem.rows)
    want = registry.METHODS["jacobi"].solve(problem.copy(), lam0,
                                            registry.settings("jacobi", 20, False))
    assert np.any(lam0 != 0.0)
    np.testing.assert_allclose(sim.lam, want.lam, rtol=0.0, atol=1e-12 * np.abs(want.lam).max())


def test_the_split_diagonal_is_the_cpus():
    scene, params = PILES[2]
    sim, _ = one_gpu_step(scene, params, "mass-split")
    from solver.cuda import jacobi as gj
    from solver.cuda.driver import DeviceSolve
    solve = DeviceSolve(sim._problem, True, registry.settings("mass-split", 20, False))
    step = solve.system[1].copy_to_host()
    want = split_diagonal(sim.problem)
    np.testing.assert_array_equal(step, np.where(want > 0.0, 1.0 / want, 0.0))
    assert gj.MEASURES == 4


def test_a_traced_gpu_step_records_the_residual_after_every_iteration():
    scene, params = PILES[0]
    world = copy_of(cpu_settled(scene, params, 12), scene, params)
    sim = Simulation(world, StepOptions(registry.settings("jacobi", 8, False), 0.0, 1.0, 1,
                                        "cuda"))
    report = sim.step(trace=True)
    problem = sim.problem
    want = registry.METHODS["jacobi"].solve(problem.copy(), np.zeros(problem.size),
                                            registry.settings("jacobi", 8, True))
    np.testing.assert_allclose(report.result.trace, want.trace, rtol=1e-9)
    assert report.result.iterations == 8 and len(report.result.seconds) == 9


@pytest.mark.parametrize("trace", [False, True])
def test_a_diverging_gpu_solve_falls_back_to_its_start(trace):
    """Undamped Jacobi (β = 1) diverges on a bowl: the step applies λ0 (0 here) and says so,
    as the CPU's driver does on the same problem."""
    scene, params = "bowl", {"n": 40}
    world = copy_of(cpu_settled(scene, params, 40), scene, params)
    settings = registry.settings("jacobi", 200, False, {"beta": 1.0, "divergence": 10.0})
    sim = Simulation(world, StepOptions(settings, 0.0, 1.0, 1, "cuda"))
    report = sim.step(trace=trace)
    want = registry.METHODS["jacobi"].solve(sim.problem.copy(), np.zeros(sim.problem.size),
                                            settings.with_trace(trace))
    assert report.result.status == want.status == metrics.DIVERGENCE
    assert np.all(sim.lam == 0.0) and np.all(np.isfinite(sim.world.x))
    assert report.result.residual == pytest.approx(want.residual, rel=1e-9)


def test_float32_storage_solves_to_float32s_rounding():
    """precision float32: the solve's arrays hold float32 (its sums are still float64), so its
    answer agrees with float64's to float32's rounding, its converged residual stops there
    (far above float64's), and a run repeats bit for bit."""
    scene, params = PILES[1]
    runs = {}
    for precision in ("float64", "float32", "float32"):
        world = copy_of(cpu_settled(scene, params, 12), scene, params)
        options = StepOptions(registry.settings("jacobi", 200, False), 0.0, 1.0, 1, "cuda",
                              precision)
        sim = Simulation(world, options)
        report = sim.step()
        runs.setdefault(precision, []).append((sim, report.result.residual))
    (exact, r64), = runs["float64"]
    (single, r32), (again, _) = runs["float32"]
    assert single.backend.buffers.get("normal", (1, 3)).dtype == np.float32
    assert exact.backend.buffers.get("normal", (1, 3)).dtype == np.float64
    scale = np.abs(exact.lam).max()
    assert 0.0 < np.abs(single.lam - exact.lam).max() < 1e-5 * scale
    assert r64 < 1e-12 < r32 < 1e-5
    assert np.array_equal(single.lam, again.lam)
    assert np.array_equal(single.world.x, again.world.x)


@pytest.mark.parametrize("solver", ["jacobi", "mass-split"])
@pytest.mark.parametrize("scene, params", PILES[:3])
def test_one_launch_per_phase_or_per_iteration_is_the_fused_solve_bit_for_bit(scene, params,
                                                                               solver):
    from numba import cuda

    from solver.cuda.driver import device_solve
    from solver.cuda.frozen import upload

    sim, _ = one_gpu_step(scene, params, solver)
    device = upload(sim.problem)
    solve = device_solve(device, registry.settings(solver, 12, False))
    start = np.zeros(sim.problem.size)
    fused, phased, stepped = (cuda.to_device(start) for _ in range(3))
    solve.sweep(fused, 12)
    solve.phased(phased, 12)
    for _ in range(12):
        solve.sweep(stepped, 1)
    want = fused.copy_to_host()
    assert np.abs(want).max() > 0.0
    np.testing.assert_array_equal(phased.copy_to_host(), want)
    np.testing.assert_array_equal(stepped.copy_to_host(), want)
    other = device_solve(device, registry.settings("coloured-gs", 12, False))
    with pytest.raises(NotImplementedError):
        other.phased(fused, 1)
