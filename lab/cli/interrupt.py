"""Ctrl-C while `marbles-bench` starts: its imports (NumPy, SciPy, Numba, the kernels' cache)
take a second or more, and a KeyboardInterrupt raised inside them surfaces as a traceback from
whichever module was loading. Until the command runs nothing is written, so hold() makes Ctrl-C
end the process at once with the program's one line and exit code 130; release() hands Ctrl-C
back to Python (a KeyboardInterrupt, which the command turns into the same line once it has
cleaned up). Only the standard library is imported here, so hold() runs before the heavy imports."""
from __future__ import annotations

import os
import signal
import sys
import threading

INTERRUPTED = "marbles-bench: interrupted; no partial file written\n"
EXIT = 130  # 128 + SIGINT, as a shell reports a process that Ctrl-C ended


def _quit(signum, frame) -> None:
    os.write(2, INTERRUPTED.encode())
    os._exit(EXIT)


def hold() -> None:
    """Ctrl-C ends the process with one line and exit code 130 until release(). A SIGINT that
    the parent set to be ignored (a background job) stays ignored."""
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _quit)


# Numba, loading a cached kernel, can turn a KeyboardInterrupt into an error it swallows, or leave
# it pending to surface after the command has said its line: seconds after Ctrl-C the process
# ends as hold() would, whatever a library did with the KeyboardInterrupt.
GRACE = 5.0


def _interrupt(signum, frame) -> None:
    timer = threading.Timer(GRACE, _quit, args=(signum, None))
    timer.daemon = True
    timer.start()
    if sys.unraisablehook is not _unraisable:
        _unraisable.previous = sys.unraisablehook
        sys.unraisablehook = _unraisable
    raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    """After Ctrl-C, a KeyboardInterrupt raised inside a C callback (llvmlite's object cache,
    while Numba compiles) cannot propagate: Python would print it as a traceback and go on.
    It is dropped instead, since the timer ends the process with the program's one line; any
    other unraisable exception is reported as before."""
    if issubclass(unraisable.exc_type, KeyboardInterrupt):
        return
    _unraisable.previous(unraisable)


_unraisable.previous = sys.__unraisablehook__


def release() -> None:
    """Ctrl-C raises KeyboardInterrupt again, where hold() had taken it, so the command cleans
    up what it was writing; the process ends GRACE s later in any case (else nothing changes:
    a caller's own handler, or a call from another thread, is left alone)."""
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is _quit:
        signal.signal(signal.SIGINT, _interrupt)


def finish(code: int) -> int:
    """The program's exit code; after Ctrl-C (130, the line said, the command's clean-up done)
    the process ends at once, before a KeyboardInterrupt that a library left pending can turn
    the exit into a death by SIGINT."""
    if code == EXIT:
        sys.stderr.flush()
        os._exit(EXIT)
    return code
