"""The cuda backend: the whole step on the GPU, the world's arrays kept there between steps.

Per step, five cooperative launches and one read of a few numbers: predict; collide (its
counts come back: the contacts found, and whether the buffers were large enough); assemble
(with the warm start); the solve (every iteration in one launch, then the residual); integrate.
Buffers persist and grow geometrically, so a steady pile allocates nothing. The world on the
host is brought up to date only when asked (`download`): a window asks once a frame.

The solve runs in the collider's numbering (slots: order[slot] is the marble), contact by
contact and marble by marble; a contact's key names its marbles by their own numbers, so the
warm start matches across steps whatever the order. Which methods run here: those
whose Method declares the cuda device (solver/methods/registry.py); their functions here are
registered on the Method by solver/cuda/driver.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..friction import ROWS_FRICTIONLESS, FrictionalProblem, contact_coefficients
from ..methods.driver import SolveResult
from ..problem import FRICTIONAL, FRICTIONLESS, ContactProblem
from ..world import World, container_geometry
from . import assemble as asm
from . import collide as gcol
from . import motion as gmo
from . import driver as _registered  # noqa: F401  the GPU's functions on the Methods
from .runtime import THREADS, blocks_for, cooperative_blocks, cuda

def _grow(size: int) -> int:
    return max(1024, 1 << max(0, int(size - 1).bit_length()))


class _Buffers:
    """Device arrays that persist between steps, grown geometrically on demand. A view is
    kept while its rows do not change: a slice of a device array costs tens of µs to make,
    and a kept one carries its launch parameters cached (solver/cuda/launch.py)."""

    def __init__(self, real=np.float64):
        self._arrays: dict[str, object] = {}
        self._views: dict[str, tuple] = {}
        self.real = np.dtype(real)

    def get(self, name: str, shape: tuple, dtype=None):
        """A device array of at least shape[0] rows (its first rows are the view returned);
        dtype None: the solve's real type (PRECISIONS), for the arrays its iterations read."""
        dtype = self.real if dtype is None else dtype
        have = self._arrays.get(name)
        rows = shape[0]
        if have is None or have.shape[0] < rows or have.shape[1:] != shape[1:] \
                or have.dtype != np.dtype(dtype):
            have = cuda.device_array((_grow(rows),) + tuple(shape[1:]), dtype=dtype)
            self._arrays[name] = have
        return self.view(name, have, rows)

    def view(self, name: str, array, rows: int):
        """array[:rows], the same object as last time when `name` names the same array and
        rows."""
        kept = self._views.get(name)
        if kept is not None and kept[0] is array and kept[1] == rows:
            return kept[2]
        view = array[:rows]
        self._views[name] = (array, rows, view)
        return view


@dataclass
class DeviceContacts:
    """The step's contacts on the GPU, in the collider's order: body_a, body_b slots (-1: a
    wall), normal (m, 3), gap (m,) m, key (m,) int64 (marble numbers), order (n,) slot ->
    marble."""

    body_a: object
    body_b: object
    normal: object
    gap: object
    key: object
    order: object
    partition = None

    @property
    def m(self) -> int:
        return int(self.gap.shape[0])


class CudaBackend:
    """The step's phases on the GPU (solver/backend.py's contract; docs/architecture.md)."""

    name = "cuda"

    def __init__(self, world: World, precision: str = "float64"):
        self.precision = precision
        self.buffers = _Buffers(np.dtype(precision))
        self._walls = tuple(cuda.to_device(a) for a in _walls(world))
        self._world_of: World | None = None
        self._fixed = np.flatnonzero(world.inv_mass == 0.0)
        self._geom = cuda.device_array(gcol.GEOM)
        self._dims = cuda.device_array(gcol.DIMS, dtype=np.int64)
        self._no_keys = cuda.device_array(0, dtype=np.int64)
        self._no_lam = cuda.device_array(0, dtype=self.buffers.real)
        self._no_spin = cuda.device_array((0, 6))
        # Last step's keys and impulses stay while this step's are written: two of each, in
        # turn.
        self._turn = 0
        # Whether the phases wait for their kernels, so that each phase's wall time is its own
        # (a step report's timings); without, a step waits only where it reads numbers back.
        self.timed_phases = True

    # ---------------------------------------------------------------- the world's arrays
    def upload(self, world: World) -> None:
        """The world's arrays onto the GPU (after the host changed them)."""
        b = self.buffers
        for name in ("x", "v", "omega", "orientation", "radius", "inv_mass"):
            host = np.ascontiguousarray(getattr(world, name), dtype=np.float64)
            b.get(name, host.shape, np.float64).copy_to_device(host)
        self._fixed = np.flatnonzero(world.inv_mass == 0.0)
        self._world_of = world

    def download(self, world: World) -> None:
        """The GPU's x, v, ω and orientation into the world's arrays."""
        b = self.buffers
        n = world.n
        for name, width in (("x", 3), ("v", 3), ("omega", 3), ("orientation", 4)):
            target = getattr(world, name)
            b.get(name, (n, width), np.float64).copy_to_host(target)

    def _device(self, name: str, world: World, width: int | None = None):
        shape = (world.n,) if width is None else (world.n, width)
        return self.buffers.get(name, shape, np.float64)

    def begin(self, world: World, blocks: int) -> None:
        if self._world_of is not world:
            self.upload(world)

    def fixed_marbles(self, world: World) -> np.ndarray:
        return self._fixed

    # -------------------------------------------------------------------------- phases
    def predict(self, world: World, rows: int, blocks: int):
        """v* (n, 3) and, with friction, V* (n, 6) on the GPU, the world's numbering."""
        n = world.n
        h = float(world.dt)
        decay = math.exp(-world.damping * h)
        g = world.gravity
        self._motion = (h, decay, bool(world.planar), float(g[0]), float(g[1]), float(g[2]))
        b = self.buffers
        v = b.get("v_pred", (n, 3), np.float64)
        V = self._no_spin if rows == ROWS_FRICTIONLESS else b.get("V_pred", (n, 6), np.float64)
        state = (self._device("v", world, 3), self._device("omega", world, 3))
        gmo.predict[blocks_for(n), THREADS](state, self._device("inv_mass", world), self._motion,
                                            (v, V))
        return _Prediction(v, None if rows == ROWS_FRICTIONLESS else V, decay)

    def collide(self, world: World, prediction, blocks: int, stabilise: float,
                push_speed: float = math.inf):
        """The step's contacts (DeviceContacts); the stabilisation, and the cap of its push
        at `push_speed` m/s, are applied in `problem`."""
        self.stabilise = float(stabilise)
        self.deepest = float(push_speed) * float(world.dt)
        n = world.n
        b = self.buffers
        table = gcol.table_size(n)
        marbles = (self._device("x", world, 3), prediction.v, self._device("radius", world))
        geom, dims = self._geom, self._dims
        grid_arrays = (b.get("lin", (n,), np.int64), b.get("start", (table + 1,), np.int64),
                       b.get("fill", (table,), np.int64), b.get("order", (n,), np.int64),
                       b.get("sorted_lin", (n,), np.int64), b.get("packed", (n, 5)),
                       b.get("slot_of", (n,), np.int64))
        blocks_used = cooperative_blocks(gcol.collide, n)
        scratch = (b.get("speed", (n,), np.float64),
                   b.get("partial_f", (blocks_used * gcol.BOUNDS,), np.float64),
                   b.get("partial_i", (3 * blocks_used + 2,), np.int64),
                   b.get("counts", (n + 1,), np.int64))
        capacity = max(8 * n, 16)
        self._turn = 1 - self._turn
        while True:
            out = (b.get("body_a", (capacity,), np.int64), b.get("body_b", (capacity,), np.int64),
                   b.get("normal", (capacity, 3)), b.get("gap", (capacity,), np.float64),
                   b.get(f"key{self._turn}", (capacity,), np.int64))
            gcol.collide[blocks_used, THREADS](marbles, self._walls, float(world.dt), geom, dims,
                                               grid_arrays, scratch, out)
            found = dims.copy_to_host()
            if not found[gcol.OVERFLOW]:
                break
            capacity = int(found[gcol.FOUND])
        m = int(found[gcol.FOUND])
        self._order = grid_arrays[3]
        names = ("body_a", "body_b", "normal", "gap", f"key{self._turn}")
        return DeviceContacts(*(b.view(name + "/found", a, m) for name, a in zip(names, out)),
                              grid_arrays[3])

    def solve_order(self, world: World, blocks: int):
        return None

    def problem(self, world: World, contacts: DeviceContacts, prediction, rows: int, order,
                start: tuple):
        """(DeviceProblem, λ0 on the GPU): the step's problem, stabilisation applied, and its
        warm start from start = (last step's Impulses, the fraction of them), one launch."""
        last, fraction = start
        b = self.buffers
        keys = last.key if last.key.shape[0] else self._no_keys
        lam = last.lam if last.key.shape[0] else self._no_lam
        size = 2
        while size < 2 * max(1, keys.shape[0]):
            size *= 2
        table = (b.get("table_keys", (size,), np.int64), b.get("table_index", (size,), np.int64))
        lam0 = b.get(f"lam{self._turn}", (contacts.m * rows,))
        warm = ((keys, lam, last.rows), table, lam0)
        problem = DeviceProblem.assemble(self, world, contacts, prediction, (rows, fraction),
                                         warm)
        if self.timed_phases:
            cuda.synchronize()
        return problem, lam0

    def solve(self, method, problem: "DeviceProblem", lam0, settings) -> SolveResult:
        """`method`'s solve on the cuda device (its function there: solver/cuda/driver.py)."""
        return method.solve(problem, lam0, settings)

    def integrate(self, world: World, problem: "DeviceProblem", prediction, lam, order,
                  blocks: int) -> None:
        """Velocities, positions, spins and orientations of the world's arrays on the GPU."""
        n = world.n
        b = self.buffers
        state = (self._device("x", world, 3), self._device("v", world, 3),
                 self._device("omega", world, 3), self._device("orientation", world, 4))
        if problem.rows == ROWS_FRICTIONLESS:
            kernel, width = gmo.integrate, 3
        else:
            kernel, width = gmo.frictional_integrate, 6
        kernel[blocks_for(n), THREADS](problem.A, lam, problem.csr, (problem.V, self._order),
                                      state, self._motion, b.get(f"dv{width}", (n, width), np.float64))
        if self.timed_phases:
            cuda.synchronize()

    @staticmethod
    def host(array) -> np.ndarray:
        """A device array (or a host one) as a host array, float32 widened to float64 (the
        CPU's readers take float64)."""
        out = array.copy_to_host() if hasattr(array, "copy_to_host") else np.asarray(array)
        return out.astype(np.float64) if out.dtype == np.float32 else out

    @staticmethod
    def device(array: np.ndarray):
        """A host array on the GPU."""
        return cuda.to_device(np.ascontiguousarray(array))

    @staticmethod
    def host_problem(problem: "DeviceProblem"):
        """The CPU's problem of the step's contacts, for the lab's readers."""
        return problem.host()

    def sync_world(self, world: World) -> World:
        self.download(world)
        return world


@dataclass
class _Prediction:
    v: object
    V: object
    decay: float


def _walls(world: World) -> tuple:
    geo = container_geometry(world.container)
    return geo.planes, geo.spheres, geo.tubes




class DeviceProblem:
    """One step's contact problem on the GPU, over slots: A (solver/products.py's tuple), b,
    A's diagonal, with friction the laws; csr: the contacts by marble. `host()` gives the
    CPU's problem of the same contacts in the world's numbering (for readers: compare, the
    exports). The CPU problems' interface (docs/architecture.md) where a solve reads it:
    kind, device, rows, size, m, n, A, laws, rhs, diag; the products and residuals are the host
    problem's, for readers."""

    device = "cuda"
    explicit = False

    def __init__(self):
        self.rows = ROWS_FRICTIONLESS

    @property
    def kind(self) -> str:
        return FRICTIONLESS if self.rows == ROWS_FRICTIONLESS else FRICTIONAL

    @property
    def frictional(self) -> bool:
        return self.rows != ROWS_FRICTIONLESS

    def residual(self, lam) -> float:
        """The natural-map residual of λ (host or GPU), m/s, on the host problem."""
        return self.host().residual(_on_host(lam))

    def error(self, lam) -> np.ndarray:
        """A λ + b (host), m/s, on the host problem."""
        return self.host().error(_on_host(lam))

    def velocity(self, lam) -> np.ndarray:
        """v* + M^-1 J^T λ (host), the world's numbering, on the host problem."""
        return self.host().velocity(_on_host(lam))

    @classmethod
    def assemble(cls, backend: CudaBackend, world: World, contacts: DeviceContacts,
                 prediction, rows_warm: tuple, warm: tuple) -> "DeviceProblem":
        """The problem of `contacts` with rows_warm = (rows per contact, the warm start's
        fraction); warm = (last, table, λ0) as assemble.py's kernels take it."""
        rows, fraction = rows_warm
        self = cls()
        b = backend.buffers
        n, m = world.n, contacts.m
        self.n, self.m, self.rows = n, m, rows
        self.size = m * rows
        self.contacts = contacts
        self.world = world
        self.prediction = prediction
        self.backend = backend
        width = 3 if rows == ROWS_FRICTIONLESS else 6
        self.V = b.get(f"V_slot{width}", (n, width))
        inv_mass = b.get("w_slot", (n,))
        inv_inertia = b.get("iw_slot", (n,))
        radius = b.get("r_slot", (n,))
        slotted = (self.V, inv_mass, inv_inertia, radius)
        self.diag = b.get("diag", (m * rows,))
        self.rhs = b.get("rhs", (m * rows,))
        self.csr = (b.get("csr_start", (n + 1,), np.int64), b.get("csr_items", (2 * m,), np.int64),
                    b.get("csr_sides", (2 * m,), np.int64), b.get("csr_fill", (n,), np.int64))
        scalars = (float(world.dt), backend.stabilise, float(fraction), float(world.mu),
                   float(world.mu_wall), float(world.mu_roll), float(world.mu_spin),
                   backend.deepest)
        bodies = (prediction.v if rows == ROWS_FRICTIONLESS else prediction.V,
                  backend._device("inv_mass", world), backend._device("radius", world))
        c = contacts
        if rows == ROWS_FRICTIONLESS:
            self.A = (c.body_a, c.body_b, c.normal, inv_mass)
            self.laws = None
            kernel = asm.assemble_frictionless
            problem = (self.A, self.diag, self.rhs)
        else:
            self.A = (c.body_a, c.body_b, c.normal, b.get("t1", (m, 3)), b.get("t2", (m, 3)),
                      b.get("arm_a", (m,)), b.get("arm_b", (m,)), inv_mass, inv_inertia, rows)
            self.laws = (b.get("mu", (m,)), b.get("mu_roll", (m,)), b.get("mu_spin", (m,)))
            kernel = asm.assemble_frictional
            problem = (self.A, self.laws, self.diag, self.rhs)
        blocks = cooperative_blocks(kernel, max(n, m))
        partial = b.get("partial_a", (blocks + 2,), np.int64)
        kernel[blocks, THREADS]((c.body_a, c.body_b, c.normal, c.gap, c.key), bodies, c.order,
                                slotted, problem, scalars, (self.csr, partial), warm)
        return self

    def host(self):
        """The CPU's problem of these contacts, in the world's numbering."""
        if getattr(self, "host_problem", None) is not None:
            return self.host_problem
        c = self.contacts
        order = c.order.copy_to_host()
        a = c.body_a.copy_to_host()
        body_a = np.where(a >= 0, order[np.maximum(a, 0)], -1)
        body_b = order[c.body_b.copy_to_host()]
        normal = c.normal.copy_to_host().astype(np.float64)
        gap, key = c.gap.copy_to_host(), c.key.copy_to_host()
        w = self.world
        if self.rows == ROWS_FRICTIONLESS:
            return ContactProblem(body_a, body_b, normal, gap, w.inv_mass.copy(),
                                  self.prediction.v.copy_to_host(), float(w.dt), key)
        mu, mu_roll, mu_spin = contact_coefficients(body_a, w.mu, w.mu_wall, w.mu_roll,
                                                    w.mu_spin)
        return FrictionalProblem(body_a, body_b, normal, gap, w.radius.copy(), w.inv_mass.copy(),
                                 self.prediction.V.copy_to_host(), float(w.dt), mu, mu_roll,
                                 mu_spin, self.rows, key)


def _on_host(lam) -> np.ndarray:
    out = lam.copy_to_host() if hasattr(lam, "copy_to_host") else np.asarray(lam)
    return np.asarray(out, dtype=np.float64)
