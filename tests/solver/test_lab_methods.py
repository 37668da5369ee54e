"""The solver laboratory of issue 3: pcg, ppcg, prox-gs, prox-jacobi, pgs-sm, mprgp.

Known answers come from tests/solver/reference.enumerate_lcp (every active set tried) and from the
article's claims (column, mass ratio); each test can fail."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import scenes
from solver import metrics, registry
from solver.step import Simulation
from tests.solver.reference import enumerate_lcp, random_problem

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


def solve(name, problem, iterations, trace=True, lam0=None, **params):
    s = registry.settings(name, iterations, trace, params)
    start = np.zeros(problem.m) if lam0 is None else lam0
    return registry.METHODS[name].solve(problem, start.copy(), s)


def test_every_lab_method_is_registered_with_a_description():
    for name in LAB:
        method = registry.get(name)
        assert method.description and method.label
    assert "blocked = local" in registry.get("prox-gs").description


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


def random_seed_problem(seed):
    """Seed `seed` of `lab_benchmark.survey` (README table 4)."""
    rng = np.random.default_rng(seed)
    return random_problem(rng, int(rng.integers(1, 5)), int(rng.integers(1, 10)))


@pytest.mark.parametrize("name", ["prox-gs", "prox-jacobi"])
def test_erlebens_merit_decays_r_to_zero_where_the_objective_test_converges(name):
    """The diagnosis behind the objective test (README, Solver laboratory): ρ = ‖Δλ‖∞ shrinks
    with R, so each rejection makes the next ρ smaller and R decays towards 0 until λ stops
    moving. Survey seed 180 (one marble, 6 contacts, singular A)."""
    problem = random_seed_problem(180)
    erleben = solve(name, problem, 20000, abs_tol=1e-10, merit="step")
    assert erleben.status == metrics.MAX_ITERATIONS and erleben.residual > 1e-3
    assert erleben.info["final_scale"] < 1e-12
    default = solve(name, problem, 20000, abs_tol=1e-10)
    assert default.status == metrics.ABSOLUTE and default.info["final_scale"] > 0.5


@pytest.mark.parametrize("name", ["pcg", "ppcg"])
def test_pcg_safeguard_ends_the_cycle_of_projected_steps(name):
    """Survey seed 77 (one marble, 8 contacts, A of rank 3): the projected CG step raises f at
    every clipped step and the iterates cycle for ever; the safeguard solves it in 3."""
    problem = random_seed_problem(77)
    plain = solve(name, problem, 20000, abs_tol=1e-10, safeguard=False)
    assert plain.status == metrics.MAX_ITERATIONS and plain.residual > 0.1
    safe = solve(name, problem, 20000, abs_tol=1e-10)
    assert safe.status == metrics.ABSOLUTE and safe.iterations <= 5
    assert safe.info["safeguards"] >= 1


def settled(scene, steps, overrides=None):
    """The contact problem of the last of `steps` steps solved tightly by pcg (a resting scene
    whose gaps are closed to rounding)."""
    sim = Simulation(scenes.build(scene, overrides), "ppcg", iterations=500,
                     params={"abs_tol": 1e-13})
    for _ in range(steps):
        sim.step()
    return sim.problem


@pytest.mark.parametrize("k", [2, 3, 5, 7])
def test_pcg_solves_a_resting_column_of_k_marbles_in_k_iterations(k):
    # The exact resting column (touching marbles at rest: the scene's first step), so that no
    # rounding left by a settling run decides the count.
    problem = settled("column", 1, {"n": k})
    assert problem.m == k  # the floor and k - 1 marble pairs
    pcg = solve("pcg", problem, 10 * k, abs_tol=1e-10)  # default restart rule: clip
    assert pcg.status == metrics.ABSOLUTE and pcg.iterations <= k, pcg.iterations
    assert pcg.info["safeguards"] == 0  # every step lowers f: the sources' PCG, unchanged
    # Jacobi preconditioning changes the path: an intermediate iterate can go negative, the
    # projection clips it and CG restarts (ppcg takes 11 at k = 7). SOLVERS.md's literal rule
    # restarts whenever {λ > 0} changes, which the first step from λ = 0 always does.
    for name, params in (("ppcg", {}), ("pcg", {"restart": "active"}),
                         ("ppcg", {"restart": "active"})):
        other = solve(name, problem, 10 * k, abs_tol=1e-10, **params)
        assert other.status == metrics.ABSOLUTE and other.iterations <= 2 * k


def test_pcg_solves_the_mass_ratio_pair_in_two_and_pgs_stalls():
    problem = settled("mass-ratio", 20)
    assert problem.m == 2
    pcg = solve("pcg", problem, 10, abs_tol=1e-10)
    assert pcg.status == metrics.ABSOLUTE and pcg.iterations <= 2
    assert pcg.info["safeguards"] == 0
    pgs = solve("pgs", problem, 200000, trace=True, abs_tol=1e-10)
    assert pgs.status == metrics.ABSOLUTE
    assert pgs.iterations >= 50 * pcg.iterations
    literal = solve("pcg", problem, 10, abs_tol=1e-10, restart="active")
    assert literal.status == metrics.ABSOLUTE and literal.iterations <= 4


@pytest.fixture(scope="module")
def bowl500():
    """The settled bowl: 500 steps of 20 PGS iterations (as `marbles-bench run --scene bowl
    --solver pgs --iterations 20 --steps 500`)."""
    sim = Simulation(scenes.build("bowl"), "pgs", iterations=20, trace=False)
    for _ in range(500):
        sim.step()
    return sim.problem.copy()


@pytest.mark.parametrize("gamma", [0.7, 1.0, 1.5])
def test_prox_gs_local_without_adaptation_is_psor(gamma, bowl500):
    p = bowl500
    rng = np.random.default_rng(3)
    lam0 = rng.uniform(0.0, 1.0, p.m)
    for r in ("local", "blocked"):
        prox = solve("prox-gs", p, 40, lam0=lam0, r=r, gamma=gamma, adapt=False, abs_tol=0.0)
        psor = solve("psor", p, 40, lam0=lam0, omega=gamma, abs_tol=0.0)
        np.testing.assert_allclose(prox.trace, psor.trace, rtol=1e-12, atol=0)
        np.testing.assert_allclose(prox.lam, psor.lam, rtol=1e-12, atol=1e-15)
    # ...and the iterates differ as soon as γ differs from ω: the test can tell them apart.
    other = solve("psor", p, 40, lam0=lam0, omega=gamma * 0.9, abs_tol=0.0)
    assert not np.allclose(other.lam, prox.lam, rtol=1e-6)


def test_prox_jacobi_adaptation_rescues_undamped_jacobi_on_a_pile(bowl500):
    p = bowl500
    plain = solve("prox-jacobi", p, 300, adapt=False)
    assert plain.status == metrics.DIVERGENCE  # projected Jacobi with r = 1/A_cc
    adaptive = solve("prox-jacobi", p, 300)
    assert adaptive.status != metrics.DIVERGENCE
    info = adaptive.info
    assert info["rejected"] > 0 and info["accepted"] + info["rejected"] == adaptive.iterations
    assert info["final_scale"] == pytest.approx(0.9 ** info["rejected"])
    assert adaptive.trace[-1] < 0.5 * adaptive.trace[0]
    # The objective test evaluates every attempted iterate (one product, which becomes the cached
    # A λ + b when it is accepted), plus the first.
    assert adaptive.products == adaptive.iterations + 1
    # Erleben's step merit needs no product to judge: a rejected iterate reuses the cached A λ,
    # so one product per accepted iterate plus the first, minus one if the last was accepted.
    step = solve("prox-jacobi", p, 300, merit="step")
    assert step.status != metrics.DIVERGENCE and step.info["rejected"] > 0
    accepted = step.info["accepted"]
    assert accepted <= step.products <= accepted + 1 < step.iterations
    nu = solve("prox-jacobi", p, 300, nu=0.5)
    assert nu.info["final_scale"] == pytest.approx(0.5 ** nu.info["rejected"])


def test_prox_global_strategy_uses_its_own_nu_and_grow(bowl500):
    result = solve("prox-jacobi", bowl500, 100, r="global", r_global=50.0, grow=1.0)
    assert result.info["rejected"] >= 1
    assert result.info["final_scale"] == pytest.approx(0.1 ** result.info["rejected"])
    # By default the global strategy grows R by 1.1 after each accepted iterate (capped at R0).
    grown = solve("prox-jacobi", bowl500, 100, r="global", r_global=50.0)
    i = grown.info
    assert i["rejected"] >= 1
    assert i["final_scale"] <= 1.0
    assert i["final_scale"] > 10 * 0.1 ** i["rejected"]
    local = solve("prox-jacobi", bowl500, 100)  # local: no growth by default
    assert local.info["final_scale"] == pytest.approx(0.9 ** local.info["rejected"])


def test_prox_merit_tolerances_stop_with_their_status(bowl500):
    # The budget only needs to exceed what the merit test takes (about 5000 sweeps here).
    for trace in (True, False):
        absolute = solve("prox-gs", bowl500, 20000, trace=trace, abs_tol=0.0, rho_abs_tol=1e-6)
        assert absolute.status == metrics.ABSOLUTE and absolute.iterations < 20000
        relative = solve("prox-gs", bowl500, 20000, trace=trace, abs_tol=0.0, rho_rel_tol=1e-2)
        assert relative.status == metrics.RELATIVE and relative.iterations < 20000
    traced = solve("prox-gs", bowl500, 20000, abs_tol=0.0, rho_abs_tol=1e-6)
    fast = solve("prox-gs", bowl500, 20000, trace=False, abs_tol=0.0, rho_abs_tol=1e-6)
    assert traced.iterations == fast.iterations
    np.testing.assert_array_equal(traced.lam, fast.lam)


@pytest.mark.parametrize("name", ["pcg", "ppcg", "mprgp"])
def test_cg_family_beats_psor_in_iterations_to_1e_8_on_the_settled_bowl(name, bowl500):
    def iterations_to(method, **params):
        result = solve(method, bowl500, 20000, abs_tol=1e-8, **params)
        assert result.status == metrics.ABSOLUTE
        return result.iterations

    assert iterations_to(name) < iterations_to("psor")


def test_pgs_sm_paths_agree_and_count_their_work(bowl500):
    dense = solve("pgs-sm", bowl500, 400, abs_tol=1e-10, dense_max=100000)
    sparse = solve("pgs-sm", bowl500, 400, abs_tol=1e-10, dense_max=0)
    for result in (dense, sparse):
        i = result.info
        assert result.status == metrics.ABSOLUTE
        assert i["accepted"] >= 1
        # One subspace phase per iteration (S is never empty on the pile), each kept or not.
        assert i["accepted"] + i["rejected"] == result.iterations
        assert i["sweeps"] == 5 * result.iterations
        assert i["reduced_solves"] <= 3 * result.iterations  # k_sm
        # At most k_sm - 1 re-solves per phase follow a ratio test that dropped contacts.
        assert i["reduced_solves"] - result.iterations <= i["dropped"]
    assert dense.info["cholesky"] >= 1 and dense.info["cg_steps"] == 0
    assert sparse.info["cholesky"] == 0 and sparse.info["cg_steps"] > 0
    # Products: a sweep, a CG step, forming A_SS, and the safeguard's objective change each 1.
    assert sparse.products == sparse.info["sweeps"] + sparse.info["cg_steps"] + sparse.iterations
    assert dense.products == (dense.info["sweeps"] + dense.info["reduced_solves"]
                              + dense.iterations)
    # e is unique even though λ is not (the bowl's A is singular).
    np.testing.assert_allclose(bowl500.error(dense.lam), bowl500.error(sparse.lam), atol=1e-9)


def test_pgs_sm_with_the_papers_k_gs_needs_fewer_products_than_pgs_on_the_settled_bowl(bowl500):
    """SOLVERS.md §5's claim, counted in products with A (timing-free): with k_gs = 5, PGS+SM
    reaches 1e-10 on the settled bowl with under a third of PGS's sweeps (measured: 893 against
    6987, README). The ratio-test steps descend f = ½λᵀAλ + bᵀλ, so the safeguard keeps
    nearly all of them; with the projection of §5 it kept 8 of 291 here."""
    pgs = solve("pgs", bowl500, 50000, abs_tol=1e-10)
    sm = solve("pgs-sm", bowl500, 2000, abs_tol=1e-10)
    assert pgs.status == sm.status == metrics.ABSOLUTE
    assert 3 * sm.products < pgs.products, (sm.products, pgs.products)
    assert sm.info["rejected"] <= sm.info["accepted"] // 10
    # Every kept step lowers f, so the residual after a phase is never that of a blown-up step.
    assert np.all(sm.trace[1:] < 10 * sm.trace[0])


def test_pgs_sm_ratio_test_stops_on_the_boundary_and_drops_the_contact():
    """One free marble (1 kg) falling at 2 m/s on the floor (n = +z) and touching a slanted wall
    (n = (0, 0.6, -0.8)) that is 1 cm away: the reduced solution on both contacts has
    λ_wall = -1.39 N s. Known answer: λ = (2, 0) N s (the floor alone stops the marble; the wall
    then sees e = 0.5 m/s > 0). From a PGS-like iterate with both impulses positive, one
    subspace phase must stop on the boundary, drop the wall and solve the floor exactly."""
    from solver.pgs_sm import truncated_cg_phase
    from solver.problem import ContactProblem
    problem = ContactProblem(
        body_a=np.array([-1, -1], dtype=np.int64), body_b=np.array([0, 0], dtype=np.int64),
        normal=np.array([[0.0, 0.0, 1.0], [0.0, 0.6, -0.8]]),
        gap=np.array([0.0, 0.01]), inv_mass=np.array([1.0]),
        v_pred=np.array([[0.0, 0.0, -2.0]]), dt=0.02)
    A = problem.dense()
    reference = enumerate_lcp(A, problem.rhs)
    np.testing.assert_allclose(reference, [2.0, 0.0], atol=1e-12)
    assert np.linalg.solve(A, -problem.rhs)[1] < 0.0  # projecting it would be wrong
    lam = np.array([1.5, 0.2])
    v = problem.velocity(lam)
    m = problem.m
    mask = np.zeros(m, dtype=np.bool_)
    x, r, z, p, q = (np.empty(m) for _ in range(5))
    dv = np.empty_like(problem.v_pred)
    precond = 1.0 / problem.diag
    products, solves, dropped = truncated_cg_phase(
        problem.body_a, problem.body_b, problem.normal, problem.inv_mass, problem.bias, precond,
        0.0, v, lam, mask, x, r, z, p, q, dv, 3, 50, 0.0, 1e-14)
    assert dropped == 1 and not mask[1] and x[1] == 0.0 and solves == 2
    np.testing.assert_allclose(x, reference, atol=1e-12)
    assert problem.residual(x) < 1e-12


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


@pytest.mark.parametrize("name, params", [("prox-jacobi", {"adapt": False}),
                                          ("prox-gs", {"adapt": False, "r": "global",
                                                       "r_global": 1e4})])
def test_a_diverging_iterate_is_caught_and_the_step_stays_finite(name, params):
    world = scenes.build("bowl")
    sim = Simulation(world, "pgs", trace=False)
    for _ in range(100):
        sim.step()
    sim.set_method(name, 300, params)
    statuses = {sim.step().result.status for _ in range(3)}
    assert metrics.DIVERGENCE in statuses
    assert np.all(np.isfinite(world.x)) and np.all(np.isfinite(world.v))
