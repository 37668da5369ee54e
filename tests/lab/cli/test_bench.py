"""`marbles-bench` (lab.cli.bench): list, run, compare, solve and report parsing; the JSON
contract and the files of docs/formats.md; curves equal to direct runs; snapshots solved again to
the residual the run reported; one-line refusals with exit code 2."""
import json
import subprocess
import sys

import numpy as np
import pytest

import scenes
from lab.cli import bench
from lab.io.snapshot import load_lcp
from lab.report import compare as cmp
from solver.methods import registry
from solver.parallel import THREADS
from solver.params import resolve
from tests.lab.helpers import PNG, run_cli

PGS20 = registry.settings("pgs", 20, False)  # what `compare` settles with by default


# --------------------------------------------------------------------------------------- run

def test_run_writes_the_documented_report_and_snapshots(tmp_path):
    out = tmp_path / "r.json"
    state, lcp = tmp_path / "s.npz", tmp_path / "l.npz"
    assert bench.main(["run", "--scene", "column", "--solver", "psor", "--iterations", "30",
                       "--steps", "5", "--set", "omega=1.2", "--json", str(out),
                       "--save-state", str(state), "--save-lcp", str(lcp), "--quiet"]) == 0
    report = json.loads(out.read_text())
    for key in ("scene", "solver", "settings", "n_marbles", "steps", "dt", "timing_ms",
                "contacts", "last_step", "max_penetration", "max_speed", "energy",
                "compile_seconds", "wall_seconds"):
        assert key in report
    assert report["settings"]["omega"] == 1.2 and report["settings"]["iterations"] == 30
    assert report["settings"]["threads"] == THREADS.default  # not given: every core
    for stat in ("median", "mean"):
        assert set(report["timing_ms"][stat]) == {"collide", "assemble", "solve", "integrate",
                                                  "total"}
    last = report["last_step"]
    assert len(last["trace"]) == last["iterations"] + 1 and last["status"] in (
        "absolute", "relative", "max_iterations", "divergence")
    with np.load(lcp, allow_pickle=False) as z:
        W, q, lam = z["W"], z["q"], z["lam"]
        dense = np.zeros_like(W)
        np.add.at(dense, (z["W_row"], z["W_col"]), z["W_val"])
        np.testing.assert_allclose(dense, W, atol=1e-12)
        assert z["pairs"].shape == (len(q), 2) and z["normal"].shape == (len(q), 3)
        # The impulses written are the solver's: they reproduce the reported residual.
        assert np.max(np.abs(np.minimum(lam, W @ lam + q))) == pytest.approx(
            last["residual"], rel=1e-9, abs=1e-15)
    with np.load(state, allow_pickle=False) as z:
        assert z["x"].shape == (7, 3) and json.loads(str(z["container"]))["kind"] == "tube"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.npz", "r.json", "s.npz"]


def _final_state(path):
    with np.load(path, allow_pickle=False) as z:
        return z["x"], z["v"]


@pytest.mark.parametrize("warm_start", ["0.5", "1.0"])
def test_a_restart_from_a_saved_state_is_the_uninterrupted_run(tmp_path, warm_start):
    common = ["--solver", "pgs", "--iterations", "10", "--set", f"warm_start={warm_start}",
              "--quiet"]
    whole, half, rest = tmp_path / "whole.npz", tmp_path / "half.npz", tmp_path / "rest.npz"
    assert bench.main(["run", "--scene", "disk", "--steps", "30", "--save-state", str(whole),
                       *common]) == 0
    assert bench.main(["run", "--scene", "disk", "--steps", "12", "--save-state", str(half),
                       *common]) == 0
    assert bench.main(["run", "--state", str(half), "--steps", "18", "--save-state", str(rest),
                       "--json", str(tmp_path / "r.json"), *common]) == 0
    (x, v), (x_rest, v_rest) = _final_state(whole), _final_state(rest)
    assert np.array_equal(x_rest, x) and np.array_equal(v_rest, v)
    # Without the stored impulses the restart is cold for one step: another run.
    with np.load(half, allow_pickle=False) as z:
        np.savez(tmp_path / "old.npz", **{k: z[k] for k in z.files
                                         if k not in ("contact_key", "contact_impulse")})
    assert bench.main(["run", "--state", str(tmp_path / "old.npz"), "--steps", "18",
                       "--save-state", str(rest), *common]) == 0
    assert not np.array_equal(_final_state(rest)[1], v)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["scene"] == "disk" and report["state"] == str(half)
    assert report["scene_params"] == resolve(scenes.get("disk").params, {}, "disk")
    assert report["n_marbles"] == 50


def test_a_run_whose_physics_fails_says_so_first_and_exits_3(tmp_path, run_main):
    out = tmp_path / "r.json"
    code, stdout, err = run_main("run", "--scene", "bowl", "--solver", "jacobi", "--set",
                                 "beta=1", "--set", "warm_start=1", "--steps", "300", "--quiet",
                                 "--json", str(out))
    assert code == 3 and err == ""
    assert stdout.startswith("PHYSICS EXPLODED") or stdout.startswith("PHYSICS NON-FINITE")
    report = json.loads(out.read_text())
    assert report["physics"]["status"] in ("exploded", "non-finite")
    assert report["steps_done"] == report["physics"]["stopped_at"] < 300
    physics = report["physics"]
    assert physics["energy_gain"] is None or physics["energy_gain"] > physics["energy_allowance"]


def test_the_incline_rolling_past_100_m_s_is_correct_physics_and_exits_0(tmp_path, run_main):
    """The marble rolls down the unbounded plane at 5/7 g sin 20 deg and passes 100 m/s near
    step 2100: gravity's work, not an explosion."""
    out = tmp_path / "r.json"
    code, stdout, err = run_main("run", "--scene", "incline", "--steps", "2300", "--quiet",
                                 "--json", str(out))
    assert code == 0 and not stdout.startswith("PHYSICS"), stdout
    report = json.loads(out.read_text())
    physics = report["physics"]
    assert physics["status"] == "ok" and report["steps_done"] == 2300
    assert physics["max_speed"] > 100 and physics["energy_gain"] < 0


def test_a_step_too_large_for_the_radius_warns_in_one_line(run_main):
    code, stdout, err = run_main("run", "--scene", "bowl", "--dt", "1", "--steps", "20",
                                 "--quiet")
    assert err.count("\n") == 1 and "warning: dt=1 s" in err and "tunnel" in err
    assert code == 3 and "PHYSICS ESCAPED" in stdout  # and so it did


def test_a_state_that_does_not_name_its_scene_is_reported_as_a_state(tmp_path, run_main):
    state, old = tmp_path / "s.npz", tmp_path / "old.npz"
    assert run_main("run", "--scene", "column", "--steps", "2", "--save-state", str(state),
                    "--quiet")[0] == 0
    with np.load(state, allow_pickle=False) as z:
        np.savez(old, **{k: z[k] for k in z.files if k != "scene"})
    code, out, _ = run_main("run", "--state", str(old), "--steps", "1", "--quiet",
                            "--json", str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and report["scene"] == "state" and report["state"] == str(old)
    assert "scene_params" not in report and "bowl" not in out
    assert out.startswith(f"state (from {old}) pgs n=7 ")
    # A scene or a scene parameter would be ignored with --state: they are refused instead.
    for command in ("run", "compare"):
        code, _, err = run_main(command, "--state", str(old), "--set", "n=5", "--quiet")
        assert code == 2 and "--set n: a scene parameter" in err and str(old) in err
        code, _, err = run_main(command, "--state", str(old), "--scene", "box", "--quiet")
        assert code == 2 and "--scene box: with --state" in err


@pytest.mark.parametrize("args, fragment", [
    (["--scene", "nope"], "valid: bowl, disk"),
    (["--solver", "nope"], "valid: naive, pgs"),
    (["--set", "bogus=1"], "unknown parameter 'bogus'"),
    (["--set", "n=-5"], "n=-5"),
    (["--solver", "psor", "--set", "omega=2.5"], "omega=2.5"),
    (["--iterations", "0"], "iterations=0"),
    (["--dt", "0"], "dt=0"),
    (["--dt", "nan"], "dt=nan"),
    (["--steps", "-1"], "steps=-1"),
    (["--set", "novalue"], "name=value"),
    (["--threads", "0"], "threads=0 is not valid"),
    (["--threads", str(THREADS.hi + 1)], f"threads={THREADS.hi + 1} is not valid"),
    (["--json", "/nonexistent-dir/r.json"], "/nonexistent-dir"),
])
def test_bad_input_is_one_line_and_exit_2(args, fragment):
    code, out, err = run_cli("run", "--steps", "2", "--quiet", *args)
    assert code == 2
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


# -------------------------------------------------------------------------------------- list

def test_list_names_every_scene_solver_and_parameter(capsys):
    assert bench.main(["list"]) == 0
    text = capsys.readouterr().out
    for word in ("bowl", "disk", "column", "mass-ratio", "box", "naive", "pgs", "psor",
                 "jacobi", "omega", "beta", "warm_start", "seed"):
        assert word in text


def test_list_gives_each_parameter_its_default_unit_range_and_help(capsys):
    assert bench.main(["list"]) == 0
    lines = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    # name=default  [unit]  range  help, the unit left out for pure numbers
    fields = {words[0]: " ".join(words[1:]) for words in lines if words and "=" in words[0]}
    assert fields["omega=1.5"] == "float in (0, 2) relaxation factor ω"
    assert fields["abs_tol=1e-12"] == ("[m/s] float in [0, inf] stop when the natural-map "
                                       "residual is below this")
    assert fields["damping=0"].startswith("[1/s] float in [0, 1000] linear drag")
    assert fields["iterations=20"] == "int in [1, 1e+07] solver iterations per step"
    assert fields["warm_start=0"].startswith("float in [0, 1] fraction of last step's")


def test_no_command_is_an_error_with_the_help_on_stderr(capsys):
    with pytest.raises(SystemExit) as stop:
        bench.main([])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert err.startswith("usage: marbles-bench") and "compare" in err
    assert err.splitlines()[-1] == ("marbles-bench: error: a command is required (list, run, "
                                    "compare, solve, report, collect or campaign)")
    with pytest.raises(SystemExit) as stop:
        bench.main(["--help"])
    out, err = capsys.readouterr()
    assert stop.value.code == 0 and out.startswith("usage: marbles-bench") and err == ""


def test_bench_does_not_import_qt():
    code = ("import sys; from lab.cli import bench; bench.main(['list']); "
            "sys.exit(any(m.split('.')[0] in ('PySide6', 'pyqtgraph', 'OpenGL') "
            "for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


# ----------------------------------------------------------------------------------- compare

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
    assert info["settings"]["threads"] == THREADS.default  # not given: every core
    assert info["solver_settings"]["psor"]["omega"] == 1.2
    for name in registry.METHODS:
        assert info["per_solver"][name]["status"] in ("absolute", "relative", "max_iterations",
                                                      "divergence")
        assert info["final_residual"][name] == pytest.approx(
            data["residual"][list(data["solver"]).index(name), -1])


def test_saved_curves_are_the_solvers_own_on_the_same_problem(column_out):
    """Rebuild the frozen step independently and run each solver directly."""
    data = np.load(column_out / "benchmark.npy", allow_pickle=False)
    frozen = cmp.settle(scenes.build("column"), 3, PGS20)
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
    frozen = cmp.settle(scenes.build("disk"), 20, PGS20)
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
    (["--threads", "0"], "threads=0 is not valid"),
])
def test_compare_bad_input_is_one_line_and_exit_2(tmp_path, run_main, args, fragment):
    code, out, err = run_main("compare", "--scene", "column", "--iterations", "5", "--quiet",
                             "--out", str(tmp_path / "o"), *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_compare_from_a_saved_state(tmp_path):
    state = tmp_path / "s.npz"
    assert bench.main(["run", "--scene", "disk", "--steps", "15", "--save-state", str(state),
                       "--quiet"]) == 0
    out = tmp_path / "o"
    assert bench.main(["compare", "--state", str(state), "--settle", "1", "--iterations", "10",
                       "--solvers", "pgs", "--out", str(out), "--quiet"]) == 0
    info = json.loads((out / "benchmark.json").read_text())
    assert info["scene"] == "disk" and info["state"] == str(state) and info["n_marbles"] == 50
    assert info["scene_params"]["n"] == 50
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


def test_a_warm_comparison_from_a_saved_state_is_the_uninterrupted_one(tmp_path):
    state = tmp_path / "s.npz"
    warm = ["--set", "warm_start=0.5", "--quiet"]
    assert bench.main(["run", "--scene", "disk", "--steps", "15", "--save-state", str(state),
                       *warm]) == 0
    compare = ["compare", "--iterations", "10", "--solvers", "pgs,jacobi", "--warm-start",
               "--repeats", "1", *warm]
    assert bench.main([*compare, "--scene", "disk", "--settle", "17", "--out",
                       str(tmp_path / "a")]) == 0
    assert bench.main([*compare, "--state", str(state), "--settle", "2", "--out",
                       str(tmp_path / "b")]) == 0
    whole, restarted = (np.load(tmp_path / d / "benchmark.npy", allow_pickle=False)
                        for d in "ab")
    assert np.array_equal(whole["residual"], restarted["residual"])


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
    # The final impulses: the run's own (the snapshot's lam) and, solved again, the residual.
    with np.load(lcp) as z:
        np.testing.assert_allclose(solved["lam"], z["lam"], rtol=1e-12, atol=1e-300)
        problem = load_lcp(lcp)[0]
    assert problem.residual(np.array(solved["lam"])) == solved["residual"]
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


def test_compare_with_threads_records_them_and_solves_in_blocks(tmp_path):
    """A pile of MIN_MARBLES marbles settled with two threads is frozen in blocks: the file
    says so, and the curves are the serial kernels' on those contacts in that order."""
    from dataclasses import replace

    from solver.parallel import MIN_MARBLES

    code, _, err = run_cli("compare", "--scene", "box", "--set", f"n={MIN_MARBLES}", "--settle",
                           "30", "--iterations", "10", "--solvers", "pgs", "--repeats", "1",
                           "--threads", "2", "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    info = json.loads((tmp_path / "benchmark.json").read_text())
    assert info["settings"]["threads"] == 2
    frozen = cmp.settle(scenes.build("box", {"n": MIN_MARBLES}), 30, PGS20, threads=2)
    assert frozen.problem.partition is not None
    serial = replace(frozen.problem, partition=None)
    direct = registry.METHODS["pgs"].solve(serial, np.zeros(serial.m),
                                           registry.settings("pgs", 10, True, cmp.NO_STOP))
    data = np.load(tmp_path / "benchmark.npy", allow_pickle=False)
    np.testing.assert_array_equal(data["residual"][0], direct.trace)


def test_ctrl_c_inside_numbas_cache_loading_is_an_interrupt(monkeypatch, capsys):
    """A SIGINT that lands while Numba unpickles a cached kernel surfaces as a SystemError whose
    context is the KeyboardInterrupt: still exit 130 with the one line; any other SystemError
    is not swallowed."""
    def interrupted_while_loading(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as err:
            raise SystemError("CPUDispatcher returned a result with an exception set") from err

    monkeypatch.setattr(bench, "cmd_list", interrupted_while_loading)
    assert bench.main(["list"]) == 130
    assert capsys.readouterr().err == "marbles-bench: interrupted; no partial file written\n"

    def broken(args):
        raise SystemError("a real fault")

    monkeypatch.setattr(bench, "cmd_list", broken)
    with pytest.raises(SystemError, match="a real fault"):
        bench.main(["list"])
