"""lab.report.exits: the proximal variants read from the declared parameters, the stopping tests
of the exit-status experiment, the exit statuses counted over consecutive steps, and the report's
experiment refusing to run without a scene or a proximal solver."""
import numpy as np
import pytest

import scenes
from lab.report import exits
from solver import metrics
from solver.methods import registry
from solver.methods.driver import Method
from solver.params import Param, resolve
from solver.step import Simulation
from tests.lab.helpers import PROX_PARAMS, R_CHOICES, prox_gs


def test_variants_are_read_from_the_declared_parameters(fake_prox):
    variants = exits.proximal_variants({n: registry.METHODS[n]
                                        for n in ("pgs", "prox-gs", "prox-jacobi")})
    assert {(v.solver, v.form, v.r, v.adaptive) for v in variants} == {
        (s, f, r, a) for s, f in (("prox-gs", "Gauss-Seidel"), ("prox-jacobi", "Jacobi"))
        for r in R_CHOICES for a in (True, False)}
    assert next(v for v in variants if not v.adaptive).params["adaptation"] is False


def test_variants_with_choice_or_nu_switches():
    choice = Method("prox-x", "x", prox_gs, "", (
        Param("r", "local", str, "", choices=("local", "global")),
        Param("adaptation", "shrink", str, "", choices=("none", "shrink", "shrink-grow"))))
    nu_only = Method("prox-y-jacobi", "y", prox_gs, "", (
        Param("r", "local", str, "", choices=("local",)),
        Param("nu", 0.9, float, "", lo=0.0, hi=1.0, lo_open=True)))
    nu_open = Method("prox-z", "z", prox_gs, "", (
        Param("r", "local", str, "", choices=("local",)),
        Param("nu", 0.9, float, "", lo=0.0, hi=1.0, hi_open=True)))
    found = exits.proximal_variants({"prox-x": choice, "prox-y-jacobi": nu_only,
                                     "prox-z": nu_open, "pgs": registry.METHODS["pgs"]})
    by = {(v.solver, v.r, v.adaptive): v for v in found}
    assert by[("prox-x", "local", True)].params["adaptation"] == "shrink"
    assert by[("prox-x", "global", False)].params["adaptation"] == "none"
    assert by[("prox-y-jacobi", "local", False)].params == {"r": "local", "nu": 1.0}
    assert by[("prox-y-jacobi", "local", True)].form == "Jacobi"
    assert ("prox-z", "local", False) not in by and ("prox-z", "local", True) in by
    assert not any(v.solver == "pgs" for v in found)


def test_exit_tolerances_use_the_merit_test_when_a_solver_declares_it():
    merit = Method("prox-m", "m", prox_gs, "", PROX_PARAMS + (
        Param("rho_rel_tol", 0.0, float, "", lo=0.0),))
    tol, kind = exits.exit_tolerances(merit, 1e-6, 1e-4)
    assert kind == "merit" and tol == {"abs_tol": 1e-6, "rel_tol": 0.0, "rho_rel_tol": 1e-4}
    resolve(merit.all_params, tol, "test")  # the method accepts these overrides
    tol, kind = exits.exit_tolerances(registry.METHODS["pgs"], 1e-6, 1e-4)
    assert kind == "iterates" and tol == {"abs_tol": 1e-6, "rel_tol": 1e-4}


def test_the_registered_proximal_solvers_give_every_variant_and_the_merit_test():
    variants = exits.proximal_variants()
    labels = {v.label for v in variants}
    for solver, form in (("prox-gs", "Gauss-Seidel"), ("prox-jacobi", "Jacobi")):
        r = next(p for p in registry.METHODS[solver].params if p.name == "r")
        for choice in r.choices:
            assert f"{solver} r={choice}" in labels and f"{solver} r={choice} fixed" in labels
        assert {v.form for v in variants if v.solver == solver} == {form}
        # Their declared parameter `adapt` switches adaptation; its overrides are accepted.
        for v in variants:
            if v.solver == solver:
                assert v.params["adapt"] is v.adaptive
                registry.settings(solver, 5, True, v.params)
        assert exits.exit_tolerances(registry.METHODS[solver], 1e-6, 1e-4)[1] == "merit"
    assert {v.solver for v in variants} == {"prox-gs", "prox-jacobi"}


def test_exit_statuses_count_every_solve_of_every_variant(fake_prox):
    variants = [v for v in exits.proximal_variants() if v.r in ("local", "global")]
    stats = exits.exit_statuses(exits.ExitRun("column", 3, 15), variants)
    assert (stats.scene, stats.steps, stats.iterations) == ("column", 3, 15)
    assert (stats.abs_tol, stats.rel_tol) == (exits.EXIT_ABS_TOL, exits.EXIT_REL_TOL)
    assert set(stats.counts) == {v.label for v in variants} and len(variants) == 8
    for label, counts in stats.counts.items():
        assert sum(counts.values()) == 3  # one solve per step
        assert stats.relative[label] == "iterates"  # the stand-ins have no merit test
        assert np.isfinite(stats.residual[label])
    assert stats.contacts == (7, 7)  # the column: 6 marble pairs and the floor
    # Each variant's overrides reach its solve: the stand-in prox-gs is PGS (ω = 1) for 'local'
    # with or without adaptation, and ω = 1.5 against 1.9 for 'global'.
    assert stats.residual["prox-gs r=local"] == stats.residual["prox-gs r=local fixed"]
    assert stats.residual["prox-gs r=global"] != stats.residual["prox-gs r=global fixed"]
    # Known answer: the steps of a column driven by PGS with 20 iterations, each solved from
    # zero by PGS for 15 iterations with the experiment's tolerances.
    sim = Simulation(scenes.build("column"), registry.settings("pgs", 20))
    pgs15 = registry.settings("pgs", 15, True, {"abs_tol": exits.EXIT_ABS_TOL,
                                                "rel_tol": exits.EXIT_REL_TOL})
    finals, statuses = [], []
    for _ in range(3):
        sim.step()
        result = registry.METHODS["pgs"].solve(sim.problem.copy(), np.zeros(sim.problem.m),
                                               pgs15)
        finals.append(result.residual)
        statuses.append(result.status)
    assert stats.residual["prox-gs r=local"] == float(np.median(finals))
    assert stats.counts["prox-gs r=local"] == {s: statuses.count(s) for s in metrics.STATUSES}


def test_rejections_say_whether_the_adaptation_fired():
    """The registered proximal solvers on the first 5 steps of the bowl, local r: the
    Gauss-Seidel form never rejects an iterate (every sweep with local r lowers f), so its
    adaptive run is the fixed-r run; the Jacobi form rejects its first, too long steps."""
    variants = [v for v in exits.proximal_variants() if v.r == "local"]
    stats = exits.exit_statuses(exits.ExitRun("bowl", 5, 40), variants)
    assert stats.rejections("prox-gs r=local") == 0.0
    assert stats.rejections("prox-gs r=local fixed") == 0.0
    assert stats.rejections("prox-jacobi r=local") > 0.0
    assert stats.rejections("prox-jacobi r=local fixed") == 0.0
    assert stats.counts["prox-gs r=local"] == stats.counts["prox-gs r=local fixed"]


def test_rejections_are_unknown_for_a_solver_that_does_not_report_them(fake_prox):
    variants = [v for v in exits.proximal_variants() if v.r == "local"]
    stats = exits.exit_statuses(exits.ExitRun("column", 2, 10), variants)
    assert stats.rejections("prox-gs r=local") is None


@pytest.mark.parametrize("frictional", [False, True])
def test_an_experiment_that_cannot_run_says_why_and_leaves_no_stale_chart(frictional, tmp_path):
    figure = tmp_path / exits.EXIT_FIGURES[frictional]
    said = []
    for o, note in (({"exit_scene": None, "solvers": ["pgs", "prox-gs"]},
                     "Not run (`--exit-scene none`)."),
                    ({"exit_scene": "column", "solvers": ["pgs"]}, "Skipped: no proximal")):
        figure.write_bytes(b"stale")
        stats, text = exits.exit_experiment(o, tmp_path, frictional, said.append,
                                            said.append, quiet=True)
        assert stats is None and text.startswith(note) and not figure.exists()
    # Without friction the skip is said on stderr too; with friction the note alone carries it.
    assert len(said) == (0 if frictional else 1)
