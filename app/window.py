"""The main window: the 3D view with its HUD and help overlays, the live plots dock, the status
bar with a progress bar, the key map, scripted runs, the benchmark on close.

The window only displays and commands. Every frame from the worker replaces `latest`; a 60 Hz
timer hands the newest one to the view (older ones are dropped) when the view has finished the
previous one and its pacing allows (`VIEW_SHARE`), and a timer of their own refreshes the plots
at 25 Hz and the HUD at 10 Hz, so neither waits for the 3D view, which renders in a thread of
its own (app.view). Keys become lab.session.commands sent to the worker as queued calls.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox, QProgressBar

from lab import actions
from lab.report.compare import COMPARE_ITERATIONS
from lab.report.job import SOLVER_BUDGET
from lab.session import commands as cmd
from lab.session.history import DEFAULT_BUDGET
from lab.session.frame import planned_state
from lab.session.meters import RateMeter, StepTimes, timing_key
from lab.session.run import PHYSICS_FAILED
from lab.session.spec import RunSpec

from . import STARTED as PROGRAM_STARTED, history_bar
from .benchmark_runs import BenchmarkRuns
from .controls import ControlsPanel
from .file_actions import FileActions
from .hud import MESSAGE_SECONDS, Hud, StatusLine, hud_text
from .overlays import ColourBar, HelpPanel, ViewStack, overlay_label
from .pending import Pending
from .plots import MIN_WIDTH as PLOT_MIN_WIDTH, LivePlots
from .plots_copies import CopyCurves
from .readouts import Readouts
from .recording import Recording
from .side_by_side import Legend, frame_marbles
from .worker import Frame, SimThread, SimWorker

TICK_MS = 16  # hand the newest frame to the view at up to ~60 Hz
PLOT_MS = 40  # plots at 25 Hz: a margin over the 20 Hz goal for late timer ticks
HUD_PERIOD = 0.1  # s: the HUD rides on the plot timer at 10 Hz (one window repaint for both)
# With software OpenGL a 3D frame of the default view costs far more CPU than a step (Mesa's
# llvmpipe rasterises in two threads). After each frame the view waits until that frame's cost
# (wall time in the render thread) is at most this share of the time since it began, so the
# view leaves CPU to the rest of the machine, and it waits longer when the CPU is short (its
# threads run at a lower priority, so a frame then takes longer: app.view.render_thread.RENDER_NICE).
# With a GPU a frame costs a few ms and the cap stays at TICK_MS.
VIEW_SHARE = 0.7
PROGRESS_DELAY_MS = 400  # work in the worker shorter than this is not shown as progress
PLOT_SHARE = 0.25  # the plot panel's least share of the window's width
STARTING = "starting"  # the status bar until the first step or the end of the first compile
@dataclass
class Options:
    """Everything the window needs from the command line (app.main builds it).
    frames: scripted run length in drawn frames (None: interactive); benchmark_on_close: compare
    the solvers on a frictionless world's problem when the window closes (README, Q)."""

    spec: RunSpec = field(default_factory=RunSpec.create)
    benchmark_out: str = "."
    benchmark_iterations: int = COMPARE_ITERATIONS.default
    benchmark_budget: float = SOLVER_BUDGET.default  # s of solve time per solver (lab.report.job)
    benchmark_on_close: bool = True
    screenshot: str | None = None
    frames: int | None = None
    show_dialogs: bool = True
    world: object = None  # a prebuilt World (main validates the scene before any window opens)
    state: str | None = None  # a state snapshot to open at the start (--state)
    side_by_side: tuple = ()  # solvers side by side from the start (--side-by-side)
    history_bytes: int = DEFAULT_BUDGET  # memory for the steps kept (--history)


def _view_class():
    from .view import MarbleView
    return MarbleView


class MainWindow(QMainWindow):
    """`sim` is the SimThread; `latest` the newest Frame; `exit_code` for app.main. Its parts,
    each given only what it uses: `files` (app.file_actions), `benchmarks`
    (app.benchmark_runs), `readouts` (app.readouts), `recording` (app.recording),
    `history_bar` (app.history_bar), `controls` (app.controls), `plots` (app.plots)."""

    benchmarkShown = Signal(object)  # the BenchmarkWindow, for tests and scripts
    finished = Signal(int)  # exit code, once the window has really closed

    def __init__(self, options: Options | None = None, view_class=None):
        super().__init__()
        self.options = options or Options()
        o = self.options
        self.setWindowTitle("marbles")
        self.exit_code = 0
        self.latest: Frame | None = None
        self._drawn_seq = 0
        self._generation = -1
        self._message_seq = 0
        self._scene_shown = None
        self._fps = RateMeter()
        self._sps = RateMeter()
        self._step_times = StepTimes()
        self._timing: tuple = ()  # meters.timing_key of the steps timed
        self._message_at = 0.0
        self._frames_drawn = 0
        self._scripted_done = False
        self._closing = False  # close requested; waiting for the benchmark or its window
        self._close_benchmark = "todo" if o.benchmark_on_close else "skip"
        self._can_close = False
        self._shut_down = False
        self._gl_failed = False
        self._renders = 0  # frames drawn (renderings of the view that showed a new frame)
        self._step_ms: list[float] = []  # scripted runs: wall time of every step, ms
        # (wall s, steps before, renders, plot refreshes, steps after) at the first stepped frame
        self._first_step: tuple[float, int, int, int, int] | None = None
        self.startup: dict[str, float] = {}  # _mark: seconds from the start to each event
        self._last_hud = 0.0
        self._awaiting_render = 0  # marbles version of the frame the view is drawing (0: none)
        self._view_ready_at = 0.0  # perf_counter time before which no new 3D frame is drawn
        self.view_frame_cost = 0.0  # s per 3D frame in the render thread (latest)

        self._build_centre(view_class or _view_class())
        self._build_dock_and_status()
        first = [cmd.OpenState(o.state)] if o.state else []
        first += [cmd.SideBySide(o.side_by_side)] if o.side_by_side else []
        self.sim = SimThread(SimWorker(o.spec, o.world, o.benchmark_out, o.benchmark_iterations,
                                       first, o.history_bytes))
        self._build_controls()
        self.controls.show_state(planned_state(o.spec, o.world))  # before the first frame
        self._build_parts()
        self._connect()
        self.pending = Pending(self.sim.send, lambda: self.latest, self._refresh_hud,
                               lambda: self.sim.sent)
        self.handlers = actions.dispatch(actions.TABLE, self.pending.send, self._window_actions())
        self._tick_timer = QTimer(self)
        self._tick_timer.timeout.connect(self._draw)
        self._tick_timer.start(TICK_MS)
        self._plot_timer = QTimer(self)
        self._plot_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._plot_timer.timeout.connect(self._refresh_plots)
        self._plot_timer.start(PLOT_MS)
        self._progress = None  # (text, done, total) of the work under way, or None
        self._status_before = ""  # the status bar's text when the progress was shown
        self._progress_timer = QTimer(self)
        self._progress_timer.setSingleShot(True)
        self._progress_timer.timeout.connect(self._show_progress)
        self._timers = [self._tick_timer, self._plot_timer, self._progress_timer]
        self.sim.start()

    def _build_centre(self, view_class) -> None:
        """The 3D view with its overlays: the HUD, the F1 help, the start-up notice, the
        colour bar, the card and the warning (app.overlays.ViewStack places them)."""
        self.view = view_class()
        self.view.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.hud = Hud()
        self.stack = ViewStack(self.view, self.hud)
        self.help = self.stack.add(HelpPanel(), "centred")
        # The start-up compilation, shown in the middle of the view.
        self.notice = self.stack.add(overlay_label(200, 14, "font-size: 12pt; "), "centred")
        self.notice.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.notice.setWordWrap(True)  # a narrow view wraps the text rather than cutting it
        self.colour_bar = self.stack.add(ColourBar(), "bottom_left", readout=True)
        self.legend = Legend(self.stack)  # solvers side by side: each copy's colour
        self.setCentralWidget(self.stack)

    def _build_controls(self) -> None:
        """The controls dock on the left (app.controls), made once the worker exists."""
        # The keyboard goes back to the view once the edited widget has handled its key.
        self.controls = ControlsPanel(self.sim.send,
                                      lambda: QTimer.singleShot(0, self.view.setFocus))
        self.controls_dock = QDockWidget("Controls", self)
        self.controls_dock.setObjectName("controls")
        self.controls_dock.setWidget(self.controls)
        self.controls_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                                       | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.controls_dock)
        self.resizeDocks([self.controls_dock], [300], Qt.Orientation.Horizontal)
        self._controls_state = None

    def _build_parts(self) -> None:
        """The window's parts, each given the functions and widgets it uses."""
        send, status = self.sim.send, self.status_label.setText
        self.readouts = Readouts(self.stack, status)
        self.files = FileActions(self, self.grab_image, send, status,
                                 lambda: self.options.benchmark_out)
        self.benchmarks = BenchmarkRuns(send, status, self.benchmarkShown.emit,
                                        self._close_benchmark_ended, self,
                                        self.options.benchmark_budget)
        self.recording = Recording(self.stack, self.view, status, self.files.default_path,
                                   lambda: None if self._gl_failed else self.latest)
        self.history_bar = history_bar.install(
            self, send, lambda solvers: self.benchmarks.run("key", solvers))

    def _toggle_controls(self) -> None:
        self.controls_dock.setVisible(not self.controls_dock.isVisible())

    def _build_dock_and_status(self) -> None:
        self.plots = LivePlots(copies=CopyCurves)  # side by side: a residual curve per copy
        self.dock = QDockWidget("Convergence", self)
        self.dock.setObjectName("plots")
        self.dock.setWidget(self.plots)
        self.dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                              | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.resizeDocks([self.dock], [420], Qt.Orientation.Horizontal)
        self.status_label = StatusLine(STARTING)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.hide()
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.resize(1280, 800)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """The plot panel keeps at least PLOT_SHARE of the window's width (and MIN_WIDTH),
        whatever resizes came before: a minimum the window's layout enforces."""
        super().resizeEvent(event)
        self.dock.setMinimumWidth(max(PLOT_MIN_WIDTH, int(PLOT_SHARE * self.width())))

    def _connect(self) -> None:
        worker = self.sim.worker
        worker.frameReady.connect(self._on_frame)
        worker.progress.connect(self._on_progress)
        worker.benchmarkDone.connect(self.benchmarks.done)
        worker.benchmarkFailed.connect(self.benchmarks.failed)
        self.view.glFailed.connect(self._on_gl_failed)
        self.view.dragStarted.connect(lambda i: self.sim.send(cmd.DragStart(int(i))))
        self.view.dragMoved.connect(lambda i, p: self.sim.send(
            cmd.DragMove(int(i), np.array(p, dtype=np.float64).reshape(3))))
        self.view.dragEnded.connect(lambda i: self.sim.send(cmd.DragEnd()))
        self.view.marbleClicked.connect(lambda i: self.sim.send(cmd.Pick(int(i))))
        # Queued: the slot may grab the window for a screenshot, which must not happen inside
        # the view's paint event that rendered the frame.
        self.view.frameRendered.connect(self._on_rendered, Qt.ConnectionType.QueuedConnection)

    def _window_actions(self) -> dict:
        """The named window actions of lab.actions, each a method of one of the window's parts."""
        return {"benchmark": self.benchmarks.run, "screenshot": self.files.screenshot,
                "save_state": self.files.save_state, "open_state": self.files.open_state,
                "export_problem": self.files.export_problem,
                "camera": lambda: self.view.reset_camera(moved=True),
                "help": self._toggle_help, "controls": self._toggle_controls,
                "record": self.recording.toggle, "readouts": self.readouts.toggle,
                "cancel": self._escape, "quit": self.close}

    def _escape(self) -> None:
        """Esc: the help hides; else the comparison under way is cancelled."""
        if self.help.isVisible():
            self.help.hide()
        elif not self.benchmarks.cancel():
            self.status_label.setText("nothing to cancel")

    def _toggle_help(self) -> None:
        if not self.help.isVisible():
            solver = self.latest.state.solver if self.latest is not None else None
            self.help.setHtml(actions.help_html(solver))
        self.help.setVisible(not self.help.isVisible())
        self.stack.place()

    # --------------------------------------------------------------------------- keys
    def handle_key(self, event) -> bool:
        """Dispatch a key press through the hotkey table; True if it was one of ours."""
        if event.isAutoRepeat() and event.key() not in (Qt.Key.Key_Up, Qt.Key.Key_Down,
                                                        Qt.Key.Key_Left, Qt.Key.Key_Right,
                                                        Qt.Key.Key_S, Qt.Key.Key_Comma,
                                                        Qt.Key.Key_Period):
            return True
        mods = event.modifiers()
        key_text = QKeySequence(event.key()).toString()
        action = actions.action_for(
            key_text, ctrl=bool(mods & Qt.KeyboardModifier.ControlModifier),
            alt=bool(mods & Qt.KeyboardModifier.AltModifier),
            shift=bool(mods & Qt.KeyboardModifier.ShiftModifier))
        if action is None:
            return False
        self.trigger(action)
        return True

    def trigger(self, action: str) -> None:
        """Run the handler of a hotkey action (the same path as pressing its key)."""
        self.handlers[action]()

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt name)
        # Keys reach here from whichever child has focus (a key a widget ignores goes to its
        # parent); only the view can take focus, so none of them is eaten by a plot's own keys.
        # Not an application-wide event filter: that calls into Python, taking the GIL from
        # the simulation thread, for each of the ~500 events per second the window handles.
        if not self.handle_key(event):
            super().keyPressEvent(event)

    # --------------------------------------------------------------------------- frames
    def _on_frame(self, frame: Frame) -> None:
        self.latest = frame
        self.pending.confirm(frame)
        if frame.stepped and self._first_step is None:
            # The steps of this first frame ran: the count starts before them.
            self._first_step = (frame.wall, frame.steps - len(frame.records), self._renders,
                                self.plots.refreshes, frame.steps)
            if self.status_label.text() == STARTING:
                self.status_label.setText("stepping")
        if frame.stepped and self.options.frames is not None:
            computed = frame.records[frame.records.compiled == 0]  # meters: a step's cost
            self._step_ms.extend((1e3 * computed.total).tolist())
        timing = timing_key(frame.state)
        if timing != self._timing:  # a step's cost and the rate start again (lab.session.meters)
            self._timing = timing
            self._sps.reset()
            self._step_times.reset()
        if frame.stepped:
            # Stamped by the worker: queued delivery arrives in bursts while the GUI draws.
            self._sps.add(len(frame.records), now=frame.wall)
            self._step_times.add(frame.records)
        # Every frame: the plots mark a change of scene, solver or a reset even while paused.
        self.plots.add_frame(frame)
        state = frame.state
        if state.generation != self._generation:
            self._generation = state.generation
            self.view.set_container(frame.container)
            if state.scene != self._scene_shown:
                self._scene_shown = state.scene
                self.view.reset_camera()
        if state.message_seq != self._message_seq:
            self._message_seq = state.message_seq
            self._message_at = time.perf_counter()
            if state.message:
                self.status_label.setText(state.message)
        self.hud.set_alarm(state.diverged)
        if state.diverged and self.options.frames is not None and not self._scripted_done:
            self._stop_scripted_run(state.alarm)
        # Side by side the marbles show their copy's colour, not the colour mode's scale.
        if self.colour_bar.set_mode("marble" if frame.copies else state.colour_mode):
            self.stack.place()  # the card goes above the bar where it would cover it
        self.legend.show(frame.copies)
        if state != self._controls_state:
            self._controls_state = state
            self.controls.show_state(state)
        self.history_bar.show_state(state)
        self.readouts.show(frame)

    def _refresh_plots(self) -> None:
        """Plots at 25 Hz and the HUD at 10 Hz, independent of the 3D view: repainting them
        is raster work that shows the view's last image where the HUD covers it."""
        self.plots.refresh()
        now = time.perf_counter()
        if now - self._last_hud >= HUD_PERIOD:
            self._last_hud = now
            self._refresh_hud()

    def _draw(self) -> None:
        """Hand the newest frame to the view, unless it is still rendering the previous one or
        that one's cost says to wait (VIEW_SHARE)."""
        frame = self.latest
        if frame is None or frame.seq == self._drawn_seq or self._gl_failed:
            return
        if (self._awaiting_render or time.perf_counter() < self._view_ready_at
                or self.view.interacting()):  # the camera's renderings go first
            return
        self._drawn_seq = frame.seq
        self.view.set_network(frame.network)
        self.view.set_picked(frame.state.picked)
        self.view.set_marbles(*frame_marbles(frame))  # side by side: every copy
        self.view.update()
        self._awaiting_render = self.view.marbles_version
        self.recording.handed(self._awaiting_render, frame.time)

    def _on_rendered(self, cost: float, marbles_version: int) -> None:
        # Camera moves and scene changes render too: only the rendering of the frame handed
        # over counts as drawn and lets the next one go (else the view would render the next
        # frame while the window paced the one before).
        if not self._awaiting_render or marbles_version < self._awaiting_render:
            return
        self._awaiting_render = 0
        self.view_frame_cost = cost
        self._view_ready_at = self.view.paint_started + cost / VIEW_SHARE
        self._fps.add()
        self._renders += 1
        self._mark("first state drawn")
        if self.latest is not None and self.latest.steps > 0:
            self._mark("moving")
        self.recording.drawn(marbles_version)
        if self.latest is None or self.options.frames is None or self._scripted_done:
            return
        if self.latest.steps > 0:
            self._frames_drawn += 1
        if self._frames_drawn >= self.options.frames:
            self._scripted_done = True
            if self.options.screenshot:
                self.save_screenshot(self.options.screenshot)
            # Leave this handler before closing (the benchmark may start from here).
            QTimer.singleShot(0, self.close)

    def _stop_scripted_run(self, alarm: str) -> None:
        """A divergence pauses the simulation, and a scripted run has no one to resume it: it
        ends with the alarm in one line and marbles-bench run's exit code for a run whose
        physics failed, without the screenshot (it would show a broken run as a finished one)
        and without the benchmark (of a broken problem)."""
        self._scripted_done = True
        self.exit_code = PHYSICS_FAILED
        self._close_benchmark = "skip"
        shot = self.options.screenshot
        sys.stderr.write(f"marbles: error: {alarm}; the scripted run stopped there"
                         + (f", {shot} not written" if shot else "") + "\n")
        QTimer.singleShot(0, self.close)

    def _refresh_hud(self) -> None:
        if self.latest is None:
            return
        fresh = (time.perf_counter() - self._message_at < MESSAGE_SECONDS
                 or self.pending.acknowledgement() is not None)  # a key's answer shows too
        times = self._step_times
        timed = bool(len(times) or times.compiled)  # else the frame's own last step
        self.hud.show(hud_text(self.pending.shown(self.latest), self.fps, self.steps_per_second,
                               times.median() if timed else None, len(times), fresh,
                               compact=self.stack.compact, compiled=times.compiled),
                      self.stack.width())
        self.stack.place_under_hud()

    @property
    def fps(self) -> float:
        return self._fps.rate()

    @property
    def steps_per_second(self) -> float:
        """Measured against the pace asked for: in real time or slow motion a frame (of at
        least one step) is due every dt / speed, and one that is just due is not yet late."""
        f = self.latest
        period = f.dt / f.state.speed if f is not None and f.state.speed > 0 else 0.0
        return self._sps.rate(now=time.perf_counter(), period=period)

    def _mark(self, what: str) -> None:
        """Seconds from the program's start to the first time `what` happened (start-up)."""
        self.startup.setdefault(what, time.perf_counter() - PROGRAM_STARTED)

    def showEvent(self, event) -> None:
        self._mark("window shown")
        super().showEvent(event)

    def run_summary(self, now: float | None = None) -> str:
        """One line for scripted runs: frames drawn, simulation steps and plot refreshes (those
        that handed new data to the curves) per second of wall time since the first step (what
        the measurements in docs/desktop-performance.md quote). Steps per second are timed by the worker's clock,
        from the first step received to the latest, so that the frames still on their way when
        the run ends do not count as missing steps."""
        if self._first_step is None or self.latest is None:
            return ""
        wall0, steps0, renders0, plots0, timed0 = self._first_step
        now = time.perf_counter() if now is None else now
        seconds = max(now - wall0, 1e-9)
        f = self.latest
        steps = f.steps - steps0
        sim_seconds = max(f.wall - wall0, 1e-9)
        frames = self._renders - renders0
        plots = self.plots.refreshes - plots0
        median = float(np.nanmedian(self._step_ms)) if self._step_ms else float("nan")
        # The rate from the first frame's clock counts the steps after it (the first frame's
        # own ran before that clock started).
        rate = f"{(f.steps - timed0) / sim_seconds:.1f}" if f.steps > timed0 else "—"
        return (f"marbles: {f.state.scene}/{f.state.solver} {len(f.radius)} marbles: "
                f"{frames} frames and {steps} steps in {seconds:.2f} s: "
                f"{frames / seconds:.1f} frames/s, {rate} steps/s, "
                f"plots {plots / seconds:.1f}/s "
                f"(speed {'max' if f.state.speed <= 0 else f'{f.state.speed:g}x'}); "
                f"median step {median:.3f} ms; start-up: "
                + ", ".join(f"{what} at {t:.1f} s" for what, t in self.startup.items()))

    # --------------------------------------------------------------------------- screenshots
    def grab_image(self):
        """The whole window, 3D view included, as a QImage."""
        return self.grab().toImage()

    def save_screenshot(self, path: str, fatal: bool = True) -> bool:
        """The window as an image file (app.file_actions); a failure of the scripted
        --screenshot (`fatal`, whose whole point is the file) also makes the exit code 1."""
        saved = self.files.save_screenshot(path)
        if not saved and fatal:
            self.exit_code = 1
        return saved

    # --------------------------------------------------------------------------- progress
    def _on_progress(self, text: str, done: int, total: int) -> None:
        """Long work in the worker (compilations, a benchmark, a new world's first step) is
        shown once it has lasted PROGRESS_DELAY: what ends sooner is not flashed on screen."""
        self._progress = (text, done, total) if total > 0 else None
        if total <= 0:
            if self.progress.isVisible() or self.notice.isVisible():
                self.notice.hide()
                self.progress.hide()
                # What the status bar said before the work (a command's message) comes back;
                # the start-up's word is over once the work is done.
                before = self._status_before
                self.status_label.setText((before if before != STARTING else "stepping") or "ready")
            return
        if self.progress.isVisible():
            self._show_progress()
        elif not self._progress_timer.isActive():
            self._progress_timer.start(PROGRESS_DELAY_MS)

    def _show_progress(self) -> None:
        if self._progress is None:
            return
        text, done, total = self._progress
        if total == 1 and done == 0:
            self.progress.setRange(0, 0)  # one long item (a compilation): a busy bar
        else:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat(f"{done}/{total}")
        if not self.progress.isVisible():
            self._status_before = self.status_label.text()
        self.progress.show()
        self.status_label.hold(text)
        if self.latest is None or "compil" in text:
            self.notice.setText(text)
            self.notice.show()
            self.stack.place()

    # --------------------------------------------------------------------------- errors
    def _on_gl_failed(self, message: str) -> None:
        if self._gl_failed:
            return
        self._gl_failed = True
        self.exit_code = 1
        self._close_benchmark = "skip"
        if getattr(self.view, "failure", None) != message:  # the view may have said it already
            sys.stderr.write(f"marbles: error: {message}\n")
        self.sim.stop()
        if self.options.show_dialogs and self.options.frames is None:
            box = QMessageBox(QMessageBox.Icon.Critical, "marbles: OpenGL error",
                              f"The 3D view cannot be drawn:\n\n{message}\n\n"
                              "marbles needs OpenGL 3.3 (core profile).", parent=self)
            box.finished.connect(self._finish_close)
            box.open()
            self.error_dialog = box
        else:
            QTimer.singleShot(0, self._finish_close)

    # --------------------------------------------------------------------------- closing
    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if self._can_close:
            self._shutdown()
            event.accept()
            return
        if self._closing:
            # A second close while the benchmark runs cancels it: the solvers done are
            # written, then the window closes; a third closes now, without waiting.
            event.ignore()
            if self._close_benchmark == "running" and self.benchmarks.cancel():
                return
            if self._close_benchmark == "running":
                sys.stderr.write("marbles: quit without waiting for the benchmark on "
                                 "close to end\n")
            self._close_benchmark = "cancelled"
            QTimer.singleShot(0, self._finish_close)
            return
        self._closing = True
        has_problem = self.latest is not None and self.latest.steps > 0
        # The README's key table and F1 promise no comparison on close while the world has
        # friction (B compares the friction solvers when wanted).
        frictional = has_problem and any(mu > 0 for mu in self.latest.state.friction)
        if (self._close_benchmark == "todo" and has_problem and not frictional
                and not self._gl_failed):
            event.ignore()
            self._close_benchmark = "running"
            self.sim.send(cmd.Pause(True))
            self.benchmarks.run("close")
            return
        event.ignore()
        QTimer.singleShot(0, self._finish_close)

    def _close_benchmark_ended(self, outcome: str) -> None:
        """The benchmark on close is "done" or "failed": the window closes."""
        self._close_benchmark = outcome
        QTimer.singleShot(0, self._finish_close)

    def _finish_close(self, *_args) -> None:
        self._can_close = True
        self.close()

    def _shutdown(self) -> None:
        if self._shut_down:
            return
        self._shut_down = True
        for timer in self._timers:
            timer.stop()
        self.recording.stop()  # a video under way is finished, not lost
        self.view.shutdown()
        end = time.perf_counter()
        if not self.sim.stop(1500):
            # Only a Numba compilation cannot be interrupted (it has no progress hook inside);
            # waiting for it beats destroying a running QThread, which aborts the process.
            sys.stderr.write("marbles: waiting for the Numba compilation to finish...\n")
            self.sim.thread.wait()
        if self.options.frames is not None and self.run_summary(end):
            print(self.run_summary(end), flush=True)
        self.benchmarks.close_windows()
        self.finished.emit(self.exit_code)
