"""Headless runs: step a simulation K times and summarise it as the JSON report of the README
(timings by phase, contacts, the last step's trace, penetration, speed, energy), with a physics
status that flags a run whose numbers cannot be trusted: non-finite marbles, an explosion (energy
gained from nowhere), or marbles that left the container."""
from __future__ import annotations

from typing import Callable

import numpy as np
from numba import njit

from solver.step import PHASES, Simulation, max_penetration
from solver.world import World, largest_resolved_dt, outside_container

# Physics statuses of a run, from best to worst; `run` exits with PHYSICS_FAILED unless it is
# "ok", and so does a scripted run of the window that a divergence stopped.
OK, ESCAPED, EXPLODED, NON_FINITE = "ok", "escaped", "exploded", "non-finite"
PHYSICS_FAILED = 3  # the exit code: the input was fine (2 refuses input), the physics was not
# An explosion is energy from nowhere. Gravity is the only force that does work on the marbles,
# and its work is the fall in potential energy, so kinetic plus potential energy can only fall
# from the start (contacts, friction and drag take energy out; the integrator loses a little each
# step), however fast a marble gets: one rolling down the unbounded incline passes 100 m/s after
# 42 s of correct physics, so a speed bound is not a judgement of the physics. What a run may
# gain is the energy that lifting every marble by its own radius would take (at least under
# standard gravity): far above the rounding of a long run and the work of removing overlaps
# (stabilise), far below what a diverging solver puts in (the bowl with jacobi, beta = 1: 200
# times it in one step).
STANDARD_GRAVITY = 9.80665  # m/s^2
# Runs of up to this many steps keep every timing and report exact medians; longer ones fold
# them into a histogram (HISTOGRAM_RATIO wide bins), so memory stays constant however long.
EXACT_STEPS = 1 << 16
CHUNK = 4096
HISTOGRAM_LOW = 1e-9  # s, the lower edge of the first bin (shorter times land in it)
HISTOGRAM_RATIO = 1.001  # bin edges in geometric progression: medians within 0.05 %
HISTOGRAM_BINS = int(np.ceil(np.log(1e4 / HISTOGRAM_LOW) / np.log(HISTOGRAM_RATIO)))


@njit(cache=True, nogil=True)
def max_speed_squared(v):
    """max_i |v_i|^2 over (n, 3) velocities, (m/s)^2: inf when one overflows or is infinite,
    NaN when one is NaN."""
    worst = 0.0
    for i in range(v.shape[0]):
        s = v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2]
        if np.isnan(s):
            return np.nan
        if s > worst:
            worst = s
    return worst


@njit(cache=True, nogil=True)
def mechanical_energy(x, v, omega, radius, inv_mass, gravity):
    """J: kinetic (translation and rotation of a solid sphere) plus potential (-m g.x) energy
    of the marbles of finite mass; NaN or inf when a marble is not finite."""
    total = 0.0
    for i in range(x.shape[0]):
        if inv_mass[i] <= 0.0:
            continue
        m = 1.0 / inv_mass[i]
        vv = v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2]
        ww = omega[i, 0] * omega[i, 0] + omega[i, 1] * omega[i, 1] + omega[i, 2] * omega[i, 2]
        gx = gravity[0] * x[i, 0] + gravity[1] * x[i, 1] + gravity[2] * x[i, 2]
        total += m * (0.5 * vv + 0.2 * radius[i] * radius[i] * ww - gx)
    return total


def world_energy(world: World) -> float:
    """J: the world's mechanical energy (mechanical_energy)."""
    return float(mechanical_energy(world.x, world.v, world.omega, world.radius, world.inv_mass,
                                   world.gravity))


class EnergyBudget:
    """What a run's marbles may gain over the energy they started with (see STANDARD_GRAVITY):
    `allowance` J, plus the `work` done on them from outside (a dragged marble)."""

    def __init__(self, world: World):
        self.start = world_energy(world)
        free = world.inv_mass > 0
        g = max(float(np.linalg.norm(world.gravity)), STANDARD_GRAVITY)
        self.allowance = float(np.sum(world.radius[free] / world.inv_mass[free]) * g)
        self.work = 0.0

    def gain(self, world: World) -> float:
        """J the marbles have now over the start and the work done on them: NaN when not
        finite."""
        return world_energy(world) - self.start - self.work

    def exceeded(self, gain: float) -> bool:
        """Whether `gain` is more than the allowance, or not finite."""
        return not gain <= self.allowance

    def rebase(self, world: World) -> None:
        """The energy the marbles have now is the start: after an explosion was reported,
        the next one is a further gain."""
        self.start = world_energy(world)
        self.work = 0.0


class TimingStats:
    """Median and mean of one number per step for each of `names`, in bounded memory: exact up
    to EXACT_STEPS samples, then from a log-spaced histogram (bins HISTOGRAM_RATIO wide)."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names
        self.count = 0
        self._sum = np.zeros(len(names))
        self._chunk = np.empty((CHUNK, len(names)))
        self._filled = 0
        self._chunks: list[np.ndarray] = []
        self._histogram: np.ndarray | None = None

    def add(self, values: dict) -> None:
        """One step's numbers, by name (seconds)."""
        row = self._chunk[self._filled]
        for k, name in enumerate(self.names):
            row[k] = values[name]
        self._filled += 1
        self.count += 1
        if self._filled == CHUNK:
            self._flush()

    def _flush(self) -> None:
        block = self._chunk[:self._filled]
        self._sum += block.sum(axis=0)
        if self._histogram is None and self.count <= EXACT_STEPS:
            self._chunks.append(block.copy())
        else:
            if self._histogram is None:
                self._histogram = np.zeros((len(self.names), HISTOGRAM_BINS), dtype=np.int64)
                for old in self._chunks:
                    self._fold(old)
                self._chunks = []
            self._fold(block)
        self._filled = 0

    def _fold(self, block: np.ndarray) -> None:
        for k in range(len(self.names)):
            self._histogram[k] += np.bincount(_bins(block[:, k]), minlength=HISTOGRAM_BINS)

    @property
    def exact(self) -> bool:
        return self._histogram is None

    def summary(self) -> dict:
        """{"median": {name: s}, "mean": {name: s}}; NaN for every value when no step was
        added."""
        if self._filled:
            self._flush()
        if self.count == 0:
            nan = {name: float("nan") for name in self.names}
            return {"median": nan, "mean": dict(nan)}
        mean = {name: float(self._sum[k] / self.count) for k, name in enumerate(self.names)}
        if self._histogram is None:
            samples = np.concatenate(self._chunks)
            median = {name: float(np.median(samples[:, k])) for k, name in enumerate(self.names)}
        else:
            median = {name: _histogram_median(self._histogram[k])
                      for k, name in enumerate(self.names)}
        return {"median": median, "mean": mean}


def _bins(seconds: np.ndarray) -> np.ndarray:
    index = np.floor(np.log(np.maximum(seconds, HISTOGRAM_LOW) / HISTOGRAM_LOW)
                     / np.log(HISTOGRAM_RATIO))
    return np.clip(index, 0, HISTOGRAM_BINS - 1).astype(np.int64)


def _histogram_median(counts: np.ndarray) -> float:
    """The geometric centre of the bin holding the middle sample."""
    k = int(np.searchsorted(np.cumsum(counts), (counts.sum() + 1) // 2))
    return float(HISTOGRAM_LOW * HISTOGRAM_RATIO ** (k + 0.5))


def dt_warning(world: World) -> str | None:
    """A one-line warning when the time step is too large for the marbles' size, else None."""
    limit = largest_resolved_dt(world)
    if world.dt <= limit:
        return None
    fall = float(np.linalg.norm(world.gravity)) * world.dt ** 2
    return (f"dt={world.dt:g} s is too large for marbles of radius {np.min(world.radius):g} m: "
            f"one step of free fall moves {fall:.3g} m, so contacts are missed and marbles "
            f"tunnel (use dt <= {limit:.3g} s)")


def physics_check(world: World, budget: EnergyBudget) -> dict:
    """status (OK, ESCAPED, EXPLODED, NON_FINITE), max_speed (m/s, NaN when not finite),
    non_finite and escaped (marble counts), energy_gain (J over `budget`'s start, negative when
    the marbles lost energy; NaN when not finite) and energy_allowance (J)."""
    finite = np.all(np.isfinite(world.x), axis=1) & np.all(np.isfinite(world.v), axis=1)
    non_finite = int(world.n - np.count_nonzero(finite))
    speed = float(np.sqrt(max_speed_squared(world.v))) if world.n else 0.0
    escaped = int(np.count_nonzero(outside_container(world) & finite))
    gain = budget.gain(world)
    if non_finite:
        status = NON_FINITE
    elif budget.exceeded(gain):
        status = EXPLODED
    elif escaped:
        status = ESCAPED
    else:
        status = OK
    trusted = status != NON_FINITE
    return {"status": status, "max_speed": speed if trusted else float("nan"),
            "non_finite": non_finite, "escaped": escaped,
            "energy_gain": gain if trusted else float("nan"),
            "energy_allowance": budget.allowance}


def run_steps(sim: Simulation, steps: int, trace_every_step: bool = False,
              progress: Callable[[int, int], None] | None = None) -> dict:
    """Step `sim` up to `steps` times; it stops early when the marbles stop being finite or
    gain more energy than an EnergyBudget allows (the report's physics.stopped_at says when). Timings come
    from the fast path (no trace) unless `trace_every_step`; the last step always records its
    trace, and is left out of the timing statistics when other steps exist, so the figures
    describe one kind of step only."""
    stats = TimingStats(PHASES)
    budget = EnergyBudget(sim.world)
    contacts_max = 0
    report = None
    stopped_at = None
    done = 0
    for k in range(steps):
        last = k == steps - 1
        report = sim.step(trace=True if (last or trace_every_step) else False)
        done = k + 1
        if not last or steps == 1 or trace_every_step:
            stats.add(report.timings)
        contacts_max = max(contacts_max, report.contacts)
        if progress is not None:
            progress(done, steps)
        if not last and budget.exceeded(budget.gain(sim.world)):  # NaN too
            stopped_at = done
            break
    world = sim.world
    physics = physics_check(world, budget)
    physics["stopped_at"] = stopped_at
    trusted = physics["status"] != NON_FINITE
    result = report.result
    timing = stats.summary()
    return {
        "timing_ms": {stat: {p: 1e3 * t for p, t in values.items()}
                      for stat, values in timing.items()},
        "timing_exact": stats.exact,
        "contacts": {"last": report.contacts, "max": contacts_max},
        "last_step": {
            "trace": [float(r) for r in result.trace] if result.trace is not None else [],
            "seconds": [float(s) for s in result.seconds] if result.seconds is not None else [],
            "iterations": result.iterations,
            "status": result.status,
            "residual": float(result.residual),
        },
        "steps_done": done,
        "physics": physics,
        "max_penetration": max_penetration(world) if trusted else float("nan"),
        "max_speed": physics["max_speed"],
        "energy": {"kinetic": world.kinetic_energy() if trusted else float("nan"),
                   "potential": world.potential_energy() if trusted else float("nan")},
        "time": world.time,
    }
