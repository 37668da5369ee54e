"""Fixtures of the lab tests."""
import pytest

from solver.methods import registry
from solver.methods.driver import Method
from tests.lab.helpers import PROX_PARAMS, prox_gs, prox_jacobi


@pytest.fixture
def fake_prox(monkeypatch):
    """prox-gs and prox-jacobi replaced by stand-ins with three r choices and a bool switch."""
    monkeypatch.setitem(registry.METHODS, "prox-gs",
                        Method("prox-gs", "fake", prox_gs, "test stand-in", PROX_PARAMS))
    monkeypatch.setitem(registry.METHODS, "prox-jacobi",
                        Method("prox-jacobi", "fake", prox_jacobi, "test stand-in", PROX_PARAMS))


@pytest.fixture
def run_main(capsys):
    """In-process `marbles-bench` (fast; an unexpected exception fails the test by itself):
    returns (exit code, stdout, stderr)."""
    from lab.cli import bench

    def call(*args):
        try:
            code = bench.main(list(args))
        except SystemExit as stop:
            code = stop.code
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return call
