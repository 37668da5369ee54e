"""Heads-up display: the text drawn over the 3D view.

`hud_text` is a pure function of the newest frame and two measured rates, so it is testable
without a window; `Hud` is the translucent label that shows it. The figures it quotes about the
pace (a step's cost, the window's share, why a run is slower than real time) are defined in
lab.session.meters, with the meters that measure them.
"""
from __future__ import annotations

import math
import os
import re

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QWidget

from lab.session.history_commands import shown_message
from lab.session.meters import Pace
from lab.session.state import friction_text, source_text
from solver.methods import registry
from solver.methods.driver import COMMON_PARAMS
from solver.metrics import DIVERGENCE
from solver.parallel import MIN_MARBLES

_COMMON = {p.name for p in COMMON_PARAMS}


# Seconds a message stays in the status bar and on the HUD.
MESSAGE_SECONDS = 12.0


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


def _number(value: float, fmt: str) -> str:
    return "—" if not math.isfinite(value) else format(value, fmt)


def threads_text(state) -> str:
    """Where the step runs: the GPU, or how many threads of the CPU and why only one when more
    were asked for: a pile below parallel.MIN_MARBLES steps serially (two threads would cost
    more than they save)."""
    if state.device == "cuda":
        simulated = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
        where = "cuda simulator" if simulated else "cuda"
        return f"GPU ({where}, float32)" if state.precision == "float32" else f"GPU ({where})"
    if state.blocks > 1:
        return f"{state.blocks} threads"
    if state.threads > 1:
        return f"1 thread (--threads {state.threads} from {MIN_MARBLES} marbles)"
    return "1 thread"


def run_text(state) -> str:
    """The HUD's line on the run: paused, running, or the divergence it is in."""
    if state.diverged and state.paused:
        return (f"DIVERGED: paused ({state.alarm}); R resets, X switches to the settings "
                "that hold it and resets")
    if state.diverged:
        return (f"DIVERGED, running on: pauses at the next divergence ({state.alarm}); "
                "R resets, X switches to the settings that hold it")
    if state.paused:
        return "PAUSED (Space resumes, S steps)"
    return "running " + ("as fast as possible" if state.speed <= 0 else "in real time"
                         if state.speed == 1 else f"at {state.speed:g}x real time")


def history_line(state) -> str | None:
    """The HUD's line while a step of the history is shown (not the newest), else None."""
    span = getattr(state, "history", None)
    if span is None or not span.back:
        return None
    return (f"HISTORY: step {span.shown} shown, {span.back} back (steps {span.first}–"
            f"{span.last} kept); , . scrub; S or Space go on from here, dropping the later steps")


def pace_of(frame, steps_per_second: float, timings: dict | None = None) -> Pace:
    """The run's lab.session.meters.Pace: a step's cost from `timings` (the median of the
    steps kept; default the frame's last step)."""
    t = frame.timings if timings is None else timings
    return Pace.of(t.get("total", math.nan), steps_per_second, frame.dt, frame.state.speed)


def slow_text(frame, steps_per_second: float, timings: dict | None = None) -> str | None:
    """A warning when the run asks for real time (times speed) and makes less than SLOW_SHARE
    of it, with why (lab.session.meters.Pace.why), else None."""
    pace = pace_of(frame, steps_per_second, timings)
    if frame.state.paused or not pace.slow:
        return None
    return (f"SLOWER THAN REAL TIME: {pace.factor:.2f}x of the {frame.state.speed:g}x asked; "
            + pace.why())


def hud_text(frame, fps: float, steps_per_second: float, timings: dict | None = None,
             steps_timed: int = 1, show_message: bool = True, compact: bool = False,
             compiled: int = 0) -> str:
    """Lines of the HUD for `frame` (app.worker.Frame); rates in 1/s of wall time (NaN: not
    measured yet, shown as —): 3D frames drawn and simulation steps, whose product with dt is
    the real-time factor (simulated seconds per second); while paused no steps are made, so
    that rate is 0 whatever the meter still remembers. `timings`: seconds per phase to show
    (StepTimes.median over `steps_timed` steps; default the frame's last step); `show_message`:
    whether the Session's message is still fresh enough to show; `compact`: only what a small
    view has room for (what runs, where it is, how it goes); `compiled`: steps left out of the
    median because Numba compiled during them."""
    s = frame.state
    label = registry.METHODS[s.solver].label if s.solver in registry.METHODS else s.solver
    params = _fmt_params(s.solver, s.solver_params)
    t = frame.timings if timings is None else timings
    ms = {k: _number(1e3 * t.get(k, math.nan), ".2f")
          for k in ("collide", "assemble", "solve", "integrate", "total")}
    if s.paused:
        steps_per_second = 0.0
    median = f" (median of {steps_timed})" if steps_timed > 1 else ""
    if compiled:
        median = (f" (median of {steps_timed}, {compiled} compiling left out)" if steps_timed
                  else f" ({compiled} compiling, left out)")
    pace = pace_of(frame, steps_per_second, timings)
    window = pace.window
    adds = f"   window adds {1e3 * window:.1f} ms/step" if math.isfinite(window) else ""
    residual = "—" if math.isnan(frame.residual) else f"{frame.residual:.3e} m/s"
    status = frame.status or "—"
    if status == DIVERGENCE:
        status = "DIVERGENCE"
    lines = [
        f"{source_text(s)}   {len(frame.radius)} marbles   {frame.contacts} contacts   "
        f"{friction_text(s.friction)}",
        f"solver {s.solver} ({label}) {params}".rstrip(),
        f"iterations {s.iterations}   warm start {warm_text(s.warm_start)}   "
        f"colour by {'solver (side by side)' if getattr(frame, 'copies', ()) else s.colour_mode}",
        f"step {ms['total']} ms{median}:   collide {ms['collide']}  assemble {ms['assemble']}"
        f"  solve {ms['solve']}  integrate {ms['integrate']}   {threads_text(s)}",
        f"{_number(fps, '.1f')} frames/s   {_number(steps_per_second, '.1f')} steps/s   "
        f"{_number(steps_per_second * frame.dt, '.2f')}x real time{adds}",
        f"t = {frame.time:.2f} s (step {frame.steps}, dt {frame.dt:g} s)   residual {residual}"
        f"   {status} after {frame.iterations_done} it",
    ]
    if compact:
        lines = [f"{source_text(s)}   {len(frame.radius)} marbles   solver {s.solver}",
                 f"t = {frame.time:.2f} s   residual {residual}   "
                 f"{_number(steps_per_second * frame.dt, '.2f')}x real time"]
    history = history_line(s)
    if compact:
        # A small view says the state of the run in a few words, not its reasons; a fresh
        # message (the answer to a key) still shows below.
        lines.append(f"HISTORY: step {s.history.shown}" if history else
                     f"SLOWER: {pace.factor:.2f}x of {s.speed:g}x"
                     if pace.slow and not s.paused else run_text(s).split(" (", 1)[0])
    else:
        if history:
            lines.append(history)
        # A run too slow for the pace asked says so instead of claiming that pace.
        lines.append(slow_text(frame, steps_per_second, timings) or run_text(s))
    span = getattr(s, "history", None)
    said = bool(history) and s.message == shown_message(span.shown, span.first, span.last)
    if s.message and show_message and not (s.alarm and s.alarm in s.message) \
            and s.message not in lines[-1] and not said:
        lines.append(s.message)
    return "\n".join(lines)


FIELD_GAP = "   "  # between the fields of a HUD line: where a line too wide may break
# Where a field never breaks, at a single space: after a number ("4.892e-13", "0.01x", "2",
# "—") or "=", and before a number or "=", so a number stays with its unit and a name with its
# value ("residual 4.892e-13 m/s", "2 threads", "t = 1.50 s"). Two spaces separate items
# ("collide 0.28  assemble 0.06"), where a break is fine.
_NUMBER = re.compile(r"^[-+(]?(?:[\d.,]+(?:e[-+]?\d+)?[x%]?|—)$|^[=≈]$")
_BEFORE_NUMBER = re.compile(r"^[-+(]?[\d—]|^[=≈]$")


def _chunks(field: str, names: bool = True) -> list[tuple[str, str]]:
    """`field` as (spaces before, words) pieces, joined where a line must not break
    (_NUMBER; with `names` False a name may leave its value, a number never its unit): where a
    field too wide for the HUD may break, at spaces only (never inside "m/s")."""
    parts = re.split(r"( +)", field)  # words at even indices, the spaces between at odd
    out = [("", parts[0])]
    for k in range(1, len(parts) - 1, 2):
        gap, word = parts[k], parts[k + 1]
        if gap == " " and (_NUMBER.match(out[-1][1].rsplit(" ", 1)[-1])
                           or names and _BEFORE_NUMBER.match(word)):
            out[-1] = (out[-1][0], out[-1][1] + gap + word)
        else:
            out.append((gap, word))
    return out


def _pack(pieces: list[tuple[str, str]], metrics, room: float) -> list[str]:
    """(separator, text) `pieces` into as few lines as fit `room` px, continuations indented
    (the separator dropped at a break). A piece wider than `room` keeps a line to itself."""
    out = [pieces[0][1]]
    for gap, piece in pieces[1:]:
        joined = out[-1] + gap + piece
        if metrics.horizontalAdvance(joined) <= room:
            out[-1] = joined
        else:
            out.append("  " + piece)
    return out


def _break_fields(line: str, metrics, room: float) -> list[str]:
    """`line` as few lines as fit `room` px, broken at FIELD_GAP (continuations indented);
    a field wider than `room` alone is broken at its spaces, never beside a number (_chunks)."""
    out: list[str] = []
    fields = line.split(FIELD_GAP)
    for text in _pack([("", fields[0])] + [(FIELD_GAP, f) for f in fields[1:]], metrics, room):
        if metrics.horizontalAdvance(text) <= room:
            out.append(text)
            continue
        indent = "  " if text.startswith("  ") else ""
        for names in (True, False):
            pieces = _chunks(text[len(indent):], names)
            lines = _pack([("", indent + pieces[0][1])] + pieces[1:], metrics, room)
            if all(metrics.horizontalAdvance(line) <= room for line in lines):
                break
        out += lines
    return out


class StatusLine(QLabel):
    """The status bar's text. A message goes after MESSAGE_SECONDS, so the bar never shows a
    minutes-old line as news; `hold` shows one that stays until replaced (a compilation under
    way)."""

    def __init__(self, text: str = ""):
        super().__init__(text)
        self._expiry = QTimer(self)
        self._expiry.setSingleShot(True)
        self._expiry.timeout.connect(lambda: QLabel.setText(self, ""))

    def setText(self, text: str) -> None:  # noqa: N802 (Qt name)
        super().setText(text)
        self._expiry.start(int(1e3 * MESSAGE_SECONDS))

    def hold(self, text: str) -> None:
        self._expiry.stop()
        super().setText(text)


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

    def show(self, text: str, max_width: int | None = None) -> None:
        """Set the HUD's text (lines of fields separated by FIELD_GAP), fitted at once to
        `max_width` px when given (`fit`: the label then lays out once, not twice)."""
        self._text = text
        if max_width is None:
            self.setText(text)
        else:
            self.fit(max_width)

    def fit(self, max_width: int, margin: int = 8) -> None:
        """Size to the text, at most `max_width` px wide, at (margin, margin) of the parent.
        A line too wide breaks between its fields (FIELD_GAP), never inside one ("1 thread",
        "0.90 ms" stay whole); only a single field wider than the HUD breaks at its spaces,
        and never between a number and its unit. The lines are broken here, not by the
        label's word wrap, which would break at any space or after the "/" of "m/s". The
        HUD sits over the view, outside any layout, so its text never widens the window's
        layout and squeezes the plot panel."""
        text = getattr(self, "_text", self.text())
        metrics = QFontMetrics(self.font())
        self.setWordWrap(False)
        width = max(60, max_width - 2 * margin)
        room = width - (2 * 6 + 2)  # the stylesheet's padding and a pixel of rounding each side
        for _ in range(2):
            lines = [part for line in text.split("\n")
                     for part in _break_fields(line, metrics, max(40, room))]
            shown = "\n".join(lines)
            if shown != self.text():
                self.setText(shown)
            natural = self.sizeHint()
            widest = max(metrics.horizontalAdvance(line) for line in lines)
            if natural.width() <= width or widest > room:
                break  # fits, or a piece that cannot break is wider than the HUD
            room -= natural.width() - width  # the label measured wider than the metrics
        self.setGeometry(margin, margin, min(natural.width(), width), natural.height())

    def set_alarm(self, alarm: bool) -> None:
        """Red background while the simulation is diverged. Restyling re-polishes and repaints
        the label, so only a change does it."""
        if alarm == getattr(self, "_alarm", False):
            return
        self._alarm = alarm
        colour = "rgba(140, 20, 20, 200)" if alarm else "rgba(20, 20, 28, 170)"
        self.setStyleSheet(f"QLabel {{ color: #f0f0f0; background: {colour};"
                           " padding: 6px; border-radius: 4px; }")
