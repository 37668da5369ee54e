"""Warm-up compiles (or loads) every kernel a solver needs, with progress per solver."""
from __future__ import annotations

from solver.methods import registry
from solver.methods.gauss_seidel import frictional_sweeps, relaxed_sweeps
from solver.parallel import blocks_for
from solver.step import Simulation
from solver.warmup import _blocked_world, warmup


def test_warmup_reports_progress_for_every_solver_in_order():
    seen = []
    seconds = warmup(["pgs", "psor"], lambda done, total, name: seen.append((done, total, name)))
    assert seen == [(1, 2, "pgs"), (2, 2, "psor")] and seconds >= 0.0


def test_warmup_defaults_to_every_registered_solver():
    seen = []
    warmup(progress=lambda done, total, name: seen.append(name))
    assert seen == list(registry.METHODS)


def test_with_threads_the_parallel_kernels_are_compiled_too():
    assert blocks_for(_blocked_world().n, 2) == 2
    warmup(["pgs"], threads=2)
    assert relaxed_sweeps.signatures and frictional_sweeps.signatures
    sim = Simulation(_blocked_world(), registry.settings("pgs", 2), threads=2)
    sim.step()
    assert sim.problem.block_count == 2 and sim.problem.m > 0
