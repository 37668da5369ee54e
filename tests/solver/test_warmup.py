"""Warm-up compiles (or loads) every kernel a solver needs, with progress per solver."""
from __future__ import annotations

import pytest

import scenes
import solver.warmup as warmup_module
from solver.methods import registry
from solver.methods.gauss_seidel import frictional_sweeps, relaxed_sweeps
from solver.parallel import MIN_MARBLES, blocks_for
from solver.step import Simulation
from solver.warmup import _blocked_world, warmup, warmup_for


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


class _Recorder:
    """Stands in for Simulation: records the worlds warm-up would step (rows, blocks)."""

    seen: list = []

    def __init__(self, world, settings, warm_start=0.0, threads=1):
        from solver.backend import rows_of
        _Recorder.seen.append((settings.method, rows_of(world), blocks_for(world.n, threads)))

    def step(self, trace=False):
        pass


@pytest.mark.parametrize("overrides, rows", [({}, 1), ({"mu": 0.5}, 3),
                                              ({"mu": 0.5, "mu_roll": 0.01}, 6)])
def test_warmup_for_a_world_compiles_its_own_rows_and_blocks_only(monkeypatch, overrides, rows):
    monkeypatch.setattr(warmup_module, "Simulation", _Recorder)
    _Recorder.seen = []
    bowl = scenes.build("bowl", overrides)
    warmup_for(bowl, ["pgs", "pcg"], threads=4)  # 350 marbles: serial whatever the threads
    frictional = rows > 1  # pcg solves frictionless problems only: nothing to compile for it
    assert _Recorder.seen == [("pgs", rows, 1)] + ([] if frictional else [("pcg", 1, 1)])
    _Recorder.seen = []
    warmup_for(scenes.build("box", {"n": MIN_MARBLES, **overrides}), ["pgs"], threads=2)
    assert {s[1:] for s in _Recorder.seen} == {(rows, 2)}


def test_warmup_without_a_world_compiles_every_kind(monkeypatch):
    monkeypatch.setattr(warmup_module, "Simulation", _Recorder)
    _Recorder.seen = []
    warmup(["pgs"])
    assert sorted({s[1] for s in _Recorder.seen}) == [1, 3, 6]
