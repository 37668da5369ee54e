"""Every scene builds, is deterministic, starts without overlap, and steps."""
import numpy as np
import pytest

import scenes
from solver.params import ParamError
from solver.step import Simulation, max_penetration


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_scene_builds_deterministically_and_steps(name):
    a, b = scenes.build(name), scenes.build(name)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.colour, b.colour)
    assert max_penetration(a) < 1e-9
    sim = Simulation(a, "pgs", trace=False)
    for _ in range(20):
        report = sim.step()
    assert np.all(np.isfinite(a.x)) and report.contacts > 0


def test_documented_sizes():
    assert scenes.build("bowl").n == 350
    assert scenes.build("disk").n == 50 and scenes.build("disk").planar
    assert scenes.build("column").n == 7
    pair = scenes.build("mass-ratio")
    assert pair.mass[1] / pair.mass[0] == pytest.approx(1000)
    assert scenes.build("box").n == 1000
    assert scenes.build("box", {"n": "10000"}).n == 10000


def test_seed_changes_placement():
    a = scenes.build("box", {"seed": 1})
    b = scenes.build("box", {"seed": 2})
    assert not np.array_equal(a.x, b.x)


@pytest.mark.parametrize("name, overrides, fragment", [
    ("box", {"n": "-5"}, "n=-5"),
    ("bowl", {"n": "100000"}, "at most"),
    ("box", {"seed": "1.5"}, "seed=1.5"),
    ("column", {"omega": "1"}, "unknown parameter 'omega'"),
])
def test_bad_parameters_are_refused_by_name(name, overrides, fragment):
    with pytest.raises(ParamError, match=fragment):
        scenes.build(name, overrides)
    with pytest.raises(ParamError, match="valid: bowl"):
        scenes.build("nope")
