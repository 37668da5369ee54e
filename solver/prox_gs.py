"""Proximal fixed point in Gauss-Seidel form (Erleben; SOLVERS.md §4): sweep the contacts with
the freshest velocities, λ_c <- max(0, λ_c - R_c e_c), with the adaptive r-factor of `prox`.
With r=local, adapt=0 and frictionless contacts it is exactly PSOR with ω = γ.
One iteration = one sweep (accepted or rejected), the cost of one product with A."""
from __future__ import annotations

from .method import Method
from .prox import PARAMS, solve_gauss_seidel

METHOD = Method("prox-gs", "Proximal Gauss-Seidel", solve_gauss_seidel,
                "Erleben's prox fixed point, sweep form, adaptive r (blocked = local: "
                "contacts are frictionless)", PARAMS)
