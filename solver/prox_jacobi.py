"""Proximal fixed point in Jacobi form (Erleben; SOLVERS.md §4): every contact from the same
iterate, λ <- max(0, λ - R (A λ + b)), with the adaptive r-factor of `prox`; the rejection rule
is what keeps it from diverging on piles where undamped projected Jacobi does.
One iteration = one attempted iterate: one product with A, none for a retry after a rejection."""
from __future__ import annotations

from .method import Method
from .prox import PARAMS, solve_jacobi

METHOD = Method("prox-jacobi", "Proximal Jacobi", solve_jacobi,
                "Erleben's prox fixed point, all-at-once form, adaptive r (blocked = local: "
                "contacts are frictionless)", PARAMS)
