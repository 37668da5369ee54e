"""Coulomb's law on the GPU (solver/cuda/coulomb.py): the projections and FCLIB's contact error,
the CPU's functions (solver/coulomb.py) compiled for the device, equal the CPU's on points of
every case (on the simulator the CPU's code runs; a GPU compares its own build)."""
import numpy as np

from solver import coulomb
from solver.cuda import coulomb as gc
from solver.cuda.runtime import THREADS, cuda


@cuda.jit
def _projections(z, mu, out):
    for c in range(cuda.grid(1), mu.shape[0], cuda.gridsize(1)):
        out[c, 0], out[c, 1], out[c, 2] = gc.project_cone(z[c, 0], z[c, 1], z[c, 2], mu[c])
        out[c, 3], out[c, 4] = gc.project_disk(z[c, 1], z[c, 2], mu[c] * abs(z[c, 0]))


@cuda.jit
def _errors(lam, e, laws, rows, out):
    for c in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[c] = gc.contact_error(lam, e, c * rows, laws[0][c], laws[1][c], laws[2][c], rows,
                                  True)


def points(m, rows, seed):
    """Impulses and velocities of every kind: inside the cone, outside, in its polar cone."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=m * rows), rng.normal(size=m * rows), rng.uniform(0.0, 1.0, size=m)


def test_the_projections_are_the_cpus():
    m = 3 * THREADS
    z = np.random.default_rng(1).normal(size=(m, 3))
    mu = np.random.default_rng(2).uniform(0.0, 1.5, size=m)
    out = cuda.to_device(np.zeros((m, 5)))
    _projections[3, THREADS](cuda.to_device(z), cuda.to_device(mu), out)
    got = out.copy_to_host()
    cases = set()
    for c in range(m):
        want = coulomb.project_cone(z[c, 0], z[c, 1], z[c, 2], mu[c])
        assert tuple(got[c, :3]) == want
        assert tuple(got[c, 3:]) == coulomb.project_disk(z[c, 1], z[c, 2], mu[c] * abs(z[c, 0]))
        cases.add("inside" if want == tuple(z[c]) else "apex" if want == (0.0, 0.0, 0.0)
                  else "surface")
    assert cases == {"inside", "apex", "surface"}


def test_the_contact_error_is_the_cpus():
    for rows in (3, 6):
        m = 2 * THREADS
        lam, e, mu = points(m, rows, rows)
        laws = (mu, 0.1 * mu, 0.05 * mu)
        out = cuda.to_device(np.zeros(m))
        _errors[2, THREADS](cuda.to_device(lam), cuda.to_device(e),
                            tuple(cuda.to_device(a) for a in laws), rows, out)
        want = [coulomb.contact_error(lam, e, c * rows, laws[0][c], laws[1][c], laws[2][c],
                                      rows, True) for c in range(m)]
        np.testing.assert_array_equal(out.copy_to_host(), want)
