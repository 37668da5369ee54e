"""The simulation thread: a thin Qt adapter around a lab.session.session.Session.

`SimWorker` is a QObject moved to its own QThread. It steps its Session with a timer of that
thread, in real time (times `speed`) or, at speed 0, in batches of `BATCH_SECONDS`, and after
each tick emits one immutable `Frame` through a queued signal. Commands from the GUI (the typed
commands of lab.session.commands, among them `Benchmark` and `Stop`, which this
thread carries out itself) arrive as queued calls, so they run in this thread between two steps.
Paused, the timer is stopped; stepping flat out, this thread has a core to itself (app.cores)
when its step runs on one thread (on two cores a step in blocks does: WINDOW_CORES); a step in
several threads gets every core.
This is the only thread that steps or solves (the B-key comparison runs here too), so Numba's thread
pool is never entered from two threads at once (solvers side by side step their copies in threads
of their own only when every copy steps serially: lab.session.side_by_side). Long jobs (compiling
kernels, the solver comparison) report progress by signal and end early once `cancel()` is called
from any thread.
"""
from __future__ import annotations

import dataclasses
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from lab.report.compare import COMPARE_ITERATIONS
# Cancelled: raised inside a long job when the GUI asked to stop (closing the window), or the
# comparison's job was cancelled.
from lab.report.job import Cancelled, Job
from lab.session import commands, comparison
from lab.session.commands import Benchmark, Stop
from lab.session.frame import Frame, frame_of  # noqa: F401 (Frame: what the window draws)
from lab.session.history import DEFAULT_BUDGET
from lab.session.session import Session
from lab.session.spec import RunSpec
from lab.session.window_cost import WindowCost
from solver import parallel
from solver.params import ParamError
from solver.world import World

from . import cores

# As fast as possible, one timer tick steps for this long (s of wall time), then emits one
# frame: 25 frames per second whatever the step rate, as many as the plots refresh (each frame
# carries every step's numbers); commands wait at most this long. Each frame costs Python in
# both threads, and Python in the GUI thread holds up the simulation thread (the GIL).
BATCH_SECONDS = 0.04
# Cores kept for the window's own threads while the simulation steps in several (the GUI
# thread, the render thread and Mesa's rasterisers): on two cores a step then runs its blocks
# on one thread, pinned to its core (app.cores), bit for bit the same numbers.
WINDOW_CORES = 1


@dataclass
class BenchmarkResult:
    """What the comparison produced: the table, the written files and the meta it recorded."""

    reason: str
    table: object
    paths: list
    meta: dict = field(default_factory=dict)
    text: str = ""  # one line: the step compared, how it ended, where it was written


class SimWorker(QObject):
    """Owns the Session; lives in its own QThread after `moveToThread`.

    Signals (all queued to the GUI): frameReady(Frame); progress(text, done, total) for
    compilation and benchmarks (total 0 = finished); benchmarkDone(BenchmarkResult);
    benchmarkFailed(reason, message); stopped() once the thread may quit."""

    frameReady = Signal(object)
    progress = Signal(str, int, int)
    benchmarkDone = Signal(object)
    benchmarkFailed = Signal(str, str)
    stopped = Signal()

    def __init__(self, spec: RunSpec, world: World | None = None,
                 benchmark_out: str | Path = ".",
                 benchmark_iterations: int = COMPARE_ITERATIONS.default, first=(),
                 history_bytes: int = DEFAULT_BUDGET):
        """first: commands applied once the Session has started (e.g. opening a state);
        history_bytes: memory for the steps the history keeps."""
        super().__init__()
        self._first = list(first)
        self._cancel = threading.Event()
        self._job: Job | None = None  # the comparison under way
        self.session = Session(spec, world, progress=self._report, history_bytes=history_bytes)
        self.benchmark_out = Path(benchmark_out)
        self.benchmark_iterations = int(benchmark_iterations)
        self.thread_id: int | None = None  # native id of the thread, once started
        self._seq = 0
        self._commands = 0  # commands received from the channel (Frame.commands_done)
        self._timer: QTimer | None = None
        self._armed: tuple[bool, int, int] | None = None
        self._running = False
        self.window_cost = WindowCost()  # what the thread spends beside its steps
        self._tick_end: float | None = None  # when the last tick stepping flat out ended
        self._announced = -1  # the world generation whose first step was announced

    # ----------------------------------------------------------------------------- thread side
    def cancel(self) -> None:
        """Thread-safe: stop long jobs early and refuse new steps (used when closing); a
        comparison under way ends writing nothing."""
        self._cancel.set()
        job = self._job
        if job is not None:
            job.cancel(discard=True)

    def _report(self, text: str, done: int, total: int) -> None:
        """Session progress -> signal; where a long job (a compilation) notices a cancel."""
        job = self._job
        if total and (self._cancel.is_set() or (job is not None and job.cancelled)):
            raise Cancelled()
        self.progress.emit(text, done, total)

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
        if parallel.SHARE is not None and parallel.SHARE.cores > 1:
            # A core for the window's own threads (GUI, renderer): a step's threads beside
            # them wait for each other at every barrier (solver.parallel.CoreShare.reserved).
            parallel.SHARE.reserved = WINDOW_CORES
        try:
            self.session.start(shown=self._emit_frame)
            for command in self._first:
                self.session.apply(command)
        except Cancelled:
            self.stopped.emit()
            return
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)
        self._running = True
        self._arm_timer()
        self._emit_frame()

    @Slot(object)
    def command(self, command) -> None:
        """Apply one GUI command between steps (runs in this thread via a queued call)."""
        self._commands += 1  # in the channel's order: SimThread.sent counts the same
        if isinstance(command, Stop):
            self._stop()
            return
        if self._cancel.is_set() or self.session.sim is None:
            return
        try:
            if isinstance(command, Benchmark):
                self._benchmark(command)
            else:
                self.session.apply(command)
        except Cancelled:
            self._stop()
            return
        self._arm_timer()
        # Drag moves arrive at mouse rate; they show up in the next stepped frame.
        if not isinstance(command, (commands.DragStart, commands.DragMove, commands.DragEnd)):
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
        if parallel.SHARE is not None:
            parallel.SHARE.reserved = 0
        self.stopped.emit()

    @property
    def core(self) -> int | None:
        """The core this thread holds while stepping flat out, else None."""
        return cores.dedicated()

    def _arm_timer(self) -> None:
        """The step timer for the Session's speed, stopped while paused (at speed 0 a running
        timer fires whenever the thread is idle: paused, it would spin); flat out, this thread
        takes a core of its own if it steps serially. Only a change re-arms it."""
        if self._timer is None:
            return
        s = self.session
        interval = 0 if s.spec.speed <= 0 else max(1, round(1000.0 * s.world.dt / s.spec.speed))
        idle = s.paused
        threads = self._stepping_threads()
        want = (idle, interval, threads)
        if want == self._armed:
            return
        self._armed = want
        if idle:
            self._timer.stop()
            cores.release_core()
            return
        if interval == 0:
            cores.dedicate_core(threads)
        else:
            cores.release_core()
        self._timer.start(interval)

    def _stepping_threads(self) -> int:
        """The threads a step keeps busy now: its blocks, on the cores the window leaves."""
        s = self.session
        if s.sim is None:
            return 1
        threads = s.copies.threads
        share = parallel.SHARE
        if s.copies.running is None and share is not None and share.reserved:
            threads = max(1, min(threads, share.cores - share.reserved))
        return threads

    @Slot()
    def _tick(self) -> None:
        """Flat out: step for BATCH_SECONDS, then one frame. Real time: the steps the clock
        asks for (Session.catch_up), and a frame if there were any."""
        if not self._running or self._cancel.is_set():
            return
        began = time.perf_counter()
        s = self.session
        flat_out = s.spec.speed <= 0
        stepped = 0
        # A new world's first step compiles (or loads from Numba's cache) the kernels of its
        # kind of scene: seconds, said as progress so the window can show it if it lasts.
        first = not s.paused and s.sim.steps == 0 and self._announced != s.generation
        if first:
            self._announced = s.generation
            self.progress.emit(f"{s.spec.scene}: first step (compiling or loading its Numba "
                               "kernels)", 0, 1)
        if not s.paused:
            try:  # a step compiles what a new solver or scene needs: closing cancels it
                stepped = s.run_for(BATCH_SECONDS) if flat_out else s.catch_up()
            except Cancelled:
                self._stop()
                return
        if first:
            self.progress.emit("", 0, 0)
            self.window_cost.reset()
        if stepped:
            self._seq += 1
            frame = frame_of(s, self._seq)
            end = time.perf_counter()
            # Flat out the thread is never idle: from the last tick's end it spent the time
            # between two ticks (queued commands, the GIL) on the window too.
            since = self._tick_end if flat_out and self._tick_end is not None else began
            if not first:
                self.window_cost.add(end - since, stepped, float(frame.records.total.sum()))
            self._tick_end = end if flat_out else None
            self.frameReady.emit(dataclasses.replace(frame, window_ms=self.window_cost.ms,
                                                  commands_done=self._commands))
        else:
            self._tick_end = None
        self._arm_timer()  # a divergence may have paused it

    def _emit_frame(self) -> None:
        """Send the world as it is now, with the steps made since the last frame and what the
        window costs a step (WindowCost, ms)."""
        self._seq += 1
        frame = frame_of(self.session, self._seq)
        self.frameReady.emit(dataclasses.replace(frame, window_ms=self.window_cost.ms,
                                                  commands_done=self._commands))

    def _benchmark(self, command: Benchmark) -> None:
        """The comparison of the solvers on the step shown (lab.session.comparison.run), under
        its own name in the output folder; emits benchmarkDone, or benchmarkFailed; stepping
        waits meanwhile. Progress (the solver under way, the time, an estimate) goes out as
        `progress`; the command's job may be cancelled from the GUI thread at any time."""
        reason = command.reason
        source = f"marbles ({'B key' if reason == 'key' else 'on close'})"
        job = command.job if command.job is not None else Job()
        job.report = lambda p: self.progress.emit(p.text(), p.index, p.total)
        self._job = job
        failure = ""
        try:
            which = ", ".join(command.solvers) or "every solver"
            self.progress.emit(f"benchmark: {which} on the frozen problem; Esc cancels", 0, 1)
            out = command.out or self.benchmark_out
            outcome = comparison.run(
                self.session, command.iterations or self.benchmark_iterations, out, source,
                command.solvers, job, comparison.desktop_stem(out), command.latest)
        except Cancelled:
            raise
        except (OSError, ParamError, ValueError) as err:
            failure = f"benchmark not written: {err}"
        except Exception:  # a solver bug must not kill the thread; the GUI shows the message
            failure = f"benchmark failed: {traceback.format_exc().strip().splitlines()[-1]}"
        finally:
            self._job = None
            self.progress.emit("", 0, 0)  # before the outcome: its line stays in the status
        if failure:
            self.benchmarkFailed.emit(reason, failure)
            return
        self.benchmarkDone.emit(BenchmarkResult(reason, outcome.table, [str(p) for p in
                                                                         outcome.paths],
                                                outcome.meta, outcome.text))


class SimThread:
    """A SimWorker in its own QThread, with the queued command channel and a clean stop.

    `send(command)` posts a command; `stop(timeout_ms)` cancels long jobs, stops the timer,
    quits and joins the thread; returns whether the thread finished."""

    def __init__(self, worker: SimWorker):
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName("simulation")
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.begin)
        worker.stopped.connect(self.thread.quit, Qt.ConnectionType.DirectConnection)
        self._sender = _CommandSender()
        self.sent = 0  # commands posted: a Frame.commands_done this high has run them all
        self._sender.command.connect(worker.command, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        self.thread.start()

    def send(self, command) -> None:
        self.sent += 1
        self._sender.command.emit(command)

    def stop(self, timeout_ms: int = 1000) -> bool:
        if not self.thread.isRunning():
            return True
        # The cancel flag ends a long job (compilation, benchmark) at its next progress report;
        # the queued Stop then runs in the worker's thread, which quits its event loop.
        self.worker.cancel()
        self.send(Stop())
        return self.thread.wait(timeout_ms)


class _CommandSender(QObject):
    command = Signal(object)
