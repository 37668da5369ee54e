"""How soon the window answers the keys and the mouse while a large pile steps: the
measurement behind docs/desktop-performance.md ("Keys and the mouse on a large pile").

    python -m benchmarks.window_keys [--repeats 10] [--run="--scene heap --set n=20000"]

Opens the window (under `xvfb-run -a` when there is no display) on `--run`'s options (the
program's own: `marbles --help`), waits until the pile steps, then sends, `--repeats` times
each: Space (pause) and Space again, a left-button drag of 40 px (orbit), a wheel notch (zoom),
V (reset the camera) and C (the colour mode, a command the simulation thread carries out). Each
is timed from the event to the first image that shows it: the HUD's PAUSED painted; the view's
first rendering asked for after the event, shown; for C the HUD's "C received" painted (or the
new colours, if they came first), then a frame in the new colour mode drawn.
Prints the median and range of each in ms, with the step's own median for scale. Numbers
depend on the machine and its load; no time is asserted anywhere.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np

DEFAULT_RUN = "--scene heap --set n=20000"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.window_keys",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10, help="events of each kind (10)")
    parser.add_argument("--run", default=DEFAULT_RUN, metavar="OPTIONS",
                        help=f"the window's run options (default: {DEFAULT_RUN!r})")
    parser.add_argument("--settle", type=int, default=3,
                        help="steps made before the first event (default 3)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: want at least 1")
    return args


def _wait(qtest, predicate, timeout: float = 60.0) -> float:
    """Process events until `predicate()`; the perf_counter time it first held."""
    end = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > end:
            raise TimeoutError("the window did not answer within "
                               f"{timeout:g} s")
        qtest.qWait(1)
    return time.perf_counter()


class Session:
    """The window under test and the events it is sent."""

    def __init__(self, window):
        from PySide6.QtTest import QTest

        self.window = window
        self.view = window.view
        self.qtest = QTest

        self.render_ms: dict[str, list[float]] = {}  # the shown image's own rendering

    def wait(self, predicate, timeout: float = 60.0) -> float:
        return _wait(self.qtest, predicate, timeout)

    def shown(self, name: str, predicate, t0: float) -> float:
        """Wait for the view's image `predicate`; seconds since t0, its rendering kept."""
        t1 = self.wait(predicate)
        self.render_ms.setdefault(name, []).append(1e3 * self.view.render_seconds)
        return t1 - t0

    def camera_answer(self, t0: float, moves: int) -> float:
        """Seconds from t0 to the first paint of the view that shows camera move `moves`
        (the last image warped, or a rendering)."""
        return self.wait(lambda: self.view.camera_shown >= moves) - t0

    def steps(self) -> int:
        latest = self.window.latest
        return 0 if latest is None else latest.steps

    def rendered_after(self):
        """A predicate: the view shows a rendering asked for after now."""
        asked = self.view._seq
        return lambda: self.view._shown > asked

    def key(self, key) -> None:
        from PySide6.QtCore import Qt

        self.qtest.keyClick(self.view, key, Qt.KeyboardModifier.NoModifier)

    def pause(self) -> float:
        from PySide6.QtCore import Qt

        t0 = time.perf_counter()
        self.key(Qt.Key.Key_Space)
        self.wait(lambda: "PAUSED" in self.window.hud.text())
        self.window.hud.repaint()
        answer = time.perf_counter() - t0
        return answer, answer

    def resume(self) -> None:
        from PySide6.QtCore import Qt

        self.key(Qt.Key.Key_Space)
        self.wait(lambda: "PAUSED" not in self.window.hud.text())
        steps = self.steps()
        self.wait(lambda: self.steps() > steps)

    def orbit(self) -> float:
        from PySide6.QtCore import QEvent, QPointF, Qt
        from PySide6.QtGui import QMouseEvent
        from PySide6.QtWidgets import QApplication

        centre = QPointF(self.view.width() / 2, self.view.height() / 2)
        left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier

        def send(kind, at, button, buttons):
            QApplication.sendEvent(self.view, QMouseEvent(
                kind, at, self.view.mapToGlobal(at), button, buttons, none))

        send(QEvent.Type.MouseButtonPress, centre, left, left)
        shown = self.rendered_after()
        moves = self.view.camera_moves + 1
        t0 = time.perf_counter()
        send(QEvent.Type.MouseMove, centre + QPointF(40, 0), Qt.MouseButton.NoButton, left)
        send(QEvent.Type.MouseButtonRelease, centre + QPointF(40, 0), left,
             Qt.MouseButton.NoButton)
        return self.camera_answer(t0, moves), self.shown("orbit", shown, t0)

    def zoom(self) -> float:
        from PySide6.QtCore import QPoint, QPointF, Qt
        from PySide6.QtGui import QWheelEvent
        from PySide6.QtWidgets import QApplication

        at = QPointF(self.view.width() / 2, self.view.height() / 2)
        shown = self.rendered_after()
        moves = self.view.camera_moves + 1
        t0 = time.perf_counter()
        QApplication.sendEvent(self.view, QWheelEvent(
            at, self.view.mapToGlobal(at), QPoint(0, 0), QPoint(0, 120),
            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase, False))
        return self.camera_answer(t0, moves), self.shown("zoom", shown, t0)

    def camera_key(self) -> float:
        from PySide6.QtCore import Qt

        shown = self.rendered_after()
        moves = self.view.camera_moves + 1
        t0 = time.perf_counter()
        self.key(Qt.Key.Key_V)
        return self.camera_answer(t0, moves), self.shown("camera key V", shown, t0)

    def colour_key(self) -> float:
        from PySide6.QtCore import Qt

        before = self.window.latest.state.colour_mode
        t0 = time.perf_counter()
        self.key(Qt.Key.Key_C)
        # Answered: the HUD says C was received (app.pending), or the new colours came first.
        self.wait(lambda: "C received" in self.window.hud.text()
                  or self.window.latest.state.colour_mode != before)
        self.window.hud.repaint()
        answered = time.perf_counter() - t0
        self.wait(lambda: self.window.latest.state.colour_mode != before)
        shown = self.rendered_after()
        return answered, self.shown("colour key C", shown, t0)


def measure(session: Session, repeats: int) -> dict[str, list[tuple[float, float]]]:
    """(seconds to the first answer shown, to the rendering that shows it) of each event,
    `repeats` of each kind."""
    times: dict[str, list] = {k: [] for k in ("pause", "orbit", "zoom", "camera key V",
                                              "colour key C")}
    for _ in range(repeats):
        steps = session.steps()
        session.wait(lambda: session.steps() > steps)  # a step in flight, whatever its phase
        times["pause"].append(session.pause())
        session.resume()
        times["orbit"].append(session.orbit())
        times["zoom"].append(session.zoom())
        times["camera key V"].append(session.camera_key())
        times["colour key C"].append(session.colour_key())
    return times


def run_window(args: argparse.Namespace) -> int:
    from app import main as app_main

    options = app_main.options_from(app_main.build_parser().parse_args(
        shlex.split(args.run) + ["--no-benchmark"]))
    options.show_dialogs = False
    app = app_main._set_up_qt()
    from app.window import MainWindow

    window = MainWindow(options)
    window.show()
    session = Session(window)
    session.wait(lambda: session.steps() >= args.settle, timeout=900.0)
    times = measure(session, args.repeats)
    median_step = window._step_times.median()
    latest = window.latest
    print(f"window_keys: {latest.state.scene} {len(latest.radius)} marbles, solver "
          f"{latest.state.solver}, {latest.state.threads} threads; median step "
          f"{1e3 * median_step.get('total', float('nan')):.1f} ms; "
          f"thread beside its steps +{latest.window_ms:.2f} ms/step; {args.repeats} of each event")
    print("ms from the event to: the first image that answers it (the HUD's PAUSED; the last "
          "image warped to the new camera; C received on the HUD) | the view's "
          "rendering with it | that rendering's own cost; median (min-max)")
    for name, values in times.items():
        ms = 1e3 * np.array(values)
        render = session.render_ms.get(name)
        print(f"{name:<14} " + " | ".join(
            f"{np.median(col):8.1f} ({col.min():.1f}-{col.max():.1f})" for col in ms.T)
            + " | " + ("—" if not render else f"{np.median(render):.1f}"))
    window._close_benchmark = "skip"
    window.close()
    session.wait(lambda: window._shut_down, timeout=30.0)
    app.processEvents()
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        command = ["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", sys.executable, "-m",
                   "benchmarks.window_keys", *(sys.argv[1:] if argv is None else argv)]
        env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
        return subprocess.run(command, env=env).returncode
    return run_window(args)


if __name__ == "__main__":
    sys.exit(main())
