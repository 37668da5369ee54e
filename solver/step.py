"""One time step: predict -> collide -> assemble -> solve -> integrate.

`Simulation` owns a `World`, the chosen solver's validated settings and the buffers that persist
between steps (contact arrays, last step's impulses for warm starting). `step()` returns a
`StepReport` with the wall time of every phase; the world is left finite whatever the solver did.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .blocked import blocked_integrate, blocked_predict, integrate_range
from .collide import Collider, Contacts, key_bound
from .methods import registry
from .methods.driver import SolveResult, SolveSettings
from . import locality
from .locality import WORLD_ORDER, gathered, relabel, world_numbered
from .params import Param
from .parallel import activate, blocks_for
from .partition import kept, shares
from .problem import ROW_KERNEL, ContactProblem, impulse_velocity
from .friction import ROWS_ROLLING, ROWS_SLIDING, FrictionalProblem, contact_coefficients
from .rotation import (blocked_integrate_spin, blocked_predict_spin, blocked_rotate,
                       integrate_spin, predict_spin, rotate, spinning)
from .world import World, container_geometry

PHASES = ("collide", "assemble", "solve", "integrate", "total")

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


@njit(cache=True, nogil=True)
def carry_over(prev_keys, prev_lam, keys, lam0):
    """lam0[c] <- prev_lam[p] where prev_keys[p] == keys[c] (keys unique within a step), else
    left as is: carry_over_rows with one row per contact."""
    carry_over_rows(prev_keys, prev_lam, 1, keys, lam0, 1)


@njit(cache=True, nogil=True)
def carry_over_rows(prev_keys, prev_lam, prev_rows, keys, lam0, rows):
    """The same matching for impulses of several rows per contact: contact c's first
    min(prev_rows, rows) entries from its previous ones (the normal, then tangents...). Most
    contacts persist in the collider's order, so the contacts are matched in order first, and
    an open-addressing hash table of the previous keys (O(m), where sorting and searching cost
    a few times more on the bowl) is built only for what follows the first miss."""
    c = _carry_in_order(prev_keys, prev_lam, prev_rows, keys, lam0, rows)
    if c < keys.shape[0]:
        slot, mask = _key_table(prev_keys)
        _carry_rest(prev_keys, prev_lam, prev_rows, keys, lam0, rows, slot, mask, c,
                    keys.shape[0])


@njit(parallel=True, cache=True, nogil=True)
def blocked_carry_over_rows(prev_keys, prev_lam, prev_rows, keys, lam0, rows, parts):
    """carry_over_rows with the contacts after the in-order run looked up in `parts` equal
    shares at once: the same λ0, since a key is matched exactly wherever it is found (the
    contact order of a step in blocks moves too much between steps for the in-order run)."""
    c = _carry_in_order(prev_keys, prev_lam, prev_rows, keys, lam0, rows)
    m = keys.shape[0]
    if c < m:
        slot, mask = _key_table(prev_keys)
        for t in prange(parts):
            _carry_rest(prev_keys, prev_lam, prev_rows, keys, lam0, rows, slot, mask,
                        c + t * (m - c) // parts, c + (t + 1) * (m - c) // parts)


@njit(**ROW_KERNEL)
def _carry_in_order(prev_keys, prev_lam, prev_rows, keys, lam0, rows):
    """carry_over_rows while keys[c] == prev_keys[c]: the first c where not, or where one
    list ends."""
    common = min(prev_rows, rows)
    for c in range(min(keys.shape[0], prev_keys.shape[0])):
        if prev_keys[c] != keys[c]:
            return c
        _copy_rows(prev_lam, c * prev_rows, lam0, c * rows, common)
    return min(keys.shape[0], prev_keys.shape[0])


@njit(**ROW_KERNEL)
def _carry_rest(prev_keys, prev_lam, prev_rows, keys, lam0, rows, slot, mask, first, last):
    """carry_over_rows for contacts [first, last): each looked for where the last match's
    shift in the previous order puts it, else in the hash table (slot, mask) of `_key_table`."""
    common = min(prev_rows, rows)
    k = prev_keys.shape[0]
    shift = 0
    for c in range(first, last):
        p = c + shift
        if p < 0 or p >= k or prev_keys[p] != keys[c]:
            p = _key_slot(slot, mask, prev_keys, keys[c])
            if p < 0:
                continue
            shift = p - c
        _copy_rows(prev_lam, p * prev_rows, lam0, c * rows, common)


@njit(inline="always", **ROW_KERNEL)
def _copy_rows(source, src, target, dst, count):
    """target[dst:dst + count] <- source[src:src + count], three written out (twice as fast)."""
    if count == 3:
        target[dst] = source[src]
        target[dst + 1] = source[src + 1]
        target[dst + 2] = source[src + 2]
    else:
        for j in range(count):
            target[dst + j] = source[src + j]


@njit(cache=True, nogil=True)
def _key_table(keys):
    """(slot, mask): the open-addressing table of keys (index or -1 per slot)."""
    size = 2
    while size < 2 * keys.shape[0]:
        size *= 2
    mask = size - 1
    slot = np.full(size, -1, dtype=np.int64)
    for p in range(keys.shape[0]):
        h = ((keys[p] * 2654435761) >> 7) & mask
        while slot[h] >= 0:
            h = (h + 1) & mask
        slot[h] = p
    return slot, mask


@njit(cache=True, nogil=True)
def _key_slot(slot, mask, keys, key):
    """The index p with keys[p] == key in `_key_table`'s table, or -1."""
    h = ((key * 2654435761) >> 7) & mask
    while slot[h] >= 0:
        p = slot[h]
        if keys[p] == key:
            return p
        h = (h + 1) & mask
    return -1


@njit(cache=True, nogil=True)
def predict(v, gravity, h, decay, planar, out):
    """out (n, 3) <- decay v + h g, m/s: the velocities after drag and gravity, before contact,
    with y = 0 when `planar`. v: (n, 3) m/s; gravity: (3,) m/s^2; h: s; decay = e^(-c h) for
    linear drag c (1/s). With decay = 1 (no drag) the same operations, in the same order, as the
    numpy expression ``v + h * gravity`` (x * 1.0 is exact); one call instead of two temporaries."""
    g0 = h * gravity[0]
    g1 = h * gravity[1]
    g2 = h * gravity[2]
    for i in range(v.shape[0]):
        out[i, 0] = decay * v[i, 0] + g0
        out[i, 1] = 0.0 if planar else decay * v[i, 1] + g1
        out[i, 2] = decay * v[i, 2] + g2


@njit(cache=True, nogil=True)
def integrate(body_a, body_b, normal, inv_mass, lam, v_pred, h, planar, x, v, dv, order):
    """v (n, 3) <- v* + M^-1 J^T λ (m/s, y = 0 when `planar`), then x (n, 3) += h v (m): the
    end of a step in one call. Bit for bit what ContactProblem.velocity and ``x += h * v`` give:
    the impulses are summed from zero into dv (n, 3) first, then added to v*. The contacts and
    v* in the step's numbering, x and v in the world's (blocked.integrate_range)."""
    impulse_velocity(body_a, body_b, normal, inv_mass, lam, dv)
    integrate_range(v_pred, dv, h, planar, x, v, order, 0, v.shape[0])


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


def stabilised(contacts: Contacts, fraction: float) -> Contacts:
    """The contacts with every overlap (gap < 0) scaled by `fraction`: the normal bias gap/h
    then removes that fraction of it in one step; positive gaps (anticipation) stay."""
    if fraction == 1.0:
        return contacts
    gap = np.where(contacts.gap < 0.0, fraction * contacts.gap, contacts.gap)
    return Contacts(contacts.body_a, contacts.body_b, contacts.normal, gap, contacts.key,
                    contacts.partition)


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


class Simulation:
    """Steps `world` in place with the solver that `settings` chose (registry.settings builds
    them, validated); `warm_start`: fraction of last step's impulses each solve starts from;
    `stabilise`: fraction of an overlap a step removes (STABILISE); `threads`: threads of the
    core (THREADS; 1, the default here, is the serial core, whatever the world's size)."""

    def __init__(self, world: World, settings: SolveSettings,
                 warm_start: float = WARM_START.default,
                 stabilise: float = STABILISE.default, threads: int = 1):
        self.world = world
        self.threads = int(threads)
        self.collider = Collider(container_geometry(world.container))
        self.warm_start = float(warm_start)
        self.stabilise = float(stabilise)
        self.set_solver(settings)
        self._problem: ContactProblem | None = None  # in the solve's numbering if _order is set
        self._order: np.ndarray | None = None  # slot -> marble of the last step, when renumbered
        self._world_problem: ContactProblem | None = None
        self.lam = np.zeros(0)
        self._prev_keys = np.zeros(0, dtype=np.int64)
        self._prev_lam = np.zeros(0)
        self.steps = 0
        self._fixed_of: np.ndarray | None = None  # the inv_mass array `_fixed` was read from
        self._fixed = np.zeros(0, dtype=np.int64)
        self._prev_rows = 1  # impulses per contact of the previous step

    def fixed_marbles(self) -> np.ndarray:
        """Indices of the fixed marbles (inv_mass 0, infinite mass), read again only when the
        world's inv_mass array is replaced."""
        inv_mass = self.world.inv_mass
        if self._fixed_of is not inv_mass:
            self._fixed_mask = inv_mass == 0.0
            self._fixed = np.flatnonzero(self._fixed_mask)
            self._fixed_of = inv_mass
        return self._fixed

    def set_solver(self, settings: SolveSettings) -> None:
        """Switch solver, iterations or parameters from the next step on."""
        self.method = registry.get(settings.method)
        self.settings = settings
        # Both variants once, not one per step: the window alternates them.
        self._by_trace = {flag: settings.with_trace(flag) for flag in (False, True)}

    def impulses(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys (k,) int64, lam): copies of the last step's impulses by contact key, what the
        next step's warm start matches; lam (k,) N s, or (k, rows) with friction."""
        lam = np.array(self._prev_lam, dtype=np.float64)
        if self._prev_rows > 1:
            lam = lam.reshape(-1, self._prev_rows)
        return self._prev_keys.copy(), lam

    def set_impulses(self, keys: np.ndarray, lam: np.ndarray) -> None:
        """Take (keys, lam) of `impulses` as the last step's impulses: a simulation restarted
        from a saved world and these warm-starts exactly as the uninterrupted one. ValueError
        (one line) when they do not fit this world (see impulses_error)."""
        problem = impulses_error(keys, lam, self.world.n, self.collider.geometry.n_features)
        if problem:
            raise ValueError(problem)
        lam = np.array(lam, dtype=np.float64)
        self._prev_keys = np.array(keys, dtype=np.int64)
        self._prev_rows = 1 if lam.ndim == 1 else lam.shape[1]
        self._prev_lam = lam.ravel()

    def _initial_impulses(self, contacts: Contacts, rows: int = 1) -> np.ndarray:
        lam0 = np.zeros(contacts.m * rows)
        if self.warm_start <= 0.0 or self._prev_keys.size == 0 or contacts.m == 0:
            return lam0
        if contacts.partition is not None:
            blocked_carry_over_rows(self._prev_keys, self._prev_lam, self._prev_rows,
                                    contacts.key, lam0, rows, shares(contacts.partition[0]))
        else:
            carry_over_rows(self._prev_keys, self._prev_lam, self._prev_rows, contacts.key,
                            lam0, rows)
        if self.warm_start != 1.0:
            # A fixed number of sweeps corrects the pile's slowest modes only a little per step;
            # starting from all of last step's impulses then makes the step-to-step iteration
            # unstable for those modes. A fraction <= 1/2 keeps it stable.
            lam0 *= self.warm_start
        return lam0

    def step(self, trace: bool = False) -> StepReport:
        """One step; `trace`: record the residual after every iteration (slower)."""
        if self.world.frictional:
            return self._step_frictional(trace)
        w = self.world
        h = float(w.dt)
        planar = w.planar
        t0 = time.perf_counter()
        blocks = self._blocks()
        v_pred = np.empty_like(w.v)
        # Drag decays the velocity exactly over the step (e^(-c h)), so any c >= 0 is stable.
        (predict if blocks == 1 else blocked_predict)(w.v, w.gravity, h,
                                                      math.exp(-w.damping * h), planar, v_pred)
        fixed = self.fixed_marbles()
        if fixed.size:
            # A fixed marble is a body of infinite mass: gravity and impulses cannot move it.
            v_pred[fixed] = 0.0
        contacts = self.collider.collide(w.x, v_pred, w.radius, h, blocks)
        if fixed.size:
            contacts = drop_inert(contacts, w.inv_mass)
        contacts = stabilised(contacts, self.stabilise)
        t1 = time.perf_counter()
        order = self._solve_order(blocks)
        body_a, body_b, inv_mass, v_local = contacts.body_a, contacts.body_b, w.inv_mass, v_pred
        if order is not None:
            body_a, body_b = relabel(order, body_a, body_b)
            inv_mass, v_local = gathered(w.inv_mass, order), gathered(v_pred, order)
        problem = ContactProblem(body_a, body_b, contacts.normal, contacts.gap, inv_mass, v_local,
                                 h, contacts.key, contacts.partition)
        lam0 = self._initial_impulses(contacts)
        t2 = time.perf_counter()
        result = self.method.solve(problem, lam0, self._by_trace[bool(trace)])
        t3 = time.perf_counter()
        v = np.empty_like(v_pred)
        # Straight into the world's rows; the impulses are summed in the step's numbering.
        args = (problem.body_a, problem.body_b, problem.normal, problem.inv_mass,
                np.ascontiguousarray(result.lam, dtype=np.float64), v_local, h, planar, w.x, v,
                v if order is None else np.empty_like(v_pred),
                WORLD_ORDER if order is None else order)
        if contacts.partition is None:
            integrate(*args)
        else:
            blocked_integrate(*args, *contacts.partition)
        w.v = v
        if self._spinning:
            # Without friction nothing exerts a torque: spins only decay with the drag.
            w.omega *= math.exp(-w.damping * h)
            self._rotate(blocks)
        return self._finish(problem, contacts, result, 1, (t0, t1, t2, t3), order)

    @property
    def problem(self):
        """The last step's contact problem in the world's numbering (None before a step)."""
        if self._order is None or self._problem is None:
            return self._problem
        if self._world_problem is None:
            self._world_problem = world_numbered(self._problem, self._order)
        return self._world_problem

    def _solve_order(self, blocks: int) -> np.ndarray | None:
        """The marble order this step solves in (solver/locality.py): the collider's, block by
        block; None for the world's own."""
        if not locality.wanted(self.world.n, blocks):
            return None
        return self.collider.block_order()

    def _finish(self, problem, contacts: Contacts, result: SolveResult, rows: int,
                marks: tuple[float, float, float, float],
                order: np.ndarray | None = None) -> StepReport:
        """Keep what the next step and the caller need; the timings of the phases."""
        self.world.time += float(self.world.dt)
        self._problem, self._order, self._world_problem = problem, order, None
        self.lam = result.lam
        self._prev_keys = contacts.key
        self._prev_lam = result.lam
        self._prev_rows = rows
        self.steps += 1
        t0, t1, t2, t3 = marks
        t4 = time.perf_counter()
        timings = {"collide": t1 - t0, "assemble": t2 - t1, "solve": t3 - t2,
                   "integrate": t4 - t3, "total": t4 - t0}
        return StepReport(timings, contacts.m, result, self.method.name)

    @property
    def blocks(self) -> int:
        """The blocks (and threads) a step of the world as it is uses: 1 is the serial core."""
        return blocks_for(self.world.n, self.threads)

    def _blocks(self) -> int:
        """Blocks of this step (parallel.blocks_for), with Numba's threads set to match."""
        blocks = self.blocks
        # Also for one block when the step renumbers: its copies into and out of the grid's
        # numbering are parallel kernels, which then run on one thread, as `threads=1`
        # promises (a small serial step skips the microsecond this costs).
        if blocks > 1 or locality.wanted(self.world.n):
            activate(blocks)
        return blocks

    def _rotate(self, blocks: int) -> None:
        """The orientations turned by the spins over the step, in parallel in blocks."""
        w = self.world
        if blocks == 1:
            rotate(w.orientation, w.omega, float(w.dt))
        else:
            blocked_rotate(w.orientation, w.omega, float(w.dt), blocks)

    @property
    def _spinning(self) -> bool:
        return spinning(self.world.omega)

    def _step_frictional(self, trace: bool) -> StepReport:
        """The step with friction: 3 rows per contact (6 with rolling or spinning resistance),
        linear and angular velocities, orientations integrated."""
        registry.check_friction(self.method.name, True)
        w = self.world
        h = float(w.dt)
        planar = w.planar
        t0 = time.perf_counter()
        blocks = self._blocks()
        decay = math.exp(-w.damping * h)
        v_pred = np.empty_like(w.v)
        (predict if blocks == 1 else blocked_predict)(w.v, w.gravity, h, decay, planar, v_pred)
        fixed = self.fixed_marbles()
        if fixed.size:
            v_pred[fixed] = 0.0
        V_pred = np.empty((w.n, 6))
        if blocks == 1:
            predict_spin(v_pred, w.omega, decay, planar, self._fixed_mask, V_pred)
        else:
            blocked_predict_spin(v_pred, w.omega, decay, planar, self._fixed_mask, V_pred,
                                 blocks)
        contacts = self.collider.collide(w.x, v_pred, w.radius, h, blocks)
        if fixed.size:
            contacts = drop_inert(contacts, w.inv_mass)
        contacts = stabilised(contacts, self.stabilise)
        t1 = time.perf_counter()
        rows = ROWS_ROLLING if max(w.mu_roll, w.mu_spin) > 0.0 else ROWS_SLIDING
        mu, mu_roll, mu_spin = contact_coefficients(contacts.body_a, w.mu, w.mu_wall, w.mu_roll,
                                                    w.mu_spin)
        order = self._solve_order(blocks)
        body_a, body_b, radius, inv_mass, V_local = (contacts.body_a, contacts.body_b, w.radius,
                                                     w.inv_mass, V_pred)
        if order is not None:
            body_a, body_b = relabel(order, body_a, body_b)
            radius, inv_mass, V_local = (gathered(w.radius, order), gathered(w.inv_mass, order),
                                         gathered(V_pred, order))
        problem = FrictionalProblem(body_a, body_b, contacts.normal, contacts.gap, radius,
                                    inv_mass, V_local, h, mu, mu_roll, mu_spin, rows, contacts.key,
                                    contacts.partition)
        lam0 = self._initial_impulses(contacts, rows)
        t2 = time.perf_counter()
        result = self.method.solve(problem, lam0, self._by_trace[bool(trace)])
        t3 = time.perf_counter()
        dV = problem.velocity_change(result.lam)
        v = np.empty_like(v_pred)
        if order is None and blocks == 1:
            integrate_spin(V_pred, dV, h, planar, w.x, v, w.omega)
        else:
            # Renumbered (or in blocks): straight into the world's rows, over `blocks` shares.
            blocked_integrate_spin(V_local, dV, h, planar, w.x, v, w.omega, blocks,
                                   WORLD_ORDER if order is None else order)
        w.v = v
        self._rotate(blocks)
        return self._finish(problem, contacts, result, rows, (t0, t1, t2, t3), order)


def max_penetration(world: World) -> float:
    """Deepest overlap (m, >= 0) among marbles and walls at the current positions."""
    collider = Collider(container_geometry(world.container))
    contacts = collider.collide(world.x, np.zeros_like(world.v), world.radius, world.dt)
    return float(max(0.0, -contacts.gap.min())) if contacts.m else 0.0
