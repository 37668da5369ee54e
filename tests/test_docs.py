"""The README and docs/ stay true: the tables are the generated ones, the parameter reference is
current, links resolve, CI runs the README's test command, and the README stays short."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab.cli import catalog

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def test_readme_is_for_a_newcomers_five_minutes():
    assert len(README.read_bytes()) <= 15_000


def test_readme_tables_and_marbles_bench_list_come_from_the_same_declarations():
    text = README.read_text(encoding="utf-8")
    assert catalog.scenes_markdown() in text
    assert catalog.solvers_markdown() in text
    listed = subprocess.run([sys.executable, "-m", "lab.cli.bench", "list"], capture_output=True,
                            text=True, check=True).stdout
    assert listed == catalog.list_text() + "\n"
    # A row of the README's solver table and the solver's lines of the listing name the same
    # parameters with the same defaults.
    for row in catalog.solvers_markdown().splitlines()[2:-1]:
        name = row.split("`")[1]
        for pair in re.findall(r"`(\w+)`=(\S+?)(?:,| \w|$| \|)", row.split("|")[3]):
            assert f"{pair[0]}={pair[1]}" in listed, (name, pair)


def test_the_parameter_reference_is_current():
    assert (ROOT / "docs" / "parameters.md").read_text(encoding="utf-8") == \
        catalog.parameters_markdown()


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.name)
def test_relative_links_resolve(path):
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (path.parent / target).exists(), f"{path.name} links to {target}"


def test_ci_runs_exactly_the_readmes_test_command():
    command = re.search(r"^\s+(bash install\.sh test)\b", README.read_text(), re.M).group(1)
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
             if ln.strip() and not ln.startswith("#") and not ln.startswith(("set ", "cd "))]
    assert lines == [command]


def test_the_readme_counts_the_solvers_the_registry_holds():
    """The README's opening says how many solvers there are; M cycles through them all."""
    from solver.methods import registry

    words = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
             "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
    said = re.search(r"(\w+) solvers\s+\(", README.read_text(encoding="utf-8")).group(1).lower()
    assert said == words[len(registry.METHODS)]
