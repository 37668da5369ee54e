"""A tiny collection shared by the campaign tests: two small frozen heaps (a few contacts each),
frozen once per session."""
from __future__ import annotations

import pytest

from lab.campaign.collect import collect, grid_runs


@pytest.fixture(scope="session")
def tiny_collection(tmp_path_factory):
    folder = tmp_path_factory.mktemp("collection")
    collect(folder, grid_runs(["heap"], [1, 2], [0.5], [3], {}), [10])
    return folder
