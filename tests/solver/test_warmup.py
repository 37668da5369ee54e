"""Warm-up compiles (or loads) every kernel a solver needs, with progress per solver."""
from __future__ import annotations

from solver.methods import registry
from solver.warmup import warmup


def test_warmup_reports_progress_for_every_solver_in_order():
    seen = []
    seconds = warmup(["pgs", "psor"], lambda done, total, name: seen.append((done, total, name)))
    assert seen == [(1, 2, "pgs"), (2, 2, "psor")] and seconds >= 0.0


def test_warmup_defaults_to_every_registered_solver():
    seen = []
    warmup(progress=lambda done, total, name: seen.append(name))
    assert seen == list(registry.METHODS)
