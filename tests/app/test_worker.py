"""The simulation thread alone (no window): frames, queued commands, drag, divergence, stop."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QObject, Slot

import scenes
from app import cores
from app.hud import RateMeter, hud_text
from app.plots import FLOOR, clamp_residual
from app.worker import COLOUR_MODES, SimThread, SimWorker, StepLog, heat
from solver.step import PHASES
from solver import registry


class Collector(QObject):
    """Lives in the test (GUI) thread, so frames arrive through queued connections as in the
    program."""

    def __init__(self):
        super().__init__()
        self.frames = []
        self.progress = []

    @Slot(object)
    def frame(self, f):
        self.frames.append(f)

    @Slot(str, int, int)
    def on_progress(self, text, done, total):
        self.progress.append((text, done, total))

    @property
    def last(self):
        return self.frames[-1] if self.frames else None


@pytest.fixture
def run(qtbot):
    threads = []

    def start(scene="column", solver="pgs", speed=0.0, **kw):
        worker = SimWorker(scene, solver, speed=speed, **kw)
        sim = SimThread(worker)
        got = Collector()
        worker.frameReady.connect(got.frame)
        worker.progress.connect(got.on_progress)
        sim.start()
        threads.append(sim)
        qtbot.waitUntil(lambda: got.last is not None and got.last.steps > 0, timeout=60000)
        return sim, got

    yield start
    for sim in threads:
        assert sim.stop(5000)


def wait_for(qtbot, got, predicate, timeout=20000):
    """The first frame delivered from now on that satisfies `predicate`. Frames delivered
    before this call were emitted before any command sent just before it (the GUI thread has
    not run its event loop in between), so none of them can reflect that command."""
    start = len(got.frames)
    found = []

    def check():
        while start + len(found) < len(got.frames) and not found[-1:] == [True]:
            f = got.frames[start + len(found)]
            if predicate(f):
                found.append(True)
                got.matched = f
                return True
            found.append(False)
        return bool(found) and found[-1]

    qtbot.waitUntil(check, timeout=timeout)
    return got.matched


def test_frames_are_immutable_copies_of_the_world(qtbot, run):
    sim, got = run()
    sim.send("pause", True)
    f = wait_for(qtbot, got, lambda f: f.state.paused)
    world = sim.worker._sim.world  # safe to read: the worker is paused and idle
    np.testing.assert_allclose(f.x, world.x.astype(np.float32))
    assert f.steps == sim.worker._sim.steps
    for a in (f.x, f.radius, f.colour):
        assert not a.flags.writeable
    assert f.x.base is None or f.x.base is not world.x
    assert f.x.dtype == np.float32 and f.x.shape == (7, 3) and f.colour.shape == (7, 3)


def test_commands_apply_between_steps(qtbot, run):
    sim, got = run(scene="column", solver="psor")
    sim.send("iterations", 7)
    f = wait_for(qtbot, got, lambda f: f.state.iterations == 7)
    assert sim.worker._sim.settings.iterations == 7
    sim.send("relax", 0.1)
    f = wait_for(qtbot, got, lambda f: f.state.solver_params.get("omega") != 1.5)
    assert f.state.solver_params["omega"] == pytest.approx(1.6)
    assert sim.worker._sim.settings.params["omega"] == pytest.approx(1.6)
    for _ in range(4):  # 1.7, 1.8, 1.9, then refused
        sim.send("relax", 0.1)
    f = wait_for(qtbot, got, lambda f: "limit" in f.state.message)
    assert f.state.solver_params["omega"] == pytest.approx(1.9)  # 2.0 is outside (0, 2)
    sim.send("warm_start")  # the key cycles off -> half -> full -> off
    wait_for(qtbot, got, lambda f: f.state.warm_start == 0.5)
    assert sim.worker._sim.warm_start == 0.5
    sim.send("warm_start")
    wait_for(qtbot, got, lambda f: f.state.warm_start == 1.0)
    sim.send("warm_start")
    wait_for(qtbot, got, lambda f: f.state.warm_start == 0.0)
    assert sim.worker._sim.warm_start == 0.0
    sim.send("warm_start", 1.0)
    wait_for(qtbot, got, lambda f: f.state.warm_start == 1.0)
    sim.send("cycle_iterations", 1)
    f = wait_for(qtbot, got, lambda f: f.state.iterations != 7)
    assert f.state.iterations == 10


def test_pause_and_single_step(qtbot, run):
    sim, got = run()
    sim.send("pause", True)
    f = wait_for(qtbot, got, lambda f: f.state.paused)
    before = f.steps
    sim.send("step")
    f = wait_for(qtbot, got, lambda f: f.steps != before)
    assert f.steps == before + 1 and f.state.paused and f.stepped
    sim.send("pause", False)
    wait_for(qtbot, got, lambda f: f.steps > before + 5)


def cpu_seconds(tid: int) -> float:
    """User + system CPU time of a thread of this process (Linux)."""
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_paused_flat_out_the_thread_sleeps(qtbot, run):
    """At speed 0 the step timer fires whenever the thread is idle; paused, it must be
    stopped, or the thread spins on a core (and on the GIL the GUI needs)."""
    sim, got = run(speed=0.0)
    sim.send("pause", True)
    wait_for(qtbot, got, lambda f: f.state.paused)
    tid = sim.worker.thread_id
    before = cpu_seconds(tid)
    qtbot.wait(1000)
    assert cpu_seconds(tid) - before < 0.2  # spinning took the whole second
    sim.send("pause", False)
    f = wait_for(qtbot, got, lambda f: not f.state.paused)
    wait_for(qtbot, got, lambda g: g.steps > f.steps + 5)


@pytest.mark.skipif(len(cores.available()) < 2, reason="needs two cores")
def test_flat_out_the_simulation_has_a_core_of_its_own(qtbot, run):
    """app.cores: stepping at speed 0 the worker's thread runs on one core and this (GUI)
    thread on the others; at real time, paused or stopped, every thread has all cores."""
    every = set(cores.available())
    sim, got = run(speed=0.0)
    tid, core = sim.worker.thread_id, sim.worker.core
    assert core in every
    assert os.sched_getaffinity(tid) == {core}
    assert os.sched_getaffinity(0) == every - {core}
    sim.send("speed", 1.0)
    wait_for(qtbot, got, lambda f: f.state.speed == 1.0)
    assert os.sched_getaffinity(tid) == every and os.sched_getaffinity(0) == every
    sim.send("speed", 0.0)
    wait_for(qtbot, got, lambda f: f.state.speed == 0.0)
    assert os.sched_getaffinity(0) == every - {core}
    sim.send("pause", True)
    wait_for(qtbot, got, lambda f: f.state.paused)
    assert os.sched_getaffinity(tid) == every and os.sched_getaffinity(0) == every
    sim.send("pause", False)
    wait_for(qtbot, got, lambda f: not f.state.paused)
    assert os.sched_getaffinity(0) == every - {core}
    assert sim.stop(5000)
    assert os.sched_getaffinity(0) == every


def test_frames_carry_every_step_once(qtbot, run):
    """As fast as possible a frame covers the steps of one timer tick (BATCH_SECONDS), and
    consecutive frames hand over every step exactly once, in order, with its own numbers."""
    sim, got = run(scene="column", speed=0.0)
    start = len(got.frames)
    qtbot.waitUntil(lambda: sum(len(f.records) for f in got.frames[start:]) > 500,
                    timeout=20000)
    frames = [f for f in got.frames[start:] if f.stepped]
    assert max(len(f.records) for f in frames) > 1  # batched: fewer frames than steps
    for prev, f in zip(frames, frames[1:]):
        assert f.steps - prev.steps == len(f.records)
        times = np.array([prev.records[-1].time] + [r.time for r in f.records])
        np.testing.assert_allclose(np.diff(times), f.dt, rtol=1e-9)
    for f in frames:
        last = f.records[-1]
        assert last.time == f.time and last.residual == f.residual
        assert last.total == f.timings["total"] and last.solve == f.timings["solve"]
        totals = [r.total for r in f.records]  # each step's own time, not the last one's
        assert len(f.records) == 1 or len(set(totals)) > 1


def test_real_time_frames_carry_one_step_each(qtbot, run):
    sim, got = run(scene="column", speed=1.0)
    qtbot.waitUntil(lambda: got.last.steps >= 20, timeout=20000)
    frames = [g for g in got.frames if g.stepped]
    # A late timer tick catches up with several steps in one frame; most carry one.
    assert np.median([len(g.records) for g in frames]) == 1


def test_frames_carry_a_trace_and_timings(qtbot, run):
    sim, got = run(scene="bowl", iterations=20)
    f = wait_for(qtbot, got, lambda f: f.trace is not None and f.trace.size == 21 and f.contacts)
    assert set(f.timings) >= {"collide", "assemble", "solve", "integrate", "total"}
    assert f.trace[-1] == pytest.approx(f.residual) or f.trace_step != f.steps


def test_cycling_solvers_visits_every_registered_solver(qtbot, run):
    names = list(registry.METHODS)
    sim, got = run(solver=names[0])
    for k in range(1, len(names) + 1):
        sim.send("cycle_solver", 1)
        f = wait_for(qtbot, got, lambda f: f.state.solver == names[k % len(names)],
                     timeout=120000)  # a cold Numba cache compiles each solver here
    assert f.state.solver == names[0]
    sim.send("cycle_solver", -1)
    wait_for(qtbot, got, lambda f: f.state.solver == names[-1])


def test_scene_cycle_and_reset(qtbot, run):
    sim, got = run(scene="column")
    names = list(scenes.SCENES)
    sim.send("cycle_scene", 1)
    nxt = names[(names.index("column") + 1) % len(names)]
    f = wait_for(qtbot, got, lambda f: f.state.scene == nxt)
    assert f.container == scenes.build(nxt).container
    gen = f.state.generation
    wait_for(qtbot, got, lambda f: f.steps > 10)
    sim.send("reset")
    f = wait_for(qtbot, got, lambda f: f.state.generation == gen + 1)
    assert f.steps <= 1
    fresh = scenes.build(nxt)
    if f.steps == 0:
        np.testing.assert_allclose(f.x, fresh.x.astype(np.float32))


def test_colour_modes(qtbot, run):
    sim, got = run(scene="column")
    base = got.last.colour.copy()
    seen = {got.last.state.colour_mode}
    for _ in COLOUR_MODES:
        sim.send("colour")
        mode = got.last.state.colour_mode
        f = wait_for(qtbot, got, lambda f, m=mode: f.state.colour_mode != m)
        seen.add(f.state.colour_mode)
        if f.state.colour_mode == "impulse":
            wait_for(qtbot, got, lambda f: f.stepped and f.state.colour_mode == "impulse")
            f = got.last
            assert not np.allclose(f.colour, base)
            assert f.colour.min() >= 0.0 and f.colour.max() <= 1.0
    assert seen == set(COLOUR_MODES)
    assert got.last.state.colour_mode == "marble"


def test_drag_pulls_a_marble_to_the_target_and_lets_go(qtbot, run):
    sim, got = run(scene="column")
    top = 6  # the column's marbles are stacked bottom to top
    target = np.array([0.0, 0.0, 1.8])
    sim.send("drag_start", top)
    sim.send("drag_move", (top, target))
    start = applied(qtbot, sim, got).steps
    f = wait_for(qtbot, got, lambda f: f.steps > start + 150)
    assert np.linalg.norm(f.x[top] - target) < 0.02
    sim.send("drag_end", top)
    start = applied(qtbot, sim, got).steps
    f = wait_for(qtbot, got, lambda f: f.steps > start + 150)
    assert f.x[top, 2] == pytest.approx(1.3, abs=0.03)  # back on top of the stack


def applied(qtbot, sim, got):
    """The frame that follows every command sent so far (drag commands send none of their
    own; a frame covering many steps may have been emitted before they were applied)."""
    sim.send("pause", False)  # any other command answers with a frame of its own
    return wait_for(qtbot, got, lambda f: not f.stepped)


def test_divergence_pauses_and_reset_recovers(qtbot, run):
    sim, got = run(scene="bowl", solver="jacobi", solver_params={"beta": 1.0}, speed=1.0)
    f = wait_for(qtbot, got, lambda f: f.state.diverged)
    assert f.state.paused and f.status == "divergence"
    assert "diverged" in f.state.message
    assert "DIVERGED" in hud_text(f, 0.0, 0.0)
    steps = f.steps
    qtbot.wait(200)
    assert got.last.steps == steps  # stays paused
    assert np.all(np.isfinite(got.last.x))
    sim.send("reset")
    f = wait_for(qtbot, got, lambda f: f.state.generation == 1)
    assert not f.state.diverged and not f.state.paused
    assert f.time < 0.05


def test_stop_joins_the_thread(qtbot, run):
    sim, got = run()
    assert sim.thread.isRunning()
    assert sim.stop(2000)
    assert sim.thread.isFinished()
    qtbot.wait(50)  # deliver what was queued before the stop
    count = len(got.frames)
    qtbot.wait(200)
    assert len(got.frames) == count


def test_helpers():
    assert np.all(clamp_residual([0.0, np.nan, np.inf, 2.0]) == [FLOOR, 1e30, 1e30, 2.0])
    rgb = heat(np.array([0.0, 0.5, 1.0, 7.0, np.nan]))
    assert rgb.shape == (5, 3) and rgb.dtype == np.float32
    assert np.all(rgb[3] == rgb[2])
    meter = RateMeter(window=1.0)
    for k in range(11):
        meter.add(now=10.0 + 0.1 * k)
    assert meter.rate(now=11.0) == pytest.approx(10.0)
    assert meter.rate(now=13.0) == 0.0


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
