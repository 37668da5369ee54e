"""The report's runs take the sources' settings where they differ from the defaults: prox-jacobi
at Erleben's γ = 1 and apgd without the preconditioner, in the frictional series, the
exit-status experiment and the header."""
import numpy as np

import scenes
from lab.report import markdown
from lab.report.friction_series import run_of
from lab.report.sources import SOURCE_PARAMS, source_params, with_sources
from solver.methods import registry
from solver.step import Simulation
from tests.solver.methods.reference import solve


def test_prox_jacobi_runs_at_erlebens_gamma_and_the_rest_at_their_defaults():
    assert registry.settings("prox-jacobi")["gamma"] != 1.0  # else this module has no reason
    assert source_params("prox-jacobi") == {"gamma": 1.0}
    assert source_params("pgs") == {} and source_params("no-such-solver") == {}
    assert with_sources(["pgs", "prox-jacobi", "jacobi"]) == {"prox-jacobi": {"gamma": 1.0}}
    assert registry.settings("apgd")["precondition"] is True
    assert source_params("apgd") == {"precondition": False}
    assert run_of("apgd") == ("apgd", {"precondition": False})
    assert run_of("prox-jacobi") == ("prox-jacobi", {"gamma": 1.0})
    assert run_of("prox-jacobi r=blocked") == ("prox-jacobi", {"gamma": 1.0, "r": "blocked"})
    assert run_of("pgs friction=ccp") == ("pgs", {"friction": "ccp"})


def test_a_stand_in_without_the_parameter_gets_none_of_it(fake_prox):
    assert "gamma" not in {p.name for p in registry.METHODS["prox-jacobi"].all_params}
    assert source_params("prox-jacobi") == {}


def test_the_sources_gamma_is_a_different_solve():
    sim = Simulation(scenes.build("bowl", {"n": 100}), registry.settings("pgs", 20))
    for _ in range(100):
        sim.step()
    problem = sim.problem.copy()
    source = solve("prox-jacobi", problem, 50, **SOURCE_PARAMS["prox-jacobi"])
    default = solve("prox-jacobi", problem, 50)
    assert source.info["rejected"] > 0  # γ = 1 needs the adaptation on this pile
    assert not np.array_equal(source.lam, default.lam)


def test_the_sources_apgd_is_a_different_solve():
    sim = Simulation(scenes.build("bowl", {"n": 40, "mu": 0.5, "mu_roll": 0.01}),
                     registry.settings("pgs", 20))
    for _ in range(60):
        sim.step()
    problem = sim.problem.copy()
    zero = np.zeros(problem.size)
    source = solve("apgd", problem, 30, lam0=zero, **SOURCE_PARAMS["apgd"])
    default = solve("apgd", problem, 30, lam0=zero)
    assert source.info["lipschitz"] != default.info["lipschitz"]
    assert not np.array_equal(source.lam, default.lam)


def test_the_header_says_which_settings_are_the_sources():
    sentence = markdown._sources_sentence(with_sources(["pgs", "prox-jacobi", "apgd"]))
    assert "`prox-jacobi` gamma = 1, Erleben's r = 1/A_cc" in sentence
    assert "`apgd` precondition = false, Chrono's one step 1/L" in sentence
    assert markdown._sources_sentence(with_sources(["pgs", "prox-gs"])) == ""


def test_a_frictional_snapshots_table_records_the_params_its_runs_had():
    from lab.report.friction_series import FrictionRun, FrictionSnapshot, snapshot_table

    runs = {r: FrictionRun(np.array([1.0, 0.5]), np.array([0.0, 1e-3]), "max_iterations")
            for r in ("pgs", "prox-jacobi", "prox-jacobi r=blocked")}
    snap = FrictionSnapshot("friction-bowl", "bowl", 300, 60, 200, 1.0, 6.0, runs)
    params = snapshot_table(snap).meta["params"]
    assert params == {"pgs": {}, "prox-jacobi": {"gamma": 1.0},
                      "prox-jacobi r=blocked": {"gamma": 1.0, "r": "blocked"}}
