"""The shared render thread runs at a lower priority than the GUI thread (Linux nice values),
and hands that priority on to the driver's threads; none of this depends on the driver."""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from app.view import MarbleView, render_thread, renderer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="per-thread nice: Linux")


def nice_of(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


@pytest.fixture
def rendered_view(qtbot, monkeypatch):
    """(A shown view that has rendered once, the calls its renderer made to share_priority as
    (prefix, native thread id))."""
    shared = []
    monkeypatch.setattr(renderer, "share_priority",
                        lambda prefix: shared.append((prefix, threading.get_native_id())))
    view = MarbleView()
    qtbot.addWidget(view)
    view.resize(160, 120)
    view.show()
    qtbot.waitExposed(view)
    view.grab_frame()
    assert view.failure is None, view.failure
    return view, shared


def test_the_render_thread_yields_to_the_gui_and_the_simulation(rendered_view):
    """The render thread runs at a nice value RENDER_NICE above the GUI thread's, which the
    simulation thread inherits."""
    view, _ = rendered_view
    tid = view._link.renderer.thread_id
    assert tid != threading.get_native_id()
    gui = nice_of(threading.get_native_id())
    assert nice_of(tid) == min(19, gui + render_thread.RENDER_NICE) > gui


def test_the_renderer_hands_its_priority_to_the_rasteriser_threads(rendered_view):
    """Once its context exists, the renderer asks for Mesa's software rasteriser threads
    (llvmpipe-N; a hardware driver has none, and then nothing changes) to get its nice value,
    from the render thread."""
    view, shared = rendered_view
    assert shared == [("llvmpipe-", view._link.renderer.thread_id)]


class Parked:
    """A thread that gives itself the OS-level name `name` (if any), then waits for stop()."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self.tid = 0
        self._ready, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    def _run(self) -> None:
        self.tid = threading.get_native_id()
        if self.name is not None:
            Path(f"/proc/self/task/{self.tid}/comm").write_text(self.name)
        self._ready.set()
        self._stop.wait(60)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def test_share_priority_raises_named_threads_to_the_callers_nice_value():
    """share_priority(prefix), called from a thread whose nice value was raised, gives that
    value to the threads whose name starts with `prefix`; a thread already nicer and a thread
    of another name keep theirs."""
    base = nice_of(threading.get_native_id())
    if base > 19 - 8:
        pytest.skip(f"nice value {base} leaves no room to raise it")
    prefix = f"nt{os.getpid() % 1_000_000}-"  # a thread name holds 15 bytes
    named, nicer, other = Parked(prefix + "a"), Parked(prefix + "b"), Parked()
    try:
        assert Path(f"/proc/self/task/{named.tid}/comm").read_text().strip() == prefix + "a"
        os.setpriority(os.PRIO_PROCESS, nicer.tid, nice_of(nicer.tid) + 8)
        before = {t: nice_of(t.tid) for t in (named, nicer, other)}
        caller = {}

        def call() -> None:
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, nice_of(tid) + 5)
            caller["nice"] = nice_of(tid)
            render_thread.share_priority(prefix)

        thread = threading.Thread(target=call)
        thread.start()
        thread.join(10)
        mine = caller["nice"]
        assert before[named] < mine < before[nicer]
        assert nice_of(named.tid) == mine
        assert nice_of(nicer.tid) == before[nicer]
        assert nice_of(other.tid) == before[other]
        assert nice_of(threading.get_native_id()) == base
    finally:
        for t in (named, nicer, other):
            t.stop()
