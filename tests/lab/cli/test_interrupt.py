"""lab.cli.interrupt: hold() takes Ctrl-C from Python's default handler only, release() gives
it back only where hold() took it; what Ctrl-C does while held is tested on the program in
tests/lab/cli/test_launch.py."""
from __future__ import annotations

import ctypes
import signal
import sys

import pytest

from lab.cli import interrupt


def test_hold_takes_the_default_handler_and_release_gives_a_keyboard_interrupt_back(
        monkeypatch):
    before = signal.getsignal(signal.SIGINT)
    armed = []
    monkeypatch.setattr(interrupt.threading.Timer, "start", lambda timer: armed.append(timer))
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        interrupt.hold()
        assert signal.getsignal(signal.SIGINT) is interrupt._quit
        interrupt.release()
        handler = signal.getsignal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):  # the command cleans up ...
            handler(signal.SIGINT, None)
        # ... and, were a library to swallow it, the process ends GRACE s later all the same
        assert len(armed) == 1 and armed[0].interval == interrupt.GRACE and armed[0].daemon
    finally:
        signal.signal(signal.SIGINT, before)


def test_the_programs_exit_is_hard_only_after_ctrl_c(monkeypatch):
    ended = []
    monkeypatch.setattr(interrupt.os, "_exit", ended.append)
    assert interrupt.finish(0) == 0 and interrupt.finish(2) == 2 and ended == []
    interrupt.finish(130)
    assert ended == [130]


def test_an_ignored_or_own_handler_is_left_alone():
    before = signal.getsignal(signal.SIGINT)

    def own(signum, frame):
        pass

    try:
        for handler in (signal.SIG_IGN, own):
            signal.signal(signal.SIGINT, handler)
            interrupt.hold()
            assert signal.getsignal(signal.SIGINT) is handler
            interrupt.release()
            assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, before)


def test_after_ctrl_c_an_interrupt_a_c_callback_swallowed_prints_nothing(monkeypatch):
    """Ctrl-C landing in a C callback (llvmlite's object cache while Numba compiles) cannot
    propagate; it is not printed as a traceback beside the program's one line, while any other
    exception a callback swallows still reaches the hook."""
    before = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(interrupt.threading.Timer, "start", lambda timer: None)
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_type))
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        interrupt.hold()
        interrupt.release()
        with pytest.raises(KeyboardInterrupt):
            signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
    finally:
        signal.signal(signal.SIGINT, before)
    callback = ctypes.CFUNCTYPE(ctypes.c_int)

    def interrupted():
        raise KeyboardInterrupt

    def failed():
        raise ValueError("a library's own error")

    callback(interrupted)()
    callback(failed)()
    assert reported == [ValueError]
