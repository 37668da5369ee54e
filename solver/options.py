"""What a step reads besides the world: one immutable value, validated when it is made.

A front end changes a setting by making a new `StepOptions` (`options.but(warm_start=0.5)`) and
handing it to the simulation; nothing is copied into the simulation field by field, so the
specification of a run and the simulation that runs it cannot disagree.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .parallel import THREADS
from .params import Param, ParamError

ITERATIONS = Param("iterations", 20, int, "solver iterations per step", lo=1, hi=10_000_000)


@dataclass(frozen=True)
class SolveSettings:
    """A validated solver choice (built by `registry.settings`): method name, iteration budget
    (ITERATIONS, validated here), whether to record the residual after every iteration, and
    every parameter of the method and of COMMON_PARAMS by name (`settings["omega"]`)."""

    method: str
    iterations: int
    trace: bool
    params: dict = field(default_factory=dict)
    # Called with λ after every traced iteration, outside the timed region (a front end that
    # reports more than the residual, e.g. FCLIB's error); not a parameter of the method.
    observer: Callable[[np.ndarray], None] | None = field(default=None, compare=False)
    # Solve seconds (the timed region only: sweeps, not residuals or the observer) after which a
    # traced solve ends as max_iterations, its budget spent; None: the iterations alone bound
    # it. A performance profile gives every solver the same time rather than the same count.
    time_limit: float | None = field(default=None, compare=False)
    # Where the method runs (its Method's `devices`): StepOptions refuses another device.
    devices: tuple = field(default=("cpu",), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "iterations", int(ITERATIONS.parse(self.iterations)))

    def __getitem__(self, name: str):
        return self.params[name]

    def with_trace(self, trace: bool) -> "SolveSettings":
        return self if bool(trace) == self.trace else dataclasses.replace(self, trace=bool(trace))

    def but(self, **changes) -> "SolveSettings":
        """A copy with `changes` (fields of this class; `iterations` validated again)."""
        return dataclasses.replace(self, **changes)


# Above 1/2, a step whose sweeps cannot converge a deep pile makes the step-to-step iteration
# unstable for the pile's slowest modes: the pile jitters (docs/settling.md).
WARM_START = Param("warm_start", 0.0, float, "fraction of last step's impulses (matched by pair) "
                   "each solve starts from: 0 cold, 1 full; above 0.5 a deep frictionless pile "
                   "jitters; with friction the default is 1 (a pile creeps otherwise)",
                   lo=0.0, hi=1.0)
# The bias gap/h of an overlapping contact pushes the marbles apart by the whole overlap in one
# step, and that push is work the contact does: energy enters. 0 turns it off (the bias is
# max(gap, 0)/h, the speculative part only), so a step can only lose energy (docs/friction.md).
STABILISE = Param("stabilise", 1.0, float, "fraction of an overlap the next step removes "
                  "(1: all, as the article; 0: none, overlaps stay but no energy enters)",
                  lo=0.0, hi=1.0)

# The bias gap/h removes an overlap in one step whatever its depth: two marbles at one point
# (a hostile state file), or a marble placed into a settled pile, leave at 5-10 m/s and the run
# explodes. Engines cap the speed of that push (PhysX's max depenetration velocity, Box2D's
# contact push speed, 3 m/s for bodies of a metre); for marbles of 0.1 m, 1 m/s removes the
# deepest overlap of the seed scenes at their defaults (0.015 m a step, 0.77 m/s) at once, and
# separates two coincident marbles (0.2 m) in 10 steps, each leaving at 0.5 m/s, far less
# energy than the lift by a radius that judges an explosion (lab/session/run.py).
PUSH_SPEED = Param("push_speed", 1.0, float, "the largest speed at which a step pushes "
                   "overlapping marbles apart (a deeper overlap is removed over several steps)",
                   "m/s", lo=0.0, lo_open=True, hi=1000.0)

# Where a step runs: the Numba CPU core, the GPU (the cuda backend, solver/cuda/), or the GPU
# when one is present and the pile is large enough for it to win (AUTO_MARBLES).
DEVICE = Param("device", "cpu", str, "where the simulation steps: cpu (the Numba core), cuda "
               "(the GPU; `marbles-bench list` marks the solvers that run there), or auto "
               "(cuda when a GPU is present, the solver runs there and the pile has enough "
               "marbles)",
               choices=("cpu", "cuda", "auto"))
# The GPU solve's storage. float32 halves the bytes its iterations read (the contact frames,
# masses, impulses, velocities and rows); every sum is still formed in float64 registers, and
# the CPU core, the world's arrays and the readings stay float64 (docs/gpu.md).
PRECISION = Param("precision", "float64", str, "the GPU solve's arrays: float64, or float32 "
                  "(half the bytes; the residual stops near float32's rounding; cuda only)",
                  choices=("float64", "float32"))
# Below this many marbles auto stays on the CPU: a GPU step has a fixed cost (5-7 ms on an H100,
# most of it launching kernels from Python), and there a 16-core CPU ties with it near 10 000
# marbles; at 100 000 the GPU steps 7x faster (docs/gpu.md).
AUTO_MARBLES = 20_000


@dataclass(frozen=True)
class StepOptions:
    """solve: the solver and its settings (registry.settings builds them validated);
    warm_start: fraction of last step's impulses each solve starts from (WARM_START);
    stabilise: fraction of an overlap a step removes (STABILISE); push_speed: the largest
    speed of that removal, m/s (PUSH_SPEED); threads: threads of the
    core, 1 the serial core (parallel.THREADS); device: DEVICE; precision: PRECISION (of a
    GPU solve; the CPU core is float64). ParamError (one line) names a bad value: a device this
    machine cannot run, or a solver that does not run there."""

    solve: SolveSettings
    warm_start: float = WARM_START.default
    stabilise: float = STABILISE.default
    threads: int = 1
    device: str = DEVICE.default
    precision: str = PRECISION.default
    push_speed: float = PUSH_SPEED.default

    def __post_init__(self) -> None:
        if not isinstance(self.solve, SolveSettings):
            raise ParamError(f"solver settings must come from registry.settings, got "
                             f"{type(self.solve).__name__}")
        object.__setattr__(self, "warm_start", float(WARM_START.parse(_number(self.warm_start))))
        object.__setattr__(self, "stabilise", float(STABILISE.parse(_number(self.stabilise))))
        object.__setattr__(self, "push_speed",
                           float(PUSH_SPEED.parse(_number(self.push_speed))))
        object.__setattr__(self, "threads", int(THREADS.parse(self.threads)))
        object.__setattr__(self, "device", str(DEVICE.parse(self.device)))
        object.__setattr__(self, "precision", str(PRECISION.parse(self.precision)))
        if self.precision != PRECISION.default and self.device == "cpu":
            raise ParamError(f"precision {self.precision}: the CPU core solves in float64; "
                             "float32 is for --device cuda (or auto)")
        if self.device == "cuda":
            check_device(self.solve, "cuda")

    def device_for(self, n: int) -> str:
        """The device a world of n marbles steps on: `device`, with auto resolved."""
        return self.device if self.device != "auto" else auto_device(self.solve, n)

    def but(self, **changes) -> "StepOptions":
        """A copy with `changes` (field names of this class), validated again."""
        return dataclasses.replace(self, **changes)


def check_device(settings: SolveSettings, device: str) -> None:
    """ParamError (one line) when `settings`' method does not run on `device`, or the device
    cannot run here (cuda: no GPU, or numba-cuda missing)."""
    if device not in settings.devices:
        raise ParamError(f"solver {settings.method} does not run on the {device} device (it "
                         f"runs on {', '.join(settings.devices)}); `marbles-bench list` names "
                         f"those that run there, or --device {settings.devices[0]}")
    if device == "cuda":
        from .cuda.runtime import unavailable

        why = unavailable()
        if why:
            raise ParamError(f"--device cuda: {why}")


def usable(settings: SolveSettings, device: str) -> bool:
    """Whether `settings`' method runs on `device` here."""
    try:
        check_device(settings, device)
    except ParamError:
        return False
    return True


def auto_device(settings: SolveSettings, n: int) -> str:
    """What `auto` means for `settings`' method on n marbles: cuda from AUTO_MARBLES when the
    GPU can run the method here, else cpu."""
    return "cuda" if n >= AUTO_MARBLES and usable(settings, "cuda") else "cpu"


def _number(value: object) -> object:
    """A fraction given as a number (a bool too: True is all, False none) as a float; text is
    left for the parameter to parse."""
    if isinstance(value, (bool, int, float, np.floating, np.integer)):
        return float(value)
    return value
