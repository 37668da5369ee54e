"""lab.cli.interrupt: hold() takes Ctrl-C from Python's default handler only, release() gives
it back only where hold() took it; what Ctrl-C does while held is tested on the program in
tests/lab/cli/test_launch.py."""
from __future__ import annotations

import signal

from lab.cli import interrupt


def test_hold_takes_the_default_handler_and_release_gives_it_back():
    before = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        interrupt.hold()
        assert signal.getsignal(signal.SIGINT) is interrupt._quit
        interrupt.release()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


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
