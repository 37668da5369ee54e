"""Keys and the mouse answer while a step is in flight: with a step held in the simulation
thread (a test hook: the Session's step waits for a release), Space shows PAUSED, an orbit shows
the last image from the new camera and then its rendering, all before the step ends; the step
then ends quietly and the Session is paused. And Pending on its own: a toggle becomes the
state wished for, shown until a frame agrees."""
from __future__ import annotations

import threading
from types import SimpleNamespace

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from app.pending import ACK_AFTER, Pending
from lab.session import commands as cmd
from tests.app.conftest import HANG_MS
from tests.app.test_window import make_window  # noqa: F401 (fixture)


def frame(paused, step=0.001, done=0):
    return SimpleNamespace(state=SimpleNamespace(paused=paused), timings={"total": step},
                           commands_done=done)


def test_a_toggled_pause_is_sent_as_the_state_wished_and_shown_until_a_frame_agrees():
    sent, refreshed = [], []
    latest = [None]
    pending = Pending(sent.append, lambda: latest[0], lambda: refreshed.append(1))
    pending.send(cmd.Pause())  # nothing shown yet: forwarded as it is
    assert sent == [cmd.Pause()] and pending.wanted is None
    latest[0] = frame(False)
    pending.send(cmd.Pause())
    assert sent[-1] == cmd.Pause(True) and pending.paused and refreshed == [1]
    pending.send(cmd.Pause())  # a second Space before any frame: go on again
    assert sent[-1] == cmd.Pause(False) and not pending.paused
    pending.send(cmd.Pause())
    pending.confirm(frame(False))  # a frame from before the command: the wish stays
    assert pending.wanted is True
    pending.confirm(frame(True))
    assert pending.wanted is None
    pending.send(cmd.Reset())
    assert sent[-1] == cmd.Reset()


def test_a_key_waiting_for_a_long_step_is_acknowledged_at_once_until_it_has_run():
    """C during a 550 ms step: the HUD says at once that C was received and when it is carried
    out, until a frame made after the command ran; a fast step acknowledges only a command
    still waiting after ACK_AFTER; paused, the command runs at once and nothing is said."""
    sent, refreshed = [], []
    latest = [frame(False, step=0.55, done=3)]
    pending = Pending(sent.append, lambda: latest[0], lambda: refreshed.append(1),
                      lambda: len(sent))
    pending.send(cmd.SetColourMode())
    said = pending.acknowledgement()
    assert said == ("C received: colour mode: by marble / speed / contact impulse / slip speed;"
                    " carried out when the step in flight ends (a step takes 550 ms)")
    assert refreshed == [1] and pending.waiting.ticket == 1
    pending.confirm(frame(False, step=0.55, done=0))  # the step in flight: not yet
    assert pending.acknowledgement() == said
    pending.confirm(frame(False, step=0.55, done=1))
    assert pending.waiting is None and pending.acknowledgement() is None
    # A fast step: nothing said unless the command still waits after ACK_AFTER.
    latest[0] = frame(False, step=0.002)
    pending.send(cmd.CycleSolver(1))
    assert pending.acknowledgement() is None and refreshed == [1]
    pending.waiting.since -= ACK_AFTER
    assert pending.acknowledgement().startswith("M received: next solver")
    pending.waiting = None
    latest[0] = frame(True, step=0.55)
    pending.send(cmd.SetColourMode())
    assert pending.waiting is None


def drag(view, dx):
    """A left-button drag of `dx` px across the view's centre (real Qt mouse events)."""
    centre = QPointF(view.width() / 2, view.height() / 2)
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    for kind, at, button, buttons in (
            (QEvent.Type.MouseButtonPress, centre, left, left),
            (QEvent.Type.MouseMove, centre + QPointF(dx, 0), Qt.MouseButton.NoButton, left),
            (QEvent.Type.MouseButtonRelease, centre + QPointF(dx, 0), left,
             Qt.MouseButton.NoButton)):
        QApplication.sendEvent(view, QMouseEvent(kind, at, view.mapToGlobal(at), button,
                                                 buttons, none))


def test_pause_and_orbit_show_while_a_step_is_in_flight(qtbot, make_window):
    window = make_window(scene="column", speed=0)
    session = window.sim.worker.session
    entered, release = threading.Event(), threading.Event()
    step = session.step

    held_at = []

    def held_step(*args, **kwargs):  # the test hook: a step that lasts until released
        if not entered.is_set():
            held_at.append(session.sim.steps)  # the Session's count, ahead of the frames'
        entered.set()
        release.wait(60)
        return step(*args, **kwargs)

    session.step = held_step
    try:
        qtbot.waitUntil(entered.is_set, timeout=HANG_MS)
        window.view.setFocus()
        qtbot.keyClick(window.view, Qt.Key.Key_Space)
        assert "PAUSED" in window.hud.text()  # at once, from the key's own handler
        view = window.view
        moves, asked = view.camera_moves, view._seq
        drag(view, 40)
        assert view.camera_moves > moves
        qtbot.waitUntil(lambda: view.camera_shown == view.camera_moves, timeout=HANG_MS)
        qtbot.waitUntil(lambda: view._shown > asked, timeout=HANG_MS)  # rendered anew
        # the step still runs: no frame from after it (a frame from before it may still arrive)
        assert not release.is_set() and window.latest.steps <= held_at[0]
        assert "PAUSED" in window.hud.text()
    finally:
        release.set()
    # The step in flight ends quietly: the Session is paused after it, and stays so.
    qtbot.waitUntil(lambda: window.latest.state.paused and window.pending.wanted is None,
                    timeout=HANG_MS)
    paused_at = window.latest.steps
    assert paused_at <= held_at[0] + 1
    qtbot.wait(200)
    assert window.latest.steps == paused_at and "PAUSED" in window.hud.text()


def test_a_key_says_it_was_received_while_a_step_is_in_flight(qtbot, make_window):
    """C while a step is held: the HUD acknowledges it (within ACK_AFTER and the HUD's next
    refresh) while the colours are unchanged; once the step ends the new colour mode arrives
    and the acknowledgement goes."""
    window = make_window(scene="column", speed=0)
    session = window.sim.worker.session
    entered, release = threading.Event(), threading.Event()
    step = session.step

    def held_step(*args, **kwargs):
        entered.set()
        release.wait(60)
        return step(*args, **kwargs)

    qtbot.waitUntil(lambda: window.latest is not None, timeout=HANG_MS)
    before = window.latest.state.colour_mode
    session.step = held_step
    try:
        qtbot.waitUntil(entered.is_set, timeout=HANG_MS)
        window.view.setFocus()
        qtbot.keyClick(window.view, Qt.Key.Key_C)
        qtbot.waitUntil(lambda: "C received" in window.hud.text(), timeout=HANG_MS)
        assert window.latest.state.colour_mode == before
    finally:
        session.step = step
        release.set()
    qtbot.waitUntil(lambda: window.latest.state.colour_mode != before
                    and "C received" not in window.hud.text(), timeout=HANG_MS)
