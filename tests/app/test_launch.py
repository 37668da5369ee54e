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
