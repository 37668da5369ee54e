"""Heads-up display: the text drawn over the 3D view, and the rate meters that feed it.

`hud_text` is a pure function of the newest frame and two measured rates, so it is testable
without a window; `Hud` is the translucent label that shows it.
"""
from __future__ import annotations

import math
import time
from collections import deque

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QWidget

from lab.session import friction_text
from solver.methods import registry
from solver.methods.driver import COMMON_PARAMS
from solver.metrics import DIVERGENCE

_COMMON = {p.name for p in COMMON_PARAMS}


class RateMeter:
    """Events per second over the last `window` seconds of wall time (e.g. frames drawn)."""

    def __init__(self, window: float = 1.0):
        self.window = window
        self._stamps: deque[tuple[float, int]] = deque()

    def add(self, count: int = 1, now: float | None = None) -> None:
        self._stamps.append((time.perf_counter() if now is None else now, count))

    def rate(self, now: float | None = None) -> float:
        now = time.perf_counter() if now is None else now
        while self._stamps and self._stamps[0][0] < now - self.window:
            self._stamps.popleft()
        if len(self._stamps) < 2:
            return 0.0
        # Events after the first one, over the span they cover: unbiased at start-up too.
        span = self._stamps[-1][0] - self._stamps[0][0]
        total = sum(c for _, c in self._stamps) - self._stamps[0][1]
        return total / span if span > 0 else 0.0

    def reset(self) -> None:
        self._stamps.clear()


def _fmt_params(solver: str, params: dict) -> str:
    """The method's own parameters (not the shared tolerances), e.g. 'omega=1.5'."""
    try:
        own = [p.name for p in registry.get(solver).params]
    except Exception:  # a solver unknown here still gets its numbers shown
        own = [k for k in params if k not in _COMMON]
    shown = [f"{k}={params[k]:g}" if isinstance(params.get(k), float) else f"{k}={params.get(k)}"
             for k in own if k in params]
    return " ".join(shown)


def warm_text(fraction: float) -> str:
    """'off', 'full' or the fraction of last step's impulses a solve starts from."""
    return "off" if fraction <= 0.0 else "full" if fraction >= 1.0 else f"x{fraction:g}"


def hud_text(frame, fps: float, steps_per_second: float) -> str:
    """Lines of the HUD for `frame` (app.worker.Frame); rates in 1/s of wall time."""
    s = frame.state
    label = registry.METHODS[s.solver].label if s.solver in registry.METHODS else s.solver
    params = _fmt_params(s.solver, s.solver_params)
    t = frame.timings
    ms = {k: 1e3 * t.get(k, math.nan) for k in ("collide", "assemble", "solve", "integrate",
                                                 "total")}
    if s.diverged:
        run = "DIVERGED: paused; R resets"
    elif s.paused:
        run = "PAUSED (Space resumes, S steps)"
    else:
        run = "running" + (" as fast as possible" if s.speed <= 0 else
                           "" if s.speed == 1 else f" at {s.speed:g}x real time")
    residual = "—" if math.isnan(frame.residual) else f"{frame.residual:.3e} m/s"
    status = frame.status or "—"
    if status == DIVERGENCE:
        status = "DIVERGENCE"
    lines = [
        f"scene {s.scene}   {len(frame.radius)} marbles   {frame.contacts} contacts   "
        f"{friction_text(s.friction)}",
        f"solver {s.solver} ({label}) {params}".rstrip(),
        f"iterations {s.iterations}   warm start {warm_text(s.warm_start)}   "
        f"colour by {s.colour_mode}",
        f"step {ms['total']:.2f} ms: collide {ms['collide']:.2f}  assemble {ms['assemble']:.2f}"
        f"  solve {ms['solve']:.2f}  integrate {ms['integrate']:.2f}",
        f"{fps:5.1f} fps   {steps_per_second:6.1f} steps/s   t = {frame.time:.2f} s"
        f" (step {frame.steps}, dt {frame.dt:g} s)",
        f"residual {residual}   {status} after {frame.iterations_done} it",
        run,
    ]
    if s.message:
        lines.append(s.message)
    return "\n".join(lines)


class Hud(QLabel):
    """Translucent monospace text in the top-left corner of the view; ignores the mouse."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.TypeWriter)
        font.setPointSize(9)
        self.setFont(font)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setStyleSheet("QLabel { color: #f0f0f0; background: rgba(20, 20, 28, 170);"
                           " padding: 6px; border-radius: 4px; }")
        self.setText("starting…")

    def set_alarm(self, alarm: bool) -> None:
        """Red background while the simulation is diverged. Restyling re-polishes and repaints
        the label, so only a change does it."""
        if alarm == getattr(self, "_alarm", False):
            return
        self._alarm = alarm
        colour = "rgba(140, 20, 20, 200)" if alarm else "rgba(20, 20, 28, 170)"
        self.setStyleSheet(f"QLabel {{ color: #f0f0f0; background: {colour};"
                           " padding: 6px; border-radius: 4px; }")
