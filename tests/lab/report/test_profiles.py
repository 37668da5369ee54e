"""lab.report.profiles: Dolan and Moré's ratios and profiles against values worked by hand (ties,
problems some or no solver solved, a best time of zero), the verdict computed from given numbers,
the collection frictional and the same at every freeze, a run's FCLIB errors and its budget.
Nothing here is timed: where a run is made, only what does not depend on the clock is checked."""
import json

import numpy as np
import pytest

import scenes
from lab.report import profiles as pf
from solver import metrics
from solver.params import resolve
from solver.problem import FRICTIONAL

INF = np.inf
# Problems (rows) × solvers A, B, C, solve seconds; inf: not solved within the budget.
TIMES = np.array([[1.0, 2.0, INF],    # A fastest, B twice as slow, C never
                  [3.0, 3.0, 6.0],    # A and B tie
                  [INF, INF, INF],    # solved by none
                  [0.5, INF, 1.0]])   # C twice as slow as A


def test_ratios_by_hand():
    expected = np.array([[1.0, 2.0, INF], [1.0, 1.0, 2.0], [INF, INF, INF], [1.0, INF, 2.0]])
    np.testing.assert_array_equal(pf.ratios(TIMES), expected)


def test_profile_by_hand():
    rho = pf.profile(pf.ratios(TIMES), np.array([1.0, 1.5, 2.0, 4.0]))
    np.testing.assert_array_equal(rho, [[0.75, 0.75, 0.75, 0.75],
                                        [0.25, 0.25, 0.50, 0.50],
                                        [0.00, 0.00, 0.50, 0.50]])
    # The τ where some profile steps, and one past the last so every curve ends flat.
    np.testing.assert_array_equal(pf.profile_taus(pf.ratios(TIMES)), [1.0, 2.0, 4.0])


def test_a_problem_solved_at_the_start_has_a_best_of_zero():
    """λ = 0 already within the tolerance: whoever took no time is fastest (ratio 1), and a
    solver that did take time is infinitely slower."""
    np.testing.assert_array_equal(pf.ratios(np.array([[0.0, 0.0, 1.0]])), [[1.0, 1.0, INF]])


def test_shares_count_ties_for_each_and_unsolved_problems_for_none():
    fastest, solved = pf.shares(TIMES)
    np.testing.assert_array_equal(fastest, [3, 1, 0])
    np.testing.assert_array_equal(solved, [3, 2, 2])


def test_the_verdict_is_computed_from_the_numbers():
    assert pf.verdict(TIMES, ["A", "B", "C"], 1e-8) == (
        "FCLIB's error 1e-08: fastest on the most problems: `A` (3 of 4); solves the most "
        "within the budget: `A` (3 of 4); 1 problem solved by none.")
    swapped = pf.verdict(TIMES[:, ::-1], ["C", "B", "A"], 1e-4)
    assert "fastest on the most problems: `A` (3 of 4)" in swapped
    tied = np.array([[1.0, 1.0, INF], [2.0, 1.0, INF]])
    assert pf.verdict(tied, ["A", "B", "C"], 1e-4) == (
        "FCLIB's error 0.0001: fastest on the most problems: `B` (2 of 2); solves the most "
        "within the budget: `A` and `B` (2 of 2); never reached it: `C`.")
    assert pf.verdict(np.full((3, 2), INF), ["A", "B"], 1e-8) == (
        "FCLIB's error 1e-08: no solver reached it on any of the 3 problems.")


def test_first_reach_is_the_time_of_the_first_error_at_or_below_the_tolerance():
    errors = np.array([1.0, 1e-3, 1e-5, 1e-4, 1e-9])
    seconds = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    assert pf.first_reach(errors, seconds, 1e-4) == 0.2
    assert pf.first_reach(errors, seconds, 1e-9) == 0.4
    assert pf.first_reach(errors, seconds, 1e-10) is None


def test_every_problem_of_the_collection_has_friction():
    count = sum(len(entry.steps) for entry in pf.COLLECTION)
    assert 12 <= count <= 20
    assert {"bowl", "box", "heap", "pyramid", "incline"} <= {e.scene for e in pf.COLLECTION}
    for entry in pf.COLLECTION:
        params = resolve(scenes.get(entry.scene).params, entry.params, entry.scene)
        assert scenes.has_friction(params), entry


TINY = (pf.ProfileScene("incline", {"mu": 0.3}, (2,)),
        pf.ProfileScene("pyramid", {"layers": 2, "mu": 0.73}, (1, 3)))


def test_the_frozen_problems_are_frictional_and_the_same_at_every_freeze():
    first, again = pf.freeze(TINY), pf.freeze(TINY)
    assert [f.label for f in first] == ["incline angle=20 μ=0.3 step 2",
                                        "pyramid layers=2 μ=0.73 step 1",
                                        "pyramid layers=2 μ=0.73 step 3"]
    for a, b in zip(first, again):
        assert a.problem.kind == FRICTIONAL and np.all(a.problem.mu > 0.0)
        assert a.contacts == a.problem.m > 0
        np.testing.assert_array_equal(a.problem.rhs, b.problem.rhs)
        np.testing.assert_array_equal(a.problem.normal, b.problem.normal)


def test_a_run_records_fclib_error_and_stops_at_its_iteration_cap():
    incline, pyramid, _ = pf.freeze(TINY)
    solved = pf.run_solver(incline.problem, "pgs", budget=60.0)
    # One marble: one Gauss-Seidel sweep solves its contact exactly.
    assert solved.status == metrics.ABSOLUTE and solved.iterations == 1
    assert solved.final <= 1e-8 and all(solved.reach[t] is not None for t in pf.TOLERANCES)
    capped = pf.run_solver(pyramid.problem, "jacobi", budget=60.0, cap=2)
    assert capped.status == metrics.MAX_ITERATIONS and capped.iterations == 2
    assert capped.reach[1e-8] is None and capped.best <= pyramid.problem.fclib_error(
        np.zeros(pyramid.problem.size))


def given_profiles(times: np.ndarray, solvers: list[str]) -> pf.Profiles:
    """Profiles with the times to both tolerances of `times` (problems, solvers), no run made."""
    problems = [pf.FrozenProblem(f"p{k}", "heap", {}, k, 10 * (k + 1), 5, None)
                for k in range(times.shape[0])]
    runs = [[pf.ProfileRun({tol: None if not np.isfinite(t) else float(t)
                            for tol in pf.TOLERANCES}, metrics.MAX_ITERATIONS, 7, 1.0, 1e-3, 1e-4)
             for t in row] for row in times]
    return pf.Profiles(problems, solvers, runs, budget=1.0, cap=100, seconds=3.0)


def test_the_json_carries_every_run_and_the_profiles(tmp_path):
    p = given_profiles(TIMES, ["A", "B", "C"])
    data = json.loads(json.dumps(pf.profiles_json(p)))
    assert data["budget_s"] == 1.0 and data["solvers"] == ["A", "B", "C"]
    assert data["problems"][1]["runs"]["B"]["seconds_to_1e-08"] == 3.0
    assert data["problems"][2]["runs"]["A"]["seconds_to_0.0001"] is None
    tight = data["profiles"]["1e-08"]
    assert tight["tau"] == [1.0, 2.0, 4.0] and tight["rho"]["B"] == [0.25, 0.5, 0.5]
    assert tight["verdict"] == pf.verdict(TIMES, ["A", "B", "C"], 1e-8)
    assert pf.profiles_json(None) is None
    (tmp_path / pf.FOLDER).mkdir()  # the report prepares its folders before any work
    written = pf.write_figure(tmp_path, p)
    assert written == tmp_path / pf.FOLDER / pf.FIGURE
    assert written.read_bytes()[:4] == b"\x89PNG"


# two problems: pgs, newton and newton's variant (pcg solves no friction)
@pytest.mark.parametrize("solvers, runs", [(["pgs", "pcg", "newton"], 6), (["pcg"], 0)])
def test_only_the_frictional_solvers_are_counted(solvers, runs):
    assert pf.run_count(solvers, TINY[1:]) == runs


def test_a_variant_runs_its_solver_with_its_parameters(monkeypatch):
    """A label of VARIANTS is measured as its solver with its parameters, beside the plain
    solver, and only where that solver is chosen."""
    from lab.report import profiles

    assert profiles.variants(["pgs"]) == ["pgs"]
    assert profiles.variants(["newton", "pgs"]) == ["newton", "pgs", *profiles.VARIANTS]
    seen = []
    real = profiles.registry.settings

    def spy(name, iterations=20, trace=True, overrides=None):
        seen.append((name, dict(overrides or {})))
        return real(name, iterations, trace, overrides)

    label, (name, params) = next(iter(profiles.VARIANTS.items()))
    problem = profiles.freeze([profiles.COLLECTION[-1]])[0].problem
    monkeypatch.setattr(profiles.registry, "settings", spy)
    profiles.run_solver(problem, label, 0.2, cap=3)
    assert seen and all(s == (name, params) for s in seen)
