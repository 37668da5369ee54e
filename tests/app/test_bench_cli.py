"""`marbles-bench`: the JSON contract, snapshot files, and one-line refusals with exit code 2."""
import json
import subprocess
import sys

import numpy as np
import pytest

from app import bench


def run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "app.bench", *args], capture_output=True,
                          text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


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


def test_state_round_trip_continues_the_run(tmp_path):
    state = tmp_path / "s.npz"
    assert bench.main(["run", "--scene", "disk", "--steps", "3", "--save-state", str(state),
                       "--quiet"]) == 0
    assert bench.main(["run", "--state", str(state), "--steps", "2", "--quiet",
                       "--json", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["n_marbles"] == 50


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
    (["--json", "/nonexistent-dir/r.json"], "/nonexistent-dir"),
])
def test_bad_input_is_one_line_and_exit_2(args, fragment):
    code, out, err = run_cli("run", "--steps", "2", "--quiet", *args)
    assert code == 2
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_unwritable_output_fails_before_the_run_and_leaves_nothing(tmp_path):
    good = tmp_path / "r.json"
    code, _, err = run_cli("run", "--steps", "1000000", "--json", str(good),
                           "--save-lcp", str(tmp_path / "missing" / "l.npz"))
    assert code == 2 and "missing" in err
    assert list(tmp_path.iterdir()) == []


def test_list_names_every_scene_solver_and_parameter(capsys):
    assert bench.main(["list"]) == 0
    text = capsys.readouterr().out
    for word in ("bowl", "disk", "column", "mass-ratio", "box", "naive", "pgs", "psor",
                 "jacobi", "omega", "beta", "warm_start", "seed"):
        assert word in text


def test_bench_does_not_import_qt():
    code = ("import sys; from app import bench; bench.main(['list']); "
            "sys.exit(any(m.split('.')[0] in ('PySide6', 'pyqtgraph', 'OpenGL') "
            "for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0
