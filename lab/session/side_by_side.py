"""Solvers side by side: 2 to MAX_COPIES copies of one world from the same start (positions,
velocities, turns and the last step's impulses, so warm starts match too), each stepped by its
own solver or solver settings, all with the one iteration count, warm start, stabilisation and
threads. Qt-free.

`SideBySide` steps the copies in lockstep and keeps, per copy, the residual of every step since
it was last taken and the per-iteration trace of the last traced step. Copies that step
serially (one block each, below locality's renumbering, on the CPU) step in threads of their
own when there are two cores or more: the Numba kernels release the GIL, and the serial twins
of the drivers never enter Numba's thread pool, so two copies cannot meet there. Every copy
computes what a run of its solver alone from the same start computes, bit for bit: the copies
share no array.

`parse_copies` reads the command line's and the scripts' text, "pgs,jacobi" or
"psor:omega=1.2,psor:omega=1.8".
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from solver import locality
from solver.methods import registry
from solver.params import ParamError
from solver.step import Simulation, StepOptions, StepReport

from ..report.palette import PALETTE

MIN_COPIES = 2
MAX_COPIES = 4
# One colour per copy, marbles and curves alike: the palette's most distinct four (sky blue,
# orange, bluish green, reddish purple), none of them the plots' usual trace yellow.
COPY_COLOURS = (PALETTE[1], PALETTE[0], PALETTE[2], PALETTE[6])


@dataclass(frozen=True)
class CopyChoice:
    """A copy's solver and the parameters given for it (text or values, validated when the
    copy's settings are made)."""

    method: str
    params: tuple[tuple[str, object], ...] = ()

    def settings(self, iterations: int):
        """The validated SolveSettings with `iterations`; ParamError (one line) when bad."""
        return registry.settings(self.method, iterations, False, dict(self.params))


def parse_copies(text: str, iterations: int = 20) -> tuple[CopyChoice, ...]:
    """"pgs,jacobi" or "psor:omega=1.2:friction=box,pgs": MIN_COPIES to MAX_COPIES solvers,
    each with optional name=value parameters after colons. ParamError (one line) naming what
    is wrong."""
    parts = [p.strip() for p in str(text).split(",")]
    if any(not p for p in parts):
        raise ParamError(f"--side-by-side {text!r}: an empty solver name (write e.g. pgs,jacobi)")
    choices = []
    for part in parts:
        name, *assignments = part.split(":")
        params = []
        for item in assignments:
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise ParamError(f"--side-by-side: {item!r} is not name=value (write e.g. "
                                 "psor:omega=1.2)")
            params.append((key.strip(), value.strip()))
        choice = CopyChoice(name.strip(), tuple(params))
        choice.settings(iterations)  # refuses an unknown solver or parameter now
        choices.append(choice)
    check_count(len(choices))
    return tuple(choices)


def check_count(count: int) -> None:
    if not MIN_COPIES <= count <= MAX_COPIES:
        raise ParamError(f"side by side takes {MIN_COPIES} to {MAX_COPIES} solvers, not {count}")


def label(settings) -> str:
    """A copy's name on the legend and plots: the solver, then the parameters that differ
    from its defaults ("psor omega=1.2")."""
    defaults = registry.settings(settings.method, settings.iterations, False, {}).params
    changed = [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
               for k, v in settings.params.items() if defaults.get(k) != v]
    return " ".join([settings.method, *changed])


def cores() -> int:
    """The cores this process may run on (the whole process's set, not a pinned thread's)."""
    if hasattr(os, "sched_getaffinity"):
        try:
            return len(os.sched_getaffinity(os.getpid()))
        except OSError:
            pass
    return os.cpu_count() or 1


class SideBySide:
    """Copies `sims` (Simulations of worlds with the same start) stepped together; `sims[0]`
    may be a Session's own. `parallel`: step them in threads (None: when every copy steps
    serially on the CPU and the process has two cores or more)."""

    def __init__(self, sims: list[Simulation], parallel: bool | None = None):
        check_count(len(sims))
        self.sims = list(sims)
        self.traces: list[np.ndarray | None] = [None] * len(sims)  # (k + 1,) m/s each
        self.trace_step = -1
        self._residuals: list[list[float]] = [[] for _ in sims]
        self.parallel = self._may_run_parallel() if parallel is None else bool(parallel)
        self._pool: ThreadPoolExecutor | None = None

    @classmethod
    def start(cls, sim: Simulation, options: list[StepOptions],
              parallel: bool | None = None) -> "SideBySide":
        """`sim` as copy 0 (its options replaced by options[0]) and one copy of its world and
        last impulses per further options: they start where `sim` is now."""
        sim.options = options[0]
        keys, lam = sim.impulses()
        sims = [sim]
        for opts in options[1:]:
            copy = Simulation(sim.world.copy(), opts)
            if keys.size:
                copy.set_impulses(keys, lam)
            copy.steps = sim.steps
            sims.append(copy)
        return cls(sims, parallel)

    def _may_run_parallel(self) -> bool:
        # A large pile's serial step still renumbers its marbles with parallel kernels on one
        # thread (solver/locality.py): those enter Numba's thread pool, which two threads
        # must not enter at once.
        return (cores() >= 2
                and all(s.blocks == 1 and not locality.wanted(s.world.n)
                        and s.backend.name == "cpu" for s in self.sims))

    @property
    def threads(self) -> int:
        """The threads a step of the copies keeps busy."""
        if self.parallel:
            return min(len(self.sims), cores())
        return max(s.blocks for s in self.sims)

    @property
    def worlds(self):
        return [s.world for s in self.sims]

    def step(self, trace: bool = False) -> list[StepReport]:
        """One step of every copy (copy 0 in the calling thread); `trace`: record each
        copy's residual per iteration. Returns the copies' reports in order."""
        if not self.parallel:
            reports = [s.step(trace) for s in self.sims]
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(len(self.sims) - 1, "side-by-side")
            futures = [self._pool.submit(s.step, trace) for s in self.sims[1:]]
            first = self.sims[0].step(trace)
            reports = [first] + [f.result() for f in futures]
        for k, report in enumerate(reports):
            self._residuals[k].append(float(report.result.residual))
            if trace and report.result.trace is not None:
                self.traces[k] = report.result.trace.copy()
        if trace:
            self.trace_step = self.sims[0].steps
        return reports

    def take_residuals(self) -> list[np.ndarray]:
        """Per copy, the final residual (m/s) of every step since the last take, (k,) each."""
        out = [np.array(r, dtype=np.float64) for r in self._residuals]
        for r in self._residuals:
            r.clear()
        return out

    def close(self) -> None:
        """End the stepping threads (the copies stay as they are)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
