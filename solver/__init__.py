"""Numerics of the marble simulator: world state, collision, the contact problem, the solvers
(one module each, see `registry`), stepping and snapshot I/O. Imports numpy and numba only."""
