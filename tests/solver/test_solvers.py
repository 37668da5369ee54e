"""Solver behaviour: converge to a reference, or fail exactly where the article says."""
import numpy as np
import pytest

import scenes
from solver import metrics, registry
from solver.problem import ContactProblem
from solver.step import Simulation
from tests.solver.reference import enumerate_lcp, random_problem


def solve(name, problem, iterations, trace=True, **params):
    settings = registry.settings(name, iterations, trace, params)
    return registry.METHODS[name].solve(problem, np.zeros(problem.m), settings)


@pytest.mark.parametrize("name, extra", [("pgs", {}), ("psor", {"omega": 1.3}),
                                         ("psor", {"omega": 0.7}), ("jacobi", {"beta": 0.2})])
@pytest.mark.parametrize("seed", range(6))
def test_converges_to_the_enumerated_solution(name, extra, seed):
    rng = np.random.default_rng(seed)
    problem = random_problem(rng, n_bodies=5, m=8)
    A = problem.dense()
    reference = enumerate_lcp(A, problem.rhs)
    result = solve(name, problem, 20000, abs_tol=1e-11, **extra)
    assert result.status == metrics.ABSOLUTE and result.residual < 1e-11
    assert result.lam.min() >= 0.0
    # e = Aλ + b is unique even where A is singular; λ is when A is definite.
    np.testing.assert_allclose(A @ result.lam, A @ reference, atol=1e-8)
    if np.linalg.eigvalsh(A).min() > 1e-8:
        np.testing.assert_allclose(result.lam, reference, atol=1e-8)


def v_shaped_problem():
    """A marble at rest in a V of two walls tilted 30 degrees from the floor: A_01 > 0, so the
    first wall's impulse overshoots and must later shrink."""
    s, c = np.sin(np.pi / 6), np.cos(np.pi / 6)
    normal = np.array([[s, 0, c], [-s, 0, c]])
    return ContactProblem(np.array([-1, -1]), np.array([0, 0]), normal, np.zeros(2),
                          np.array([1.0]), np.array([[0.0, 0.0, -9.81 * 0.02]]), 0.02)


def test_naive_fails_complementarity_where_an_impulse_must_shrink():
    problem = v_shaped_problem()
    exact = enumerate_lcp(problem.dense(), problem.rhs)
    naive = solve("naive", problem, 500)
    pgs = solve("pgs", problem, 500, abs_tol=1e-12)
    assert pgs.residual < 1e-12 and np.allclose(pgs.lam, exact)
    e = problem.error(naive.lam)
    assert e.min() > -1e-12  # no penetration: naive does stop the marble...
    parts = metrics.parts(naive.lam, e)
    assert parts["complementarity"] > 1e-3  # ...but pushes on a wall it is leaving
    assert naive.residual > 1e-3 and naive.status == metrics.MAX_ITERATIONS


@pytest.fixture(scope="module")
def settled_bowl_problem():
    world = scenes.build("bowl")
    sim = Simulation(world, "pgs", trace=False)
    for _ in range(150):
        sim.step()
    return sim.problem.copy()


def test_undamped_jacobi_diverges_on_a_pile_and_says_so(settled_bowl_problem):
    p = settled_bowl_problem
    for trace in (True, False):
        result = solve("jacobi", p, 300, trace=trace, beta=1.0)
        assert result.status == metrics.DIVERGENCE
        assert np.all(np.isfinite(result.lam)) and np.isfinite(result.residual)
    damped = solve("jacobi", p, 300, beta=0.15)
    assert damped.status != metrics.DIVERGENCE and damped.trace[-1] < damped.trace[0]


def test_divergent_solver_in_the_step_leaves_the_world_finite():
    world = scenes.build("bowl")
    sim = Simulation(world, "pgs", trace=False)
    for _ in range(100):
        sim.step()
    sim.set_method("jacobi", 200, {"beta": 1.0})
    statuses = {sim.step().result.status for _ in range(5)}
    assert metrics.DIVERGENCE in statuses
    assert np.all(np.isfinite(world.x)) and np.all(np.isfinite(world.v))


@pytest.mark.parametrize("name", list(registry.METHODS))
def test_trace_and_fast_path_reach_the_same_iterate(name, settled_bowl_problem):
    p = settled_bowl_problem
    traced = solve(name, p, 15)
    fast = solve(name, p, 15, trace=False)
    assert len(traced.trace) == traced.iterations + 1 == len(traced.seconds)
    assert np.all(np.diff(traced.seconds) >= 0)
    np.testing.assert_allclose(traced.lam, fast.lam, rtol=1e-12, atol=1e-14)
    assert traced.trace[-1] == pytest.approx(fast.residual, rel=1e-10)


def test_pgs_improves_on_the_iterate_it_starts_from(settled_bowl_problem):
    result = solve("pgs", settled_bowl_problem, 50)
    assert result.trace[-1] < 0.5 * result.trace[0]
    assert result.lam.min() >= 0.0


@pytest.mark.parametrize("warm", [False, True])
def test_warm_start_matches_pairs_between_steps(warm):
    sim = Simulation(scenes.build("column"), "pgs", iterations=5000, params={"abs_tol": 1e-10},
                     warm_start=warm)
    cold = sim.step().result.iterations
    first = sim.lam.copy()
    later = [sim.step().result.iterations for _ in range(3)]
    np.testing.assert_allclose(sim.lam, first, rtol=1e-8)  # the same resting column
    if warm:  # carried-over impulses are (almost) the solution already
        assert max(later) < cold / 10
    else:
        assert min(later) == cold


def test_projected_sweeps_is_the_relaxed_sweep_with_step_omega_over_diag(settled_bowl_problem):
    from solver.pgs import projected_sweeps, relaxed_sweeps
    p = settled_bowl_problem
    omega = 1.3
    runs = []
    for use_diag in (True, False):
        lam = np.zeros(p.m)
        v = p.velocity(lam)
        if use_diag:
            projected_sweeps(p.body_a, p.body_b, p.normal, p.bias, p.inv_mass, p.diag, v, lam,
                             omega, 7)
        else:
            relaxed_sweeps(p.body_a, p.body_b, p.normal, p.bias, p.inv_mass, omega / p.diag, v,
                           lam, 7)
        runs.append((lam, v))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    # v stays the velocity the impulses leave.
    np.testing.assert_allclose(runs[0][1], p.velocity(runs[0][0]), atol=1e-12)


def test_an_unchanged_iterate_is_not_relative_convergence():
    """A rejected step (λ kept while the method adapts) must not end the solve as 'relative'."""
    from solver.method import SolveSettings, run
    problem = v_shaped_problem()
    lam = np.zeros(problem.m)
    settings = SolveSettings(5, True, {"abs_tol": 0.0, "rel_tol": 0.5, "divergence": 1e4})
    result = run(problem, lam, settings, sweep=lambda count: None)
    assert result.status == metrics.MAX_ITERATIONS and result.iterations == 5
    growing = np.zeros(problem.m)
    moving = run(problem, growing, settings, sweep=lambda count: growing.__iadd__(1e-9))
    assert moving.status == metrics.RELATIVE and moving.iterations == 2
