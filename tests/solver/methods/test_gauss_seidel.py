"""Gauss-Seidel in blocks: the parallel sweep is the inline (one-block) sweep over the
partition's order, bit for bit, and it converges to the serial solve's solution of the same
frozen problem."""
from __future__ import annotations

import numpy as np
import pytest

from solver.methods import registry
from solver.methods.gauss_seidel import frictional_sweeps, relaxed_sweeps
from solver.methods.sweeps import CONE, pack
from solver.partition import one_block
from tests.solver.blocks import packed_box, problem_of


@pytest.fixture(scope="module")
def box():
    return packed_box(5000)


@pytest.mark.parametrize("blocks", [2, 3])
def test_a_blocked_sweep_is_the_serial_sweep_in_the_partition_order(box, blocks):
    p = problem_of(box, blocks)
    step = 1.3 / p.diag
    bias = p.gap / p.dt
    lam = [np.zeros(p.m), np.zeros(p.m)]
    v = [p.v_pred.copy(), p.v_pred.copy()]
    relaxed_sweeps(p.A, (bias, step), v[0], lam[0], 5, one_block(p.m))
    relaxed_sweeps(p.A, (bias, step), v[1], lam[1], 5, p.partition)
    assert np.any(lam[0] > 0.0)
    assert np.array_equal(lam[0], lam[1]) and np.array_equal(v[0], v[1])


@pytest.mark.parametrize("rows", [3, 6])
def test_a_blocked_frictional_sweep_is_the_serial_sweep_in_the_partition_order(rows):
    p = problem_of(packed_box(5000, mu=0.5), 2, rows)
    packed = pack(p, 1.0)
    lam = [np.zeros(p.size), np.zeros(p.size)]
    V = [p.V_pred.copy(), p.V_pred.copy()]
    ends, rule = (p.body_a, p.body_b), (CONE, False, p.rows)
    frictional_sweeps(ends, packed, rule, V[0], lam[0], 4, one_block(p.m))
    frictional_sweeps(ends, packed, rule, V[1], lam[1], 4, p.partition)
    assert np.any(lam[0][1::rows] != 0.0)  # tangent impulses: friction acts
    assert np.array_equal(lam[0], lam[1]) and np.array_equal(V[0], V[1])


def _by_key(problem, lam, rows=1):
    order = np.argsort(problem.key)
    return problem.key[order], lam.reshape(-1, rows)[order]


@pytest.mark.parametrize("solver, mu", [("pgs", 0.0), ("psor", 0.0), ("pgs", 0.5)])
def test_blocks_converge_to_the_serial_solution(solver, mu):
    world = packed_box(5000, mu=mu)
    settings = registry.settings(solver, 400)
    out = []
    for blocks in (1, 2):
        p = problem_of(world, blocks)
        assert p.block_count == blocks
        result = registry.get(solver).solve(p, np.zeros(p.size if mu else p.m), settings)
        assert result.residual < 1e-6 * np.abs(p.rhs).max()
        out.append((p, result.lam, p.velocity(result.lam)))
    rows = 3 if mu else 1
    (k1, l1), (k2, l2) = _by_key(out[0][0], out[0][1], rows), _by_key(out[1][0], out[1][1], rows)
    assert np.array_equal(k1, k2)
    scale = np.abs(l1).max()
    assert np.abs(l1 - l2).max() < 1e-9 * scale
    assert np.abs(out[0][2] - out[1][2]).max() < 1e-9  # m/s: the same motion
