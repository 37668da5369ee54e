"""A frozen contact problem (a host ContactProblem or FrictionalProblem: a comparison's, a saved
one) solved on the GPU by the same driver and kernels as a step's solve, so `compare` and
`solve` put the GPU's curves beside the CPU's on one problem.

The problem's arrays go up as they are (its A's factors, diagonal, right-hand side, laws, and
the contacts by marble in contact order): the GPU solves exactly the CPU's numbers, in the
problem's own numbering. Uploading is not timed; the driver times the iterations only.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..methods import registry
from ..methods.driver import SolveResult
from ..options import SolveSettings, check_device
from ..params import ParamError
from ..problem import contact_graph
from .backend import DeviceProblem, _Buffers
from .runtime import cuda


class _Holder:
    """What a DeviceProblem reads of its backend: the persistent buffers."""

    def __init__(self):
        self.buffers = _Buffers()


def upload(problem) -> DeviceProblem:
    """`problem` (host, geometric) as a DeviceProblem whose numbering is the problem's."""
    if problem.explicit:
        raise ParamError("an explicit W (an FCLIB file) has no marbles for the GPU's kernels; "
                         "solve it with --device cpu")
    p = problem
    out = DeviceProblem()
    out.backend = _Holder()
    out.n, out.m, out.rows, out.size = p.n, p.m, p.rows, p.size
    out.host_problem = p

    def up(array, dtype=np.float64):
        return cuda.to_device(np.ascontiguousarray(array, dtype=dtype))

    start, items, sign = contact_graph(p.body_a, p.body_b, p.n)
    out.csr = (up(start, np.int64), up(items, np.int64), up(sign, np.int64),
               cuda.device_array(max(p.n, 1), dtype=np.int64))
    ends = (up(p.body_a, np.int64), up(p.body_b, np.int64), up(p.normal))
    if p.frictional:
        out.A = (*ends, up(p.t1), up(p.t2), up(p.arm_a), up(p.arm_b), up(p.inv_mass),
                 up(p.inv_inertia), int(p.rows))
        out.laws = (up(p.mu), up(p.mu_roll), up(p.mu_spin))
    else:
        out.A = (*ends, up(p.inv_mass))
        out.laws = None
    out.diag = up(p.diag)
    out.rhs = up(p.rhs)
    return out


class FrozenSolver:
    """Method `name` on the GPU with a registered method's `solve(problem, λ0, settings)`: λ0
    and the result's λ on the host. The last problem uploaded is kept, so the timing runs of
    a comparison upload it once."""

    def __init__(self, name: str):
        check_device(registry.settings(name), "cuda")
        self.name = name
        self._source = None
        self._device = None

    def solve(self, problem, lam0: np.ndarray, settings: SolveSettings) -> SolveResult:
        if settings.observer is not None:
            raise ParamError("the GPU's solve keeps its iterates on the GPU: no observer")
        if self._source is not problem:
            self._device, self._source = upload(problem), problem
        lam = cuda.to_device(np.ascontiguousarray(lam0, dtype=np.float64))
        result = registry.get(self.name).solve(self._device, lam, settings)
        return dataclasses.replace(result, lam=lam.copy_to_host())
