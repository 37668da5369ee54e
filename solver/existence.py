"""Whether a contact problem has a solution: the strict-feasibility test of Acary, Cadoux,
Lemaréchal and Malick (2011, "A formulation of the linear discrete Coulomb friction problem via
convex optimization"), decided by two linear programs (docs/friction-lab.md, existence).

The problem u = W λ + q with λ in the Coulomb cones K has a solution if some velocity u = W x + q
(x anywhere: W = H M⁻¹ Hᵀ has the range of H, so this is u = H v + w for every generalised
velocity v) lies in the interior of the dual cone K*. The condition is sufficient, not
necessary: where it fails a solution may still exist. Per contact, with λ_n ≥ 0 and
‖λ_t‖ ≤ μ λ_n, ‖λ_r‖ ≤ μ_roll λ_n, |λ_s| ≤ μ_spin λ_n sharing λ_n, the smallest u·λ over
λ_n = 1 takes each part against its own: K* = {u_n ≥ μ‖u_t‖ + μ_roll‖u_r‖ + μ_spin|u_s|}
(u_n ≥ 0 without friction).

A linear program cannot hold a disk's norm, so each is replaced by a regular polygon of `sides`
sides with facet normals a_k: max_k a_k·v ≤ ‖v‖ ≤ max_k a_k·v / cos(π/sides). The first (the
polygon around the disk) relaxes the cone, the second (the polygon inside it) tightens it, so
the largest margin t with

    u_n − μ ‖u_t‖ − μ_roll ‖u_r‖ − μ_spin |u_s| ≥ t V   for every contact, t ≤ 1

is bracketed: inner ≤ t ≤ outer. A positive inner margin proves strict feasibility, hence a
solution; an outer margin ≤ 0 proves the condition fails. V = max |q| over the tested rows
(m/s; 1 m/s for q = 0) makes t a share of the problem's own speeds, and t ≤ 1 bounds the
programs: a direction of W's range inside int K* makes the margin unbounded, and t = 1 says
only that it is at least V. Contacts whose normal row has W_nn = 0 (both ends fixed; no impulse
reaches them) are left out, as the solvers leave them, unless their normal row of W is zero
and q_n < 0: u_n = q_n < 0 whatever the impulses, so no solution exists, and the test says so
without a program.

The programs share one time budget (BUDGET); one that runs out leaves its margin unknown and
says what is known of the other. Front ends skip the test above LIMIT contacts.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .friction import jacobian_rows
from .lazy import LazyModule
from .params import Param
from .problem import FRICTIONAL, FRICTIONLESS

sparse = LazyModule("scipy.sparse")
_optimize = LazyModule("scipy.optimize")

SIDES = 16  # cos(π/16) = 0.981: the polygons' norms within 2 % of the disk's
# A margin at or below this share of V is zero: HiGHS's feasibility tolerance is 1e-7 on
# rows of order 1, and the programs' rows are scaled to order 1.
TOLERANCE = 1e-6
# The bowl of 350 (1048 contacts) takes 5-10 s on a busy machine (its FCLIB file, whose W is
# denser, 35-41 s); 3000 contacts took minutes.
BUDGET = Param("existence_seconds", 30.0, float, "time budget of the existence test's linear "
               "programs, both together; one that runs out leaves its margin unknown",
               unit="s", lo=0.0, lo_open=True, hi=86400.0)
LIMIT = Param("existence_contacts", 2000, int, "the most contacts the existence test runs on; "
              "above it the test is skipped with a line saying so", lo=0, hi=10**9)
SECONDS = BUDGET.default
CAP = 1.0  # the margin's upper bound (a share of V): reached, it is unbounded

EXISTS = "exists"
FAILS = "condition fails"
UNDECIDED = "undecided"
NONE = "no solution"
MEANING = {EXISTS: "strictly feasible: a solution exists",
           NONE: "no solution exists",
           FAILS: "not strictly feasible (the condition is sufficient, not necessary: a "
                  "solution may still exist)",
           UNDECIDED: "between the polygons: neither proved"}


@dataclass(frozen=True)
class Existence:
    """The test's result. inner, outer: the largest margin with the polygons inside and around
    the disks, each a share of `scale` (1/1, at most CAP; nan where its program failed);
    scale: V (m/s); contacts: the contacts tested; inert: those left out (W_nn = 0); sides:
    the polygons'; seconds: both programs' wall time; message: HiGHS's where a program did not
    finish, else ''; checked: the exact margin (disks, not polygons) of the velocity the inner
    program found, a share of `scale`, at least `inner` but for rounding (nan: none found)."""

    verdict: str
    inner: float
    outer: float
    scale: float
    contacts: int
    inert: int
    sides: int
    seconds: float
    message: str = ""
    checked: float = np.nan
    blocked: int = -1  # a contact whose normal row of W is zero and q_n < 0 (NONE), else -1
    blocked_q: float = np.nan  # its q_n (m/s)

    def text(self) -> str:
        """One line for a report, the same every run (the seconds are in as_dict)."""
        left = f", {self.inert} inert left out" if self.inert else ""
        note = f"; {self.message}" if self.message else ""
        if self.verdict == NONE:
            return (f"existence: {NONE}: contact {self.blocked}'s normal row "
                    f"of W is zero and q_n = {self.blocked_q:.6g} m/s < 0, so u_n < 0 whatever "
                    f"the impulses ({self.contacts + self.inert} contacts)")
        low, high = np.isfinite(self.inner), np.isfinite(self.outer)
        if self.inner >= CAP - TOLERANCE:
            margin = f"margin at least {CAP:g} × {self.scale:.3e} m/s (the programs' cap)"
        elif low and high:
            margin = (f"margin between {self.inner:.3e} and {self.outer:.3e} × {self.scale:.3e} "
                      "m/s")
        elif low:
            margin = f"margin at least {self.inner:.3e} × {self.scale:.3e} m/s (no upper bound)"
        elif high:
            margin = f"margin at most {self.outer:.3e} × {self.scale:.3e} m/s (no lower bound)"
        else:
            margin = "no margin found within the time budget"
        return (f"existence: {self.verdict}, {MEANING[self.verdict]}; {margin} "
                f"({self.contacts} contacts{left}, {self.sides}-gons){note}")

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "inner_margin": _finite(self.inner),
                "outer_margin": _finite(self.outer), "scale": self.scale,
                "contacts": self.contacts, "inert": self.inert, "sides": self.sides,
                "seconds": self.seconds, "message": self.message,
                "checked_margin": _finite(self.checked),
                "blocked_contact": None if self.blocked < 0 else self.blocked}


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def existence(problem, sides: int = SIDES, seconds: float = SECONDS,
              progress=None) -> Existence:
    """The strict-feasibility test of any contact problem (rows 1, 3 or 6; geometry or an
    explicit W): its W from `problem.coo()`, q = problem.rhs, the coefficients problem.mu,
    mu_roll, mu_spin (m,) where it has rows for them. seconds: both programs' time budget
    (one that runs out leaves its margin nan and the verdict undecided); progress: called with
    a line before each program (None: silent)."""
    if sides < 3:
        raise ValueError(f"sides: a polygon has at least 3, got {sides}")
    t0 = time.perf_counter()
    m, rows = problem.m, problem.rows
    diag = np.asarray(problem.diag, dtype=np.float64)
    live = diag.reshape(m, rows)[:, 0] > 0.0
    tested = np.flatnonzero(np.repeat(live, rows))
    rhs = np.asarray(problem.rhs, dtype=np.float64)
    q = rhs[tested]
    scale = float(np.max(np.abs(q), initial=0.0)) or 1.0
    if not np.isfinite(scale):
        raise ValueError("q is not finite: no velocity to test")
    blocked = _blocked(problem, live, rhs)
    if blocked >= 0:
        return Existence(NONE, -np.inf, -np.inf, scale, int(live.sum()), int(m - live.sum()),
                         int(sides), time.perf_counter() - t0, blocked=blocked,
                         blocked_q=float(rhs[rows * blocked]))
    if tested.size == 0:  # nothing to push apart: λ = 0 solves it
        return Existence(EXISTS, CAP, CAP, scale, 0, int(m), int(sides),
                         time.perf_counter() - t0, checked=np.inf)
    tell = progress or (lambda line: None)
    tell(f"existence: {tested.size // rows} contacts, the polygons inside the cones "
         f"(budget {seconds:g} s)")
    velocity = _reach(problem, tested)
    laws = _laws(problem, live)
    inner, message, y = _margin(velocity, q / scale, laws, rows, sides, True, seconds)
    # The proof rests on the velocity found, not on HiGHS's tolerances: its exact margin, with
    # the disks' own norms, must be positive too.
    checked = np.nan if y is None else _exact(velocity @ y + q / scale, laws, rows)
    outer = inner
    left = seconds - (time.perf_counter() - t0)
    if not inner >= CAP - TOLERANCE and left <= 0.0:
        outer = np.nan
        message = "; ".join(s for s in (message, f"time budget of {seconds:g} s spent") if s)
    elif not inner >= CAP - TOLERANCE:  # else the outer margin, at least the inner, is CAP too
        tell(f"existence: the polygons around the cones ({left:.1f} s of the budget left)")
        outer, more, _ = _margin(velocity, q / scale, laws, rows, sides, False, left)
        message = "; ".join(dict.fromkeys(s for s in (message, more) if s))
    proved = inner > TOLERANCE and checked > TOLERANCE
    verdict = EXISTS if proved else FAILS if outer <= TOLERANCE else UNDECIDED
    return Existence(verdict, inner, outer, scale, int(live.sum()), int(m - live.sum()),
                     int(sides), time.perf_counter() - t0, message, checked)


def _blocked(problem, live: np.ndarray, rhs: np.ndarray) -> int:
    """The first contact no impulse reaches (W_nn = 0) whose whole normal row of W is zero and
    whose q_n < 0, else -1. Over marbles W_nn = 0 means both ends are fixed, so the row is zero;
    an explicit W (which need not be semidefinite) is checked row by row."""
    rows = problem.rows
    q_n = rhs.reshape(-1, rows)[:, 0]
    suspects = np.flatnonzero(~live & (q_n < 0.0))
    if suspects.size == 0:
        return -1
    if getattr(problem, "kind", None) in (FRICTIONAL, FRICTIONLESS):
        return int(suspects[0])
    r, _, v = problem.coo()
    reached = np.zeros(problem.size, dtype=bool)
    reached[r[v != 0.0]] = True
    zero = ~reached[rows * suspects]
    return int(suspects[zero][0]) if zero.any() else -1


def _reach(problem, tested: np.ndarray):
    """R (len(tested), k) sparse with {u = R y + q} = {u = W x + q} on the tested rows, its
    columns scaled to largest entry 1. A problem over marbles gives J over the marbles that
    move (range W = range J M⁻¹ for W = J M⁻¹ Jᵀ), a dozen entries a row where W has a
    hundred in a pile, so the programs factor far sparser matrices; an explicit W gives W."""
    kind = getattr(problem, "kind", None)
    if kind == FRICTIONAL:
        Jb, Ja = jacobian_rows(problem)
        rows, width = problem.rows, 6
        moves = problem.inv_mass > 0.0
    elif kind == FRICTIONLESS:
        Jb = problem.normal
        Ja = -problem.normal
        rows, width = 1, 3
        moves = problem.inv_mass > 0.0
    else:
        r, c, v = problem.coo()
        R = sparse.csr_matrix((v, (r, c)), shape=(problem.size, problem.size))[tested]
        return _equilibrated(R)
    row = np.arange(problem.size)
    ends = []
    for J, body in ((Jb, problem.body_b), (Ja, problem.body_a)):
        body = np.repeat(body, rows)
        keep = body >= 0
        keep[keep] = moves[body[keep]]
        r = np.repeat(row[keep], width)
        c = (width * body[keep])[:, None] + np.arange(width)
        ends.append((r, c.ravel(), J[keep].ravel()))
    r, c, v = (np.concatenate(part) for part in zip(*ends))
    R = sparse.csr_matrix((v, (r, c)), shape=(problem.size, width * problem.n))[tested]
    return _equilibrated(R)


def _equilibrated(R):
    """R with each column divided by its largest |entry| (empty columns dropped)."""
    R = R.tocsc()
    R.eliminate_zeros()
    big = np.asarray(abs(R).max(axis=0).todense()).ravel()
    used = big > 0.0
    return (R[:, used] @ sparse.diags(1.0 / big[used])).tocsr()


def _laws(problem, live: np.ndarray) -> tuple[np.ndarray, ...]:
    """(mu, mu_roll, mu_spin) of the tested contacts, as many as the problem has rows for."""
    if problem.rows == 1:
        return ()
    names = ("mu",) if problem.rows == 3 else ("mu", "mu_roll", "mu_spin")
    return tuple(np.asarray(getattr(problem, name), dtype=np.float64)[live] for name in names)


def _margin(velocity, q: np.ndarray, laws: tuple, rows: int, sides: int, inscribed: bool,
            seconds: float) -> tuple[float, str, np.ndarray | None]:
    """The largest margin t (a share of V, at most CAP), HiGHS's message if it did not finish
    (t nan then) and the y found (None then). velocity: R (rows m, k) of `_reach`; q: q / V of the tested rows.
    Variables: y (k), u' = u / V (rows m), then per contact a bound on each norm, then t."""
    n_u = q.shape[0]
    m = n_u // rows
    size = velocity.shape[1]
    norms = {1: 0, 3: 1, 6: 3}[rows]
    first = size + n_u  # where the norm bounds start
    t_col = first + norms * m
    cols = t_col + 1
    # u − W' y = q'
    eq = sparse.hstack([-velocity, sparse.identity(n_u), sparse.csr_matrix((n_u, cols - first))])
    blocks = [_margin_rows(m, rows, size, laws, first, t_col, cols)]
    if rows >= 3:
        blocks.append(_disk_rows(m, rows, size, 1, first, cols, sides, inscribed))
    if rows == 6:
        blocks.append(_disk_rows(m, rows, size, 3, first + m, cols, sides, inscribed))
        blocks.append(_abs_rows(m, rows, size, 5, first + 2 * m, cols))
    ub = sparse.vstack(blocks).tocsr()
    cost = np.zeros(cols)
    cost[t_col] = -1.0
    bounds = np.full((cols, 2), np.nan)
    bounds[:, 0], bounds[:, 1] = -np.inf, np.inf
    bounds[t_col, 1] = CAP
    res = _optimize.linprog(cost, A_ub=ub, b_ub=np.zeros(ub.shape[0]), A_eq=eq.tocsr(), b_eq=q,
                  bounds=bounds, method="highs-ipm",
                  options={"time_limit": float(seconds)})
    if res.status != 0:
        return np.nan, f"HiGHS: {res.message}", None
    return float(res.x[t_col]), "", res.x[:size]


def _exact(u: np.ndarray, laws: tuple, rows: int) -> float:
    """min over contacts of u_n − μ‖u_t‖ − μ_roll‖u_r‖ − μ_spin|u_s| for u (rows m,)."""
    u = u.reshape(-1, rows)
    slack = u[:, 0].copy()
    if rows >= 3:
        slack -= laws[0] * np.hypot(u[:, 1], u[:, 2])
    if rows == 6:
        slack -= laws[1] * np.hypot(u[:, 3], u[:, 4]) + laws[2] * np.abs(u[:, 5])
    return float(np.min(slack, initial=np.inf))


def _margin_rows(m: int, rows: int, size: int, laws: tuple, first: int, t_col: int,
                 cols: int):
    """−u_n + μ s_t + μ_roll s_r + μ_spin s_s + t ≤ 0, one row per contact."""
    c = np.arange(m)
    r = [c, c]
    k = [size + rows * c, np.full(m, t_col)]
    v = [np.full(m, -1.0), np.ones(m)]
    for j, coefficient in enumerate(laws):
        r.append(c)
        k.append(first + j * m + c)
        v.append(coefficient)
    return sparse.coo_matrix((np.concatenate(v), (np.concatenate(r), np.concatenate(k))),
                             shape=(m, cols))


def _disk_rows(m: int, rows: int, size: int, offset: int, bound: int, cols: int, sides: int,
               inscribed: bool):
    """(a_k · (u_{offset}, u_{offset+1})) / c − s ≤ 0 for each facet normal a_k and contact, s
    at column bound + contact: c = cos(π/sides) for the polygon inside the disk, 1 around it."""
    angle = 2.0 * np.pi * np.arange(sides) / sides
    # cos(π/2) is 6e-17, not 0: HiGHS would warn of it and drop it
    cos, sin = (np.where(np.abs(f) < 1e-12, 0.0, f) for f in (np.cos(angle), np.sin(angle)))
    c = np.cos(np.pi / sides) if inscribed else 1.0
    contact = np.repeat(np.arange(m), sides)
    facet = np.tile(np.arange(sides), m)
    row = np.arange(m * sides)
    u = size + rows * contact + offset
    r = np.concatenate([row, row, row])
    k = np.concatenate([u, u + 1, bound + contact])
    v = np.concatenate([cos[facet] / c, sin[facet] / c,
                        -np.ones(m * sides)])
    return sparse.coo_matrix((v, (r, k)), shape=(m * sides, cols))


def _abs_rows(m: int, rows: int, size: int, offset: int, bound: int, cols: int):
    """±u_{offset} − s ≤ 0 per contact: s ≥ |u_{offset}|, exactly."""
    contact = np.arange(m)
    row = np.arange(2 * m)
    both = np.concatenate([contact, contact])
    r = np.concatenate([row, row])
    k = np.concatenate([size + rows * both + offset, bound + both])
    v = np.concatenate([np.ones(m), -np.ones(m), -np.ones(2 * m)])
    return sparse.coo_matrix((v, (r, k)), shape=(2 * m, cols))
