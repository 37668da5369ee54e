"""Projected successive over-relaxation: PGS with λ_c <- max(0, λ_c - ω e_c / A_cc), ω in
(0, 2). Converges for any ω in that range; the sweep kernel is PGS's."""
from __future__ import annotations

from ..params import Param
from .driver import Method
from .pgs import FRICTION, relaxed_solvers

OMEGA = Param("omega", 1.5, float, "relaxation factor ω", lo=0.0, hi=2.0, lo_open=True,
              hi_open=True)


METHOD = Method("psor", "Projected SOR", relaxed_solvers(lambda settings: settings["omega"]),
                "PGS with over-relaxation ω", (OMEGA, FRICTION))
