"""The `marbles` entry point says it is starting before the slow imports, on a terminal only;
a display that refuses one connection is asked again before the launch is refused."""
from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from app import main as app_main
from app.launch import STARTING

ROOT = Path(__file__).resolve().parents[2]


def _launch_on_a_terminal(*args: str) -> tuple[int, str]:
    """Run app.launch with stderr on a pseudo-terminal; its exit code and what it wrote there."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "app.launch", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=follower,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closes with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=120), b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_terminal_hears_at_once_that_marbles_starts():
    """The first line comes before the imports; the bad value then fails as usual (exit 2,
    one line naming it)."""
    code, text = _launch_on_a_terminal("--scene", "bowl", "--set", "n=-5")
    lines = text.strip().splitlines()
    assert code == 2
    assert lines[0] == STARTING
    assert len(lines) == 2 and "n" in lines[1] and "-5" in lines[1]


def test_no_starting_line_off_a_terminal():
    proc = subprocess.run([sys.executable, "-m", "app.launch", "--scene", "bowl", "--set",
                           "n=-5"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and STARTING not in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_a_display_refusing_once_is_asked_again(monkeypatch):
    answers = iter(["no X server answers there, or it refused the connection", None])
    monkeypatch.setattr(app_main, "x_display_error", lambda display: next(answers))
    monkeypatch.setattr(app_main, "PROBE_RETRY_WAIT", 0.0)
    assert app_main.display_problem({"DISPLAY": ":99", "QT_QPA_PLATFORM": "xcb"}) is None
    refusals = iter(["refused"] * (app_main.PROBE_RETRIES + 1))
    monkeypatch.setattr(app_main, "x_display_error", lambda display: next(refusals))
    assert "cannot open display :99 (refused" in app_main.display_problem(
        {"DISPLAY": ":99", "QT_QPA_PLATFORM": "xcb"})


def test_compile_only_compiles_what_the_window_steps_first_and_opens_no_window(monkeypatch,
                                                                              capsys):
    import solver.warmup
    asked = []

    def fake(world, methods, threads=1, progress=None, kernels=None):
        asked.append((world.n, world.frictional, list(methods), threads))
        kernels(3, 4, 1.0)
        return 0.5

    monkeypatch.setattr(solver.warmup, "warmup_for", fake)
    assert app_main.main(["--compile-only", "--threads", "1"]) == 0
    # The window's default: the bowl with friction, pgs.
    assert asked == [(350, True, ["pgs"], 1)]
    assert app_main.main(["--compile-only", "--side-by-side", "pgs,jacobi", "--scene", "column"]) == 0
    assert asked[-1][1:3] == (False, ["pgs", "jacobi"])
    err = capsys.readouterr().err
    assert "3/4 kernels" in err and "done, 3 kernels compiled in 0.5 s" in err


def test_compile_only_refuses_bad_options_in_one_line():
    out = subprocess.run([sys.executable, "-m", "app.main", "--compile-only", "--set", "mu=x"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "mu=x" in out.stderr


def test_the_kernel_bar_fills_with_the_count():
    import io

    from lab.report.progress import KernelBar
    stream = io.StringIO()
    bar = KernelBar("compiling", stream=stream, width=10)
    bar(5, 10, 3.0)
    bar(6, 10, 2.0)  # within the log's five seconds: not written
    bar.finish(1.25)
    lines = stream.getvalue().splitlines()
    assert lines == ["compiling: [#####.....] 5/10 kernels, ~3 s left",
                     "compiling: done, 6 kernels compiled in 1.2 s"]
