"""lab.campaign.tasks: a task's key, the routing of --set to solvers, and the row of one task:
its numbers against the profiles' own run, its status when the budget ends it, and an error row
when the solver raises."""
from __future__ import annotations

import numpy as np
import pytest

from lab.campaign import tasks as tk
from lab.campaign.collect import read_collection, read_problem
from lab.io.fclib import read_fclib
from lab.report import profiles
from solver.params import ParamError


def task(folder, solver="pgs", settings=(), budget=5.0, cap=50):
    entry = read_collection(folder)[0]
    return tk.Task(entry.file, str(folder / entry.file), solver, tuple(settings), budget, cap)


def test_the_key_names_problem_solver_settings_and_budget(tiny_collection):
    a = task(tiny_collection)
    assert a.key == task(tiny_collection).key and len(a.key) == 16
    others = {task(tiny_collection, "psor").key, task(tiny_collection, budget=1.0).key,
              task(tiny_collection, "psor", [("omega", "1.2")]).key}
    assert a.key not in others and len(others) == 3
    # where the file lies is not the problem's identity: another machine's path, the same key
    assert tk.Task(a.problem, "/elsewhere/x.hdf5", "pgs", (), 5.0, 50).key == a.key


def test_set_goes_to_every_solver_that_has_the_parameter_or_to_the_one_named():
    got = tk.solver_settings(["pgs", "psor", "apgd"], ["friction=box", "psor.omega=1.2"])
    assert got == {"pgs": {"friction": "box"}, "psor": {"friction": "box", "omega": "1.2"},
                   "apgd": {}}


@pytest.mark.parametrize("solvers, assignments, match", [
    (["pgs"], ["omega=1.2"], "no solver of the campaign has a parameter omega"),
    (["pgs"], ["psor.omega=1.2"], "psor is not among the campaign's solvers"),
    (["psor"], ["omega=7"], "omega"),
    (["pcg"], [], "frictionless contacts only"),
])
def test_bad_settings_are_refused_in_one_line(solvers, assignments, match):
    with pytest.raises(ParamError, match=match):
        tk.solver_settings(solvers, assignments)


def test_a_row_carries_the_profiles_numbers_of_the_same_run(tiny_collection):
    t = task(tiny_collection, cap=40)
    row = tk.run_task(t)
    problem, _ = read_fclib(t.path)
    run = profiles.run_solver(problem, "pgs", 5.0, 40, {}, tk.TOLERANCES)
    assert row["status"] == tk.OK and row["message"] == run.status
    assert row["iterations"] == run.iterations and row["error"] == run.final
    assert row["best_error"] == run.best
    assert row["size"] == problem.size and row["contacts"] == problem.size // 3
    assert [row[tk.column(t)] is None for t in tk.TOLERANCES] == \
        [run.reach[t] is None for t in tk.TOLERANCES]
    assert row["cpu_seconds"] > 0 and row["wall_seconds"] > 0
    assert len(row["trace"]["errors"]) == run.iterations + 1


def test_a_problem_with_rolling_rows_is_a_row_judged_on_every_row(rolling_collection):
    """The LCP snapshot of a heap with rolling resistance: the row's size counts 6 rows a
    contact, and its error is FCLIB's formula over all of them (the profiles' own run)."""
    t = task(rolling_collection, cap=300)
    row = tk.run_task(t)
    problem, _ = read_problem(t.path)
    run = profiles.run_solver(problem, "pgs", 5.0, 300, {}, tk.TOLERANCES)
    assert row["status"] == tk.OK and row["size"] == problem.size == 6 * row["contacts"]
    assert row["error"] == run.final and row["message"] == run.status
    assert row["trace"]["errors"][0] == problem.fclib_error(np.zeros(problem.size)) > 0


def test_a_run_the_budget_ends_is_a_budget_row(tiny_collection):
    row = tk.run_task(task(tiny_collection, "jacobi", [("beta", "0.01")], budget=1e-4,
                           cap=10**7))
    assert row["status"] == tk.BUDGET and row["message"] == "max_iterations"
    assert row["solve_seconds"] >= 1e-4


def test_a_solver_that_raises_is_an_error_row(tiny_collection, monkeypatch):
    def broken(*_args, **_kw):
        raise FloatingPointError("the kernel met a NaN\nsecond line")

    monkeypatch.setattr(tk, "run_solver", broken)
    monkeypatch.setattr(tk, "prepare", lambda solvers: None)
    row = tk.run_task(task(tiny_collection))
    assert row["status"] == tk.ERROR
    assert row["message"] == "FloatingPointError: the kernel met a NaN"
    assert row["iterations"] is None and row["trace"] is None
