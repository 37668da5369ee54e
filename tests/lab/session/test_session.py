"""The Session without any Qt: commands between steps, pacing, divergence, colours, the drag
spring and the comparison of the current step."""
from __future__ import annotations

import json

import numpy as np
import pytest

import scenes
from lab.session import commands as cmd
from lab.session.session import (COLOUR_MODES, FRICTION_FALLBACK, FRICTION_ON, IMPULSE_SCALE,
                         ITERATION_LADDER, MAX_CATCH_UP, STABLE_SOLVER, Session, StepLog,
                         friction_text, heat)
from lab.session.spec import RunSpec
from solver.methods import registry
from solver.parallel import MIN_MARBLES
from solver.params import ParamError
from solver.step import PHASES


def session(scene="column", solver="pgs", speed=1.0, iterations=20, **assignments) -> Session:
    s = Session(RunSpec.create(scene, solver, iterations, speed=speed, assignments=assignments))
    s.start()
    return s


def test_commands_change_the_spec_and_the_simulation_together():
    s = session(solver="psor")
    s.apply(cmd.SetIterations(7))
    assert s.spec.iterations == 7 and s.sim.settings.iterations == 7
    s.apply(cmd.Relax(0.1))
    assert s.spec.solver_params["omega"] == pytest.approx(1.6)
    assert s.sim.settings["omega"] == pytest.approx(1.6)
    for _ in range(4):  # 1.7, 1.8, 1.9, then refused: 2.0 is outside (0, 2)
        s.apply(cmd.Relax(0.1))
    assert "limit" in s.message and s.spec.solver_params["omega"] == pytest.approx(1.9)
    s.apply(cmd.SetSolver("pgs"))
    s.apply(cmd.Relax(0.1))
    assert "no relaxation parameter" in s.message
    s.apply(cmd.SetSolver("psor"))  # each solver keeps the parameters it was given
    assert s.spec.solver_params["omega"] == pytest.approx(1.9) and s.spec.iterations == 7
    s.apply(cmd.CycleIterations(1))
    assert s.spec.iterations == 10
    s.apply(cmd.SetIterations(0))
    assert "iterations=0" in s.message and s.spec.iterations == 10  # refused, unchanged


def test_warm_start_cycles_off_half_full_and_is_a_parameter_too():
    s = session()
    seen = []
    for _ in range(3):
        s.apply(cmd.CycleWarmStart())
        seen.append((s.spec.options.warm_start, s.sim.warm_start))
    assert seen == [(0.5, 0.5), (1.0, 1.0), (0.0, 0.0)]
    s.apply(cmd.SetParameter("warm_start", "0.25"))
    assert s.sim.warm_start == 0.25
    s.apply(cmd.SetParameter("warm_start", "2"))
    assert "warm_start=2" in s.message and s.sim.warm_start == 0.25


def test_the_push_speed_is_set_without_touching_the_stabilisation():
    s = session()
    s.apply(cmd.SetParameter("stabilise", "0.5"))
    s.apply(cmd.SetParameter("push_speed", "0.25"))
    assert s.sim.options.push_speed == 0.25 and s.spec.options.push_speed == 0.25
    assert s.sim.stabilise == 0.5 and s.spec.options.stabilise == 0.5


def test_iteration_ladder_stops_at_its_ends_and_says_so():
    s = session()
    for _ in range(len(ITERATION_LADDER) + 2):
        s.apply(cmd.CycleIterations(-1))
    assert s.spec.iterations == ITERATION_LADDER[0]
    assert s.message == "iterations already at the smallest step of the ladder (1)"
    for _ in range(len(ITERATION_LADDER) + 2):
        s.apply(cmd.CycleIterations(1))
    assert s.spec.iterations == ITERATION_LADDER[-1]
    assert s.message == f"iterations already at the largest step of the ladder " \
                        f"({ITERATION_LADDER[-1]})"


def test_each_message_is_counted_so_a_display_shows_it_once():
    s = session()
    seq = s.message_seq
    s.apply(cmd.Relax(0.1))  # pgs has no relaxation: said
    assert "no relaxation" in s.message and s.message_seq == seq + 1
    s.apply(cmd.Relax(0.1))  # the same words again: said again
    assert s.message_seq == seq + 2 and s.state().message_seq == seq + 2
    s.apply(cmd.CycleWarmStart())  # nothing to say
    assert s.message == "" and s.message_seq == seq + 2


def test_a_scene_parameter_rebuilds_the_scene_and_a_bad_one_changes_nothing():
    s = session(scene="column")
    s.step()
    generation = s.generation
    s.apply(cmd.SetParameter("n", 3))
    assert s.world.n == 3 and s.generation == generation + 1 and s.sim.steps == 0
    s.apply(cmd.SetParameter("n", 5000))  # outside the column's range
    assert "n=5000" in s.message and s.world.n == 3 and s.generation == generation + 1
    s.apply(cmd.SetParameter("nope", 1))
    assert "unknown parameter 'nope'" in s.message


def test_drag_and_friction_change_the_running_world_without_a_rebuild():
    s = session(scene="column")
    for _ in range(5):
        s.step()
    generation, steps = s.generation, s.sim.steps
    s.apply(cmd.SetParameter("damping", "0.5"))
    s.apply(cmd.SetParameter("mu", 0.4))
    assert s.message == "" and s.generation == generation and s.sim.steps == steps
    assert s.world.damping == 0.5 and (s.world.mu, s.world.mu_wall) == (0.4, 0.0)
    assert s.state().scene_params["damping"] == 0.5 and s.state().friction[0] == 0.4
    s.apply(cmd.Reset())  # a reset keeps them
    assert s.world.damping == 0.5 and s.world.mu == 0.4
    s.apply(cmd.SetSolver("pcg"))  # refused: pcg cannot solve friction
    assert "pcg" in s.message and s.spec.solver == "pgs"
    s.apply(cmd.SetParameter("mu", 0.0))
    s.apply(cmd.SetSolver("pcg"))
    s.apply(cmd.SetParameter("mu", 0.3))  # refused the other way round: nothing changes
    assert s.world.mu == 0.0 and s.spec.scene_params["mu"] == 0.0 and "pcg" in s.message


def test_pause_and_single_step():
    s = session()
    s.apply(cmd.Pause(True))
    assert s.catch_up(now=1e9) == 0  # paused: no step however late
    s.apply(cmd.Step())
    assert s.paused and s.sim.steps == 1 and len(s.log) == 1
    s.apply(cmd.Pause())
    assert not s.paused


def test_real_time_pacing_and_a_dropped_lag():
    s = session(speed=1.0)
    dt = s.world.dt
    assert s.catch_up(now=100.0) == 1  # the pacing starts one step behind
    assert s.catch_up(now=100.0 + 4 * dt) == 4  # 4 steps of wall time later
    assert s.catch_up(now=100.0 + 4.4 * dt) == 0
    assert s.catch_up(now=100.0 + 1000 * dt) == 1  # far behind: the lag is dropped
    assert s.catch_up(now=100.0 + 1003 * dt) == 3
    s.apply(cmd.SetSpeed(2.0))
    s.catch_up(now=200.0)
    assert s.catch_up(now=200.0 + 2 * dt) == 4  # twice real time
    assert MAX_CATCH_UP >= 4


@pytest.mark.parametrize("speed", [0.05, 1.0])
def test_a_timer_tick_a_little_early_or_late_makes_its_one_step(speed):
    """A timer of period dt / speed does not tick on the microsecond: a tick a millisecond
    early must still find its step due, not none and two at the next (at 0.05x a stutter: a
    step, 0.8 s, two steps)."""
    s = session(speed=speed)
    period = s.world.dt / speed
    jitter = (-1e-3, 1e-3, -2e-4, 0.0, -1e-3, 5e-4, -3e-3, 2e-3)
    ticks = [100.0 + k * period + j for k, j in enumerate(jitter)]
    assert [s.catch_up(now=t) for t in ticks] == [1] * len(ticks)


def test_flat_out_steps_at_least_once_and_stops_on_a_divergence():
    s = session(scene="bowl", solver="jacobi", speed=0.0, beta=1.0)
    assert s.run_for(0.0) == 1
    while not s.diverged:
        s.run_for(0.05)
    # β = 1 flings marbles out of the bowl (an explosion) a step before its residual diverges.
    assert s.paused and "marbles exploded (their energy rose by" in s.message
    assert s.sim.steps == 4
    s.apply(cmd.Pause(False))
    s.run_for(1.0)
    assert s.paused and "jacobi diverged" in s.message
    assert s.last_report.result.status == "divergence"
    assert np.all(np.isfinite(s.world.x)) and np.all(np.isfinite(s.world.v))
    s.apply(cmd.SetSolver("pgs"))
    s.apply(cmd.Reset())
    assert not s.diverged and not s.paused and s.world.time == 0.0


def diverged(s: Session) -> Session:
    while not s.diverged:
        s.run_for(0.05)
    return s


def test_every_divergence_pauses_so_resuming_never_runs_on_silently():
    """Space after a divergence must not run on for good (marbles at 1e7 m/s, the display
    saying "paused"): each divergence pauses again (β = 1 diverges at every step)."""
    s = diverged(session(scene="bowl", solver="jacobi", speed=0.0, beta=1.0))
    first = s.sim.steps
    assert s.paused and f"at step {first} (t = {s.world.time:.2f} s): " in s.alarm
    assert s.alarm.endswith("; pgs at 20 iterations holds it")
    for k in range(1, 4):
        s.apply(cmd.Pause())
        assert not s.paused and s.diverged and "pauses again at the next" in s.message
        assert s.run_for(1.0) == 1  # one step: it diverged again and paused
        assert s.paused and s.state().paused and s.state().diverged
        assert s.alarm.startswith("jacobi diverged at step ")
        assert (f"at step {first + k} (t = {s.world.time:.2f} s): jacobi's iterates grew "
                "past its divergence bound; pgs at 20 iterations holds it") in s.alarm
    assert np.all(np.isfinite(s.world.v)) and np.abs(s.world.v).max() < 1e3


def test_marbles_given_energy_from_nowhere_pause_the_run():
    s = session(scene="column", speed=0.0)
    s.step()
    s.world.v[6] = (0.0, 0.0, 30.0)  # the top marble, as a wild solver might
    s.step()
    assert s.paused and s.diverged and s.alarm.startswith("marbles exploded (their energy ")
    assert "J of lifting each by its radius) at step 2 (t = 0.04 s): the step's solve " \
        in s.alarm and s.alarm.endswith("; pgs at 20 iterations holds it")
    s.apply(cmd.Pause(False))
    s.step()  # flying on with the energy it was given: nothing new
    assert not s.paused
    s.world.v[6] = np.nan
    s.step()
    assert s.paused and s.alarm.startswith("marbles became non-finite at step 4")
    s.apply(cmd.Reset())
    assert not s.diverged and s.alarm == "" and not s.paused  # the alarm's pause ends


def test_a_marble_rolling_down_the_incline_at_any_speed_is_no_explosion():
    s = session(scene="incline", speed=0.0)
    while s.world.time < 50.0:
        s.run_for(1.0)
        assert not s.diverged, s.alarm
    assert np.linalg.norm(s.world.v[0]) > 100.0


def test_the_work_of_the_drag_spring_is_no_explosion():
    s = session(scene="column", speed=0.0)
    s.step()
    s.apply(cmd.DragStart(6))
    for k in range(100):  # up and down, fast: the spring's work is not energy from nowhere
        s.apply(cmd.DragMove(6, s.world.x[6] + (0.0, 0.0, 3.0 if k % 20 < 10 else -3.0)))
        s.step()
    s.apply(cmd.DragEnd())
    for _ in range(50):
        s.step()
    assert not s.diverged, s.alarm


def test_a_new_scene_after_a_divergence_runs_and_a_chosen_pause_stays():
    s = session(scene="bowl", solver="jacobi", speed=0.0, beta=1.0)
    s.run_for(30.0)
    assert s.diverged and s.paused
    s.apply(cmd.CycleScene(1))
    assert not s.diverged and not s.paused and s.sim.steps == 0
    s.apply(cmd.Pause(True))
    s.apply(cmd.CycleScene(1))
    assert s.paused


def test_reset_keeps_a_pause_the_user_chose():
    s = session()
    s.step()
    s.apply(cmd.Pause(True))
    s.apply(cmd.Reset())
    assert s.paused and s.sim.steps == 0  # R while paused does not resume


def test_the_recover_command_switches_to_a_stable_solver_and_runs_a_reset_world():
    s = diverged(session(scene="bowl", solver="jacobi", speed=0.0, beta=1.0))
    generation = s.generation
    s.apply(cmd.Recover())
    assert s.spec.solver == STABLE_SOLVER == s.sim.method.name and s.spec.iterations == 20
    assert s.generation == generation + 1 and s.world.time == 0.0
    assert not s.paused and not s.diverged
    assert s.message == (f"switched from jacobi at 20 iterations to {STABLE_SOLVER} at 20 "
                         "iterations and reset")
    for _ in range(50):
        s.step()
    assert not s.diverged
    s.apply(cmd.Recover())  # already on it: a reset, said so
    assert s.message == f"{STABLE_SOLVER} at 20 iterations: reset" and s.sim.steps == 0


def test_every_step_is_logged_once_in_order():
    s = session()
    for _ in range(5):
        s.step()
    records = s.log.take()
    assert len(records) == 5 and len(s.log) == 0
    np.testing.assert_allclose(records.time, s.world.dt * np.arange(1, 6))
    assert records[-1].residual == s.last_report.result.residual
    assert records[-1].total == s.last_report.timings["total"]


def test_the_trace_is_recorded_a_few_times_a_second():
    s = session(scene="bowl")
    for _ in range(60):  # the marbles reach the bowl; one trace at the first step only
        s.step(now=0.0)
    assert s.trace_step == 1
    s.step(now=10.0)
    assert s.trace is not None and s.trace.size == 21 and s.trace_step == 61
    s.step(now=10.01)  # within TRACE_PERIOD: fast path, the trace shown stays
    assert s.trace_step == 61 and s.last_report.result.trace is None
    s.step(now=10.1)
    assert s.trace_step == 63


def test_a_long_solve_is_traced_at_most_a_share_of_the_wall_time(monkeypatch):
    """A solve of 0.1 s (a large pile) is traced once per 0.1 / TRACE_SHARE s of wall time,
    not at every step as TRACE_PERIOD alone would: a traced solve costs about two."""
    from lab.session import session as session_module

    s = session(scene="bowl")
    real = s.copies.step

    def slow(trace):  # the bowl's step, reported as a large pile's
        report = real(trace)
        report.timings["solve"] = 0.1
        return report

    monkeypatch.setattr(s.copies, "step", slow)
    gap = 0.1 / session_module.TRACE_SHARE
    s.step(now=100.0)
    first = s.trace_step
    s.step(now=100.0)  # untraced: its solve sets the gap
    s.step(now=100.5)  # TRACE_PERIOD has passed, the trace's share has not
    assert s.trace_step == first and s.last_report.result.trace is None
    s.step(now=100.0 + gap + 0.01)
    assert s.trace_step == s.sim.steps


def test_cycling_visits_every_solver_and_scene():
    s = session()
    names = list(registry.METHODS)
    seen = []
    for _ in names:
        s.apply(cmd.CycleSolver(1))
        seen.append(s.spec.solver)
    assert sorted(seen) == sorted(names) and s.spec.solver == "pgs"
    s.apply(cmd.CycleSolver(-1))
    assert s.spec.solver == names[names.index("pgs") - 1]
    order = list(scenes.SCENES)
    s.apply(cmd.CycleScene(1))
    assert s.spec.scene == order[(order.index("column") + 1) % len(order)]
    assert s.world.container == scenes.build(s.spec.scene).container


def test_colour_modes_and_the_impulse_colouring():
    s = session(scene="column", solver="pgs", iterations=5000, abs_tol=1e-10)
    s.step()
    assert np.array_equal(s.colours(), s.world.colour)
    for mode in COLOUR_MODES[1:]:
        s.apply(cmd.SetColourMode())
        assert s.colour_mode == mode
    s.apply(cmd.SetColourMode())
    assert s.colour_mode == COLOUR_MODES[0]
    s.apply(cmd.SetColourMode("impulse"))
    # Impulse: the impulses of every contact a marble takes part in, in units of its weight per
    # step; for the resting column that is the weight above plus below it, a known answer.
    p, lam, w = s.sim.problem, s.sim.lam, s.world
    total = np.zeros(w.n)
    for c in range(p.m):
        for end in (p.body_a[c], p.body_b[c]):
            if end >= 0:
                total[end] += lam[c]
    weight = 9.81 * w.dt * w.mass
    np.testing.assert_allclose(s.colours(), heat(total / (IMPULSE_SCALE * weight)))
    assert np.allclose(total[:-1] / weight[:-1], 2 * np.arange(w.n - 1, 0, -1) + 1, rtol=1e-6)
    s.apply(cmd.SetColourMode("nope"))
    assert "colour mode" in s.message and s.colour_mode == "impulse"


def test_drag_pulls_a_marble_to_the_target_and_lets_go():
    s = session(scene="column")
    top = 6  # the column's marbles are stacked bottom to top
    target = np.array([0.0, 0.0, 1.8])
    s.apply(cmd.DragStart(top))
    s.apply(cmd.DragMove(top, target))
    for _ in range(150):
        s.step()
    assert np.linalg.norm(s.world.x[top] - target) < 0.02
    s.apply(cmd.DragEnd())
    for _ in range(150):
        s.step()
    assert s.world.x[top, 2] == pytest.approx(1.3, abs=0.03)  # back on top of the stack


def test_the_comparison_of_the_current_step(tmp_path):
    s = session()
    with pytest.raises(Exception, match="no contact problem yet"):
        s.benchmark(5, tmp_path, "test")
    s.step()
    table, paths, meta = s.benchmark(5, tmp_path, "test")
    assert table.solvers == list(registry.METHODS)
    assert table.residual.shape == (len(registry.METHODS), 6)
    assert [p.name for p in paths] == ["benchmark.npy", "benchmark.json", "benchmark.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)
    info = json.loads((tmp_path / "benchmark.json").read_text())
    assert info["scene"] == "column" and info["step"] == 1 and info["source"] == "test"
    assert meta["contact_count"] == info["contacts"] == s.sim.problem.m


def test_an_unknown_command_is_a_type_error():
    s = session()
    with pytest.raises(TypeError):
        s.apply("pause")


def test_step_log_keeps_every_row_in_order_past_its_first_buffer():
    log = StepLog()
    n = 600  # the buffer starts at 256 rows and doubles
    for k in range(n):
        log.add(0.02 * k, k + 0.5, {name: k + i for i, name in enumerate(PHASES)})
    assert len(log) == n
    records = log.take()
    assert len(log) == 0 and len(log.take()) == 0
    np.testing.assert_array_equal(records.time, 0.02 * np.arange(n))
    np.testing.assert_array_equal(records.residual, np.arange(n) + 0.5)
    for i, name in enumerate(PHASES):
        np.testing.assert_array_equal(records[name], np.arange(n) + i)
    assert records[-1].total == n - 1 + PHASES.index("total")
    with pytest.raises(ValueError):
        records.time[0] = 1.0  # frames are immutable


def test_heat_maps_the_unit_interval_and_clamps_the_rest():
    rgb = heat(np.array([0.0, 0.5, 1.0, 7.0, np.nan]))
    assert rgb.shape == (5, 3) and rgb.dtype == np.float32
    assert np.all(rgb[3] == rgb[2]) and np.all(rgb[4] == rgb[2])
    np.testing.assert_allclose(rgb[0], [0.15, 0.2, 0.6], rtol=1e-6)


def test_the_friction_key_turns_every_mu_off_and_restores_them():
    """Off: μ, μ_wall, μ_roll and μ_spin 0 on the running world (no reset) and in the spec, so
    a reset keeps it off; on again: exactly the values it had."""
    s = session(scene="bowl", n=20, mu=0.4, mu_wall=0.3, mu_roll=0.02, mu_spin=0.01)
    for _ in range(3):
        s.step()
    had = (0.4, 0.3, 0.02, 0.01)
    assert s.state().friction == had
    generation, steps = s.generation, s.sim.steps
    s.apply(cmd.ToggleFriction())
    assert s.state().friction == (0.0, 0.0, 0.0, 0.0) and not s.world.frictional
    assert "friction off" in s.message
    assert s.generation == generation and s.sim.steps == steps  # the same world goes on
    s.step()
    assert s.sim.problem is not None and not getattr(s.sim.problem, "frictional", False)
    s.apply(cmd.Reset())
    assert not s.world.frictional and s.spec.scene_params["mu_roll"] == 0.0
    s.apply(cmd.ToggleFriction())
    assert s.state().friction == had and "μ 0.4 (walls 0.3)  μ_roll 0.02 m" in s.message
    assert [s.spec.scene_params[k] for k in ("mu", "mu_wall", "mu_roll", "mu_spin")] == list(had)
    s.step()
    assert s.sim.problem.frictional and s.sim.problem.rows == 6


def test_the_friction_key_says_the_warm_start_follows_and_the_history_starts_again():
    """Besides μ, F changes the warm start (unless one was chosen) and empties the history:
    its message says both, and the history does start at the step F was pressed at."""
    s = session(scene="bowl", n=20, mu=0.5)
    assert s.spec.options.warm_start == 1.0  # friction's default
    for _ in range(4):
        s.step()
    assert s.history.kept.span(s.sim.steps).first == 0
    s.apply(cmd.ToggleFriction())
    assert s.spec.options.warm_start == 0.0
    assert "warm start 1 -> 0" in s.message and "the history starts again" in s.message
    pressed = s.sim.steps
    s.step()
    assert s.history.kept.span(s.sim.steps).first == pressed
    s.apply(cmd.SetParameter("warm_start", "0.5"))  # chosen: the key leaves it
    s.apply(cmd.ToggleFriction())
    assert s.spec.options.warm_start == 0.5 and "warm start" not in s.message
    assert "the history starts again" in s.message


def test_the_friction_key_on_a_scene_without_friction_gives_mu_one_half():
    s = session(scene="column")
    s.apply(cmd.ToggleFriction())
    assert s.state().friction == (FRICTION_ON, FRICTION_ON, 0.0, 0.0)
    s.apply(cmd.ToggleFriction())
    s.apply(cmd.ToggleFriction())  # on again: what it had, not the scene's zeros
    assert s.state().friction == (FRICTION_ON, FRICTION_ON, 0.0, 0.0)
    # A scene with one μ for every contact (no mu_wall) keeps it so.
    s.apply(cmd.SetScene("incline"))
    s.apply(cmd.ToggleFriction())
    assert "mu_wall" not in s.spec.scene_params and s.state().friction == (0.0,) * 4
    s.apply(cmd.ToggleFriction())
    assert s.state().friction == (0.3, 0.3, 0.0, 0.0)  # the incline's own μ


def test_friction_on_a_solver_without_it_switches_to_pgs_and_says_so():
    s = session(scene="column", solver="pcg")
    s.apply(cmd.ToggleFriction())
    assert s.spec.solver == FRICTION_FALLBACK == "pgs" and s.sim.method.name == "pgs"
    assert s.world.frictional and "pcg solves frictionless contacts only" in s.message
    s.step()
    assert s.sim.problem.frictional


def test_solvers_without_friction_are_skipped_and_refused_on_a_frictional_scene():
    s = session(scene="heap", n=20)
    able = registry.friction_solvers()
    assert "pgs" in able and len(able) < len(registry.METHODS)
    seen = []
    for _ in able:
        s.apply(cmd.CycleSolver(1))
        seen.append(s.spec.solver)
    start = able.index("pgs")
    assert seen == (able[start + 1:] + able[:start + 1])  # in registry order, back to pgs
    s.apply(cmd.CycleSolver(-1))
    assert s.spec.solver == able[start - 1]
    s.apply(cmd.SetSolver("pcg"))
    assert s.spec.solver == able[start - 1]
    assert s.message.startswith("solver pcg solves frictionless contacts only")
    assert "\n" not in s.message
    s.apply(cmd.SetParameter("mu", 0.0))  # frictionless now: every solver again
    s.apply(cmd.SetParameter("mu_roll", 0.0))
    s.apply(cmd.SetSolver("pcg"))
    assert s.spec.solver == "pcg" and s.message == ""
    s.apply(cmd.SetParameter("mu", 0.2))  # refused, as on the command line
    assert "solver pcg solves frictionless contacts only" in s.message
    assert not s.world.frictional and s.spec.scene_params["mu"] == 0.0


def test_a_frictional_scene_on_a_solver_without_friction_switches_to_pgs():
    s = session(scene="column", solver="pcg")
    s.apply(cmd.SetScene("bowl"))  # frictionless: pcg stays
    assert s.spec.solver == "pcg" and s.message == ""
    s.apply(cmd.SetScene("incline"))
    assert s.spec.scene == "incline" and s.spec.solver == "pgs" and s.sim.method.name == "pgs"
    assert s.message == "pcg solves frictionless contacts only: switched to pgs for incline"
    s.step()
    assert s.sim.problem.frictional


def test_the_comparison_of_a_frictional_problem_runs_the_friction_solvers(tmp_path):
    s = session(scene="incline")
    s.step()
    table, paths, meta = s.benchmark(5, tmp_path, "test")
    assert list(table.solvers) == registry.friction_solvers()
    rows = np.load(tmp_path / "benchmark.npy", allow_pickle=False)
    assert list(rows["solver"]) == registry.friction_solvers()
    assert np.all(np.isfinite(rows["residual"]))


def test_the_state_and_the_text_of_the_friction():
    assert friction_text((0.5, 0.5, 0.0, 0.0)) == "μ 0.5"
    assert friction_text((0.0, 0.0, 0.0, 0.0)) == "μ 0"
    assert friction_text((0.5, 0.2, 0.01, 0.0)) == "μ 0.5 (walls 0.2)  μ_roll 0.01 m"
    assert friction_text((0.5, 0.5, 0.0, 0.003)) == "μ 0.5  μ_spin 0.003 m"


def test_the_warm_start_follows_the_friction_until_the_user_sets_one():
    s = session(scene="column")
    assert s.spec.options.warm_start == 0.0
    s.apply(cmd.SetScene("pyramid"))
    assert s.spec.options.warm_start == 1.0 and s.sim.warm_start == 1.0
    s.apply(cmd.ToggleFriction())  # friction off: the article's cold start
    assert s.spec.options.warm_start == 0.0 and s.sim.warm_start == 0.0
    s.apply(cmd.CycleWarmStart())  # the user's choice now stays
    chosen = s.spec.options.warm_start
    s.apply(cmd.ToggleFriction())
    assert s.spec.options.warm_start == chosen == s.sim.warm_start


@pytest.mark.parametrize("scene, assignments, blocks", [
    ("column", {"threads": 2}, 1),  # a few marbles: serial whatever is asked
    ("box", {"n": MIN_MARBLES, "threads": 2}, 2),
    ("box", {"n": MIN_MARBLES, "threads": 1}, 1),
])
def test_the_state_says_how_many_threads_the_step_uses(scene, assignments, blocks):
    sets = {k: v for k, v in assignments.items() if k != "threads"}
    threads = assignments["threads"]
    s = Session(RunSpec.create(scene, "pgs", 20, assignments=sets, threads=threads))
    s.start()
    assert (s.state().threads, s.state().blocks) == (threads, blocks)


@pytest.mark.parametrize("scene, n, blocks", [("bowl", 350, 1), ("box", 3000, 2)])
def test_the_warm_up_compiles_the_kernels_the_pile_will_run(monkeypatch, scene, n, blocks):
    """A pile below MIN_MARBLES steps serially with any thread count, so its warm-up compiles no
    parallel kernels (tens of seconds on a cold cache); a larger one warms its blocks. Only the
    world's rows are compiled, and the friction key's new rows before the next step."""
    from lab.session import compiling
    asked = []
    monkeypatch.setattr(compiling, "warmup", lambda names, report, threads, rows, kernels:
                        asked.append((threads, rows)) or 0.0)
    s = Session(RunSpec.create(scene, "pgs", 20, assignments={"n": n}, threads=2))
    s.start()
    assert asked == [(blocks, (1,))] and s.sim.blocks == blocks
    s.step()
    assert len(asked) == 1  # compiled once
    s.apply(cmd.ToggleFriction())
    s.step()
    assert asked == [(blocks, (1,)), (blocks, (3,))]


def test_a_step_during_which_numba_compiles_is_marked_in_its_record():
    """A kernel compiled inside a step (a solver's first use) makes it the compiler's time:
    its record says so, and the steps around it do not."""
    from numba import njit

    s = session()
    s.step()

    @njit
    def first_use(x):  # a new function: compiled on its first call, never from the cache
        return x + 1

    plain = s.copies.step

    def compiling(trace):
        first_use(1)
        return plain(trace)

    s.copies.step = compiling
    s.step()
    s.step()  # compiled already
    assert list(s.log.take().compiled) == [0.0, 1.0, 0.0]
