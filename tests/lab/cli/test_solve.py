"""lab.cli.solve (`marbles-bench solve`): one code path for every format, the format named by
--lcp or --fclib or read off the file's suffix; the same trace either way; bad sources refused in
one line with exit code 2."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from lab.cli import bench
from lab.cli import solve as solve_command
from lab.io.fclib import save_fclib
from lab.io.snapshot import load_lcp
from solver.explicit import MatrixProblem
from solver.existence import existence


def untimed(stdout: str) -> list[str]:
    """The printed trace without its seconds (the last column of an iteration's line, which
    starts with the right-aligned iteration number)."""
    return [line.rsplit("  ", 1)[0] if line.startswith(" ") else line
            for line in stdout.splitlines()]


def outcome(stdout: str, solver: str) -> str:
    """The summary line of a solve by `solver`."""
    return next(line for line in stdout.splitlines() if line.startswith(f"{solver}: "))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """An LCP snapshot and an FCLIB file of the same frictional step of a small bowl."""
    folder = tmp_path_factory.mktemp("solve")
    lcp, fclib = folder / "step.npz", folder / "step.hdf5"
    assert bench.main(["run", "--scene", "bowl", "--set", "n=30", "--set", "mu=0.5", "--steps",
                       "20", "--save-lcp", str(lcp), "--save-fclib", str(fclib),
                       "--quiet"]) == 0
    return lcp, fclib


@pytest.mark.parametrize("option, suffix", [("--lcp", ".npz"), ("--fclib", ".hdf5"),
                                            ("--fclib", ".h5")])
def test_a_file_named_alone_is_solved_as_its_suffix_says(saved, option, suffix, tmp_path,
                                                         run_main):
    source = saved[0] if option == "--lcp" else saved[1]
    path = tmp_path / f"problem{suffix}"
    shutil.copyfile(source, path)
    common = ["--solver", "nsgs", "--iterations", "8", "--start", "stored"]
    code, by_option, err = run_main("solve", option, str(path), *common,
                                    "--json", str(tmp_path / "a.json"))
    assert code == 0, err
    code, by_suffix, err = run_main("solve", str(path), *common,
                                    "--json", str(tmp_path / "b.json"))
    assert code == 0, err
    assert untimed(by_suffix) == untimed(by_option)
    a, b = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    assert a.keys() == b.keys() and a["trace"] == b["trace"] and a["lam"] == b["lam"]
    assert ("fclib_error" in by_option.splitlines()[1]) == (option == "--fclib")


def test_both_formats_of_one_step_give_the_same_trace(saved, run_main):
    traces = []
    for option, path in zip(("--lcp", "--fclib"), saved):
        code, out, err = run_main("solve", option, str(path), "--solver", "nsgs",
                                  "--iterations", "6")
        assert code == 0, err
        traces.append([line.split()[1] for line in out.splitlines() if line.startswith(" ")])
    assert traces[0] == traces[1] and len(traces[0]) == 7


def test_both_formats_say_alike_what_the_answer_makes_the_contacts_do(saved, run_main,
                                                                      tmp_path):
    """The JSON's contact_states and the summary's phrase, the same for the LCP snapshot and
    the FCLIB file of one step (the counts add up to the step's contacts)."""
    found = []
    for option, path in zip(("--lcp", "--fclib"), saved):
        out_json = tmp_path / f"{option[2:]}.json"
        code, out, err = run_main("solve", option, str(path), "--solver", "nsgs",
                                  "--iterations", "40", "--json", str(out_json))
        assert code == 0, err
        report = json.loads(out_json.read_text())
        states = report["contact_states"]
        assert sum(states[k] for k in ("separated", "sticking", "sliding")) == report["contacts"]
        assert f"{states['sticking']} stick" in outcome(out, "nsgs")
        found.append(states)
    assert found[0] == found[1]


@pytest.mark.parametrize("args, fragment", [
    (["problem.txt"], "unknown format"),
    ([], "one of the arguments FILE --lcp --fclib is required"),
    (["a.npz", "--lcp", "b.npz"], "not allowed with"),
    (["--lcp", "a.npz", "--fclib", "b.hdf5"], "not allowed with"),
])
def test_a_bad_source_is_one_line_and_exit_2(args, fragment, tmp_path, run_main, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main("solve", *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err, err


@pytest.mark.parametrize("index", [0, 1])
def test_drift_says_how_far_the_answer_still_moves(saved, index, tmp_path, run_main):
    """--drift N: one more line, and the same numbers in the JSON, measured from the answer
    the trace ends at; a bad count is refused in one line."""
    out_json = tmp_path / "d.json"
    code, out, err = run_main("solve", str(saved[index]), "--solver", "pgs", "--iterations",
                              "30", "--drift", "40", "--json", str(out_json))
    assert code == 0, err
    last = out.splitlines()[-1]
    assert last.startswith("drift over 40 more iterations: impulses moved ")
    report = json.loads(out_json.read_text())
    moved = report["drift"]
    assert moved["iterations"] == 40 and moved["verdict"] in last
    assert moved["residual_before"] == pytest.approx(report["residual"], rel=1e-12)
    assert 0.0 <= moved["impulse_share"] and moved["residual_after"] <= moved["residual_before"]
    code, _, err = run_main("solve", str(saved[index]), "--drift", "-1")
    assert code == 2 and "drift=-1" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("index", [0, 1])
def test_a_frictional_solve_says_what_its_last_iteration_moved_and_whether_a_solution_exists(
        saved, index, tmp_path, run_main):
    """The last iteration's change, split into velocities and impulses, equals the difference
    of the answers of N - 1 and N iterations (two solves from the same start); FCLIB's error
    and the existence test's verdict are printed and written alike for both formats."""
    out_json = tmp_path / "c.json"
    code, out, err = run_main("solve", str(saved[index]), "--solver", "pgs", "--iterations",
                              "12", "--json", str(out_json))
    assert code == 0, err
    report = json.loads(out_json.read_text())
    code, _, err = run_main("solve", str(saved[index]), "--solver", "pgs", "--iterations", "11",
                            "--json", str(tmp_path / "b.json"))
    assert code == 0, err
    lam11 = np.array(json.loads((tmp_path / "b.json").read_text())["lam"])
    lam12 = np.array(report["lam"])
    step = report["last_iteration"]
    assert step["impulse_change"] == pytest.approx(np.linalg.norm(lam12 - lam11), rel=1e-9)
    assert step["impulse_share"] == pytest.approx(
        np.linalg.norm(lam12 - lam11) / np.linalg.norm(lam11), rel=1e-9)
    assert step["residual_after"] == pytest.approx(report["residual"], rel=1e-12)
    assert 0.0 < step["velocity_change"] and step["verdict"] in out
    lines = out.splitlines()
    assert lines[-2].startswith("last iteration: velocities moved ")
    assert f"{step['velocity_change']:.3e} m/s" in lines[-2]
    exists = report["existence"]
    assert lines[-1].startswith(f"existence: {exists['verdict']}")
    assert exists["verdict"] == "exists" and exists["inner_margin"] > 0.0
    assert exists["contacts"] == report["contacts"]
    final = report.get("final_fclib_error", report.get("fclib_error"))
    assert f"FCLIB error {final:.6e}" in outcome(out, "pgs")


def test_the_bowl_of_30_has_a_solution_by_a_velocity_worked_by_hand(saved):
    """v_i = α (p_i − O), O far below the pile: every pair of marbles separates along its normal
    with no slip, and a wall contact gets u ∝ (O's height below it) ẑ, in int K* where
    n_z > μ ‖n_xy‖. That holds for every wall contact of this step, so a solution exists."""
    problem, _ = load_lcp(str(saved[0]))
    wall = problem.body_a < 0
    n = problem.normal[wall]
    assert np.all(n[:, 2] > problem.mu[wall] * np.hypot(n[:, 0], n[:, 1]))
    assert existence(problem).verdict == "exists"


def test_no_existence_skips_the_test_and_a_frictionless_solve_has_neither_check(
        saved, tmp_path, run_main):
    out_json = tmp_path / "n.json"
    code, out, err = run_main("solve", str(saved[0]), "--solver", "pgs", "--iterations", "5",
                              "--no-existence", "--json", str(out_json))
    assert code == 0, err
    report = json.loads(out_json.read_text())
    assert report["existence"] is None and "existence:" not in out
    assert report["last_iteration"]["iterations"] == 1
    lcp = tmp_path / "frictionless.npz"
    assert bench.main(["run", "--scene", "bowl", "--set", "n=10", "--steps", "5",
                       "--save-lcp", str(lcp), "--quiet"]) == 0
    code, out, err = run_main("solve", str(lcp), "--solver", "pgs", "--iterations", "5",
                              "--json", str(out_json))
    assert code == 0, err
    report = json.loads(out_json.read_text())
    assert "last_iteration" not in report and "existence" not in report
    assert out.splitlines()[-1].startswith("pgs: ")


@pytest.mark.parametrize("contacts", [1, 4])
def test_an_inert_contact_that_approaches_is_reported_without_a_solution(contacts, tmp_path,
                                                                        run_main):
    """W = 0 and q_n = -1: no impulse can stop the approach, whatever the solver does."""
    q = np.zeros(3 * contacts)
    q[0::3] = -1.0
    path = save_fclib(tmp_path / "blocked.hdf5", MatrixProblem.from_dense(
        np.zeros((3 * contacts, 3 * contacts)), q, np.full(contacts, 0.5)))
    code, out, err = run_main("solve", "--fclib", str(path), "--solver", "pgs", "--iterations",
                              "3", "--json", str(tmp_path / "s.json"))
    assert code == 0, err
    last = out.splitlines()[-1]
    assert last.startswith("existence: no solution: contact 0's normal row of W is zero and "
                           "q_n = -1 m/s < 0") and "strictly feasible" not in out
    assert json.loads((tmp_path / "s.json").read_text())["existence"]["verdict"] == "no solution"


def test_the_existence_test_is_skipped_above_its_size_with_a_line_saying_how_to_run_it(
        saved, tmp_path, run_main):
    problem, _ = load_lcp(str(saved[0]))
    code, out, err = run_main("solve", str(saved[0]), "--solver", "pgs", "--iterations", "3",
                              "--existence-contacts", str(problem.m - 1),
                              "--json", str(tmp_path / "s.json"))
    assert code == 0, err
    assert out.splitlines()[-1] == (
        f"existence: skipped, {problem.m} contacts is above --existence-contacts "
        f"{problem.m - 1} (raise it to run the test, within --existence-seconds 30)")
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["existence"] is None and report["existence_skipped"] == out.splitlines()[-1]
    code, out, _ = run_main("solve", str(saved[0]), "--solver", "pgs", "--iterations", "3",
                            "--existence-contacts", str(problem.m))
    assert code == 0 and out.splitlines()[-1].startswith("existence: exists")


def test_the_existence_test_tells_its_progress_and_takes_its_budget(saved, run_main,
                                                                   monkeypatch):
    """Above PROGRESS_CONTACTS each program is announced on stderr; a budget spent says so in
    words (never 'nan'); a budget that is not a positive number is refused before any work."""
    monkeypatch.setattr(solve_command, "PROGRESS_CONTACTS", 1)
    code, out, err = run_main("solve", str(saved[0]), "--solver", "pgs", "--iterations", "3",
                              "--existence-seconds", "1e-9")
    assert code == 0, err
    assert err.startswith("existence: ") and "(budget 1e-09 s) ..." in err
    last = out.splitlines()[-1]
    assert last.startswith("existence: undecided") and "nan" not in last
    for bad in ("0", "-1", "nan"):
        code, out, err = run_main("solve", str(saved[0]), "--existence-seconds", bad)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert f"existence_seconds={bad} is not valid" in err
