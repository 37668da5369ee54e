"""Mass-splitting Jacobi on the CPU: its split diagonal by hand, Jacobi when no marble shares
a contact, the LCP's solution on random problems and on a pile, and an explicit W."""
import numpy as np
import pytest

from solver import metrics
from solver.explicit import MatrixProblem
from solver.methods import registry
from solver.methods.mass_split import coupled_counts, split_diagonal
from solver.problem import ContactProblem
from tests.solver.methods.reference import enumerate_lcp, random_problem, solve


def test_the_split_diagonal_counts_each_marbles_contacts():
    """Marble 0 on the floor (a wall) carries marble 1; marble 2 rests on the floor alone."""
    up = np.array([0.0, 0.0, 1.0])
    problem = ContactProblem(body_a=np.array([-1, 0, -1]), body_b=np.array([0, 1, 2]),
                             normal=np.array([up, up, up]), gap=np.zeros(3),
                             inv_mass=np.array([0.5, 0.25, 1.0]), v_pred=np.zeros((3, 3)), dt=0.01)
    # Marble 0 has two contacts, marbles 1 and 2 one each.
    assert np.array_equal(split_diagonal(problem), [2 * 0.5, 1 * 0.25 + 2 * 0.5, 1 * 1.0])


def test_with_one_contact_per_marble_it_is_undamped_jacobi():
    """Every marble alone on the floor: the split masses are the masses, so the iterates are
    Jacobi's with β = 1, bit for bit."""
    rng = np.random.default_rng(3)
    n = 6
    normal = rng.normal(size=(n, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    problem = ContactProblem(body_a=-np.ones(n, dtype=np.int64), body_b=np.arange(n),
                             normal=normal, gap=rng.uniform(-0.01, 0.0, n),
                             inv_mass=rng.uniform(0.2, 2.0, n),
                             v_pred=rng.normal(size=(n, 3)), dt=0.01)
    split = solve("mass-split", problem, 7, trace=False)
    jacobi = solve("jacobi", problem, 7, trace=False, beta=1.0)
    assert np.any(split.lam > 0.0)
    assert np.array_equal(split.lam, jacobi.lam)


@pytest.mark.parametrize("seed", range(12))
def test_it_converges_to_the_lcp_solution_without_damping(seed):
    """Random problems, singular ones among them: the post-impulse velocities e = Aλ + b are
    unique, and mass splitting reaches them with no β to tune."""
    rng = np.random.default_rng(seed)
    problem = random_problem(rng, int(rng.integers(1, 4)), int(rng.integers(2, 9)))
    A = problem.dense()
    exact = A @ enumerate_lcp(A, problem.rhs) + problem.rhs
    result = solve("mass-split", problem, 20000, abs_tol=1e-13)
    assert result.status != metrics.DIVERGENCE
    assert np.allclose(A @ result.lam + problem.rhs, exact, atol=1e-7)


def test_on_a_pile_it_converges_where_undamped_jacobi_diverges(settled_bowl_problem):
    p = settled_bowl_problem
    assert solve("jacobi", p, 300, beta=1.0).status == metrics.DIVERGENCE
    result = solve("mass-split", p, 3000)
    assert result.status != metrics.DIVERGENCE
    # Slowly (Jacobi's rate), but every hundred iterations lower than the hundred before.
    assert np.all(np.diff(result.trace[::100]) < 0.0) and result.trace[-1] < 0.1 * result.trace[0]


def test_an_explicit_w_is_split_by_its_coupled_contacts(frictional_bowl):
    """The same frictional pile as marbles and as W alone: each contact's count is its block
    row's non-zero blocks, and both forms come to the same contact velocities."""
    explicit = MatrixProblem.from_problem(frictional_bowl)
    W = explicit.dense()
    counts = coupled_counts(explicit)
    body_a, body_b = frictional_bowl.body_a, frictional_bowl.body_b
    for c in range(0, frictional_bowl.m, 7):
        ends = {body_b[c]} | ({body_a[c]} if body_a[c] >= 0 else set())
        sharing = np.isin(body_b, list(ends)) | np.isin(body_a, list(ends))
        assert counts[c] == np.count_nonzero(sharing)
    size = frictional_bowl.size
    geometric = registry.get("mass-split").solve(
        frictional_bowl, np.zeros(size), registry.settings("mass-split", 4000))
    matrix = registry.get("mass-split").solve(
        explicit, np.zeros(size), registry.settings("mass-split", 4000))
    assert matrix.status != metrics.DIVERGENCE
    u_matrix = W @ matrix.lam + explicit.q
    u_geometric = W @ geometric.lam + explicit.q
    assert np.max(np.abs(u_matrix - u_geometric)) < 1e-3 * np.max(np.abs(explicit.q))
