"""A frozen problem solved on the GPU (what `compare --device cuda` runs): every GPU method's
traced curve and impulses equal the CPU method's on the same problem, with and without
friction; an explicit W is refused in one line."""
import numpy as np
import pytest

import scenes
from solver.cuda.frozen import FrozenSolver
from solver.explicit import MatrixProblem
from solver.methods import registry
from solver.params import ParamError
from solver.step import Simulation


def frozen(params):
    sim = Simulation(scenes.build("bowl", dict(params)), registry.settings("pgs", 20, False),
                     1.0)
    for _ in range(25):
        sim.step()
    return sim.problem.copy()


@pytest.fixture(scope="module", params=[{"n": 30}, {"n": 24, "mu": 0.5, "mu_wall": 0.5}],
                ids=["frictionless", "friction"])
def problem(request):
    return frozen(request.param)


@pytest.mark.parametrize("name", registry.on_device("cuda"))
def test_the_gpu_curve_is_the_cpus(name, problem):
    settings = registry.settings(name, 8, True, {"abs_tol": 0.0})
    rng = np.random.default_rng(2)
    lam0 = rng.uniform(0.0, 1e-3, problem.size) * (np.arange(problem.size) % problem.rows == 0)
    want = registry.get(name).solve(problem.copy(), lam0.copy(), settings)
    got = FrozenSolver(name).solve(problem, lam0.copy(), settings)
    assert problem.m > 5 and got.iterations == want.iterations == 8
    np.testing.assert_allclose(got.trace, want.trace, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(got.lam, want.lam, rtol=0.0, atol=1e-12 * np.abs(want.lam).max())
    assert got.status == want.status and got.info.keys() == want.info.keys()


def test_an_explicit_w_is_refused():
    problem = frozen({"n": 12, "mu": 0.5})
    with pytest.raises(ParamError, match="no marbles"):
        FrozenSolver("jacobi").solve(MatrixProblem.from_problem(problem),
                                     np.zeros(problem.size), registry.settings("jacobi", 2))
