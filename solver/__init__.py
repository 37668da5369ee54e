"""Numerics of the marble simulator: world state, collision, the contact problem, the solvers
(one module each, see `registry`), stepping and snapshot I/O. Imports numpy and numba only."""
from . import kernel_cache

# Before any kernel is decorated: Numba's cache must see edits of the modules a kernel inlines.
kernel_cache.install()
