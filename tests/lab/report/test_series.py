"""lab.report.series: the snapshots are the contact problems of a PGS-driven run at the listed
steps, every run's curve is that solver's own trace with its parameters, PGS and PGS+SM are timed to
1e-10 m/s, and results.json gets every number the verdicts use."""
import json

import numpy as np

import scenes
from lab.io.files import json_safe
from lab.report import series
from lab.report.compare import settle
from solver.methods import registry
from tests.solver.methods.reference import solve


def test_frozen_steps_are_the_problems_of_one_pgs_run():
    got = series.frozen_steps("column", (1, 4, 9))
    assert [step for step, _ in got] == [1, 4, 9]
    for step, problem in got:
        frozen = settle(scenes.build("column"), step, registry.settings("pgs", 20, False))
        assert frozen.step == step
        np.testing.assert_array_equal(problem.rhs, frozen.problem.rhs)
        np.testing.assert_array_equal(problem.normal, frozen.problem.normal)


def test_each_run_is_its_solver_with_its_parameters():
    problem = series.frozen_steps("disk", (20,))[0][1]
    for label in ("psor", "pcg safeguard=0", "ppcg"):
        solver, params = series.RUNS[label]
        own = solve(solver, problem.copy(), 60, abs_tol=0.0, rel_tol=0.0, **params).trace
        np.testing.assert_array_equal(series.residual_curve(problem, label, 60), own)
    # The sources' PCG is the kernel without the safeguard, and differs where it would fire.
    assert series.RUNS["pcg safeguard=0"] == ("pcg", {"safeguard": False})
    assert series.series_labels(["pgs", "pcg"]) == ["pgs", "pcg", "pcg safeguard=0"]


def test_time_to_solved_counts_iterations_and_says_when_not_reached(monkeypatch):
    problem = series.frozen_steps("mass-ratio", (1,))[0][1]
    monkeypatch.setitem(series.SUBSPACE_BUDGET, "pgs", 3000)
    timed = series.time_to_solved(problem, ("pcg", "pgs"), repeats=2)
    assert timed["pcg"].iterations == 2 and timed["pcg"].runs == 2
    assert timed["pcg"].products == solve("pcg", problem.copy(), 10, abs_tol=1e-10).products
    # PGS crawls on the 1000:1 pair (21409 sweeps to 1e-10): not reached within a budget of
    # 3000; the time is the whole run's.
    assert timed["pgs"].iterations is None and timed["pgs"].seconds > timed["pcg"].seconds
    assert timed["pgs"].products == 3000


def test_measure_series_runs_the_chosen_solvers_on_each_step():
    steps = {"column": (1, 3), "mass-ratio": (1,), "bowl": (2,)}
    got = series.measure_series(["mass-ratio", "column", "box"], ["pgs", "pcg", "pgs-sm"],
                                repeats=1, steps=steps)
    assert list(got) == ["mass-ratio", "column"]  # scenes without a series are skipped
    assert [s.step for s in got["column"]] == [1, 3]
    snap = got["column"][0]
    assert set(snap.residual) == {"pgs", "pcg", "pcg safeguard=0"}
    assert snap.budget == series.SERIES_BUDGET["column"] and snap.marbles == 7
    assert snap.subspace == {}  # PGS and PGS+SM are timed on the bowl only
    assert snap.rhs_norm == np.max(np.abs(series.frozen_steps("column", (1,))[0][1].rhs))


def test_the_bowl_snapshots_time_pgs_and_pgs_sm():
    got = series.measure_series(["bowl"], ["pgs", "pgs-sm"], repeats=1, steps={"bowl": (60,)})
    snap = got["bowl"][0]
    assert set(snap.subspace) == {"pgs", "pgs-sm"}
    assert snap.subspace["pgs-sm"].iterations is not None
    assert snap.subspace["pgs-sm"].products < snap.subspace["pgs"].products
    data = json.loads(json.dumps(json_safe(series.series_json(got))))
    entry = data["bowl"][0]
    assert entry["step"] == 60 and entry["contacts"] == snap.contacts
    assert entry["after_20"]["pgs"] == float(snap.residual["pgs"][20])
    assert entry["subspace"]["pgs-sm"]["iterations"] == snap.subspace["pgs-sm"].iterations
