"""Work-around for a reference-count bug of PySide6 6.12 on CPython 3.11.

`SignalInstance.emit()` (and `disconnect()`) return `True` without taking a new reference, and
every `QTimer.singleShot(ms, callable)` that fires drops one reference to `None`. On CPython >=
3.12 these singletons are immortal and nothing happens; on 3.11 each call removes a reference,
and after a few hundred (pyqtgraph emits many) the interpreter aborts with "Fatal Python error:
bool_dealloc: deallocating True or False" (or none_dealloc), often at exit.

`ensure_bool_refcounts()` detects the bug by emitting a probe signal (the singleShot leak needs a
running event loop to show, so it is assumed to come with it) and, only if references are lost,
gives `True`, `False` and `None` a reserve of 2**40 references, so they behave like the immortal
singletons of newer Pythons. It runs once, when this module is imported; every module of `app`
that uses Qt signals imports it first. Remove it once the project requires a fixed PySide6.
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
