"""The HUD's text is a pure function of a frame and two measured rates; the rate meter; the
HUD fits the view's width."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from PySide6.QtGui import QFontMetrics, QTextLayout, QTextOption
from PySide6.QtWidgets import QWidget

from app.hud import Hud, hud_text
from lab.session.meters import OVERDUE, RateMeter
from app.worker import Frame
from lab.session.state import SessionState
from solver.parallel import MIN_MARBLES


def frame(timings=None, **state) -> Frame:
    s = dict(scene="bowl", solver="psor", solver_params={"omega": 1.5, "abs_tol": 1e-12},
             iterations=20, warm_start=0.5, paused=False, colour_mode="marble", diverged=False,
             speed=1.0, generation=0)
    s.update(state)
    return Frame(seq=1, stepped=True, x=np.zeros((3, 3), np.float32),
                 radius=np.full(3, 0.1, np.float32), colour=np.zeros((3, 3), np.float32),
                 container={}, time=1.5, steps=75, dt=0.02, contacts=12,
                 timings=timings if timings is not None else {"collide": 1e-4, "assemble": 1e-5, "solve": 2e-4,
                                     "integrate": 1e-5, "total": 3.2e-4}, status="max_iterations", iterations_done=20,
                 residual=3.2e-3, trace=None, trace_step=-1, state=SessionState(**s))


def test_the_hud_says_what_runs_with_which_parameters():
    text = hud_text(frame(), 14.96, 49.9)
    assert "scene bowl   3 marbles   12 contacts" in text
    assert "solver psor (Projected SOR) omega=1.5" in text
    assert "abs_tol" not in text  # the shared tolerances are not the solver's own
    assert "warm start x0.5" in text and "iterations 20" in text
    assert "step 0.32 ms" in text
    # 49.9 steps of 0.02 s per second: the real-time factor is their product.
    assert "15.0 frames/s   49.9 steps/s   1.00x real time" in text
    assert "residual 3.200e-03 m/s   max_iterations after 20 it" in text
    assert "SLOWER" not in text


ALARM = "jacobi diverged at step 6 (t = 0.12 s)"


@pytest.mark.parametrize("state, line", [
    (dict(diverged=True, paused=True, alarm=ALARM),
     f"DIVERGED: paused ({ALARM}); R resets, X switches to the settings that hold it and "
     "resets"),
    (dict(diverged=True, paused=False, alarm=ALARM),
     f"DIVERGED, running on: pauses at the next divergence ({ALARM}); R resets, X switches "
     "to the settings that hold it"),
    (dict(paused=True), "PAUSED (Space resumes, S steps)"),
    (dict(speed=0.0), "running as fast as possible"),
    (dict(speed=1.0), "running in real time"),
    (dict(speed=2.0), "running at 2x real time"),
    (dict(message="omega=1.9 is at its limit"), "omega=1.9 is at its limit"),
])
def test_the_hud_states_the_run(state, line):
    assert line in hud_text(frame(**state), 10.0, 100.0).splitlines()


def test_rates_not_measured_yet_are_a_dash_not_zero():
    assert "— frames/s   — steps/s   —x real time" in hud_text(frame(), np.nan, np.nan)


def test_a_solver_that_cannot_keep_real_time_is_said_so():
    """pgs-sm at 32 of 50 steps per second: 0.64x of the 1x asked, with the step
    time that explains it; at 2x asked, 60 steps/s are 1.2x, short of it too; flat out and
    paused there is nothing to keep up with."""
    slow = dict(timings={"collide": 1e-3, "assemble": 1e-3, "solve": 28e-3, "integrate": 1e-3,
                         "total": 31e-3})
    lines = hud_text(frame(**slow), 10.0, 32.0).splitlines()
    assert ("SLOWER THAN REAL TIME: 0.64x of the 1x asked; a step costs 31.0 ms, real time "
            "allows 20.0 ms") in lines
    assert any(line.startswith("SLOWER THAN REAL TIME: 1.20x of the 2x asked")
               for line in hud_text(frame(speed=2.0, **slow), 10.0, 60.0).splitlines())
    assert "SLOWER" not in hud_text(frame(speed=0.0, **slow), 10.0, 32.0)
    assert "SLOWER" not in hud_text(frame(paused=True, **slow), 10.0, 32.0)
    assert "SLOWER" not in hud_text(frame(**slow), 10.0, 46.0)  # 0.92x: within the margin


def test_rate_meter_counts_events_per_second_over_its_window():
    meter = RateMeter(window=1.0)
    for k in range(11):
        meter.add(now=10.0 + 0.1 * k)
    assert meter.rate(now=11.0) == pytest.approx(10.0)
    assert meter.rate(now=11.05) == pytest.approx(10.0)  # not overdue yet
    # Events stopped: the rate falls with the time since (the last three are kept).
    assert meter.rate(now=13.0) == pytest.approx(2 / 2.2)
    assert meter.rate(now=100.0) != meter.rate(now=100.0)  # NaN: nothing left to measure


def test_rare_events_give_their_rate_not_zero():
    """A step every 1.3 s (a slow solver) read "0.0 steps/s" with a one-second window."""
    meter = RateMeter(window=1.0)
    for k in range(5):
        meter.add(now=1.3 * k)
    assert meter.rate(now=1.3 * 4 + 0.5) == pytest.approx(1 / 1.3)
    assert meter.rate(now=1.3 * 4 + 2.6) == pytest.approx(2 / (2 * 1.3 + 2.6))  # overdue
    counted = RateMeter(window=1.0)
    for k in range(5):
        counted.add(count=7, now=0.1 * k)  # frames of 7 steps each
    assert counted.rate(now=0.4) == pytest.approx(70.0)


@pytest.mark.parametrize("delay", [0.0, 0.03, 0.15])
def test_slow_motion_reads_the_speed_asked_between_two_steps(delay):
    """At 0.05x a step is due every 0.4 s and reaches the HUD `delay` s later (a timer tick,
    the queue to the window); the HUD, 10 times a second, must not read a step on its way as
    a slow-down (0.03x, SLOWER THAN REAL TIME)."""
    speed, dt = 0.05, 0.02
    period = dt / speed
    meter = RateMeter()
    steps = [k * period for k in range(40)]
    arrived = 0
    for hud in np.arange(3 * period, 15.0, 0.1):
        while steps[arrived] + delay <= hud:
            meter.add(now=steps[arrived])  # stamped by the worker when it stepped
            arrived += 1
        rate = meter.rate(now=hud, period=period)
        text = hud_text(frame(speed=speed), 10.0, rate)
        assert rate * dt == pytest.approx(speed), hud
        assert "0.05x real time" in text and "SLOWER" not in text, hud
    assert meter.rate(now=16.0 + OVERDUE * period, period=period) * dt < 0.9 * speed  # stopped


def drawn_lines(label) -> list[tuple[str, bool]]:
    """The lines `label` draws, as Qt lays its text out in its width (its own word wrap
    included): (text, whether the text goes on in the next line: a wrap, or a continuation
    the HUD indented)."""
    width = label.contentsRect().width()  # within the stylesheet's padding
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WordWrap if label.wordWrap()
                       else QTextOption.WrapMode.NoWrap)
    out = []
    for line in label.text().split("\n"):
        if out and line.startswith("  "):
            out[-1] = (out[-1][0], True)
        layout = QTextLayout(line, label.font())
        layout.setTextOption(option)
        layout.beginLayout()
        while (piece := layout.createLine()).isValid():
            piece.setLineWidth(width)
            out.append((line[piece.textStart():piece.textStart() + piece.textLength()], True))
        layout.endLayout()
        out[-1] = (out[-1][0], False)
    return out


NUMBER = re.compile(r"[-+(]?(?:\d[\d.,]*(?:e[-+]?\d+)?x?|—)$")


def number_unit_splits(label, text: str) -> list[str]:
    """Where `label`, showing `text` (as hud_text made it: fields apart by three spaces,
    items by two), breaks a line between a number and its unit ("4.892e-13" | "m/s",
    "2" | "threads") or inside a word ("m/" | "s")."""
    lines = drawn_lines(label)
    bad = []
    for (line, goes_on), (after, _) in zip(lines, lines[1:]):
        if not goes_on or not line.strip() or not after.strip():
            continue
        last, first = line.rstrip().split(" ")[-1], after.strip().split(" ")[0]
        gaps = {len(m.group(1)) for m in re.finditer(re.escape(last) + "( *)" + re.escape(first),
                                                      text.replace("\n", "   "))}
        if gaps and max(gaps) >= 2:
            continue  # between fields or items
        if 0 in gaps or 1 in gaps and NUMBER.search(last):
            bad.append(f"{line!r} | {after.strip()!r}")
    return bad


def big_pile_frame() -> Frame:
    """The HUD's frame of 100 000 marbles stepped on two threads, slower than real time."""
    slow = {"collide": 0.012, "assemble": 0.0051, "solve": 0.1402, "integrate": 0.0051,
            "total": 0.16257}
    f = frame(timings=slow, scene="box", solver="pgs", solver_params={"friction": "cone"},
              threads=2, blocks=2, friction=(0.5, 0.5, 0.0, 0.0))
    return dataclasses.replace(f, radius=np.full(100_000, 0.1, np.float32), contacts=412_345,
                               residual=4.892e-13)


def test_the_hud_breaks_its_lines_itself_never_between_a_number_and_its_unit(qtbot):
    """From the narrowest view to a wide one (a HUD 552 px wide is the view's at 1280×800),
    every line fits the HUD and none ends in a number whose unit starts the next, nor
    inside "m/s"."""
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.resize(800, 900)
    hud = Hud(parent)
    text = hud_text(big_pile_frame(), 0.4, 0.4, steps_timed=100)
    for width in range(200, 801, 8):
        hud.show(text, width)
        assert hud.width() <= width - 16, width
        assert number_unit_splits(hud, text) == [], width
        metrics = QFontMetrics(hud.font())
        assert all(metrics.horizontalAdvance(line.rstrip()) <= hud.contentsRect().width()
                   for line, _ in drawn_lines(hud)), width
    hud.show(text, 2000)
    assert hud.text() == text  # room for every line: nothing broken




@pytest.mark.parametrize("friction, shown", [
    ((0.0, 0.0, 0.0, 0.0), "μ 0"),
    ((0.5, 0.5, 0.0, 0.0), "μ 0.5"),
    ((0.5, 0.5, 0.01, 0.0), "μ 0.5  μ_roll 0.01 m"),
    ((0.3, 0.6, 0.0, 0.0), "μ 0.3 (walls 0.6)"),
])
def test_the_hud_shows_the_friction_on_the_scene_line(friction, shown):
    first = hud_text(frame(friction=friction), 0.0, 0.0).splitlines()[0]
    assert first.endswith("12 contacts   " + shown)


@pytest.mark.parametrize("threads, blocks, shown", [
    (1, 1, "1 thread"), (2, 2, "2 threads"),
    (2, 1, f"1 thread (--threads 2 from {MIN_MARBLES} marbles)"),
])
def test_the_step_line_says_how_many_threads_step(threads, blocks, shown):
    step_line = [line for line in hud_text(frame(threads=threads, blocks=blocks), 10.0, 50.0)
                 .splitlines() if line.startswith("step ")][0]
    assert step_line.endswith("   " + shown)


@pytest.mark.parametrize("simulated, precision, shown", [
    ("0", "float64", "GPU (cuda)"), ("1", "float64", "GPU (cuda simulator)"),
    ("0", "float32", "GPU (cuda, float32)")])
def test_the_step_line_says_when_the_gpu_steps(monkeypatch, simulated, precision, shown):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", simulated)
    state = frame(device="cuda", threads=2, blocks=1, precision=precision)
    step_line = [line for line in hud_text(state, 10.0, 50.0).splitlines()
                 if line.startswith("step ")][0]
    assert step_line.endswith("   " + shown)


def test_a_reset_world_shows_no_nan_and_a_paused_one_makes_no_steps():
    """After R there is no step yet: its times are a dash, not 'nan'; paused, the rate of steps
    is 0 whatever the meter still remembers of the steps before."""
    text = hud_text(frame(timings={}, paused=True), 12.0, 0.3)
    assert "nan" not in text
    assert "step — ms" in text and "0.0 steps/s   0.00x real time" in text


def test_the_step_time_is_the_median_not_the_last_step():
    from lab.session.meters import StepTimes
    from lab.session.state import StepLog

    log = StepLog()
    times = StepTimes(keep=50)
    for k in range(60):
        total = 8.6e-3 if k == 59 else 0.9e-3
        log.add(0.02 * k, 1e-3, {"collide": 1e-4, "assemble": 1e-4, "solve": total - 3e-4,
                                 "integrate": 1e-4, "total": total})
        if k % 7 == 6 or k == 59:
            times.add(log.take())
    assert len(times) == 50
    text = hud_text(frame(timings={"total": 8.6e-3}), 12.0, 50.0, times.median(), len(times))
    assert "step 0.90 ms (median of 50)" in text and "8.60" not in text


def test_a_divergence_is_said_once_and_slow_replaces_the_pace_claimed():
    alarm_message = f"{ALARM}: paused; R resets, X switches to pgs at 20 iterations and resets"
    text = hud_text(frame(diverged=True, paused=True, alarm=ALARM, message=alarm_message),
                    10.0, 50.0)
    assert text.count(ALARM) == 1
    slow = dict(timings={"collide": 1e-3, "assemble": 1e-3, "solve": 28e-3, "integrate": 1e-3,
                         "total": 31e-3})
    text = hud_text(frame(**slow), 10.0, 32.0)
    assert "SLOWER THAN REAL TIME" in text and "running in real time" not in text
    assert "old news" not in hud_text(frame(message="old news"), 10.0, 50.0, show_message=False)


def test_a_narrow_hud_breaks_lines_between_fields_not_inside_them(qtbot):
    """At 360 px the thread count ('1 thread (--threads 2 from ... marbles)') and the step
    times move to a line of their own, whole."""
    hud = Hud()
    qtbot.addWidget(hud)
    hud.show(hud_text(frame(threads=2, blocks=1), 10.0, 50.0))
    hud.fit(360)
    lines = hud.text().splitlines()
    assert any(line.strip() == f"1 thread (--threads 2 from {MIN_MARBLES} marbles)"
               for line in lines)
    assert any(line.strip().startswith("step 0.32 ms:") for line in lines)
    assert hud.width() <= 360


def test_status_messages_go_but_a_held_one_stays(qtbot, monkeypatch):
    import app.hud as hud_module

    monkeypatch.setattr(hud_module, "MESSAGE_SECONDS", 0.2)
    line = hud_module.StatusLine()
    qtbot.addWidget(line)
    line.setText("screenshot saved: a.png")
    qtbot.waitUntil(lambda: line.text() == "", timeout=3000)
    line.hold("compiling Numba kernels: pgs")
    qtbot.wait(500)
    assert line.text() == "compiling Numba kernels: pgs"


def test_the_hud_says_which_step_of_the_history_is_shown():
    from lab.session.history import HistorySpan

    past = frame(paused=True, history=HistorySpan(0, 60, 40, 700, 0))
    assert ("HISTORY: step 40 shown, 20 back (steps 0–60 kept); , . scrub; S or Space go on "
            "from here, dropping the later steps") in hud_text(past, 10.0, 50.0).splitlines()
    shown = frame(paused=True, history=HistorySpan(0, 60, 40, 700, 0),
                  message="history: step 40 of 0–60 shown")
    assert "history: step 40 of 0–60 shown" not in hud_text(shown, 10.0, 50.0)  # said once
    # Other history messages are not the HISTORY line's: the end of the history is said.
    end = frame(paused=True, history=HistorySpan(0, 60, 0, 700, 0),
                message="history: step -1 is the oldest step kept")
    assert "history: step -1 is the oldest step kept" in hud_text(end, 10.0, 50.0)
    now = frame(history=HistorySpan(0, 60, 60, 700, 0))
    assert "HISTORY" not in hud_text(now, 10.0, 50.0)


def test_the_hud_quotes_one_step_cost_and_the_window_share_beside_it():
    """The step line and the slow warning quote the same median; compiling steps are said to
    be left out; the window's share is on the rates line."""
    median = {"collide": 10e-3, "assemble": 20e-3, "solve": 120e-3, "integrate": 12.6e-3,
              "total": 162.6e-3}
    text = hud_text(frame(timings={"total": 2.5782}), 10.0, 1 / 2.5782, median, 100, compiled=2)
    assert "step 162.60 ms (median of 100, 2 compiling left out)" in text
    assert "a step costs 162.6 ms, real time allows 20.0 ms; the window adds 2415.6 ms" in text
    assert "window adds 2415.6 ms/step" in text
    assert "2578" not in text


def test_a_compact_hud_keeps_to_a_few_short_lines():
    """A small view (app.overlays.ViewStack.compact) gets three short lines: a slow run and a
    divergence say their state in a few words, not their reasons, so the HUD does not cover
    the view it reads out (on a loaded machine the run is slow); a fresh message, the answer
    to a key, still follows."""
    slow = dict(timings={"collide": 1e-3, "assemble": 1e-3, "solve": 28e-3, "integrate": 1e-3,
                         "total": 31e-3})
    cases = [(frame(**slow), 32.0, "SLOWER: 0.64x of 1x"),
             (frame(diverged=True, paused=True, alarm=ALARM), 0.0, "DIVERGED: paused"),
             (frame(paused=True, **slow), 0.0, "PAUSED"),
             (frame(), 50.0, "running in real time")]
    for f, rate, last in cases:
        lines = hud_text(f, 10.0, rate, compact=True).splitlines()
        assert len(lines) == 3 and lines[-1] == last, lines
        assert max(map(len, lines)) < 60, lines
    full = hud_text(frame(**slow), 10.0, 32.0).splitlines()
    assert any(line.startswith("SLOWER THAN REAL TIME: 0.64x") for line in full)
    said = hud_text(frame(message="omega=1.9 is at its limit"), 10.0, 50.0, compact=True)
    assert said.splitlines()[-1] == "omega=1.9 is at its limit"
