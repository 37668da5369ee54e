"""RunSpec: one validated run specification, routed --set values, one-line refusals."""
from __future__ import annotations

import os

import pytest

from lab.session.spec import (SIM_PARAMS, SPEED, RunSpec, route_assignments,
                              route_compare_assignments)
from solver.parallel import THREADS
from solver.params import ParamError


def test_defaults_are_the_declared_ones():
    spec = RunSpec.create()
    assert (spec.scene, spec.solver, spec.iterations, spec.options.warm_start, spec.dt, spec.speed) == (
        "bowl", "pgs", 20, 0.0, None, SPEED.default)
    assert spec.scene_params == {"n": 350, "seed": 1, "pour": False, "damping": 0.0, "mu": 0.0, "mu_wall": 0.0,
                                 "mu_roll": 0.0, "mu_spin": 0.0}
    assert spec.solver_params == {"friction": "cone", "abs_tol": 1e-12, "rel_tol": 0.0,
                                  "divergence": 1e4}


def test_text_is_parsed_and_routed_by_name():
    spec = RunSpec.create("box", "psor", "50", "0.01", "0",
                          {"n": "200", "omega": "1.2", "warm_start": "0.5", "damping": "1"})
    assert spec.scene_params["n"] == 200 and spec.scene_params["damping"] == 1.0
    assert spec.solver_params["omega"] == 1.2 and spec.iterations == 50
    assert spec.options.warm_start == 0.5 and spec.dt == 0.01 and spec.speed == 0.0
    world = spec.build_world()
    assert world.n == 200 and world.dt == 0.01 and world.damping == 1.0
    assert spec.settings_json() == {"iterations": 50, **spec.solver_params, "warm_start": 0.5,
                                    "stabilise": 1.0, "push_speed": 1.0,
                                    "threads": spec.options.threads,
                                    "device": "cpu", "precision": "float64"}


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(scene="nope"), "unknown scene 'nope'; valid: bowl"),
    (dict(solver="nope"), "unknown solver 'nope'; valid: naive"),
    (dict(iterations="0"), "iterations=0 is not valid"),
    (dict(iterations="2.5"), "iterations=2.5 is not valid"),
    (dict(dt="0"), "dt=0 is not valid: must be float in (0, 1]"),
    (dict(speed="-1"), "speed=-1 is not valid"),
    (dict(assignments={"omega": "1.2"}), "unknown parameter 'omega' (scene bowl: damping, mu, "
                                         "mu_roll, mu_spin, mu_wall, n, pour, seed; solver pgs: "
                                         "abs_tol"),
    (dict(solver="pcg", assignments={"mu": "0.5"}), "solver pcg solves frictionless contacts "
                                                     "only"),
    (dict(solver="psor", assignments={"omega": "2"}), "omega=2 is not valid"),
    (dict(assignments={"warm_start": "nan"}), "warm_start=nan is not valid"),
    (dict(assignments={"n": "1e400"}), "n=1e400 is not valid"),
    (dict(threads="0"), "threads=0 is not valid"),
    (dict(threads="1.5"), "threads=1.5 is not valid"),
])
def test_bad_input_is_refused_in_one_line_naming_the_value(kwargs, fragment):
    with pytest.raises(ParamError) as err:
        RunSpec.create(**kwargs)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_threads_default_to_every_core_and_reach_the_simulation():
    assert RunSpec.create().options.threads == THREADS.default == (os.cpu_count() or 1)
    spec = RunSpec.create("box", threads="1")
    sim = spec.simulation(spec.build_world())
    assert spec.options.threads == 1 and sim.threads == 1 and spec.settings_json()["threads"] == 1


def test_routing_keeps_values_as_text_for_their_owner():
    scene, solver, sim = route_assignments("bowl", "psor", {"n": "5", "omega": "1", "warm_start": "1"})
    assert (scene, solver, sim) == ({"n": "5"}, {"omega": "1"}, {"warm_start": "1"})
    assert [p.name for p in SIM_PARAMS] == ["warm_start", "stabilise", "push_speed"]


def test_compare_routing_reaches_the_settling_solver_and_each_taker():
    scene, sim, settle, per = route_compare_assignments(
        "bowl", "pgs", ["psor", "jacobi", "pcg"],
        {"n": "100", "omega": "1.1", "abs_tol": "0", "jacobi.beta": "0.5", "warm_start": "0.5"})
    assert scene["n"] == 100 and sim["warm_start"] == 0.5
    assert settle == {"abs_tol": "0"}  # pgs has no omega
    assert per == {"psor": {"omega": "1.1", "abs_tol": "0"}, "jacobi": {"abs_tol": "0",
                   "beta": "0.5"}, "pcg": {"abs_tol": "0"}}
    with pytest.raises(ParamError, match="'mprgp' is not a compared solver"):
        route_compare_assignments("bowl", "pgs", ["psor"], {"mprgp.alpha": "1"})
    with pytest.raises(ParamError, match="omega=3 is not valid"):
        route_compare_assignments("bowl", "pgs", ["psor"], {"omega": "3"})


def test_warm_start_follows_the_friction_unless_given():
    assert RunSpec.create("bowl").options.warm_start == 0.0
    assert RunSpec.create("pyramid").options.warm_start == 1.0  # frictional piles creep otherwise
    spec = RunSpec.create("pyramid", assignments={"warm_start": "0.5"})
    assert spec.options.warm_start == 0.5 and spec.warm_start_given
    assert RunSpec.create("bowl", assignments={"mu": "0.3"}).options.warm_start == 1.0


def test_stabilise_reaches_the_simulation():
    spec = RunSpec.create("column", assignments={"stabilise": "0.25"})
    sim = spec.simulation(spec.build_world())
    assert spec.options.stabilise == 0.25 and sim.stabilise == 0.25


def test_a_plugin_solver_is_a_choice_in_the_cycle_and_takes_its_parameters():
    """`--solver-module examples.damped_jacobi` (load_solver_modules): --solver accepts it, the
    M key's cycle reaches it on a frictionless scene, and its declared β is set by name as any
    solver's parameter is (the dock is generated from the same declarations)."""
    from lab.session import commands as cmd
    from lab.session.session import Session
    from lab.session.spec import SOLVER, load_solver_modules
    from solver.methods import registry

    before = SOLVER.choices
    load_solver_modules(["examples.damped_jacobi"])
    try:
        assert "damped-jacobi" in SOLVER.choices
        spec = RunSpec.create("column", "pgs", 20)
        s = Session(spec)
        s.start()
        seen = []
        for _ in registry.METHODS:
            s.apply(cmd.CycleSolver(1))
            seen.append(s.spec.solver)
        assert "damped-jacobi" in seen
        s.apply(cmd.SetSolver("damped-jacobi"))
        s.apply(cmd.SetParameter("beta", "0.5"))
        assert s.spec.solve["beta"] == 0.5 and s.message == ""
        s.apply(cmd.SetParameter("beta", "2"))  # out of its declared range: refused
        assert "beta" in s.message and s.spec.solve["beta"] == 0.5
        s.step()
        assert s.spec.solver == "damped-jacobi"
    finally:
        registry.METHODS.pop("damped-jacobi")
        registry.PLUGINS.pop("damped-jacobi")
        object.__setattr__(SOLVER, "choices", before)


def test_the_push_speed_reaches_the_step_and_is_checked():
    spec = RunSpec.create("column", assignments={"push_speed": "0.5"})
    assert spec.options.push_speed == 0.5 and spec.options.push_speed == 0.5
    assert spec.settings_json()["push_speed"] == 0.5
    with pytest.raises(ParamError, match="push_speed=0 is not valid"):
        RunSpec.create("column", assignments={"push_speed": "0"})
