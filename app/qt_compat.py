"""Safety net for a reference-count bug of PySide6 6.12.0 on CPython 3.11.

`SignalInstance.emit()` (and `disconnect()`) return `True` without taking a new reference, and
every `QTimer.singleShot(ms, callable)` that fires drops one reference to `None`. On CPython >=
3.12 these singletons are immortal and nothing happens; on 3.11 each call removes a reference,
and after a few hundred (pyqtgraph emits many) the interpreter aborts with "Fatal Python error:
bool_dealloc: deallocating True or False" (or none_dealloc), often at exit.

pyproject.toml excludes the broken release (`PySide6-Essentials>=6.6,!=6.12.0`), so an install
made from it never has the bug: on every release we probed -- 6.6.3.1, 6.8.3, 6.9.3, 6.10.3,
6.11.0, 6.11.3 -- 1000 emits and 1000 singleShot callbacks lost no reference, on 6.12.0 they lost
one each (README, "Known issues"). No upstream report (PYSIDE-xxxx) for it was found, so no fixed
release is known yet; the pin excludes only 6.12.0, so a fixed 6.12.x is allowed when it comes.

This module stays as a guarded safety net for environments that do not honour the pin (a
PySide6 installed with `--no-deps`, by a distribution or conda, or a later release with the same
regression). `ensure_bool_refcounts()` detects the bug by emitting a probe signal (the
singleShot leak needs a running event loop to show, so it is assumed to come with it) and, only
if references are lost, gives `True`, `False` and `None` a reserve of 2**40 references, so they
behave like the immortal singletons of newer Pythons. On a good PySide6 it costs 32 emits at
import and changes nothing (`APPLIED` is False). It runs once, when this module is imported;
every module of `app` that uses Qt signals imports it first. Delete it once the project's lower
bound is past every broken release.
"""
from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal

RESERVE = 1 << 40
PROBES = 32


class _Probe(QObject):
    ping = Signal()


def _lost_references() -> int:
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(PROBES):
        probe.ping.emit()
    return before - sys.getrefcount(True)


def ensure_bool_refcounts() -> bool:
    """Apply the reserve if this PySide6 loses references on emit; True if it was applied."""
    if sys.version_info >= (3, 12) or getattr(sys, "_marbles_bool_reserve", False):
        return False
    if _lost_references() <= 0:
        return False
    for singleton in (True, False, None):
        # ob_refcnt is the first field of every CPython object (id() is its address).
        ctypes.c_ssize_t.from_address(id(singleton)).value += RESERVE
    sys._marbles_bool_reserve = True
    return True


APPLIED = ensure_bool_refcounts()


def collect_garbage_in_gui_thread(interval: float = 0.5):
    """Run Python's cyclic garbage collector only in the GUI thread, on a timer there.

    CPython collects in whichever thread happens to allocate. If that is the simulation thread
    and the garbage holds Qt objects (a closed plot window, a pyqtgraph scene), ~QObject runs
    there: it takes Qt's connection lock and then waits for the GIL, while the GUI thread may
    hold the GIL and wait for that lock in a connect() — a deadlock (seen in the test suite).
    pyqtgraph's GarbageCollector disables automatic collection and collects from a QTimer of
    the thread that creates it. Call this from the GUI thread once the QApplication exists, and
    keep the returned object alive as long as the application runs."""
    from pyqtgraph.util.garbage_collector import GarbageCollector

    return GarbageCollector(interval=interval)
