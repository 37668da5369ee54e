"""lab.report.friction_series: the frictional snapshots are the steps of a PGS-driven run with the
frictional warm start, every run's curve is the solver's own trace from zero, the relaxation's
runs also carry its error, and the forms of the runs are the ones the claims need."""
import numpy as np
import pytest

import scenes
from lab.report import friction_series as fs
from lab.report.sources import source_settings
from solver import metrics
from solver.methods import registry
from solver.methods.apgd import relaxation_error
from solver.step import Simulation


@pytest.fixture(scope="module")
def pyramid():
    """The standing pyramid's first step (225 contacts, μ = 5)."""
    (step, t, problem), = fs.frozen_frictional_steps("friction-pyramid", (1,))
    assert (step, t) == (1, 0.0)
    return problem


def test_forms_of_the_runs():
    assert fs.form("pgs friction=ccp") == fs.form("nsgs") == fs.form("naive") == "Gauss-Seidel"
    assert fs.form("prox-gs r=blocked") == "Gauss-Seidel"
    assert fs.form("jacobi") == fs.form("prox-jacobi adapt=0") == "Jacobi"
    assert fs.form("apgd") is None
    # Every run is a frictional solver with parameters it declares.
    for label, (solver, params) in fs.FRICTION_RUNS.items():
        assert registry.get(solver).friction
        registry.settings(solver, 5, True, params)
    assert set(fs.RELAXED) <= set(fs.FRICTION_RUNS)


def test_the_snapshots_are_the_steps_of_a_fully_warm_started_pgs_run():
    steps = fs.frozen_frictional_steps("friction-bowl-60", (3, 5))
    assert [s for s, _, _ in steps] == [3, 5]
    params = fs.scene_params("friction-bowl-60")
    assert (params["n"], params["mu"], params["mu_wall"]) == (60, 0.5, 0.5)
    sim = Simulation(scenes.build("bowl", params), registry.settings("pgs", 20, False),
                     warm_start=1.0)
    for _ in range(5):
        sim.step(trace=False)
    step, t, problem = steps[1]
    assert t == pytest.approx(4 * sim.world.dt)
    assert problem.frictional and problem.m == sim.problem.m
    np.testing.assert_array_equal(problem.rhs, sim.problem.rhs)


def test_a_run_is_the_solvers_trace_from_zero(pyramid):
    run = fs.run_label(pyramid, "pgs friction=ccp", 40, repeats=2, budget=10.0)
    direct = registry.get("pgs").solve(pyramid.copy(), np.zeros(pyramid.size), registry.settings(
        "pgs", 40, True, {"abs_tol": 0.0, "friction": "ccp"}))
    np.testing.assert_array_equal(run.residual, direct.trace)
    assert run.residual.shape == run.seconds.shape == (41,) and run.runs == 2
    assert np.all(np.diff(run.seconds) >= 0) and run.seconds[0] == 0.0
    assert run.rejected is None and not run.diverged
    # The relaxation's error: of zero impulses first, then of each iterate.
    assert run.relaxation[0] == relaxation_error(pyramid, np.zeros(pyramid.size))
    assert run.relaxation[-1] == pytest.approx(relaxation_error(pyramid, direct.lam), rel=1e-12)
    assert fs.run_label(pyramid, "pgs", 5).relaxation is None


def test_apgds_relaxation_curve_is_its_best_so_far(pyramid):
    run = fs.run_label(pyramid, "apgd", 60)
    assert np.all(np.diff(run.relaxation) <= 0.0)  # apgd returns its best iterate
    solved = registry.get("apgd").solve(pyramid.copy(), np.zeros(pyramid.size),
                                        source_settings("apgd", 60, True, {"abs_tol": 0.0}))
    assert run.relaxation[-1] == pytest.approx(solved.info["relaxation_residual"], rel=1e-12)


def test_a_diverged_run_is_inf_from_its_divergence_and_rejections_are_kept(pyramid):
    run = fs.run_label(pyramid, "prox-jacobi adapt=0", 100)
    assert run.status == metrics.DIVERGENCE and run.diverged  # undamped Jacobi on a stack
    first = int(np.flatnonzero(np.isinf(run.residual))[0])
    assert np.all(np.isinf(run.residual[first:])) and np.all(np.isfinite(run.residual[:first]))
    assert run.rejected == 0
    adaptive = fs.run_label(pyramid, "prox-jacobi", 100)
    assert not adaptive.diverged and adaptive.rejected > 0


def test_measure_friction_runs_the_chosen_solvers_on_every_snapshot(monkeypatch):
    monkeypatch.setitem(fs.FRICTION_SCENES, "friction-pyramid", fs.FrictionScene(
        "pyramid", {"layers": 2}, (1, 2), 30, "test", timed=("apgd",)))
    seen = []
    series = fs.measure_friction(["friction-pyramid"], ["pgs", "apgd", "pcg"], repeats=3,
                                 iterations=8, progress=lambda done, total: seen.append(
                                     (done, total)))
    snaps = series["friction-pyramid"]
    assert [s.step for s in snaps] == [1, 2] and seen[-1] == (6, 6)
    assert all(list(s.runs) == ["pgs", "pgs friction=ccp", "apgd"] for s in snaps)
    assert all(s.budget == 8 for s in snaps)
    # Timing repeats only on the table's snapshot (the last one), and for the timed runs.
    assert snaps[0].runs["pgs"].runs == snaps[0].runs["pgs friction=ccp"].runs == 1
    assert snaps[0].runs["apgd"].runs == 3
    assert max(r.runs for r in snaps[1].runs.values()) > 1
    table = fs.snapshot_table(snaps[1])
    assert table.solvers == ["pgs", "pgs friction=ccp", "apgd"] and table.meta["rows"] == 3
    np.testing.assert_array_equal(table.residual[2], snaps[1].runs["apgd"].residual)
    assert set(table.meta["relaxation_best"]) == {"pgs friction=ccp", "apgd"}
    data = fs.friction_series_json(series)["friction-pyramid"]
    assert data[1]["runs"]["apgd"]["best"] == float(np.min(snaps[1].runs["apgd"].residual))
    assert data[0]["runs"]["pgs"]["relaxation_best"] is None


def test_a_frictionless_scene_gets_mu_and_mu_wall_a_frictional_one_keeps_its_own():
    assert fs.frictional_params("bowl") == {"mu": 0.5, "mu_wall": 0.5}
    assert fs.frictional_params("pyramid") == {}  # μ = 5 of its own
