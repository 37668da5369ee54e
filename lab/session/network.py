"""The contact network of the last step (the force chains of granular physics) and what a
clicked marble shows: Qt-free, arrays in, arrays out.

Every contact of the last step's problem is a segment between the two marbles' centres (a
marble against the container: from its centre to the contact point on the wall); its width
and colour grow with the contact's normal impulse, in units of a marble's weight times the
time step (lab.session.colours.IMPULSE_SCALE is the hottest). The normal impulses are λ itself for a
frictionless problem and every `rows`-th entry of λ (normal, then tangents, ...) for a
frictional one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.world import World

from .colours import IMPULSE_SCALE, contact_slip, heat

# Ribbon widths, as fractions of the smallest marble radius: the weakest contact drawn, the
# strongest (at IMPULSE_SCALE and above).
WIDTH_RANGE = (0.06, 0.7)
# With the network shown the marbles are drawn at this fraction of their radius, so that the
# chains inside a pile are not hidden by the marbles around them.
MARBLE_SCALE = 0.3


def normal_impulses(problem, lam: np.ndarray) -> np.ndarray:
    """(m,) N s: the normal impulse of each contact of `problem` given its solution `lam`
    (empty when the problem is missing or `lam` does not belong to it)."""
    if problem is None or problem.m == 0:
        return np.zeros(0)
    rows = int(problem.rows)
    lam = np.asarray(lam, dtype=np.float64)
    if lam.size != problem.m * rows:
        return np.zeros(0)
    return lam[0::rows] if rows > 1 else lam


def impulse_unit(world: World) -> float:
    """N s: a typical marble's weight times dt (the mean finite mass), the network's unit."""
    mass = world.mass[np.isfinite(world.mass)]
    weight = float(np.abs(world.gravity[2])) * (float(mass.mean()) if mass.size else 1.0)
    return max(weight * float(world.dt), 1e-300)


def contact_network(problem, lam: np.ndarray, world: World
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(ends (m, 2, 3) m, normal impulse (m,) N s) of every contact of the last step, at the
    marbles' positions now: marble a's centre (or, against the container, the contact point
    on the wall) to marble b's centre."""
    impulse = normal_impulses(problem, lam)
    if impulse.size == 0:
        return np.zeros((0, 2, 3)), impulse
    a, b = problem.body_a, problem.body_b
    ends = np.empty((impulse.size, 2, 3))
    ends[:, 1] = world.x[b]
    wall = a < 0
    ends[:, 0] = world.x[np.maximum(a, 0)]
    # The normal points from a to b: the wall's contact point is r_b behind b's centre.
    ends[wall, 0] = world.x[b[wall]] - world.radius[b[wall], None] * problem.normal[wall]
    return ends, impulse


def network_style(impulse: np.ndarray, world: World) -> tuple[np.ndarray, np.ndarray]:
    """(width (m,) m, colour (m, 3) float32 RGB) of the contacts' ribbons: both grow with the
    impulse over IMPULSE_SCALE units (impulse_unit); width as the square root, so that weak
    chains stay visible."""
    share = np.clip(impulse / (IMPULSE_SCALE * impulse_unit(world)), 0.0, 1.0)
    lo, hi = WIDTH_RANGE
    radius = float(world.radius.min()) if world.n else 1.0
    return radius * (lo + (hi - lo) * np.sqrt(share)), heat(share)


@dataclass(frozen=True)
class CardContact:
    """One contact of a clicked marble in the last step's problem: other, the body on the other
    side (a marble's index, -1 for the container); normal, its normal impulse (N s); tangential,
    the length of its tangential (friction) impulse (N s, 0 without friction); gap, the gap the
    step's problem had (m, negative: an overlap); slip, the speed at which the two surfaces
    slide over each other after the step (m/s, lab.session.colours.contact_slip)."""

    other: int
    normal: float
    tangential: float
    gap: float
    slip: float

    def row(self) -> str:
        who = "wall" if self.other < 0 else f"#{self.other}"
        return " ".join([f"{who:<5}"] + [f"{v:>9.3g}" for v in (self.normal, self.tangential,
                                                                 1e3 * self.gap, self.slip)])


CARD_ROWS = 12  # contacts listed on a card at most, the strongest first
CARD_HEADER = " ".join([f"{'with':<5}"] + [f"{h:>9}" for h in ("λn N s", "|λt| N s", "gap mm",
                                                                   "slip m/s")])


@dataclass(frozen=True)
class MarbleCard:
    """What a clicked marble shows: index; speed (m/s); contacts of the last step; impulse:
    the sum of their normal impulses (N s), and that in units of its weight times dt; table:
    its contacts (CardContact), the strongest normal impulse first."""

    index: int
    speed: float
    contacts: int
    impulse: float
    weights: float
    table: tuple[CardContact, ...] = ()

    def text(self) -> str:
        lines = [f"marble {self.index}", f"speed {self.speed:.3g} m/s",
                 f"{self.contacts} contacts", f"Σ normal impulse {self.impulse:.3g} N s",
                 f"  = {self.weights:.3g} × its weight × dt"]
        if self.table:
            lines += [CARD_HEADER] + [c.row() for c in self.table[:CARD_ROWS]]
            if len(self.table) > CARD_ROWS:
                lines.append(f"… {len(self.table) - CARD_ROWS} more")
        return "\n".join(lines)


def card_contacts(world: World, problem, lam: np.ndarray, index: int
                  ) -> tuple[CardContact, ...]:
    """The contacts of marble `index` in `problem` solved by `lam` (CardContact), strongest
    normal impulse first; none when `lam` does not belong to the problem."""
    impulse = normal_impulses(problem, lam)
    if impulse.size == 0:
        return ()
    mine = np.flatnonzero((problem.body_a == index) | (problem.body_b == index))
    rows = int(problem.rows)
    per_contact = np.asarray(lam, dtype=np.float64).reshape(problem.m, rows)
    tangential = (np.hypot(per_contact[:, 1], per_contact[:, 2]) if rows >= 3
                  else np.zeros(problem.m))
    slip = contact_slip(problem, lam, world)
    other = np.where(problem.body_a[mine] == index, problem.body_b[mine], problem.body_a[mine])
    order = np.argsort(-impulse[mine], kind="stable")
    return tuple(CardContact(int(other[k]), float(impulse[c]), float(tangential[c]),
                             float(problem.gap[c]), float(slip[c]))
                 for k, c in ((k, mine[k]) for k in order))


def marble_card(world: World, problem, lam: np.ndarray, index: int) -> MarbleCard | None:
    """The card of marble `index` after the last step (None for no such marble)."""
    if not 0 <= index < world.n:
        return None
    impulse = normal_impulses(problem, lam)
    mine = np.zeros(0, dtype=bool)
    if impulse.size:
        mine = (problem.body_a == index) | (problem.body_b == index)
    total = float(impulse[mine].sum()) if impulse.size else 0.0
    mass = float(world.mass[index])
    weight_dt = float(np.abs(world.gravity[2])) * mass * float(world.dt)
    weights = total / weight_dt if np.isfinite(mass) and weight_dt > 0 else float("nan")
    return MarbleCard(index, float(np.linalg.norm(world.v[index])), int(mine.sum()), total,
                      weights, card_contacts(world, problem, lam, index))
