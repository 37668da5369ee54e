"""Safety net for a reference-count bug of PySide6 6.12.0 on CPython 3.11.

There `SignalInstance.emit()` returns `True` without taking a new reference, and every
`QTimer.singleShot(ms, callable)` that fires drops a reference to `None`; after a few hundred
calls the interpreter aborts ("Fatal Python error: bool_dealloc"). pyproject.toml excludes that
release; this module covers installs that do not honour the pin (`--no-deps`, a distribution's
PySide6). `ensure_bool_refcounts()` emits a probe signal and, only if references are lost, gives
`True`, `False` and `None` a reserve of 2**40 references, so they behave like the immortal
singletons of Python 3.12. It runs once, at import; every module of `app` that uses signals
imports it first. Delete it once the lower bound of PySide6 is past every broken release.
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


def ensure_bool_refcounts(lost=_lost_references) -> bool:
    """Apply the reserve if this PySide6 loses references on emit (`lost()`: references lost
    by PROBES emits); True if it was applied now."""
    if sys.version_info >= (3, 12) or getattr(sys, "_marbles_bool_reserve", False):
        return False
    if lost() <= 0:
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
