"""A comparison followed and ended by its front end (lab.report.job): each solver stopped at its
time budget and said so, a cancel from another thread that ends the solve under way within an
iteration and keeps the solvers done, and the progress line with its estimate."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from lab.report.compare import compare
from lab.report.job import Cancelled, Job, JobProgress
from lab.session.session import Session
from lab.session.spec import RunSpec


@pytest.fixture(scope="module")
def problem():
    """The column's first step: 7 marbles, a handful of contacts."""
    s = Session(RunSpec.create(scene="column"))
    s.start()
    s.step()
    return s.sim.problem


def test_a_solver_stops_at_its_budget_and_is_reported_so(problem):
    """A million iterations on a budget of a millisecond: each solver stops when its solve time
    passes the budget, far short of its iterations, and meta says which and when."""
    table = compare(problem, 1_000_000, ["pgs", "jacobi"], job=Job(solver_budget=1e-3))
    assert table.meta["solver_budget_seconds"] == 1e-3
    for name in ("pgs", "jacobi"):
        run = table.meta["iterations_run"][name]
        assert 0 < run < 1_000_000
        assert table.meta["out_of_time"][name] >= 1e-3
        row = table.row(name)
        assert table.seconds[row, run] == pytest.approx(table.meta["out_of_time"][name])
    assert table.meta["timing_runs"] == {"pgs": 1, "jacobi": 1}  # no repeat of a run cut short


def test_without_a_budget_no_solver_is_out_of_time(problem):
    table = compare(problem, 30, ["pgs"], job=Job(solver_budget=None))
    assert "out_of_time" not in table.meta and table.meta["iterations_run"]["pgs"] <= 30


def test_a_cancel_from_another_thread_ends_the_solve_under_way_and_keeps_the_rest(problem):
    """jacobi runs a million iterations with no budget; a thread cancels once it has started:
    the comparison returns the one solver that finished, and says which it stopped in."""
    job = Job(solver_budget=None)
    started = threading.Event()
    job.report = lambda p: started.set() if p.solver == "jacobi" else None
    canceller = threading.Thread(target=lambda: started.wait(600) and job.cancel())
    canceller.start()
    table = compare(problem, 1_000_000, ["pgs", "jacobi", "psor"], job=job)
    canceller.join()
    assert table.solvers == ["pgs"] and table.residual.shape == (1, 1_000_001)
    assert table.meta["cancelled"] == {"solver": "jacobi", "finished": 1, "of": 3,
                                       "not_run": ["jacobi", "psor"]}
    assert list(table.meta["status"]) == ["pgs"]


def test_a_cancelled_job_raises_at_its_next_check():
    job = Job()
    job.check()
    job.cancel()
    with pytest.raises(Cancelled):
        job.check(np.zeros(3))
    assert job.cancelled and not job.discard
    job.cancel(discard=True)
    assert job.discard


def test_the_estimate_is_the_mean_solver_times_those_to_come(monkeypatch):
    clock = iter([0.0, 0.0, 0.0, 4.0, 10.0, 11.0])
    monkeypatch.setattr("lab.report.job.time.perf_counter", lambda: next(clock))
    job = Job(solver_budget=10.0)  # t = 0
    job.begin(4)  # t = 0
    job.solver_started("pgs", 0)  # t = 0
    job.solver_started("jacobi", 1)  # t = 4: pgs took 4 s
    job.solver_started("psor", 2)  # t = 10: jacobi took 6 s
    p = job.progress()  # t = 11: psor for 1 s of a mean 5, one more to come
    assert p == JobProgress("psor", 2, 4, 11.0, 1.0, 9.0, 10.0)
    assert p.text() == ("benchmark: psor (3/4) for 1 s, 11 s in all, about 9 s left (10 s a "
                        "solver at most); Esc cancels, keeping the solvers done")
    assert "estimating" in JobProgress("pgs", 0, 4, 0.0, 0.0, None, None).text()
