"""The scripts under benchmarks/ keep running: each answers --help with its own command line,
and the cheap ones finish a tiny run and print their report. Nothing here is timed: the figures
they print depend on the machine, so only their presence is checked."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "__init__")
# A run of a few steps of a small scene each, and a line its report always prints.
TINY_RUNS = {
    "bit_for_bit": (["--tree", ".", "--scenes", "column n=4", "--threads", "1", "--steps", "3"],
                    "| column n=4 | 1 threads | 3 steps | bit for bit |"),
    "alarm_sweep": (["--scenes", "mass-ratio", "--solvers", "pgs", "--frictions", "0.5",
                     "--steps", "40"], "| mass-ratio | pgs | 0.5 | "),
    "friction_cost": (["column", "--settle", "2", "--rounds", "1", "--steps", "2"],
                      "with friction / without:"),
    "handmade_fclib": (["--stacks", "tetrahedron", "--exports", "none", "--solvers",
                        "newton,pgs", "--sweeps", "500"], "| `newton` | "),
    "interior_point": (["--n", "10", "--step", "60", "--iterations", "5", "--problems", "none"],
                       "bowl of 10, step 60:"),
    "memory": (["--scene", "column", "--steps", "40", "--points", "2"], "physics ok"),
    "newton": (["--piles", "column"], "| column, step 50 | 7 | absolute |"),
    "pile_stability": (["--piles", "column", "--steps", "2", "--runs", "prox-jacobi"],
                       "| column | "),
    "profiles": (["--scenes", "incline", "--budget", "0.05", "--solvers", "pgs,newton"],
                 "| incline angle=20 μ=0.3 step 10 | 1 |"),
    "step": (["--scene", "column", "--rounds", "1", "--steps", "5"], "this:"),
    "threshold": (["350", "--settle", "1", "--rounds", "1", "--steps", "1"], "n=350: threads 1"),
    "window_keys": (["--repeats", "1", "--run=--scene column"], "colour key C "),
}


def run_module(name: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", f"benchmarks.{name}", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=480)


def test_every_script_is_found():
    assert {"step", "scaling", "threshold", "friction_cost", "solvers", "friction_solvers",
            "memory", "window"} <= set(SCRIPTS)
    assert set(TINY_RUNS) <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_names_the_command(name):
    done = run_module(name, "--help")
    assert done.returncode == 0, done.stderr
    assert f"python -m benchmarks.{name}" in done.stdout


@pytest.mark.parametrize("name", sorted(TINY_RUNS))
def test_a_tiny_run_prints_its_report(name):
    args, line = TINY_RUNS[name]
    done = run_module(name, *args)
    assert done.returncode == 0, done.stderr
    assert line in done.stdout, done.stdout


def test_the_window_benchmark_pairs_its_rounds():
    """The paired difference of shares, round by round, against numbers worked by hand."""
    import numpy as np

    from benchmarks.window import paired_line

    line = paired_line("before", np.array([0.66, 0.74, 0.55]), np.array([0.93, 0.69, 0.66]))
    assert "median -11.0 points, mean -11.0 (-27 to +5)" in line
    assert "the window ahead in 1 of 3 rounds" in line


def test_the_gpu_benchmarks_timings_on_the_simulator(tmp_path):
    """benchmarks/gpu.py's timings section on numba-cuda's simulator where there is no GPU: a
    row per run (the first with the frame's cost), and the launch modes, whose one launch, a
    launch per iteration and a launch per phase give one λ."""
    pytest.importorskip("numba.cuda", reason="the cuda extra (numba-cuda) is not installed")
    import json

    from benchmarks import gpu

    out = tmp_path / "gpu.json"
    assert gpu.main(["--sizes", "30", "--solvers", "jacobi", "--numba-launch", "",
                     "--float32", "jacobi", "--steps", "1", "--settle", "4", "--cpu-threads", "",
                     "--skip", "launch,checks,profile,convergence", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = result["timings"]
    assert [(r["friction"], r["precision"]) for r in rows] == [
        (False, "float64"), (False, "float32"), (True, "float64"), (True, "float32")]
    assert "frame_ms" in rows[0] and "frame_ms" in rows[2] and "frame_ms" not in rows[1]
    modes = result["launch_modes"]
    assert [m["friction"] for m in modes] == [False, True]
    for m in modes:
        assert m["bit_for_bit"] and m["contacts"] > 0
        assert min(m["fused_ms"], m["per_iteration_ms"], m["per_phase_ms"]) > 0.0
        assert m["fused_gb_s"] == pytest.approx(
            m["bytes_per_iteration"] * m["iterations"] / (m["fused_ms"] * 1e6))
    assert "| GB/s, one launch |" in gpu.modes_markdown(modes)


def test_the_least_traffic_of_a_jacobi_iteration_is_its_arrays_counted_by_hand():
    """Without friction, per contact: its two bodies (int64), normal (3), b, A_cc, λ read and
    written (float64); per marble end of a contact (a wall is no marble) a CSR entry of item
    and side; per marble: 1/m, the CSR's start, dv (3) written and read."""
    pytest.importorskip("numba.cuda", reason="the cuda extra (numba-cuda) is not installed")
    from numba import cuda

    import numpy as np

    import scenes
    from benchmarks import gpu
    from solver.cuda.driver import device_solve
    from solver.cuda.frozen import upload
    from solver.methods import registry
    from solver.step import Simulation

    sim = Simulation(scenes.build("box", {"n": 40}), registry.settings("pgs", 20))
    for _ in range(30):
        sim.step()
    p = sim.problem.copy()
    assert p.m > 0
    solve = device_solve(upload(p), registry.settings("jacobi", 20, False))
    lam = cuda.to_device(np.zeros(p.size))
    ends = np.count_nonzero(p.body_a >= 0) + np.count_nonzero(p.body_b >= 0)
    assert ends < 2 * p.m  # the box's walls touch it
    per_contact = 8 * (2 + 3 + 1 + 1 + 2)
    per_marble = 8 * (1 + 1 + 2 * 3)
    assert gpu.sweep_bytes(solve, lam) == (per_contact * p.m + 16 * ends + per_marble * p.n
                                           + 8)
