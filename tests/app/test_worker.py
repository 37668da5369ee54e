"""The simulation thread alone (no window): frames, queued commands, timers and cores,
divergence, stop. What the Session itself does is tested in tests/lab/session/test_session.py."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QObject, Slot

from app import cores
from app.hud import hud_text
from app.worker import Benchmark, SimThread, SimWorker
from lab.session import commands as cmd
from lab.session.session import MAX_CATCH_UP
from lab.session.spec import RunSpec
from solver import parallel
from solver.parallel import MIN_MARBLES, THREADS, CoreShare
from tests.app.conftest import HANG_MS


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

    def start(scene="column", solver="pgs", speed=0.0, iterations=20, n_threads=THREADS.default,
              **assignments):
        worker = SimWorker(RunSpec.create(scene, solver, iterations, speed=speed,
                                          assignments=assignments, threads=n_threads))
        sim = SimThread(worker)
        got = Collector()
        worker.frameReady.connect(got.frame)
        worker.progress.connect(got.on_progress)
        sim.start()
        threads.append(sim)
        qtbot.waitUntil(lambda: got.last is not None and got.last.steps > 0, timeout=HANG_MS)
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
    sim.send(cmd.Pause(True))
    f = wait_for(qtbot, got, lambda f: f.state.paused)
    world = sim.worker.session.world  # safe to read: the worker is paused and idle
    np.testing.assert_allclose(f.x, world.x.astype(np.float32))
    assert f.steps == sim.worker.session.sim.steps
    for a in (f.x, f.radius, f.colour):
        assert not a.flags.writeable
    assert f.x.base is None or f.x.base is not world.x
    assert f.x.dtype == np.float32 and f.x.shape == (7, 3) and f.colour.shape == (7, 3)


def test_frames_carry_the_orientations_and_the_friction(qtbot, run):
    """A marble rolling down the incline turns: the frame holds its orientation (what the
    view turns the swirl by) and the friction the HUD shows. One step turns the orientation by
    |ω| h about ω, whatever the count of steps made before the pause (a full turn would bring
    it back to the identity, so "away from the identity" is no check)."""
    sim, got = run(scene="incline", speed=0.0)
    wait_for(qtbot, got, lambda f: f.steps > 20)
    sim.send(cmd.Pause(True))
    before = wait_for(qtbot, got, lambda f: f.state.paused)
    world = sim.worker.session.world
    assert before.orientation.shape == (1, 4) and not before.orientation.flags.writeable
    np.testing.assert_allclose(before.orientation, world.orientation.astype(np.float32))
    sim.send(cmd.Step())
    after = wait_for(qtbot, got, lambda f: f.steps == before.steps + 1)
    np.testing.assert_allclose(after.orientation, world.orientation.astype(np.float32))
    omega, h = world.omega[0], after.dt
    assert np.linalg.norm(omega) * h > 1e-3  # rolling, so the check below has teeth
    half = 0.5 * h * np.linalg.norm(omega)
    dw, dv = np.cos(half), np.sin(half) * omega / np.linalg.norm(omega)
    w0, v0 = float(before.orientation[0, 0]), before.orientation[0, 1:].astype(float)
    expected = np.r_[dw * w0 - dv @ v0, dw * v0 + w0 * dv + np.cross(dv, v0)]  # exp(hω/2) ⊗ q
    np.testing.assert_allclose(after.orientation[0], expected, atol=1e-5)
    assert after.state.friction == (0.3, 0.3, 0.0, 0.0)


def test_commands_apply_between_steps_and_answer_with_a_frame(qtbot, run):
    sim, got = run(scene="column", solver="psor")
    sim.send(cmd.SetIterations(7))
    f = wait_for(qtbot, got, lambda f: f.state.iterations == 7)
    assert not f.stepped or f.state.iterations == 7
    sim.send(cmd.Relax(0.1))
    f = wait_for(qtbot, got, lambda f: f.state.solver_params.get("omega") != 1.5)
    assert f.state.solver_params["omega"] == pytest.approx(1.6)
    sim.send(cmd.SetIterations(0))
    f = wait_for(qtbot, got, lambda f: "iterations=0" in f.state.message)
    assert f.state.iterations == 7  # refused: the Session's message travels with the frame


def test_pause_and_single_step(qtbot, run):
    sim, got = run()
    sim.send(cmd.Pause(True))
    f = wait_for(qtbot, got, lambda f: f.state.paused)
    before = f.steps
    sim.send(cmd.Step())
    f = wait_for(qtbot, got, lambda f: f.steps != before)
    assert f.steps == before + 1 and f.state.paused and f.stepped
    sim.send(cmd.Pause(False))
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
    sim.send(cmd.Pause(True))
    wait_for(qtbot, got, lambda f: f.state.paused)
    tid = sim.worker.thread_id
    before = cpu_seconds(tid)
    qtbot.wait(1000)
    assert cpu_seconds(tid) - before < 0.2  # spinning took the whole second
    sim.send(cmd.Pause(False))
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
    sim.send(cmd.SetSpeed(1.0))
    wait_for(qtbot, got, lambda f: f.state.speed == 1.0)
    assert os.sched_getaffinity(tid) == every and os.sched_getaffinity(0) == every
    sim.send(cmd.SetSpeed(0.0))
    wait_for(qtbot, got, lambda f: f.state.speed == 0.0)
    # Re-armed, it takes the core it is running on then, not necessarily the one it had.
    assert os.sched_getaffinity(0) == every - {sim.worker.core}
    sim.send(cmd.Pause(True))
    wait_for(qtbot, got, lambda f: f.state.paused)
    assert os.sched_getaffinity(tid) == every and os.sched_getaffinity(0) == every
    sim.send(cmd.Pause(False))
    wait_for(qtbot, got, lambda f: not f.state.paused)
    assert os.sched_getaffinity(0) == every - {sim.worker.core}
    assert sim.stop(5000)
    assert os.sched_getaffinity(0) == every


@pytest.mark.skipif(len(cores.available()) < 2, reason="needs two cores")
def test_flat_out_a_simulation_of_two_threads_keeps_every_core(qtbot, run, monkeypatch):
    """A pile large enough to step in blocks with threads=2, on a machine of three cores (one
    kept for the window's threads): no thread is pinned."""
    monkeypatch.setattr(parallel, "SHARE", CoreShare(cores=3, sample=lambda: None))
    every = set(cores.available())
    sim, got = run(scene="box", speed=0.0, n=str(MIN_MARBLES), n_threads="2")
    assert sim.worker.session.sim.blocks == 2
    wait_for(qtbot, got, lambda f: f.steps > 3)
    assert sim.worker.core is None and parallel.SHARE.reserved == 1
    assert os.sched_getaffinity(sim.worker.thread_id) == every
    assert os.sched_getaffinity(0) == every
    assert sim.stop(5000)
    assert parallel.SHARE.reserved == 0


@pytest.mark.skipif(len(cores.available()) < 2, reason="needs two cores")
def test_on_two_cores_a_step_in_blocks_leaves_the_window_a_core(qtbot, run, monkeypatch):
    """Two cores: the blocks run on one thread pinned to its core, the window's threads on the
    other (beside the renderer, two threads waited for each other at every barrier)."""
    monkeypatch.setattr(parallel, "SHARE", CoreShare(cores=2, sample=lambda: None))
    every = set(cores.available())
    sim, got = run(scene="box", speed=0.0, n=str(MIN_MARBLES), n_threads="2")
    wait_for(qtbot, got, lambda f: f.steps > 3)
    assert sim.worker.session.sim.blocks == 2 and sim.worker.core is not None
    assert os.sched_getaffinity(sim.worker.thread_id) == {sim.worker.core}
    assert os.sched_getaffinity(0) == every - {sim.worker.core}
    assert got.frames[-1].state.blocks == 2  # the same blocks, the same numbers
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


class StoppedClock:
    """lab.session's wall clock, moved only by the test: real-time pacing is then a matter of
    counts, whatever the load on the machine."""

    def __init__(self, now: float = 0.0):
        self.now = now

    def perf_counter(self) -> float:
        return self.now


def test_real_time_frames_carry_the_steps_the_clock_owes(qtbot, run, monkeypatch):
    """At speed 1 every timer tick steps as many times as dt fits into the wall time gone by
    (one when on time), a late tick catches up in one frame, a lag longer than MAX_CATCH_UP
    steps is dropped, and nothing steps while the clock stands still."""
    sim, got = run(scene="column", speed=1.0)
    clock = StoppedClock()
    monkeypatch.setattr("lab.session.session.time", clock)
    sim.send(cmd.Pause(True))
    wait_for(qtbot, got, lambda f: f.state.paused)
    sim.send(cmd.Pause(False))  # the pacing starts again, on the stopped clock: one step owed

    def next_stepped():
        return wait_for(qtbot, got, lambda f: f.stepped)

    first = next_stepped()
    assert len(first.records) == 1
    for late, carried in ((0, 0), (1, 1), (3, 3), (1, 1), (MAX_CATCH_UP + 5, 1)):
        seen = len(got.frames)
        clock.now += late * first.dt
        if carried:
            f = next_stepped()
            assert len(f.records) == carried, (late, len(f.records))
        else:
            qtbot.wait(200)  # ten ticks of 20 ms or fewer: none may step
            assert not any(g.stepped for g in got.frames[seen:])
    assert f.steps - first.steps == 1 + 3 + 1 + 1
    assert f.time == pytest.approx(first.time + 6 * first.dt)


def test_slow_motion_steps_once_per_tick_early_or_late(qtbot, run, monkeypatch):
    """At 0.05x the timer ticks every 0.4 s, never on the microsecond: each tick makes its one
    step, not none for a tick a millisecond early and two at the next (a stutter the HUD
    would read as 0.03x)."""
    sim, got = run(scene="column", speed=0.05)
    clock = StoppedClock()
    monkeypatch.setattr("lab.session.session.time", clock)
    sim.send(cmd.Pause(True))
    wait_for(qtbot, got, lambda f: f.state.paused)
    sim.send(cmd.Pause(False))  # the pacing starts again, on the stopped clock: one step owed
    first = wait_for(qtbot, got, lambda f: f.stepped)
    period = first.dt / 0.05
    for k, early in enumerate((1e-3, -1e-3, 3e-3, 0.0, 5e-4), start=1):
        clock.now = k * period - early
        f = wait_for(qtbot, got, lambda f: f.stepped, timeout=HANG_MS)
        assert len(f.records) == 1, (k, early)
    assert f.steps - first.steps == 5


def test_frames_carry_a_trace_and_timings(qtbot, run):
    sim, got = run(scene="bowl", iterations=20)
    f = wait_for(qtbot, got, lambda f: f.trace is not None and f.trace.size == 21 and f.contacts)
    assert set(f.timings) >= {"collide", "assemble", "solve", "integrate", "total"}
    assert f.trace[-1] == pytest.approx(f.residual) or f.trace_step != f.steps


def test_drag_pulls_a_marble_to_the_target_and_lets_go(qtbot, run):
    sim, got = run(scene="column")
    top = 6  # the column's marbles are stacked bottom to top
    target = np.array([0.0, 0.0, 1.8])
    sim.send(cmd.DragStart(top))
    sim.send(cmd.DragMove(top, target))
    start = applied(qtbot, sim, got).steps
    f = wait_for(qtbot, got, lambda f: f.steps > start + 150)
    assert np.linalg.norm(f.x[top] - target) < 0.02
    sim.send(cmd.DragEnd())
    start = applied(qtbot, sim, got).steps
    f = wait_for(qtbot, got, lambda f: f.steps > start + 150)
    assert f.x[top, 2] == pytest.approx(1.3, abs=0.03)  # back on top of the stack


def applied(qtbot, sim, got):
    """The frame that follows every command sent so far (drag commands send none of their
    own; a frame covering many steps may have been emitted before they were applied)."""
    sim.send(cmd.Pause(False))  # any other command answers with a frame of its own
    return wait_for(qtbot, got, lambda f: not f.stepped)


def test_divergence_pauses_and_reset_recovers(qtbot, run):
    sim, got = run(scene="bowl", solver="jacobi", speed=1.0, beta=1.0)
    f = wait_for(qtbot, got, lambda f: f.state.diverged)
    # β = 1 flings marbles faster than EXPLOSION_SPEED a step before the residual diverges.
    assert f.state.paused and "marbles exploded" in f.state.message
    assert "DIVERGED" in hud_text(f, 0.0, 0.0)
    steps = f.steps
    qtbot.wait(200)
    assert got.last.steps == steps  # stays paused
    assert np.all(np.isfinite(got.last.x))
    sim.send(cmd.Pause(False))  # runs on to the next divergence, one step on, and stops
    f = wait_for(qtbot, got, lambda f: f.steps > steps and f.state.paused)
    assert f.steps == steps + 1 and f.status == "divergence" and "jacobi diverged" in \
        f.state.message
    qtbot.wait(200)
    assert got.last.steps == steps + 1
    sim.send(cmd.Reset())
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


def test_the_benchmark_runs_in_the_thread_and_reports_its_files(qtbot, run, tmp_path):
    sim, got = run(scene="column")
    done, failed = [], []
    sim.worker.benchmarkDone.connect(done.append)
    sim.worker.benchmarkFailed.connect(lambda reason, message: failed.append(message))
    sim.send(Benchmark("key", iterations=5, out=str(tmp_path)))
    qtbot.waitUntil(lambda: bool(done or failed), timeout=HANG_MS)
    assert not failed and done[0].reason == "key"
    names = [p.rsplit("/", 1)[1] for p in done[0].paths]
    assert re.fullmatch(r"benchmark-\d{8}-\d{6}\.npy", names[0])
    assert names == [names[0][:-4] + suffix for suffix in (".npy", ".json", ".png")]
    (tmp_path / "a-file").write_text("")
    sim.send(Benchmark("key", iterations=5, out=str(tmp_path / "a-file" / "x")))
    qtbot.waitUntil(lambda: bool(failed), timeout=HANG_MS)
    assert failed[0].startswith("benchmark not written:")
