"""lab.report.compare, the comparison engine: same frozen problem for all, curves equal to direct
runs, diverged and broken solvers marked, warm start reproduced."""
import json

import numpy as np
import pytest

import scenes
from lab.report import compare as cmp
from solver import metrics
from solver.methods import registry
from solver.methods.driver import Method, run
from solver.contact_states import contact_states
from solver.params import ParamError
from solver.problem import ContactProblem
from solver.step import Simulation
from tests.lab.helpers import PNG

PGS20 = registry.settings("pgs", 20, False)


@pytest.fixture(scope="module")
def disk_frozen():
    return cmp.settle(scenes.build("disk"), 40, PGS20)


def direct(name, problem, iterations, lam0=None, **params):
    settings = registry.settings(name, iterations, True, {**cmp.NO_STOP, **params})
    start = np.zeros(problem.m) if lam0 is None else lam0.copy()
    return registry.METHODS[name].solve(problem.copy(), start, settings)


def test_rows_are_the_curves_of_direct_runs(disk_frozen):
    problem = disk_frozen.problem
    assert problem.m > 20
    table = cmp.compare(problem, 60, params={"psor": {"omega": 1.3}}, repeats=2)
    assert table.solvers == list(registry.METHODS)
    assert table.residual.shape == table.seconds.shape == (len(registry.METHODS), 61)
    for k, name in enumerate(table.solvers):
        extra = {"omega": 1.3} if name == "psor" else {}
        result = direct(name, problem, 60, **extra)
        n = result.trace.size
        np.testing.assert_array_equal(table.residual[k, :n], result.trace)
        assert table.status[k] == result.status
        seconds = table.seconds[k]
        assert seconds[0] == 0.0 and np.all(np.diff(seconds) >= 0.0) and seconds[-1] > 0.0
        assert 1 <= table.meta["timing_runs"][name] <= 2
    # Solvers differ, so the rows really are each solver's own.
    assert not np.array_equal(table.residual[table.row("pgs")], table.residual[table.row("psor")])
    assert table.meta["solver_settings"]["psor"]["omega"] == 1.3
    assert table.meta["contacts"] == problem.m


def test_the_problem_is_not_changed_by_the_comparison(disk_frozen):
    problem = disk_frozen.problem
    before = (problem.rhs.copy(), problem.v_pred.copy(), problem.normal.copy())
    cmp.compare(problem, 5, repeats=1)
    for a, b in zip(before, (problem.rhs, problem.v_pred, problem.normal)):
        np.testing.assert_array_equal(a, b)


def test_benchmark_files_load_without_pickle(tmp_path, disk_frozen):
    table = cmp.compare(disk_frozen.problem, 10, repeats=1)
    npy, jsn, png = cmp.write_benchmark(tmp_path / "out", table, {"scene": "disk", "step": 40})
    data = np.load(npy, allow_pickle=False)
    assert data.dtype.names == ("solver", "residual", "seconds")
    assert list(data["solver"]) == list(registry.METHODS)
    np.testing.assert_array_equal(data["residual"], table.residual)
    np.testing.assert_array_equal(data["seconds"], table.seconds)
    info = json.loads(jsn.read_text())
    assert info["scene"] == "disk" and info["step"] == 40 and info["contacts"] == table.meta[
        "contacts"]
    assert set(info["per_solver"]) == set(registry.METHODS)
    assert info["final_residual"]["pgs"] == pytest.approx(table.residual[table.row("pgs"), -1])
    assert png.read_bytes().startswith(PNG)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["benchmark.json",
                                                                     "benchmark.npy",
                                                                     "benchmark.png"]


def test_benchmark_json_has_the_documented_status_map(tmp_path, disk_frozen):
    table = cmp.compare(disk_frozen.problem, 5, ["pgs", "psor"], repeats=1)
    assert table.meta["status"] == {"pgs": table.status[0], "psor": table.status[1]}
    _, jsn, _ = cmp.write_benchmark(tmp_path, table)
    assert json.loads(jsn.read_text())["status"] == {"pgs": "max_iterations",
                                                     "psor": "max_iterations"}


def _fake(name, sweep_factory):
    """A registered method whose sweep is `sweep_factory(problem, lam)`."""
    def solve(problem, lam0, settings):
        lam = np.array(lam0, dtype=np.float64)
        return run(problem, lam, settings, sweep_factory(problem, lam))
    return Method(name, name, solve, "test method")


def _blowup(problem, lam):
    def sweep(count):
        for _ in range(count):
            lam[:] = 10.0 * lam + 1.0
    return sweep


def test_diverged_rows_are_marked_and_padded_with_inf(monkeypatch, disk_frozen):
    monkeypatch.setitem(registry.METHODS, "blowup", _fake("blowup", _blowup))
    table = cmp.compare(disk_frozen.problem, 30, ["pgs", "blowup"], repeats=1)
    k = table.row("blowup")
    assert table.status[k] == metrics.DIVERGENCE
    stop = table.meta["iterations_run"]["blowup"]
    assert 1 <= stop < 30
    assert np.all(np.isfinite(table.residual[k, :stop]))
    assert np.all(np.isinf(table.residual[k, stop + 1:]))
    assert np.all(table.seconds[k, stop:] == table.seconds[k, stop])  # no time after stopping
    assert table.status[table.row("pgs")] == metrics.MAX_ITERATIONS


def test_a_solver_that_raises_gets_an_error_row_and_the_others_still_run(monkeypatch,
                                                                          disk_frozen):
    calls = {"n": 0}

    def solve(problem, lam0, settings):
        calls["n"] += 1
        if calls["n"] > 2:  # the warm-up runs pass; the comparison run fails
            raise RuntimeError("kernel exploded")
        return registry.METHODS["pgs"].solve(problem, lam0, settings)

    def never(problem, lam0, settings):
        raise ZeroDivisionError("fails even on the warm-up problem")

    monkeypatch.setitem(registry.METHODS, "broken", Method("broken", "b", solve, "test"))
    monkeypatch.setitem(registry.METHODS, "never", Method("never", "n", never, "test"))
    table = cmp.compare(disk_frozen.problem, 10, ["broken", "psor", "never"], repeats=1)
    assert table.status == [cmp.ERROR, metrics.MAX_ITERATIONS, cmp.ERROR]
    assert "warm-up" in table.meta["errors"]["never"]
    assert np.all(np.isnan(table.residual[0])) and "kernel exploded" in table.meta["errors"][
        "broken"]
    np.testing.assert_array_equal(table.residual[1],
                                  direct("psor", disk_frozen.problem, 10).trace)


def test_a_non_deterministic_solver_is_flagged(monkeypatch, disk_frozen):
    rng = np.random.default_rng(0)

    def noisy(problem, lam):
        def sweep(count):
            lam[:] = np.maximum(0.0, lam + 1e-3 * rng.random(lam.size))
        return sweep

    monkeypatch.setitem(registry.METHODS, "noisy", _fake("noisy", noisy))
    table = cmp.compare(disk_frozen.problem, 5, ["noisy", "pgs"], repeats=3)
    assert table.meta["nondeterministic"] == ["noisy"]


@pytest.mark.parametrize("kwargs, fragment", [
    ({"iterations": 0}, "iterations=0"),
    ({"solvers": ["nope"]}, "valid: naive, pgs"),
    ({"solvers": ["pgs", "pgs"]}, "twice"),
    ({"solvers": []}, "no solver"),
    ({"repeats": 0}, "repeats=0"),
    ({"lam0": -np.ones(3)}, "lam0"),
])
def test_bad_arguments_are_refused(disk_frozen, kwargs, fragment):
    args = {"iterations": 5, **kwargs}
    with pytest.raises(ParamError, match=fragment):
        cmp.compare(disk_frozen.problem, **args)


@pytest.mark.parametrize("warm_start", [False, True])
def test_frozen_step_reproduces_the_simulation_solve(warm_start):
    """The frozen problem and start are the ones the K-th step used: solving them again gives
    the step's own trace, bit for bit."""
    frozen = cmp.settle(scenes.build("disk"), 30, PGS20, warm_start=float(warm_start))
    lam0 = frozen.warm if warm_start else None
    table = cmp.compare(frozen.problem, 20, ["pgs"], lam0=lam0, repeats=1)
    np.testing.assert_array_equal(table.residual[0], frozen.report.result.trace)
    assert frozen.step == 30 and frozen.time == pytest.approx(29 * 0.02)
    if warm_start:  # the warm start is real: most contacts persist, and the curve changes
        assert np.count_nonzero(frozen.warm) > frozen.problem.m // 2
        cold = cmp.compare(frozen.problem, 20, ["pgs"], repeats=1)
        assert not np.array_equal(cold.residual, table.residual)


def test_match_impulses_by_pair_key():
    out = cmp.match_impulses(np.array([5, 1, 9]), np.array([0.5, 0.1, 0.9]),
                             np.array([9, 2, 1, 5, 10]))
    np.testing.assert_array_equal(out, [0.9, 0.0, 0.1, 0.5, 0.0])
    assert cmp.match_impulses(np.zeros(0, np.int64), np.zeros(0), np.array([1])).tolist() == [0]


def test_reach_first_iteration_and_time_below_a_tolerance():
    table = cmp.ComparisonTable(["a", "b"], np.array([[1.0, 1e-3, 1e-7, 1e-11],
                                                      [1.0, 0.5, 0.2, 0.1]]),
                                np.array([[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]]),
                                ["max_iterations"] * 2)
    assert cmp.reach(table, "a", 1e-6) == (2, 2.0)
    assert cmp.reach(table, "a", 1e-10) == (3, 3.0)
    assert cmp.reach(table, "b", 1e-6) is None


def test_empty_problem_compares_to_flat_zero_rows():
    problem = ContactProblem(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)),
                             np.zeros(0), np.ones(2), np.zeros((2, 3)), 0.02)
    table = cmp.compare(problem, 4, ["pgs", "psor"], repeats=1)
    np.testing.assert_array_equal(table.residual, np.zeros((2, 5)))


def test_a_solver_that_writes_into_its_problem_cannot_change_the_others(monkeypatch,
                                                                      disk_frozen):
    def vandal(problem, lam0, settings):
        result = registry.METHODS["pgs"].solve(problem, lam0, settings)
        problem.rhs[:] = 1e3  # a bug in some future solver
        return result

    monkeypatch.setitem(registry.METHODS, "vandal", Method("vandal", "v", vandal, "test"))
    table = cmp.compare(disk_frozen.problem, 10, ["vandal", "psor"], repeats=2)
    np.testing.assert_array_equal(table.residual[1],
                                  direct("psor", disk_frozen.problem, 10).trace)


def test_a_pile_settled_with_threads_is_compared_in_its_blocks():
    """With two threads a pile of MIN_MARBLES marbles freezes a problem in blocks; every
    solver's curve on it is the serial kernels' curve on the same contacts in the same order,
    and the frozen step's own trace comes back."""
    from dataclasses import replace

    from solver.parallel import MIN_MARBLES

    frozen = cmp.settle(scenes.build("box", {"n": MIN_MARBLES}), 30, PGS20, threads=2)
    assert frozen.problem.partition is not None
    names = ["pgs", "jacobi", "pcg"]
    blocked = cmp.compare(frozen.problem, 15, names, repeats=1)
    serial = cmp.compare(replace(frozen.problem, partition=None), 15, names, repeats=1)
    np.testing.assert_array_equal(blocked.residual, serial.residual)
    again = cmp.compare(frozen.problem, 20, ["pgs"], repeats=1)  # the step started from zero
    np.testing.assert_array_equal(again.residual[0], frozen.report.result.trace)


def test_a_frictional_comparison_says_what_each_answer_makes_the_contacts_do():
    sim = Simulation(scenes.build("bowl", {"n": 30, "mu": 0.5, "mu_wall": 0.5}),
                     registry.settings("pgs", 20, False), warm_start=1.0)
    for _ in range(60):
        sim.step()
    problem = sim.problem.copy()
    table = cmp.compare(problem, 30, ["pgs", "apgd"], repeats=1)
    live = int(np.count_nonzero(problem.diag[0::3] > 0.0))
    for name in ("pgs", "apgd"):
        states = table.meta["contact_states"][name]
        assert states["separated"] + states["sticking"] + states["sliding"] == live
        lam = registry.get(name).solve(problem.copy(), np.zeros(problem.size),
                                       registry.settings(name, 30, True, cmp.NO_STOP))
        assert states == contact_states(problem, lam.lam, lam.residual)

def test_a_frictionless_comparison_has_no_contact_states(disk_frozen):
    assert "contact_states" not in cmp.compare(disk_frozen.problem, 5, ["pgs"], repeats=1).meta
