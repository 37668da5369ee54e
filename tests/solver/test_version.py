"""The version is written once: the package metadata and both programs say the same."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from solver.version import VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_a_release_number_read_by_pyproject():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    text = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and 'attr = "solver.version.VERSION"' in text


def test_both_programs_print_it():
    for module, name in (("app.main", "marbles"), ("lab.cli.bench", "marbles-bench")):
        out = subprocess.run([sys.executable, "-m", module, "--version"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.strip() == f"{name} {VERSION}"
