"""Where a step's arrays live and which kernels run its phases: the backend seam.

`Simulation.step` is one sequence (predict, collide, build, warm start, solve, integrate) and
calls every phase through a backend. `CpuBackend` is the Numba CPU core: the world's arrays in
host memory, each phase serial (one block) or over a partition's blocks. Another backend (a GPU)
implements the same methods over its own arrays and hands the world back when asked
(`sync_world`); docs/architecture.md lists the contract.

Which problem a step builds is data, chosen once per step by `rows_of(world)`: 1 row per contact
without friction, 3 with Coulomb friction (normal and two tangents), 6 with rolling or spinning
resistance. Every phase takes that count; nothing else about friction reaches the step.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import locality
from .collide import Collider, Contacts
from .friction import (ROWS_FRICTIONLESS, ROWS_ROLLING, ROWS_SLIDING, FrictionalProblem,
                       contact_coefficients)
from .locality import WORLD_ORDER, gathered, relabel
from .parallel import activate
from .partition import kept, shares
from .problem import ContactProblem
from .motion import integrate, predict
from .rotation import integrate_spin, predict_spin, rotate, spinning
from .warm_start import carry_over_rows
from .world import World, container_geometry



def rows_of(world: World) -> int:
    """Rows per contact of the world's problem: 1 frictionless, 3 with friction, 6 with rolling
    or spinning resistance as well."""
    if not world.frictional:
        return ROWS_FRICTIONLESS
    return ROWS_ROLLING if max(world.mu_roll, world.mu_spin) > 0.0 else ROWS_SLIDING


class Prediction(NamedTuple):
    """The velocities of a step before contact, in the world's numbering: v (n, 3) m/s after
    drag and gravity; V (n, 6) = [v, ω] (m/s, rad/s) when the problem has friction, else None;
    decay = e^(-c h) of the drag c over the step."""

    v: np.ndarray
    V: np.ndarray | None
    decay: float


class Impulses(NamedTuple):
    """Last step's impulses, what the next warm start matches: key (k,) int64 contact keys,
    lam (k * rows,) N s (N m s for rolling rows), contact by contact."""

    key: np.ndarray
    lam: np.ndarray
    rows: int

    @staticmethod
    def none() -> "Impulses":
        return Impulses(np.zeros(0, dtype=np.int64), np.zeros(0), 1)


class CpuBackend:
    """The Numba CPU core. The world's arrays are the backend's arrays, so `sync_world` has
    nothing to copy; a step in blocks runs its passes in parallel, bit for bit the same for a
    given block count (docs/parallel.md)."""

    name = "cpu"

    def __init__(self, world: World):
        self.collider = Collider(container_geometry(world.container))
        self._fixed_of: np.ndarray | None = None  # the inv_mass array `_fixed` was read from
        self._fixed = np.zeros(0, dtype=np.int64)
        self._fixed_mask = np.zeros(0, dtype=np.bool_)

    def begin(self, world: World, blocks: int) -> None:
        """Set Numba's threads for a step of `blocks` blocks. Also for one block when the step
        renumbers: its copies into and out of the grid's numbering are parallel kernels, which
        then run on one thread, as a serial step promises."""
        if blocks > 1 or locality.wanted(world.n):
            activate(blocks)

    def fixed_marbles(self, world: World) -> np.ndarray:
        """Indices of the fixed marbles (inv_mass 0, infinite mass), read again only when the
        world's inv_mass array is replaced."""
        inv_mass = world.inv_mass
        if self._fixed_of is not inv_mass:
            self._fixed_mask = inv_mass == 0.0
            self._fixed = np.flatnonzero(self._fixed_mask)
            self._fixed_of = inv_mass
        return self._fixed

    def predict(self, world: World, rows: int, blocks: int) -> Prediction:
        """Drag and gravity over the step; with friction the spins too. Drag decays a velocity
        exactly over the step (e^(-c h)), so any c >= 0 is stable."""
        h = float(world.dt)
        decay = math.exp(-world.damping * h)
        v = np.empty_like(world.v)
        predict(world.v, world.gravity, h, decay, world.planar, v, blocks)
        fixed = self.fixed_marbles(world)
        if fixed.size:
            # A fixed marble is a body of infinite mass: gravity and impulses cannot move it.
            v[fixed] = 0.0
        if rows == ROWS_FRICTIONLESS:
            return Prediction(v, None, decay)
        V = np.empty((world.n, 6))
        predict_spin(v, world.omega, decay, world.planar, self._fixed_mask, V, blocks)
        return Prediction(v, V, decay)

    def collide(self, world: World, prediction: Prediction, blocks: int,
                stabilise: float, push_speed: float = math.inf) -> Contacts:
        """The step's contacts (laid out in blocks when blocks > 1), those no impulse can act on
        dropped, overlaps scaled by `stabilise` and removed at `push_speed` m/s at most."""
        contacts = self.collider.collide(world.x, prediction.v, world.radius, float(world.dt),
                                         blocks)
        if self.fixed_marbles(world).size:
            contacts = drop_inert(contacts, world.inv_mass)
        return stabilised(contacts, stabilise, push_speed * float(world.dt))

    def solve_order(self, world: World, blocks: int) -> np.ndarray | None:
        """The marble order the step solves in (solver/locality.py): the collider's, block by
        block; None for the world's own."""
        if not locality.wanted(world.n, blocks):
            return None
        return self.collider.block_order()

    def problem(self, world: World, contacts: Contacts, prediction: Prediction, rows: int,
                order: np.ndarray | None, start: tuple):
        """(problem, λ0): the step's contact problem of `rows` rows per contact, in the
        numbering `order` (None: the world's), and its warm start from start = (last step's
        Impulses, the fraction of them)."""
        problem = self._problem(world, contacts, prediction, rows, order)
        return problem, self.warm_start(*start[:1], contacts, rows, start[1])

    def _problem(self, world: World, contacts: Contacts, prediction: Prediction, rows: int,
                 order: np.ndarray | None):
        body_a, body_b = contacts.body_a, contacts.body_b
        inv_mass = world.inv_mass
        V = prediction.v if rows == ROWS_FRICTIONLESS else prediction.V
        if order is not None:
            body_a, body_b = relabel(order, body_a, body_b)
            inv_mass, V = gathered(world.inv_mass, order), gathered(V, order)
        h = float(world.dt)
        if rows == ROWS_FRICTIONLESS:
            return ContactProblem(body_a, body_b, contacts.normal, contacts.gap, inv_mass, V, h,
                                  contacts.key, contacts.partition)
        mu, mu_roll, mu_spin = contact_coefficients(contacts.body_a, world.mu, world.mu_wall,
                                                    world.mu_roll, world.mu_spin)
        radius = world.radius if order is None else gathered(world.radius, order)
        return FrictionalProblem(body_a, body_b, contacts.normal, contacts.gap, radius, inv_mass,
                                 V, h, mu, mu_roll, mu_spin, rows, contacts.key,
                                 contacts.partition)

    def warm_start(self, last: Impulses, contacts: Contacts, rows: int,
                   fraction: float) -> np.ndarray:
        """λ0 (m * rows,): `fraction` of last step's impulses matched by contact key, 0 for a
        new contact."""
        lam0 = np.zeros(contacts.m * rows)
        if fraction <= 0.0 or last.key.size == 0 or contacts.m == 0:
            return lam0
        parts = 1 if contacts.partition is None else shares(contacts.partition[0])
        carry_over_rows(last.key, last.lam, last.rows, contacts.key, lam0, rows, parts)
        if fraction != 1.0:
            # A fixed number of sweeps corrects the pile's slowest modes only a little per step;
            # starting from all of last step's impulses then makes the step-to-step iteration
            # unstable for those modes. A fraction <= 1/2 keeps it stable.
            lam0 *= fraction
        return lam0

    def integrate(self, world: World, problem, prediction: Prediction, lam: np.ndarray,
                  order: np.ndarray | None, blocks: int) -> None:
        """v <- v* + M^-1 J^T λ, x += h v, straight into the world's rows; with friction the
        spins too; then the orientations turned by the spins."""
        h = float(world.dt)
        step = (h, world.planar)
        v = np.empty_like(prediction.v)
        world_order = WORLD_ORDER if order is None else order
        if problem.rows == ROWS_FRICTIONLESS:
            # The impulses are summed in the step's numbering.
            dv = v if order is None else np.empty_like(prediction.v)
            integrate(problem.A, np.ascontiguousarray(lam, dtype=np.float64), problem.v_pred,
                      step, (world.x, v, dv), world_order, problem.partition)
            world.v = v
            if not spinning(world.omega):
                return
            # Without friction nothing exerts a torque: spins only decay with the drag.
            world.omega *= math.exp(-world.damping * h)
        else:
            dV = problem.velocity_change(lam)
            integrate_spin(problem.V_pred, dV, step, (world.x, v, world.omega), world_order,
                           blocks)
            world.v = v
        rotate(world.orientation, world.omega, h, blocks)

    def solve(self, method, problem, lam0: np.ndarray, settings):
        """The method's solve of the step's problem (its SolveResult)."""
        return method.solve(problem, lam0, settings)

    def upload(self, world: World) -> None:
        """After the world's arrays changed on the host: nothing, they are the CPU's own."""

    def download(self, world: World) -> None:
        """Bring the world's arrays up to date: nothing, the CPU steps them in place."""

    @staticmethod
    def host(array) -> np.ndarray:
        """An array of the backend's as a host array (the CPU's are already)."""
        return array

    @staticmethod
    def device(array: np.ndarray):
        """A host array as the backend holds it (the CPU holds it as it is)."""
        return array

    def host_problem(self, problem):
        """The step's problem as the lab reads it (the CPU's is already)."""
        return problem

    def sync_world(self, world: World) -> World:
        """The world with the backend's state in it: the CPU steps the world's own arrays."""
        return world


def backend_for(device: str, world: World, precision: str = "float64"):
    """The backend of `device` ('cpu' or 'cuda') for `world`; `precision`: the GPU solve's
    (solver.options.PRECISION)."""
    if device == "cuda":
        from .cuda.backend import CudaBackend

        return CudaBackend(world, precision)
    return CpuBackend(world)


def drop_inert(contacts: Contacts, inv_mass: np.ndarray) -> Contacts:
    """The contacts that an impulse can act on: a contact whose two ends are fixed (a fixed
    marble against a wall or another fixed marble) has A_cc = 0 and is dropped."""
    fixed_b = inv_mass[contacts.body_b] == 0.0
    fixed_a = np.where(contacts.body_a >= 0, inv_mass[np.maximum(contacts.body_a, 0)] == 0.0,
                       True)
    keep = ~(fixed_a & fixed_b)
    if keep.all():
        return contacts
    return Contacts(contacts.body_a[keep], contacts.body_b[keep], contacts.normal[keep],
                    contacts.gap[keep], contacts.key[keep], kept(contacts.partition, keep))


def stabilised(contacts: Contacts, fraction: float, deepest: float = math.inf) -> Contacts:
    """The contacts with every overlap (gap < 0) scaled by `fraction` and then cut to
    `deepest` (m): the normal bias gap/h then removes that fraction of it in one step, at most
    deepest/h m/s (options.PUSH_SPEED); positive gaps (anticipation) stay."""
    if fraction == 1.0 and not contacts.gap.min(initial=0.0) < -deepest:
        return contacts
    gap = np.where(contacts.gap < 0.0, np.maximum(fraction * contacts.gap, -deepest),
                   contacts.gap)
    return Contacts(contacts.body_a, contacts.body_b, contacts.normal, gap, contacts.key,
                    contacts.partition)
