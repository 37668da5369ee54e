"""Every scene builds, is deterministic, starts without overlap, and steps."""
import numpy as np
import pytest

import scenes
from solver.params import ParamError
from solver.methods import registry
from solver.step import Simulation, max_penetration


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_scene_builds_deterministically_and_steps(name):
    a, b = scenes.build(name), scenes.build(name)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.colour, b.colour)
    assert max_penetration(a) < 1e-9
    sim = Simulation(a, registry.settings("pgs"))
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


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_every_scene_takes_damping_and_the_state_snapshot_keeps_it(name, tmp_path):
    from lab.io.snapshot import load_state, save_state
    assert scenes.build(name).damping == 0.0  # the article's marbles are undamped
    world = scenes.build(name, {"damping": "0.5"})
    assert world.damping == 0.5
    save_state(tmp_path / "s.npz", world)
    assert load_state(tmp_path / "s.npz").damping == 0.5
    assert world.copy().damping == 0.5


@pytest.mark.parametrize("name, overrides, fragment", [
    ("bowl", {"damping": "-1"}, "damping=-1"),
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


def test_the_poured_bowl_starts_on_its_highest_sites_and_falls_in():
    """pour=1: the bowl's bottom empty at the start (its lowest marble above the centre less
    two radii), the same marbles in their colours; within a second they reach the bottom."""
    still, poured = scenes.build("bowl"), scenes.build("bowl", {"pour": "1"})
    bottom = 1.0 - 1.0 + 0.1  # the sphere's centre, less its radius, plus a marble's
    assert still.x[:, 2].min() < 0.2 and poured.x[:, 2].min() > 0.8
    assert poured.n == still.n and np.array_equal(poured.colour, still.colour)
    assert max_penetration(poured) < 1e-9
    sim = Simulation(poured, registry.settings("pgs"))
    for _ in range(50):
        sim.step()
    assert poured.x[:, 2].min() < bottom + 0.05
    with pytest.raises(ParamError, match="at most"):
        scenes.build("bowl", {"pour": "1", "n": "100000"})
