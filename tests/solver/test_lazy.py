"""A lazy module is imported at its first attribute read, not before."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from solver.lazy import LazyModule

ROOT = Path(__file__).resolve().parents[2]


def test_the_module_is_imported_on_first_use_only():
    code = ("import sys; from solver.lazy import LazyModule; m = LazyModule('fractions'); "
            "assert 'fractions' not in sys.modules; assert m.Fraction(1, 2) * 2 == 1; "
            "assert 'fractions' in sys.modules")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_start_up_imports_no_scipy():
    """marbles-bench's and the Session's imports leave scipy to newton and the existence test
    (numba itself imports scipy's top package only)."""
    code = ("import sys, lab.cli.bench, lab.session.session; "
            "print(sorted(m for m in sys.modules if m.startswith(('scipy.sparse', "
            "'scipy.optimize'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_dunders_are_not_looked_up_in_the_module():
    m = LazyModule("no_such_module_anywhere")
    assert not hasattr(m, "__wrapped__") and "no_such_module_anywhere" in repr(m)
