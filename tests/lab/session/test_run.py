"""A headless run's report: timings by phase from the fast path, the last step's trace."""
from __future__ import annotations

import numpy as np
import pytest

import scenes
from lab.session.run import run_steps
from solver.methods import registry
from solver.step import PHASES, Simulation


def test_the_report_has_every_phase_and_the_last_steps_trace():
    sim = Simulation(scenes.build("column"), registry.settings("pgs", 20))
    progress = []
    report = run_steps(sim, 5, progress=lambda done, total: progress.append((done, total)))
    assert progress == [(k, 5) for k in range(1, 6)]
    for stat in ("median", "mean"):
        assert set(report["timing_ms"][stat]) == set(PHASES)
    last = report["last_step"]
    assert len(last["trace"]) == last["iterations"] + 1 == len(last["seconds"])
    assert last["residual"] == last["trace"][-1] or last["status"] == "max_iterations"
    assert report["contacts"]["last"] == 7 and report["time"] == 5 * sim.world.dt
    assert report["max_penetration"] >= 0.0
    assert report["max_speed"] == float(np.max(np.linalg.norm(sim.world.v, axis=1)))


from lab.session.run import (EXACT_STEPS, EXPLODED, HISTOGRAM_RATIO, NON_FINITE, OK, ESCAPED,
                     EnergyBudget, TimingStats, dt_warning, max_speed_squared, physics_check,
                     world_energy)


def test_timing_medians_are_exact_for_short_runs():
    rng = np.random.default_rng(3)
    samples = rng.lognormal(-8, 0.5, size=(1001, 2))
    stats = TimingStats(("a", "b"))
    for row in samples:
        stats.add({"a": row[0], "b": row[1]})
    out = stats.summary()
    assert stats.exact
    assert out["median"]["a"] == np.median(samples[:, 0])
    assert out["mean"]["b"] == pytest.approx(samples[:, 1].mean(), rel=1e-12)


def _stats_bytes(stats):
    parts = [stats._chunk, stats._sum] + list(stats._chunks)
    if stats._histogram is not None:
        parts.append(stats._histogram)
    return sum(p.nbytes for p in parts)


def test_long_runs_keep_constant_memory_and_medians_within_a_bin():
    rng = np.random.default_rng(4)
    stats = TimingStats(("a",))
    samples = []
    sizes = []
    for block in range(12):
        chunk = rng.lognormal(-7, 0.3, size=EXACT_STEPS // 2)
        samples.append(chunk)
        for value in chunk:
            stats.add({"a": value})
        sizes.append(_stats_bytes(stats))
    assert not stats.exact
    assert sizes[-1] == sizes[4]  # flat once folded into the histogram
    exact = np.median(np.concatenate(samples))
    assert stats.summary()["median"]["a"] == pytest.approx(exact, rel=HISTOGRAM_RATIO - 1)


def bowl_like():
    return scenes.build("bowl", {"n": 20})


def test_physics_check_flags_each_failure():
    w = bowl_like()
    budget = EnergyBudget(w)
    assert physics_check(w, budget)["status"] == OK
    w.x[3] = w.x[3] * 0.9  # down a little: energy lost is no failure
    w.x[4] = [5.0, 0.0, 0.0]  # outside the glass sphere of radius 1, at the same height
    check = physics_check(w, budget)
    assert check | {} == {"status": ESCAPED, "max_speed": 0.0, "non_finite": 0, "escaped": 1,
                          "energy_gain": check["energy_gain"],
                          "energy_allowance": budget.allowance}
    assert check["energy_gain"] < 0
    w.v[2] = [0.0, 0.0, 1e3]
    assert physics_check(w, budget)["status"] == EXPLODED
    w.x[0, 1] = np.nan
    check = physics_check(w, budget)
    assert check["status"] == NON_FINITE and check["non_finite"] == 1
    assert np.isnan(check["max_speed"])  # no finite number over a NaN state


def test_an_explosion_is_energy_gained_not_speed():
    """Energy that gravity's work gives is no explosion however fast the marble goes; energy
    from nowhere, beyond lifting every marble by its radius, is one."""
    w = scenes.build("incline")
    mass = 1.0 / w.inv_mass
    g = np.linalg.norm(w.gravity)
    budget = EnergyBudget(w)
    assert budget.allowance == pytest.approx(np.sum(mass * w.radius) * g)
    normal = np.asarray(w.container["normal"])
    down = np.array([normal[2], 0.0, -normal[0]])  # down the slope, in the plane
    w.x += 3000.0 * down  # 3 km down the unbounded plane, at the speed the drop gives
    w.v[:] = np.sqrt(2 * g * 3000.0 * normal[0]) * down
    check = physics_check(w, budget)
    assert check["status"] == OK and check["max_speed"] > 100
    assert abs(check["energy_gain"]) < 1e-9 * np.sum(mass) * g * 3000.0
    w.x[:, 2] += 0.9 * w.radius  # lifted by less than its radius: within the allowance
    assert physics_check(w, budget)["status"] == OK
    w.x[:, 2] += 0.2 * w.radius
    assert physics_check(w, budget)["status"] == EXPLODED
    budget.work = np.sum(mass * w.radius) * g  # work done on it from outside counts
    assert physics_check(w, budget)["status"] == OK
    budget.rebase(w)
    assert budget.start == world_energy(w) and budget.gain(w) == 0.0


def test_fixed_marbles_carry_no_energy():
    w = bowl_like()
    w.inv_mass[:] = 0.0
    w.v[:] = 50.0
    assert world_energy(w) == 0.0 and EnergyBudget(w).allowance == 0.0


def test_max_speed_squared_carries_nan_and_overflow():
    v = np.zeros((4, 3))
    v[1] = [3.0, 4.0, 0.0]
    assert max_speed_squared(v) == 25.0
    v[2, 0] = 1e200
    assert max_speed_squared(v) == np.inf
    v[3, 2] = np.nan
    assert np.isnan(max_speed_squared(v))


def test_an_exploding_run_stops_and_says_so():
    sim = Simulation(scenes.build("bowl"), registry.settings("jacobi", 20, overrides={"beta": 1}),
                     warm_start=1.0)
    report = run_steps(sim, 300)
    physics = report["physics"]
    assert physics["status"] in (EXPLODED, NON_FINITE)
    assert physics["stopped_at"] == report["steps_done"] < 300


def test_dt_warning_names_the_step_and_the_largest_safe_one():
    w = scenes.build("bowl")
    assert dt_warning(w) is None
    w.dt = 1.0
    text = dt_warning(w)
    assert "dt=1 s" in text and "0.101 s" in text and "\n" not in text
