"""lab/report/friction_report.py: the frictional scenes' parameters, the CLI's scene list, and the
cells of the tables built from runs whose numbers are known."""
from __future__ import annotations

import numpy as np
import pytest

from lab.report import friction_report as fr
from lab.report.friction_series import FrictionRun, FrictionSnapshot
from lab.report.friction_verdicts import Outcome
from solver.params import ParamError


def run(residual, seconds=None, status="max_iterations", rejected=None, relaxation=None):
    residual = np.asarray(residual, dtype=np.float64)
    seconds = (np.arange(residual.size) * 1e-3 if seconds is None
               else np.asarray(seconds, dtype=np.float64))
    return FrictionRun(residual, seconds, status, relaxation, rejected)


def test_a_frictionless_scene_gets_mu_and_mu_wall_a_frictional_one_keeps_its_own():
    assert fr.frictional_params("bowl") == {"mu": 0.5, "mu_wall": 0.5}
    assert fr.frictional_params("pyramid") == {}  # μ = 5 of its own


@pytest.mark.parametrize("text, fragment", [
    ("friction-bowl,nope", "unknown frictional scene 'nope'"),
    ("friction-box,friction-box", "lists a scene twice"),
])
def test_bad_scene_lists_are_refused_in_one_line(text, fragment):
    with pytest.raises(ParamError, match=fragment) as caught:
        fr.parse_friction_scenes(text)
    assert "\n" not in str(caught.value)


def test_scene_lists_keep_the_users_order_and_none_is_empty():
    assert fr.parse_friction_scenes("friction-box, friction-bowl") == ["friction-box",
                                                                     "friction-bowl"]
    assert fr.parse_friction_scenes("none") == []


def test_outcome_cells_say_iterations_best_or_diverged():
    assert fr.outcome_cell(Outcome(False, 412, 1e-9)) == "412 it"
    assert fr.outcome_cell(Outcome(False, None, 4.7e-5)) == "best 4.70e-05"
    assert fr.outcome_cell(Outcome(True, None, np.inf)) == "diverged"


def test_a_scene_row_reads_its_numbers_off_the_curves():
    # Falls by 10x per iteration from 1 m/s: 1e-6 at iteration 6, 1e-8 at 8; 25 iterations.
    curve = 10.0 ** -np.arange(26.0)
    never = np.full(26, 3e-5)
    snap = FrictionSnapshot("friction-bowl", "bowl", 300, 350, 900, 1.0, 2.0,
                            {"pgs": run(curve), "prox-gs": run(never, rejected=4,
                                                                 status="stagnation")})
    fast, stalled = fr.scene_rows(snap)
    assert fast == ["`pgs`", "max_iterations", "1.00e-20", "6", "6.000", "8", "8.000",
                    "1.00e-25", "n/a", "n/a"]
    assert stalled == ["`prox-gs`", "stagnation", "3.00e-05", "not reached", "not reached",
                       "not reached", "not reached", "3.00e-05", "n/a", "4"]


def test_the_blocked_pair_row_says_which_won():
    curve = 10.0 ** -np.arange(12.0)           # reaches 1e-6 at 6
    slower = 10.0 ** (-np.arange(12.0) / 2)    # reaches 1e-6 at 12: not within 11
    snap = FrictionSnapshot("friction-box", "box", 200, 2000, 5000, 1.0, 1.0,
                            {"prox-gs r=blocked": run(curve), "prox-gs": run(slower)})
    rows = fr._pair_rows({"friction-box": [snap]}, fr.BLOCKED_PAIRS)
    assert rows == [["friction-box", "200", "prox-gs", "best 3.16e-06", "6 it", "yes"]]


def test_table_lines_are_markdown():
    assert fr.table_lines(["a", "b"], [["1", "2"]]) == ["| a | b |", "|---|---|", "| 1 | 2 |"]
