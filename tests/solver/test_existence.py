"""The strict-feasibility test against answers worked by hand: the dual cone's formula, a marble
on a floor, a marble squeezed between two walls (whose normal velocities always sum to the same
constant, so the sign of that sum decides), and a rank-one W whose best margin has a closed form
that the two polygons must bracket."""
from dataclasses import dataclass

import numpy as np
import pytest

from solver.existence import CAP, EXISTS, FAILS, NONE, UNDECIDED, Existence, existence
from solver.explicit import MatrixProblem
from solver.friction import FrictionalProblem
from solver.problem import ContactProblem

H = 0.01


def test_the_dual_cone_is_each_part_against_its_own_cone():
    """min u·λ over λ_n = 1, ‖λ_t‖ ≤ μ, ‖λ_r‖ ≤ μ_r, |λ_s| ≤ μ_s is u_n − μ‖u_t‖ − μ_r‖u_r‖ −
    μ_s|u_s|: reached by λ against u part by part, and no sampled λ of the cone goes lower."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        u = rng.normal(size=6)
        mu, mu_r, mu_s = rng.uniform(0.1, 2.0, size=3)
        bound = (u[0] - mu * np.linalg.norm(u[1:3]) - mu_r * np.linalg.norm(u[3:5])
                 - mu_s * abs(u[5]))
        worst = np.concatenate([[1.0], -mu * u[1:3] / np.linalg.norm(u[1:3]),
                                -mu_r * u[3:5] / np.linalg.norm(u[3:5]), [-mu_s * np.sign(u[5])]])
        assert u @ worst == pytest.approx(bound, abs=1e-12)
        lam = np.empty((2000, 6))
        lam[:, 0] = 1.0
        for part, (lo, hi) in zip((mu, mu_r), ((1, 3), (3, 5))):
            angle = rng.uniform(0, 2 * np.pi, 2000)
            radius = part * np.sqrt(rng.uniform(0, 1, 2000))
            lam[:, lo], lam[:, lo + 1] = radius * np.cos(angle), radius * np.sin(angle)
        lam[:, 5] = rng.uniform(-mu_s, mu_s, 2000)
        assert np.min(lam @ u) >= bound - 1e-12


def marble_on_floor(rows: int, gap: float = 0.0):
    """One marble (r = 0.01 m, 5 g) on a floor, falling at g h: q_n = −g h."""
    V = np.zeros((1, 6))
    V[0, 2] = -9.81 * H
    return FrictionalProblem(np.array([-1]), np.array([0]), np.array([[0.0, 0.0, 1.0]]),
                             np.array([gap]), np.array([0.01]), np.array([200.0]), V, H,
                             np.full(1, 0.5), np.full(1, 0.002 if rows == 6 else 0.0),
                             np.full(1, 0.001 if rows == 6 else 0.0), rows)


def squeezed(rows: int, floor_gap: float, ceiling_gap: float):
    """A marble at rest between a floor (n = +z) and a ceiling (n = −z): u_n of the two contacts
    is v_z + g_floor/h and −v_z + g_ceiling/h, so they sum to (g_floor + g_ceiling)/h whatever
    the velocities, and every tangential, rolling and spinning velocity can be zero."""
    normal = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    gap = np.array([floor_gap, ceiling_gap])
    a, b = np.array([-1, -1]), np.array([0, 0])
    if rows == 1:
        return ContactProblem(a, b, normal, gap, np.array([200.0]), np.zeros((1, 3)), H)
    return FrictionalProblem(a, b, normal, gap, np.array([0.01]), np.array([200.0]),
                             np.zeros((1, 6)), H, np.full(2, 0.5), np.full(2, 0.002),
                             np.full(2, 0.001), rows)


@pytest.mark.parametrize("rows", [3, 6])
def test_a_marble_on_a_floor_has_a_solution(rows):
    """W is definite: any velocity is reachable, the margin is unbounded and capped."""
    found = existence(marble_on_floor(rows))
    assert found.verdict == EXISTS
    assert found.inner == pytest.approx(CAP) and found.outer == pytest.approx(CAP)
    assert found.contacts == 1 and found.inert == 0
    assert found.scale == pytest.approx(9.81 * H)


@pytest.mark.parametrize("rows", [1, 3, 6])
@pytest.mark.parametrize("gaps, verdict", [((-0.001, -0.003), FAILS), ((0.001, -0.0005), EXISTS)])
def test_two_walls_squeezing_a_marble_decide_by_the_sum_of_their_gaps(rows, gaps, verdict):
    """The best margin is the mean of the two normal velocities, (g1 + g2) / 2h, with zero
    tangents: both polygons find it exactly, as a share of V = max |g| / h."""
    found = existence(squeezed(rows, *gaps))
    expected = (sum(gaps) / 2) / max(abs(g) for g in gaps)
    assert found.verdict == verdict
    assert found.inner == pytest.approx(expected, abs=1e-6)
    assert found.outer == pytest.approx(expected, abs=1e-6)
    assert found.scale == pytest.approx(max(abs(g) for g in gaps) / H)


def test_a_fixed_marble_does_not_move():
    """A marble squeezed between a fixed marble below it and a ceiling, both overlapping: were
    the fixed marble free to fall, the two normal velocities could both be positive."""
    normal = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    p = FrictionalProblem(np.array([0, -1]), np.array([1, 1]), normal, np.array([-0.001, -0.002]),
                          np.array([0.01, 0.01]), np.array([0.0, 200.0]), np.zeros((2, 6)), H,
                          np.full(2, 0.5), np.zeros(2), np.zeros(2))
    found = existence(p)
    assert found.verdict == FAILS and found.outer == pytest.approx(-0.75, abs=1e-6)
    assert existence(MatrixProblem.from_problem(p)).outer == pytest.approx(-0.75, abs=1e-6)


def test_the_explicit_form_is_tested_alike():
    p = squeezed(3, -0.001, -0.003)
    geometry, explicit = existence(p), existence(MatrixProblem.from_problem(p))
    assert explicit.verdict == geometry.verdict == FAILS
    assert explicit.outer == pytest.approx(geometry.outer, abs=1e-6)


def rank_one(qn: float, mu: float = 2.0) -> MatrixProblem:
    """W = a aᵀ with a = (1, 1, 0): u = (s + q_n, s, q_t2) for any s, q = (q_n, 0, 1). For μ > 1
    the margin s + q_n − μ √(s² + 1) is largest at s = 1/√(μ² − 1): q_n − √(μ² − 1)."""
    a = np.array([1.0, 1.0, 0.0])
    return MatrixProblem.from_dense(np.outer(a, a), np.array([qn, 0.0, 1.0]), np.array([mu]))


@pytest.mark.parametrize("sides", [4, 16, 64])
@pytest.mark.parametrize("qn", [2.0, 1.0])
def test_the_polygons_bracket_a_margin_worked_by_hand(qn, sides):
    found = existence(rank_one(qn), sides=sides)
    exact = (qn - np.sqrt(3.0)) / max(qn, 1.0)
    assert found.inner - 1e-7 <= exact <= found.outer + 1e-7
    # At the outer optimum s the two margins differ by μ p(u_t) (1/c − 1) ≤ μ √(s² + 1) (1/c − 1),
    # c = cos(π/sides), and that s keeps s − μ c √(s² + 1) ≥ −√3 (the outer margin is at least
    # the exact one, and the outer norm at least c times the disk's).
    c = np.cos(np.pi / sides)
    s = np.linspace(-20.0, 20.0, 400001)
    reach = np.sqrt(s ** 2 + 1)[s - 2 * c * np.sqrt(s ** 2 + 1) >= -np.sqrt(3.0)].max()
    assert found.outer - found.inner <= 2 * reach * (1 / c - 1) / max(qn, 1.0) + 1e-7
    assert found.verdict == (EXISTS if qn == 2.0 else FAILS)


def test_a_margin_finer_than_the_polygons_is_undecided_until_they_are_fine_enough():
    p = rank_one(np.sqrt(3.0) + 0.01)
    assert existence(p, sides=8).verdict == UNDECIDED
    assert existence(p, sides=256).verdict == EXISTS


@dataclass
class Rolling:
    """A six-row problem by its matrix (no geometry makes this W): rank one, a = e_n + e_r1, so
    u_n − u_r1 = q_n − q_r1 whatever λ; every other row stays at q."""

    q: np.ndarray
    mu: np.ndarray
    mu_roll: np.ndarray
    mu_spin: np.ndarray
    rows = 6
    m = 1
    size = 6

    @property
    def rhs(self):
        return self.q

    @property
    def diag(self):
        return np.array([1.0, 0, 0, 1.0, 0, 0])

    def coo(self):
        return np.array([0, 0, 3, 3]), np.array([0, 3, 0, 3]), np.ones(4)


def test_rolling_and_spinning_take_their_own_share_of_the_normal_velocity():
    """Margin q_n − μ‖q_t‖ − μ_s|q_s| + max_s (s − μ_r ‖(s, q_r2)‖) (q_r1 = 0): the last term is
    −|q_r2| √(μ_r² − 1) for μ_r > 1, as for the rank-one W above."""
    q = np.array([3.0, 0.3, 0.4, 0.0, 1.0, -0.5])
    mu, mu_r, mu_s = 0.5, 2.0, 0.4
    p = Rolling(q, np.array([mu]), np.array([mu_r]), np.array([mu_s]))
    exact = (3.0 - mu * 0.5 - mu_s * 0.5 - np.sqrt(mu_r ** 2 - 1)) / 3.0
    found = existence(p, sides=64)
    assert found.inner - 1e-7 <= exact <= found.outer + 1e-7
    assert found.outer - found.inner < 1e-2 and found.verdict == EXISTS


def test_a_problem_without_contacts_has_a_solution():
    found = existence(MatrixProblem.from_dense(np.zeros((0, 0)), np.zeros(0), np.zeros(0)))
    assert found.verdict == EXISTS and found.contacts == 0


def test_inert_contacts_that_separate_are_left_out():
    """A contact no impulse reaches (zero row and column of W) with q_n >= 0 beside a marble
    that can move: the solvers never touch it, and neither does the test."""
    W = np.zeros((6, 6))
    W[3:, 3:] = np.diag([1.0, 3.5, 3.5])
    for q_n in (1.0, 0.0):
        p = MatrixProblem.from_dense(W, np.array([q_n, 0, 0, -0.5, 0, 0]), np.full(2, 0.5))
        found = existence(p)
        assert found.verdict == EXISTS and found.contacts == 1 and found.inert == 1
        assert found.scale == pytest.approx(0.5)


@pytest.mark.parametrize("contacts", [1, 4])
def test_an_inert_contact_that_approaches_has_no_solution(contacts):
    """W = 0 and q_n = -1: u_n = q_n < 0 whatever the impulses, so no solution exists."""
    q = np.zeros(3 * contacts)
    q[0::3] = -1.0
    W = np.zeros((3 * contacts, 3 * contacts))
    found = existence(MatrixProblem.from_dense(W, q, np.full(contacts, 0.5)))
    assert found.verdict == NONE and found.blocked == 0
    assert found.text().startswith("existence: no solution: contact 0's normal row of W is "
                                   "zero and q_n = -1 m/s < 0")
    assert "strictly feasible" not in found.text()
    assert found.as_dict()["blocked_contact"] == 0 and found.as_dict()["inner_margin"] is None


def test_an_inert_contact_beside_moving_ones_blocks_the_problem():
    """The second contact has W_nn = 0 and q_n < 0; the first can be pushed apart."""
    W = np.zeros((6, 6))
    W[:3, :3] = np.diag([1.0, 3.5, 3.5])
    found = existence(MatrixProblem.from_dense(W, np.array([-1.0, 0, 0, -0.5, 0, 0]),
                                               np.full(2, 0.5)))
    assert found.verdict == NONE and found.blocked == 1 and "contact 1's" in found.text()


def test_a_zero_diagonal_with_a_coupled_row_is_not_called_blocked():
    """W_nn = 0 but W_n,j != 0 (W not semidefinite, as a file may hold): u_n can still move,
    so the row is not zero and no verdict of NONE is drawn from it."""
    W = np.zeros((6, 6))
    W[3:, 3:] = np.diag([1.0, 3.5, 3.5])
    W[0, 3] = W[3, 0] = 0.5
    found = existence(MatrixProblem.from_dense(W, np.array([-1.0, 0, 0, -0.5, 0, 0]),
                                               np.full(2, 0.5)))
    assert found.verdict != NONE and found.blocked == -1


def test_a_spent_budget_says_what_is_known_never_nan():
    """A budget far too short for the programs: the verdict is undecided and the line says
    what is known (a margin's bound, or none found) with the reason, never 'nan'."""
    seen = []
    found = existence(squeezed(3, 0.001, -0.0005), seconds=1e-9, progress=seen.append)
    assert found.verdict == UNDECIDED
    assert "nan" not in found.text() and ("budget" in found.text() or "Time limit" in found.text())
    assert seen and seen[0].startswith("existence: 2 contacts") and "budget 1e-09 s" in seen[0]


@pytest.mark.parametrize("inner, outer, says", [
    (np.nan, np.nan, "no margin found within the time budget"),
    (0.25, np.nan, "margin at least 2.500e-01"),
    (np.nan, 0.5, "margin at most 5.000e-01"),
    (0.25, 0.5, "margin between 2.500e-01 and 5.000e-01")])
def test_an_unknown_margin_is_said_in_words(inner, outer, says):
    found = Existence(UNDECIDED, inner, outer, 2.0, 3, 0, 16, 1.0, "HiGHS: Time limit reached")
    assert says in found.text() and "nan" not in found.text()
    assert found.text().endswith("; HiGHS: Time limit reached")


def test_a_report_names_the_verdict_and_the_margins():
    found = existence(squeezed(3, -0.001, -0.003))
    assert found.text().startswith("existence: condition fails")
    assert "sufficient, not necessary" in found.text()
    report = found.as_dict()
    assert report["verdict"] == FAILS and report["outer_margin"] == pytest.approx(found.outer)
    with pytest.raises(ValueError, match="at least 3"):
        existence(squeezed(3, 0.0, 0.0), sides=2)


@pytest.mark.parametrize("make", [lambda: rank_one(2.0), lambda: squeezed(6, 0.001, -0.0005),
                                  lambda: marble_on_floor(6)])
def test_the_velocity_that_proves_it_has_at_least_the_inner_margin_with_the_disks_norms(make):
    found = existence(make())
    assert found.verdict == EXISTS
    assert found.checked >= found.inner - 1e-7
    assert found.as_dict()["checked_margin"] == pytest.approx(found.checked)
