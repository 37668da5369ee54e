"""Coulomb's law on the GPU: the projections onto the friction disk and cone and FCLIB's
contact error are solver/coulomb.py's own functions, the same source compiled for this device
(runtime.shared)."""
from __future__ import annotations

from .. import coulomb
from .runtime import shared

project_disk = shared(coulomb.project_disk)
project_cone = shared(coulomb.project_cone)
contact_error = shared(coulomb.contact_error)
