"""Tiny collections shared by the campaign tests, frozen once per session: two small heaps (a
few contacts each), and one heap with rolling resistance (6 rows per contact)."""
from __future__ import annotations

import pytest

from lab.campaign.collect import collect, grid_runs


@pytest.fixture(scope="session")
def tiny_collection(tmp_path_factory):
    folder = tmp_path_factory.mktemp("collection")
    collect(folder, grid_runs(["heap"], [1, 2], [0.5], [3], {}), [10])
    return folder


@pytest.fixture(scope="session")
def rolling_collection(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rolling")
    collect(folder, grid_runs(["heap"], [1], [0.5], [3], {"mu_roll": 0.01}), [10])
    return folder
