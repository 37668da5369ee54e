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


def test_emit_keeps_true_alive():
    # On a good PySide6 the safety net stays off and emitting loses no reference; on a broken one
    # it has given True its reserve, so the same loop cannot bring the count near zero.
    emitter = _Emitter()
    before = sys.getrefcount(True)
    for _ in range(1000):
        emitter.ping.emit()
    lost = before - sys.getrefcount(True)
    if qt_compat.APPLIED:
        assert sys.getrefcount(True) > qt_compat.RESERVE // 2
    else:
        assert lost == 0


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="True/None are immortal on 3.12+")
def test_safety_net_applies_only_when_references_are_lost():
    if qt_compat.APPLIED:
        assert sys._marbles_bool_reserve
    else:
        assert qt_compat._lost_references() == 0
        assert not getattr(sys, "_marbles_bool_reserve", False)


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
        for _ in range(gc.get_threshold()[0] + 10):  # enough cycles to cross generation 0
            a, b = Node(), Node()
            a.other, b.other = b, a
            witness.append(weakref.ref(a))
        del a, b
        qtbot.waitUntil(lambda: all(ref() is None for ref in witness), timeout=5000)
    finally:
        collector.timer.stop()
