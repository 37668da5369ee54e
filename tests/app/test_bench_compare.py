"""`marbles-bench compare` and `solve`: the files of DESIGN.md, curves equal to direct runs,
snapshots solved again to the residual the run reported, one-line refusals with exit code 2."""
import json
import subprocess
import sys

import numpy as np
import pytest

import scenes
from app import bench
from solver import compare as cmp
from solver import registry

PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "app.bench", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def run_main(capsys):
    """In-process `marbles-bench` (fast; an unexpected exception fails the test by itself):
    returns (exit code, stdout, stderr)."""
    def call(*args):
        try:
            code = bench.main(list(args))
        except SystemExit as stop:
            code = stop.code
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return call


@pytest.fixture(scope="module")
def column_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp") / "new" / "folder"
    assert bench.main(["compare", "--scene", "column", "--settle", "3", "--iterations", "40",
                       "--out", str(out), "--set", "psor.omega=1.2", "--quiet"]) == 0
    return out


def test_compare_writes_the_three_files(column_out):
    assert sorted(p.name for p in column_out.iterdir()) == ["benchmark.json", "benchmark.npy",
                                                            "benchmark.png"]
    assert (column_out / "benchmark.png").read_bytes()[:8] == PNG
    data = np.load(column_out / "benchmark.npy", allow_pickle=False)
    assert data.dtype.names == ("solver", "residual", "seconds")
    assert list(data["solver"]) == list(registry.METHODS)  # one row per registered solver
    assert data["residual"].shape == (len(registry.METHODS), 41)
    info = json.loads((column_out / "benchmark.json").read_text())
    assert info["scene"] == "column" and info["step"] == 3 and info["contact_count"] == 7
    assert info["time"] == pytest.approx(2 * 0.02) and "natural map" in info["metric"]
    assert info["settings"]["settle_solver"] == "pgs" and info["settings"]["iterations"] == 40
    assert info["solver_settings"]["psor"]["omega"] == 1.2
    for name in registry.METHODS:
        assert info["per_solver"][name]["status"] in ("absolute", "relative", "max_iterations",
                                                      "divergence")
        assert info["final_residual"][name] == pytest.approx(
            data["residual"][list(data["solver"]).index(name), -1])


def test_saved_curves_are_the_solvers_own_on_the_same_problem(column_out):
    """Rebuild the frozen step independently and run each solver directly."""
    data = np.load(column_out / "benchmark.npy", allow_pickle=False)
    frozen = cmp.settle(scenes.build("column"), 3)
    for row in data:
        name = str(row["solver"])
        params = {**cmp.NO_STOP, **({"omega": 1.2} if name == "psor" else {})}
        result = registry.METHODS[name].solve(frozen.problem, np.zeros(frozen.problem.m),
                                              registry.settings(name, 40, True, params))
        np.testing.assert_array_equal(row["residual"][:result.trace.size], result.trace)
        assert np.all(np.diff(row["seconds"]) >= 0.0) and row["seconds"][0] == 0.0


def test_compare_subset_and_warm_start(tmp_path):
    code, out, err = run_cli("compare", "--scene", "disk", "--settle", "20", "--iterations", "15",
                             "--solvers", "psor,pgs", "--warm-start", "--out", str(tmp_path))
    assert code == 0, err
    data = np.load(tmp_path / "benchmark.npy", allow_pickle=False)
    assert list(data["solver"]) == ["psor", "pgs"]
    info = json.loads((tmp_path / "benchmark.json").read_text())
    assert info["warm_start"] is True and info["settings"]["warm_start"] is True
    frozen = cmp.settle(scenes.build("disk"), 20)
    direct = registry.METHODS["pgs"].solve(frozen.problem, frozen.warm.copy(),
                                           registry.settings("pgs", 15, True, cmp.NO_STOP))
    np.testing.assert_array_equal(data["residual"][1], direct.trace)
    assert "disk step 20" in out


@pytest.mark.parametrize("args, fragment", [
    (["--solvers", "pgs,nope"], "valid: naive, pgs, psor, jacobi"),
    (["--solvers", "pgs,,psor"], "empty name"),
    (["--solvers", "pgs,pgs"], "twice"),
    (["--settle", "0"], "settle=0"),
    (["--settle", "x"], "settle=x"),
    (["--iterations", "0"], "iterations=0"),
    (["--iterations", "1.5"], "iterations=1.5"),
    (["--scene", "nope"], "valid: bowl, disk"),
    (["--set", "bogus=1"], "unknown parameter 'bogus'"),
    (["--set", "omega=2.5"], "omega=2.5"),
    (["--set", "psor.omega=0"], "omega=0"),
    (["--set", "nope.omega=1"], "'nope' is not a compared solver"),
    (["--repeats", "0"], "repeats=0"),
    (["--settle-iterations", "0"], "iterations=0"),
    (["--dt", "-1"], "dt=-1"),
    (["--solver", "nope"], "unknown solver 'nope'"),
])
def test_compare_bad_input_is_one_line_and_exit_2(tmp_path, run_main, args, fragment):
    code, out, err = run_main("compare", "--scene", "column", "--iterations", "5", "--quiet",
                             "--out", str(tmp_path / "o"), *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_compare_unwritable_out_fails_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    # A huge settle would take minutes: failing at once shows the check comes first.
    for out in (blocker, blocker / "sub"):
        code, _, err = run_cli("compare", "--scene", "bowl", "--settle", "9000000", "--out",
                               str(out))
        assert code == 2 and err.count("\n") == 1 and str(blocker) in err
    (tmp_path / "d" / "benchmark.png").mkdir(parents=True)
    code, _, err = run_cli("compare", "--settle", "9000000", "--out", str(tmp_path / "d"))
    assert code == 2 and "benchmark.png" in err and "is a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "file"]
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["benchmark.png"]


# ------------------------------------------------------------------------------------- solve

@pytest.mark.parametrize("solver, extra", [("pgs", []), ("psor", ["--set", "omega=1.3"]),
                                           ("jacobi", [])])
def test_solve_reproduces_the_residual_of_run(tmp_path, solver, extra):
    lcp, report = tmp_path / "l.npz", tmp_path / "r.json"
    assert bench.main(["run", "--scene", "disk", "--steps", "12", "--solver", solver,
                       "--iterations", "25", *extra, "--save-lcp", str(lcp), "--json",
                       str(report), "--quiet"]) == 0
    expected = json.loads(report.read_text())["last_step"]
    out = tmp_path / "s.json"
    code, text, err = run_cli("solve", "--lcp", str(lcp), "--solver", solver, "--iterations",
                              "25", *extra, "--json", str(out))
    assert code == 0, err
    solved = json.loads(out.read_text())
    assert solved["residual"] == pytest.approx(expected["residual"], rel=1e-12, abs=1e-300)
    np.testing.assert_allclose(solved["trace"], expected["trace"], rtol=1e-12)
    assert solved["stored_lam_residual"] == pytest.approx(expected["residual"], rel=1e-12)
    # The printed trace: a header, one line per iteration, a summary.
    lines = text.strip().splitlines()
    assert len([ln for ln in lines if not ln.startswith("#")]) == 25 + 1 + 1
    assert float(lines[-2].split()[1]) == pytest.approx(expected["residual"], rel=1e-6)


def test_solve_from_the_stored_impulses(tmp_path):
    lcp = tmp_path / "l.npz"
    assert bench.main(["run", "--scene", "column", "--steps", "2", "--save-lcp", str(lcp),
                       "--quiet"]) == 0
    out = tmp_path / "s.json"
    assert bench.main(["solve", "--lcp", str(lcp), "--start", "stored", "--iterations", "3",
                       "--json", str(out)]) == 0
    solved = json.loads(out.read_text())
    assert solved["trace"][0] == pytest.approx(solved["stored_lam_residual"], rel=1e-12)


def test_solve_refuses_unusable_files(tmp_path, run_main):
    text_file = tmp_path / "t.npz"
    text_file.write_text("hello")
    matrix_only = tmp_path / "w.npz"
    np.savez(matrix_only, W=np.eye(2), q=np.array([-1.0, 1.0]))
    good = tmp_path / "g.npz"
    assert run_main("run", "--scene", "column", "--steps", "1", "--save-lcp", str(good),
                    "--quiet")[0] == 0
    cases = [
        (["--lcp", str(tmp_path / "absent.npz")], "no such"),
        (["--lcp", str(text_file)], "t.npz"),
        (["--lcp", str(matrix_only)], "no contact geometry"),
        (["--lcp", str(good), "--solver", "nope"], "valid: naive, pgs"),
        (["--lcp", str(good), "--iterations", "0"], "iterations=0"),
        (["--lcp", str(good), "--set", "omega=1"], "unknown parameter 'omega'"),
        (["--lcp", str(good), "--json", str(tmp_path / "no" / "x.json")], "does not exist"),
        ([], "--lcp"),
    ]
    code, out, err = run_cli("solve", "--lcp", str(matrix_only))  # the real process too
    assert code == 2 and err.count("\n") == 1 and "no contact geometry" in err
    for args, fragment in cases:
        code, out, err = run_main("solve", *args)
        assert code == 2 and err.count("\n") == 1 and fragment in err, (args, err)
        assert "Traceback" not in err and out == ""


def test_an_interrupted_compare_leaves_no_file(tmp_path):
    import signal

    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "app.bench", "compare", "--scene", "bowl",
                             "--settle", "1000000", "--out", str(out)],
                            stderr=subprocess.PIPE, text=True)
    # Interrupt only once the settle loop reports progress: a signal that lands while Numba is
    # still compiling tests Numba, not us.
    first = proc.stderr.readline()
    assert "bowl" in first or "settl" in first.lower(), first
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    assert list(out.iterdir()) == []


def test_compare_from_a_saved_state(tmp_path):
    state = tmp_path / "s.npz"
    assert bench.main(["run", "--scene", "disk", "--steps", "15", "--save-state", str(state),
                       "--quiet"]) == 0
    out = tmp_path / "o"
    assert bench.main(["compare", "--state", str(state), "--settle", "1", "--iterations", "10",
                       "--solvers", "pgs", "--out", str(out), "--quiet"]) == 0
    info = json.loads((out / "benchmark.json").read_text())
    assert info["scene"].endswith(f"(from {state})") and info["n_marbles"] == 50
    # The same state stepped once more by `run` gives the same first-iteration residual.
    report = tmp_path / "r.json"
    assert bench.main(["run", "--state", str(state), "--steps", "1", "--iterations", "10",
                       "--json", str(report), "--quiet"]) == 0
    trace = json.loads(report.read_text())["last_step"]["trace"]
    data = np.load(out / "benchmark.npy", allow_pickle=False)
    np.testing.assert_array_equal(data["residual"][0], trace)
    bad = tmp_path / "bad.npz"
    bad.write_text("x")
    code, _, err = run_cli("compare", "--state", str(bad), "--out", str(tmp_path / "o2"))
    assert code == 2 and "bad.npz" in err and err.count("\n") == 1
    assert not (tmp_path / "o2").exists()
