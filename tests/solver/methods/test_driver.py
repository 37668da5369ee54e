"""The iteration driver: stopping tests and exit statuses, the same for every method."""
import dataclasses

import numpy as np
import pytest

from solver import metrics
from solver.methods import registry
from solver.methods.driver import Method, run
from solver.options import SolveSettings
from solver.params import ParamError
from tests.solver.methods.test_naive import v_shaped_problem

def test_an_unchanged_iterate_is_not_relative_convergence():
    """A rejected step (λ kept while the method adapts) must not end the solve as 'relative'."""
    problem = v_shaped_problem()
    lam = np.zeros(problem.m)
    settings = SolveSettings("pgs", 5, True, {"abs_tol": 0.0, "rel_tol": 0.5,
                                             "divergence": 1e4})
    result = run(problem, lam, settings, sweep=lambda count: None)
    assert result.status == metrics.MAX_ITERATIONS and result.iterations == 5
    growing = np.zeros(problem.m)
    moving = run(problem, growing, settings, sweep=lambda count: growing.__iadd__(1e-9))
    assert moving.status == metrics.RELATIVE and moving.iterations == 2


def test_settings_are_validated_once_and_complete():
    """registry.settings checks every value against its declaration and fills in every
    default, so a method reads `settings[name]` and restates none."""
    s = registry.settings("psor", "30", overrides={"omega": "1.2"})
    assert s.iterations == 30 and s["omega"] == 1.2 and s["abs_tol"] == 1e-12
    assert set(s.params) == {p.name for p in registry.get("psor").all_params}
    for bad in ({"omega": "2"}, {"omega": "x"}, {"nope": 1}):
        with pytest.raises(ParamError):
            registry.settings("psor", 20, overrides=bad)
    with pytest.raises(ParamError, match="iterations=0"):
        registry.settings("psor", 0)
    assert s.with_trace(s.trace) is s and s.with_trace(not s.trace).trace != s.trace


def test_the_fast_path_falls_back_to_the_start_on_divergence():
    problem = v_shaped_problem()
    start = np.full(problem.m, 0.5)
    lam = start.copy()
    settings = registry.settings("pgs", 3, False)

    def blow_up(count: int) -> None:
        lam[:] = 1e30

    result = run(problem, lam, settings, sweep=blow_up)
    assert result.status == metrics.DIVERGENCE
    np.testing.assert_array_equal(result.lam, start)


class _Clock:
    """A stand-in for time.perf_counter that moves only when told: sweeps and the observer
    advance it by known amounts, so what the driver counts is exact and nothing is timed."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def test_the_observer_is_not_timed_and_the_time_limit_ends_the_solve(monkeypatch):
    from solver.methods import driver

    clock = _Clock()
    monkeypatch.setattr(driver, "time", clock)
    problem = v_shaped_problem()
    lam = np.zeros(problem.m)
    seen = []

    def sweep(count: int) -> None:
        clock.now += 1.0  # one second of solve per iteration

    def observer(lam_now: np.ndarray) -> None:
        seen.append(lam_now.copy())
        clock.now += 100.0  # the observer's own cost, which must not count

    settings = SolveSettings("pgs", 1000, True, {"abs_tol": 0.0, "rel_tol": 0.0,
                                                "divergence": 1e4}, observer, time_limit=3.5)
    result = run(problem, lam, settings, sweep=sweep)
    # Past 3.5 s of sweeps after the fourth: the budget is spent, not the iterations.
    assert result.status == metrics.MAX_ITERATIONS and result.iterations == 4
    np.testing.assert_array_equal(result.seconds, [0.0, 1.0, 2.0, 3.0, 4.0])
    assert len(seen) == 4
    unlimited = run(problem, np.zeros(problem.m), dataclasses.replace(settings, time_limit=None,
                                                                       iterations=6),
                    sweep=sweep)
    assert unlimited.iterations == 6 and unlimited.seconds[-1] == 6.0


def test_a_method_solves_on_the_problems_device_with_that_devices_function():
    """Method.solve picks the function of the problem's device and kind; a device the method
    does not declare, or one whose functions are not registered, is refused by name."""
    problem = v_shaped_problem()
    lam = np.zeros(problem.m)
    cpu = registry.get("pgs").solvers["frictionless"]
    method = Method("twin", "t", cpu, "for the test", devices=("cpu", "cuda"))
    elsewhere = dataclasses.replace(problem)
    elsewhere.device = "cuda"
    with pytest.raises(ValueError, match="does not solve frictionless problems on the cuda"):
        method.solve(elsewhere, lam, registry.settings("pgs", 3, False))
    method.on("cuda", {"frictionless": lambda p, lam0, s: ("cuda", p.device)})
    assert method.solve(elsewhere, lam, registry.settings("pgs", 3, False)) == ("cuda", "cuda")
    assert method.solve(problem, lam, registry.settings("pgs", 3, False)).iterations == 3
    with pytest.raises(ValueError, match="beyond the CPU's"):
        method.on("cuda", {"frictional": cpu})
    with pytest.raises(ValueError, match="does not declare device cuda"):
        Method("cpu-only", "c", cpu, "").on("cuda", {"frictionless": cpu})
    for devices in (("cuda",), ("cpu", "tpu")):
        with pytest.raises(ValueError, match="devices"):
            Method("odd", "o", cpu, "", devices=devices)
