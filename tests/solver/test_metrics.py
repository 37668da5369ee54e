"""The convergence measures and exit statuses."""
import numpy as np
import pytest

from solver import metrics


def test_measures_are_zero_at_a_solution_only():
    lam = np.array([0.0, 2.0, 1.0])
    e = np.array([3.0, 0.0, 0.0])
    assert metrics.all_measures(lam, e, e + 1)["natural_map"] == 0.0
    assert metrics.fischer_burmeister(lam, e) == pytest.approx(0.0, abs=1e-15)
    bad = metrics.parts(np.array([-1.0, 1.0]), np.array([1.0, -2.0]))
    assert bad == {"negativity": 1.0, "penetration": 2.0, "complementarity": 3.0}


def test_natural_map_is_the_worst_violation_of_either_sign():
    lam = np.array([0.0, 0.5, 2.0, 0.0])
    e = np.array([1.0, 0.0, -0.25, -3.0])  # the last contact pulls: a violation of 3 m/s
    assert metrics.natural_map(lam, e) == 3.0
    assert metrics.all_measures(lam, e, np.array([6.0, 0, 0, 0]))["scaled"] == 0.5
    assert metrics.STATUSES == ("absolute", "relative", "max_iterations", "divergence")
