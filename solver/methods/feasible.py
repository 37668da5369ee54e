"""Impulses put back in their admissible set: what every solve hands back is a contact force
that pushes (λ_n >= 0) and, with friction, lies in Coulomb's cone ‖λ_t‖ <= μ λ_n (with rolling
and spinning resistance, ‖λ_r‖ <= μ_roll λ_n and |λ_s| <= μ_spin λ_n). A method whose iterates
leave the set (Newton's, by a full step; any by rounding) has its answer projected here, where
it is made, rather than refused by whoever reads it later (a state file, a warm start).

Two reaches: `normal` projects only the contacts whose normal impulse is negative (onto the
cone, whose points lie in every law's set, the box law's too), which the driver does for every
method; `cone` also those whose friction leaves the cone by more than ROUNDING, for methods that
solve Coulomb's cone law. A contact inside the set is never written, so an answer that was
already feasible keeps its bits.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..coulomb import project_cone
from .laws import project_composite

# A friction impulse past its bound by less than this fraction of the bound is rounding (the
# disk's projection scales by radius / norm, whose result can sit an ulp or two outside).
ROUNDING = 8.0 * float(np.finfo(np.float64).eps)
_NONE = np.zeros(0)


@njit(inline="always", cache=True, nogil=True)
def _outside(lam, k, rows, mu, mu_roll, mu_spin, cone):
    """Whether contact k's impulses (rows from k) leave the admissible set (module docstring)."""
    n = lam[k]
    if not n >= 0.0:
        return True
    if rows == 1 or not cone:
        return False
    slack = 1.0 + ROUNDING
    if lam[k + 1] ** 2 + lam[k + 2] ** 2 > (slack * mu * n) ** 2:
        return True
    if rows == 3:
        return False
    return (lam[k + 3] ** 2 + lam[k + 4] ** 2 > (slack * mu_roll * n) ** 2
            or abs(lam[k + 5]) > slack * mu_spin * n)


@njit(cache=True, nogil=True)
def project_outside(lam, rows, laws, cone):
    """Project in place every contact of λ (m * rows,) outside its admissible set; laws = (mu,
    mu_roll, mu_spin), (m,) each (empty without friction); cone: the friction bound too, not
    only the normal's sign. Returns how many contacts moved."""
    mu, mu_roll, mu_spin = laws
    moved = 0
    for c in range(lam.shape[0] // rows):
        k = c * rows
        if rows == 1:
            if not lam[k] >= 0.0:
                lam[k] = 0.0
                moved += 1
            continue
        if not _outside(lam, k, rows, mu[c], mu_roll[c], mu_spin[c], cone):
            continue
        moved += 1
        if rows == 3:
            lam[k], lam[k + 1], lam[k + 2] = project_cone(lam[k], lam[k + 1], lam[k + 2], mu[c])
        else:
            (lam[k], lam[k + 1], lam[k + 2], lam[k + 3], lam[k + 4],
             lam[k + 5]) = project_composite((lam[k], lam[k + 1], lam[k + 2], lam[k + 3],
                                              lam[k + 4], lam[k + 5]),
                                             (mu[c], mu_roll[c], mu_spin[c]))
    return moved


def project_answer(problem, lam: np.ndarray, cone: bool) -> int:
    """Put `problem`'s impulses λ (problem.size,) in place into the admissible set (module
    docstring; cone: Coulomb's bound too); returns the contacts moved (0: λ untouched)."""
    if problem.m == 0:
        return 0
    laws = problem.laws if problem.rows > 1 else (_NONE, _NONE, _NONE)
    return int(project_outside(lam, problem.rows, laws, cone))
