"""Every registered solver: it converges to the solution found by enumeration, its traced and
fast paths agree, it counts its products, and a poisoned or diverging problem ends in the
`divergence` status with finite impulses. Known answers from tests/solver/methods/reference."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import scenes
from solver import metrics
from solver.methods import registry
from solver.step import Simulation
from tests.solver.methods.reference import (enumerate_lcp, random_problem, random_seed_problem,
                                             solve)

G = 9.81  # m/s^2

LAB = {  # name: parameter sets the convergence property must hold for
    "pcg": [{}],
    "ppcg": [{}],
    # Without adaptation the proximal iterations are classical convergent schemes: Gauss-Seidel
    # with local r is PSOR (converges for γ in (0, 2)); the Jacobi form and global r are projected
    # gradient steps, which converge when R < 2 / ‖R0^-1/2 A R0^-1/2‖ ("safe" below).
    # With adaptation (the defaults, and r = global from Erleben's r = 5 kg), the objective test
    # keeps f decreasing and R bounded away from 0, so they converge too.
    "prox-gs": [{}, {"r": "global"}, {"adapt": False, "gamma": 1.0},
                {"adapt": False, "gamma": 1.7}, {"adapt": False, "r": "global", "r_global": "safe"}],
    "prox-jacobi": [{}, {"r": "global"}, {"adapt": False, "gamma": "safe"},
                    {"adapt": False, "r": "global", "r_global": "safe"}],
    # Every subspace path: dense Cholesky (the random problems are small), truncated CG, and CG
    # so short that most phases end on a ratio test or on cg_max.
    "pgs-sm": [{}, {"dense_max": 0}, {"k_sm": 1, "k_gs": 2}, {"dense_max": 0, "cg_max": 2}],
    "mprgp": [{}, {"Gamma": 0.5}],
}


CASES = [(name, params) for name, sets in LAB.items() for params in sets]


PROPERTY = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


PROBLEMS = dict(seed=st.integers(0, 2**32 - 1), n_bodies=st.integers(1, 4), m=st.integers(1, 9))


def feasible_problem(seed, n_bodies, m):
    """A random frictionless problem (SPD when m <= 3n and generic, singular PSD when m > 3n)
    and its enumerated solution; infeasible draws (random overlapping walls) are skipped."""
    problem = random_problem(np.random.default_rng(seed), n_bodies, m)
    A = problem.dense()
    try:
        reference = enumerate_lcp(A, problem.rhs)
    except AssertionError:
        assume(False)
    return problem, A, reference


def concrete(params, A):
    """Replace "safe" by 1.9 / the largest eigenvalue of the scaled matrix the step uses."""
    out = dict(params)
    if out.get("gamma") == "safe":
        d = np.sqrt(np.diag(A))
        out["gamma"] = min(1.9, 1.9 / np.linalg.eigvalsh(A / np.outer(d, d)).max())
    if out.get("r_global") == "safe":
        out["r_global"] = 1.9 / np.linalg.eigvalsh(A).max()
    return out


def test_every_lab_method_is_registered_with_a_description():
    for name in LAB:
        method = registry.get(name)
        assert method.description and method.label
    assert "blocked; = local without friction" in registry.get("prox-gs").params[0].help


@pytest.mark.parametrize("name, params", CASES)
@PROPERTY
@given(**PROBLEMS)
def test_converges_to_the_enumerated_solution(name, params, seed, n_bodies, m):
    """e = Aλ + b is unique even where A is singular; λ is when A is definite."""
    problem, A, reference = feasible_problem(seed, n_bodies, m)
    tol = 1e-10
    result = solve(name, problem, 200000, abs_tol=tol, **concrete(params, A))
    assert result.status == metrics.ABSOLUTE, (result.status, result.residual)
    assert result.residual < tol and result.lam.min() >= 0.0
    assert problem.residual(result.lam) == result.residual
    np.testing.assert_allclose(A @ result.lam, A @ reference, atol=1e-7)
    if np.linalg.eigvalsh(A).min() > 1e-6:
        np.testing.assert_allclose(result.lam, reference, atol=1e-6)


DESCENT = [("prox-gs", {}), ("prox-gs", {"r": "global"}), ("prox-jacobi", {}),
           ("prox-jacobi", {"r": "global"}), ("pcg", {}), ("ppcg", {}),
           ("pcg", {"restart": "active"})]


@pytest.mark.parametrize("name, params", DESCENT)
@PROPERTY
@given(**PROBLEMS)
def test_the_objective_never_rises(name, params, seed, n_bodies, m):
    """What makes them converge: the adaptive prox methods accept an iterate only when it lowers
    f = ½λᵀAλ + bᵀλ, and pcg/ppcg replace a projected step that raises f by a shorter one. So
    f(λ_k) never increases (checked on the iterates after k = 0..K iterations; the traced and
    fast paths give the same iterates)."""
    problem, A, reference = feasible_problem(seed, n_bodies, m)
    f = [0.0]  # λ_0 = 0
    for k in range(1, 41):
        lam = solve(name, problem, k, trace=False, abs_tol=0.0, **params).lam
        f.append(0.5 * lam @ A @ lam + problem.rhs @ lam)
    f = np.array(f)
    rounding = 1e-12 * (1.0 + np.abs(f[:-1]))
    assert np.all(np.diff(f) <= rounding), np.diff(f).max()


@pytest.mark.parametrize("name, extra", [("pgs", {}), ("psor", {"omega": 1.3}),
                                         ("psor", {"omega": 0.7}), ("jacobi", {"beta": 0.2})])
@pytest.mark.parametrize("seed", range(6))
def test_the_classic_methods_converge_to_the_enumerated_solution(name, extra, seed):
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


@pytest.mark.parametrize("name", list(registry.METHODS))
def test_trace_and_fast_path_reach_the_same_iterate(name, settled_bowl_problem):
    p = settled_bowl_problem
    traced = solve(name, p, 15)
    fast = solve(name, p, 15, trace=False)
    assert len(traced.trace) == traced.iterations + 1 == len(traced.seconds)
    assert np.all(np.diff(traced.seconds) >= 0)
    np.testing.assert_allclose(traced.lam, fast.lam, rtol=1e-12, atol=1e-14)
    assert traced.trace[-1] == pytest.approx(fast.residual, rel=1e-10)


def test_products_are_counted_per_method(bowl500):
    pcg = solve("pcg", bowl500, 30, abs_tol=0.0)
    # A safeguarded step spends the safeguard's products instead of the second one.
    i = pcg.info
    assert pcg.products == 1 + 2 * 30 + i["guards"] - i["safeguards"] + i["safeguard_products"]
    safe = solve("ppcg", random_seed_problem(77), 3, abs_tol=0.0)
    i = safe.info
    assert i["safeguard_products"] > i["safeguards"] >= 1
    assert safe.products == 1 + 2 * 3 + i["guards"] - i["safeguards"] + i["safeguard_products"]
    mprgp = solve("mprgp", bowl500, 30, abs_tol=0.0)
    i = mprgp.info
    assert i["cg"] + i["expansion"] + i["proportioning"] == 30
    assert mprgp.products == 1 + i["cg"] + 2 * i["expansion"] + i["proportioning"]
    gs = solve("prox-gs", bowl500, 30, abs_tol=0.0)
    assert gs.products == 30


def poisoned(kind):
    problem = random_problem(np.random.default_rng(11), 4, 8)
    if kind == "nan_velocity":
        problem.v_pred[problem.body_b[0]] = np.nan
    elif kind == "inf_mass":
        problem.inv_mass[problem.body_b[0]] = np.inf
    elif kind == "nan_normal":
        problem.normal[0] = np.nan
    return problem.__class__(problem.body_a, problem.body_b, problem.normal, problem.gap,
                             problem.inv_mass, problem.v_pred, problem.dt)


@pytest.mark.parametrize("kind", ["nan_velocity", "inf_mass", "nan_normal"])
@pytest.mark.parametrize("name", list(registry.METHODS))
def test_a_poisoned_problem_ends_in_divergence_with_the_start_impulses(name, kind):
    problem = poisoned(kind)
    lam0 = np.full(problem.m, 0.25)
    for trace in (True, False):
        result = solve(name, problem, 30, trace=trace, lam0=lam0)
        assert result.status == metrics.DIVERGENCE
        np.testing.assert_array_equal(result.lam, lam0)  # the warm start, finite
        if trace:
            assert result.trace[-1] == np.inf


@pytest.mark.parametrize("name, params", [("prox-jacobi", {"gamma": 1.0, "adapt": False}),
                                          ("prox-gs", {"adapt": False, "r": "global",
                                                       "r_global": 1e4})])
def test_a_diverging_iterate_is_caught_and_the_step_stays_finite(name, params):
    world = scenes.build("bowl")
    sim = Simulation(world, registry.settings("pgs"))
    for _ in range(100):
        sim.step()
    sim.set_solver(registry.settings(name, 300, overrides=params))
    statuses = {sim.step().result.status for _ in range(3)}
    assert metrics.DIVERGENCE in statuses
    assert np.all(np.isfinite(world.x)) and np.all(np.isfinite(world.v))


@pytest.mark.parametrize("name", list(registry.METHODS))
def test_an_inert_row_is_skipped_and_the_rest_is_solved(name):
    """Row 0 joins two fixed marbles (A_cc = 0: no impulse can change its velocity); row 1 holds
    a free unit mass resting on the floor. No division by zero, the inert row keeps its start
    impulse, and the other row gets the weight."""
    from solver.problem import ContactProblem
    h = 0.02
    problem = ContactProblem(np.array([0, -1]), np.array([1, 2]),
                             np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), np.array([0.0, 0.0]),
                             np.array([0.0, 0.0, 1.0]), np.array([[0, 0, 0], [0, 0, 0],
                                                                  [0.0, 0.0, -G * h]]), h)
    assert problem.diag[0] == 0.0
    for trace in (True, False):
        result = solve(name, problem, 500, trace=trace)
        assert result.status != metrics.DIVERGENCE
        assert result.lam[0] == 0.0
        assert result.lam[1] == pytest.approx(G * h, rel=1e-9)
