"""lab.report.friction_report: the frictional scenes' parameters."""
from __future__ import annotations

from lab.report import friction_report as fr


def test_a_frictionless_scene_gets_mu_and_mu_wall_a_frictional_one_keeps_its_own():
    assert fr.frictional_params("bowl") == {"mu": 0.5, "mu_wall": 0.5}
    assert fr.frictional_params("pyramid") == {}  # μ = 5 of its own
