"""lab.campaign.report: the profiles of a campaign's table are lab.report.profiles' own. The
known answer: today's measured profiles of the 16 frozen steps (results/results.json, written by
`marbles-bench report --part profiles`), put into a table row by row, give back the very τ, ρ
and verdicts stored beside them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.campaign.report import PROFILES_JSON, REPORT, profiles_from_rows, report
from lab.campaign.table import read_rows, write_row
from lab.campaign.tasks import ERROR, column
from lab.report.profiles import FIGURE, FOLDER, TOLERANCES, profiles_json
from solver.params import ParamError

RESULTS = Path(__file__).resolve().parents[3] / "results" / "results.json"


def rows_of(stored: dict) -> list[dict]:
    """One campaign row per run of results.json's profiles (a variant's label as its solver)."""
    rows = []
    for k, problem in enumerate(stored["problems"]):
        for solver, run in problem["runs"].items():
            rows.append({
                "key": f"{k:02d}-{solver}", "problem": f"{k:02d} {problem['label']}",
                "contacts": problem["contacts"], "solver": solver, "settings": "",
                "budget_s": stored["budget_s"], "status": "ok", "message": run["status"],
                "iterations": run["iterations"], "solve_seconds": run["solve_seconds"],
                "error": run["final_error"], "best_error": run["best_error"],
                "cpu_seconds": run["solve_seconds"],
                **{column(t): run[f"seconds_to_{t:g}"] for t in TOLERANCES}})
    return rows


def test_the_stored_profiles_come_back_from_a_table_of_their_runs(tmp_path):
    stored = json.loads(RESULTS.read_text())["friction"]["profiles"]
    for row in rows_of(stored):
        write_row(tmp_path, row)
    p = profiles_from_rows(read_rows(tmp_path), stored["solvers"])
    assert p.solvers == stored["solvers"] and len(p.problems) == 16
    got = profiles_json(p)["profiles"]
    for tol, want in stored["profiles"].items():
        assert got[tol]["verdict"] == want["verdict"]
        assert got[tol]["tau"] == pytest.approx(want["tau"], rel=1e-12)
        for solver, rho in want["rho"].items():
            assert got[tol]["rho"][solver] == rho, (tol, solver)


def test_an_error_or_a_missing_run_solves_nothing_and_settings_are_their_own_run():
    base = {"contacts": 3, "budget_s": 1.0, "status": "ok", "message": "absolute",
            "iterations": 5, "solve_seconds": 0.1, "error": 1e-9, "best_error": 1e-9,
            "cpu_seconds": 0.1, **{column(t): 0.1 for t in TOLERANCES}}
    rows = [{**base, "problem": "p1", "solver": "pgs", "settings": ""},
            {**base, "problem": "p1", "solver": "psor", "settings": "omega=1.2",
             **{column(t): 0.05 for t in TOLERANCES}},
            {**base, "problem": "p2", "solver": "pgs", "settings": "", "status": ERROR,
             "iterations": None}]
    p = profiles_from_rows(rows)
    assert p.solvers == ["pgs", "psor omega=1.2"] and [f.label for f in p.problems] == ["p1", "p2"]
    assert p.times(1e-8).tolist() == [[0.1, 0.05], [float("inf"), float("inf")]]
    assert p.runs[1][1].status == "missing" and p.runs[1][0].status == ERROR


def test_the_report_writes_its_page_figure_and_numbers(tmp_path):
    stored = json.loads(RESULTS.read_text())["friction"]["profiles"]
    for row in rows_of(stored)[:24]:
        write_row(tmp_path, row)
    p, page = report(tmp_path)
    text = page.read_text()
    assert page.name == REPORT and f"]({FOLDER}/{FIGURE})" in text
    assert (tmp_path / FOLDER / FIGURE).read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / PROFILES_JSON).read_text())["solvers"] == p.solvers
    assert "| `pgs` | 2 | 2 | 0 | 0 |" in text


def test_a_folder_without_a_table_is_refused(tmp_path):
    with pytest.raises(ParamError, match="no campaign table"):
        report(tmp_path)
