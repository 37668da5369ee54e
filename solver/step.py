"""One time step: predict -> collide -> assemble -> solve -> integrate.

`Simulation` owns a `World`, the run's `StepOptions` and the state that persists between steps
(last step's impulses for the warm start, the problem for the readouts). `step()` is one
sequence for every problem: the rows per contact (frictionless, Coulomb, rolling) are data
that each phase takes, and every phase runs through the backend that holds the arrays
(solver/backend.py). It returns a `StepReport` with the wall time of every phase; the world is
left finite whatever the solver did.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .backend import Impulses, backend_for, rows_of
from .collide import Collider, key_bound
from .friction import ROWS_FRICTIONLESS, ROWS_ROLLING, ROWS_SLIDING
from .locality import world_numbered
from .methods import registry
from .methods.driver import SolveResult
from .options import SolveSettings
from .options import STABILISE, WARM_START, StepOptions
from .parallel import blocks_for
from .warm_start import carry_over, carry_over_rows
from .world import World, container_geometry

PHASES = ("collide", "assemble", "solve", "integrate", "total")

__all__ = ["PHASES", "STABILISE", "WARM_START", "Checkpoint", "Simulation", "StepOptions",
           "StepReport",
           "carry_over", "carry_over_rows", "impulses_error", "max_penetration"]


def impulses_error(keys: np.ndarray, lam: np.ndarray, n: int, walls: int) -> str | None:
    """Why (keys, lam) cannot be the last step's impulses of n marbles in a container of
    `walls` wall features, or None when they can: keys (k,) distinct integers in
    [0, key_bound(n, walls)), lam (k,) or, with friction, (k, rows) with rows 3 or 6: finite
    real numbers (N s), the normal ones (column 0) non-negative."""
    keys, lam = np.asarray(keys), np.asarray(lam)
    if keys.ndim != 1 or lam.ndim not in (1, 2) or lam.shape[:1] != keys.shape or (
            lam.ndim == 2 and lam.shape[1] not in (ROWS_SLIDING, ROWS_ROLLING)):
        return (f"contact keys {keys.shape} and impulses {lam.shape} must be (k,) and (k,) or "
                f"(k, {ROWS_SLIDING}|{ROWS_ROLLING}) arrays")
    if keys.dtype.kind not in "iu":
        return f"contact keys must be integers, got {keys.dtype}"
    if lam.dtype.kind not in "iuf":
        return f"contact impulses must be real numbers, got {lam.dtype}"
    if keys.size == 0:
        return None
    bound = key_bound(n, walls)
    low, high = keys.min(), keys.max()
    if low < 0 or high >= bound:
        return (f"contact key {int(low if low < 0 else high)} is outside [0, {bound}) for {n} "
                f"marbles and {walls} walls")
    if np.unique(keys).size != keys.size:
        return "a contact key appears twice"
    normal = lam if lam.ndim == 1 else lam[:, 0]
    bad = ~np.isfinite(normal) | (normal < 0)
    if bad.any():
        return f"contact impulse {normal[bad][0].item()!r} is not a finite non-negative number"
    if not np.all(np.isfinite(lam)):
        return "a tangent contact impulse is not finite"
    return None


@dataclass(frozen=True)
class StepReport:
    """timings: seconds per phase (PHASES); contacts: m; result: the solve's SolveResult."""

    timings: dict
    contacts: int
    result: SolveResult
    method: str


@dataclass(frozen=True)
class Checkpoint:
    """A simulation as it was after step `steps`, for `Simulation.rewind`. Copies: x, v, omega
    (n, 3) m, m/s, rad/s and orientation (n, 4) of the world, time (s); keys (k,) int64 and
    impulses (k,) or (k, rows) N s, what the next step warm-starts from (`impulses()`).
    References, which no later step changes: problem, the step's contact problem in the world's
    numbering (None before the first step); solved, (method, λ0, settings) of its solve for
    `retrace` (None on a GPU, which reuses its λ0 buffer). The world's marbles, container and
    material (drag, friction) are not part of it."""

    steps: int
    time: float
    x: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    orientation: np.ndarray
    keys: np.ndarray
    impulses: np.ndarray
    problem: object = None
    solved: tuple | None = None

    @property
    def lam(self) -> np.ndarray:
        """The step's impulses contact by contact as `Simulation.lam` gives them (a view)."""
        return self.impulses.reshape(-1)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays it holds, its problem's (scratch included; arrays it shares
        with the world counted too) and λ0's."""
        total = sum(a.nbytes for a in (self.x, self.v, self.omega, self.orientation, self.keys,
                                       self.impulses))
        if self.problem is not None:
            for value in vars(self.problem).values():
                for a in value if isinstance(value, tuple) else (value,):
                    total += a.nbytes if isinstance(a, np.ndarray) else 0
        if self.solved is not None:
            total += self.solved[1].nbytes
        return total


class Simulation:
    """Steps `world` in place with `options` (StepOptions: the solver and its settings, warm
    start, stabilisation, threads, device). For brevity `options` may be the solver's
    SolveSettings alone, with `warm_start`, `stabilise` and `threads` beside it; they are
    validated into one StepOptions either way. `threads=1`, the default here, is the serial
    core. On a device whose arrays live elsewhere (cuda) `world` is brought up to date when
    read, at most once a step; after editing its arrays in place call `world_edited()`."""

    def __init__(self, world: World, options: StepOptions | SolveSettings,
                 warm_start: float = WARM_START.default,
                 stabilise: float = STABILISE.default, threads: int = 1):
        self._world = world
        if not isinstance(options, StepOptions):
            options = StepOptions(options, warm_start, stabilise, threads)
        self.device = options.device_for(world.n)
        self.backend = backend_for(self.device, world, options.precision)
        self.options = options
        self._problem = None  # in the solve's numbering if _order is set
        self._order: np.ndarray | None = None  # slot -> marble of the last step, when renumbered
        self._world_problem = None
        self._lam = np.zeros(0)
        # The last solve's method, λ0 and settings with the trace on (references, no copies:
        # the methods copy λ0), so that `retrace` can solve it again.
        self._solved = None
        self._last = Impulses.none()
        self._behind = False  # the host's world is older than the backend's
        self.steps = 0

    @property
    def world(self) -> World:
        """The world as of the last step."""
        if self._behind:
            self.backend.download(self._world)
            self._behind = False
        return self._world

    def world_edited(self) -> None:
        """The world's arrays were changed on the host (a dragged marble): the next step starts
        from them."""
        self.backend.upload(self.world)

    @property
    def lam(self) -> np.ndarray:
        """The last step's impulses, contact by contact (N s; rows per contact with friction)."""
        return self.backend.host(self._lam)

    @property
    def options(self) -> StepOptions:
        return self._options

    @options.setter
    def options(self, options: StepOptions) -> None:
        """Replace the options from the next step on (StepOptions are validated when made)."""
        if not isinstance(options, StepOptions):
            raise TypeError(f"options must be StepOptions, got {type(options).__name__}")
        self._options = options
        self.method = registry.get(options.solve.method)
        # Both variants once, not one per step: the window alternates them.
        self._by_trace = {flag: options.solve.with_trace(flag) for flag in (False, True)}
        self._checked: tuple[str, bool] | None = None

    @property
    def settings(self) -> SolveSettings:
        return self._options.solve

    @property
    def warm_start(self) -> float:
        return self._options.warm_start

    @property
    def stabilise(self) -> float:
        return self._options.stabilise

    @property
    def threads(self) -> int:
        return self._options.threads

    def set_solver(self, settings: SolveSettings) -> None:
        """Switch solver, iterations or parameters from the next step on."""
        self.options = self._options.but(solve=settings)

    def fixed_marbles(self) -> np.ndarray:
        """Indices of the fixed marbles (inv_mass 0, infinite mass)."""
        return self.backend.fixed_marbles(self.world)

    def impulses(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys (k,) int64, lam): copies of the last step's impulses by contact key, what the
        next step's warm start matches; lam (k,) N s, or (k, rows) with friction."""
        lam = np.array(self.backend.host(self._last.lam), dtype=np.float64)
        if self._last.rows > 1:
            lam = lam.reshape(-1, self._last.rows)
        return np.array(self.backend.host(self._last.key), dtype=np.int64), lam

    def set_impulses(self, keys: np.ndarray, lam: np.ndarray) -> None:
        """Take (keys, lam) of `impulses` as the last step's impulses: a simulation restarted
        from a saved world and these warm-starts exactly as the uninterrupted one. ValueError
        (one line) when they do not fit this world (see impulses_error)."""
        walls = container_geometry(self._world.container).n_features
        problem = impulses_error(keys, lam, self._world.n, walls)
        if problem:
            raise ValueError(problem)
        lam = np.array(lam, dtype=np.float64)
        device = self.backend.device
        self._last = Impulses(device(np.array(keys, dtype=np.int64)), device(lam.ravel()),
                              1 if lam.ndim == 1 else lam.shape[1])

    def checkpoint(self, problem: bool = True) -> Checkpoint:
        """The simulation as it is now (see Checkpoint), for `rewind`; `problem` False leaves
        out the step's problem and solve (a rewound simulation then has none until it steps)."""
        w = self.world
        keys, lam = self.impulses()
        keep = problem and self.backend.name == "cpu"
        return Checkpoint(self.steps, float(w.time), w.x.copy(), w.v.copy(), w.omega.copy(),
                          w.orientation.copy(), keys, lam, self.problem if problem else None,
                          self._solved if keep else None)

    def rewind(self, checkpoint: Checkpoint) -> None:
        """Make the simulation as it was at `checkpoint` (of this world): its state, impulses,
        step count and problem; the next step then repeats the one that followed it, bit for
        bit with the same options. ValueError (one line) for a checkpoint of another pile."""
        w, c = self._world, checkpoint
        if c.x.shape != w.x.shape:
            raise ValueError(f"a checkpoint of {c.x.shape[0]} marbles cannot rewind a world "
                             f"of {w.n}")
        self.set_impulses(c.keys, c.impulses)
        for name in ("x", "v", "omega", "orientation"):
            setattr(w, name, getattr(c, name).copy())  # the steps write into the world's arrays
        w.time = c.time
        self._behind = False
        self.backend.upload(w)
        self._problem, self._order, self._world_problem = c.problem, None, c.problem
        self._lam = c.lam
        self._solved = c.solved
        self.steps = c.steps

    def _rows(self) -> int:
        """Rows per contact of this step's problem; refuses (ParamError, one line) a solver
        without friction on a world with it, checked again only when either changes."""
        rows = rows_of(self._world)
        pair = (self.method.name, rows != ROWS_FRICTIONLESS)
        if self._checked != pair:
            registry.check_friction(*pair)
            self._checked = pair
        return rows

    def step(self, trace: bool = False) -> StepReport:
        """One step; `trace`: record the residual after every iteration (slower)."""
        w, backend, options = self._world, self.backend, self._options
        rows = self._rows()
        t0 = time.perf_counter()
        blocks = self.blocks
        backend.begin(w, blocks)
        prediction = backend.predict(w, rows, blocks)
        contacts = backend.collide(w, prediction, blocks, options.stabilise,
                                   options.push_speed)
        t1 = time.perf_counter()
        order = backend.solve_order(w, blocks)
        problem, lam0 = backend.problem(w, contacts, prediction, rows, order,
                                        (self._last, options.warm_start))
        t2 = time.perf_counter()
        result = backend.solve(self.method, problem, lam0, self._by_trace[bool(trace)])
        self._solved = (self.method, lam0, self._by_trace[True])
        t3 = time.perf_counter()
        backend.integrate(w, problem, prediction, result.lam, order, blocks)
        w.time += float(w.dt)
        self._problem, self._order, self._world_problem = problem, order, None
        self._lam = result.lam
        self._behind = backend.name != "cpu"
        self._last = Impulses(contacts.key, result.lam, rows)
        self.steps += 1
        t4 = time.perf_counter()
        timings = {"collide": t1 - t0, "assemble": t2 - t1, "solve": t3 - t2,
                   "integrate": t4 - t3, "total": t4 - t0}
        return StepReport(timings, contacts.m, result, self.method.name)

    def retrace(self) -> np.ndarray | None:
        """The residual after each iteration (m/s, index 0 before the first) of the last
        step's solve, solved again from its λ0 with the trace on, on a copy of its problem
        (the step is not redone): the trace of a step that was not traced, as it went. None
        before a step, and on a GPU, whose λ0 buffer the next solves reuse."""
        if self._solved is None or self.backend.name != "cpu":
            return None
        method, lam0, settings = self._solved
        result = self.backend.solve(method, self._problem.copy(), lam0, settings)
        return result.trace

    @property
    def problem(self):
        """The last step's contact problem in the world's numbering (None before a step)."""
        if self._problem is None:
            return None
        if self._world_problem is None:
            problem = self.backend.host_problem(self._problem)
            self._world_problem = (problem if self._order is None
                                   else world_numbered(problem, self._order))
        return self._world_problem

    @property
    def blocks(self) -> int:
        """The blocks (and threads) a step of the world as it is uses: 1 is the serial core."""
        return blocks_for(self._world.n, self._options.threads)


def max_penetration(world: World) -> float:
    """Deepest overlap (m, >= 0) among marbles and walls at the current positions."""
    collider = Collider(container_geometry(world.container))
    contacts = collider.collide(world.x, np.zeros_like(world.v), world.radius, world.dt)
    return float(max(0.0, -contacts.gap.min())) if contacts.m else 0.0
