"""lab.report.tables: the one table of targets, the first iteration at a target, a run's row of a
scene's table (frictionless and frictional alike) and the markdown of a table."""
from __future__ import annotations

import numpy as np

from lab.report import tables
from lab.report.compare import ComparisonTable
from lab.report.friction_series import FrictionRun, FrictionSnapshot


def run(residual, seconds=None, status="max_iterations", rejected=None, relaxation=None):
    residual = np.asarray(residual, dtype=np.float64)
    seconds = (np.arange(residual.size) * 1e-3 if seconds is None
               else np.asarray(seconds, dtype=np.float64))
    return FrictionRun(residual, seconds, status, relaxation, rejected)


def test_a_scene_row_reads_its_numbers_off_the_curves():
    # Falls by 10x per iteration from 1 m/s: 1e-6 at iteration 6, 1e-8 at 8; 25 iterations.
    curve = 10.0 ** -np.arange(26.0)
    never = np.full(26, 3e-5)
    snap = FrictionSnapshot("friction-bowl", "bowl", 300, 350, 900, 1.0, 2.0,
                            {"pgs": run(curve), "prox-gs": run(never, rejected=4,
                                                                 status="stagnation")})
    fast, stalled = tables.friction_rows(snap)
    assert fast == ["`pgs`", "max_iterations", "1.00e-20", "6", "6.000", "8", "8.000",
                    "1.00e-25", "n/a", "n/a"]
    assert stalled == ["`prox-gs`", "stagnation", "3.00e-05", "not reached", "not reached",
                       "not reached", "not reached", "3.00e-05", "n/a", "4"]


def test_table_lines_are_markdown():
    assert tables.table_lines(["a", "b"], [["1", "2"]]) == ["| a | b |", "|---|---|", "| 1 | 2 |"]


def test_reach_is_the_first_iteration_at_or_below_the_target():
    curve = np.array([1.0, 1e-3, 1e-6, 1e-7, np.nan])
    assert tables.reach(curve, 1e-6) == 2 and tables.reach(curve, 1e-3) == 1
    assert tables.reach(curve, 1e-9) is None and tables.reach(np.zeros(0), 1.0) is None


def test_the_targets_are_tighter_without_friction():
    assert tables.TOLS[False] == (1e-6, 1e-10) and tables.TOLS[True] == (1e-6, 1e-8)
    assert tables.target_header(True) == ["it to 1e-06", "ms to 1e-06", "it to 1e-08",
                                          "ms to 1e-08"]


def test_a_frictionless_row_reads_its_numbers_off_the_table():
    table = ComparisonTable(["a", "b"], np.array([[1.0] + [10.0 ** -k for k in range(1, 25)],
                                                  [np.inf] * 25]),
                            np.tile(np.arange(25.0) * 1e-3, (2, 1)), ["converged", "diverged"])
    fast, broken = tables.scene_rows(table)
    assert fast == ["`a`", "converged", "1.00e-20", "6", "6.000", "10", "10.000", "1.00e-24"]
    assert broken == ["`b`", "diverged", "inf", "not reached", "not reached", "not reached",
                      "not reached", "n/a"]
