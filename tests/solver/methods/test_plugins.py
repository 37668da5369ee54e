"""Solvers from outside the package: examples/damped_jacobi.py by --solver-module and by an
entry point (a dist-info written to a temporary folder), and broken plug-ins refused."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solver import metrics
from solver.methods import registry
from solver.params import ParamError
from tests.solver.methods.conftest import settled

ROOT = Path(__file__).resolve().parents[3]


def bench(*args, path=()):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, path), str(ROOT)]))
    return subprocess.run([sys.executable, "-m", "lab.cli.bench", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env)


@pytest.fixture
def damped_jacobi():
    method = registry.load_module("examples.damped_jacobi")
    yield method
    registry.METHODS.pop(method.name)
    registry.PLUGINS.pop(method.name)


def test_the_example_solves_the_lcp_as_pgs(damped_jacobi):
    problem = settled("bowl", 30, overrides={"n": 20})
    result = damped_jacobi.solve(problem.copy(), np.zeros(problem.size), registry.settings(
        "damped-jacobi", 20000, False, {"abs_tol": 1e-11}))
    assert result.status == metrics.ABSOLUTE
    reference = registry.get("pgs").solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("pgs", 20000, False,
                                                            {"abs_tol": 1e-13}))
    np.testing.assert_allclose(problem.velocity(result.lam), problem.velocity(reference.lam),
                               atol=1e-9)


def test_a_module_without_a_method_is_refused_by_name():
    with pytest.raises(ParamError, match="solver plug-in tests.solver.methods.conftest: no "
                                         "METHOD"):
        registry.load_module("tests.solver.methods.conftest")
    with pytest.raises(ParamError, match="no_such_module_xyz: cannot import"):
        registry.load_module("no_such_module_xyz")


def test_solver_module_on_the_command_line():
    listed = bench("--solver-module", "examples.damped_jacobi", "list")
    assert listed.returncode == 0 and "damped-jacobi" in listed.stdout and "beta" in listed.stdout
    broken = bench("--solver-module", "no_such_module_xyz", "list")
    assert broken.returncode == 2
    assert broken.stderr.count("\n") == 1 and "no_such_module_xyz" in broken.stderr
    assert "Traceback" not in broken.stderr


def _dist(folder: Path, name: str, value: str) -> None:
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[marbles.solvers]\n{name} = {value}\n")


def test_entry_point_plugins(tmp_path):
    _dist(tmp_path, "goodplug", "examples.damped_jacobi")
    (tmp_path / "badplug_module.py").write_text("raise RuntimeError('broken on purpose')\n")
    _dist(tmp_path, "badplug", "badplug_module")
    listed = bench("list", path=[tmp_path])
    assert listed.returncode == 0, listed.stderr
    assert "damped-jacobi" in listed.stdout
    refusals = [line for line in listed.stderr.splitlines() if "badplug_module" in line]
    assert len(refusals) == 1 and "broken on purpose" in refusals[0]
