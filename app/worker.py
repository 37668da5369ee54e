"""The simulation thread (DESIGN.md, Threads).

`SimWorker` is a QObject moved to its own QThread. It owns the World and the Simulation, steps
them with a timer of its own thread at the scene's rate (times `speed`; 0 = as fast as possible),
and after the steps of each timer tick emits one immutable `Frame` (copies of positions, radii,
colours and the numbers of every step it covers) through a queued signal. In real time a tick
is one step (more when catching up); as fast as possible, a tick steps for `BATCH_SECONDS`, so
the frames, their copies and their delivery to the GUI thread cost the same per second of
wall time whatever the step rate, instead of taking a share of every step. Paused, the timer is
stopped. Stepping as fast as possible, this thread has a core to itself (app.cores).

The GUI sends `command(name, argument)`; being queued, each command runs in this thread between
two steps, so the world is never touched by two threads. The GUI never waits for a step and
this thread never waits for drawing.

Long jobs in this thread (Numba compilation, the solver comparison) report progress through
signals and stop early when `cancel()` is called from any thread.
"""
from __future__ import annotations

import math
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import cores
from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

import scenes
from solver import registry
from solver.compare import compare, write_benchmark
from solver.metrics import DIVERGENCE
from solver.params import ParamError
from solver.step import PHASES, Simulation
from solver.warmup import warmup
from solver.world import World

COLOUR_MODES = ("marble", "speed", "impulse")
ITERATION_LADDER = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
# Parameters that the ω hotkeys move, in order of preference: the relaxation factor of the
# over-relaxed methods and the damping of the Jacobi forms. Any method that has one qualifies.
RELAXATION_PARAMS = ("omega", "beta")
RELAXATION_STEP = 0.1
# The per-iteration trace costs an extra product with A per iteration, so only the steps the
# residual plot can show (about 25 per second of wall time) record it.
TRACE_PERIOD = 0.04  # s of wall time
# Mouse drag: the dragged marble's velocity relaxes towards (target - x) / SPRING_TIME with time
# constant DAMPING_TIME (a damped spring in velocity form, stable for any dt) and its weight is
# carried, so it hangs at the cursor instead of below it.
SPRING_TIME = 0.08  # s
DAMPING_TIME = 0.03  # s
DRAG_MAX_SPEED = 4.0  # m/s, so a fast mouse cannot fire a marble through the pile
MAX_CATCH_UP = 10  # steps one timer tick may do to keep real time (200 ms at 50 Hz)
# As fast as possible, one timer tick steps for this long (s of wall time), then emits one
# frame: about as many frames per second as in real time at 50 Hz; commands wait at most this.
BATCH_SECONDS = 0.02
SPEED_SCALE = 2.0  # m/s shown as the hottest colour
IMPULSE_SCALE = 6.0  # contact impulse per step, in units of the marble's weight times dt


class Cancelled(Exception):
    """Raised inside a long job when the GUI asked to stop (closing the window)."""


@dataclass(frozen=True)
class SimState:
    """What the user controls; sent with every frame so the GUI shows the worker's truth."""

    scene: str
    solver: str
    solver_params: dict
    iterations: int
    warm_start: float  # fraction of last step's impulses a solve starts from
    paused: bool
    colour_mode: str
    diverged: bool
    speed: float
    generation: int  # +1 on every scene build or reset (the GUI clears its history)
    message: str = ""


# The numbers of one step that the plots show: simulated time after it (s), final natural-map
# residual (m/s), then seconds per phase ("collide", ..., "total").
RECORD_FIELDS = ("time", "residual") + PHASES
RECORD_DTYPE = np.dtype([(name, np.float64) for name in RECORD_FIELDS])


class StepLog:
    """The numbers of the steps made since the last frame, one RECORD_DTYPE row per step.

    Rows go into a buffer that only grows and leave as one array: a frame's records cost the
    GUI thread no Python per step (building them as tuples, turning them into an array and
    freeing them was half of its work per frame, holding the GIL the simulation needs)."""

    def __init__(self):
        self._rows = np.empty(256, dtype=RECORD_DTYPE)
        self.count = 0

    def add(self, time: float, residual: float, timings: dict) -> None:
        """One step: simulated time after it (s), residual (m/s), seconds per phase."""
        if self.count == self._rows.shape[0]:
            self._rows = np.concatenate((self._rows, np.empty_like(self._rows)))
        self._rows[self.count] = (time, residual, *map(timings.__getitem__, PHASES))
        self.count += 1

    def take(self) -> np.recarray:
        """The rows so far as a read-only (k,) record array (fields by name: `.time`,
        `.residual`, `.solve`, ...); the log starts empty again."""
        out = self._rows[:self.count].copy().view(np.recarray)
        out.flags.writeable = False
        self.count = 0
        return out

    def clear(self) -> None:
        self.count = 0

    def __len__(self) -> int:
        return self.count


_NO_RECORDS = StepLog().take()


@dataclass(frozen=True)
class Frame:
    """One immutable picture of the simulation. x: (n, 3) float32 m; radius: (n,) float32 m;
    colour: (n, 3) float32 RGB in [0, 1]; timings: seconds per phase of the last step;
    trace: (k + 1,) residual (m/s) per iteration of the last traced step, or None;
    residual: final natural-map residual (m/s) of the last step; records: every step made
    since the previous frame, oldest first (one in real time; several when the worker caught
    up or steps as fast as possible); stepped: records is not empty (False when only the state
    changed)."""

    seq: int
    stepped: bool
    x: np.ndarray
    radius: np.ndarray
    colour: np.ndarray
    container: dict
    time: float
    steps: int
    dt: float
    contacts: int
    timings: dict
    status: str
    iterations_done: int
    residual: float
    trace: np.ndarray | None
    trace_step: int
    state: SimState
    compile_seconds: float = 0.0
    wall: float = 0.0  # time.perf_counter() in the worker when the frame was made, s
    records: np.recarray = field(default_factory=lambda: _NO_RECORDS)  # (k,) see StepLog


@dataclass
class BenchmarkResult:
    """What the comparison produced: the table, the written files and the meta it recorded."""

    reason: str
    table: object
    paths: list
    meta: dict = field(default_factory=dict)


def _frozen(a: np.ndarray, dtype=np.float32) -> np.ndarray:
    out = np.array(a, dtype=dtype, copy=True)
    out.flags.writeable = False
    return out


def heat(values: np.ndarray) -> np.ndarray:
    """Map values in [0, 1] to RGB (n, 3) float32: dark blue -> teal -> yellow -> red."""
    stops = np.array([0.0, 0.35, 0.7, 1.0])
    rgb = np.array([[0.15, 0.2, 0.6], [0.1, 0.65, 0.6], [0.95, 0.85, 0.2], [0.9, 0.2, 0.1]])
    t = np.clip(np.nan_to_num(values, nan=1.0, posinf=1.0), 0.0, 1.0)
    return np.stack([np.interp(t, stops, rgb[:, k]) for k in range(3)], axis=1).astype(np.float32)


class SimWorker(QObject):
    """Owns World and Simulation; lives in its own QThread after `moveToThread`.

    Signals (all queued to the GUI): frameReady(Frame); progress(text, done, total) for
    compilation and benchmarks (total 0 = finished); benchmarkDone(BenchmarkResult);
    benchmarkFailed(reason, message); stopped() once the thread may quit."""

    frameReady = Signal(object)
    progress = Signal(str, int, int)
    benchmarkDone = Signal(object)
    benchmarkFailed = Signal(str, str)
    stopped = Signal()

    def __init__(self, scene: str, solver: str, iterations: int = 20,
                 scene_params: dict | None = None, solver_params: dict | None = None,
                 warm_start: float = 0.0, speed: float = 1.0, world: World | None = None,
                 benchmark_out: str | Path = ".", benchmark_iterations: int = 200,
                 dt: float | None = None):
        super().__init__()
        self._dt = dt
        self._scene_params = {scene: dict(scene_params or {})}
        # Resolved (defaults filled in) so the HUD and the ω keys see every value.
        self._solver_params = {solver: dict(registry.settings(solver, 1, False,
                                                              solver_params).params)}
        self._scene = scene
        self._initial_world = world
        self._solver = solver
        self._iterations = int(iterations)
        self._warm_start = float(warm_start)
        self._speed = float(speed)
        self.benchmark_out = Path(benchmark_out)
        self.benchmark_iterations = int(benchmark_iterations)
        self._paused = False
        self.thread_id: int | None = None  # native id of the thread, once started
        self._diverged = False
        self._colour_mode = COLOUR_MODES[0]
        self._generation = 0
        self._message = ""
        self._seq = 0
        self._cancel = threading.Event()
        self._warm: set[str] = set()
        self._compile_seconds = 0.0
        self._sim: Simulation | None = None
        self._last_report = None
        self._records = StepLog()  # steps not yet sent in a frame
        self._last_trace: np.ndarray | None = None
        self._trace_step = -1
        self._last_trace_wall = -math.inf
        self._drag: tuple[int, np.ndarray] | None = None
        self._timer: QTimer | None = None
        self._clock: tuple[float, float] | None = None
        self._running = False

    # ----------------------------------------------------------------------------- thread side
    def cancel(self) -> None:
        """Thread-safe: stop long jobs early and refuse new steps (used when closing)."""
        self._cancel.set()

    @Slot()
    def begin(self) -> None:
        """Connected to QThread.started: defer the start into the thread's event loop, so that
        quit() (closing the window during compilation) is honoured once it returns."""
        QTimer.singleShot(0, self.start)

    @Slot()
    def start(self) -> None:
        """Compile the kernels, build the world, start stepping (in the worker thread)."""
        if self._cancel.is_set():
            return
        self.thread_id = threading.get_native_id()  # for tests and the cores it is pinned to
        try:
            self._ensure_compiled(self._solver)
        except Cancelled:
            self.stopped.emit()
            return
        world = self._initial_world if self._initial_world is not None else self._build_world()
        self._initial_world = None
        self._sim = Simulation(world, self._solver, self._iterations,
                               self._solver_params[self._solver], warm_start=self._warm_start,
                               trace=False)
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)
        self._arm_timer()
        self._running = True
        self._emit_frame()

    @Slot(str, object)
    def command(self, name: str, arg: object = None) -> None:
        """Apply one GUI command between steps (runs in this thread via a queued call)."""
        if name == "stop":
            self._stop()
            return
        if self._cancel.is_set() or self._sim is None:
            return
        self._message = ""
        handler = getattr(self, f"_cmd_{name}", None)
        if handler is None:
            self._message = f"unknown command {name!r}"
        else:
            try:
                handler(arg)
            except Cancelled:
                self._stop()
                return
            except ParamError as err:
                self._message = str(err)
        # Drag moves arrive at mouse rate; they show up in the next stepped frame.
        if not name.startswith("drag"):
            self._emit_frame()

    def _stop(self) -> None:
        self._cancel.set()
        self._running = False
        if self._timer is not None:
            # Stopped and deleted here, in its own thread: Qt refuses to stop a timer from
            # another thread, which is where this object is garbage-collected later.
            self._timer.stop()
            self._timer.deleteLater()
            self._timer = None
        cores.release_core()
        self.stopped.emit()

    @property
    def core(self) -> int | None:
        """The core this thread holds while stepping flat out, else None."""
        return cores.dedicated()

    def _arm_timer(self) -> None:
        """Start the step timer for the current speed, or stop it while paused (at speed 0 a
        running timer fires whenever the thread is idle: paused, it would spin). Stepping
        flat out, this thread also takes a core of its own (app.cores)."""
        if self._timer is None:
            return
        if self._paused:
            self._timer.stop()
            cores.release_core()
            return
        dt = self._sim.world.dt
        interval = 0 if self._speed <= 0 else max(1, int(round(1000.0 * dt / self._speed)))
        if interval == 0:
            cores.dedicate_core()
        else:
            cores.release_core()
        self._timer.start(interval)
        self._clock = None  # (wall s, simulated s) of the pacing reference, set at next tick

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise Cancelled()

    def _ensure_compiled(self, *names: str) -> None:
        """Compile (or load from cache) kernels not yet used in this process, with progress."""
        todo = [n for n in names if n not in self._warm]
        if not todo:
            return
        label = "compiling Numba kernels (first run: tens of seconds)"
        self.progress.emit(f"{label}: {todo[0]}", 0, len(todo))

        def report(done: int, total: int, name: str) -> None:
            self._warm.add(name)
            self._check_cancel()
            nxt = f": {todo[done]}" if done < total else ""
            self.progress.emit(f"{label}{nxt}", done, total)

        self._compile_seconds += warmup(todo, report)
        self.progress.emit("", 0, 0)

    # ------------------------------------------------------------------------------- stepping
    def _build_world(self) -> World:
        world = scenes.build(self._scene, self._scene_params.get(self._scene, {}))
        if self._dt is not None:
            world.dt = self._dt
        return world

    def _apply_drag(self) -> None:
        if self._drag is None:
            return
        i, target = self._drag
        w = self._sim.world
        if not 0 <= i < w.n or w.inv_mass[i] == 0.0:
            return
        want = (target - w.x[i]) / SPRING_TIME
        speed = float(np.linalg.norm(want))
        if speed > DRAG_MAX_SPEED:
            want *= DRAG_MAX_SPEED / speed
        alpha = w.dt / (w.dt + DAMPING_TIME)
        w.v[i] += alpha * (want - w.v[i]) - w.dt * w.gravity
        if w.planar:
            w.v[i, 1] = 0.0

    @Slot()
    def _tick(self) -> None:
        """Step as many times as the wall clock asks (real time times `speed`). A timer tick
        can come late (the GUI thread holds the GIL, the CPU is busy drawing); up to
        MAX_CATCH_UP steps make up for it, and a longer lag is dropped rather than replayed."""
        if not self._running or self._paused or self._cancel.is_set():
            self._clock = None
            if self._paused:  # a divergence paused it during the last tick
                self._arm_timer()
            return
        if self._speed <= 0:
            end = time.perf_counter() + BATCH_SECONDS
            self._step_once()
            while not self._paused and time.perf_counter() < end:
                self._step_once()
            self._emit_frame()
            return
        now = time.perf_counter()
        w = self._sim.world
        if self._clock is None:
            self._clock = (now - w.dt / self._speed, w.time)
        wall0, sim0 = self._clock
        due = int(((now - wall0) * self._speed - (w.time - sim0)) / w.dt + 1e-9)
        if due > MAX_CATCH_UP:
            self._clock = (now - w.dt / self._speed, w.time)  # too far behind: drop the lag
            due = 1
        for _ in range(due):
            self._step_once()
            if self._paused:  # a divergence paused it
                break
        if self._records:
            self._emit_frame()

    def _step_once(self) -> None:
        """One step; its numbers wait in `_records` for the next frame."""
        now = time.perf_counter()
        trace = now - self._last_trace_wall >= TRACE_PERIOD
        self._apply_drag()
        report = self._sim.step(trace=trace)
        self._last_report = report
        if trace and report.result.trace is not None:
            self._last_trace_wall = now
            self._last_trace = report.result.trace.copy()
            self._trace_step = self._sim.steps
        if report.result.status == DIVERGENCE and not self._diverged:
            self._diverged = True
            self._paused = True
            self._message = (f"{report.method} diverged at step {self._sim.steps} "
                             f"(t = {self._sim.world.time:.2f} s): paused, R resets")
        self._records.add(self._sim.world.time, float(report.result.residual), report.timings)

    def _colours(self) -> np.ndarray:
        w = self._sim.world
        if self._colour_mode == "speed":
            return heat(np.linalg.norm(w.v, axis=1) / SPEED_SCALE)
        if self._colour_mode == "impulse":
            p = self._sim.problem
            total = np.zeros(w.n)
            if p is not None and p.m and self._sim.lam.size == p.m:
                lam = self._sim.lam
                for ends in (p.body_a, p.body_b):
                    hit = ends >= 0
                    np.add.at(total, ends[hit], lam[hit])
            weight = np.abs(w.gravity[2]) * w.dt * w.mass
            return heat(total / (IMPULSE_SCALE * weight))
        return w.colour

    def _emit_frame(self) -> None:
        """Send the world as it is now, with the steps made since the last frame."""
        records = self._records.take()
        sim = self._sim
        w = sim.world
        report = self._last_report
        result = report.result if report is not None else None
        self._seq += 1
        frame = Frame(
            seq=self._seq, stepped=records.shape[0] > 0,
            x=_frozen(w.x), radius=_frozen(w.radius), colour=_frozen(self._colours()),
            container=dict(w.container), time=w.time, steps=sim.steps, dt=w.dt,
            contacts=report.contacts if report is not None else 0,
            timings=dict(report.timings) if report is not None else {},
            status=result.status if result is not None else "",
            iterations_done=result.iterations if result is not None else 0,
            residual=float(result.residual) if result is not None else math.nan,
            trace=None if self._last_trace is None else _frozen(self._last_trace, np.float64),
            trace_step=self._trace_step, state=self.state(),
            compile_seconds=self._compile_seconds, wall=time.perf_counter(), records=records)
        self.frameReady.emit(frame)

    def state(self) -> SimState:
        return SimState(self._scene, self._solver, dict(self._solver_params[self._solver]),
                        self._iterations, self._warm_start, self._paused, self._colour_mode,
                        self._diverged, self._speed, self._generation, self._message)

    # ------------------------------------------------------------------------------- commands
    def _new_world(self, world: World) -> None:
        self._sim = Simulation(world, self._solver, self._iterations,
                               self._solver_params[self._solver], warm_start=self._warm_start,
                               trace=False)
        self._generation += 1
        self._diverged = False
        self._last_report = None
        self._records.clear()
        self._last_trace = None
        self._trace_step = -1
        self._drag = None
        self._arm_timer()

    def _cmd_pause(self, arg) -> None:
        self._paused = (not self._paused) if arg is None else bool(arg)
        self._arm_timer()

    def _cmd_step(self, arg) -> None:
        self._paused = True
        self._arm_timer()
        self._step_once()

    def _cmd_reset(self, arg) -> None:
        world = self._build_world()  # may refuse (ParamError): then nothing changes
        self._paused = False
        self._new_world(world)

    def _cmd_scene(self, name) -> None:
        scenes.get(name)
        self._scene = name
        self._new_world(self._build_world())

    def _cmd_cycle_scene(self, delta) -> None:
        names = list(scenes.SCENES)
        k = names.index(self._scene) if self._scene in names else 0
        self._cmd_scene(names[(k + int(delta)) % len(names)])

    def _cmd_solver(self, name) -> None:
        registry.get(name)
        self._ensure_compiled(name)
        params = self._solver_params.setdefault(name, {})
        self._sim.set_method(name, self._iterations, params)
        self._solver_params[name] = dict(self._sim.settings.params)
        self._solver = name

    def _cmd_cycle_solver(self, delta) -> None:
        names = list(registry.METHODS)
        k = names.index(self._solver) if self._solver in names else 0
        self._cmd_solver(names[(k + int(delta)) % len(names)])

    def _cmd_iterations(self, n) -> None:
        n = int(n)
        if n < 1:
            raise ParamError(f"iterations={n} is not valid: must be at least 1")
        self._iterations = n
        self._sim.set_method(self._solver, n, self._solver_params[self._solver])

    def _cmd_cycle_iterations(self, delta) -> None:
        ladder = ITERATION_LADDER
        now = self._iterations
        if int(delta) > 0:
            bigger = [v for v in ladder if v > now]
            self._cmd_iterations(bigger[0] if bigger else now)
        else:
            smaller = [v for v in ladder if v < now]
            self._cmd_iterations(smaller[-1] if smaller else now)

    def _cmd_relax(self, delta) -> None:
        method = registry.get(self._solver)
        spec = next((p for name in RELAXATION_PARAMS for p in method.params
                     if p.name == name and p.kind is float), None)
        if spec is None:
            self._message = f"{self._solver} has no relaxation parameter"
            return
        params = self._solver_params[self._solver]
        value = float(params.get(spec.name, spec.default))
        proposed = round(value + float(delta), 6)
        try:
            spec.parse(proposed)
        except ParamError:
            self._message = f"{spec.name}={value:g} is at its limit ({spec.range_text()})"
            return
        params = {**params, spec.name: proposed}
        self._sim.set_method(self._solver, self._iterations, params)
        self._solver_params[self._solver] = dict(self._sim.settings.params)

    def _cmd_warm_start(self, arg) -> None:
        if arg is None:  # the key: off -> half (stable, README Settling) -> full -> off
            arg = {0.0: 0.5, 0.5: 1.0}.get(self._warm_start, 0.0)
        self._warm_start = float(arg)
        self._sim.warm_start = self._warm_start

    def _cmd_colour(self, mode) -> None:
        if mode is None:
            mode = COLOUR_MODES[(COLOUR_MODES.index(self._colour_mode) + 1) % len(COLOUR_MODES)]
        if mode not in COLOUR_MODES:
            raise ParamError(f"colour mode {mode!r} is not one of {', '.join(COLOUR_MODES)}")
        self._colour_mode = mode

    def _cmd_speed(self, speed) -> None:
        self._speed = max(0.0, float(speed))
        self._arm_timer()

    def _cmd_drag_start(self, index) -> None:
        w = self._sim.world
        self._drag = (int(index), w.x[int(index)].copy()) if 0 <= int(index) < w.n else None

    def _cmd_drag_move(self, arg) -> None:
        index, target = arg
        target = np.array(target, dtype=np.float64).reshape(3)
        if self._sim.world.planar:
            target[1] = 0.0
        if np.all(np.isfinite(target)) and 0 <= int(index) < self._sim.world.n:
            self._drag = (int(index), target)

    def _cmd_drag_end(self, index) -> None:
        self._drag = None

    def _cmd_benchmark(self, arg) -> None:
        """arg: {"reason": "key"|"close", "iterations": N (optional), "out": DIR (optional)}.
        Runs every registered solver on the last step's frozen problem (from zero impulses),
        writes benchmark.npy/.json atomically and emits benchmarkDone; stepping waits."""
        arg = dict(arg or {})
        reason = arg.get("reason", "key")
        sim = self._sim
        if sim.problem is None:
            self.benchmarkFailed.emit(reason, "no contact problem yet: run at least one step")
            return
        try:
            names = list(registry.METHODS)
            iterations = int(arg.get("iterations", self.benchmark_iterations))
            out = Path(arg.get("out", self.benchmark_out))
            self._ensure_compiled(*names)
            self.progress.emit("benchmark: every solver on the frozen problem", 0, len(names))

            def report(done: int, total: int, name: str) -> None:
                self._check_cancel()
                self.progress.emit(f"benchmark: {name} done", done, total)

            table = compare(sim.problem, iterations, names, progress=report)
            self._check_cancel()
            meta = {"scene": self._scene, "scene_params": self._scene_params.get(self._scene, {}),
                    "step": sim.steps, "time": sim.world.time, "contacts": sim.problem.m,
                    "dt": sim.world.dt,
                    "settings": {"solver": self._solver, "iterations": self._iterations,
                                 "params": self._solver_params[self._solver],
                                 "warm_start": self._warm_start},
                    "source": f"marbles ({'B key' if reason == 'key' else 'on close'})"}
            paths = write_benchmark(out, table, meta)
        except Cancelled:
            raise
        except (OSError, ParamError, ValueError) as err:
            self.progress.emit("", 0, 0)
            self.benchmarkFailed.emit(reason, f"benchmark not written: {err}")
            return
        except Exception:  # a solver bug must not kill the thread; the GUI shows the message
            self.progress.emit("", 0, 0)
            last = traceback.format_exc().strip().splitlines()[-1]
            self.benchmarkFailed.emit(reason, f"benchmark failed: {last}")
            return
        self.progress.emit("", 0, 0)
        self.benchmarkDone.emit(BenchmarkResult(reason, table, [str(p) for p in paths], meta))


class SimThread:
    """A SimWorker in its own QThread, with the queued command channel and a clean stop.

    `send(name, arg)` posts a command; `stop(timeout_ms)` cancels long jobs, stops the timer,
    quits and joins the thread; returns whether the thread finished."""

    def __init__(self, worker: SimWorker):
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName("simulation")
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.begin)
        worker.stopped.connect(self.thread.quit, Qt.ConnectionType.DirectConnection)
        self._sender = _CommandSender()
        self._sender.command.connect(worker.command, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        self.thread.start()

    def send(self, name: str, arg: object = None) -> None:
        self._sender.command.emit(name, arg)

    def stop(self, timeout_ms: int = 1000) -> bool:
        if not self.thread.isRunning():
            return True
        # The cancel flag ends a long job (compilation, benchmark) at its next progress report;
        # the queued "stop" then runs in the worker's thread, which quits its event loop.
        self.worker.cancel()
        self.send("stop")
        return self.thread.wait(timeout_ms)


class _CommandSender(QObject):
    command = Signal(str, object)


__all__ = ["SimWorker", "SimThread", "Frame", "SimState", "BenchmarkResult", "COLOUR_MODES",
           "ITERATION_LADDER", "heat"]
