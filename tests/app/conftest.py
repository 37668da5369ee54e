"""Shared set-up for the GUI tests (tests/app).

SHARED FILE: created by the rendering helper (MarbleView, camera, picking); the app-shell helper
(main window, worker, hotkeys, plots) may add fixtures below. Keep the two rules at the top:

1. Qt runs on the real ``xcb`` platform under Xvfb (pytest-xvfb starts the server and sets
   DISPLAY). ``QT_QPA_PLATFORM=offscreen`` has no OpenGL, so the GL view could not be tested.
2. ``Qt.AA_ShareOpenGLContexts`` must be set before any QApplication exists (pytest-qt creates it
   lazily in the ``qapp`` fixture, after ``pytest_configure``); the real entry point sets it too.

Every test collected under tests/app fails on any Qt warning (or worse) emitted while it runs:
pytest-qt captures Qt messages per test and the ``qt_log_level_fail("WARNING")`` mark turns a
captured warning into a failure.
"""
from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


def pytest_configure(config):
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    from PySide6.QtCore import QCoreApplication, Qt

    QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    # PySide6 6.12.0 on CPython 3.11 drops a reference to True on every Signal.emit() and to
    # None on every QTimer.singleShot callback. pyproject.toml excludes that release; if it is
    # installed anyway, app.qt_compat detects it and pins those singletons before any test emits
    # (see its docstring). Added by the app-shell helper.
    import app.qt_compat  # noqa: F401


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))


@pytest.fixture(scope="package", autouse=True)
def _garbage_collected_in_gui_thread(qapp):
    """As in the program (app/main.py): cyclic garbage is collected only in the GUI thread, never
    in a simulation thread, where freeing Qt objects deadlocked the suite (app.qt_compat)."""
    from app.qt_compat import collect_garbage_in_gui_thread

    collector = collect_garbage_in_gui_thread()
    yield
    collector.timer.stop()
    gc.enable()
    gc.collect()


@pytest.fixture(scope="package", autouse=True)
def _kernels_compiled():
    """The window's first frames wait on the kernels of its default solver: compile (or load) them
    once here, so a cold Numba cache on a slow machine is not paid inside a test's wait. The
    tests' piles are below MIN_MARBLES, so they step serially."""
    from solver.warmup import warmup

    warmup(["pgs"])


# A bound for waits that only guard against a hang (a window's first frame, a solver switch that
# compiles): generous, because a busy machine must not fail a test.
HANG_MS = 300_000


@pytest.fixture(autouse=True)
def _collect_after_each_test():
    """Free each test's closed windows here, in the GUI thread, before the next test starts
    simulation threads of its own."""
    yield
    gc.collect()


def window_options(**kw):
    """app.window.Options from keyword arguments, the run spec's among them (scene, solver,
    iterations, speed, solver_params as --set values)."""
    from app.window import Options
    from lab.session.spec import RunSpec

    spec = {k: kw.pop(k) for k in ("scene", "solver", "iterations", "speed") if k in kw}
    kw["spec"] = RunSpec.create(**spec, assignments=kw.pop("solver_params", {}))
    return Options(**kw)
