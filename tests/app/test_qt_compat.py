"""app.qt_compat (safety net for PySide6 6.12.0's lost references) and the pin that excludes it."""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from PySide6.QtCore import QObject, Signal

from app import qt_compat

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


class _Emitter(QObject):
    ping = Signal()


def _pyside_requirement() -> Requirement:
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    (dep,) = [d for d in deps if re.match(r"(?i)pyside6-essentials\b", d)]
    return Requirement(dep)


def test_pin_excludes_only_the_broken_release():
    spec = _pyside_requirement().specifier
    assert "6.12.0" not in spec
    for good in ("6.8.3", "6.9.3", "6.10.3", "6.11.3", "6.12.1"):  # probed clean, or a fix to come
        assert good in spec, good


def test_the_installed_pyside_loses_no_reference_on_emit():
    """The pin holds: whatever PySide6 is installed keeps True's count through 1000 emits (the
    probe itself must report no loss either)."""
    emitter = _Emitter()
    before = sys.getrefcount(True)
    for _ in range(1000):
        emitter.ping.emit()
    assert before - sys.getrefcount(True) <= 0
    assert qt_compat._lost_references() <= 0


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="True/None are immortal on 3.12+")
def test_safety_net_applies_exactly_when_references_are_lost(monkeypatch):
    monkeypatch.delattr(sys, "_marbles_bool_reserve", raising=False)
    assert not qt_compat.ensure_bool_refcounts(lost=lambda: 0)
    assert not getattr(sys, "_marbles_bool_reserve", False)
    before = sys.getrefcount(None)
    # A leaking release: the reserve goes on (harmless on a good one: the counts only grow).
    assert qt_compat.ensure_bool_refcounts(lost=lambda: 3)
    assert sys.getrefcount(None) - before > qt_compat.RESERVE - 1000  # others come and go
    assert sys._marbles_bool_reserve
    assert not qt_compat.ensure_bool_refcounts(lost=lambda: 3)  # once only


def test_garbage_is_collected_only_by_the_gui_thread_timer(qapp, qtbot):
    """Automatic collection is off (so no simulation thread ever frees Qt objects) and the
    GUI-thread timer still frees cyclic garbage."""
    import gc
    import weakref

    from app.qt_compat import collect_garbage_in_gui_thread

    collector = collect_garbage_in_gui_thread(interval=0.05)
    try:
        assert not gc.isenabled()

        class Node:
            pass

        witness = []
        # Enough cycles to cross generation 0's threshold. The count is allocations minus
        # deallocations, and Qt objects of earlier tests freed meanwhile (deleteLater) take
        # their share off it: a margin of 10 left it under the threshold for good.
        for _ in range(5 * gc.get_threshold()[0]):
            a, b = Node(), Node()
            a.other, b.other = b, a
            witness.append(weakref.ref(a))
        del a, b
        qtbot.waitUntil(lambda: all(ref() is None for ref in witness), timeout=5000)
    finally:
        collector.timer.stop()
