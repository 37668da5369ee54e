"""The window's comparison of the current step (lab.session.comparison): each under a name of its
own, the latest step on request rather than the step of the past shown, a cancel that writes the
solvers done or, with none done, nothing, and one line that says which."""
from __future__ import annotations

import json

from lab.report.job import Job
from lab.session import commands as cmd
from lab.session.comparison import desktop_stem, free_stem, run
from lab.session.session import Session
from lab.session.spec import RunSpec


def column(steps: int) -> Session:
    s = Session(RunSpec.create(scene="column"))
    s.start()
    for _ in range(steps):
        s.step()
    return s


def test_a_free_name_never_names_the_files_of_an_earlier_comparison(tmp_path):
    assert free_stem(tmp_path, "benchmark") == "benchmark"
    (tmp_path / "benchmark.png").write_bytes(b"")
    assert free_stem(tmp_path, "benchmark") == "benchmark-2"
    (tmp_path / "benchmark-2.json").write_text("{}")
    assert free_stem(tmp_path, "benchmark") == "benchmark-3"
    assert desktop_stem(tmp_path, 0.0).startswith("benchmark-19")


def test_two_comparisons_write_two_sets_and_say_where(tmp_path):
    s = column(3)
    first = run(s, 5, tmp_path, "test", ("pgs",), stem=desktop_stem(tmp_path))
    second = run(s, 5, tmp_path, "test", ("jacobi",), stem=desktop_stem(tmp_path))
    assert len({*first.paths, *second.paths}) == 6
    assert sorted(tmp_path.iterdir()) == sorted([*first.paths, *second.paths])
    assert json.loads(first.paths[1].read_text())["solvers"] == ["pgs"]
    assert json.loads(second.paths[1].read_text())["solvers"] == ["jacobi"]
    assert second.text == f"benchmark of step 3 written: {', '.join(map(str, second.paths))}"


def test_latest_solves_the_runs_latest_step_not_the_one_shown(tmp_path):
    s = column(12)
    s.apply(cmd.HistoryStep(-5))
    assert s.sim.steps == 7
    shown = run(s, 5, tmp_path / "shown", "test", ("pgs",))
    latest = run(s, 5, tmp_path / "latest", "test", ("pgs",), latest=True)
    assert shown.meta["step"] == 7 and latest.meta["step"] == 12 and s.sim.steps == 12
    assert "step 12 (the latest; step 7 was shown in the history) written" in latest.text


def test_a_cancel_before_any_solver_ends_writes_nothing_and_says_so(tmp_path):
    s = column(2)
    job = Job()
    job.cancel()
    done = run(s, 5, tmp_path, "test", ("pgs", "jacobi"), job=job)
    assert done.paths == [] and list(tmp_path.iterdir()) == []
    assert done.text == "benchmark of step 2 cancelled before a solver finished: nothing written"


def test_the_line_says_what_was_cancelled_and_what_ran_out_of_time(tmp_path):
    s = column(2)
    job = Job(solver_budget=1e-3)
    job.report = lambda p: job.cancel() if p.solver == "psor" else None
    done = run(s, 1_000_000, tmp_path, "test", ("pgs", "jacobi", "psor"), job=job)
    assert done.table.solvers == ["pgs", "jacobi"]
    assert "(cancelled: 2 of 3 solvers done; pgs, jacobi stopped at their 0.001 s budget)" \
        in done.text
    assert json.loads(done.paths[1].read_text())["cancelled"]["not_run"] == ["psor"]
