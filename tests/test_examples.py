"""Every script in examples/ runs, as a user would run it, and says what it should."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# Small budgets so the smoke test stays quick; the defaults are what the docstrings show.
ARGS = {"step_a_scene.py": ["--steps", "60"],
        "compare_frozen.py": ["--settle", "40", "--iterations", "30", "--out", "c.png"],
        "export_contact_problem.py": ["--steps", "40"],
        "session_commands.py": [],
        "damped_jacobi.py": []}
EXPECT = {"step_a_scene.py": "bowl/pgs: t = 1.20 s",
          "compare_frozen.py": "wrote c.png",
          "export_contact_problem.py": "ppcg from zero:",
          "session_commands.py": "psor 1.7, t = 3.00 s",
        "damped_jacobi.py": "bowl damped-jacobi n=20 steps=30"}


def test_every_example_is_smoke_tested():
    assert sorted(p.name for p in EXAMPLES) == sorted(ARGS) == sorted(EXPECT)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, tmp_path):
    proc = subprocess.run([sys.executable, str(path), *ARGS[path.name]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert EXPECT[path.name] in proc.stdout, proc.stdout
    if path.name == "compare_frozen.py":
        assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if path.name == "export_contact_problem.py":
        assert (tmp_path / "state.npz").is_file() and (tmp_path / "step.npz").is_file()
