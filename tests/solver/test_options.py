"""One options value per run: validated when made, replaced (never edited) to change a setting,
and what the step reads."""
import numpy as np
import pytest

import scenes
from solver.methods import registry
from solver.options import StepOptions
from solver.params import ParamError
from solver.step import Simulation


def test_defaults_and_values_are_kept_as_numbers():
    o = StepOptions(registry.settings("pgs", 20), "0.5", 0.25, "2")
    assert (o.warm_start, o.stabilise, o.threads) == (0.5, 0.25, 2)
    assert StepOptions(registry.settings("pgs")).threads == 1


@pytest.mark.parametrize("changes, fragment", [
    ({"warm_start": 1.5}, "warm_start=1.5"),
    ({"warm_start": "abc"}, "warm_start=abc"),
    ({"stabilise": -0.1}, "stabilise=-0.1"),
    ({"push_speed": 0.0}, "push_speed=0"),
    ({"threads": 0}, "threads=0"),
    ({"threads": 2.5}, "threads=2.5"),
])
def test_a_bad_value_is_refused_in_one_line_naming_it(changes, fragment):
    good = StepOptions(registry.settings("pgs"))
    with pytest.raises(ParamError, match=fragment) as caught:
        good.but(**changes)
    assert "\n" not in str(caught.value)
    with pytest.raises(ParamError, match=fragment):
        StepOptions(registry.settings("pgs"), **changes)


def test_a_fraction_may_be_a_bool():
    o = StepOptions(registry.settings("pgs"), True, False)
    assert (o.warm_start, o.stabilise) == (1.0, 0.0)


def test_solver_settings_must_be_the_registrys():
    with pytest.raises(ParamError, match="registry.settings"):
        StepOptions({"method": "pgs"})


def test_options_are_immutable_and_but_makes_a_new_value():
    o = StepOptions(registry.settings("pgs"), 0.5)
    with pytest.raises(AttributeError):
        o.warm_start = 1.0
    p = o.but(warm_start=1.0)
    assert (o.warm_start, p.warm_start, p.solve) == (0.5, 1.0, o.solve)


def test_the_simulation_reads_the_options_it_was_given():
    world = scenes.build("column")
    o = StepOptions(registry.settings("psor", 7, overrides={"omega": 1.2}), 0.5, 0.75)
    sim = Simulation(world, o)
    assert sim.options is o
    assert (sim.settings["omega"], sim.warm_start, sim.stabilise, sim.threads) == (1.2, 0.5,
                                                                                    0.75, 1)
    assert sim.step().result.iterations == 7
    sim.options = o.but(solve=registry.settings("jacobi", 3))
    report = sim.step()
    assert report.method == "jacobi" and report.result.iterations == 3
    with pytest.raises(AttributeError):
        sim.warm_start = 1.0
    with pytest.raises(TypeError, match="StepOptions"):
        sim.options = registry.settings("pgs")


def test_settings_with_keywords_are_the_same_run_as_options():
    """The short form Simulation(world, settings, warm_start, ...) builds the same options."""
    runs = []
    for make in (lambda w: Simulation(w, registry.settings("pgs", 10), 0.5, 0.5),
                 lambda w: Simulation(w, StepOptions(registry.settings("pgs", 10), 0.5, 0.5))):
        sim = make(scenes.build("bowl", {"n": 60}))
        for _ in range(20):
            sim.step()
        runs.append(sim.world.x.copy())
    assert np.array_equal(*runs)


def test_changing_the_warm_start_changes_the_next_step():
    """The step reads the options at the call: a cold start from then on."""
    def run(switch):
        sim = Simulation(scenes.build("bowl", {"n": 60}), registry.settings("pgs", 5), 1.0)
        for k in range(30):
            if switch and k == 15:
                sim.options = sim.options.but(warm_start=0.0)
            sim.step()
        return sim.world.x.copy()
    assert not np.array_equal(run(False), run(True))
